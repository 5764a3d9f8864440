"""Properties of the 2025-11-25 codec: round trips, robustness, and the spec rules it pins.

- Every model survives ``decode(encode(m))``, directly and through real JSON text.
- Whatever JSON arrives, decoding yields a model or a :class:`DecodeError` naming a ``$`` path,
  never another exception; the same for JSON-RPC envelopes and for raw bytes.
- Example tests pin the spec's rules and the decisions of section 6 (rule ids in the names).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import attrs
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tasks_client import models
from mcp_tasks_client._codec._converter import dumps, format_timestamp, loads, parse_timestamp
from mcp_tasks_client._codec.messages import (
    decode_message,
    encode_message,
    parse_message,
    serialize_message,
)
from mcp_tasks_client._codec.v2025_11_25 import converter
from mcp_tasks_client.errors import DecodeError
from mcp_tasks_client.models import (
    UNSET,
    CallToolResult,
    ClientTasksCapability,
    ContentBlock,
    CreateMessageRequestParams,
    CreateTaskResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    InitializeResult,
    JSONRPCError,
    JSONRPCRequest,
    ListTasksResult,
    ServerTasksCapability,
    Task,
    TaskMetadata,
    TaskStatus,
    TextContent,
    UnknownContent,
)
from mcp_tasks_client.testing import (
    MODEL_STRATEGIES,
    WIRE_MODELS,
    json_objects,
    json_values,
    jsonrpc_messages,
    mutated,
    strategy_for,
    tasks,
    timestamps,
    wire_keys,
)

ROUND_TRIP = settings(
    max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
ROBUSTNESS = settings(
    max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def model_id(cls: type) -> str:
    return cls.__name__


UNION_TARGETS: dict[str, Any] = {
    "ContentBlock": ContentBlock,
    "ElicitRequestParams": ElicitRequestParams,
}
"""Union types the codec resolves with a discriminator (``type``, ``mode``)."""

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?(Z|[+-]\d{2}:\d{2})$")


def decode_any(value: Any, target: Any) -> Any:
    """``converter.decode`` for targets mypy cannot call it with (union aliases)."""
    return converter.decode(value, target)


def assert_pure_json(value: Any) -> None:
    """``value`` holds only what ``json.loads`` returns: no tuples, enums, datetimes."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str)
            assert_pure_json(item)
    elif isinstance(value, list):
        for item in value:
            assert_pure_json(item)
    else:
        assert value is None or type(value) in (bool, int, float, str), repr(value)


def assert_decodes_or_names_path(decode: Any, value: Any) -> Any:
    """Run ``decode(value)``: a result, or a DecodeError with a ``$`` path and a problem."""
    try:
        return decode(value)
    except DecodeError as exc:
        err = exc
    assert err.path.startswith("$"), err.path
    assert isinstance(err.problem, str)
    assert err.problem
    return err


