"""No implicit behaviour: one test per rule of explicit control (README: "What you decide").

The library never augments a call, polls, cancels, or sends anything the caller did not ask
for. A scripted in-memory server records every message, so "nothing was sent" is checkable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import Client, Generation, Poller, PollPolicy, ToolCall
from mcp_tasks_client.errors import (
    CapabilityNotNegotiated,
    DeadlineExceeded,
    RequestTimeout,
    TaskAugmentationNotAllowed,
    TaskAugmentationRequired,
    UsageError,
)
from mcp_tasks_client.models import Implementation, TaskSupport, Tool, ToolExecution
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

pytestmark = pytest.mark.anyio

INFO = Implementation("explicit-tests", "0")
NOW = "2026-11-30T12:00:00Z"
TASKS_CAPS: dict[str, Any] = {
    "tools": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}


def task_json(task_id: str, status: str = "working") -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttl": None,
        "pollInterval": 100,
    }


class Recorder:
    """A server that answers what it is asked and remembers every message, in order."""

    def __init__(self, capabilities: dict[str, Any]) -> None:
        self.capabilities = capabilities
        self.messages: list[dict[str, Any]] = []
        self.status = "working"
        self.plain_error: dict[str, Any] | None = None  # the answer to a plain tools/call

    def methods(self) -> list[str]:
        return [m["method"] for m in self.messages if "method" in m]

    async def serve(self, server: MemoryServerEnd) -> None:
        while True:
            try:
                message = await server.receive()
            except anyio.EndOfStream:
                return  # the client closed its end
            self.messages.append(message)
            if "id" not in message or "method" not in message:
                continue
            method, params = message["method"], message.get("params") or {}
            if method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": self.capabilities,
                    "serverInfo": {"name": "recorder", "version": "0"},
                }
            elif method == "tools/call" and "task" in params:
                result = {"task": task_json("t-1")}
            elif method == "tools/call" and self.plain_error is not None:
                error = {"jsonrpc": "2.0", "id": message["id"], "error": self.plain_error}
                await server.send(error)
                continue
            elif method == "tools/call":
                result = {"content": [{"type": "text", "text": "plain"}]}
            elif method == "tasks/get":
                result = task_json(params["taskId"], self.status)
            elif method == "tasks/result":
                continue  # blocks: the task never ends
            elif method == "tasks/cancel":
                result = task_json(params["taskId"], "cancelled")
            else:
                result = {}
            await server.send({"jsonrpc": "2.0", "id": message["id"], "result": result})


async def with_recorder(
    body: Callable[[Client], Awaitable[None]],
    capabilities: dict[str, Any] = TASKS_CAPS,
    plain_error: dict[str, Any] | None = None,
) -> Recorder:
    recorder = Recorder(capabilities)
    recorder.plain_error = plain_error
    transport, server = memory_transport_pair()
    failure: BaseException | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.serve, server)
        try:
            with anyio.fail_after(10):
                async with Client(
                    transport, generation=Generation.V2025_11_25, client_info=INFO
                ) as c:
                    await body(c)
        except Exception as exc:
            failure = exc
        tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return recorder


def tool(name: str, support: TaskSupport | None) -> Tool:
    execution = None if support is None else ToolExecution(support)
    return Tool(name, {"type": "object"}, execution=execution)


async def test_plain_call_is_never_augmented_even_for_an_optional_tool() -> None:
    """T:113-117: only a TaskToolCall (made by as_task) carries params.task."""

    async def body(client: Client) -> None:
        await client.call_tool(ToolCall("opt", {"x": 1}), tool=tool("opt", TaskSupport.OPTIONAL))

    recorder = await with_recorder(body)
    call = next(m for m in recorder.messages if m.get("method") == "tools/call")
    assert call["params"] == {"name": "opt", "arguments": {"x": 1}}


async def test_as_task_sends_exactly_the_ttl_asked_for() -> None:
    """C-18: ttl in whole milliseconds; no ttl means an empty task object."""

    async def body(client: Client) -> None:
        task_created(await client.start(ToolCall("a").as_task(ttl=dt.timedelta(seconds=90))))
        task_created(await client.start(ToolCall("b").as_task()))

    recorder = await with_recorder(body)
    calls = [m["params"] for m in recorder.messages if m.get("method") == "tools/call"]
    assert calls[0]["task"] == {"ttl": 90000}
    assert calls[1]["task"] == {}


async def test_start_without_the_servers_capability_sends_nothing() -> None:
    """C-16: no tasks.requests.tools.call -> CapabilityNotNegotiated before sending."""

    async def body(client: Client) -> None:
        with pytest.raises(CapabilityNotNegotiated) as caught:
            task_created(await client.start(ToolCall("a").as_task()))
        assert caught.value.capability == "tasks.requests.tools.call"

    recorder = await with_recorder(body, capabilities={"tools": {}})
    assert "tools/call" not in recorder.methods()


@pytest.mark.parametrize("support", [None, TaskSupport.FORBIDDEN])
async def test_start_of_a_forbidden_tool_sends_nothing(support: TaskSupport | None) -> None:
    """C-17: taskSupport absent or forbidden -> TaskAugmentationNotAllowed before sending."""

    async def body(client: Client) -> None:
        with pytest.raises(TaskAugmentationNotAllowed):
            task_created(await client.start(ToolCall("f").as_task(), tool=tool("f", support)))

    recorder = await with_recorder(body)
    assert "tools/call" not in recorder.methods()


async def test_plain_call_of_a_required_tool_sends_nothing() -> None:
    """C-17: taskSupport required -> TaskAugmentationRequired before sending."""

    async def body(client: Client) -> None:
        with pytest.raises(TaskAugmentationRequired):
            await client.call_tool(ToolCall("r"), tool=tool("r", TaskSupport.REQUIRED))

    recorder = await with_recorder(body)
    assert "tools/call" not in recorder.methods()


async def test_a_servers_refusal_of_a_plain_call_is_kept_on_the_error() -> None:
    """C-17: a -32601 naming a task is TaskAugmentationRequired, its code and data on it."""
    refusal = {"code": -32601, "message": "Tool 'r' requires task augmentation", "data": {"x": 1}}

    async def body(client: Client) -> None:
        with pytest.raises(TaskAugmentationRequired) as caught:
            await client.call_tool(ToolCall("r"))
        assert caught.value.code == -32601
        assert caught.value.data == {"x": 1}
        assert caught.value.server_said == refusal["message"]
        assert caught.value.required_capabilities == {}  # a -32021's only

    await with_recorder(body, plain_error=refusal)


async def test_cancel_and_list_need_their_capabilities() -> None:
    """C-28: tasks/cancel and tasks/list only if the server declared them."""

    async def body(client: Client) -> None:
        with pytest.raises(CapabilityNotNegotiated):
            await client.cancel_task("t-1")
        with pytest.raises(CapabilityNotNegotiated):
            await client.list_tasks_page()

    caps: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}
    recorder = await with_recorder(body, capabilities=caps)
    assert recorder.methods() == ["initialize", "notifications/initialized"]


async def test_connecting_sends_only_the_handshake() -> None:
    """No tools/list warm-up, no GET stream, nothing but initialize + initialized (L:40-147)."""

    async def body(client: Client) -> None:
        await anyio.sleep(0.2)

    recorder = await with_recorder(body)
    assert recorder.methods() == ["initialize", "notifications/initialized"]


async def test_a_poller_nobody_waits_on_polls_nothing() -> None:
    async def body(client: Client) -> None:
        task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client, PollPolicy(floor=0.01, initial=0.01)):
            await anyio.sleep(0.3)

    recorder = await with_recorder(body)
    assert "tasks/get" not in recorder.methods()


async def test_leaving_a_wait_early_stops_polling_and_cancels_nothing() -> None:
    """Breaking out of as_completed is not abandoning: no tasks/cancel, and polling stops."""

    async def body(client: Client) -> None:
        created = task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client, PollPolicy(floor=0.01, jitter=0.0, cancel_on_abandon=True)) as p:
            with pytest.raises(DeadlineExceeded):
                async for _ in p.as_completed([created], deadline=0.25):
                    pass  # pragma: no cover - the task never ends
            polls = p.polls_sent
            assert polls >= 1
            await anyio.sleep(0.3)
            assert p.polls_sent == polls  # nobody waits: no more polls
            assert p.cancels_sent == 1

    recorder = await with_recorder(body)
    assert recorder.methods().count("tasks/cancel") == 1


async def test_deadline_without_cancel_on_abandon_sends_no_cancel() -> None:
    async def body(client: Client) -> None:
        created = task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client, PollPolicy(floor=0.01, jitter=0.0)) as poller:
            with pytest.raises(DeadlineExceeded) as caught:
                await poller.wait(created, deadline=0.2)
            assert caught.value.cancel_sent == ()

    recorder = await with_recorder(body)
    assert "tasks/cancel" not in recorder.methods()


async def test_cancelling_the_caller_cancels_the_task_only_when_asked() -> None:
    """Abandoning by cancellation (the caller's scope) follows the same policy: one cancel."""

    async def body(client: Client) -> None:
        created = task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client, PollPolicy(floor=0.01, cancel_on_abandon=True)) as poller:
            with anyio.move_on_after(0.2):
                await poller.wait(created)
            with anyio.move_on_after(0.1):
                await poller.wait(created)  # a second abandon of the same task: no second cancel
            assert poller.cancels_sent == 1

    recorder = await with_recorder(body)
    assert recorder.methods().count("tasks/cancel") == 1


