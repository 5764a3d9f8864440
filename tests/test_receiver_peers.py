"""The client as a task receiver (2025-11-25, C-31..C-45) against the real SDK servers: mcp
1.30 and the TypeScript SDK 1.32 send task-augmented elicitation and sampling to the client,
poll its tasks/get, fetch tasks/result, list and cancel; over HTTP and stdio, trio and asyncio.
The peer tools report what they saw as text (tests/peers/*: ask_as_task, sample_as_task,
list_then_cancel, ask_short_ttl)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable

import anyio
import pytest
from recording import RecordingTransport

from mcp_tasks_client import (
    Client,
    Generation,
    InputContext,
    InputEventKind,
    InputRouter,
    TaskReceiver,
    ToolCall,
)
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import (
    ClientCapabilities,
    ClientTasksCapability,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCNotification,
    SamplingCapability,
    Task,
    TextContent,
)
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = dt.timedelta(milliseconds=50)


def text_of(result: object) -> str:
    content = getattr(result, "content", ())
    return " ".join(block.text for block in content if isinstance(block, TextContent))


def receiving_router(**kw: object) -> InputRouter:
    return InputRouter(
        elicitation=ElicitationCapability(form={}),
        sampling=SamplingCapability(),
        receiver=TaskReceiver(poll_interval=FAST, **kw),  # type: ignore[arg-type]
    )


def client_for(transport: Transport, router: InputRouter) -> Client:
    return Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )


async def test_a_task_augmented_elicitation_runs_as_a_task_of_the_client(
    transport: Transport,
) -> None:
    """C-31, C-36, C-38: CreateTaskResult at once, the handler as its body, the server's
    polls answered, tasks/result the handler's answer."""
    router = receiving_router()
    seen: list[str | None] = []

    async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        seen.append(ctx.receiving.task_id if ctx.receiving else None)
        await anyio.sleep(0.2)  # the server polls meanwhile
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    router.default_elicitation(confirm)
    events: list[InputEventKind] = []
    router.subscribe(lambda event: events.append(event.kind))
    assert router.receiver is not None
    async with client_for(transport, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(ToolCall("ask_as_task", {"text": "go"}))
    assert text_of(result) == 'status=completed result={"action":"accept","content":{"ok":true}}'
    assert len(seen) == 1
    assert seen[0] is not None
    # Answered when the handler is done, not when the CreateTaskResult went out.
    assert events == [
        InputEventKind.ARRIVED,
        InputEventKind.ACCEPTED_AS_TASK,
        InputEventKind.ANSWERED,
    ]


async def test_task_augmented_sampling_runs_as_a_task(transport: Transport) -> None:
    router = receiving_router()

    async def model(ctx: InputContext, params: CreateMessageRequestParams) -> CreateMessageResult:
        assert ctx.receiving is not None
        return CreateMessageResult("assistant", TextContent("short"), "test-model")

    router.default_sampling(model)
    assert router.receiver is not None
    async with client_for(transport, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(ToolCall("sample_as_task", {"text": "hi"}))
    assert text_of(result) == (
        'status=completed result={"content":{"text":"short","type":"text"},'
        '"model":"test-model","role":"assistant"}'
    )


async def test_a_handler_that_raises_is_a_failed_task(transport: Transport) -> None:
    """The exception ends the task failed; tasks/result answers the error (C-38, C-43)."""
    router = receiving_router()

    async def broken(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        raise RuntimeError("no screen")

    router.default_elicitation(broken)
    events: list[InputEventKind] = []
    router.subscribe(lambda event: events.append(event.kind))
    assert router.receiver is not None
    async with client_for(transport, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(ToolCall("ask_as_task", {"text": "go"}))
    assert text_of(result) == (
        "status=failed error=-32603 client handler failed: RuntimeError: no screen"
    )
    assert events == [
        InputEventKind.ARRIVED,
        InputEventKind.ACCEPTED_AS_TASK,
        InputEventKind.HANDLER_FAILED,
    ]


async def _with_a_handler_that_never_answers(
    transport: Transport, call: ToolCall
) -> tuple[str, int]:
    """Run ``call`` while every elicitation's handler waits forever; the tool's text once the
    handler was stopped (by the server's cancel, or by the task's expiry), and how many tasks
    the receiver still holds."""
    router = receiving_router()
    stopped = anyio.Event()

    async def forever(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")  # pragma: no cover

    router.default_elicitation(forever)
    assert router.receiver is not None
    async with client_for(transport, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(call)
            await stopped.wait()
        held = len(router.receiver.book)
    return text_of(result), held


async def test_the_server_lists_and_cancels_a_running_task(transport: Transport) -> None:
    """C-40, C-41: listed while running; cancel stops the body and says cancelled; a second
    cancel of the now terminal task is -32602."""
    said, held = await _with_a_handler_that_never_answers(
        transport, ToolCall("list_then_cancel", {"text": "x"})
    )
    assert said == "listed=true cancel=cancelled after=cancelled again=-32602"
    assert held == 1  # cancelled, kept until its ttl


async def test_a_task_past_its_ttl_is_gone(transport: Transport) -> None:
    """C-37, T:459: the receiver drops a task after its ttl (its body stopped): -32602."""
    said, held = await _with_a_handler_that_never_answers(
        transport, ToolCall("ask_short_ttl", {"ttl": 300})
    )
    assert said == "gone=true code=-32602"
    assert held == 0


async def test_without_a_receiver_the_request_is_answered_as_it_is(transport: Transport) -> None:
    """C-32: the client did not declare task-augmented elicitation, so it ignores `task`."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        assert ctx.receiving is None
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    router.default_elicitation(confirm)
    async with client_for(transport, router) as client:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(ToolCall("ask_as_task", {"text": "go"}))
    assert text_of(result) == "client executed synchronously"


async def test_status_notifications_go_out_only_when_enabled(transport: Transport) -> None:
    """C-44: notifications/tasks/status on every change when the caller asked for them."""
    router = receiving_router(notify_status=True)
    recorder = RecordingTransport(transport)

    async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        assert ctx.receiving is not None
        async with ctx.receiving.needs_input("asking the user"):
            await anyio.sleep(0.1)
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    router.default_elicitation(confirm)
    assert router.receiver is not None
    async with client_for(recorder, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            await client.call_tool(ToolCall("ask_as_task", {"text": "go"}))
    statuses = [
        (m.params or {}).get("status")
        for m in recorder.sent
        if isinstance(m, JSONRPCNotification) and m.method == "notifications/tasks/status"
    ]
    assert statuses == ["input_required", "working", "completed"]


def test_declaring_task_capabilities_without_a_receiver_is_refused() -> None:
    """Today's silent synchronous answer to a declared task capability is a UsageError."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    declared = ClientCapabilities(
        elicitation=ElicitationCapability(form={}),
        tasks=ClientTasksCapability(elicitation_create=True),
    )
    from mcp_tasks_client.transports import memory_transport_pair

    transport, _server = memory_transport_pair()
    client = Client(
        transport, generation=Generation.V2025_11_25, client_info=INFO, capabilities=declared
    )
    with pytest.raises(UsageError, match="receiver"):
        router.attach(client)


def test_a_receiver_declares_tasks_only_for_the_kinds_served() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
    declared = router.capabilities().tasks
    assert declared is not None
    assert declared.elicitation_create
    assert not declared.sampling_create_message
    assert declared.list
    assert declared.cancel
    assert InputRouter(elicitation=ElicitationCapability(form={})).capabilities().tasks is None


async def test_a_store_of_the_callers_own_is_used(transport: Transport) -> None:
    """The store is pluggable: a caller's store (here the in-memory one, wrapped to count)
    holds the received task."""
    from mcp_tasks_client.protocol import ReceiverBook

    created: list[str] = []

    class Counting(ReceiverBook):
        def create(
            self,
            owner: Hashable,
            method: str,
            requested_ttl_ms: int | None,
            *,
            now: float,
            wall: dt.datetime,
        ) -> Task:
            task = super().create(owner, method, requested_ttl_ms, now=now, wall=wall)
            created.append(task.task_id)
            return task

    store = Counting(default_ttl_ms=60_000, max_ttl_ms=None, poll_interval_ms=50, capacity=10)
    router = InputRouter(
        elicitation=ElicitationCapability(form={}), receiver=TaskReceiver(store=store)
    )
    router.default_elicitation(lambda ctx, params: _accept())
    assert router.receiver is not None
    async with client_for(transport, router) as client, router.receiver:
        router.attach(client)
        with anyio.fail_after(30):
            result = await client.call_tool(ToolCall("ask_as_task", {"text": "go"}))
    assert text_of(result).startswith("status=completed")
    assert len(created) == 1


async def _accept() -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True})