def error_of(value: Any, target: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_any(value, target)
    return info.value


MISSING: Any = object()
"""A :func:`task_json` change that deletes the key."""


def task_json(**changes: Any) -> dict[str, Any]:
    """A valid flat Task (SCH ``Task``) with ``changes`` applied (``MISSING`` deletes)."""
    base: dict[str, Any] = {
        "taskId": "786512e2",
        "status": "working",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60000,
        "pollInterval": 5000,
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not MISSING}


# --- the strategies cover the models ---------------------------------------------------------


def test_every_model_class_has_a_strategy() -> None:
    exported = [getattr(models, name) for name in models.__all__]
    classes = {obj for obj in exported if isinstance(obj, type) and attrs.has(obj)}
    assert classes == set(MODEL_STRATEGIES)


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", WIRE_MODELS, ids=model_id)
@ROUND_TRIP
@given(data=st.data())
def test_round_trip(cls: type, data: st.DataObject) -> None:
    """``decode(encode(m)) == m``, directly, through JSON text, and through the library's
    own ``dumps``/``loads``; the encoding is plain JSON and stays clear of ``extra`` keys."""
    model = data.draw(strategy_for(cls), label="model")
    encoded = converter.encode(model)
    assert_pure_json(encoded)
    assert isinstance(encoded, dict)
    assert converter.decode(encoded, cls) == model
    assert converter.decode(json.loads(json.dumps(encoded, allow_nan=False)), cls) == model
    assert converter.decode(loads(dumps(encoded)), cls) == model
    extra = getattr(model, "extra", None)
    if extra is not None:
        assert not (set(extra) & wire_keys(cls))


@ROUND_TRIP
@given(message=jsonrpc_messages())
def test_jsonrpc_round_trip(message: Any) -> None:
    encoded = encode_message(message)
    assert_pure_json(encoded)
    assert decode_message(encoded) == message
    assert parse_message(serialize_message(message)) == message
    assert b"\n" not in serialize_message(message)  # stdio frames by line (X:3.3)


@ROUND_TRIP
@given(value=json_values())
def test_loads_dumps_round_trip(value: Any) -> None:
    assert loads(dumps(value)) == value


# --- robustness ------------------------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(cls=st.sampled_from(WIRE_MODELS), value=json_values() | json_objects())
def test_decode_arbitrary_json(cls: type, value: Any) -> None:
    result = assert_decodes_or_names_path(lambda v: converter.decode(v, cls), value)
    assert isinstance(result, (cls, DecodeError))


@pytest.mark.parametrize("cls", WIRE_MODELS, ids=model_id)
@ROBUSTNESS
@given(data=st.data())
def test_decode_mutated_encoding(cls: type, data: st.DataObject) -> None:
    """A valid encoding with one key deleted or one value of another kind, at any depth.

    Several near misses per model: drawing a mutation is cheap, drawing a model is not."""
    valid = converter.encode(data.draw(strategy_for(cls), label="model"))
    for value in data.draw(st.lists(mutated(valid), min_size=1, max_size=4), label="mutated"):
        result = assert_decodes_or_names_path(lambda v: converter.decode(v, cls), value)
        assert isinstance(result, (cls, DecodeError))


@pytest.mark.parametrize("name", sorted(UNION_TARGETS))
@ROBUSTNESS
@given(data=st.data())
def test_decode_unions(name: str, data: st.DataObject) -> None:
    target = UNION_TARGETS[name]
    members = [cls for cls in WIRE_MODELS if cls in target.__args__]
    cls = data.draw(st.sampled_from(members), label="member")
    valid = converter.encode(data.draw(strategy_for(cls), label="model"))
    assert decode_any(valid, target) == decode_any(valid, cls)
    value = data.draw(st.just(valid) | mutated(valid) | json_values(), label="value")
    assert_decodes_or_names_path(lambda v: decode_any(v, target), value)


@ROBUSTNESS
@given(value=json_values() | json_objects() | jsonrpc_messages().map(encode_message))
def test_decode_message_arbitrary_json(value: Any) -> None:
    assert_decodes_or_names_path(decode_message, value)


@ROBUSTNESS
@given(data=st.data())
def test_decode_message_mutated(data: st.DataObject) -> None:
    valid = encode_message(data.draw(jsonrpc_messages(), label="message"))
    value = data.draw(mutated(valid), label="mutated")
    assert_decodes_or_names_path(decode_message, value)


_JSONISH = st.text(alphabet='[]{}":,-+.0123456789eEtrufalsnNIiy\\ \n\t', max_size=30)
# JSON strings with \u escapes, surrogates among them: a valid pair, a lone high or low half.
_ESCAPES = st.sampled_from(["\\ud800", "\\udfff", "\\udbff\\udc00", "\\ud83d\\ude00", "\\u00e9"])
_ESCAPED = st.builds(
    str.format,
    st.sampled_from(['["{}"]', '{{"{}": 1}}', '{{"id": "{}"}}']),
    st.lists(_ESCAPES | st.text(alphabet="ab:[]", max_size=3), max_size=4).map("".join),
)


@settings(max_examples=examples(150), deadline=None)
@given(data=st.binary(max_size=40) | st.text(max_size=20).map(str.encode) | _JSONISH | _ESCAPED)
def test_loads_arbitrary_input(data: bytes | str) -> None:
    """Any bytes: a JSON value, or a DecodeError (never ValueError, UnicodeDecodeError); and
    what is accepted can be written back (a lone surrogate never is)."""
    result = assert_decodes_or_names_path(loads, data)
    if not isinstance(result, DecodeError):
        dumps(result)  # whatever ``loads`` accepts can be written back (no NaN, no Infinity)


_SPACE = st.text(alphabet=" \t\r\n", max_size=2)


@settings(max_examples=examples(150), deadline=None)
@given(
    before=_SPACE,
    body=_JSONISH | st.sampled_from(["{}", "[1]", '"x"', "1", "{} {}", "[1] x", "", "nul"]),
    after=_SPACE,
)
def test_loads_reads_as_json_loads_with_whitespace_around(
    before: str, body: str, after: str
) -> None:
    """A message read straight (nothing around it) or by json's own ``decode`` (whitespace
    around it, or not JSON at all): the value ``json.loads`` reads, or a DecodeError where it
    raises."""
    text = before + body + after
    try:
        expected: Any = json.loads(text)
    except ValueError:
        expected = DecodeError
    try:
        got: Any = loads(text.encode())
    except DecodeError:
        got = DecodeError
    if expected is not DecodeError and got is DecodeError:
        return  # refused by this library's stricter rules (NaN, a lone surrogate)
    assert got == expected


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', "$.id"),
        (b'{"a":[1,{"b":"x\\udc00y"}]}', "$.a[1].b"),
        (b'{"k\\udbff":1}', "$"),
        (b'["\\ude00\\ud83d"]', "$[0]"),  # the halves of a pair, in the wrong order
        ('"\ud800"', "$"),  # a str handed in may already hold one
    ],
)
def test_loads_refuses_a_lone_surrogate_naming_its_path(data: bytes | str, path: str) -> None:
    """A lone surrogate is valid JSON but not Unicode text: nothing holding one could be
    written back (not even the id of an answer), so the message is refused."""
    with pytest.raises(DecodeError) as info:
        loads(data)
    assert (info.value.path, "surrogate" in info.value.problem) == (path, True)
    str(info.value).encode()  # the error itself can be printed and logged
    str(info.value.value).encode()


