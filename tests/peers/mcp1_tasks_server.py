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

Server->client tasks (the CLIENT runs the task, this server polls it). Plain tools (no
`execution`); each sends its requests on the tools/call's own stream (over HTTP: the
POST's SSE response, via related_request_id) and answers one text block. Identical
texts in ts1_tasks_server.mjs. Polling honours the client's pollInterval (else 100 ms),
gives up after 30 s ("timeout status=<last>"). An error answer to the elicitation or
sampling request itself gives "create-error=<code> <message>"; a plain (non-task)
answer gives "client executed synchronously".
  ask_as_task       elicitation/create {mode:form, message:"Confirm: <text>?", ok schema,
                    task:{ttl:60000}}; tasks/get until terminal; tasks/result. Returns
                    "status=<s> result=<sorted compact JSON, no _meta>" or
                    "status=<s> error=<code> <message>"; "get-error=<code> <message>"
                    if a tasks/get answers an error
  sample_as_task    the same with sampling/createMessage {messages:[user text], maxTokens:50,
                    task:{ttl:60000}}
  list_then_cancel  the ask_as_task elicitation, then tasks/list (all pages), tasks/cancel X,
                    tasks/get X, tasks/cancel X: "listed=<true|false> cancel=<status>
                    after=<status> again=<code|ok>"
  ask_short_ttl     {ttl}: elicitation "Confirm: short?" with task:{ttl}, sleeps ttl+1.5 s
                    without polling, tasks/get: "gone=<true iff -32602> code=<code|none>"
  immediate_ask     execution.taskSupport="required": right after the task is created the
                    task sends elicitation/create "Immediate: ok?" (no `task`) DIRECTLY
                    to the client (not via the tasks/result queue; over HTTP it goes to
                    the standalone GET stream), with _meta related-task = this task;
                    task input_required meanwhile; result "immediate confirmed=<true|
                    false> action=<action>" or "immediate error=<code>"
  progress_steps    execution.taskSupport="required": {steps=3, delay=0.2, related=false};
                    for i in 1..steps: statusMessage "step i/steps" (a
                    notifications/tasks/status too), then, if the call carried
                    _meta.progressToken, notifications/progress {that token, progress i,
                    total steps, message "step i/steps"} (with _meta related-task = the
                    task if `related`), DIRECTLY on the session (over HTTP the standalone
                    GET stream, dropped when none is open), then sleeps `delay`; result
                    "progressed <steps> steps token=<the token as JSON, or null>"

Resources: note://greeting (plain text). Prompts: summary(topic).

Usage:
  python mcp1_tasks_server.py stdio
  python mcp1_tasks_server.py http PORT      # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import json
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
from mcp.shared.exceptions import McpError  # type: ignore[import-not-found, unused-ignore]
from mcp.shared.message import (  # type: ignore[import-not-found, unused-ignore]
    ServerMessageMetadata,
)

server = Server("mcp1-tasks-peer")
# In-memory TaskStore + message queue; registers tasks/get|result|list|cancel.
server.experimental.enable_tasks()


def _keep_task_support_per_session() -> None:
    """mcp 1.30 keeps one TaskSupport for every session: each session's ``Server.run()`` enters
    ``task_support.run()``, which sets the task group and, when that session ends, clears it,
    although other sessions still run. Until the next session starts, every task call of the
    others then fails with "TaskSupport not running" (a plain isError result), so a test whose
    session began just before another one's DELETE landed failed at random. The peer keeps the
    group of a session still running instead; what a single session sees is unchanged."""
    support = server.experimental.task_support
    assert support is not None
    running: list[Any] = []

    @asynccontextmanager
    async def run() -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            running.append(group)
            support._task_group = group
            try:
                yield
            finally:
                running.remove(group)
                support._task_group = running[-1] if running else None

    support.run = run  # type: ignore[method-assign, unused-ignore]


_keep_task_support_per_session()

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}},
}


def _tool(
    name: str,
    mode: Literal["optional", "required"] | None,
    desc: str,
    schema: dict[str, Any] | None = None,
) -> Any:
    execution = None if mode is None else types.ToolExecution(taskSupport=mode)
    return types.Tool(
        name=name, description=desc, inputSchema=schema or _SCHEMA, execution=execution
    )


_STEPS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "steps": {"type": "integer"},
        "delay": {"type": "number"},
        "related": {"type": "boolean"},
    },
}

_TTL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ttl": {"type": "integer"}},
    "required": ["ttl"],
}


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
        _tool("ask_as_task", None, "Task-augmented elicitation run by the client, polled"),
        _tool("sample_as_task", None, "Task-augmented sampling run by the client, polled"),
        _tool("list_then_cancel", None, "Client task: tasks/list, cancel, get, cancel again"),
        _tool("ask_short_ttl", None, "Client task with a short ttl, read after it", _TTL_SCHEMA),
        _tool("immediate_ask", "required", "Task that elicits directly, right at its start"),
        _tool(
            "progress_steps",
            "required",
            "Task reporting progress with the call's token",
            _STEPS_SCHEMA,
        ),
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


