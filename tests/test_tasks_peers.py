"""Explicit tasks against the real 2025-11-25 peers (mcp 1.30, TypeScript SDK 1.32), HTTP and
stdio, on trio and asyncio: start, poll, outcomes, cancel, list, notifications."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Failed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import (
    DeadlineExceeded,
    InvalidParams,
    TaskAugmentationRequired,
    TaskNotCancellable,
    TaskNotFound,
)
from mcp_tasks_client.models import RELATED_TASK_META, Implementation, TaskStatus, TextContent
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


def connect(transport: Transport) -> Client:
    return Client(transport, generation=Generation.V2025_11_25, client_info=INFO)


def text_of(result: object) -> str:
    content = getattr(result, "content", ())
    return " ".join(block.text for block in content if isinstance(block, TextContent))


@pytest.mark.parametrize("tool", ["slow_echo", "need_task"])
async def test_optional_and_required_tools_complete_as_tasks(
    transport: Transport, tool: str
) -> None:
    """V-04..V-08, V-10: CreateTaskResult {task}, polled to completed, result with related-task."""
    async with connect(transport) as client:
        call = ToolCall(tool, {"text": "hi", "seconds": 0.3}).as_task(ttl=dt.timedelta(minutes=1))
        created = task_created(await client.start(call))
        assert created.task.status is TaskStatus.WORKING  # V-05 (A-07: a fast task may differ)
        assert created.task.ttl == 60000
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert outcome.task is not None
    assert outcome.task.status is TaskStatus.COMPLETED
    assert text_of(outcome.result) == "echo (task): hi"
    assert outcome.result.meta is not None
    assert outcome.result.meta[RELATED_TASK_META] == {"taskId": created.task.task_id}


async def test_failing_task_keeps_the_servers_detail(transport: Transport) -> None:
    """V-13, A-14: failed; the statusMessage and whatever tasks/result returned are kept."""
    async with connect(transport) as client:
        created = task_created(await client.start(ToolCall("fail").as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Failed)
    assert outcome.task.status is TaskStatus.FAILED
    # mcp 1.30: statusMessage "boom", tasks/result only _meta; TS 1.32: isError result "boom".
    assert "boom" in (outcome.task.status_message or "") + text_of(outcome.result)
    assert outcome.raw is not None
    assert outcome.raw["_meta"][RELATED_TASK_META] == {"taskId": created.task.task_id}


async def test_cancel_mid_flight(transport: Transport) -> None:
    """C-26, V-15, V-09: tasks/cancel returns the cancelled task; it stays cancelled."""
    async with connect(transport) as client:
        created = task_created(await client.start(ToolCall("slow_echo", {"seconds": 10}).as_task()))
        cancelled = await client.cancel_task(created.task.task_id)
        assert cancelled is not None
        assert cancelled.status is TaskStatus.CANCELLED
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created.task.task_id)  # resume from a bare id
        assert isinstance(outcome, Cancelled)
        assert (await client.get_task(created.task.task_id)).status is TaskStatus.CANCELLED


async def test_cancel_of_a_terminal_task_is_task_not_cancellable(transport: Transport) -> None:
    """T:494, V-14: -32602 for a terminal task, as a typed error."""
    async with connect(transport) as client:
        created = task_created(await client.start(ToolCall("need_task", {"seconds": 0}).as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(10):
                await poller.wait(created)
        with pytest.raises(TaskNotCancellable) as caught:
            await client.cancel_task(created.task.task_id)
        assert caught.value.code == -32602


async def test_unknown_task_id_is_task_not_found(transport: Transport) -> None:
    """V-14: -32602 for an unknown task id, on get and result.

    Only tasks/get reads it as TaskNotFound: on tasks/result a -32602 may also be the tool
    call's own invalid-params error (V-12), so it stays InvalidParams there (issue 7).
    """
    async with connect(transport) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")
        with pytest.raises(InvalidParams) as caught:
            await client.task_result("no-such-task", timeout=5)
        assert not isinstance(caught.value, TaskNotFound)


async def test_tasks_list_follows_pages(transport: Transport) -> None:
    """T:487-490, C-23: every page followed, every task listed (V-19).

    The TS 1.32 peer pages by 10, so 12 tasks take two pages; mcp 1.30 filters its store by
    session and answers one page holding all of them (its lowlevel tasks/list never pages).
    """
    async with connect(transport) as client:
        created = [
            task_created(await client.start(ToolCall("need_task", {"seconds": 0}).as_task()))
            for _ in range(12)
        ]
        pages, cursor = 0, None
        listed: set[str] = set()
        while True:
            page = await client.list_tasks_page(cursor)
            pages += 1
            listed |= {task.task_id for task in page.tasks}
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        via_iterator = {task.task_id async for task in client.list_tasks()}
        server = client.server_info.name
    assert {c.task.task_id for c in created} <= listed
    assert listed == via_iterator
    assert pages == (2 if server == "ts1-tasks-peer" else 1)


async def test_status_notification_wakes_the_waiter_before_its_next_poll(
    transport: Transport,
) -> None:
    """T:477, C-22: the pushed terminal status ends the wait; the first poll (due in 5 s) never
    went out. Over HTTP the notifications come on the GET stream the caller opened."""
    async with connect(transport) as client:
        if isinstance(transport, HttpTransport):
            await client.open_listen_stream()
        created = task_created(
            await client.start(ToolCall("need_task", {"seconds": 0.3}).as_task())
        )
        async with Poller(client, PollPolicy(floor=5.0, jitter=0.0)) as poller:
            with anyio.fail_after(4):
                outcome = await poller.wait(created)
            assert poller.polls_sent == 0
    assert isinstance(outcome, Completed)


async def test_deadline_abandon_cancels_only_when_asked(transport: Transport) -> None:
    """A wait past its deadline raises DeadlineExceeded; tasks/cancel only with the policy."""
    async with connect(transport) as client:
        kept = task_created(await client.start(ToolCall("slow_echo", {"seconds": 10}).as_task()))
        dropped = task_created(await client.start(ToolCall("slow_echo", {"seconds": 10}).as_task()))
        async with Poller(client, FAST) as poller:
            with pytest.raises(DeadlineExceeded) as caught:
                await poller.wait(kept, deadline=0.3)
            assert caught.value.cancel_sent == ()
        assert (await client.get_task(kept.task.task_id)).status is TaskStatus.WORKING
        async with Poller(client, PollPolicy(floor=0.05, cancel_on_abandon=True)) as poller:
            with pytest.raises(DeadlineExceeded) as caught:
                await poller.wait(dropped, deadline=dt.timedelta(seconds=0.3))
            assert caught.value.cancel_sent == (dropped.task.task_id,)
            assert caught.value.task_ids == (dropped.task.task_id,)
        assert (await client.get_task(dropped.task.task_id)).status is TaskStatus.CANCELLED
        await client.cancel_task(kept.task.task_id)


async def test_many_tasks_end_in_order(transport: Transport) -> None:
    """as_completed yields in the order tasks end; wait_any the first; wait_all every one."""
    async with connect(transport) as client:
        slow, fast, mid = [
            task_created(
                await client.start(ToolCall("need_task", {"text": name, "seconds": s}).as_task())
            )
            for name, s in (("slow", 2.0), ("fast", 0.1), ("mid", 1.0))
        ]
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                first_id, first = await poller.wait_any([slow, fast, mid])
                order = [task_id async for task_id, _ in poller.as_completed([slow, mid, fast])]
                every = await poller.wait_all([slow, fast, mid])
    assert first_id == fast.task.task_id
    assert isinstance(first, Completed)
    assert order == [fast.task.task_id, mid.task.task_id, slow.task.task_id]
    assert {text_of(o.result) for o in every.values() if isinstance(o, Completed)} == {
        "echo (task): slow",
        "echo (task): fast",
        "echo (task): mid",
    }


async def test_required_tool_called_plainly_is_task_augmentation_required(
    transport: Transport,
) -> None:
    """C-17: refused before sending when the caller listed the tool; after, from the server's
    isError answer (both SDK peers answer so, not -32601)."""
    async with connect(transport) as client:
        with pytest.raises(TaskAugmentationRequired) as by_server:
            await client.call_tool(ToolCall("need_task", {"seconds": 0}))
        assert by_server.value.server_said is not None
        assert by_server.value.code is None  # an isError result, no JSON-RPC error
        assert by_server.value.required_capabilities == {}
        _ = [tool async for tool in client.list_tools()]
        with pytest.raises(TaskAugmentationRequired) as before_sending:
            await client.call_tool(ToolCall("need_task", {"seconds": 0}))
        assert before_sending.value.server_said is None
        assert before_sending.value.code is None
