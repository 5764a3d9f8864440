"""The task receiver against a scripted server (what a real server may do that the SDK peers
do not): tasks that expire between polls, a flood of task-augmented requests, use after
close. The receiver must stop every body whose task it dropped, and never hang a result."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest

from mcp_tasks_client import InputContext, InputRouter, Limits, TaskReceiver
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
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


class Gate:
    """Handlers that wait for one gate, then accept: the test decides when tasks end."""

    def __init__(self) -> None:
        self.open = anyio.Event()

    async def accept(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        await self.open.wait()
        return ElicitResult(ElicitAction.ACCEPT, {})


async def _create_tasks(end: MemoryServerEnd, count: int) -> list[str]:
    task_ids = []
    for n in range(count):
        await end.send(_ask(f"e{n}", 600_000))
        created = await end.receive()
        task_ids.append(created["result"]["task"]["taskId"])
    return task_ids


async def test_held_results_never_starve_the_other_server_requests() -> None:
    """Issue 21, item 1: forty tasks whose ``tasks/result`` the server holds open. Every one
    is held (none refused), and while they are held the server's ``tasks/get`` for each and a
    new task-augmented request are all answered; the held results come when the tasks end."""
    gate = Gate()
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
    router.default_elicitation(gate.accept)
    while_held: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}

    async def script(end: MemoryServerEnd) -> None:
        task_ids = await _create_tasks(end, 40)
        for n, task_id in enumerate(task_ids):
            await end.send(_request(f"r{n}", "tasks/result", task_id))
        for n, task_id in enumerate(task_ids):
            await end.send(_request(f"g{n}", "tasks/get", task_id))
        await end.send(_ask("late", 600_000))
        while len(while_held) < 41:  # the reader took every result request before these
            answer = await end.receive()
            while_held[answer["id"]] = answer
        gate.open.set()
        for _ in range(40):  # the forty held results
            answer = await end.receive()
            results[answer["id"]] = answer

    await _run(script, router)
    assert sorted(while_held) == sorted([f"g{n}" for n in range(40)] + ["late"])
    assert all("result" in answer for answer in while_held.values()), [
        answer for answer in while_held.values() if "error" in answer
    ]
    assert all(
        answer["result"]["status"] == "working" for n, answer in while_held.items() if n != "late"
    )
    assert sorted(results) == sorted(f"r{n}" for n in range(40))
    assert all(answer["result"]["action"] == "accept" for answer in results.values())


async def test_held_results_past_their_own_bound_are_refused_and_the_rest_still_answered() -> None:
    """``Limits.max_held_server_requests`` bounds the held results alone: the third of three
    held with a bound of 2 is refused -32000 naming the limit, and with two held (and
    ``max_server_requests=1``) a ``tasks/get`` is still answered."""
    gate = Gate()
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
    router.default_elicitation(gate.accept)
    answers: dict[str, dict[str, Any]] = {}
    done = anyio.Event()

    async def script(end: MemoryServerEnd) -> None:
        task_ids = await _create_tasks(end, 3)
        for n, task_id in enumerate(task_ids):
            await end.send(_request(f"r{n}", "tasks/result", task_id))
        await end.send(_request("g0", "tasks/get", task_ids[0]))
        for _ in range(2):
            answer = await end.receive()
            answers[answer["id"]] = answer
        gate.open.set()
        for _ in range(2):
            answer = await end.receive()
            answers[answer["id"]] = answer
        done.set()

    assert router.receiver is not None
    limits = Limits(max_held_server_requests=2, max_server_requests=1)
    async with scripted_client(router, script, limits=limits), router.receiver:
        await done.wait()
    assert answers["r2"]["error"]["code"] == -32000
    assert "Limits.max_held_server_requests=2" in answers["r2"]["error"]["message"]
    assert answers["g0"]["result"]["status"] == "working"
    assert answers["r0"]["result"]["action"] == "accept"
    assert answers["r1"]["result"]["action"] == "accept"


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_max_held_server_requests_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_held_server_requests"):
        Limits(max_held_server_requests=bad)
