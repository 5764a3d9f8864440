"""Progress for tasks against the real peers: mcp 1.30 and the TypeScript SDK 1.32 (2025-11-25)
over stdio and HTTP, fastmcp 4.1.4 (2026-07-28) over both.

The 2025-11-25 peers' ``progress_steps`` tool reads the token the ``tools/call`` carried and,
after its CreateTaskResult, sends ``notifications/progress`` with it for each step (C-46: valid
until the task is terminal), setting the status message too. Those go straight to the session:
over stdio on the one stream, over HTTP on the standalone GET stream, which the caller opens
explicitly (``open_listen_stream()``) and without which the server drops them. fastmcp turns a
task's ``report_progress`` into its status message and sends no progress for tasks (E C43).
"""

from __future__ import annotations

import anyio
import pytest
from conftest import require_peer
from peers.harness import stdio_command
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    StatusMessage,
    StdioTransport,
    TaskProgress,
    ToolCall,
)
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import (
    RELATED_TASK_META,
    CallToolResult,
    Implementation,
    JSONRPCNotification,
    Task,
    TaskStatus,
    TextContent,
)
from mcp_tasks_client.protocol import Violation
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, initial=0.1, jitter=0.0)
STEPS = {"steps": 3, "delay": 0.3}


def text_of(outcome: object) -> str:
    assert isinstance(outcome, Completed), outcome
    result = outcome.result
    assert isinstance(result, CallToolResult)
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


async def listening(client: Client, transport: Transport) -> None:
    """Over HTTP, the stream the server sends a task's progress on (asked for explicitly)."""
    if isinstance(transport, HttpTransport):
        await client.open_listen_stream()


async def test_a_tasks_progress_reaches_its_watcher_with_the_call_token(
    transport: Transport,
) -> None:
    """C-46, V-24: each step's progress, with the token the call carried, is a TaskProgress
    of the task in ``watch()``, increasing; the status messages come with the time they were
    set, and the completed snapshot's "step 3/3" is told as what it is: set while working."""
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        await listening(client, transport)
        call = ToolCall("progress_steps", STEPS).as_task().with_progress_token("p-1")
        created = task_created(await client.start(call))
        task_id = created.task.task_id
        events: list[TaskProgress] = []
        told: list[tuple[Task, StatusMessage | None]] = []
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                async for item in poller.watch(created):
                    if isinstance(item, TaskProgress):
                        events.append(item)
                    elif isinstance(item, Task):
                        told.append((item, poller.status_message(task_id)))
                outcome = await poller.wait(created)
            assert list(poller.warnings) == []
    assert text_of(outcome) == 'progressed 3 steps token="p-1"'
    assert events, "no progress reached the watcher"
    assert all((e.task_id, e.token, e.total) == (task_id, "p-1", 3) for e in events)
    values = [e.progress for e in events]
    assert values == sorted(set(values))  # increasing (a slow watcher may see fewer)
    assert (events[-1].progress, events[-1].message) == (3, "step 3/3")
    last, message = told[-1]
    assert last.status is TaskStatus.COMPLETED
    assert message is not None
    assert (message.text, message.status) == ("step 3/3", TaskStatus.WORKING)
    assert not message.is_current_for(last)
    steps = [m for _, m in told if m is not None]
    assert all(m.status is TaskStatus.WORKING for m in steps)
    assert [m.since for m in steps] == sorted(m.since for m in steps)


async def test_a_wait_callback_sees_every_step_with_an_integer_token(
    transport: Transport,
) -> None:
    """An integer token (C-46), and the related-task ``_meta`` on each notification: the
    wait's callback is called once per notification, in order, and nothing is a warning."""
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        raw: list[JSONRPCNotification] = []
        client.on_notification("notifications/progress", raw.append)
        await listening(client, transport)
        call = ToolCall("progress_steps", {**STEPS, "related": True}).as_task()
        created = task_created(await client.start(call.with_progress_token(41)))
        seen: list[TaskProgress] = []
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created, on_progress=seen.append)
            assert list(poller.warnings) == []
        assert client.progress_stats.delivered == 3
    task_id = created.task.task_id
    assert text_of(outcome) == "progressed 3 steps token=41"
    assert [(p.task_id, p.progress, p.total, p.token) for p in seen] == [
        (task_id, step, 3, 41) for step in (1, 2, 3)
    ]
    assert [(n.params or {})["_meta"][RELATED_TASK_META] for n in raw] == [{"taskId": task_id}] * 3


