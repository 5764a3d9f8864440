"""The ResultCache (SEP-2549), sans-I/O on simulated time: a hypothesis state machine against a
model of what may be served, and the edges one at a time.

Rule ids (the client's side of the caching hints, docs/rule-ids.md): E H3 never stale (a
monotonic clock), E H4 a private result stays in its authorization context, E H5 an MRTR retry
is never cached, E H6 list_changed / resources/updated invalidate, E H7 the key is the server,
the method and every parameter."""

from __future__ import annotations

from typing import Any

import pytest
from budget import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from mcp_tasks_client import CacheHints, Client, Generation, ResultCache
from mcp_tasks_client._cache import CacheContext
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import CacheScope, Implementation
from mcp_tasks_client.transports import memory_transport_pair


class Clock:
    """Simulated monotonic time (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


ORIGINS = ("http://a/mcp", "http://b/mcp")
AUTHS = ("alice", "bob")
METHODS = ("tools/list", "resources/list", "resources/templates/list", "resources/read")
URIS = ("file:///x", "file:///y")


def params_of(method: str, arg: int) -> dict[str, Any]:
    if method == "resources/read":
        return {"uri": URIS[arg % 2]}
    return {} if arg == 0 else {"cursor": f"c{arg}"}


MRTR = st.sampled_from([{"inputResponses": {"q": {}}}, {"requestState": "s"}])


class CacheMachine(RuleBasedStateMachine):
    """The model: every answer ever stored, with where, for whom and until when. Whatever the
    cache serves must be the newest stored answer to that exact request that is still fresh,
    visible to the asking context, and not dropped by a notification since."""

    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.cache = ResultCache(max_entries=4, clock=self.clock)
        self.contexts = {
            (origin, auth): CacheContext(origin, ("auth", auth))
            for origin in ORIGINS
            for auth in AUTHS
        }
        self.stored: list[dict[str, Any]] = []  # the model
        self.serial = 0
        self.hits = self.misses = 0

    def _ctx(self, origin: int, auth: int) -> tuple[CacheContext, str, str]:
        o, a = ORIGINS[origin], AUTHS[auth]
        return self.contexts[(o, a)], o, a

    @rule(
        target=requests,
        origin=st.integers(0, 1),
        auth=st.integers(0, 1),
        method=st.sampled_from(METHODS),
        arg=st.integers(0, 2),
        ttl=st.sampled_from([0, 1, 500, 5000]),
        scope=st.sampled_from(list(CacheScope)),
        mrtr=st.none() | MRTR,
    )
    def store(
        self, origin: int, auth: int, method: str, arg: int, ttl: int, scope: CacheScope, mrtr: Any
    ) -> tuple[int, int, str, int]:
        ctx, o, a = self._ctx(origin, auth)
        params = {**params_of(method, arg), **(mrtr or {})}
        self.serial += 1
        value = ("answer", self.serial)
        kept = self.cache.put(ctx, method, params, value, CacheHints(ttl, scope))
        assert kept == (ttl > 0 and mrtr is None)  # E H3 (ttl 0: stale at once), E H5
        if mrtr is None:  # the new answer supersedes what this context could be served
            for entry in self.stored:
                same = (entry["origin"], entry["method"], entry["params"]) == (o, method, params)
                if same and (entry["public"] or entry["auth"] == a):
                    entry["dropped"] = True
        if kept:
            self.stored.append(
                {
                    "origin": o,
                    "auth": a,
                    "method": method,
                    "params": params,
                    "value": value,
                    "expires": self.clock.now + ttl / 1000.0,
                    "public": scope is CacheScope.PUBLIC,
                    "dropped": False,
                }
            )
        return (origin, auth, method, arg)

    @rule(
        request=requests,
        other_origin=st.booleans(),
        other_auth=st.booleans(),
        mrtr=st.none() | MRTR,
    )
    def lookup(
        self, request: tuple[int, int, str, int], other_origin: bool, other_auth: bool, mrtr: Any
    ) -> None:
        """Ask for a request stored before, or its twin from another server or context."""
        origin, auth, method, arg = request
        ctx, o, a = self._ctx(origin ^ other_origin, auth ^ other_auth)
        params = {**params_of(method, arg), **(mrtr or {})}
        served = self.cache.get(ctx, method, params)
        if mrtr is not None:
            assert served is None  # E H5: a retry always reaches the server
            return
        if served is None:
            self.misses += 1
            return  # evicted (bounded) or absent: a miss is always allowed
        self.hits += 1
        (entry,) = [e for e in self.stored if e["value"] == served]
        assert entry["origin"] == o  # E H7: never another server's answer
        assert entry["method"] == method
        assert entry["params"] == params  # E H7: never another request's answer
        assert entry["public"] or entry["auth"] == a  # E H4: private stays in its context
        assert self.clock.now < entry["expires"]  # E H3: never stale
        assert not entry["dropped"]  # E H6

    @rule(seconds=st.sampled_from([0.0, 0.001, 0.4, 1.0, 6.0]))
    def advance(self, seconds: float) -> None:
        self.clock.now += seconds

    @rule(
        origin=st.integers(0, 1),
        which=st.sampled_from(
            [
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
                "notifications/resources/updated",
                "notifications/message",
            ]
        ),
        uri=st.sampled_from(URIS),
    )
    def notify(self, origin: int, which: str, uri: str) -> None:
        o = ORIGINS[origin]
        self.cache.invalidate(o, which, {"uri": uri})
        stale = {
            "notifications/tools/list_changed": {"tools/list"},
            "notifications/prompts/list_changed": {"prompts/list"},
            "notifications/resources/list_changed": {"resources/list", "resources/templates/list"},
        }.get(which, set())
        for entry in self.stored:
            if entry["origin"] != o:
                continue  # E H6: another server's list did not change
            if entry["method"] in stale:
                entry["dropped"] = True
            if (
                which.endswith("updated")
                and entry["method"] == "resources/read"
                and entry["params"].get("uri") == uri
            ):
                entry["dropped"] = True

    @invariant()
    def bounded(self) -> None:
        assert len(self.cache) <= self.cache.max_entries


TestCacheMachine = CacheMachine.TestCase
TestCacheMachine.settings = settings(
    max_examples=examples(60), stateful_step_count=30, deadline=None
)


# -- the edges, one at a time ------------------------------------------------------------------

ALICE = CacheContext("http://a/mcp", ("auth", "alice"))
BOB = CacheContext("http://a/mcp", ("auth", "bob"))


def test_fresh_until_the_ttl_then_gone() -> None:
    clock = Clock()
    cache = ResultCache(clock=clock)
    assert cache.put(ALICE, "tools/list", {}, "page", CacheHints(1000, CacheScope.PUBLIC))
    clock.now += 0.999
    assert cache.get(ALICE, "tools/list", {}) == "page"
    clock.now += 0.001
    assert cache.get(ALICE, "tools/list", {}) is None
    assert len(cache) == 0
    assert (cache.hits, cache.misses) == (1, 1)


def test_public_is_shared_private_is_not() -> None:
    cache = ResultCache(clock=Clock())
    cache.put(ALICE, "tools/list", {}, "public", CacheHints(1000, CacheScope.PUBLIC))
    assert cache.get(BOB, "tools/list", {}) == "public"
    cache.put(ALICE, "resources/read", {"uri": "u"}, "mine", CacheHints(1000, CacheScope.PRIVATE))
    assert cache.get(BOB, "resources/read", {"uri": "u"}) is None
    assert cache.get(ALICE, "resources/read", {"uri": "u"}) == "mine"
    other_server = CacheContext("http://b/mcp", ALICE.auth)
    assert cache.get(other_server, "tools/list", {}) is None


def test_the_lru_goes_first() -> None:
    cache = ResultCache(max_entries=2, clock=Clock())
    hints = CacheHints(1000, CacheScope.PUBLIC)
    cache.put(ALICE, "tools/list", {"cursor": "1"}, 1, hints)
    cache.put(ALICE, "tools/list", {"cursor": "2"}, 2, hints)
    assert cache.get(ALICE, "tools/list", {"cursor": "1"}) == 1  # now the most recent
    cache.put(ALICE, "tools/list", {"cursor": "3"}, 3, hints)
    assert cache.get(ALICE, "tools/list", {"cursor": "2"}) is None
    assert cache.get(ALICE, "tools/list", {"cursor": "1"}) == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8", None])
def test_a_bad_size_is_a_usage_error(bad: Any) -> None:
    with pytest.raises(UsageError, match="max_entries"):
        ResultCache(max_entries=bad)


def test_no_hints_no_entry() -> None:
    cache = ResultCache(clock=Clock())
    assert not cache.put(ALICE, "tools/list", {}, "page", None)  # 2025-11-25: never
    assert not cache.put(ALICE, "tools/list", {}, "page", CacheHints(0, CacheScope.PUBLIC))
    assert len(cache) == 0


def test_the_client_refuses_what_it_cannot_use() -> None:
    transport, _ = memory_transport_pair()
    info = Implementation("t", "0")
    with pytest.raises(UsageError, match="ResultCache"):
        Client(transport, generation=Generation.V2026_07_28, client_info=info, cache={})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="hashable"):
        Client(
            transport,
            generation=Generation.V2026_07_28,
            client_info=info,
            cache=ResultCache(),
            auth_context=["alice"],  # type: ignore[arg-type]
        )
