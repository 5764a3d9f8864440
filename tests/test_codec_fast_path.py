"""The Task fast path (issue 12) agrees with the strict codec or declines, in both generations.

For every value the strict Task hook accepts, the fast path returns ``None`` or a Task equal
to the strict one with the same ``repr`` (so the same timezone objects, int against float,
``extra`` in the same order); for every value the strict hook refuses, the fast path returns
``None``, so the DecodeError (its path) or UnknownValue the caller sees is the strict one.
Values: valid tasks of both generations (the ``mcp_tasks_client.testing`` strategies), near
misses of them (``mutated``), wild numbers in the durations and timestamp-like strings in the
timestamps, and timestamps in exactly the spelling the fast path reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from budget import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_tasks_client import Generation
from mcp_tasks_client._codec import v2025_11_25, v2026_07_28
from mcp_tasks_client._codec._converter import parse_timestamp
from mcp_tasks_client._codec._fast_task import fast_task_2025, fast_task_2026, fast_timestamp
from mcp_tasks_client._drivers import driver_for
from mcp_tasks_client.errors import DecodeError
from mcp_tasks_client.models import ClientCapabilities, Implementation, Task, TaskStatus
from mcp_tasks_client.testing import (
    detailed_tasks,
    mutated,
    replaced,
    tasks,
    timestamp_like_strings,
    wild_numbers,
)

FastPath = Callable[[Any], Task | None]

GENERATIONS: dict[str, tuple[FastPath, Callable[[Any], Task], Callable[[Task], Any]]] = {
    "2025-11-25": (fast_task_2025, v2025_11_25.strict_task, v2025_11_25.converter.encode),
    "2026-07-28": (fast_task_2026, v2026_07_28.strict_task, v2026_07_28.converter.encode),
}

DECODERS = {"2025-11-25": v2025_11_25.decode_task, "2026-07-28": v2026_07_28.decode_task}

PROPERTY = settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def check_agrees(generation: str, value: Any) -> None:
    """The property: the fast path declines, or gives the strict path's Task exactly."""
    fast_path, strict, _ = GENERATIONS[generation]
    fast = fast_path(value)
    decode = DECODERS[generation]  # the fast path declining to the strict one, as used
    refused: DecodeError | None = None
    try:
        expected = strict(value)
    except DecodeError as exc:  # UnknownValue included
        refused = exc
    if refused is not None:
        assert fast is None, f"the fast path accepted what the strict path refuses: {value!r}"
        with pytest.raises(DecodeError) as caught:
            decode(value)
        assert type(caught.value) is type(refused)
        assert (caught.value.path, str(caught.value)) == (refused.path, str(refused))
        event("refused by both")
        return
    assert repr(decode(value)) == repr(expected)
    if fast is None:
        event("fast path declined")
        return
    event("fast path answered")
    assert fast == expected
    assert repr(fast) == repr(expected)
    for field in ("created_at", "last_updated_at"):
        # Aware datetimes compare by instant: the offset must be the same too.
        assert getattr(fast, field).utcoffset() == getattr(expected, field).utcoffset()


# -- values ---------------------------------------------------------------------------------

_FRACTIONS = st.sampled_from(["", ".000", ".123", ".999", ".000000", ".123456", ".5", ".1234"])


@st.composite
def fast_spelled_timestamps(draw: st.DrawFn) -> str:
    """Timestamps written as servers write UTC (``...Z``, fraction of 0, 3 or 6 digits), with
    the odd spelling the fast path leaves to the strict one (``z``, ``t``, ``+00:00``,
    1 or 4 digits of fraction)."""
    moment = draw(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)))
    fraction = draw(_FRACTIONS)
    tail = draw(st.sampled_from(["Z", "Z", "Z", "z", "+00:00", "-00:00", ""]))
    separator = draw(st.sampled_from(["T", "T", "T", "t", " "]))
    return f"{moment:%Y-%m-%d}{separator}{moment:%H:%M:%S}{fraction}{tail}"


def _utc_spelled(value: dict[str, Any], created: str, updated: str) -> dict[str, Any]:
    return {**value, "createdAt": created, "lastUpdatedAt": updated}


@st.composite
def wire_tasks(draw: st.DrawFn, generation: str) -> Any:
    """A Task as ``generation`` writes it (gen 2: sometimes ``resultType``), often with UTC
    timestamps in the fast spelling, then maybe changed into a near miss."""
    _, _, encode = GENERATIONS[generation]
    task = draw(detailed_tasks() if generation == "2026-07-28" else tasks() | detailed_tasks())
    value: Any = encode(task)
    if draw(st.booleans()):
        value = _utc_spelled(
            value, draw(fast_spelled_timestamps()), draw(fast_spelled_timestamps())
        )
    if generation == "2026-07-28" and draw(st.booleans()):
        value = {**value, "resultType": draw(st.sampled_from(["complete", "task"]))}
    change = draw(st.sampled_from(["none", "mutated", "number", "timestamp", "status"]))
    if change == "mutated":
        value = draw(mutated(value))
    elif change == "number":
        key = draw(st.sampled_from(["ttl", "pollInterval", "ttlMs", "pollIntervalMs"]))
        number = draw(wild_numbers() | st.booleans() | st.none())
        value = {**value, key: number}
    elif change == "timestamp":
        key = draw(st.sampled_from(["createdAt", "lastUpdatedAt"]))
        value = replaced(value, (key,), draw(timestamp_like_strings()))
    elif change == "status":
        value = {**value, "status": draw(st.sampled_from(["WORKING", "done", "", "working "]))}
    return value


