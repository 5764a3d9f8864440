"""A task the Poller reported terminal is never polled again (issue 20), against the real peers:
both generations, on trio and asyncio.

``watch()`` ends with the terminal snapshot; its docstring promises that ``wait(task)`` then
returns the outcome at once. Before the fix, once the task's outcome was in and nobody held it,
the Poller forgot it, and ``wait(created)`` tracked it again from the caller's stale
``working`` CreateTaskResult: one more ``tasks/get``, and the outcome up to one poll interval
late.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.models import CreateTaskResult, Implementation, Task

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)

# generation -> (the tool that ends by itself, its arguments; the tool to cancel, its arguments)
TOOLS: dict[Generation, tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]] = {
    Generation.V2025_11_25: (("need_task", {"seconds": 0.2}), ("slow_echo", {"seconds": 30})),
    Generation.V2026_07_28: (
        ("slow_compute", {"seconds": 0.2, "label": "a"}),
        ("slow_compute", {"seconds": 30, "label": "b"}),
    ),
}


@pytest.fixture(params=["mcp1", "ts1", "fastmcp4"])
def peer(request: pytest.FixtureRequest) -> tuple[Generation, str]:
    """``(generation, url)`` of each real tasks peer over HTTP."""
    name = str(request.param)
    url: str = request.getfixturevalue(f"{name}_http_url")
    generation = Generation.V2026_07_28 if name == "fastmcp4" else Generation.V2025_11_25
    return generation, url


async def _watch_to_the_end(poller: Poller, created: CreateTaskResult) -> Task:
    last: Task | None = None
    async for item in poller.watch(created):
        if isinstance(item, Task):
            last = item
    assert last is not None
    assert last.status.is_terminal
    return last


async def _forgotten(poller: Poller, task_id: str) -> None:
    """Until the poller holds the task no more (its outcome fetched, nobody waiting): the
    moment the old code forgot it."""
    while poller.snapshot(task_id) is not None:
        await anyio.sleep(0.01)


@pytest.mark.parametrize("ending", ["completed", "cancelled"])
async def test_wait_after_watch_sends_no_poll(peer: tuple[Generation, str], ending: str) -> None:
    generation, url = peer
    finishing, cancelling = TOOLS[generation]
    name, arguments = finishing if ending == "completed" else cancelling
    async with Client(HttpTransport(url), generation=generation, client_info=INFO) as client:
        created = task_created(await client.start(ToolCall(name, arguments).as_task()))
        task_id = created.task.task_id
        if ending == "cancelled":
            await client.cancel_task(task_id)
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                last = await _watch_to_the_end(poller, created)
                await _forgotten(poller, task_id)
            polls = poller.polls_sent
            with anyio.fail_after(30):
                outcome = await poller.wait(created)  # the stale "working" reference
                again = await poller.wait(task_id)  # a bare id: no tasks/get either
                (ended,) = [e async for e in poller.as_completed([created])]
                items = [item async for item in poller.watch(created)]
            assert poller.polls_sent == polls, "a task reported terminal was polled again"
    assert type(outcome) is (Completed if ending == "completed" else Cancelled)
    assert again is outcome
    assert ended == (task_id, outcome)
    assert items == [last]  # the terminal snapshot, and the watch ends