async def test_giving_up_on_an_input_required_task_closes_its_tasks_result() -> None:
    """The held tasks/result (C-21) lives only while someone waits on the task."""

    async def body(client: Client) -> None:
        created = task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client, PollPolicy(floor=0.01, jitter=0.0)) as poller:
            with pytest.raises(DeadlineExceeded):
                await poller.wait(created, deadline=0.3)
            await anyio.sleep(0.05)
            assert "tasks/result" not in client._session._connection.pending.values()

    recorder = Recorder(TASKS_CAPS)
    recorder.status = "input_required"
    transport, server = memory_transport_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(recorder.serve, server)
        with anyio.fail_after(10):
            async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
                await body(c)
        tg.cancel_scope.cancel()
    assert recorder.methods().count("tasks/result") == 1


async def test_a_closed_poller_refuses_new_waits() -> None:
    """Nothing hangs: a wait on a poller whose driver is gone is a UsageError at once."""

    async def body(client: Client) -> None:
        created = task_created(await client.start(ToolCall("a").as_task()))
        async with Poller(client) as poller:
            pass
        with pytest.raises(UsageError):
            await poller.wait(created)

    await with_recorder(body)


async def test_a_task_call_that_times_out_is_not_cancelled_with_a_notification() -> None:
    """C-26: task-augmented requests are never cancelled by notifications/cancelled (A-15)."""
    recorder = Recorder(TASKS_CAPS)
    transport, server = memory_transport_pair()

    async def silent(end: MemoryServerEnd) -> None:
        # Answers the handshake, then records and ignores everything.
        init = await end.receive()
        await end.send(
            {
                "jsonrpc": "2.0",
                "id": init["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": TASKS_CAPS,
                    "serverInfo": {"name": "silent", "version": "0"},
                },
            }
        )
        while True:
            try:
                recorder.messages.append(await end.receive())
            except anyio.EndOfStream:
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(silent, server)
        with anyio.fail_after(10):
            async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
                with pytest.raises(RequestTimeout):
                    task_created(await c.start(ToolCall("a").as_task(), timeout=0.1))
                with pytest.raises(RequestTimeout):
                    await c.call_tool(ToolCall("b"), timeout=0.1)
                await anyio.sleep(0.1)
        tg.cancel_scope.cancel()
    cancelled = [m for m in recorder.messages if m.get("method") == "notifications/cancelled"]
    # Only the plain call's timeout sent one (C-13); the task call's did not (C-26).
    assert [m["params"]["requestId"] for m in cancelled] == [3]


async def test_the_wrong_call_type_is_refused_before_anything_is_sent() -> None:
    """A TaskToolCall given to call_tool would have made a real task; a plain call given to
    start says which method to use instead. Nothing reaches the server either way."""

    async def body(client: Client) -> None:
        call = ToolCall("a", {"x": 1})
        with pytest.raises(UsageError, match=r"as_task\(\): pass it to start\(\)"):
            await client.call_tool(call.as_task())  # type: ignore[arg-type]
        with pytest.raises(UsageError, match=r"pass call.as_task\(\)"):
            await client.start(call)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="takes a ToolCall"):
            await client.call_tool("a")  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="takes a TaskToolCall"):
            await client.start({"name": "a"})  # type: ignore[arg-type]

    recorder = await with_recorder(body)
    assert "tools/call" not in recorder.methods()
