"""The fastmcp 4.1.4 client (``fastmcp_tasks``, 2026-07-28 tasks) under the client-side
conformance suite's contract: the URL is the last argument, the scenario's context in
``MCP_CONFORMANCE_CONTEXT``. Written the way its docs show: ``client.call_tool`` for a plain
call (it polls a tasked call transparently), ``call_tool_task`` for an explicit task handle
(``result()`` to wait, ``cancel()``), questions answered by the client's
``elicitation_handler``. 2026-07-28 only (fastmcp 4 has no 2025-11-25 tasks).

``listen`` in the context: fastmcp 4.1.4 has no way to follow a task by
``subscriptions/listen``. ``fastmcp_tasks`` drives a task by ``tasks/get`` polls only
(``ToolTask.wait``/``result``, the transparent resolver), and the SDK's ``Client.listen``
(mcp 2.3.0) takes only ``tools_list_changed``, ``prompts_list_changed``,
``resources_list_changed`` and ``resource_subscriptions``, no task ids. So the script says so
on stderr and follows the task the only way the library does.

Runs in ``<peers root>/venv-fastmcp4``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from fastmcp import Client  # type: ignore[import-not-found, unused-ignore]
from fastmcp_tasks.client import call_tool_task  # type: ignore[import-not-found, unused-ignore]


async def main(url: str) -> None:
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")

    async def elicit(message: str, response_type: Any, params: Any, ctx: Any) -> Any:
        return dict(context.get("answer") or {})

    if context.get("listen"):
        print(
            "fastmcp 4.1.4 has no subscriptions/listen for tasks (fastmcp_tasks polls tasks/get;"
            " Client.listen takes no task ids): following the task by tasks/get only",
            file=sys.stderr,
        )
    async with Client(url, elicitation_handler=elicit) as client:
        name, arguments = context["tool"], dict(context.get("arguments") or {})
        if not context.get("task"):
            await client.call_tool(name, arguments)
            return
        task = await call_tool_task(client, name, arguments)
        if context.get("cancel"):
            await task.cancel()
            return
        await task.result()


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])
