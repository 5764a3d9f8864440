"""Minimal 2025-11-25 (SEP-1686) tasks peer built on PyPI mcp==1.30.0 (lowlevel Server).

Runs in its own venv (``<peers root>/venv-mcp1``, see ``install.py``).

Tools:
  slow_echo   execution.taskSupport="optional": sleeps `seconds`, returns `text`
  need_task   execution.taskSupport="required": same, but must be task-augmented
  confirm     execution.taskSupport="required": elicits a yes/no from the client
              while the task is running (task goes to input_required)
  summarize   execution.taskSupport="required": asks the client's model (sampling) in the task
  fail        execution.taskSupport="required": task ends status=failed
  plain_echo  no `execution` (taskSupport absent = forbidden): returns "echo: <text>"

Resources: note://greeting (plain text). Prompts: summary(topic).

Usage:
  python mcp1_tasks_server.py stdio
  python mcp1_tasks_server.py http PORT      # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
from mcp import types  # type: ignore[import-not-found, unused-ignore]
from mcp.server.experimental.task_context import (  # type: ignore[import-not-found, unused-ignore]
    ServerTaskContext,
)
from mcp.server.lowlevel import Server  # type: ignore[import-not-found, unused-ignore]

server = Server("mcp1-tasks-peer")
# In-memory TaskStore + message queue; registers tasks/get|result|list|cancel.
server.experimental.enable_tasks()

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}},
}


def _tool(name: str, mode: Literal["optional", "required"] | None, desc: str) -> Any:
    execution = None if mode is None else types.ToolExecution(taskSupport=mode)
    return types.Tool(name=name, description=desc, inputSchema=_SCHEMA, execution=execution)


TOOLS: dict[str, Any] = {
    t.name: t
    for t in [
        _tool("slow_echo", "optional", "Echo text after a delay (task optional)"),
        _tool("need_task", "required", "Echo text after a delay (task required)"),
        _tool(
            "confirm",
            "required",
            "Ask the user to confirm via elicitation, inside a task",
        ),
        _tool("fail", "required", "Task that fails"),
        _tool("summarize", "required", "Ask the client's model to summarize, inside a task"),
        _tool("plain_echo", None, "Echo text immediately (no task support)"),
    ]
}


def _text(s: str, is_error: bool = False) -> Any:
    return types.CallToolResult(content=[types.TextContent(type="text", text=s)], isError=is_error)


async def list_tools() -> list[Any]:
    return list(TOOLS.values())


def _make_work(name: str, text: str, secs: float) -> Callable[[Any], Awaitable[Any]]:
    if name in ("slow_echo", "need_task"):

        async def echo_work(task: ServerTaskContext) -> Any:
            await task.update_status("working")
            await anyio.sleep(secs)
            return _text(f"echo (task): {text}")

        return echo_work

    if name == "confirm":

        async def confirm_work(task: ServerTaskContext) -> Any:
            # status -> input_required; the elicitation/create request reaches the
            # client through its pending tasks/result call (side channel), with
            # _meta["io.modelcontextprotocol/related-task"] = {"taskId": ...}
            res = await task.elicit(
                message=f"Confirm: {text}?",
                requestedSchema={
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            )
            ok = res.action == "accept" and bool((res.content or {}).get("ok"))
            return _text(f"confirmed={ok} action={res.action}")

        return confirm_work

    if name == "summarize":

        async def summarize_work(task: ServerTaskContext) -> Any:
            # sampling/createMessage through the tasks/result side channel (input_required)
            res = await task.create_message(
                [
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=text)
                    )
                ],
                max_tokens=50,
            )
            said = res.content.text if isinstance(res.content, types.TextContent) else "?"
            return _text(f"model {res.model} said: {said}")

        return summarize_work

    async def fail_work(task: ServerTaskContext) -> Any:
        await anyio.sleep(0.2)
        raise RuntimeError("boom")

    return fail_work


async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    ctx = server.request_context
    tool = TOOLS[name]
    ctx.experimental.validate_for_tool(tool)  # -32601 if required-but-not-task / forbidden-but-task
    text = str(arguments.get("text", "hello"))
    secs = float(arguments.get("seconds", 1.0))

    if name == "plain_echo":
        return _text(f"echo: {text}")

    if not ctx.experimental.is_task:  # only reachable for slow_echo (optional)
        await anyio.sleep(secs)
        return _text(f"echo (inline): {text}")

    return await ctx.experimental.run_task(_make_work(name, text, secs))


# Registered by call, not by decorator: the file type-checks without mcp installed.
# (With mcp installed, mypy sees these decorator factories as untyped.)
server.list_tools()(list_tools)  # type: ignore[no-untyped-call, unused-ignore]
server.call_tool()(call_tool)  # type: ignore[no-untyped-call, unused-ignore]


def _run_stdio() -> None:
    from mcp.server.stdio import stdio_server  # type: ignore[import-not-found, unused-ignore]

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def _run_http(port: int) -> None:
    import uvicorn  # type: ignore[import-not-found, unused-ignore]
    from mcp.server.streamable_http_manager import (  # type: ignore[import-not-found, unused-ignore]
        StreamableHTTPSessionManager,
    )
    from starlette.applications import Starlette  # type: ignore[import-not-found, unused-ignore]
    from starlette.routing import Route  # type: ignore[import-not-found, unused-ignore]

    mgr = StreamableHTTPSessionManager(app=server, json_response=False, stateless=False)

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with mgr.run():
            yield

    class MCPEndpoint:  # a class instance => Starlette treats it as a raw ASGI app
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await mgr.handle_request(scope, receive, send)

    # Route, not Mount: Mount("/mcp") answers POST /mcp with a redirect to /mcp/.
    app = Starlette(routes=[Route("/mcp", endpoint=MCPEndpoint())], lifespan=lifespan)
    # Bounded graceful shutdown: open SSE streams must not hold SIGTERM up.
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
    )


@server.list_resources()
async def list_resources() -> list[types.Resource]:
    return [types.Resource(uri="note://greeting", name="greeting", mimeType="text/plain")]


@server.read_resource()
async def read_resource(uri: Any) -> str:
    if str(uri) != "note://greeting":
        raise ValueError(f"no resource {uri}")
    return "hello from a resource"


@server.list_prompts()
async def list_prompts() -> list[types.Prompt]:
    topic = types.PromptArgument(name="topic", required=True)
    return [types.Prompt(name="summary", description="A plain prompt.", arguments=[topic])]


@server.get_prompt()
async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    topic = (arguments or {}).get("topic", "")
    text = types.TextContent(type="text", text=f"Summarize {topic} in one line.")
    message = types.PromptMessage(role="user", content=text)
    return types.GetPromptResult(description="A plain prompt.", messages=[message])


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        _run_stdio()
    elif mode == "http" and len(sys.argv) > 2:
        _run_http(int(sys.argv[2]))
    else:
        sys.exit("usage: mcp1_tasks_server.py stdio | http PORT")


if __name__ == "__main__":
    main()
