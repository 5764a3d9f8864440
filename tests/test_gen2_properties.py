"""Properties of the 2026-07-28 dialect (hypothesis): the codec's round trips and wire names,
the ``resultType`` dispatch, the ``_meta`` and header builder, the MRTR retry, and the
answered-keys bookkeeping under eventually consistent snapshots. Rule ids: E ..."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client import Generation, InputRouter, ToolCall
from mcp_tasks_client._codec.headers import (
    header_annotations,
    param_headers,
    routing_headers,
)
from mcp_tasks_client._codec.v2026_07_28 import converter
from mcp_tasks_client._drivers import driver_for
from mcp_tasks_client._drivers.v2026_07_28 import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)
from mcp_tasks_client.errors import DecodeError, UsageError
from mcp_tasks_client.models import (
    TASKS_EXTENSION,
    CallToolResult,
    CreateTaskResult,
    DiscoverResult,
    ElicitationCapability,
    InputRequiredResult,
    Task,
)
from mcp_tasks_client.protocol import decode_header_value, encode_header_value
from mcp_tasks_client.testing import (
    GEN2_TASK_KEYS,
    call_tool_results,
    client_capabilities,
    detailed_tasks,
    discover_results,
    implementations,
    input_requests,
    input_required_results,
    json_objects,
    metas,
    tasks,
    with_cache_hints,
)

# -- the codec ------------------------------------------------------------------------------


def _created_tasks() -> st.SearchStrategy[Task]:
    """The Task of a flat CreateTaskResult: no inline fields, no ``_meta`` of its own (the
    flat result's ``_meta`` is the result's), extras clear of the 2026 keys."""

    def flat(task: Task) -> Task:
        extra = {k: v for k, v in task.extra.items() if k not in GEN2_TASK_KEYS}
        return attrs.evolve(task, meta=None, extra=extra)

    return tasks().map(flat)


@given(detailed_tasks())
def test_a_detailed_task_round_trips_under_2026_names(task: Task) -> None:
    """E 3.1-3.2: ttlMs / pollIntervalMs on the wire, inline result/error/inputRequests."""
    encoded = converter.encode(task)
    assert converter.decode(encoded, Task) == task
    if isinstance(task.ttl, (int, float)) or task.ttl is None:
        assert "ttlMs" in encoded
    assert "ttl" not in encoded or "ttl" in task.extra  # only a legacy key kept verbatim
    assert "pollInterval" not in encoded or "pollInterval" in task.extra


@given(_created_tasks(), metas())
def test_a_create_task_result_is_flat_with_result_type_task(task: Task, meta: Any) -> None:
    """E 3.3: CreateTaskResult = Result & Task & {resultType: "task"}; no nested task."""
    created = CreateTaskResult(task, meta=meta)
    encoded = converter.encode(created)
    assert encoded["resultType"] == "task"
    assert encoded["taskId"] == task.task_id
    assert converter.decode(encoded, CreateTaskResult) == created


@given(st.one_of(with_cache_hints(discover_results()), input_required_results()))
def test_discover_and_mrtr_results_round_trip(model: DiscoverResult | InputRequiredResult) -> None:
    assert converter.decode(converter.encode(model), type(model)) == model


@given(st.sampled_from(["ttl", "pollInterval"]), st.integers(0, 10**6))
def test_a_legacy_duration_key_is_never_read_as_the_field(key: str, value: int) -> None:
    """E S4: ttl / pollInterval do not exist in 2026-07-28; kept in extra, not used."""
    body = {
        "taskId": "t",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": None,
        key: value,
    }
    task = converter.decode(body, Task)
    assert task.extra[key] == value
    assert task.poll_interval is None
    assert task.ttl is None


@given(st.sampled_from(["ttlMs", "pollIntervalMs"]), st.sampled_from(["x", -1, 10**16, [1]]))
def test_a_bad_2026_duration_names_the_wire_key(key: str, value: Any) -> None:
    body = {
        "taskId": "t",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": 1,
        key: value,
    }
    with pytest.raises(DecodeError) as caught:
        converter.decode(body, Task)
    assert caught.value.path == f"$.{key}"


# -- resultType dispatch (E C15-C20) ------------------------------------------------------------

STATELESS = driver_for(Generation.V2026_07_28)
LEGACY = driver_for(Generation.V2025_11_25)


@st.composite
def start_answers(draw: st.DrawFn) -> tuple[str | None, dict[str, Any]]:
    """A tools/call answer of a drawn kind, its resultType set, left out, or made up."""
    kind = draw(st.sampled_from(["task", "complete", "input_required", None, "other"]))
    if kind == "task":
        body = converter.encode(CreateTaskResult(draw(_created_tasks())))
    elif kind == "input_required":
        answer = draw(input_required_results())
        if answer.input_requests is None and answer.request_state is None:
            answer = attrs.evolve(answer, request_state="s")
        body = converter.encode(answer)
    else:
        body = converter.encode(draw(call_tool_results()))
    body.pop("resultType", None)
    if kind == "other":
        body["resultType"] = draw(
            st.text(min_size=1).filter(lambda t: t not in ("task", "complete", "input_required"))
        )
    elif kind is not None:
        body["resultType"] = kind
    return kind, body


@given(start_answers())
def test_the_result_type_decides_what_a_start_is(answer: tuple[str | None, dict[str, Any]]) -> None:
    """Absent means complete (C16); unknown is invalid (C17); task / input_required as such."""
    kind, body = answer
    if kind == "other":
        with pytest.raises(DecodeError) as caught:
            STATELESS.read_start(body)
        assert caught.value.path == "$.resultType"
        return
    read = STATELESS.read_start(body)
    expected = {
        "task": CreateTaskResult,
        "input_required": InputRequiredResult,
        "complete": CallToolResult,
        None: CallToolResult,
    }[kind]
    assert type(read) is expected


@given(start_answers())
def test_a_legacy_start_is_read_by_its_shape_never_by_result_type(
    answer: tuple[str | None, dict[str, Any]],
) -> None:
    """A-12-ish: the caller's generation reads the answer; 2025-11-25 knows only {task}."""
    _, body = answer
    try:
        read = LEGACY.read_start(body)
    except DecodeError:
        return  # a flat 2026 shape is no 2025-11-25 answer: typed, never guessed
    assert isinstance(read, (CreateTaskResult, CallToolResult))
    assert isinstance(read, CreateTaskResult) == ("task" in body)


