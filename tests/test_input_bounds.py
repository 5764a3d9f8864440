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

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Limits,
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
