"""A handler sees its task's state in the Poller that tracks it (issue 33, item 2).

Two Pollers share one InputRouter, each tracking its own task. A server request about the task
of the Poller that subscribed first reads that task's snapshot in ``ctx.latest()``; before,
the router read the newest subscriber's tasks, where that task is not. The server is the
scripted memory end of the testing kit (2025-11-25: a server->client elicitation carrying the
related-task ``_meta``, C-21).
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest

from mcp_tasks_client import InputContext, InputRouter, Poller, PollPolicy
from mcp_tasks_client.models import (
    RELATED_TASK_META,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
from mcp_tasks_client.testing import TASK_CALLS, scripted_client
from mcp_tasks_client.transports import MemoryServerEnd

pytestmark = pytest.mark.anyio

SNAPSHOT = {
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:00Z",
    "ttl": None,
    "pollInterval": 600_000,
}


async def test_a_handler_reads_its_task_in_the_poller_that_tracks_it() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    seen: list[tuple[str | None, str | None]] = []

    async def ask_user(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        latest = ctx.latest()
        seen.append((ctx.task_id, None if latest is None else latest.task_id))
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.on_elicitation("t-a", ask_user)
    polled: set[str] = set()
    both_polled = anyio.Event()
    answered = anyio.Event()

    async def serve(server: MemoryServerEnd) -> None:
        with contextlib.suppress(anyio.EndOfStream):
            while True:
                message: dict[str, Any] = await server.receive()
                if message.get("method") == "tasks/get":
                    task_id = message["params"]["taskId"]
                    body = {**SNAPSHOT, "taskId": task_id}
                    await server.send({"jsonrpc": "2.0", "id": message["id"], "result": body})
                    polled.add(task_id)
                    if polled == {"t-a", "t-b"} and not both_polled.is_set():
                        both_polled.set()
                        params = {
                            "message": "ok?",
                            "requestedSchema": {},
                            "_meta": {RELATED_TASK_META: {"taskId": "t-a"}},
                        }
                        ask = {"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create"}
                        await server.send({**ask, "params": params})
                elif message.get("id") == "q1":
                    answered.set()

    policy = PollPolicy(jitter=0.0, initial=0.01)
    async with scripted_client(router, serve, capabilities=TASK_CALLS) as client:
        with anyio.fail_after(10):
            async with (
                Poller(client, policy, inputs=router) as first,
                Poller(client, policy, inputs=router) as second,  # subscribed last
                anyio.create_task_group() as waits,
            ):
                waits.start_soon(first.wait, "t-a")
                waits.start_soon(second.wait, "t-b")
                await answered.wait()
                waits.cancel_scope.cancel()
    assert seen == [("t-a", "t-a")]
