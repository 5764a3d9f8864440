"""A client wired to a scripted in-memory 2025-11-25 server: the test writes the server's side
message by message (what a real server may do that a polite one does not)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from .._client import Client
from .._generation import Generation
from .._io.memory import MemoryServerEnd, memory_transport_pair
from .._limits import Limits
from ..inputs import InputRouter
from ..models import Implementation

__all__ = ["SCRIPTED_CLIENT_INFO", "TASK_CALLS", "handshake", "scripted_client"]

SCRIPTED_CLIENT_INFO = Implementation("mcp-tasks-client-tests", "0")
TASK_CALLS: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}
"""Server capabilities declaring task-augmented tools/call (2025-11-25)."""


async def handshake(end: MemoryServerEnd, capabilities: dict[str, Any] | None = None) -> None:
    """Answer ``initialize`` (declaring ``capabilities``) and take ``initialized``.
    Deadline: none (the test's scope bounds it). Cancelled: the handshake is left half done.
    """
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
    limits: Limits | None = None,
) -> AsyncIterator[Client]:
    """A connected client declaring what ``router`` serves, attached to it, whose server
    end runs ``serve`` after the handshake; everything bounded by ``deadline``. ``limits``:
    the client's (the defaults if None)."""
    transport, server = memory_transport_pair()
    client = Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=SCRIPTED_CLIENT_INFO,
        capabilities=router.capabilities(),
        limits=limits if limits is not None else Limits(),
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