# --- Server->client tasks: the client runs the task, this server polls it. -------------

_OK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
_RELATED_TASK = "io.modelcontextprotocol/related-task"
_TERMINAL = ("completed", "failed", "cancelled")
_POLL_DEFAULT_MS = 100
_POLL_LIMIT_S = 30.0
_SYNC = "client executed synchronously"


def _json(value: Any) -> str:
    # Same bytes as the ts1 peer's sortedJson(): sorted keys, no spaces, raw UTF-8.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _err(e: Any) -> str:
    return f"{e.error.code} {e.error.message}"


class _ClientTasks:
    """Server->client requests on the calling request's stream (HTTP: its POST's SSE)."""

    def __init__(self, ctx: Any) -> None:
        self._session = ctx.session
        self._meta = ServerMessageMetadata(related_request_id=ctx.request_id)

    async def send(self, request: Any, result_type: Any) -> Any:
        return await self._session.send_request(
            types.ServerRequest(request), result_type, metadata=self._meta
        )

    async def create(self, request: Any) -> Any:
        """The task-augmented request: a CreateTaskResult's Task, or None if answered inline."""
        raw = (await self.send(request, types.Result)).model_dump(by_alias=True)
        if not isinstance(raw.get("task"), dict):
            return None
        return types.CreateTaskResult.model_validate(raw).task

    async def get(self, task_id: str) -> Any:
        params = types.GetTaskRequestParams(taskId=task_id)
        return await self.send(types.GetTaskRequest(params=params), types.GetTaskResult)

    async def cancel(self, task_id: str) -> Any:
        params = types.CancelTaskRequestParams(taskId=task_id)
        return await self.send(types.CancelTaskRequest(params=params), types.CancelTaskResult)

    async def list_all(self) -> list[Any]:
        tasks: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a client that loops its cursors must not hang the tool
            params = types.PaginatedRequestParams(cursor=cursor)
            page = await self.send(types.ListTasksRequest(params=params), types.ListTasksResult)
            tasks.extend(page.tasks)
            cursor = page.nextCursor
            if not cursor:
                break
        return tasks

    async def run(self, request: Any) -> str:
        """Create, poll tasks/get until terminal, then tasks/result: the tool's text."""
        try:
            task = await self.create(request)
        except McpError as e:
            return f"create-error={_err(e)}"
        if task is None:
            return _SYNC
        interval = task.pollInterval
        deadline = anyio.current_time() + _POLL_LIMIT_S
        while True:
            try:
                got = await self.get(task.taskId)
            except McpError as e:
                return f"get-error={_err(e)}"
            if got.status in _TERMINAL:
                break
            if anyio.current_time() >= deadline:
                return f"timeout status={got.status}"
            if got.pollInterval is not None:
                interval = got.pollInterval
            await anyio.sleep((_POLL_DEFAULT_MS if interval is None else interval) / 1000)
        params = types.GetTaskPayloadRequestParams(taskId=task.taskId)
        try:
            res = await self.send(
                types.GetTaskPayloadRequest(params=params), types.GetTaskPayloadResult
            )
        except McpError as e:
            return f"status={got.status} error={_err(e)}"
        body = res.model_dump(by_alias=True)
        body.pop("_meta", None)
        return f"status={got.status} result={_json(body)}"


def _elicit(message: str, ttl: int | None, related_task: str | None = None) -> Any:
    params: dict[str, Any] = {"mode": "form", "message": message, "requestedSchema": _OK_SCHEMA}
    if ttl is not None:
        params["task"] = {"ttl": ttl}
    if related_task is not None:
        params["_meta"] = {_RELATED_TASK: {"taskId": related_task}}
    return types.ElicitRequest(params=types.ElicitRequestFormParams.model_validate(params))


def _sample(text: str, ttl: int) -> Any:
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 50,
        "task": {"ttl": ttl},
    }
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams.model_validate(params)
    )


async def _list_then_cancel(peer: _ClientTasks, text: str) -> str:
    try:
        task = await peer.create(_elicit(f"Confirm: {text}?", 60000))
    except McpError as e:
        return f"create-error={_err(e)}"
    if task is None:
        return _SYNC
    tid = task.taskId
    try:
        listed = any(t.taskId == tid for t in await peer.list_all())
    except McpError as e:
        return f"list-error={_err(e)}"
    try:
        cancel = (await peer.cancel(tid)).status
    except McpError as e:
        return f"listed={str(listed).lower()} cancel-error={_err(e)}"
    try:
        after = (await peer.get(tid)).status
    except McpError as e:
        return f"listed={str(listed).lower()} cancel={cancel} get-error={_err(e)}"
    try:
        await peer.cancel(tid)
        again = "ok"
    except McpError as e:
        again = str(e.error.code)
    return f"listed={str(listed).lower()} cancel={cancel} after={after} again={again}"


