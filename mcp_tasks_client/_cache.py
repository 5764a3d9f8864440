"""The result cache the caller opts into: 2026-07-28 caching hints (SEP-2549) honoured.

Job: keep cacheable results for as long as their server said, for whom it said, and no
longer. Sans-I/O: no socket, no sleep; time is a monotonic clock the caller may replace
(``ResultCache(clock=...)``, simulated time in tests).

Rules (each is a line below; SEP-2549 and E C12):

- **Opt-in.** Nothing is cached unless the caller passes a cache (``Client(cache=...)``).
  Only results whose generation's driver gives hints are stored (2025-11-25: never), and only
  with ``ttlMs > 0``: absent or 0 is stale at once.
- **Key.** The server (its URL; a transport with no URL is one client's alone), the method,
  and every parameter of the request as sent (``cursor``, ``uri``, and the ``_meta`` that says
  who the client is and what it declares): two requests that could be answered differently
  never share an entry.
- **Scope.** A ``"public"`` result is served to every client of the cache that talks to the
  same server. A ``"private"`` one only to a client in the same *authorization context*: the
  ``auth_context`` the caller gave the Client (a user id, a token's subject), or, when it gave
  none, that one Client alone (never assumed from a transport's headers: a token can be
  swapped, a cookie jar can hold anything).
- **Freshness.** An entry is served while ``now < stored + ttlMs`` on the monotonic clock;
  then it is dropped.
- **MRTR.** A request carrying ``inputResponses`` or ``requestState`` (a multi-round-trip
  retry) is never served from the cache and its result never stored: it MUST reach the server.
- **Invalidation.** ``notifications/{tools,prompts,resources}/list_changed`` drop that server's
  entries of the matching list (resources: ``resources/list`` and
  ``resources/templates/list``); ``notifications/resources/updated`` drops its
  ``resources/read`` entries of that ``uri``.
- **Bounded.** At most ``max_entries`` entries; the least recently used goes first.

May import: ``models``, ``_exceptions``. Used by the Client (``_features.py``), which makes a
hit visible (a DEBUG record on ``mcp_tasks_client.client``, a span with ``mcp_tasks.cache.hit``).
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import attrs

from ._exceptions import UsageError
from .models import CacheScope, JSONObject

__all__ = ["MRTR_KEYS", "CacheContext", "CacheHints", "ResultCache", "list_methods_of"]

MRTR_KEYS = frozenset({"inputResponses", "requestState"})
"""Params that make a request a multi-round-trip retry (never cached, SEP-2549)."""

_LIST_CHANGED: Mapping[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
RESOURCE_UPDATED = "notifications/resources/updated"
INVALIDATING = (*_LIST_CHANGED, RESOURCE_UPDATED)
"""The notifications that drop entries."""


def list_methods_of(notification: str) -> tuple[str, ...]:
    """The list methods a ``list_changed`` notification makes stale (none for others)."""
    return _LIST_CHANGED.get(notification, ())


@attrs.frozen
class CacheHints:
    """How long (``ttl_ms``) and for whom (``scope``) a result may be reused (SEP-2549)."""

    ttl_ms: int
    scope: CacheScope

    @classmethod
    def of(cls, result: Any) -> CacheHints | None:
        """The hints a result carries, or None where its generation carries none
        (2025-11-25) or it is no cacheable result."""
        ttl = getattr(result, "ttl_ms", None)
        scope = getattr(result, "cache_scope", None)
        if not isinstance(ttl, int) or not isinstance(scope, CacheScope):
            return None
        return cls(ttl, scope)

    @classmethod
    def combine(cls, pages: Iterable[CacheHints | None]) -> CacheHints | None:
        """The hints of a list read page by page: the shortest TTL wins, and one private page
        makes the whole list private (SEP-2549). None when a page carries no hints (or there
        are no pages): the list as a whole cannot be reused then."""
        ttl: int | None = None
        scope = CacheScope.PUBLIC
        for page in pages:
            if page is None:
                return None
            ttl = page.ttl_ms if ttl is None else min(ttl, page.ttl_ms)
            if page.scope is CacheScope.PRIVATE:
                scope = CacheScope.PRIVATE
        return None if ttl is None else cls(ttl, scope)


@attrs.frozen
class CacheContext:
    """Where a Client's requests stand for the cache: its server (``origin``) and its
    authorization context (``auth``). Made by the Client from what the caller gave it."""

    origin: Hashable
    auth: Hashable


@attrs.define
class _CachedAnswer:
    """One cached answer: its value, when it expires and was stored, and what it answered."""

    value: Any
    expires: float
    stored: float
    method: str
    uri: str | None


_Key = tuple[Hashable, str, str, Hashable]
"""(origin, method, params as canonical JSON, auth context or None for a public entry)."""


def _params_key(params: JSONObject | None) -> str | None:
    """The request's params as canonical JSON, or None when they are no JSON (not cached)."""
    try:
        return json.dumps(params or {}, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None


def is_retry(params: JSONObject | None) -> bool:
    """The request is a multi-round-trip retry (it answers input or echoes state)."""
    return bool(params) and not MRTR_KEYS.isdisjoint(params or {})


class ResultCache:
    """Cacheable results kept for their server's ``ttlMs``, for their ``cacheScope``.

    Pass one to the Client: ``Client(..., cache=ResultCache(max_entries=256))``. Off unless
    passed. One cache may serve several Clients (of one server or several): ``"public"``
    results are then shared between the Clients of the same server, ``"private"`` ones only
    between Clients given the same ``auth_context``. See the module docstring for every rule.

    Args:
        max_entries: At most this many results are kept; the least recently used goes first.
        clock: Seconds on a monotonic clock (``time.monotonic``); tests pass simulated time.
    """

    def __init__(
        self, max_entries: int = 256, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise UsageError(
                f"ResultCache(max_entries=...) must be an int >= 1, got {max_entries!r}"
            )
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[_Key, _CachedAnswer] = OrderedDict()
        self.hits = 0
        """Results served from the cache."""
        self.misses = 0
        """Cacheable requests that had to reach the server."""

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return (
            f"ResultCache(max_entries={self.max_entries}, entries={len(self._entries)}, "
            f"hits={self.hits}, misses={self.misses})"
        )

    def clear(self) -> None:
        """Drop every entry (after the caller changed a transport's credentials, say)."""
        self._entries.clear()

    def get(self, context: CacheContext, method: str, params: JSONObject | None) -> Any | None:
        """A fresh result for this request in this context, or None (a miss, counted; an
        MRTR retry is never served and not counted)."""
        if is_retry(params):
            return None
        key = _params_key(params)
        if key is None:
            return None
        now = self._clock()
        found: tuple[_Key, _CachedAnswer] | None = None
        for full in (
            (context.origin, method, key, None),
            (context.origin, method, key, context.auth),
        ):
            entry = self._entries.get(full)
            if entry is None:
                continue
            if now >= entry.expires:  # stale: dropped, never served
                del self._entries[full]
                continue
            if found is None or entry.stored > found[1].stored:
                found = (full, entry)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(found[0])
        self.hits += 1
        return found[1].value

    def put(
        self,
        context: CacheContext,
        method: str,
        params: JSONObject | None,
        value: Any,
        hints: CacheHints | None,
    ) -> bool:
        """Keep ``value`` as the answer to this request, as ``hints`` allow; whether it was
        kept (not: no hints, ``ttlMs`` 0, an MRTR retry, params that are no JSON)."""
        if is_retry(params):
            return False
        key = _params_key(params)
        if key is None:
            return False
        # This answer supersedes whatever this context could be served for the same request
        # (even when it may not be kept itself: the server now says "stale at once").
        origin = context.origin
        self._entries.pop((origin, method, key, None), None)
        self._entries.pop((origin, method, key, context.auth), None)
        if hints is None or hints.ttl_ms <= 0:
            return False
        now = self._clock()
        public = hints.scope is CacheScope.PUBLIC
        full: _Key = (origin, method, key, None if public else context.auth)
        uri = params.get("uri") if params else None
        self._entries[full] = _CachedAnswer(
            value, now + hints.ttl_ms / 1000.0, now, method, uri if isinstance(uri, str) else None
        )
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return True

    def invalidate(self, origin: Hashable, notification: str, params: JSONObject | None) -> int:
        """Drop what ``notification`` from the server ``origin`` makes stale; how many."""
        methods = list_methods_of(notification)
        uri = (params or {}).get("uri") if notification == RESOURCE_UPDATED else None
        if not methods and not isinstance(uri, str):
            return 0
        gone = [
            key
            for key, entry in self._entries.items()
            if key[0] == origin
            and (entry.method in methods or (entry.method == "resources/read" and entry.uri == uri))
        ]
        for key in gone:
            del self._entries[key]
        return len(gone)