# -- the envelope and the headers (E C1-C3, C57-C59) --------------------------------------------


@given(st.text())
def test_header_values_round_trip_and_are_always_safe(value: str) -> None:
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    assert all(0x20 <= ord(c) <= 0x7E for c in encoded)
    assert encoded == encoded.strip()
    plain = value.isascii() and value.isprintable() and value == value.strip()
    if plain and not value.lower().startswith("=?base64?"):
        assert encoded == value


@given(
    st.sampled_from(["tools/call", "prompts/get", "resources/read", "tasks/get", "tasks/update"]),
    st.text(),
)
def test_mcp_name_equals_the_body(method: str, name: str) -> None:
    key = {"resources/read": "uri"}.get(method, "taskId" if method.startswith("tasks/") else "name")
    headers = routing_headers(method, {key: name}, "2026-07-28")
    assert headers["Mcp-Method"] == method
    assert headers["MCP-Protocol-Version"] == "2026-07-28"
    assert decode_header_value(headers["Mcp-Name"]) == name


def test_a_non_string_name_is_refused_before_sending() -> None:
    with pytest.raises(UsageError):
        routing_headers("tasks/get", {"taskId": 7}, "2026-07-28")


@given(
    client_capabilities(),
    implementations(),
    st.sampled_from(["tools/call", "tasks/get", "tasks/update", "prompts/get", "server/discover"]),
    st.booleans(),
    st.one_of(st.none(), json_objects()),
)
def test_every_request_carries_the_envelope_and_the_extension_only_where_asked(
    capabilities: Any, info: Any, method: str, tasks_asked: bool, params: Any
) -> None:
    dialect = driver_for(Generation.V2026_07_28, capabilities, info)
    given = (params or {}).get("_meta")
    if given is not None and not isinstance(given, dict):  # the caller's mistake, said so
        with pytest.raises(UsageError, match="_meta must be a JSON object"):
            dialect.params(method, params, tasks=tasks_asked)
        return
    out = dialect.params(method, params, tasks=tasks_asked)
    assert out is not None
    meta = out["_meta"]
    assert meta[META_PROTOCOL_VERSION] == "2026-07-28"
    assert meta[META_CLIENT_INFO] == converter.encode(info)
    declared = meta[META_CLIENT_CAPABILITIES]
    assert "tasks" not in declared  # E A-24
    has_ext = TASKS_EXTENSION in (declared.get("extensions") or {})
    assert has_ext == (tasks_asked or method.startswith("tasks/")) or (
        TASKS_EXTENSION in (capabilities.extensions or {})
    )
    for key, value in (params or {}).items():  # the caller's params are all kept
        if key != "_meta":
            assert out[key] == value