async def _ask_short_ttl(peer: _ClientTasks, ttl: int) -> str:
    try:
        task = await peer.create(_elicit("Confirm: short?", ttl))
    except McpError as e:
        return f"create-error={_err(e)}"
    if task is None:
        return _SYNC
    await anyio.sleep((ttl + 1500) / 1000)  # no polling meanwhile
    try:
        await peer.get(task.taskId)
    except McpError as e:
        return f"gone={str(e.error.code == -32602).lower()} code={e.error.code}"
    return "gone=false code=none"


def _immediate_work(session: Any) -> Callable[[Any], Awaitable[Any]]:
    async def immediate_work(task: ServerTaskContext) -> Any:
        support = server.experimental.task_support
        assert support is not None
        await support.store.update_task(task.task_id, status="input_required")
        # Straight onto the session (not task.elicit(), which queues it for the client's
        # tasks/result): no related_request_id, the tools/call has already been answered,
        # so over HTTP this goes to the standalone GET stream.
        request = types.ServerRequest(_elicit("Immediate: ok?", None, task.task_id))
        try:
            res = await session.send_request(request, types.ElicitResult)
        except McpError as e:
            out = f"immediate error={e.error.code}"
        else:
            ok = res.action == "accept" and (res.content or {}).get("ok") is True
            out = f"immediate confirmed={str(ok).lower()} action={res.action}"
        try:
            await support.store.update_task(task.task_id, status="working")
        except Exception:  # already terminal (e.g. cancelled by the client)
            pass
        return _text(out)

    return immediate_work


def _progress_work(
    session: Any, token: str | int | None, arguments: dict[str, Any]
) -> Callable[[Any], Awaitable[Any]]:
    steps = int(arguments.get("steps", 3))
    delay = float(arguments.get("delay", 0.2))
    related = bool(arguments.get("related", False))

    async def progress_work(task: ServerTaskContext) -> Any:
        for i in range(1, steps + 1):
            said = f"step {i}/{steps}"
            await task.update_status(said)  # statusMessage, and notifications/tasks/status
            if token is not None:
                # The call's own token, after its CreateTaskResult (C-46: valid until the
                # task is terminal). No related_request_id: the tools/call is answered, so
                # over HTTP this goes to the standalone GET stream.
                params: dict[str, Any] = {
                    "progressToken": token,
                    "progress": i,
                    "total": steps,
                    "message": said,
                }
                if related:
                    params["_meta"] = {_RELATED_TASK: {"taskId": task.task_id}}
                note = types.ProgressNotification(
                    params=types.ProgressNotificationParams.model_validate(params)
                )
                await session.send_notification(types.ServerNotification(note))
            await anyio.sleep(delay)
        return _text(f"progressed {steps} steps token={_json(token)}")

    return progress_work


async def _client_task_tool(ctx: Any, name: str, arguments: dict[str, Any]) -> Any:
    peer = _ClientTasks(ctx)
    text = str(arguments.get("text", "hello"))
    if name == "ask_as_task":
        return _text(await peer.run(_elicit(f"Confirm: {text}?", 60000)))
    if name == "sample_as_task":
        return _text(await peer.run(_sample(text, 60000)))
    if name == "list_then_cancel":
        return _text(await _list_then_cancel(peer, text))
    return _text(await _ask_short_ttl(peer, int(arguments["ttl"])))


_CLIENT_TASK_TOOLS = ("ask_as_task", "sample_as_task", "list_then_cancel", "ask_short_ttl")


async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    ctx = server.request_context
    tool = TOOLS[name]
    ctx.experimental.validate_for_tool(tool)  # -32601 if required-but-not-task / forbidden-but-task
    text = str(arguments.get("text", "hello"))
    secs = float(arguments.get("seconds", 1.0))

    if name == "plain_echo":
        return _text(f"echo: {text}")
    if name in _CLIENT_TASK_TOOLS:
        return await _client_task_tool(ctx, name, arguments)
    if name == "immediate_ask":
        return await ctx.experimental.run_task(_immediate_work(ctx.session))
    if name == "progress_steps":
        token = ctx.meta.progressToken if ctx.meta is not None else None
        return await ctx.experimental.run_task(_progress_work(ctx.session, token, arguments))

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
    from request_log import wrapped  # type: ignore[import-not-found, unused-ignore]

    uvicorn.run(
        wrapped(app),
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
