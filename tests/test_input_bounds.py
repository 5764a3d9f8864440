"""Bounds on the input a server asks for (issue 21, items 2, 3 and 10): an MRTR round carrying
more input requests than ``Limits.max_inputs_per_round``, a task asking more than
``Limits.max_inputs_per_task`` keys, and keys that must never be answered twice however many
there are. A scripted 2026-07-28 server on 127.0.0.1 (``HostileHTTPServer``); both loops."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Limits,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import LimitExceeded
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
NOW = "2026-08-01T00:00:00Z"
FAST = PollPolicy(floor=0.01, initial=0.01, jitter=0.0)
ASK = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}
DONE = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


def task(task_id: str, status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttlMs": 60000,
        "pollIntervalMs": 10,
        **extra,
    }


def router_answering(calls: list[str]) -> InputRouter:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        calls.append(ctx.key)
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(yes)
    return router


@asynccontextmanager
async def connected(
    server: HostileHTTPServer, router: InputRouter, limits: Limits
) -> AsyncIterator[Client]:
    async with Client(
        HttpTransport(server.url),
        generation=Generation.V2026_07_28,
        client_info=INFO,
        capabilities=router.capabilities(),
        limits=limits,
    ) as client:
        router.attach(client)
        yield client


# -- item 3: the input requests of one MRTR round --------------------------------------------


async def test_an_mrtr_round_past_its_limit_fails_before_any_handler_runs() -> None:
    """One ``input_required`` answer carrying more input requests than
    ``Limits.max_inputs_per_round``: LimitExceeded naming it, no handler called, no retry."""
    calls_made: list[str] = []

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            calls_made.append("tools/call")
            asking = {f"k{i}": ASK for i in range(6)}
            await conn.result(request, {"resultType": "input_required", "inputRequests": asking})

    calls: list[str] = []
    router = router_answering(calls)
    limits = Limits(max_inputs_per_round=5)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        with anyio.fail_after(20), pytest.raises(LimitExceeded) as raised:
            await client.call_tool(ToolCall("x"), inputs=router)
    assert raised.value.limit == "max_inputs_per_round"
    assert raised.value.maximum == 5
    assert calls == []
    assert calls_made == ["tools/call"]  # no retry carrying answers


async def test_an_mrtr_round_at_its_limit_is_answered() -> None:
    """Exactly ``max_inputs_per_round`` requests: every one answered, then the retry."""

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            if "inputResponses" in request.params:
                await conn.result(request, DONE)
                return
            asking = {f"k{i}": ASK for i in range(5)}
            await conn.result(request, {"resultType": "input_required", "inputRequests": asking})

    calls: list[str] = []
    router = router_answering(calls)
    limits = Limits(max_inputs_per_round=5)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        with anyio.fail_after(20):
            result = await client.call_tool(ToolCall("x"), inputs=router)
    assert sorted(calls) == [f"k{i}" for i in range(5)]
    assert "done" in str(result.content)


# -- item 2: a tracked task's keys are never forgotten; a bound fails the task -------------


def _asking_until_answered(keys: list[str], updates: list[str]) -> Any:
    """A task whose snapshots show every key not yet answered (each answer seen at once),
    completed when all are; ``updates`` gets every key each ``tasks/update`` carried."""

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            updates.extend(request.params.get("inputResponses", {}))
            await conn.result(request, {"resultType": "complete"})
        elif method == "tasks/get":
            left = {key: ASK for key in keys if key not in updates}
            if not left:
                await conn.result(request, {**task("t-1", "completed"), "result": DONE})
                return
            body = {**task("t-1", "input_required"), "inputRequests": left}
            await conn.result(request, {"resultType": "complete", **body})

    return serve


async def test_a_tracked_tasks_keys_past_the_answered_memory_are_answered_once() -> None:
    """More keys than ``Limits.max_answered_inputs`` in one task (the issue: 12,000 past
    10,000, scaled down): before, the oldest answered keys were forgotten and a snapshot still
    showing them (an eventually consistent server) had them answered again. Each key is shown
    to the handler once and sent once."""
    keys = [f"k{i:02d}" for i in range(12)]
    updates: list[str] = []
    calls: list[str] = []
    router = router_answering(calls)
    limits = Limits(max_answered_inputs=5)
    serve = _slow_to_forget(keys, updates)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert sorted(calls) == keys
    assert sorted(updates) == keys


def _slow_to_forget(keys: list[str], updates: list[str]) -> Any:
    """Like :func:`_asking_until_answered`, but eventually consistent: a snapshot keeps
    showing every key until all have been answered, then three more times, then completes."""
    after = [0]

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            updates.extend(request.params.get("inputResponses", {}))
            await conn.result(request, {"resultType": "complete"})
        elif method == "tasks/get":
            if set(keys) <= set(updates):
                after[0] += 1
                if after[0] > 3:
                    await conn.result(request, {**task("t-1", "completed"), "result": DONE})
                    return
            body = {**task("t-1", "input_required"), "inputRequests": dict.fromkeys(keys, ASK)}
            await conn.result(request, {"resultType": "complete", **body})

    return serve


async def test_a_task_asking_past_max_inputs_per_task_fails_with_limit_exceeded() -> None:
    """A bound fails the task with a typed error naming it; it never forgets. None of the
    snapshot's keys is taken (no handler runs, nothing is sent)."""
    keys = [f"k{i}" for i in range(6)]
    updates: list[str] = []
    calls: list[str] = []
    router = router_answering(calls)
    limits = Limits(max_inputs_per_task=5)
    serve = _asking_until_answered(keys, updates)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30), pytest.raises(LimitExceeded) as raised:
                await poller.wait(created)
    assert raised.value.limit == "max_inputs_per_task"
    assert raised.value.maximum == 5
    assert calls == []
    assert updates == []


async def test_keys_up_to_max_inputs_per_task_are_all_answered() -> None:
    keys = [f"k{i}" for i in range(5)]
    updates: list[str] = []
    calls: list[str] = []
    router = router_answering(calls)
    limits = Limits(max_inputs_per_task=5)
    serve = _asking_until_answered(keys, updates)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert sorted(calls) == keys


async def test_many_keys_start_a_bounded_number_of_workers_not_one_task_per_key() -> None:
    """40,000 keys started 40,000 tasks (RSS ~500 MB, a late deadline, a slow close). The
    keys wait in the task's queue; at most ``Limits.max_server_requests`` workers drain it."""
    keys = [f"k{i:03d}" for i in range(200)]
    updates: list[str] = []
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    release = anyio.Event()
    running = [0]
    extra_tasks: list[int] = []
    baseline = [0]

    async def held(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        running[0] += 1
        if running[0] == 2:  # both slots busy: count what the poller started for the keys
            extra_tasks.append(len(anyio.get_running_tasks()) - baseline[0])
        await release.wait()
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(held)
    limits = Limits(max_server_requests=2)
    serve = _asking_until_answered(keys, updates)
    async with HostileHTTPServer(serve) as server, connected(server, router, limits) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            baseline[0] = len(anyio.get_running_tasks())
            async with anyio.create_task_group() as group:

                async def waiter() -> None:
                    with anyio.fail_after(30):
                        outcome = await poller.wait(created)
                    assert isinstance(outcome, Completed)

                group.start_soon(waiter)
                with anyio.fail_after(30):
                    while not extra_tasks:
                        await anyio.sleep(0.01)
                release.set()
    assert sorted(set(updates)) == keys
    assert len(updates) == len(keys)
    # Two workers (plus the waiter and a poll or an update in flight), never one per key.
    assert extra_tasks[0] < 10, extra_tasks
