"""A FaultServer's 2025-11-25 dialect: sessions, ``params.task``, a blocking ``tasks/result``.

Over HTTP each ``initialize`` opens a session (``fault-1``, ``fault-2``, ...; V-28 broken:
``tasks/list`` lists every session's tasks), a bogus ``MCP-Protocol-Version`` gets 400 and an
ended session 404 (V-27 broken: both served), ``DELETE`` ends a session and a GET opens the
standalone SSE stream. A call asks for a task with ``params.task`` (its ``ttl`` kept); a task
is nested under ``task`` when created and carries ``ttl`` and ``pollInterval``; ``fail`` ends
``failed``. A task's question is a request to the client tagged with related-task ``_meta``
(V-21 broken: untagged), sent on the stream of the client's blocking ``tasks/result`` (or of
the first poll when V-22 is broken, or on the GET stream with ``ask_on="get"``); the task is
``input_required`` until the client answers. ``tasks/result`` blocks until the task ends
(by its polls, or by itself ``self_paced`` seconds on);
``tasks/cancel`` answers the cancelled Task.

May import what ``_fault_base.py`` may, and ``_fault_base``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, ClassVar

import anyio

from .._generation import Generation
from ..models import RELATED_TASK_META
from ._fault_base import (
    JSON,
    TERMINAL,
    Channel,
    Dialect,
    FaultTask,
    Refusal,
    SSEChannel,
    result_json,
    text_of,
)
from ._http import Conn, Received

__all__ = ["Dialect2025"]


class Dialect2025(Dialect):
    """A FaultServer speaking 2025-11-25 with its experimental tasks."""

    generation = Generation.V2025_11_25
    tools: ClassVar[Mapping[str, str | None]] = {
        "echo": "optional",
        "need_task": "required",
        "fail": "required",
        "protocol_error": "optional",
        "slow": "optional",
        "plain": None,
        "ask": "optional",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sessions = itertools.count(1)
        self._asking: dict[Any, FaultTask] = {}
        """The task each request sent to the client asks for, by the request's id."""
        self._get_streams: list[SSEChannel] = []
        self._get_opened: anyio.Event | None = None
        """Set when a client opens a GET stream (None: not serving over HTTP)."""

    # -- HTTP -------------------------------------------------------------------------------

    def serving_http(self) -> None:
        self._get_opened = anyio.Event()

    def http_refusal(self, request: Received, body: Any) -> tuple[JSON, int] | None:
        server = self.server
        if "V-27" in server.breaks:
            return None
        version = request.headers.get("mcp-protocol-version")
        session = request.headers.get("mcp-session-id")
        rpc_id = body.get("id") if isinstance(body, dict) else None
        if version is not None and version != self.generation.value:
            return server._error({"id": rpc_id}, -32600, f"unsupported version {version}"), 400
        if session is not None and session in server.ended_sessions:
            return server._error({"id": rpc_id}, -32600, "session ended"), 404
        return None

    def http_session(self, body: Any, session: str | None) -> tuple[str | None, dict[str, str]]:
        if isinstance(body, dict) and body.get("method") == "initialize":
            session = f"fault-{next(self._sessions)}"
        return session, {"Mcp-Session-Id": session or "fault-0"}

    async def on_delete(self, request: Received, conn: Conn) -> None:
        session = request.headers.get("mcp-session-id")
        if session is not None:
            self.server.ended_sessions.add(session)
        await conn.head(200, {"Content-Length": "0"})

    async def on_get(self, request: Received, conn: Conn) -> None:
        # the standalone GET stream: open until the client goes; asks go out on it
        headers = {"Mcp-Session-Id": request.headers.get("mcp-session-id") or "fault-0"}
        await conn.head(200, {"Content-Type": "text/event-stream", **headers})
        channel = SSEChannel(conn, headers)
        channel.opened = True
        self.server.get_streams_opened += 1
        self._get_streams.append(channel)
        if self._get_opened is not None:
            self._get_opened.set()
        try:
            await conn.client_closed()
        finally:
            self._get_streams.remove(channel)

    # -- calls and tasks --------------------------------------------------------------------

    def wants_task(self, name: str, params: JSON) -> bool:
        return isinstance(params.get("task"), dict)

    def call_without_task(self, support: str | None, text: str) -> JSON | Refusal:
        if support == "required" and "V-16" not in self.server.breaks:
            return (-32601, "this tool must be called as a task", None)
        return result_json(text)

    def task_of_taskless_tool(self, text: str) -> JSON | Refusal | None:
        if "V-17" not in self.server.breaks:
            return (-32601, "this tool does not run as a task", None)
        return None

    def requested_ttl(self, params: JSON) -> int | None:
        ttl: int | None = params.get("task", {}).get("ttl")
        return ttl

    def created(self, task: FaultTask) -> JSON:
        return {"task": self.server._task(task, detailed=False)}

    def questions(self, task: FaultTask, first: JSON) -> list[tuple[str, JSON]]:
        return [("q1", first)]

    def task_fields(self, task: FaultTask, out: JSON, *, detailed: bool) -> None:
        if not (detailed and "V-08" in self.server.breaks):
            out["ttl"] = task.ttl
        out["pollInterval"] = 10

    def ends_failed(self, task: FaultTask) -> bool:
        return task.tool == "fail"

    # -- input: requests to the client ------------------------------------------------------

    def waiting(self, task: FaultTask) -> None:
        if task.status != "input_required" and "V-22" not in self.server.breaks:
            task.status = "input_required"
            task.updated_at = self.server._now()

    async def polled_waiting(self, task: FaultTask, channel: Channel) -> None:
        if "V-22" in self.server.breaks:
            await self._ask(task, channel)  # asked while the task says working

    async def _ask(self, task: FaultTask, channel: Channel) -> None:
        """Send the task's first question as a request to the client."""
        if task.asked is not None or not task.questions:
            return
        _, question = task.questions[0]
        params = dict(question["params"])
        if "V-21" not in self.server.breaks:
            params["_meta"] = {RELATED_TASK_META: {"taskId": task.task_id}}
        task.asked = "sending"
        if self.server.ask_on == "get" and self._get_opened is not None:
            while not self._get_streams:  # over HTTP: wait for the client's GET stream
                if self._get_opened.is_set():  # one opened and closed again
                    self._get_opened = anyio.Event()
                await self._get_opened.wait()
            channel = self._get_streams[-1]
        request_id = await self.server._request(channel, question["method"], params)
        task.asked = request_id
        self._asking[request_id] = task

    def client_answered(self, message: JSON) -> None:
        task = self._asking.pop(message.get("id"), None)
        if task is None:
            return
        task.answers.append(message.get("result", message.get("error")))
        task.asked = None
        task.questions.pop(0)
        if task.status == "input_required":
            task.status = "working"
            task.updated_at = self.server._now()
        task.answered.set()

    # -- tasks/result, cancel, list ---------------------------------------------------------

    async def tasks_result(self, params: JSON, channel: Channel) -> JSON | Refusal:
        server = self.server
        task = server._find(params)
        if isinstance(task, tuple):
            return task
        if task.questions and task.status not in TERMINAL:
            await self._ask(task, channel)
            while task.questions and task.status not in TERMINAL:
                answered = task.answered = anyio.Event()
                await answered.wait()
        if task.status not in TERMINAL:
            if "V-11" in server.breaks:
                return (-32602, f"task {task.task_id} is not finished yet", None)
            if task.answers:
                # an asking task blocks until its polls end it, or its own pace does
                with anyio.move_on_after(server.self_paced):
                    await task.ended.wait()
                server._finish(task)
            else:
                server._finish(task)
        meta = {RELATED_TASK_META: {"taskId": task.task_id}}
        if "V-12" in server.breaks:
            return {"_meta": meta}
        if task.status == "cancelled":
            return (-32603, "the task was cancelled", None)
        if task.tool == "protocol_error":
            return (-32603, "failed on purpose", None)
        return {**result_json(text_of(task), is_error=task.tool == "fail"), "_meta": meta}

    def tasks_cancel(self, task: FaultTask) -> JSON | Refusal:
        server = self.server
        if task.status in TERMINAL and "V-14" not in server.breaks:
            return (-32602, f"task {task.task_id} is already {task.status}", None)
        if "C-41" in server.breaks:
            return {**server._task(task), "status": "cancelled"}
        if task.status not in TERMINAL:
            task.status = "cancelled"
            task.updated_at = server._now()
            task.ended.set()
        return server._task(task)

    def tasks_list(self, params: JSON) -> JSON | Refusal:
        return self.server._listing()
