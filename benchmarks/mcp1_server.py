"""The timed burst against the official Python SDK's server, mcp==1.30.0 (issue 39).

    <peers root>/venv-mcp1/bin/python benchmarks/mcp1_server.py PORT   # 127.0.0.1:PORT/mcp

The scenario of the independent benchmark issue 39 cites, on the SDK's own server: the lowlevel
``Server`` with its in-memory task store (``server.experimental.enable_tasks()``), over its
streamable HTTP session manager (stateful: a session id), answering JSON bodies rather than
SSE streams so that the wire floor reads them as it reads ``server.py``'s. One tool, ``work``
(``execution.taskSupport: required``), called as ``server.py``'s timed tasks are
(``{"after": ms, "interval": ms}``): its task sleeps ``after`` ms and completes. The SDK gives
every task a fixed ``pollInterval`` of 500 ms; its ``create_task_state`` is wrapped here so
that each task carries 2 ms instead (``interval`` is not read), as in the independent
benchmark.

``timed.py`` reads the same bench endpoints as on ``server.py``: ``GET /completions``
answers ``{task id: time.monotonic() when its work returned}`` (the store marks it completed
right after); ``POST /reset`` and ``GET /stats`` answer what ``bench.py``'s row runner needs
(connections are not counted here: null).
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.experimental.tasks import in_memory_task_store
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

INTERVAL_MS = 2
_completed_at: dict[str, float] = {}
_create_task_state = in_memory_task_store.create_task_state


def _fast_polled(metadata: Any, task_id: str | None = None) -> Any:
    return _create_task_state(metadata, task_id).model_copy(update={"pollInterval": INTERVAL_MS})


in_memory_task_store.create_task_state = _fast_polled  # the store's own reference to it

server = Server("bench-mcp1")
server.experimental.enable_tasks()
TOOL = types.Tool(
    name="work",
    inputSchema={"type": "object"},
    execution=types.ToolExecution(taskSupport="required"),
)


async def list_tools() -> list[Any]:
    return [TOOL]


async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    ctx = server.request_context
    ctx.experimental.validate_for_tool(TOOL)
    seconds = float(arguments.get("after", 1000)) / 1000

    async def work(task: Any) -> Any:
        await anyio.sleep(seconds)
        _completed_at[task.task_id] = time.monotonic()
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    return await ctx.experimental.run_task(work)


server.list_tools()(list_tools)
server.call_tool()(call_tool)


def main(port: int) -> None:
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=False)

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    class Endpoint:  # an instance: Starlette hands it the raw ASGI call
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    async def completions(request: Any) -> Any:
        return JSONResponse(_completed_at)

    async def reset(request: Any) -> Any:
        _completed_at.clear()
        return JSONResponse({})

    async def stats(request: Any) -> Any:
        return JSONResponse({"connections": None, "cpu_s": time.process_time()})

    app = Starlette(
        routes=[
            Route("/mcp", endpoint=Endpoint()),
            Route("/completions", completions),
            Route("/reset", reset, methods=["POST"]),
            Route("/stats", stats),
        ],
        lifespan=lifespan,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main(int(sys.argv[1]))
