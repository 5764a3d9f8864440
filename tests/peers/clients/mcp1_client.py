"""The official Python SDK 1.30 client (``mcp==1.30.0``, its experimental tasks API) under the
client-side conformance suite's contract: the URL is the last argument, the scenario's
context in ``MCP_CONFORMANCE_CONTEXT``. Written the way the SDK's docstrings show: a plain
``call_tool``, or ``session.experimental.call_tool_as_task`` then ``poll_task`` (which keeps
the server's pollInterval) and, on ``input_required``, ``get_task_result`` (the question comes
on its stream), ``cancel_task`` to cancel. 2025-11-25 only (mcp 1.x has no 2026-07-28).

``receive`` in the context: the client becomes a task receiver the way the SDK's "Client as
Task Receiver" guide shows: ``ExperimentalTaskHandlers`` (which declares
``tasks.requests.elicitation.create``, list and cancel) over the SDK's ``InMemoryTaskStore``,
the elicitation's work started on the session's task group; ``tasks/result`` waits for the
task's end (``wait_for_update``), ``tasks/cancel`` is the SDK's ``cancel_task`` helper.

Runs in ``<peers root>/venv-mcp1``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import ClientSession, types  # type: ignore[import-not-found, unused-ignore]
from mcp.client.experimental.task_handlers import (  # type: ignore[import-not-found, unused-ignore]
    ExperimentalTaskHandlers,
)
from mcp.client.streamable_http import (  # type: ignore[import-not-found, unused-ignore]
    streamablehttp_client,
)
from mcp.shared.exceptions import McpError  # type: ignore[import-not-found, unused-ignore]
from mcp.shared.experimental.tasks.helpers import (  # type: ignore[import-not-found, unused-ignore]
    cancel_task,
    is_terminal,
)
from mcp.shared.experimental.tasks.in_memory_task_store import (  # type: ignore[import-not-found, unused-ignore]
    InMemoryTaskStore,
)


def receiver(answer: dict[str, Any]) -> Any:
    """The SDK's client-side task receiver, as its guide shows it."""
    store = InMemoryTaskStore()

    async def augmented_elicitation(context: Any, params: Any, task_metadata: Any) -> Any:
        task = await store.create_task(task_metadata)

        async def work() -> None:
            result = types.ElicitResult(action="accept", content=answer)
            await store.store_result(task.taskId, result)
            await store.update_task(task.taskId, status="completed")

        context.session._task_group.start_soon(work)
        return types.CreateTaskResult(task=task)

    async def get_task(context: Any, params: Any) -> Any:
        task = await store.get_task(params.taskId)
        if task is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message="no such task")
        return types.GetTaskResult(**task.model_dump())

    async def get_task_result(context: Any, params: Any) -> Any:
        task = await store.get_task(params.taskId)
        while task is not None and not is_terminal(task.status):
            await store.wait_for_update(params.taskId)
            task = await store.get_task(params.taskId)
        result = await store.get_result(params.taskId)
        if result is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message="no result")
        return types.GetTaskPayloadResult.model_validate(result.model_dump())

    async def list_tasks(context: Any, params: Any) -> Any:
        tasks, cursor = await store.list_tasks(params.cursor if params else None)
        return types.ListTasksResult(tasks=tasks, nextCursor=cursor)

    async def cancel(context: Any, params: Any) -> Any:
        try:
            return await cancel_task(store, params.taskId)
        except McpError as error:
            return error.error

    return ExperimentalTaskHandlers(
        get_task=get_task,
        get_task_result=get_task_result,
        list_tasks=list_tasks,
        cancel_task=cancel,
        augmented_elicitation=augmented_elicitation,
    )


async def main(url: str) -> None:
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")

    async def elicit(ctx: Any, params: Any) -> Any:
        return types.ElicitResult(action="accept", content=dict(context.get("answer") or {}))

    handlers = receiver(dict(context.get("answer") or {})) if context.get("receive") else None
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(
            read, write, elicitation_callback=elicit, experimental_task_handlers=handlers
        ) as session,
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