def test_loads_accepts_an_escaped_surrogate_pair() -> None:
    assert loads(b'{"text":"\\ud83d\\ude00 \\\\ud800"}') == {"text": "\U0001f600 \\ud800"}


@pytest.mark.parametrize(
    "text",
    ["NaN", "Infinity", "-Infinity", "[NaN]", '{"ttl": Infinity}', "1e999", "-1e999", "[1e400]"],
)
def test_c01_loads_rejects_non_finite_numbers(text: str) -> None:
    with pytest.raises(DecodeError) as info:
        loads(text.encode())
    assert info.value.path == "$"


@pytest.mark.parametrize(
    "data", [b"\xff", b'"\xc3"', b"\xed\xa0\x80", b"[" * 100_000, b'{"a":' * 100_000, b""]
)
def test_c01_loads_rejects_bad_bytes_as_decode_error(data: bytes) -> None:
    """Invalid UTF-8, nesting deeper than the parser can go, and empty input (C-01)."""
    with pytest.raises(DecodeError) as info:
        loads(data)
    assert info.value.problem.startswith("not valid JSON")


# --- timestamps (A-17) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-11-25T10:30:00Z", dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)),
        ("2025-11-25t10:30:00z", dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)),
        ("2025-11-25T16:00:00+05:30", dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)),
        ("2025-11-25T02:30:00-08:00", dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)),
        (
            "2025-11-25T10:30:00.123456789Z",
            dt.datetime(2025, 11, 25, 10, 30, 0, 123456, tzinfo=dt.timezone.utc),
        ),
        (
            "2025-11-25T10:30:00.5+00:00",
            dt.datetime(2025, 11, 25, 10, 30, 0, 500000, tzinfo=dt.timezone.utc),
        ),
    ],
)
def test_a17_rfc3339_timestamps_are_read(text: str, expected: dt.datetime) -> None:
    task = converter.decode(task_json(createdAt=text), Task)
    assert task.created_at == expected
    assert task.created_at.utcoffset() is not None


def test_a17_offset_is_kept_and_utc_is_written_with_z() -> None:
    task = converter.decode(task_json(createdAt="2025-11-25T16:00:00+05:30"), Task)
    encoded = converter.encode(task)
    assert encoded["createdAt"] == "2025-11-25T16:00:00+05:30"
    assert encoded["lastUpdatedAt"] == "2025-11-25T10:30:00Z"


