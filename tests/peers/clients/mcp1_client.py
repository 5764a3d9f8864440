"""The official Python SDK 1.30 client (``mcp==1.30.0``, its experimental tasks API) under the
client-side conformance suite's contract: the URL is the last argument, the scenario's
context in ``MCP_CONFORMANCE_CONTEXT``. Written the way the SDK's docstrings show: a plain
``call_tool``, or ``session.experimental.call_tool_as_task`` then ``poll_task`` (which keeps
the server's pollInterval) and, on ``input_required``, ``get_task_result`` (the question comes
on its stream), ``cancel_task`` to cancel. 2025-11-25 only (mcp 1.x has no 2026-07-28).

Runs in ``<peers root>/venv-mcp1``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import ClientSession, types  # type: ignore[import-not-found, unused-ignore]
from mcp.client.streamable_http import (  # type: ignore[import-not-found, unused-ignore]
    streamablehttp_client,
)


async def main(url: str) -> None:
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")

    async def elicit(ctx: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content=dict(context.get("answer") or {}))

    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        name, arguments = context["tool"], dict(context.get("arguments") or {})
        if not context.get("task"):
            await session.call_tool(name, arguments)
            return
        ttl = context.get("ttl")
        kwargs = {} if ttl is None else {"ttl": ttl}
        created = await session.experimental.call_tool_as_task(name, arguments, **kwargs)
        task_id = created.task.taskId
        if context.get("cancel"):
            await session.experimental.cancel_task(task_id)
            return
        async for status in session.experimental.poll_task(task_id):
            if status.status == "input_required":
                break  # the question comes on tasks/result's stream
        await session.experimental.get_task_result(task_id, types.CallToolResult)


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])
