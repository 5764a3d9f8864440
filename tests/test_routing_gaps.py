"""Input routing with no gaps (issue 9): handlers bound to a task before its id is known,
a grace period for a request that names a task no handler serves yet, and requests that name
no task, handed to a handler of the caller's with the candidate tasks.

Against the real SDK servers where they do it (immediate_ask over stdio: the elicitation
follows the CreateTaskResult at once), and against a scripted in-memory server for the rest
(what a real server may do, that the polite peers do not).
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest
from conftest import require_peer
from peers.harness import stdio_command
from started import task_created

from mcp_tasks_client import (
    UNTAGGED,
    Client,
    Completed,
    Generation,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    StdioTransport,
    ToolCall,
)
from mcp_tasks_client.models import (
    RELATED_TASK_META,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
)
from mcp_tasks_client.testing import TASK_CALLS, scripted_client
from mcp_tasks_client.transports import MemoryServerEnd

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")


def text_of(result: object) -> str:
    content = getattr(result, "content", ())
    return " ".join(block.text for block in content if isinstance(block, TextContent))


async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True})


@pytest.mark.parametrize("peer", ["mcp1", "ts1"])
@pytest.mark.parametrize("bound", [True, False])
async def test_a_handler_bound_before_the_call_answers_an_immediate_question(
    peer: str, bound: bool
) -> None:
    """The server asks right after creating the task, before start() returns: a handler
    bound with on_created is found; without it the question gets -32601 (as before)."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    asked: list[str | None] = []

    async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(ctx.task_id)
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    transport = StdioTransport(stdio_command(require_peer(peer)))
    async with Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    ) as client:
        router.attach(client)
        on_created = router.binding(elicitation=confirm) if bound else None
        created = task_created(
            await client.start(ToolCall("immediate_ask").as_task(), on_created=on_created)
        )
        async with Poller(client, PollPolicy(floor=0.05, jitter=0.0)) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    if bound:
        assert text_of(outcome.result) == "immediate confirmed=true action=accept"
        assert asked == [created.task.task_id]
    else:
        assert text_of(outcome.result) == "immediate error=-32601"
        assert asked == []


# -- scripted server: a question for a task the caller learns of later ----------------------


def _ask(request_id: str, task_id: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"message": "ok?", "requestedSchema": {}}
    if task_id is not None:
        params["_meta"] = {RELATED_TASK_META: {"taskId": task_id}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


@pytest.mark.parametrize("grace", [None, 5.0])
async def test_a_question_for_a_task_not_known_yet_is_held_for_the_grace_period(
    grace: float | None,
) -> None:
    """Default: -32601 at once (as before). With unknown_task_grace the question waits for
    the caller's handler, registered 0.2 s later, and is answered by it."""
    router = InputRouter(elicitation=ElicitationCapability(form={}), unknown_task_grace=grace)
    answers: list[dict[str, Any]] = []

    async def serve(server: MemoryServerEnd) -> None:
        await server.send(_ask("q1", "t-later"))
        answers.append(await server.receive())

    async with scripted_client(router, serve, capabilities=TASK_CALLS):
        await anyio.sleep(0.2)
        router.on_elicitation("t-later", yes)
        while not answers:
            await anyio.sleep(0.01)
    (answer,) = answers
    if grace is None:
        assert answer["error"]["code"] == -32601
    else:
        assert answer["result"]["action"] == "accept"
        assert answer["result"]["_meta"][RELATED_TASK_META] == {"taskId": "t-later"}


async def test_a_grace_period_ends_and_holds_nothing() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}), unknown_task_grace=0.2)
    answers: list[dict[str, Any]] = []

    async def serve(server: MemoryServerEnd) -> None:
        for n in range(20):  # twenty unknown tasks: nothing of them stays
            await server.send(_ask(f"q{n}", f"t-{n}"))
        for _ in range(20):
            answers.append(await server.receive())

    async with scripted_client(router, serve, capabilities=TASK_CALLS):
        while len(answers) < 20:
            await anyio.sleep(0.01)
    assert {a["error"]["code"] for a in answers} == {-32601}
    assert router.handlers.held_for == frozenset()  # nothing kept for a task no one awaits


async def test_a_question_naming_no_task_goes_to_the_untagged_handler_with_candidates() -> None:
    """A server that leaves out related-task: the library does not guess; the caller's
    UNTAGGED handler sees the tasks being waited on (working or input_required) and picks."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    seen: list[tuple[str | None, list[str]]] = []

    async def untagged(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        seen.append((ctx.task_id, sorted(t.task_id for t in ctx.candidates)))
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    router.on_elicitation(UNTAGGED, untagged)
    answers: list[dict[str, Any]] = []
    snapshot = {
        "status": "input_required",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": None,
        "pollInterval": 600_000,
    }

    async def serve(server: MemoryServerEnd) -> None:
        for _ in range(2):  # the Poller's first polls of its two tasks
            request = await server.receive()
            task_id = request["params"]["taskId"]
            if request["method"] == "tasks/get":
                body = {**snapshot, "taskId": task_id}
                await server.send({"jsonrpc": "2.0", "id": request["id"], "result": body})
        await server.send(_ask("q-untagged", None))
        with contextlib.suppress(anyio.EndOfStream):  # the client closed
            while True:
                message = await server.receive()
                if message.get("id") == "q-untagged":
                    answers.append(message)

    policy = PollPolicy(open_result_on_input_required=False, jitter=0.0)
    async with (
        scripted_client(router, serve, capabilities=TASK_CALLS) as client,
        Poller(client, policy, inputs=router) as poller,
        anyio.create_task_group() as waits,
    ):
        waits.start_soon(poller.wait, "t-a")
        waits.start_soon(poller.wait, "t-b")
        while not answers:
            await anyio.sleep(0.01)
        waits.cancel_scope.cancel()
    assert seen == [(None, ["t-a", "t-b"])]
    assert answers[0]["result"]["action"] == "accept"
    assert "_meta" not in answers[0]["result"]  # no task is claimed for it


async def test_every_question_held_for_a_task_is_answered_once_its_handler_comes() -> None:
    """Two questions for the same unknown task, the first held longer than the second: a
    handler registered after the first's grace ended still serves the second."""
    router = InputRouter(elicitation=ElicitationCapability(form={}), unknown_task_grace=1.0)
    answers: dict[str, dict[str, Any]] = {}

    async def serve(server: MemoryServerEnd) -> None:
        await server.send(_ask("q1", "t-late"))
        await anyio.sleep(0.5)
        await server.send(_ask("q2", "t-late"))
        for _ in range(2):
            answer = await server.receive()
            answers[answer["id"]] = answer

    async with scripted_client(router, serve, capabilities=TASK_CALLS):
        await anyio.sleep(1.2)  # q1's grace is over, q2's is not
        router.on_elicitation("t-late", yes)
        while len(answers) < 2:
            await anyio.sleep(0.01)
    assert answers["q1"]["error"]["code"] == -32601
    assert answers["q2"]["result"]["action"] == "accept"
    assert router.handlers.held_for == frozenset()  # nothing kept for a task no one awaits
