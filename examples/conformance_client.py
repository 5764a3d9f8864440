"""This library as a client under the client-side conformance suite's contract.

``mcp-tasks conformance-client --command "python examples/conformance_client.py"`` runs it
against every scenario: the server's URL is the last argument; ``MCP_CONFORMANCE_SCENARIO``,
``MCP_CONFORMANCE_PROTOCOL_VERSION`` and ``MCP_CONFORMANCE_CONTEXT`` (a JSON object) say what
to do: call ``tool`` with ``arguments``, as a task when ``task`` is true (asking for ``ttl``
ms when given), cancel it once created when ``cancel`` is true, follow it with a
``subscriptions/listen`` as well as polls when ``listen`` is true (2026-07-28), serve the
server's task-augmented questions as tasks (a ``TaskReceiver``) when ``receive`` is true, and
accept a form question with ``answer``. It does only what the context asks: the library opts into
nothing itself.

``--ttl-backstop`` (before the URL) makes it a host that opted into the TTL backstop
(``PollPolicy(ttl_backstop=True)``: a task whose ``createdAt`` plus ``ttl`` has passed is given
up, C-37, E C26); it passes every scenario all the same, since the suite dates its tasks by the
real clock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
from typing import Any

import anyio

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    TaskReceiver,
    ToolCall,
)
from mcp_tasks_client.inputs import InputContext, InputRouter
from mcp_tasks_client.models import (
    CallToolResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)


async def main(url: str, ttl_backstop: bool = False) -> None:
    generation = Generation(os.environ["MCP_CONFORMANCE_PROTOCOL_VERSION"])
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    answer = context.get("answer") or {}
    receiver = TaskReceiver() if context.get("receive") else None
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=receiver)

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, dict(answer))

    router.default_elicitation(accept)
    client = Client(
        HttpTransport(url),
        generation=generation,
        client_info=Implementation("mcp-tasks-client-conformance", "0"),
        capabilities=router.capabilities(),
    )
    async with client, contextlib.AsyncExitStack() as stack:
        if receiver is not None:
            await stack.enter_async_context(receiver)
        router.attach(client)
        call = ToolCall(context["tool"], dict(context.get("arguments") or {}))
        if not context.get("task"):
            await client.call_tool(call, inputs=router)
            return
        ttl = context.get("ttl")
        task_call = call.as_task(None if ttl is None else dt.timedelta(milliseconds=ttl))
        started = await client.start(task_call, inputs=router)
        if isinstance(started, CallToolResult):
            return  # the server ran it inline
        if context.get("cancel"):
            await client.cancel_task(started.task.task_id)
            return
        policy = PollPolicy(listen=bool(context.get("listen")), ttl_backstop=ttl_backstop)
        async with Poller(client, policy, inputs=router) as poller:
            await poller.wait(started, deadline=30)


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1], "--ttl-backstop" in sys.argv[1:-1])
