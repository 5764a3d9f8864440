"""What an InputRouter knows of a Poller's tasks comes in as arguments (issue 20), not as
callables a Poller assigns into the router's attributes.

A Poller passes the tasks it tracks to ``InputRouter.subscribe(listener, tasks=...)`` and takes
them back when it unsubscribes (leaving its ``async with``): a question naming no task, asked
while the Poller runs, shows its tasks in ``ctx.candidates``; asked after, none (the router
holds no reference to a Poller that left). ``InputRouter.book`` cannot be replaced.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest

from mcp_tasks_client import UNTAGGED, InputContext, InputRouter, Poller, PollPolicy
from mcp_tasks_client._sansio.answer_book import InputBook
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Task,
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


def _ask(request_id: str) -> dict[str, Any]:
    params = {"message": "ok?", "requestedSchema": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


def test_the_book_is_the_routers_own() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    book = router.book
    with pytest.raises(AttributeError):
        router.book = InputBook()  # type: ignore[misc]
    assert router.book is book


async def test_the_router_reads_a_pollers_tasks_only_while_it_runs() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    seen: list[tuple[list[str], Task | None]] = []

    async def untagged(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        seen.append((sorted(t.task_id for t in ctx.candidates), ctx.latest()))
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.on_elicitation(UNTAGGED, untagged)
    answered: list[str] = []
    ask = {"during": anyio.Event(), "after": anyio.Event()}

    async def serve(server: MemoryServerEnd) -> None:
        request = await server.receive()  # the Poller's first poll of t-a
        body = {**SNAPSHOT, "taskId": request["params"]["taskId"]}
        await server.send({"jsonrpc": "2.0", "id": request["id"], "result": body})
        with contextlib.suppress(anyio.EndOfStream):
            for name in ("during", "after"):
                await ask[name].wait()
                await server.send(_ask(name))
                while (await server.receive()).get("id") != name:
                    pass  # the Poller's other requests: unanswered, they do not matter here
                answered.append(name)

    policy = PollPolicy(jitter=0.0)
    async with scripted_client(router, serve, capabilities=TASK_CALLS) as client:
        async with (
            Poller(client, policy, inputs=router) as poller,
            anyio.create_task_group() as waits,
        ):
            waits.start_soon(poller.wait, "t-a")
            while poller.snapshot("t-a") is None:
                await anyio.sleep(0.01)
            ask["during"].set()
            while answered != ["during"]:
                await anyio.sleep(0.01)
            waits.cancel_scope.cancel()
        ask["after"].set()  # the Poller has left: its tasks are no longer the router's to read
        while answered != ["during", "after"]:
            await anyio.sleep(0.01)
    assert seen == [(["t-a"], None), ([], None)]