async def test_over_http_without_the_listen_stream_no_progress_is_invented(
    peer_http: tuple[object, str],
) -> None:
    """The caller did not open the GET stream: the server has nowhere to send the progress
    and drops it. The task completes as ever; no event or warning is made up."""
    _, url = peer_http
    async with Client(HttpTransport(url), generation=Generation.V2025_11_25, client_info=INFO) as c:
        call = ToolCall("progress_steps", STEPS).as_task().with_progress_token("p-2")
        created = task_created(await c.start(call))
        seen: list[TaskProgress] = []
        async with Poller(c, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created, on_progress=seen.append)
            assert list(poller.warnings) == []
        assert c.progress_stats.delivered == 0
    assert text_of(outcome) == 'progressed 3 steps token="p-2"'
    assert seen == []


@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_the_ts_sdks_queued_task_progress_comes_after_the_end(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """The TypeScript SDK's own way for a task (``notification(..., {relatedTask})``) queues
    the progress for the client's ``tasks/result``, which a Poller opens once the task is
    terminal (or needs input, C-21): so it arrives after the end, V-24 says it must stop by
    then, and the client reports each one and delivers none (rather than a late flurry)."""
    peer = require_peer("ts1")
    transport: Transport
    if kind == "http":
        transport = HttpTransport(request.getfixturevalue("ts1_http_url"))
    else:
        transport = StdioTransport(stdio_command(peer))
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        raw: list[JSONRPCNotification] = []
        client.on_notification("notifications/progress", raw.append)
        call = ToolCall("progress_steps", {**STEPS, "queued": True}).as_task()
        created = task_created(await client.start(call.with_progress_token("q-1")))
        seen: list[TaskProgress] = []
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created, on_progress=seen.append)
            late = list(poller.warnings)
        assert client.progress_stats.late == 3
    assert text_of(outcome) == 'progressed 3 steps token="q-1"'
    assert seen == []
    assert [(n.params or {})["progress"] for n in raw] == [1, 2, 3]  # they did come, late
    assert all(isinstance(v, Violation) for v in late)
    assert [(v.task_id, v.rule, v.detail) for v in late if isinstance(v, Violation)] == [
        (created.task.task_id, "V-24", "progress after the task was terminal")
    ] * 3


async def test_a_live_tasks_token_is_refused_until_the_task_ends(transport: Transport) -> None:
    """C-46: the token stays the task's until it is terminal; meanwhile another call with it
    is refused before it is sent, and once the client saw the end it may be used again."""
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        await listening(client, transport)
        call = ToolCall("progress_steps", {"steps": 2, "delay": 0.2}).as_task()
        first = task_created(await client.start(call.with_progress_token("same")))
        with pytest.raises(UsageError, match=f"in use by task {first.task.task_id!r}"):
            await client.start(call.with_progress_token("same"))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                assert "token=" in text_of(await poller.wait(first))
                again = task_created(await client.start(call.with_progress_token("same")))
                seen: list[TaskProgress] = []
                assert "token=" in text_of(await poller.wait(again, on_progress=seen.append))
            assert list(poller.warnings) == []
    assert {p.task_id for p in seen} <= {again.task.task_id}


async def test_2026_tasks_send_no_progress_and_none_is_invented(gen2: Transport) -> None:
    """E C43: progress is not supported on tasks. fastmcp puts a task's reported progress in
    its status message instead; the client shows those with the time they were set, and
    makes up no progress event, though the call carried a token."""
    async with Client(gen2, generation=Generation.V2026_07_28, client_info=INFO) as client:
        call = ToolCall("progress_steps", STEPS).as_task().with_progress_token("p-3")
        started = await client.start(call)
        created = task_created(started)
        items: list[object] = []
        messages: list[StatusMessage] = []
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                async for item in poller.watch(created):
                    items.append(item)
                    message = poller.status_message(created.task.task_id)
                    if isinstance(item, Task) and message is not None:
                        messages.append(message)
                outcome = await poller.wait(created, on_progress=items.append)
            assert list(poller.warnings) == []
        assert client.progress_stats.delivered == 0
    assert text_of(outcome) == "progressed 3 steps"
    assert not [item for item in items if isinstance(item, TaskProgress)]
    texts = [m.text for m in messages]
    assert texts, "no status message was seen"
    assert all(t in ("step 1/3", "step 2/3", "step 3/3") for t in texts)
    for message in messages:  # one time per message, however often it was polled
        assert [m.since for m in messages if m.text == message.text] == [message.since] * len(
            [m for m in messages if m.text == message.text]
        )