# -- the property ---------------------------------------------------------------------------


@pytest.mark.parametrize("generation", sorted(GENERATIONS))
@PROPERTY
@given(data=st.data())
def test_the_fast_path_agrees_with_the_strict_path_or_declines(
    generation: str, data: st.DataObject
) -> None:
    check_agrees(generation, data.draw(wire_tasks(generation), label="value"))


@PROPERTY
@given(text=fast_spelled_timestamps() | timestamp_like_strings())
def test_a_fast_timestamp_is_the_strict_one_or_declined(text: str) -> None:
    fast = fast_timestamp(text)
    try:
        expected = parse_timestamp(text)
    except ValueError:
        assert fast is None
        return
    if fast is not None:
        assert fast == expected
        assert repr(fast) == repr(expected)


def test_a_fast_timestamp_declines_every_single_character_change() -> None:
    """Every position of the fast spellings, replaced by every other printable ASCII
    character and a few non-ASCII digits: declined, or the strict parser's value."""
    for good in ("2026-01-31T23:59:58Z", "2026-01-31T23:59:58.123Z", "2026-01-31T23:59:58.123456Z"):
        for index in range(len(good)):
            for char in [chr(c) for c in range(32, 127)] + ["\u0662", "\uff10", "\n"]:
                text = good[:index] + char + good[index + 1 :]
                fast = fast_timestamp(text)
                if fast is None:
                    continue
                assert repr(fast) == repr(parse_timestamp(text)), text


# -- the fast path is the one taken ---------------------------------------------------------

SNAPSHOTS: dict[str, dict[str, Any]] = {
    "mcp 1.30 (pydantic)": {
        "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
        "status": "working",
        "statusMessage": "step 3 of 7",
        "createdAt": "2026-01-01T00:00:00.123456Z",
        "lastUpdatedAt": "2026-01-01T00:00:05Z",
        "ttl": 3_600_000,
        "pollInterval": 1000,
    },
    "typescript (toISOString)": {
        "taskId": "t-1",
        "status": "input_required",
        "createdAt": "2026-01-01T00:00:00.120Z",
        "lastUpdatedAt": "2026-01-01T00:00:05.000Z",
        "ttl": None,
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}},
    },
}


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_common_gen1_snapshots_take_the_fast_path(name: str) -> None:
    value = SNAPSHOTS[name]
    fast = fast_task_2025(value)
    assert fast is not None
    assert repr(fast) == repr(v2025_11_25.strict_task(value))
    dialect = driver_for(Generation.V2025_11_25, ClientCapabilities(), Implementation("t", "0"))
    assert dialect.read_task(value) == fast


def test_common_gen2_snapshots_take_the_fast_path() -> None:
    base = SNAPSHOTS["mcp 1.30 (pydantic)"]
    value = {
        **{k: v for k, v in base.items() if k not in ("ttl", "pollInterval")},
        "ttlMs": 60_000,
        "pollIntervalMs": 500.5,
        "status": "completed",
        "result": {"content": [{"type": "text", "text": "done"}]},
        "resultType": "complete",
    }
    fast = fast_task_2026(value)
    assert fast is not None
    assert fast.extra == {"resultType": "complete"}
    assert repr(fast) == repr(v2026_07_28.strict_task(value))
    dialect = driver_for(Generation.V2026_07_28, ClientCapabilities(), Implementation("t", "0"))
    assert dialect.read_task(value) == fast
    assert fast.status is TaskStatus.COMPLETED


@pytest.mark.parametrize(
    ("generation", "change", "path"),
    [
        ("2025-11-25", {"status": "paused"}, "$.status"),
        ("2025-11-25", {"ttl": True}, "$.ttl"),
        ("2025-11-25", {"createdAt": "2026-13-01T00:00:00Z"}, "$.createdAt"),
        ("2026-07-28", {"ttlMs": -1}, "$.ttlMs"),
        ("2026-07-28", {"pollIntervalMs": "1000"}, "$.pollIntervalMs"),
    ],
)
def test_errors_are_the_strict_paths(generation: str, change: dict[str, Any], path: str) -> None:
    """Through the dialect (fast path first): the error and its path are the strict ones."""
    gen = Generation.V2025_11_25 if generation == "2025-11-25" else Generation.V2026_07_28
    base = dict(SNAPSHOTS["mcp 1.30 (pydantic)"])
    if gen is Generation.V2026_07_28:
        base["ttlMs"], base["pollIntervalMs"] = base.pop("ttl"), base.pop("pollInterval")
    value = {**base, **change}
    dialect = driver_for(gen, ClientCapabilities(), Implementation("t", "0"))
    with pytest.raises(DecodeError) as caught:
        dialect.read_task(value)
    with pytest.raises(DecodeError) as strict:
        GENERATIONS[generation][1](value)
    assert caught.value.path == strict.value.path == path
    assert type(caught.value) is type(strict.value)
    assert str(caught.value) == str(strict.value)


def test_a_decoded_task_is_a_plain_value() -> None:
    """The fast Task is an ordinary attrs value: evolve and encode work as on a strict one."""
    task = fast_task_2025(SNAPSHOTS["mcp 1.30 (pydantic)"])
    assert task is not None
    assert v2025_11_25.converter.encode(attrs.evolve(task, extra={"x": 1}))["x"] == 1