# -- the MRTR retry (E C45-C48) -----------------------------------------------------------------


@given(
    st.text(min_size=1),
    json_objects(),
    input_required_results(),
    st.data(),
)
def test_the_retry_repeats_the_call_and_echoes_the_state(
    name: str, arguments: Any, answer: InputRequiredResult, data: st.DataObject
) -> None:
    keys = sorted((answer.input_requests or {}).keys())
    chosen = data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
    responses = {k: {"action": "accept"} for k in chosen}
    call = ToolCall(name, arguments)
    params = call.answering(answer, responses).params()
    assert params["name"] == name
    assert params["arguments"] == arguments
    assert params["inputResponses"] == responses
    if answer.request_state is None:
        assert "requestState" not in params  # C46: none added
    else:
        assert params["requestState"] == answer.request_state  # byte for byte
    task_params = call.as_task().answering(answer, responses).call.params()
    assert task_params == params


@given(input_required_results(), st.text(min_size=1))
def test_a_response_for_a_key_not_asked_is_refused(answer: InputRequiredResult, key: str) -> None:
    if key in (answer.input_requests or {}):
        return
    with pytest.raises(ValueError, match="did not ask"):
        ToolCall("t").answering(answer, {key: {"action": "accept"}})


# -- answered keys under eventually consistent snapshots (E C30-C33, A-9) ----------------------


class EventuallyConsistentInputs(RuleBasedStateMachine):
    """Servers mint keys for tasks; a snapshot shows every outstanding key and, since the
    update's ack is eventually consistent, any of the keys already answered. Whatever the
    snapshots: each key is taken (shown to a handler) exactly once, and only once it was shown.
    """

    keys = Bundle("keys")

    def __init__(self) -> None:
        super().__init__()
        self.router = InputRouter(elicitation=ElicitationCapability(form={}))
        self.outstanding: dict[str, set[str]] = {"t0": set(), "t1": set()}
        self.answered: dict[str, set[str]] = {"t0": set(), "t1": set()}
        self.taken: list[tuple[str, str]] = []
        self.minted = 0

    @rule(target=keys, task=st.sampled_from(["t0", "t1"]), same=st.booleans())
    def mint(self, task: str, same: bool) -> tuple[str, str]:
        self.minted += 1
        key = "shared" if same and self.minted < 3 else f"k{self.minted}"  # ids across tasks
        if key in self.answered[task] or key in self.outstanding[task]:
            key = f"k{self.minted}"
        self.outstanding[task].add(key)
        return task, key

    @rule(task=st.sampled_from(["t0", "t1"]), data=st.data())
    def snapshot(self, task: str, data: st.DataObject) -> None:
        stale = sorted(self.answered[task])
        repeated = data.draw(
            st.lists(st.sampled_from(stale), unique=True) if stale else st.just([])
        )
        shown = sorted(self.outstanding[task] | set(repeated))
        requests = {k: data.draw(input_requests()) for k in shown}
        for key, request in self.router.take_inputs(task, requests):
            assert key in shown
            self.taken.append((task, key))
            self.router.book.answered(task, key)  # the handler ran; tasks/update sent
            self.outstanding[task].discard(key)
            self.answered[task].add(key)
            assert request is requests[key]

    @precondition(lambda self: self.taken)
    @invariant()
    def each_key_taken_once(self) -> None:
        assert len(self.taken) == len(set(self.taken))

    @invariant()
    def answered_are_all_taken(self) -> None:
        for task, keys in self.answered.items():
            assert {(task, k) for k in keys} <= set(self.taken)


TestEventuallyConsistentInputs = EventuallyConsistentInputs.TestCase


# -- x-mcp-header annotations (E C60) -----------------------------------------------------------

_TOKENS = st.from_regex(r"[A-Za-z][A-Za-z0-9\-]{0,11}", fullmatch=True)
_HEADER_TYPES = st.sampled_from(["string", "integer", "boolean"])


@st.composite
def annotated_schemas(draw: st.DrawFn) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """A valid input schema with annotations on (possibly nested) properties, and them."""
    tokens = draw(st.lists(_TOKENS, unique_by=str.lower, max_size=4))
    expected: dict[tuple[str, ...], str] = {}
    properties: dict[str, Any] = {}
    for index, token in enumerate(tokens):
        leaf = {"type": draw(_HEADER_TYPES), "x-mcp-header": token}
        if draw(st.booleans()):
            properties[f"outer{index}"] = {"type": "object", "properties": {"inner": leaf}}
            expected[(f"outer{index}", "inner")] = token
        else:
            properties[f"arg{index}"] = leaf
            expected[(f"arg{index}",)] = token
    return {"type": "object", "properties": properties}, expected


