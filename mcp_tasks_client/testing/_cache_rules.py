"""The client-side rules of the 2026-07-28 caching hints (SEP-2549), as a checker any result
cache can be run against: a hypothesis state machine on simulated time.

Rule ids (the client's side; ``E H1``/``E H2``, the server's, are in the conformance registry):

- ``E H3``: never serve a result past its ``ttlMs`` on a monotonic clock (``ttlMs`` 0: stale
  at once), nor one a newer answer to the same request has replaced;
- ``E H4``: a ``"private"`` result is served only in the authorization context it came from;
- ``E H5``: a multi-round-trip retry (``inputResponses`` / ``requestState``) is never served
  from the cache, and its answer never kept;
- ``E H6``: ``notifications/{tools,prompts,resources}/list_changed`` drop that server's
  entries of the matching list (resources: ``resources/list`` and
  ``resources/templates/list``), ``notifications/resources/updated`` its ``resources/read``
  entries of that ``uri``;
- ``E H7``: the key is the server, the method and every parameter (``cursor``, ``uri``,
  ``_meta``): never another request's answer.

A miss is always allowed (a cache may evict, or keep nothing): the machine only judges what
is served. Wrap your cache in a :class:`CacheUnderTest` (three methods) and call
:func:`check_cache`, or subclass :class:`CacheRuleMachine`. A broken rule raises
:class:`CacheRuleViolation` naming it. :class:`ResultCacheUnderTest` wraps the library's own
:class:`~mcp_tasks_client.ResultCache`.

May import: ``_cache``, ``models``; hypothesis (the ``testing`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Protocol

import attrs
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    rule,
    run_state_machine_as_test,
)

from .._cache import CacheContext, CacheHints, ResultCache
from ..models import CacheScope

__all__ = [
    "CACHE_RULES",
    "CacheRuleMachine",
    "CacheRuleViolation",
    "CacheUnderTest",
    "ResultCacheUnderTest",
    "check_cache",
]

CACHE_RULES: Mapping[str, str] = {
    "E H3": "never serve a result past its ttlMs (a monotonic clock; ttlMs 0 is stale at "
    "once), nor one a newer answer to the same request replaced",
    "E H4": "a private result is served only in the authorization context it came from",
    "E H5": "a multi-round-trip retry (inputResponses / requestState) is never served from "
    "the cache, and its answer never kept",
    "E H6": "list_changed drops the server's entries of that list; resources/updated its "
    "resources/read entries of that uri",
    "E H7": "the key is the server, the method and every parameter: never another request's answer",
}
"""The client cache's rule ids (SEP-2549), with what each asks."""


class CacheRuleViolation(AssertionError):
    """A cache under test broke one of :data:`CACHE_RULES` (``rule``: its id)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"{rule} ({CACHE_RULES[rule]}): {detail}")
        self.rule = rule
        self.detail = detail


class CacheUnderTest(Protocol):
    """What the checker needs of a cache: the three things a client does with one.

    ``origin`` is the server (hashable), ``auth`` the authorization context of the asking
    client (hashable), ``params`` the request's params as sent."""

    def lookup(
        self, origin: Hashable, auth: Hashable, method: str, params: Mapping[str, Any]
    ) -> Any | None:
        """The answer to serve for this request without sending it, or None (a miss)."""
        ...

    def store(
        self,
        origin: Hashable,
        auth: Hashable,
        method: str,
        params: Mapping[str, Any],
        answer: Any,
        ttl_ms: int,
        scope: CacheScope,
    ) -> None:
        """The server answered this request with ``answer`` and these hints."""
        ...

    def notify(self, origin: Hashable, notification: str, params: Mapping[str, Any]) -> None:
        """The server ``origin`` sent ``notification`` (its method) with ``params``."""
        ...


@attrs.define
class ResultCacheUnderTest:
    """The library's :class:`~mcp_tasks_client.ResultCache` as a :class:`CacheUnderTest`."""

    cache: ResultCache

    def lookup(
        self, origin: Hashable, auth: Hashable, method: str, params: Mapping[str, Any]
    ) -> Any | None:
        return self.cache.get(CacheContext(origin, auth), method, dict(params))

    def store(
        self,
        origin: Hashable,
        auth: Hashable,
        method: str,
        params: Mapping[str, Any],
        answer: Any,
        ttl_ms: int,
        scope: CacheScope,
    ) -> None:
        context = CacheContext(origin, auth)
        self.cache.put(context, method, dict(params), answer, CacheHints(ttl_ms, scope))

    def notify(self, origin: Hashable, notification: str, params: Mapping[str, Any]) -> None:
        self.cache.invalidate(origin, notification, dict(params))


