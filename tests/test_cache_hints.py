"""Caching hints (2026-07-28, SEP-2549; E C12): typed on every cacheable result, read leniently,
ignored by 2025-11-25, combined across the pages of a list (hypothesis properties).

Rule ids: E C12 (a cacheable result's ``ttlMs`` / ``cacheScope``), CACHE-1 .. CACHE-3 of the
conformance catalogue (``mcp_tasks_client.conformance.rules``)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client import CacheHints, Generation
from mcp_tasks_client._codec.v2025_11_25 import converter as converter_2025
from mcp_tasks_client._codec.v2026_07_28 import converter as converter_2026
from mcp_tasks_client._drivers import driver_for
from mcp_tasks_client.errors import LenientCacheHint, MCPTasksError
from mcp_tasks_client.models import MAX_DURATION_MS, CacheScope, DiscoverResult, ListToolsResult
from mcp_tasks_client.testing import (
    CACHEABLE_RESULTS,
    cache_hint_pairs,
    strategy_for,
    wire_cache_hints,
    with_cache_hints,
)

SOME = settings(max_examples=examples(40), deadline=None)


def expected_ttl(raw: dict[str, Any]) -> int:
    """The oracle: what SEP-2549 (and our documented lenient reading) makes of ``ttlMs``."""
    if "ttlMs" not in raw:
        return 0  # absent: stale at once
    value = raw["ttlMs"]
    if type(value) is int and 0 <= value <= MAX_DURATION_MS:
        return value
    if type(value) is float and value.is_integer() and 0 <= value <= MAX_DURATION_MS:
        return int(value)
    return 0  # negative, fractional, another kind, out of range: the safe reading


def expected_scope(raw: dict[str, Any]) -> CacheScope:
    value = raw.get("cacheScope")
    if value == "public" and isinstance(value, str):
        return CacheScope.PUBLIC
    return CacheScope.PRIVATE  # absent or unknown: shared with nobody


@pytest.mark.parametrize("cls", CACHEABLE_RESULTS, ids=lambda c: c.__name__)
@SOME
@given(data=st.data())
def test_2026_reads_any_hint_leniently_and_keeps_the_result(cls: type, data: Any) -> None:
    """CACHE-1: the hints are typed; absent, malformed or negative values read the safe way
    (ttl 0, private) and never cost the result itself."""
    model = data.draw(with_cache_hints(strategy_for(cls)), label="model")
    raw = converter_2026.encode(model)
    hints = data.draw(wire_cache_hints(), label="hints")
    for key in ("ttlMs", "cacheScope"):
        raw.pop(key)
    raw.update(hints)
    decoded: Any = converter_2026.decode(raw, cls)
    assert decoded.ttl_ms == expected_ttl(raw)
    assert decoded.cache_scope is expected_scope(raw)
    assert "ttlMs" not in decoded.extra
    assert "cacheScope" not in decoded.extra
    # everything but the hints is what was sent
    assert converter_2026.decode({**raw, **_hints_of(decoded)}, cls) == decoded


def _hints_of(model: Any) -> dict[str, Any]:
    return {"ttlMs": model.ttl_ms, "cacheScope": model.cache_scope.value}


@pytest.mark.parametrize("cls", CACHEABLE_RESULTS, ids=lambda c: c.__name__)
@SOME
@given(data=st.data())
def test_valid_hints_round_trip_through_the_2026_codec(cls: type, data: Any) -> None:
    model = data.draw(with_cache_hints(strategy_for(cls)), label="model")
    encoded = converter_2026.encode(model)
    assert encoded["ttlMs"] == model.ttl_ms
    assert encoded["cacheScope"] == model.cache_scope.value
    assert converter_2026.decode(encoded, cls) == model


@pytest.mark.parametrize(
    "cls", [c for c in CACHEABLE_RESULTS if c is not DiscoverResult], ids=lambda c: c.__name__
)
@SOME
@given(data=st.data())
def test_2025_has_no_hints_the_keys_stay_as_sent(cls: type, data: Any) -> None:
    """2025-11-25 has no caching hints: the keys are kept verbatim in ``extra`` (nothing is
    dropped), never read as the fields, and the fields are never written. (DiscoverResult is
    2026-07-28's alone: 2025-11-25 never reads one.)"""
    model = data.draw(strategy_for(cls), label="model")
    hints = data.draw(wire_cache_hints(), label="hints")
    raw = {**converter_2025.encode(model), **hints}
    decoded: Any = converter_2025.decode(raw, cls)
    assert decoded.ttl_ms is None
    assert decoded.cache_scope is None
    assert {k: decoded.extra[k] for k in hints} == hints
    assert converter_2025.encode(decoded) == raw
    assert CacheHints.of(decoded) is None
    typed: Any = converter_2026.decode(converter_2026.encode(model), cls)  # the 2026 reading
    assert "ttlMs" not in converter_2025.encode(_evolve_hints(typed, 5, CacheScope.PUBLIC))


def _evolve_hints(model: Any, ttl: int, scope: CacheScope) -> Any:
    return attrs.evolve(model, ttl_ms=ttl, cache_scope=scope)


@SOME
@given(pages=st.lists(st.none() | cache_hint_pairs().map(lambda p: CacheHints(*p)), max_size=6))
def test_a_paginated_list_combines_its_pages(pages: list[CacheHints | None]) -> None:
    """CACHE-2: the shortest TTL wins; one private page makes the list private; a page
    without hints (or no page at all) leaves the list without."""
    combined = CacheHints.combine(pages)
    if not pages or any(page is None for page in pages):
        assert combined is None
        return
    real = [page for page in pages if page is not None]
    assert combined is not None
    assert combined.ttl_ms == min(page.ttl_ms for page in real)
    private = any(page.scope is CacheScope.PRIVATE for page in real)
    assert (combined.scope is CacheScope.PRIVATE) == private
    # in any order, and page by page: the same
    assert CacheHints.combine(reversed(pages)) == combined
    for cut in range(1, len(pages)):
        assert CacheHints.combine([CacheHints.combine(pages[:cut]), *pages[cut:]]) == combined


@SOME
@given(hints=wire_cache_hints())
def test_a_malformed_hint_is_warned_an_absent_one_is_not(hints: dict[str, Any]) -> None:
    """The lenient reading is recorded (LenientCacheHint in Client.warnings), but only where
    a value was present and malformed: an absent hint is the spec's own default."""
    seen: list[MCPTasksError] = []
    raw = {"tools": [], **hints}
    driver_for(Generation.V2026_07_28).check_hints("tools/list", raw, seen.append)
    malformed = ("ttlMs" in raw and expected_ttl(raw) != raw["ttlMs"]) or (
        "cacheScope" in raw and raw["cacheScope"] not in ("public", "private")
    )
    if isinstance(raw.get("ttlMs"), bool):
        malformed = True
    assert bool(seen) == malformed
    assert all(isinstance(w, LenientCacheHint) and w.method == "tools/list" for w in seen)
    driver_for(Generation.V2025_11_25).check_hints("tools/list", raw, seen.append)
    assert len(seen) == (1 if malformed else 0)  # 2025-11-25: nothing to check


def test_the_hints_of_a_result() -> None:
    page = converter_2026.decode(
        {"tools": [], "ttlMs": 5000, "cacheScope": "public"}, ListToolsResult
    )
    assert CacheHints.of(page) == CacheHints(5000, CacheScope.PUBLIC)
    bare = converter_2026.decode({"tools": []}, ListToolsResult)
    assert CacheHints.of(bare) == CacheHints(0, CacheScope.PRIVATE)
    assert CacheHints.of(converter_2025.decode({"tools": []}, ListToolsResult)) is None
