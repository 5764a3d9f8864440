"""input_required on 2025-11-25 against the real peers: questions routed by related-task id.

Both peers' ``confirm`` tool elicits inside its task (mcp 1.30: task.elicit(); TS 1.32:
server.request with relatedTask); the request arrives while the client holds tasks/result open.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from recording import RecordingTransport
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputEvent,
    InputEventKind,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import InputNotHandled
from mcp_tasks_client.models import (
    RELATED_TASK_META,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    SamplingCapability,
    TextContent,
)
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


def text_of(outcome: object) -> str:
    assert isinstance(outcome, Completed), outcome
    return " ".join(b.text for b in outcome.result.content if isinstance(b, TextContent))


def routed_client(transport: Transport, router: InputRouter) -> Client:
    """A client declaring exactly what the router serves."""
    return Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )


def elicitations(recorder: RecordingTransport) -> list[JSONRPCRequest]:
    return [
        item
        for item in recorder.received
        if isinstance(item, JSONRPCRequest) and item.method == "elicitation/create"
    ]


def answers_to(recorder: RecordingTransport, request_id: Any) -> list[Any]:
    return [
        m
        for m in recorder.sent
        if isinstance(m, (JSONRPCResponse, JSONRPCError)) and m.id == request_id
    ]


async def test_two_tasks_needing_input_get_their_own_handlers_answer(
    transport: Transport,
) -> None:
    """T:470, V-21, C-25: each request reaches its task's handler; answers echo related-task."""
    recorder = RecordingTransport(transport)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = routed_client(recorder, router)
    async with client:
        router.attach(client)
        keep = task_created(await client.start(ToolCall("confirm", {"text": "keep A"}).as_task()))
        drop = task_created(await client.start(ToolCall("confirm", {"text": "drop B"}).as_task()))
        asked: dict[str, list[str]] = {"keep": [], "drop": []}

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestFormParams)
            assert ctx.task_id == keep.task.task_id
            latest = ctx.latest()  # the Poller's latest snapshot of this task, no request
            assert latest is not None
            assert latest.task_id == keep.task.task_id
            asked["keep"].append(params.message)
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

        async def decline(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert ctx.task_id == drop.task.task_id
            asked["drop"].append(params.message)
            return ElicitResult(ElicitAction.DECLINE)

        router.on_elicitation(keep.task.task_id, accept)
        router.on_elicitation(drop.task.task_id, decline)
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcomes = await poller.wait_all([keep, drop])
    assert asked == {"keep": ["Confirm: keep A?"], "drop": ["Confirm: drop B?"]}
    assert text_of(outcomes[keep.task.task_id]).lower() == "confirmed=true action=accept"
    assert text_of(outcomes[drop.task.task_id]).lower() == "confirmed=false action=decline"
    requests = elicitations(recorder)
    assert len(requests) == 2
    for request in requests:
        related = (request.params or {})["_meta"][RELATED_TASK_META]
        (answer,) = answers_to(recorder, request.id)  # exactly one answer each
        assert isinstance(answer, JSONRPCResponse)
        assert answer.result["_meta"][RELATED_TASK_META] == related  # C-25


async def test_a_question_is_the_trackers_open_question_until_it_is_answered(
    transport: Transport,
) -> None:
    """T:431-450 (issue 33): the server's request by related-task is a Tracker event: while
    its handler runs, the Poller's Tracker has it as the task's open question, and once the
    router answered it (its ANSWERED event), no more; the wire is the router's, one answer."""
    recorder = RecordingTransport(transport)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = routed_client(recorder, router)
    running: list[Poller] = []
    seen: list[dict[str, str]] = []
    after: list[dict[str, str]] = []
    async with client:
        router.attach(client)
        created = task_created(await client.start(ToolCall("confirm", {"text": "q"}).as_task()))
        task_id = created.task.task_id

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            seen.append(running[0]._tracker.open_questions(task_id))
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

        router.on_elicitation(task_id, accept)
        async with Poller(client, FAST, inputs=router) as poller:
            running.append(poller)
            with anyio.fail_after(30):
                async for item in poller.watch(created, deadline=30):
                    if isinstance(item, InputEvent) and item.kind is InputEventKind.ANSWERED:
                        after.append(poller._tracker.open_questions(task_id))
    (request,) = elicitations(recorder)
    assert seen == [{str(request.id): "elicitation/create"}]
    assert len(after) == 1
    assert str(request.id) not in after[0]
    (answer,) = answers_to(recorder, request.id)
    assert isinstance(answer, JSONRPCResponse)


async def test_input_without_a_handler_fails_the_wait_and_the_server_gets_an_error(
    transport: Transport,
) -> None:
    """No implicit answers: -32601 to the server, InputNotHandled to the caller, in time."""
    recorder = RecordingTransport(transport)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = routed_client(recorder, router)
    events: list[InputEvent] = []
    async with client:
        router.attach(client)
        created = task_created(
            await client.start(ToolCall("confirm", {"text": "nobody"}).as_task())
        )
        async with Poller(client, FAST, inputs=router) as poller:
            with pytest.raises(InputNotHandled) as caught:
                async for item in poller.watch(created, deadline=20):
                    if isinstance(item, InputEvent):
                        events.append(item)
    assert caught.value.task_id == created.task.task_id
    assert caught.value.method == "elicitation/create"
    assert [e.kind for e in events] == [InputEventKind.ARRIVED, InputEventKind.UNHANDLED]
    (request,) = elicitations(recorder)
    (answer,) = answers_to(recorder, request.id)
    assert isinstance(answer, JSONRPCError)
    assert answer.error.code == -32601
    assert "no handler registered" in answer.error.message


async def test_sampling_and_elicitation_of_two_tasks_at_once(transport: Transport) -> None:
    """S, T:447: one task samples the client's model while another elicits; each request goes
    to its own task's handler, and both tasks complete with what was answered."""
    router = InputRouter(elicitation=ElicitationCapability(form={}), sampling=SamplingCapability())
    client = routed_client(transport, router)
    async with client:
        router.attach(client)
        asks = task_created(await client.start(ToolCall("confirm", {"text": "ship it"}).as_task()))
        samples = task_created(
            await client.start(ToolCall("summarize", {"text": "a long text"}).as_task())
        )
        prompts: list[str] = []

        async def model(
            ctx: InputContext, params: CreateMessageRequestParams
        ) -> CreateMessageResult:
            assert ctx.task_id == samples.task.task_id
            (message,) = params.messages
            assert isinstance(message.content, TextContent)
            prompts.append(message.content.text)
            return CreateMessageResult("assistant", TextContent("short"), "test-model")

        async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert ctx.task_id == asks.task.task_id
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

        router.on_sampling(samples.task.task_id, model).on_elicitation(asks.task.task_id, confirm)
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcomes = await poller.wait_all([asks, samples])
    assert prompts == ["a long text"]
    assert text_of(outcomes[samples.task.task_id]) == "model test-model said: short"
    assert text_of(outcomes[asks.task.task_id]).lower() == "confirmed=true action=accept"


class _DropAfterElicitation(httpx.AsyncByteStream):
    """A real response stream that breaks right after it delivered an elicitation."""

    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = b""
        async for chunk in self.inner:
            yield chunk
            seen += chunk
            at = seen.find(b"elicitation/create")
            rest = seen[at:] if at >= 0 else b""
            if b"\n\n" in rest or b"\r\n\r\n" in rest:  # the event is complete
                raise httpx.ReadError("stream dropped by the test")

    async def aclose(self) -> None:
        await self.inner.aclose()


class _DroppingTransport(httpx.AsyncBaseTransport):
    """Real HTTP to the real peer; the first tasks/result stream is cut mid-input."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.dropped = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and b'"tasks/result"' in request.content and not self.dropped:
            self.dropped += 1
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = _DropAfterElicitation(response.stream)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_dropped_tasks_result_stream_mid_input_still_completes_with_one_answer(
    peer_http: tuple[object, str],
) -> None:
    """The tasks/result stream breaks after delivering the elicitation; the answer still goes
    out once, the task completes, and its result comes from a re-issued tasks/result."""
    dropping = _DroppingTransport()
    http = HttpTransport(peer_http[1], http_client=httpx.AsyncClient(transport=dropping))
    recorder = RecordingTransport(http)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = routed_client(recorder, router)
    async with client:
        router.attach(client)
        created = task_created(
            await client.start(ToolCall("confirm", {"text": "survive"}).as_task())
        )

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

        router.on_elicitation(created.task.task_id, accept)
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert dropping.dropped == 1
    assert text_of(outcome).lower() == "confirmed=true action=accept"
    (request,) = elicitations(recorder)
    assert len(answers_to(recorder, request.id)) == 1
    results = [
        m for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tasks/result"
    ]
    assert len(results) >= 2  # the dropped one, then the one that fetched the result
