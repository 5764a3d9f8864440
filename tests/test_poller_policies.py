"""The Poller's violation policy against a scripted server that breaks the protocol.

ViolationPolicy.RAISE ends the wait with the typed error; WARN records it and polls on.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    Poller,
    PollPolicy,
    ToolCall,
    ViolationPolicy,
)
from mcp_tasks_client.errors import UnknownValue
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

pytestmark = pytest.mark.anyio

NOW = "2026-11-30T12:00:00Z"
CAPS: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}


def task(status: str) -> dict[str, Any]:
    return {"taskId": "t", "status": status, "createdAt": NOW, "lastUpdatedAt": NOW, "ttl": None}


async def serve(server: MemoryServerEnd, statuses: list[str]) -> None:
    """Answers tasks/get with ``statuses`` in turn (the last one repeats)."""
    polls = 0
    while True:
        try:
            message = await server.receive()
        except anyio.EndOfStream:
            return
        if "id" not in message or "method" not in message:
            continue
        method = message["method"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": CAPS,
                "serverInfo": {"name": "scripted", "version": "0"},
            }
        elif method == "tools/call":
            result = {"task": task("working")}
        elif method == "tasks/get":
            result = task(statuses[min(polls, len(statuses) - 1)])
            polls += 1
        else:  # tasks/result
            result = {"content": [{"type": "text", "text": "done"}]}
        await server.send({"jsonrpc": "2.0", "id": message["id"], "result": result})


async def run(statuses: list[str], policy: PollPolicy) -> tuple[Any, list[Any]]:
    transport, server = memory_transport_pair()
    outcome: Any = None
    warnings: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve, server, statuses)
        info = Implementation("t", "0")
        async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
            created = task_created(await c.start(ToolCall("x").as_task()))
            async with Poller(c, policy) as poller:
                with anyio.fail_after(10):
                    try:
                        outcome = await poller.wait(created)
                    except UnknownValue as exc:
                        outcome = exc
                warnings = list(poller.warnings)
        tg.cancel_scope.cancel()
    return outcome, warnings


async def test_unknown_status_raises_under_raise() -> None:
    """A-08: a status the protocol does not have is a typed error naming $.result.status."""
    outcome, _ = await run(["working", "zombie", "completed"], PollPolicy(floor=0.01))
    assert isinstance(outcome, UnknownValue)
    assert outcome.path == "$.result.status"
    assert outcome.value == "zombie"


async def test_unknown_status_is_a_warning_under_warn() -> None:
    policy = PollPolicy(floor=0.01, initial=0.01, on_violation=ViolationPolicy.WARN)
    outcome, warnings = await run(["working", "zombie", "completed"], policy)
    assert isinstance(outcome, Completed)
    assert [type(w) for w in warnings] == [UnknownValue]