@pytest.mark.parametrize(
    "text", ["yesterday", "2025-11-25", "2025-13-01T00:00:00Z", "2025-11-25T10:30:00+24:00", ""]
)
def test_a17_bad_timestamp_names_the_field(text: str) -> None:
    err = error_of({"task": task_json(lastUpdatedAt=text)}, CreateTaskResult)
    assert err.path == "$.task.lastUpdatedAt"


@settings(max_examples=examples(100), deadline=None)
@given(
    moment=timestamps(
        tz=st.integers(-86399, 86399).map(lambda s: dt.timezone(dt.timedelta(seconds=s)))
    )
)
def test_a17_any_aware_datetime_is_written_as_rfc3339(moment: dt.datetime) -> None:
    """Offsets RFC 3339 cannot write (seconds, e.g. zoneinfo's LMT) are written in UTC."""
    text = format_timestamp(moment)
    assert RFC3339.match(text), text
    assert parse_timestamp(text) == moment


@settings(max_examples=examples(50), deadline=None)
@given(task=tasks())
def test_a17_encoded_tasks_carry_rfc3339_timestamps(task: Task) -> None:
    encoded = converter.encode(task)
    assert RFC3339.match(encoded["createdAt"])
    assert RFC3339.match(encoded["lastUpdatedAt"])


# --- Task (SCH Task, A-06, A-18) ----------------------------------------------------------


def test_sch_missing_required_field_names_the_path() -> None:
    err = error_of({"task": task_json(createdAt=MISSING)}, CreateTaskResult)
    assert err.path == "$.task.createdAt"
    assert err.problem == "required field is missing"


def test_sch_missing_task_of_create_task_result() -> None:
    """CreateTaskResult is wrapped in ``task`` (T:463); a flat Task is not one."""
    assert error_of(task_json(), CreateTaskResult).path == "$.task"


@pytest.mark.parametrize(
    ("target", "value", "path"),
    [
        (CreateMessageRequestParams, {"messages": [], "maxTokens": "5"}, "$.maxTokens"),
        (CreateMessageRequestParams, {"messages": [], "maxTokens": True}, "$.maxTokens"),
        (Task, task_json(ttl="5"), "$.ttl"),
        (Task, task_json(pollInterval="5000"), "$.pollInterval"),
        (Task, task_json(taskId=5), "$.taskId"),
        (TaskMetadata, {"ttl": "60000"}, "$.ttl"),
        (CallToolResult, {"content": [], "isError": "false"}, "$.isError"),
        (CallToolResult, {"content": {"type": "text", "text": "x"}}, "$.content"),
    ],
)
def test_sch_wrong_type_is_a_decode_error(target: Any, value: Any, path: str) -> None:
    """The codec is strict: ``"5"`` is never an integer, ``5`` never a string."""
    assert error_of(value, target).path == path


@pytest.mark.parametrize("status", ["submitted", "unknown", "WORKING", "done", ""])
def test_t_unknown_task_status_names_status(status: str) -> None:
    """Only the five statuses of 2025-11-25 exist (SEP-1686's ``submitted`` is gone)."""
    assert error_of(task_json(status=status), Task).path == "$.status"
    assert error_of({"task": task_json(status=status)}, CreateTaskResult).path == "$.task.status"
    listed = {"tasks": [task_json(), task_json(status=status)]}
    assert error_of(listed, ListTasksResult).path == "$.tasks[1].status"


def test_sch_every_task_status_is_read() -> None:
    for status in TaskStatus:
        assert converter.decode(task_json(status=status.value), Task).status is status


def test_a06_ttl_null_is_unlimited_and_written_back_as_null() -> None:
    """SCH ``Task.ttl: number | null``, a required key: ``null`` means unlimited."""
    task = converter.decode(task_json(ttl=None), Task)
    assert task.ttl is None
    encoded = converter.encode(task)
    assert "ttl" in encoded
    assert encoded["ttl"] is None
    assert '"ttl":null' in dumps(encoded).decode()


def test_a06_missing_ttl_is_unset_and_not_written() -> None:
    """A-06: a missing ``ttl`` is read leniently as UNSET (not as ``null``)."""
    task = converter.decode(task_json(ttl=MISSING), Task)
    assert task.ttl is UNSET
    assert "ttl" not in converter.encode(task)