@given(annotated_schemas())
def test_valid_annotations_are_found_at_their_paths(
    case: tuple[dict[str, Any], dict[tuple[str, ...], str]],
) -> None:
    schema, expected = case
    assert header_annotations(schema) == expected


@given(annotated_schemas(), st.data())
def test_mcp_param_headers_mirror_the_arguments(
    case: tuple[dict[str, Any], dict[tuple[str, ...], str]], data: st.DataObject
) -> None:
    """Each annotated argument present goes into its header, encoded; absent ones do not."""
    _schema, annotations = case
    arguments: dict[str, Any] = {}
    present: dict[str, Any] = {}
    for path, token in annotations.items():
        value = data.draw(st.none() | st.text() | st.integers() | st.booleans())
        node = arguments
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
        if value is not None:
            present[f"Mcp-Param-{token}"] = value
    headers = param_headers(annotations, arguments)
    assert set(headers) == set(present)
    for name, value in present.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        assert decode_header_value(headers[name]) == text


@given(st.integers(min_value=-(2**53), max_value=2**53), st.booleans())
def test_an_integer_written_as_a_float_travels_as_the_integer(number: int, nested: bool) -> None:
    """An integer-typed argument may be written 3.0 (a JSON Schema integer): its header says
    "3", the same text as for 3, whatever reads it (a server comparing header and body)."""
    path = ("outer", "inner") if nested else ("n",)
    arguments: dict[str, Any] = {"outer": {"inner": float(number)}, "n": float(number)}
    headers = param_headers({path: "Count"}, arguments)
    assert decode_header_value(headers["Mcp-Param-Count"]) == str(number)
    assert headers == param_headers({path: "Count"}, {"outer": {"inner": number}, "n": number})


@given(
    st.sampled_from(["number", "object", "array", None]),
    _TOKENS,
)
def test_an_annotation_on_a_non_primitive_is_invalid(kind: str | None, token: str) -> None:
    leaf: dict[str, Any] = {"x-mcp-header": token}
    if kind is not None:
        leaf["type"] = kind
    with pytest.raises(ValueError, match="type"):
        header_annotations({"type": "object", "properties": {"a": leaf}})


@given(_TOKENS)
def test_a_header_name_twice_is_invalid_whatever_its_case(token: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": token},
            "b": {"type": "string", "x-mcp-header": token.swapcase()},
        },
    }
    with pytest.raises(ValueError, match="repeats"):
        header_annotations(schema)


@given(st.sampled_from(["", "has space", "ü", "a:b", "x/y"]) | st.integers())
def test_an_annotation_that_is_no_token_is_invalid(token: Any) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": token}}}
    with pytest.raises(ValueError, match="token"):
        header_annotations(schema)


@given(st.sampled_from(["items", "anyOf", "additionalProperties", "$defs"]))
def test_an_annotation_off_the_properties_chain_is_invalid(keyword: str) -> None:
    leaf = {"type": "string", "x-mcp-header": "X"}
    inner: Any = {"anyOf": [leaf]}.get(keyword) if keyword == "anyOf" else leaf
    if keyword == "$defs":
        inner = {"d": leaf}
    schema = {"type": "object", "properties": {"a": {"type": "array", keyword: inner}}}
    with pytest.raises(ValueError, match="chain"):
        header_annotations(schema)


def test_a_ref_is_never_followed() -> None:
    """Schemas are read as received: a $ref is data, not a place to go (nor to fetch)."""
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "http://198.51.100.1/schema.json"}},
        "$defs": {"x": {"type": "string"}},
    }
    assert header_annotations(schema) == {}


# -- the public codec -------------------------------------------------------------------------


@given(detailed_tasks())
def test_the_public_codec_is_the_generations_codec(task: Task) -> None:
    """Issue 9: a caller building results by hand turns any model into its wire JSON."""
    from mcp_tasks_client.wire import decode, encode

    assert encode(task, Generation.V2026_07_28) == converter.encode(task)
    assert decode(encode(task, Generation.V2026_07_28), Task, Generation.V2026_07_28) == task
    legacy = attrs.evolve(task, result=None, error=None, input_requests=None)
    assert decode(encode(legacy, Generation.V2025_11_25), Task, Generation.V2025_11_25) == legacy
