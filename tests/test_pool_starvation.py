"""Held requests have connections of their own (issue 12's pool gap, now closed). Over HTTP,
2025-11-25 questions come on the stream of a blocking ``tasks/result``, so the Poller holds one
open per task that waits for input (C-21). Those held calls go through the transport's held
pool (``max_held_connections``), never the one polls use: with more tasks waiting for answers
than the request pool has connections, a task that completed is still seen; past the held
pool's size, the next held call waits for a held connection and gets it once one ends."""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
import pytest

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    LeanHttpTransport,
    Poller,
    PollPolicy,
    TaskRef,
    ToolCall,
)
from mcp_tasks_client._io._h1_engine import LeanEngine
from mcp_tasks_client._io._httpx_engine import HttpxEngine
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.testing import FaultServer

pytestmark = pytest.mark.anyio

G1 = Generation.V2025_11_25
INFO = Implementation("pool-starvation", "0")
POLICY = PollPolicy(floor=0.05, initial=0.05, jitter=0.0)

Make = Callable[..., HttpTransport]
TRANSPORTS = [
    pytest.param(functools.partial(HttpTransport, engine="httpx"), id="httpx"),
    pytest.param(LeanHttpTransport, id="lean"),
]


def held_calls(server: FaultServer) -> int:
    return sum(m.get("method") == "tasks/result" for m in server.received)


def gets(server: FaultServer) -> int:
    return sum(m.get("method") == "tasks/get" for m in server.received)


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_a_completed_task_is_seen_while_more_tasks_than_the_pool_wait_for_input(
    make: Make,
) -> None:
    """70 tasks wait for answers nobody gives (70 held tasks/result, more than the 64
    connections of HttpTransport's request pool and the 16 of the lean one's): a plain task
    still completes and is seen, its tasks/result going through the held pool too."""
    server = FaultServer(G1)
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def unanswered(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    router.default_elicitation(unanswered)
    with anyio.fail_after(60):
        async with server.http() as http:
            transport = make(http.url)  # the default pools
            async with Client(
                transport, generation=G1, client_info=INFO, capabilities=router.capabilities()
            ) as client:
                router.attach(client)
                asking = [await client.start(ToolCall("ask", {}).as_task()) for _ in range(70)]
                plain = await client.start(ToolCall("echo", {"text": "x"}).as_task())
                async with (
                    Poller(client, POLICY, inputs=router) as poller,
                    anyio.create_task_group() as group,
                ):
                    for ref in asking:
                        group.start_soon(poller.wait, ref)
                    while held_calls(server) < 64:  # held calls past the request pool's size
                        await anyio.sleep(0.05)
                    got = await poller.wait(plain, deadline=20)
                    group.cancel_scope.cancel()
    assert isinstance(got, Completed)


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_held_calls_past_the_held_pool_wait_for_a_held_connection(make: Make) -> None:
    """``max_held_connections=2``, five tasks asking: two tasks/result reach the server, the
    other three wait for a held connection (polls go on meanwhile); once the questions are
    answered, every held call ends in turn, and all five tasks complete."""
    server = FaultServer(G1)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    release = anyio.Event()

    async def answer_later(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        await release.wait()
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    router.default_elicitation(answer_later)
    with anyio.fail_after(60):
        async with server.http() as http:
            transport = make(http.url, max_held_connections=2)
            async with Client(
                transport, generation=G1, client_info=INFO, capabilities=router.capabilities()
            ) as client:
                router.attach(client)
                asking = [await client.start(ToolCall("ask", {}).as_task()) for _ in range(5)]
                outcomes: list[object] = []
                async with (
                    Poller(client, POLICY, inputs=router) as poller,
                    anyio.create_task_group() as group,
                ):

                    async def wait(ref: TaskRef) -> None:
                        outcomes.append(await poller.wait(ref, deadline=40))

                    for ref in asking:
                        assert isinstance(ref, CreateTaskResult)
                        group.start_soon(wait, ref)
                    while held_calls(server) < 2:
                        await anyio.sleep(0.05)
                    polls = gets(server)
                    while gets(server) < polls + 10:  # polls go on while held calls wait
                        await anyio.sleep(0.05)
                    assert held_calls(server) == 2  # the other three wait for a connection
                    release.set()
    assert len(outcomes) == 5
    assert all(isinstance(outcome, Completed) for outcome in outcomes)
    assert held_calls(server) == 5


@pytest.mark.parametrize("make", TRANSPORTS)
def test_a_held_pool_of_no_connections_is_a_usage_error(make: Make) -> None:
    with pytest.raises(UsageError, match="max_held_connections"):
        make("http://127.0.0.1:9/mcp", max_held_connections=0)


async def test_the_outcome_of_a_task_seen_terminal_takes_no_held_connection() -> None:
    """A Poller fetching the result of a task it saw completed knows the call answers at once:
    it goes through the request pool (a 200-task burst opens no held connection per result);
    a caller's own tasks/result of a task not known to be terminal is held."""
    server = FaultServer(G1)
    async with server.http() as http:
        lean = LeanHttpTransport(http.url)
        plain = HttpTransport(http.url, engine="httpx")
        assert isinstance(lean._engine, LeanEngine)
        assert isinstance(plain._engine, HttpxEngine)
        for transport in (lean, plain):
            with anyio.fail_after(30):
                async with Client(transport, generation=G1, client_info=INFO) as client:
                    ref = await client.start(ToolCall("echo", {"text": "x"}).as_task())
                    assert isinstance(ref, CreateTaskResult)
                    async with Poller(client, POLICY) as poller:
                        assert isinstance(await poller.wait(ref), Completed)
                    if transport is lean:
                        assert lean._engine.held_conns.open == 0
                        assert not lean._engine.held_conns.idle
                    else:
                        assert plain._engine.held_client is None  # never made
                    opened = lean._engine.connections_opened
                    await client.task_result(ref.task.task_id)  # done, but the caller's call
                    if transport is lean:  # a held connection of its own
                        assert lean._engine.connections_opened == opened + 1
                    else:
                        assert plain._engine.held_client is not None