def test_a18_float_ttl_and_poll_interval_are_accepted() -> None:
    """SCH says ``number``, SJ ``integer``: floats are read (A-18)."""
    task = converter.decode(task_json(ttl=60000.0, pollInterval=5000.0), Task)
    assert task.ttl == 60000
    assert task.poll_interval == 5000
    assert converter.decode(task_json(ttl=1500.5), Task).ttl == 1500.5
    metadata = converter.decode({"ttl": 60000.0}, TaskMetadata)
    assert metadata.ttl == 60000
    assert type(metadata.ttl) is int


def test_a18_integer_ttl_stays_an_integer() -> None:
    """Integers are sent as integers (A-18): 60000 does not come back as 60000.0."""
    encoded = converter.encode(converter.decode(task_json(), Task))
    assert type(encoded["ttl"]) is int
    assert type(encoded["pollInterval"]) is int


def test_a18_fractional_integer_field_is_refused() -> None:
    """``TaskMetadata.ttl`` is an integer: 60000.0 is read, 1.5 is not."""
    err = error_of(
        {"message": "m", "requestedSchema": {}, "task": {"ttl": 1.5}}, ElicitRequestFormParams
    )
    assert err.path == "$.task.ttl"
    err = error_of({"ttl": 1.5}, TaskMetadata)
    assert err.path == "$.ttl"
    assert "fraction" in err.problem


# --- capabilities (A-09) -------------------------------------------------------------------


@pytest.mark.parametrize("present", [{}, True, {"future": 1}])
def test_a09_capability_flag_object_or_true_is_present(present: Any) -> None:
    server = converter.decode(
        {"list": present, "cancel": present, "requests": {"tools": {"call": present}}},
        ServerTasksCapability,
    )
    assert (server.list, server.cancel, server.tools_call) == (True, True, True)
    client = converter.decode(
        {
            "list": present,
            "requests": {"sampling": {"createMessage": present}, "elicitation": {"create": {}}},
        },
        ClientTasksCapability,
    )
    assert client.list
    assert client.sampling_create_message
    assert client.elicitation_create
    assert not client.cancel


@pytest.mark.parametrize("absent", [False, None])
def test_a09_capability_flag_false_or_null_is_absent(absent: Any) -> None:
    value = {"list": absent, "cancel": absent, "requests": {"tools": {"call": absent}}}
    server = converter.decode(value, ServerTasksCapability)
    assert server == ServerTasksCapability()
    assert converter.encode(server) == {}


def test_a09_flags_are_sent_as_empty_objects() -> None:
    assert converter.encode(ServerTasksCapability(list=True, tools_call=True)) == {
        "list": {},
        "requests": {"tools": {"call": {}}},
    }
    assert converter.encode(
        ClientTasksCapability(cancel=True, sampling_create_message=True, elicitation_create=True)
    ) == {
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
    }


def test_a09_unknown_capability_keys_survive_beside_flags() -> None:
    value = {
        "list": {},
        "requests": {"tools": {"call": {}, "stream": {}}, "prompts": {"get": {}}},
        "future": [1],
    }
    capability = converter.decode(value, ServerTasksCapability)
    assert capability.tools_call
    assert converter.encode(capability) == value


@pytest.mark.parametrize(
    ("tasks_value", "path"),
    [
        ({"list": 1}, "$.capabilities.tasks.list"),
        ({"list": "yes"}, "$.capabilities.tasks.list"),
        ({"requests": []}, "$.capabilities.tasks.requests"),
        ({"requests": {"tools": 0}}, "$.capabilities.tasks.requests.tools"),
        ({"requests": {"tools": {"call": "yes"}}}, "$.capabilities.tasks.requests.tools.call"),
    ],
)
def test_a09_bad_capability_flag_names_the_path(tasks_value: Any, path: str) -> None:
    value = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": tasks_value},
        "serverInfo": {"name": "s", "version": "1"},
    }
    assert error_of(value, InitializeResult).path == path


# --- elicitation (C-49) ----------------------------------------------------------------------


