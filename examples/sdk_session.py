"""A host on the official SDK 1.x: its own ClientSession, and this library's tasks over it.

    pip install "mcp-tasks-client[sdk1]"
    python examples/sdk_session.py http://127.0.0.1:8000/mcp

The server (a 2025-11-25 tasks server, e.g. `python3 -m nox -s serve`'s mcp 1.30) runs
`confirm` as a task that asks a question. The host keeps its session and its own elicitation
callback; the question of the task this library started reaches this library's InputRouter.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client

from mcp_tasks_client import Generation, InputContext, InputRouter, Poller, PollPolicy, ToolCall
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
from mcp_tasks_client.outcomes import Completed
from mcp_tasks_client.sdk import open_client


async def host_elicits(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The host's own callback: every question not about a task of this library's."""
    return types.ElicitResult(action="decline")


async def confirm(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    print(f"task {ctx.task_id} asks: {params.message} -> yes")
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True})


async def main(url: str) -> None:
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write, elicitation_callback=host_elicits) as session,
    ):
        agreed = await session.initialize()  # the host's one initialize
        async with open_client(
            session, generation=Generation.V2025_11_25, initialize_result=agreed
        ) as client:
            router = InputRouter(elicitation=ElicitationCapability(form={}))
            router.attach(client)
            created = await client.start(ToolCall("confirm", {"text": "ship it"}).as_task())
            router.on_elicitation(created.task.task_id, confirm)  # type: ignore[union-attr]
            async with Poller(client, PollPolicy(), inputs=router) as poller:
                outcome = await poller.wait(created)
        assert isinstance(outcome, Completed), outcome
        print("confirm:", [getattr(b, "text", b) for b in outcome.result.content])
        tools = await session.list_tools()  # the host's session goes on serving the host
        print(f"the host's session lists {len(tools.tools)} tools")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
