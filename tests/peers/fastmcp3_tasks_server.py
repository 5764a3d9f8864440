"""2025-11-25 tasks peer on fastmcp[tasks]==3.4.11 (docket in memory, no Redis).

Runs in its own venv (``<peers root>/venv-fastmcp3``, see ``install.py``). Start it with
``FASTMCP_SHOW_SERVER_BANNER=false FASTMCP_CHECK_FOR_UPDATES=off`` (the harness does):
otherwise it prints a banner and contacts the network at startup.

Not a clean peer: it is the server the conformance probe must catch (issue 23). It answers a
``tasks/result`` of an unfinished task with -32602 "not completed yet" instead of blocking
(V-11), sends the question of a task's ``ctx.elicit`` as a plain ``elicitation/create`` with
no related-task ``_meta`` (inline on stdio, on the GET stream over HTTP: V-21), and its
``tasks/get`` may say ``working`` while that question is open (V-22).

Tools (the names of the mcp 1.30 peer, so one safe-tools map serves both):
  slow_echo   task optional: sleeps `seconds` (default 1.0), "echo (task): <text>"
  need_task   task required: sleeps `seconds`, "need_task: <text>"
  fail        task optional: raises a ToolError ("boom")
  confirm     task optional: asks a boolean `ok` (ctx.elicit), "confirmed=<ok> action=<a>"

Usage:
  python fastmcp3_tasks_server.py http [PORT]   # http://127.0.0.1:PORT/mcp
  python fastmcp3_tasks_server.py stdio
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import timedelta

import anyio
from fastmcp import Context, FastMCP  # type: ignore[import-not-found, unused-ignore]
from fastmcp.exceptions import ToolError  # type: ignore[import-not-found, unused-ignore]
from fastmcp.utilities.tasks import TaskConfig  # type: ignore[import-not-found, unused-ignore]

mcp = FastMCP("fastmcp3-tasks-peer")
FAST = timedelta(milliseconds=200)
OPTIONAL = TaskConfig(mode="optional", poll_interval=FAST)
REQUIRED = TaskConfig(mode="required", poll_interval=FAST)


@dataclass
class Confirm:
    ok: bool


@mcp.tool(task=OPTIONAL)
async def slow_echo(text: str = "", seconds: float = 1.0) -> str:
    """Sleeps, then echoes."""
    await anyio.sleep(seconds)
    return f"echo (task): {text}"


@mcp.tool(task=REQUIRED)
async def need_task(text: str = "", seconds: float = 0.2) -> str:
    """Runs only as a task."""
    await anyio.sleep(seconds)
    return f"need_task: {text}"


@mcp.tool(task=OPTIONAL)
async def fail() -> str:
    """Always fails (a tool error)."""
    raise ToolError("boom")


@mcp.tool(task=OPTIONAL)
async def confirm(ctx: Context, text: str = "") -> str:
    """Asks the client to confirm, inside its task."""
    answer = await ctx.elicit(f"Confirm: {text}?", response_type=Confirm)
    ok = getattr(getattr(answer, "data", None), "ok", None)
    return f"confirmed={ok} action={answer.action}"


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "http":
        port = int(argv[2]) if len(argv) > 2 else 8006
        mcp.run(transport="http", host="127.0.0.1", port=port, path="/mcp", show_banner=False)
    else:
        mcp.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main(sys.argv)
