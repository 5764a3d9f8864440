"""The task receiver against a scripted server (what a real server may do that the SDK peers
do not): tasks that expire between polls, a flood of task-augmented requests, use after
close. The receiver must stop every body whose task it dropped, and never hang a result."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest

from mcp_tasks_client import InputContext, InputRouter, TaskReceiver
from mcp_tasks_client.models import ElicitationCapability, ElicitRequestParams, ElicitResult
from mcp_tasks_client.testing import scripted_client
from mcp_tasks_client.transports import MemoryServerEnd

pytestmark = pytest.mark.anyio


def _ask(request_id: str, ttl: int) -> dict[str, Any]:
    params = {"message": "ok?", "requestedSchema": {}, "task": {"ttl": ttl}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


def _request(request_id: str, method: str, task_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"taskId": task_id}}


class Bodies:
    """Handlers that never answer, counting how many run and how many were stopped."""

    def __init__(self) -> None:
        self.running = 0
        self.stopped = 0

    async def forever(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        self.running += 1
        try:
            await anyio.sleep_forever()
        finally:
            self.running -= 1
            self.stopped += 1
        raise AssertionError("unreachable")  # pragma: no cover


async def _run(script: Any, router: InputRouter) -> None:
    """``script`` against a client whose receiver runs until the script is done."""
    assert router.receiver is not None
    done = anyio.Event()

    async def serve(server: MemoryServerEnd) -> None:
        await script(server)
        done.set()

    async with scripted_client(router, serve, deadline=15), router.receiver:
        await done.wait()


async def test_a_task_that_expires_between_polls_stops_its_body_and_its_result() -> None:
    """The ttl runs out while tasks/result waits; a tasks/get finds the task gone first: the
    body is stopped and the waiting tasks/result answers -32602 at once, not never."""
    bodies = Bodies()
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
    router.default_elicitation(bodies.forever)
    answers: dict[str, dict[str, Any]] = {}

    async def script(end: MemoryServerEnd) -> None:
        await end.send(_ask("e1", 150))
        created = await end.receive()
        task_id = created["result"]["task"]["taskId"]
        await end.send(_request("r1", "tasks/result", task_id))
        await anyio.sleep(0.3)
        await end.send(_request("g1", "tasks/get", task_id))
        for _ in range(2):
            answer = await end.receive()
            answers[answer["id"]] = answer

    await _run(script, router)
    assert answers["g1"]["error"]["code"] == -32602
    assert answers["r1"]["error"]["code"] == -32602
    assert bodies.running == 0
    assert bodies.stopped == 1


async def test_a_flood_of_short_lived_tasks_keeps_no_body_running() -> None:
    """Fifty requests whose tasks expire at once, max_tasks=5: whatever is refused or
    expires, no body of a dropped task is left running."""
    bodies = Bodies()
    router = InputRouter(
        elicitation=ElicitationCapability(form={}), receiver=TaskReceiver(max_tasks=5)
    )
    router.default_elicitation(bodies.forever)
    replies: list[dict[str, Any]] = []

    async def script(end: MemoryServerEnd) -> None:
        for n in range(50):
            await end.send(_ask(f"e{n}", 1))
            replies.append(await end.receive())
            await anyio.sleep(0.005)
        await anyio.sleep(0.2)

    await _run(script, router)
    assert len(replies) == 50
    assert bodies.running == 0
    assert router.receiver is not None
    assert len(router.receiver.book) == 0


async def test_a_request_after_the_receiver_closed_is_refused_typed() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
    router.default_elicitation(Bodies().forever)
    assert router.receiver is not None
    answers: list[dict[str, Any]] = []
    closed = anyio.Event()

    async def serve(server: MemoryServerEnd) -> None:
        await closed.wait()
        with contextlib.suppress(anyio.EndOfStream):
            await server.send(_ask("e1", 60_000))
            answers.append(await server.receive())

    async with scripted_client(router, serve):
        async with router.receiver:
            pass  # entered and left before the request comes
        closed.set()
        while not answers:
            await anyio.sleep(0.01)
    assert answers[0]["error"]["code"] == -32603
    assert len(router.receiver.book) == 0
