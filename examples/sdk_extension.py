"""A host on the official SDK 2.x: its own mcp.Client, and tasks waited for by this library.

    pip install "mcp-tasks-client[sdk2]"
    python examples/sdk_extension.py http://127.0.0.1:8000/mcp

The server (a 2026-07-28 tasks server, e.g. `python3 -m nox -s serve`'s fastmcp 4) answers
`slow_compute` with a task; the TasksExtension drives it to its end over the SDK's own session,
answers the task's question with the handler below, and `call_tool` returns the result.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp

from mcp_tasks_client import Client, InputContext, InputRouter, PollPolicy
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
from mcp_tasks_client.sdk import TasksExtension


def routers(client: Client) -> InputRouter:
    """The InputRouter of each task's client: every question of a task is answered here."""

    async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        print(f"task {ctx.task_id} asks: {params.message} -> yes")
        return ElicitResult(ElicitAction.ACCEPT, {"confirm": True})

    return InputRouter(elicitation=ElicitationCapability(form={})).default_elicitation(confirm)


async def host_elicits(context: Any, params: Any) -> Any:
    """The host's own callback (questions of plain calls); declares elicitation to servers."""
    return mcp.types.ElicitResult(action="decline")


async def main(url: str) -> None:
    tasks = TasksExtension(policy=PollPolicy(), inputs=routers, cancel_on_abandon=True)
    async with mcp.Client(url, extensions=[tasks], elicitation_callback=host_elicits) as client:
        result = await client.call_tool("slow_compute", {"label": "report", "seconds": 1})
        print("slow_compute:", [block.text for block in result.content])
        result = await client.call_tool("confirm_delete", {"filename": "old.log"})
        print("confirm_delete:", [block.text for block in result.content])
    print(f"tasks driven by this library: {tasks.resolved}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
