"""A client wired to a scripted in-memory 2025-11-25 server: for what a real server may do
that the polite peers do not (fault injection only; interoperability is the peers' job)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcp_tasks_client import (
    Client,
    Generation,
    Implementation,
    InputRouter,
    MemoryServerEnd,
    memory_transport_pair,
)

INFO = Implementation("mcp-tasks-client-tests", "0")
TASK_CALLS: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}


async def handshake(end: MemoryServerEnd, capabilities: dict[str, Any] | None = None) -> None:
    """Answer ``initialize`` (declaring ``capabilities``) and take ``initialized``."""
    init = await end.receive()
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities or {},
        "serverInfo": {"name": "scripted", "version": "0"},
    }
    await end.send({"jsonrpc": "2.0", "id": init["id"], "result": result})
    await end.receive()  # notifications/initialized


@asynccontextmanager
async def scripted_client(
    router: InputRouter,
    serve: Callable[[MemoryServerEnd], Awaitable[None]],
    *,
    capabilities: dict[str, Any] | None = None,
    deadline: float = 10,
) -> AsyncIterator[Client]:
    """A connected client declaring what ``router`` serves, attached to it, whose server
    end runs ``serve`` after the handshake; everything bounded by ``deadline``."""
    transport, server = memory_transport_pair()
    client = Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    router.attach(client)

    async def run() -> None:
        await handshake(server, capabilities)
        await serve(server)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(deadline):
            async with client:
                yield client
        group.cancel_scope.cancel()
