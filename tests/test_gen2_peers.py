"""The 2026-07-28 generation (``io.modelcontextprotocol/tasks``) against the real fastmcp 4.1.4
peer, over HTTP and stdio, on trio and asyncio. Rule ids are the extension digest's (E ...).

Also checked on the wire (HTTP requests recorded by an httpx event hook on the real traffic):
every request carries the ``_meta`` envelope, and its routing headers equal its body.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from conftest import require_peer
from recording import RecordingTransport
from started import task_created

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Failed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import (
    HeaderMismatch,
    InputRequired,
    InvalidToolAnnotation,
    MissingClientCapability,
    TaskAugmentationRequired,
    TaskNotFound,
    UnsupportedInGeneration,
)
from mcp_tasks_client.models import (
    TASKS_EXTENSION,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCRequest,
    TaskStatus,
    TextContent,
)
from mcp_tasks_client.protocol import decode_header_value
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
EXT_META = "io.modelcontextprotocol/clientCapabilities"


def text_of(result: object) -> str:
    content = getattr(result, "content", ())
    return " ".join(block.text for block in content if isinstance(block, TextContent))


def connect(transport: Transport, router: InputRouter | None = None) -> Client:
    capabilities = router.capabilities() if router is not None else None
    if capabilities is None:
        return Client(transport, generation=Generation.V2026_07_28, client_info=INFO)
    return Client(
        transport,
        generation=Generation.V2026_07_28,
        client_info=INFO,
        capabilities=capabilities,
    )


async def test_discover_names_the_version_and_the_tasks_extension(gen2: Transport) -> None:
    """E C9-C11, S1: discover is explicit; the capabilities come from it alone."""
    async with connect(gen2) as client:
        found = await client.discover()
        assert "2026-07-28" in found.supported_versions
        assert found.capabilities.tasks_extension
        assert client.server_capabilities is found.capabilities


async def test_a_plain_call_is_answered_inline(gen2: Transport) -> None:
    async with connect(gen2) as client:
        result = await client.call_tool(ToolCall("greet", {"name": "Ada"}))
    assert text_of(result) == "Hello, Ada!"
    assert not result.is_error


async def test_a_task_call_completes_with_its_result_inline(gen2: Transport) -> None:
    """E C20, C22-C24, C27: resultType task, polled with tasks/get, result inlined."""
    async with connect(gen2) as client:
        created = task_created(
            await client.start(ToolCall("slow_compute", {"seconds": 0.3, "label": "a"}).as_task())
        )
        assert created.task.status is TaskStatus.WORKING
        assert created.task.poll_interval == 200  # pollIntervalMs, read as the neutral field
        assert created.task.ttl == 900000  # ttlMs
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert outcome.task is not None
    assert outcome.task.status is TaskStatus.COMPLETED
    assert text_of(outcome.result) == "computed a in 0.3s"


async def test_a_tool_error_is_completed_with_is_error(gen2: Transport) -> None:
    """E S7: a tool's isError result stays completed (never failed)."""
    async with connect(gen2) as client:
        created = task_created(await client.start(ToolCall("failing_job").as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert outcome.result.is_error
    assert "job failed on purpose" in text_of(outcome.result)


async def test_a_protocol_error_is_failed_with_the_inlined_error(gen2: Transport) -> None:
    """E S8, C27: failed carries the JSON-RPC error, typed as RPCError."""
    async with connect(gen2) as client:
        created = task_created(await client.start(ToolCall("protocol_error_job").as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Failed)
    assert outcome.error is not None
    assert outcome.error.code == -32603
    assert outcome.error.message == "simulated protocol fault"


async def test_cancel_is_an_empty_ack_and_the_task_ends_cancelled(gen2: Transport) -> None:
    """E C35-C36: tasks/cancel answers an empty ack; the status follows (eventually)."""
    async with connect(gen2) as client:
        created = task_created(
            await client.start(ToolCall("slow_compute", {"seconds": 30}).as_task())
        )
        assert await client.cancel_task(created.task.task_id) is None
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Cancelled)


async def test_an_unknown_task_id_is_task_not_found(gen2: Transport) -> None:
    """E C54, S9: -32602 for an unknown task."""
    async with connect(gen2) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")


async def test_one_elicitation_goes_to_the_handler_of_its_task(gen2: Transport) -> None:
    """E C28-C31: inputRequests reach the handler keyed by the task id, which sees the key;
    the answer goes back with tasks/update and the task completes."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    recorder = RecordingTransport(gen2)
    client = connect(recorder, router)
    seen: list[tuple[str | None, str, str]] = []
    async with client:
        router.attach(client)
        created = task_created(
            await client.start(ToolCall("confirm_delete", {"filename": "a.txt"}).as_task())
        )
        task_id = created.task.task_id

        async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestFormParams)
            seen.append((ctx.task_id, ctx.key, params.message))
            return ElicitResult(ElicitAction.ACCEPT, {"confirm": True})

        router.on_elicitation(task_id, confirm)
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert text_of(outcome.result) == "deleted a.txt"
    assert len(seen) == 1
    assert seen[0][0] == task_id
    assert seen[0][2] == "Delete a.txt?"
    updates = [
        m for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tasks/update"
    ]
    assert len(updates) == 1  # C31: answered once, however often the key was polled
    params = updates[0].params or {}
    assert params["taskId"] == task_id
    assert list(params["inputResponses"]) == [seen[0][1]]
    assert params["inputResponses"][seen[0][1]] == {
        "action": "accept",
        "content": {"confirm": True},
    }


async def test_two_inputs_are_answered_one_at_a_time(gen2: Transport) -> None:
    """E C32-C33, A-10: partial answers; each key is shown once and answered once."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    recorder = RecordingTransport(gen2)
    client = connect(recorder, router)
    asked: list[str] = []
    async with client:
        router.attach(client)
        created = task_created(await client.start(ToolCall("multi_input").as_task()))

        def updates_sent() -> int:
            return sum(
                isinstance(m, JSONRPCRequest) and m.method == "tasks/update" for m in recorder.sent
            )

        async def answer(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestFormParams)
            asked.append(params.message)
            if params.message == "Last name?":
                while not updates_sent():  # "First name?" is answered first, alone
                    await anyio.sleep(0.01)
                return ElicitResult(ElicitAction.ACCEPT, {"value": "Lovelace"})
            return ElicitResult(ElicitAction.ACCEPT, {"value": "Ada"})

        router.on_elicitation(created.task.task_id, answer)
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert "first={'value': 'Ada'}" in text_of(outcome.result)
    assert "second={'value': 'Lovelace'}" in text_of(outcome.result)
    assert sorted(asked) == ["First name?", "Last name?"]
    updates = [
        m for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tasks/update"
    ]
    assert [len((u.params or {})["inputResponses"]) for u in updates] == [1, 1]


async def test_mrtr_on_a_plain_call_is_answered_by_hand(gen2: Transport) -> None:
    """E C45-C47: input_required is InputRequired; the retry repeats the params and adds
    inputResponses under a new id; no requestState is invented when none came."""
    recorder = RecordingTransport(gen2)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with connect(recorder, router) as client:
        call = ToolCall("ask_plain")
        with pytest.raises(InputRequired) as caught:
            await client.call_tool(call)
        answer = caught.value.answer
        assert answer.request_state is None
        assert set(answer.input_requests or {}) == {"name"}
        result = await client.call_tool(
            call.answering(answer, {"name": ElicitResult(ElicitAction.ACCEPT, {"name": "Ada"})})
        )
    assert text_of(result) == "Hi Ada"
    calls = [m for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tools/call"]
    assert len(calls) == 2
    assert calls[0].id != calls[1].id
    retry = calls[1].params or {}
    assert "requestState" not in retry
    assert retry["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Ada"}}}
    assert retry["name"] == "ask_plain"
    assert retry["arguments"] == {}


async def test_mrtr_echoes_the_request_state_byte_for_byte(gen2: Transport) -> None:
    """E C46: requestState (sealed by this peer) goes back exactly as it came."""
    recorder = RecordingTransport(gen2)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with connect(recorder, router) as client:
        call = ToolCall("ask_with_state")
        with pytest.raises(InputRequired) as caught:
            await client.call_tool(call)
        answer = caught.value.answer
        assert answer.request_state is not None
        result = await client.call_tool(
            call.answering(answer, {"name": ElicitResult(ElicitAction.ACCEPT, {"name": "Ada"})})
        )
    assert text_of(result) == "Hi Ada state=opaque-1"
    calls = [m for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tools/call"]
    assert (calls[1].params or {})["requestState"] == answer.request_state


async def test_a_task_only_tool_called_plainly_is_task_augmentation_required(
    gen2: Transport,
) -> None:
    """E S3, C52: -32021 naming the tasks extension; typed as for 2025-11-25's refusal, with
    the code and ``data.requiredCapabilities`` on the error."""
    async with connect(gen2) as client:
        with pytest.raises(TaskAugmentationRequired) as caught:
            await client.call_tool(ToolCall("failing_job"))
        cause = caught.value.__cause__
        assert isinstance(cause, MissingClientCapability)
        assert cause.code == -32021
        assert TASKS_EXTENSION in cause.extensions
        # ... and on the error itself, as docs/errors.md shows (issue 22, item 12).
        refused = caught.value
        assert refused.code == -32021
        assert refused.data == cause.data
        assert TASKS_EXTENSION in refused.required_capabilities["extensions"]
        assert refused.required_capabilities == cause.required
        assert refused.server_said == cause.message


async def test_generation_1_only_calls_name_the_generation(gen2: Transport) -> None:
    async with connect(gen2) as client:
        created = task_created(
            await client.start(ToolCall("slow_compute", {"seconds": 0}).as_task())
        )
        with pytest.raises(UnsupportedInGeneration) as caught:
            await client.task_result(created.task.task_id)
        assert caught.value.generation == "2026-07-28"
        with pytest.raises(UnsupportedInGeneration):
            await client.list_tasks_page()
        with pytest.raises(UnsupportedInGeneration):
            _ = client.initialize_result


# -- the wire, recorded from the real HTTP traffic -------------------------------------------


class _Wire:
    """Every HTTP request the client sent: headers and the JSON body."""

    def __init__(self) -> None:
        self.requests: list[tuple[httpx.Headers, Any]] = []

    async def hook(self, request: httpx.Request) -> None:
        self.requests.append((request.headers, json.loads(request.content or b"null")))


@pytest.fixture
def wire() -> _Wire:
    return _Wire()


async def test_every_request_carries_the_envelope_and_headers_equal_to_its_body(
    fastmcp4_http_url: str, wire: _Wire
) -> None:
    """E C1-C3, C57-C58: _meta on every request; MCP-Protocol-Version, Mcp-Method, Mcp-Name
    equal to the body; the extension declared on the task call and on tasks/* only."""
    require_peer("fastmcp4")
    http = httpx.AsyncClient(event_hooks={"request": [wire.hook]})
    async with http, connect(HttpTransport(fastmcp4_http_url, http_client=http)) as client:
        await client.discover()
        await client.call_tool(ToolCall("greet", {"name": "Ada"}))
        created = task_created(
            await client.start(ToolCall("slow_compute", {"seconds": 0}).as_task())
        )
        await client.get_task(created.task.task_id)
        await client.cancel_task(created.task.task_id)
    methods = [body["method"] for _, body in wire.requests]
    assert methods == ["server/discover", "tools/call", "tools/call", "tasks/get", "tasks/cancel"]
    for headers, body in wire.requests:
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"] == {"name": INFO.name, "version": "0"}
        assert headers["mcp-protocol-version"] == "2026-07-28"
        assert headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in headers  # E C7
        name = body["params"].get("name", body["params"].get("taskId"))
        if body["method"] == "server/discover":
            assert "mcp-name" not in headers
        else:
            assert decode_header_value(headers["mcp-name"]) == name
        declared = TASKS_EXTENSION in (meta[EXT_META].get("extensions") or {})
        task_call = body["method"] == "tools/call" and body["params"]["name"] == "slow_compute"
        assert declared == (task_call or body["method"].startswith("tasks/")), body["method"]
        assert "task" not in body["params"]  # E S18: no legacy opt-in
        assert "tasks" not in meta[EXT_META]  # E A-24


async def test_a_wrong_mcp_name_is_a_typed_header_mismatch(fastmcp4_http_url: str) -> None:
    """E C51, S20: a forced wrong Mcp-Name gets -32020, typed."""
    require_peer("fastmcp4")

    async def tamper(request: httpx.Request) -> None:
        if request.headers.get("mcp-method") == "tasks/get":
            request.headers["Mcp-Name"] = "someone-else"

    http = httpx.AsyncClient(event_hooks={"request": [tamper]})
    async with http, connect(HttpTransport(fastmcp4_http_url, http_client=http)) as client:
        created = task_created(
            await client.start(ToolCall("slow_compute", {"seconds": 0}).as_task())
        )
        with pytest.raises(HeaderMismatch) as caught:
            await client.get_task(created.task.task_id)
    assert caught.value.code == -32020


async def test_annotated_arguments_travel_as_mcp_param_headers(
    fastmcp4_http_url: str, wire: _Wire
) -> None:
    """E C59-C60: after the caller's tools/list, an x-mcp-header argument is mirrored into
    Mcp-Param-{Name} (sentinel-encoded when not plain ASCII); the server checks it against the
    body, so a call it accepts proves the header equals the body."""
    require_peer("fastmcp4")
    http = httpx.AsyncClient(event_hooks={"request": [wire.hook]})
    async with http, connect(HttpTransport(fastmcp4_http_url, http_client=http)) as client:
        names = [tool.name async for tool in client.list_tools()]
        assert "routed_echo" in names
        result = await client.call_tool(ToolCall("routed_echo", {"region": "zürich", "text": "hi"}))
    assert text_of(result) == "zürich: hi"
    headers, body = wire.requests[-1]
    assert body["method"] == "tools/call"
    assert headers["mcp-param-region"].startswith("=?base64?")
    assert decode_header_value(headers["mcp-param-region"]) == "zürich"


async def test_an_annotated_call_without_the_header_is_a_typed_mismatch(
    fastmcp4_http_url: str,
) -> None:
    """Without the caller's tools/list the client knows no annotation (it never lists on its
    own): the server refuses with -32020, typed, and the caller decides (C51: list, retry)."""
    require_peer("fastmcp4")
    async with connect(HttpTransport(fastmcp4_http_url)) as client:
        with pytest.raises(HeaderMismatch):
            await client.call_tool(ToolCall("routed_echo", {"region": "eu"}))
        _ = [tool async for tool in client.list_tools()]
        result = await client.call_tool(ToolCall("routed_echo", {"region": "eu"}))
    assert text_of(result) == "eu: "


async def test_a_tool_with_an_invalid_annotation_is_left_out_and_reported(gen2: Transport) -> None:
    """E C60: an x-mcp-header on a number is invalid: the tool is dropped from the listing,
    with a typed warning naming it."""
    async with connect(gen2) as client:
        names = [tool.name async for tool in client.list_tools()]
        assert "badly_annotated" not in names
        assert "routed_echo" in names
        reported = [w for w in client.warnings if isinstance(w, InvalidToolAnnotation)]
    assert [w.tool for w in reported] == ["badly_annotated"]
    assert "number" in reported[0].reason or "type" in reported[0].reason


async def test_mrtr_rounds_go_to_the_handlers_given_for_that_call(gen2: Transport) -> None:
    """E C45-C48: with inputs= the call's questions reach that router's default handler, the
    call is retried with the answers and the state, and returns the final result."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    asked: list[tuple[str | None, str]] = []

    async def name(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append((ctx.task_id, ctx.key))
        return ElicitResult(ElicitAction.ACCEPT, {"name": "Grace"})

    router.default_elicitation(name)
    async with connect(gen2, router) as client:
        router.attach(client)
        plain = await client.call_tool(ToolCall("ask_plain"), inputs=router)
        stated = await client.call_tool(ToolCall("ask_with_state"), inputs=router)
    assert text_of(plain) == "Hi Grace"
    assert text_of(stated) == "Hi Grace state=opaque-1"
    assert asked == [(None, "name"), (None, "name")]  # no task: task_id None, the MRTR key


async def test_an_mrtr_question_no_handler_answers_is_the_callers_decision(
    gen2: Transport,
) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))  # no default handler
    async with connect(gen2, router) as client:
        router.attach(client)
        with pytest.raises(InputRequired) as caught:
            await client.call_tool(ToolCall("ask_plain"), inputs=router)
    assert set(caught.value.answer.input_requests or {}) == {"name"}
