"""Server-controlled numbers and timestamps are validated at the codec (issue 7, item 3).

The rule: every server value is validated when it is decoded. An integer or a float out of
range, or a timestamp out of range, is a :class:`DecodeError` naming the JSON path of the field
(``$.task.ttl: out of range ...``), never a foreign exception (OverflowError, ValueError) later,
when the library or its caller computes with the value.

- Property: any number in any numeric position of a valid encoding decodes to a model or to a
  DecodeError; a decoded Task's ``timedelta(milliseconds=ttl)`` and ``pollInterval / 1000.0``
  never raise, and every typed number of any decoded model survives ``float()``.
- Property: any timestamp-shaped string decodes or is a DecodeError; a decoded timestamp has a
  UTC value and writes back as itself.
- Examples pin the paths (``$.pollInterval``, ``$.ttl``, ``$.task.ttl``), negative durations,
  ``10**400``, and the timestamp fields that are out of range.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tasks_client._codec._converter import format_timestamp, loads, parse_timestamp
from mcp_tasks_client._codec.messages import decode_message, encode_message
from mcp_tasks_client._codec.v2025_11_25 import converter
from mcp_tasks_client.errors import DecodeError
from mcp_tasks_client.models import (
    MAX_DURATION_MS,
    UNSET,
    CallToolResult,
    CreateMessageRequestParams,
    CreateTaskResult,
    ElicitRequestFormParams,
    ErrorObject,
    JSONRPCError,
    ListTasksResult,
    ResourceLink,
    Task,
    TaskMetadata,
)
from mcp_tasks_client.testing import (
    MODEL_STRATEGIES,
    WIRE_MODELS,
    number_paths,
    replaced,
    strategy_for,
    timestamp_like_strings,
    wild_numbers,
)

NUMBERS = settings(
    max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def model_id(cls: type) -> str:
    return cls.__name__


def task_json(**changes: Any) -> dict[str, Any]:
    """A valid flat Task with ``changes`` applied."""
    return {
        "taskId": "786512e2",
        "status": "working",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60000,
        "pollInterval": 5000,
        **changes,
    }


def error_of(value: Any, target: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        converter.decode(value, target)
    return info.value


# --- codecs per model class --------------------------------------------------------------------

Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]


def codec_for(cls: type) -> Codec:
    """``(encode, decode)`` for ``cls``: the generation converter, or the JSON-RPC envelope codec
    (an ErrorObject travels inside an error response)."""
    if cls in WIRE_MODELS:
        return converter.encode, lambda value: converter.decode(value, cls)
    if cls is ErrorObject:
        return (lambda obj: encode_message(JSONRPCError(1, obj))), decode_message
    return encode_message, decode_message


def typed_numbers(model: Any) -> Iterator[tuple[str, int | float]]:
    """Every number held by an ``int`` or ``float`` field of ``model``, at any depth.

    Raw JSON (``extra``, ``_meta``, ``structuredContent`` ...) is the caller's to interpret and
    is not typed: it is not walked.
    """
    if isinstance(model, tuple):
        for item in model:
            yield from typed_numbers(item)
        return
    if not attrs.has(type(model)):
        return
    for field in attrs.fields(type(model)):
        value = getattr(model, field.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{type(model).__name__}.{field.name}", value
        else:
            yield from typed_numbers(value)


def tasks_in(model: Any) -> list[Task]:
    if isinstance(model, Task):
        return [model]
    if isinstance(model, CreateTaskResult):
        return [model.task]
    if isinstance(model, ListTasksResult):
        return list(model.tasks)
    return []


def task_metadata_in(model: Any) -> list[TaskMetadata]:
    if isinstance(model, TaskMetadata):
        return [model]
    task = getattr(model, "task", None)
    return [task] if isinstance(task, TaskMetadata) else []


def assert_task_arithmetic_is_safe(task: Task) -> None:
    """What the engine computes from a Task must not raise for any decoded Task."""
    if isinstance(task.ttl, (int, float)):
        assert 0 <= task.ttl <= MAX_DURATION_MS
        dt.timedelta(milliseconds=task.ttl)
        task.ttl / 1000.0
        try:
            task.created_at + dt.timedelta(milliseconds=min(task.ttl, 1000))
        except OverflowError:
            # createdAt near year 9999: a valid timestamp whose arithmetic is the engine's
            # concern (see parse_timestamp); only OverflowError is tolerated here.
            pass
    if task.poll_interval is not None:
        assert 0 <= task.poll_interval <= MAX_DURATION_MS
        task.poll_interval / 1000.0
        dt.timedelta(milliseconds=task.poll_interval)


def decode_or_decode_error(decode: Callable[[Any], Any], value: Any) -> Any:
    """``decode(value)``: a model, or None after a DecodeError with a ``$`` path. Any other
    exception propagates and fails the test."""
    try:
        return decode(value)
    except DecodeError as exc:
        err = exc
    assert err.path.startswith("$"), err.path
    assert err.problem
    return None


def check_decoded(model: Any, *, typed: bool) -> None:
    for task in tasks_in(model):
        assert_task_arithmetic_is_safe(task)
    for metadata in task_metadata_in(model):
        if metadata.ttl is not None:
            dt.timedelta(milliseconds=metadata.ttl)
    if typed:
        for where, number in typed_numbers(model):
            assert math.isfinite(float(number)), where


# --- property: any number anywhere ---------------------------------------------------------------


@pytest.mark.parametrize("cls", list(MODEL_STRATEGIES), ids=model_id)
@NUMBERS
@given(data=st.data())
def test_issue7_any_number_in_any_numeric_field_decodes_or_is_a_decode_error(
    cls: type, data: st.DataObject
) -> None:
    """Issue 7, item 3: each number of a valid encoding (found by walking the JSON) replaced by
    a wild one, alone and all at once: a model or a DecodeError, and a decoded model is safe to
    compute with (Task durations, every typed number as a float)."""
    encode, decode = codec_for(cls)
    valid = encode(data.draw(strategy_for(cls), label="model"))
    paths = number_paths(valid)
    wild = data.draw(st.lists(wild_numbers(), min_size=len(paths), max_size=len(paths)))
    variants = [replaced(valid, path, number) for path, number in zip(paths, wild, strict=True)]
    everything = valid
    for path, number in zip(paths, wild, strict=True):
        everything = replaced(everything, path, number)
    variants.append(everything)
    # The envelopes' ids and error codes are not computed with; only the generation models
    # promise float-sized typed numbers.
    typed = cls in WIRE_MODELS
    for value in variants:
        model = decode_or_decode_error(decode, value)
        if model is not None:
            check_decoded(model, typed=typed)


_TASK_NUMBER_KEYS = ("ttl", "pollInterval")


@NUMBERS
@given(
    ttl=wild_numbers() | st.none(),
    poll_interval=wild_numbers() | st.none(),
    wrap=st.sampled_from(["flat", "created", "listed"]),
)
def test_issue7_wild_task_durations_decode_or_name_their_path(
    ttl: int | float | None, poll_interval: int | float | None, wrap: str
) -> None:
    """Issue 7, item 3: ``ttl``/``pollInterval`` are always present here (the walk above only
    meets them when the strategy drew them); a refusal names the field under its wrapper."""
    task = task_json(ttl=ttl, pollInterval=poll_interval)
    cases: dict[str, tuple[str, Any, type[Any]]] = {
        "flat": ("$", task, Task),
        "created": ("$.task", {"task": task}, CreateTaskResult),
        "listed": ("$.tasks[0]", {"tasks": [task]}, ListTasksResult),
    }
    prefix, value, cls = cases[wrap]
    try:
        model = converter.decode(value, cls)
    except DecodeError as exc:
        err = exc
    else:
        check_decoded(model, typed=True)
        return
    assert err.path in {f"{prefix}.{key}" for key in _TASK_NUMBER_KEYS}, err.path
    assert err.problem.startswith("out of range"), err.problem


# --- property: any timestamp-shaped string -----------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(created=timestamp_like_strings(), updated=timestamp_like_strings())
def test_issue7_timestamp_like_strings_decode_or_are_a_decode_error(
    created: str, updated: str
) -> None:
    """Issue 7, item 3: digits in every field position (month 99, hour 24, offset +99:99 ...)
    give a Task or a DecodeError naming the field; a decoded timestamp has a UTC value and is
    written back as the same instant."""
    try:
        task = converter.decode(task_json(createdAt=created, lastUpdatedAt=updated), Task)
    except DecodeError as exc:
        err = exc
    else:
        for moment in (task.created_at, task.last_updated_at):
            assert moment.utcoffset() is not None
            moment.astimezone(dt.timezone.utc)
            assert parse_timestamp(format_timestamp(moment)) == moment
        assert_task_arithmetic_is_safe(task)
        return
    assert err.path in ("$.createdAt", "$.lastUpdatedAt"), err.path


@settings(max_examples=examples(300), deadline=None)
@given(text=timestamp_like_strings())
def test_issue7_parse_timestamp_raises_only_value_error(text: str) -> None:
    """The codec turns ValueError into a DecodeError: nothing else may escape the parser."""
    try:
        parse_timestamp(text)
    except ValueError:
        pass


# --- examples: durations -------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["pollInterval", "ttl"])
@pytest.mark.parametrize(
    "number",
    [
        pytest.param(10**400, id="10**400"),
        pytest.param(-(10**400), id="-10**400"),
        -1,
        -0.5,
        pytest.param(MAX_DURATION_MS + 1, id="MAX_DURATION_MS+1"),
        1e300,
    ],
)
def test_issue7_task_duration_out_of_range_names_the_path(key: str, number: int | float) -> None:
    err = error_of(task_json(**{key: number}), Task)
    assert err.path == f"$.{key}"
    assert err.problem.startswith("out of range")
    assert err.value == number


def test_issue7_ttl_out_of_range_inside_create_task_result_is_task_ttl() -> None:
    assert error_of({"task": task_json(ttl=10**400)}, CreateTaskResult).path == "$.task.ttl"
    assert error_of({"task": task_json(ttl=-1)}, CreateTaskResult).path == "$.task.ttl"
    listed = {"tasks": [task_json(), task_json(pollInterval=-1)]}
    assert error_of(listed, ListTasksResult).path == "$.tasks[1].pollInterval"


def test_issue7_huge_integer_from_real_json_text_is_refused() -> None:
    """The observed crash: ``10**400`` spelled in digits is valid JSON and a Python int."""
    text = '{"task": {"taskId": "t", "status": "working", "createdAt": "2025-11-25T10:30:00Z", '
    text += '"lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "pollInterval": 1'
    text += "0" * 400 + "}}"
    err = error_of(loads(text), CreateTaskResult)
    assert str(err).startswith("$.task.pollInterval: out of range")


@pytest.mark.parametrize("number", [0, -0.0, 0.5, 1, 60000, 60000.0, MAX_DURATION_MS, 1e15])
def test_issue7_task_durations_in_range_are_read_and_safe(number: int | float) -> None:
    task = converter.decode(task_json(ttl=number, pollInterval=number), Task)
    assert task.ttl == number
    assert task.poll_interval == number
    assert_task_arithmetic_is_safe(task)


def test_issue7_null_and_missing_ttl_are_not_range_checked() -> None:
    assert converter.decode(task_json(ttl=None, pollInterval=None), Task).ttl is None
    missing = {k: v for k, v in task_json().items() if k not in ("ttl", "pollInterval")}
    task = converter.decode(missing, Task)
    assert task.ttl is UNSET
    assert task.poll_interval is None


@pytest.mark.parametrize(
    "number",
    [-1, pytest.param(10**400, id="10**400"), pytest.param(MAX_DURATION_MS + 1, id="MAX+1")],
)
def test_issue7_task_metadata_ttl_out_of_range_names_the_path(number: int) -> None:
    assert error_of({"ttl": number}, TaskMetadata).path == "$.ttl"
    elicit = {"message": "m", "requestedSchema": {}, "task": {"ttl": number}}
    assert error_of(elicit, ElicitRequestFormParams).path == "$.task.ttl"
    sampling = {"messages": [], "maxTokens": 10, "task": {"ttl": number}}
    assert error_of(sampling, CreateMessageRequestParams).path == "$.task.ttl"


def test_issue7_task_metadata_encoding_is_unchanged() -> None:
    assert converter.encode(TaskMetadata(ttl=90000)) == {"ttl": 90000}
    assert converter.encode(TaskMetadata()) == {}


# --- examples: numbers no float can hold ---------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "cls", "path"),
    [
        ({"messages": [], "maxTokens": 10**400}, CreateMessageRequestParams, "$.maxTokens"),
        ({"messages": [], "maxTokens": -(10**309)}, CreateMessageRequestParams, "$.maxTokens"),
        (
            {"messages": [], "maxTokens": 1, "temperature": 10**400},
            CreateMessageRequestParams,
            "$.temperature",
        ),
        ({"uri": "u", "name": "n", "size": 2**1024}, ResourceLink, "$.size"),
        (
            {"content": [{"type": "resource_link", "uri": "u", "name": "n", "size": 10**400}]},
            CallToolResult,
            "$.content[0].size",
        ),
    ],
    ids=["maxTokens", "negative-maxTokens", "temperature", "size", "nested-size"],
)
def test_issue7_integer_beyond_float_range_names_the_path(value: Any, cls: Any, path: str) -> None:
    err = error_of(value, cls)
    assert err.path == path
    assert err.problem.startswith("out of range")


def test_issue7_integers_a_float_can_hold_are_kept_exactly() -> None:
    """The limit is the float maximum; below it integers are not rounded."""
    link = converter.decode({"uri": "u", "name": "n", "size": 10**308 + 1}, ResourceLink)
    assert link.size == 10**308 + 1
    params = converter.decode({"messages": [], "maxTokens": 0}, CreateMessageRequestParams)
    assert params.max_tokens == 0


# --- examples: timestamps ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2025-13-01T00:00:00Z",  # month 13
        "2025-00-01T00:00:00Z",  # month 0
        "2025-11-32T00:00:00Z",  # day 32
        "2025-02-29T00:00:00Z",  # not a leap year
        "2025-11-00T00:00:00Z",  # day 0
        "0000-01-01T00:00:00Z",  # year 0
        "2025-11-25T24:00:00Z",  # hour 24
        "2025-11-25T25:00:00Z",  # hour 25
        "2025-11-25T10:60:00Z",  # minute 60
        "2025-11-25T10:30:61Z",  # second 61
        "2025-11-25T10:30:00+24:00",  # offset hours > 23
        "2025-11-25T10:30:00-99:00",
        "2025-11-25T10:30:00+23:60",  # offset minutes > 59
        "2025-11-25T10:30:00+00:99",  # ``timezone`` alone would read 1:39
        "0001-01-01T00:00:00+00:01",  # in UTC, before year 1
        "9999-12-31T23:59:59-00:01",  # in UTC, after year 9999
        "2025-11-25T10:30:00Z\n",  # ``$`` matches before a final newline
        "\u0662\u0660\u0662\u0665-11-25T10:30:00Z",  # Arabic-Indic digits: ``int`` reads them
    ],
)
def test_issue7_timestamp_out_of_range_names_the_field(text: str) -> None:
    # datetime's own words ("month must be in 1..12", "day is out of range") or the parser's.
    with pytest.raises(ValueError, match=r"range|must be in|RFC 3339"):
        parse_timestamp(text)
    assert error_of(task_json(createdAt=text), Task).path == "$.createdAt"
    err = error_of({"task": task_json(lastUpdatedAt=text)}, CreateTaskResult)
    assert err.path == "$.task.lastUpdatedAt"


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:59:59Z",
        "9999-12-31T23:59:59.999999999Z",
        "9999-12-31T23:59:60Z",
        "0001-01-01T00:00:00Z",
        "0001-01-01T00:00:00-23:59",
        "9999-12-31T23:59:59+23:59",
        "2024-02-29T00:00:00Z",
    ],
)
def test_issue7_timestamps_at_the_edges_parse(text: str) -> None:
    """Year 9999 parses: adding a ttl to it may overflow, and that is the engine's concern."""
    task = converter.decode(task_json(createdAt=text, ttl=None), Task)
    assert parse_timestamp(format_timestamp(task.created_at)) == task.created_at