def test_c49_elicitation_without_mode_is_form_mode() -> None:
    value = {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
    params = decode_any(value, ElicitRequestParams)
    assert isinstance(params, ElicitRequestFormParams)
    assert params.extra == {}
    assert decode_any({**value, "mode": "form"}, ElicitRequestParams) == params
    assert converter.encode(params) == {**value, "mode": "form"}


def test_c49_url_mode_and_unknown_mode() -> None:
    value = {"mode": "url", "message": "Sign in", "url": "https://x", "elicitationId": "e-1"}
    params = decode_any(value, ElicitRequestParams)
    assert isinstance(params, ElicitRequestURLParams)
    assert converter.encode(params) == value
    assert error_of({**value, "mode": "sms"}, ElicitRequestParams).path == "$.mode"
    assert error_of({**value, "mode": None}, ElicitRequestParams).path == "$.mode"


def test_c49_url_mode_requires_its_fields() -> None:
    value = {"mode": "url", "message": "Sign in", "url": "https://x"}
    assert error_of(value, ElicitRequestParams).path == "$.elicitationId"


# --- content blocks ------------------------------------------------------------------------


def test_unknown_content_type_is_kept_whole() -> None:
    block = {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "NYC"}}
    value = {"content": [{"type": "text", "text": "hi"}, block]}
    result = converter.decode(value, CallToolResult)
    assert result.content[0] == TextContent("hi")
    assert result.content[1] == UnknownContent(type="tool_use", raw=block)
    assert converter.encode(result) == value


@pytest.mark.parametrize(
    ("block", "path"),
    [
        ({"text": "no type"}, "$.content[0].type"),
        ({"type": 5, "text": "x"}, "$.content[0].type"),
        ({"type": "text"}, "$.content[0].text"),
        ({"type": "resource", "resource": {"uri": "u"}}, "$.content[0].resource.text"),
    ],
)
def test_content_block_errors_name_the_path(block: Any, path: str) -> None:
    assert error_of({"content": [block]}, CallToolResult).path == path


@pytest.mark.parametrize("value", [[1], "text", None, {"text": "x"}, {"type": 5}])
def test_unknown_content_decoded_directly_refuses_non_blocks(value: Any) -> None:
    """Regression: this hook once raised TypeError/KeyError instead of a DecodeError."""
    err = error_of(value, UnknownContent)
    assert err.path in ("$", "$.type")


# --- forward compatibility -----------------------------------------------------------------


def test_unknown_fields_survive_a_round_trip() -> None:
    value = {
        "task": task_json(futureField={"nested": [1, None]}, ttl=None),
        "_meta": {"io.modelcontextprotocol/model-immediate-response": "Started"},
        "resultHint": "x",
    }
    result = converter.decode(value, CreateTaskResult)
    assert result.extra == {"resultHint": "x"}
    assert result.task.extra == {"futureField": {"nested": [1, None]}}
    assert result.model_immediate_response == "Started"
    assert converter.encode(result) == value


def test_unknown_fields_of_content_blocks_survive() -> None:
    value = {
        "content": [{"type": "image", "data": "AA==", "mimeType": "image/png", "alt": "x"}],
        "structuredContent": {"t": 72},
        "isError": False,
    }
    result = converter.decode(value, CallToolResult)
    assert result.content[0].extra == {"alt": "x"}  # type: ignore[union-attr]
    assert converter.encode(result) == value


# --- JSON-RPC envelopes (B, C-02, C-03) ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "$.id"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "$.id"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "$.id"),
        ({"jsonrpc": "2.0", "result": {}}, "$.id"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "$.error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.0, "message": "m"}}, "$.error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "$.error.message"),
        ({"jsonrpc": "2.0", "id": 1, "result": []}, "$.result"),
        ({"jsonrpc": "2.0", "method": "x", "params": [1]}, "$.params"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "$.jsonrpc"),
        ({"id": 1, "result": {}}, "$.jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1}, "$"),
    ],
)
def test_c02_c03_bad_envelopes_name_the_key(value: Any, path: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode_message(value)
    assert info.value.path == path


def test_c03_error_with_null_id_is_uncorrelated() -> None:
    message = decode_message(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    )
    assert isinstance(message, JSONRPCError)
    assert message.id is None


def test_c02_string_and_integer_ids_are_distinct() -> None:
    a = decode_message({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    b = decode_message({"jsonrpc": "2.0", "id": "1", "method": "ping"})
    assert isinstance(a, JSONRPCRequest)
    assert isinstance(b, JSONRPCRequest)
    assert a.id != b.id