class _Clock:
    """Simulated monotonic time, in seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


ORIGINS = ("http://a/mcp", "http://b/mcp")
AUTHS = ("alice", "bob")
METHODS: tuple[str, ...] = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)
URIS = ("file:///x", "file:///y")
NOTIFICATIONS = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/message",
)
_STALE_LISTS: Mapping[str, frozenset[str]] = {
    "notifications/tools/list_changed": frozenset({"tools/list"}),
    "notifications/prompts/list_changed": frozenset({"prompts/list"}),
    "notifications/resources/list_changed": frozenset(
        {"resources/list", "resources/templates/list"}
    ),
}
_MRTR = st.sampled_from([{"inputResponses": {"q": {"action": "accept"}}}, {"requestState": "s"}])
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META: dict[str, Any] = {"_meta": {_CAPABILITIES: {"elicitation": {}}}}


def _params(method: str, arg: int, meta: bool, mrtr: Mapping[str, Any] | None) -> dict[str, Any]:
    if method == "resources/read":
        params: dict[str, Any] = {"uri": URIS[arg % 2]}
    else:
        params = {} if arg == 0 else {"cursor": f"c{arg}"}
    return {**params, **(_META if meta else {}), **(mrtr or {})}


@attrs.define
class _Stored:
    """One answer the cache was given (the model)."""

    origin: str
    auth: str
    method: str
    params: dict[str, Any]
    expires: float
    public: bool
    retry: bool
    dropped: str | None = None
    """Why it may no longer be served: the rule id (E H3 replaced, E H6 invalidated)."""


class CacheRuleMachine(RuleBasedStateMachine):
    """Every answer the cache was given, with where, for whom and until when (the model).
    Whatever the cache serves must be the answer to that exact request (E H7), from no retry
    (E H5), visible to the asking context (E H4), fresh and not replaced (E H3), and not
    dropped by a notification since (E H6). Subclass it with :meth:`make_cache`, or use
    :func:`check_cache`. ``self.cache`` and ``self.clock`` are there for your invariants."""

    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        self.clock = _Clock()
        self.cache = self.make_cache(self.clock)
        self.stored: dict[int, _Stored] = {}
        self.serial = 0
        self.served = 0

    def make_cache(self, clock: Callable[[], float]) -> CacheUnderTest:
        """The cache to check, on ``clock`` (monotonic seconds, simulated)."""
        raise NotImplementedError("subclass CacheRuleMachine with make_cache(), or use check_cache")

    @rule(
        target=requests,
        origin=st.integers(0, 1),
        auth=st.integers(0, 1),
        method=st.sampled_from(METHODS),
        arg=st.integers(0, 2),
        meta=st.booleans(),
        ttl=st.sampled_from([0, 1, 500, 5000]),
        scope=st.sampled_from(list(CacheScope)),
        mrtr=st.none() | _MRTR,
    )
    def store(
        self,
        origin: int,
        auth: int,
        method: str,
        arg: int,
        meta: bool,
        ttl: int,
        scope: CacheScope,
        mrtr: dict[str, Any] | None,
    ) -> tuple[int, int, str, int, bool]:
        o, a = ORIGINS[origin], AUTHS[auth]
        params = _params(method, arg, meta, mrtr)
        if mrtr is None:  # a new answer replaces what this context could be served
            for entry in self.stored.values():
                same = (entry.origin, entry.method, entry.params) == (o, method, params)
                if same and (entry.public or entry.auth == a) and entry.dropped is None:
                    entry.dropped = "E H3"
        self.serial += 1
        self.stored[self.serial] = _Stored(
            o,
            a,
            method,
            params,
            self.clock.now + ttl / 1000.0,
            scope is CacheScope.PUBLIC,
            retry=mrtr is not None,
        )
        self.cache.store(o, a, method, params, ("answer", self.serial), ttl, scope)
        return (origin, auth, method, arg, meta)

    @rule(
        request=requests,
        other_origin=st.booleans(),
        other_auth=st.booleans(),
        other_meta=st.booleans(),
        mrtr=st.none() | _MRTR,
    )
    def lookup(
        self,
        request: tuple[int, int, str, int, bool],
        other_origin: bool,
        other_auth: bool,
        other_meta: bool,
        mrtr: dict[str, Any] | None,
    ) -> None:
        """Ask for a request given before, or its twin from another server, another context
        or with other ``_meta``."""
        origin, auth, method, arg, meta = request
        o, a = ORIGINS[origin ^ other_origin], AUTHS[auth ^ other_auth]
        params = _params(method, arg, meta ^ other_meta, mrtr)
        served = self.cache.lookup(o, a, method, params)
        if served is None:
            return  # a miss is always allowed
        self.served += 1
        if mrtr is not None:
            raise CacheRuleViolation("E H5", f"a {method} retry {params} was served {served!r}")
        entry = None
        if isinstance(served, tuple) and len(served) == 2 and served[0] == "answer":
            entry = self.stored.get(served[1])
        if entry is None:
            raise CacheRuleViolation("E H7", f"{method} {params} served {served!r}, never given")
        where = f"{method} {params} from {o} as {a} was served {entry}"
        if entry.retry:
            raise CacheRuleViolation("E H5", f"{where}: a retry's answer, kept")
        if (entry.origin, entry.method, entry.params) != (o, method, params):
            raise CacheRuleViolation("E H7", f"{where}: another request's answer")
        if not entry.public and entry.auth != a:
            raise CacheRuleViolation("E H4", f"{where}: private to {entry.auth}")
        if self.clock.now >= entry.expires:
            raise CacheRuleViolation("E H3", f"{where}: stale at {self.clock.now}")
        if entry.dropped is not None:
            raise CacheRuleViolation(entry.dropped, f"{where}: dropped since")

    @rule(request=requests, other_auth=st.booleans())
    def ask_again(self, request: tuple[int, int, str, int, bool], other_auth: bool) -> None:
        """Ask for a request given before, as it was sent, in its context or the other one
        (the lookups a client makes most)."""
        self.lookup(request, False, other_auth, False, None)

    @rule(seconds=st.sampled_from([0.0, 0.001, 0.4, 1.0, 6.0]))
    def advance(self, seconds: float) -> None:
        self.clock.now += seconds

    @rule(
        request=requests,
        aimed=st.booleans(),
        origin=st.integers(0, 1),
        which=st.sampled_from(NOTIFICATIONS),
        uri=st.sampled_from(URIS),
    )
    def notify(
        self,
        request: tuple[int, int, str, int, bool],
        aimed: bool,
        origin: int,
        which: str,
        uri: str,
    ) -> None:
        """A notification: ``aimed``, the one that makes a request given before stale; else
        any, from either server."""
        if aimed:
            origin, _, method, arg, _ = request
            uri = URIS[arg % 2]
            which = next(
                (n for n, methods in _STALE_LISTS.items() if method in methods),
                "notifications/resources/updated",
            )
        self._notify(origin, which, uri)

    def _notify(self, origin: int, which: str, uri: str) -> None:
        o = ORIGINS[origin]
        self.cache.notify(o, which, {"uri": uri})
        stale = _STALE_LISTS.get(which, frozenset())
        updated = which == "notifications/resources/updated"
        for entry in self.stored.values():
            if entry.origin != o or entry.dropped is not None:
                continue  # another server's lists did not change
            read = entry.method == "resources/read" and entry.params.get("uri") == uri
            if entry.method in stale or (updated and read):
                entry.dropped = "E H6"


DEFAULT_SETTINGS = Settings(
    max_examples=200, stateful_step_count=30, deadline=None, report_multiple_bugs=False
)
"""What :func:`check_cache` runs by default."""


def check_cache(
    make_cache: Callable[[Callable[[], float]], CacheUnderTest],
    *,
    settings: Settings | None = None,
) -> None:
    """Run :class:`CacheRuleMachine` against the caches ``make_cache(clock)`` makes (one per
    example, on a simulated monotonic ``clock`` in seconds). Returns when no rule broke;
    raises :class:`CacheRuleViolation` (an AssertionError, shrunk by hypothesis) naming the
    rule otherwise. ``settings``: hypothesis settings (default :data:`DEFAULT_SETTINGS`)."""

    class Machine(CacheRuleMachine):
        def make_cache(self, clock: Callable[[], float]) -> CacheUnderTest:
            return make_cache(clock)

    run_state_machine_as_test(Machine, settings=settings or DEFAULT_SETTINGS)
