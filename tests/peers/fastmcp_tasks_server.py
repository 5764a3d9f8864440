"""SEP-2663 (2026-07-28 io.modelcontextprotocol/tasks) peer on fastmcp[tasks]==4.1.4.

Runs in its own venv (``<peers root>/venv-fastmcp4``, see ``install.py``). Start it with
``FASTMCP_SHOW_SERVER_BANNER=false FASTMCP_CHECK_FOR_UPDATES=off`` (the harness does):
otherwise it prints a banner and contacts the network at startup.

Tools:
  greet               no task config (task forbidden): "Hello, <name>!"
  slow_compute        task optional: sleeps `seconds`, "computed <label> in <seconds>s"
  progress_steps      task required: {steps=3, delay=0.2}: for i in 1..steps
                      ctx.report_progress(i, steps, "step i/steps"), then sleeps `delay`;
                      "progressed <steps> steps" (what fastmcp makes of a task's progress)
  failing_job         task required: tool error => task completed, result.isError=true
  protocol_error_job  task optional: protocol error => task failed, inlined JSON-RPC error
  confirm_delete      task optional: asks a boolean `confirm` (MRTR / input_required)
  multi_input         task optional: asks `first` and `second` in one round
  test_tool_with_task task required: asks `user_name`
  ask_plain           no task config: MRTR on a plain call, asks `name`
  ask_with_state      no task config: MRTR with requestState "opaque-1" (sealed on the
                      wire by the SDK), round 2 shows the state it got back
  routed_echo         no task config: `region` is annotated x-mcp-header "Region" (the
                      server checks the Mcp-Param-Region header against it, -32020 if not)
  badly_annotated     no task config: an x-mcp-header on a number (invalid: a client leaves
                      the tool out of tools/list)

Resources: note://greeting (plain text), note://secret (asks a `pin` first, MRTR).
Prompts: summary(topic) (plain), ask_topic (asks a `topic` first, MRTR).

Usage:
  python fastmcp_tasks_server.py http [PORT]   # http://127.0.0.1:PORT/mcp
  python fastmcp_tasks_server.py stdio

Caching hints (SEP-2549): ``ttlMs`` 0 and ``cacheScope`` private by default; with
``MCP_TASKS_PEER_CACHE_TTL=<seconds>`` (and ``MCP_TASKS_PEER_CACHE_SCOPE=public|private``) every
cacheable result carries that TTL and scope (fastmcp's ``cache_ttl`` / ``cache_scope``).

Backend: TasksExtension() defaults to FASTMCP_DOCKET_URL=memory:// (in-process, no Redis).
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from typing import Annotated, Any

import anyio
from fastmcp import Context, FastMCP  # type: ignore[import-not-found, unused-ignore]
from fastmcp.exceptions import ToolError  # type: ignore[import-not-found, unused-ignore]
from fastmcp.utilities.tasks import TaskConfig  # type: ignore[import-not-found, unused-ignore]
from fastmcp_tasks import TasksExtension  # type: ignore[import-not-found, unused-ignore]
from mcp.shared.exceptions import MCPError  # type: ignore[import-not-found, unused-ignore]
from mcp_types import (  # type: ignore[import-not-found, unused-ignore]
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
)
from pydantic import Field  # type: ignore[import-not-found, unused-ignore]

# SEP-2549 caching hints: fastmcp sends ttlMs 0 / cacheScope private unless told a TTL.
# MCP_TASKS_PEER_CACHE_TTL (seconds) and MCP_TASKS_PEER_CACHE_SCOPE set them for every
# cacheable result (tests/test_cache_peers.py starts a second server with them).
_CACHE_TTL = os.environ.get("MCP_TASKS_PEER_CACHE_TTL")
_CACHE_SCOPE = os.environ.get("MCP_TASKS_PEER_CACHE_SCOPE") if _CACHE_TTL else None
mcp = FastMCP(
    "fastmcp-tasks-peer",
    cache_ttl=int(_CACHE_TTL) if _CACHE_TTL else None,
    cache_scope=_CACHE_SCOPE,  # type: ignore[arg-type, unused-ignore]
)
mcp.add_extension(TasksExtension())
FAST = timedelta(milliseconds=200)
OPTIONAL = TaskConfig(mode="optional", poll_interval=FAST)
REQUIRED = TaskConfig(mode="required", poll_interval=FAST)


def _ask(key: str, message: str, prop: str, typ: str = "string") -> dict[str, Any]:
    schema = {"type": "object", "properties": {prop: {"type": typ}}, "required": [prop]}
    params = ElicitRequestFormParams(message=message, requested_schema=schema)
    return {key: ElicitRequest(params=params)}


@mcp.tool
def greet(name: str = "world") -> str:
    """Sync-only tool (task forbidden)."""
    return f"Hello, {name}!"


@mcp.tool
def routed_echo(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    text: str = "",
) -> str:
    """Its `region` argument travels as the Mcp-Param-Region header too."""
    return f"{region}: {text}"


@mcp.tool
def badly_annotated(
    weight: Annotated[float, Field(json_schema_extra={"x-mcp-header": "Weight"})] = 1.0,
) -> str:
    """An x-mcp-header on a number: invalid (E C60)."""
    return f"weight {weight}"


@mcp.tool(task=OPTIONAL)
async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
    await anyio.sleep(seconds)
    return f"computed {label} in {seconds}s"


@mcp.tool(task=REQUIRED)
async def progress_steps(ctx: Context, steps: int = 3, delay: float = 0.2) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
        await anyio.sleep(delay)
    return f"progressed {steps} steps"


@mcp.tool(task=REQUIRED)
async def failing_job() -> str:
    """Tool error => task completed with result.isError=true."""
    await anyio.sleep(1)
    raise ToolError("job failed on purpose")


@mcp.tool(task=OPTIONAL)
async def protocol_error_job() -> str:
    """Protocol error => task failed with inlined JSON-RPC error."""
    await anyio.sleep(0.2)
    raise MCPError(code=-32603, message="simulated protocol fault")


@mcp.tool(task=OPTIONAL)
async def confirm_delete(ctx: Context, filename: str = "x.txt") -> str | InputRequiredResult:
    answers = ctx.input_responses or {}
    if "confirm" not in answers:
        ask = _ask("confirm", f"Delete {filename}?", "confirm", "boolean")
        return InputRequiredResult(input_requests=ask)
    ans = answers["confirm"]
    return f"deleted {filename}" if ans.action == "accept" else f"kept {filename} ({ans.action})"


@mcp.tool(task=OPTIONAL)
async def multi_input(ctx: Context) -> str | InputRequiredResult:
    answers = ctx.input_responses or {}
    missing: dict[str, Any] = {}
    if "first" not in answers:
        missing |= _ask("first", "First name?", "value")
    if "second" not in answers:
        missing |= _ask("second", "Last name?", "value")
    if missing:
        return InputRequiredResult(input_requests=missing)
    return f"first={answers['first'].content} second={answers['second'].content}"


@mcp.tool(task=REQUIRED)
async def test_tool_with_task(ctx: Context) -> str | InputRequiredResult:
    answers = ctx.input_responses or {}
    if "user_name" not in answers:
        return InputRequiredResult(input_requests=_ask("user_name", "Your name?", "user_name"))
    content = answers["user_name"].content or {}
    return f"Hello, {content.get('name') or content.get('user_name')}!"


@mcp.tool
async def ask_plain(ctx: Context) -> str | InputRequiredResult:
    """MRTR on a plain (non-task) call: round 1 asks `name`, round 2 greets."""
    answers = ctx.input_responses or {}
    if "name" not in answers:
        return InputRequiredResult(input_requests=_ask("name", "Your name?", "name"))
    content = answers["name"].content or {}
    return f"Hi {content.get('name')}"


@mcp.tool
async def ask_with_state(ctx: Context) -> str | InputRequiredResult:
    """MRTR with requestState: round 1 sets "opaque-1", round 2 shows what came back."""
    answers = ctx.input_responses or {}
    if "name" not in answers:
        ask = _ask("name", "Your name?", "name")
        return InputRequiredResult(input_requests=ask, request_state="opaque-1")
    content = answers["name"].content or {}
    return f"Hi {content.get('name')} state={ctx.request_state}"


@mcp.resource("note://greeting")
def greeting() -> str:
    """A plain text resource."""
    return "hello from a resource"


@mcp.resource("note://secret")
async def secret(ctx: Context) -> str | InputRequiredResult:
    """Asks a pin first (MRTR on resources/read)."""
    answers = ctx.input_responses or {}
    if "pin" not in answers:
        return InputRequiredResult(input_requests=_ask("pin", "PIN?", "pin"))
    return f"secret for pin {(answers['pin'].content or {}).get('pin')}"


@mcp.prompt
def summary(topic: str) -> str:
    """A plain prompt."""
    return f"Summarize {topic} in one line."


@mcp.prompt
async def ask_topic(ctx: Context) -> str | InputRequiredResult:
    """Asks its topic first (MRTR on prompts/get)."""
    answers = ctx.input_responses or {}
    if "topic" not in answers:
        return InputRequiredResult(input_requests=_ask("topic", "Topic?", "topic"))
    return f"Write about {(answers['topic'].content or {}).get('topic')}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["stdio"]:
        mcp.run("stdio")
    else:
        port = int(sys.argv[2]) if len(sys.argv) > 2 else 8005
        from request_log import ENV, RequestLog  # type: ignore[import-not-found, unused-ignore]

        if os.environ.get(ENV):
            from starlette.middleware import (  # type: ignore[import-not-found, unused-ignore]
                Middleware,
            )

            logged = [Middleware(RequestLog)]
            mcp.run("http", host="127.0.0.1", port=port, path="/mcp", middleware=logged)
        else:
            mcp.run("http", host="127.0.0.1", port=port, path="/mcp")
