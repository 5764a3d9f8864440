"""A scripted MCP tasks server that keeps the rules unless told to break some.

:class:`FaultServer` speaks either generation with a fixed set of tools (below), in process
(:meth:`FaultServer.memory`, a connected transport) or over real HTTP on 127.0.0.1
(:meth:`FaultServer.http`, on :class:`HostileHTTPServer`). Its tasks move by polls, never by
the clock: a task is ``working`` for ``steps`` ``tasks/get`` answers, then terminal (a
2025-11-25 ``tasks/result`` ends it at once), so a test needs no sleeps.

Drive it two ways:

- ``breaks={"V-08", ...}``: break exactly those rules (:data:`BREAKABLE` lists what each
  does), so a checker that should catch a rule can be shown to catch it;
- ``on_message``: a coroutine that sees every request first and returns None (answer as
  usual), a JSON-RPC object (send it instead), ``bytes`` (sent as they are: a malformed
  message) or :data:`DROP` (no answer: over HTTP the connection closes). A slow answer is a
  hook that sleeps, then returns None; an illegal transition is a hook that answers a
  ``tasks/get`` with a status of its choosing.

Over HTTP each 2025-11-25 ``initialize`` gets its own ``Mcp-Session-Id`` (``fault-1``,
``fault-2``, ...) and ``tasks/list`` lists only that session's tasks (V-28 broken: every
session's); 2026-07-28 errors carry their HTTP status (404 for -32601, 400 for -32020 to
-32022, E S24).

Tools (``execution.taskSupport`` in brackets): ``echo`` [optional] answers its ``text``;
``need_task`` [required] the same; ``fail`` [required] ends in a tool error (2025-11-25: a
``failed`` task; 2026-07-28: ``completed`` with ``isError``, E S7); ``protocol_error``
[optional] ends ``failed`` with a JSON-RPC error; ``slow`` [optional] stays ``working`` until
cancelled; ``plain`` [no execution: task forbidden].
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import attrs

from .._generation import Generation
from .._transports.base import Transport
from .._transports.memory import MemoryServerEnd, memory_transport_pair
from ..models import RELATED_TASK_META, TASKS_EXTENSION
from ._http import Conn, HostileHTTPServer, Received

__all__ = ["BREAKABLE", "DROP", "FaultServer", "Hook", "raw_json"]

JSON = dict[str, Any]


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Final = _Drop()
"""An ``on_message`` answer: send nothing back (HTTP: close the connection unanswered)."""

Answer = JSON | bytes | _Drop | None
Hook = Callable[[JSON], Awaitable[Answer]]

BREAKABLE: Mapping[str, str] = {
    "V-05": "a created task is already input_required",
    "V-08": "tasks/get leaves ttl out",
    "V-12": "tasks/result answers only _meta",
    "V-13": "a failed task has no statusMessage",
    "V-14": "cancelling a terminal task succeeds",
    "V-16": "need_task called without a task answers a plain result",
    "V-17": "a task for the plain tool is accepted",
    "V-19": "tasks/list leaves the newest task out",
    "C-41": "tasks/cancel answers cancelled but the task goes on working",
    "E S2": "a task is created for a call that did not declare the extension",
    "E S3": "need_task called without the extension answers a plain result",
    "E S5": "the first tasks/get of each task answers -32602",
    "E S16": "tasks/result answers a result",
    "E S17": "tasks/list answers a result",
    "V-28": "tasks/list lists the tasks of every session, not only the caller's (over HTTP; "
    "without it each 2025-11-25 session has its own Mcp-Session-Id and sees its own tasks)",
}
"""The rules :class:`FaultServer` can break, and how it breaks each."""

_TOOLS: dict[str, str | None] = {
    "echo": "optional",
    "need_task": "required",
    "fail": "required",
    "protocol_error": "optional",
    "slow": "optional",
    "plain": None,
}
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_ERROR_STATUS = {-32601: 404, -32020: 400, -32021: 400, -32022: 400}  # 2026-07-28 HTTP, E S24
_EPOCH = dt.datetime(2026, 8, 1, tzinfo=dt.timezone.utc)


@attrs.define
class _Task:
    task_id: str
    tool: str
    text: str
    ttl: int | None
    created_at: str
    updated_at: str
    status: str = "working"
    polls: int = 0
    gets: int = 0
    cancel_answered: bool = False
    session: str | None = None


class FaultServer:
    """A scripted tasks server for ``generation``; see the module docstring."""

    def __init__(
        self,
        generation: Generation,
        *,
        breaks: Iterable[str] = (),
        on_message: Hook | None = None,
        steps: int = 2,
    ) -> None:
        self.generation = generation
        self.breaks = frozenset(breaks)
        unknown = self.breaks - BREAKABLE.keys()
        if unknown:
            raise ValueError(f"FaultServer cannot break {sorted(unknown)}; see BREAKABLE")
        self.on_message = on_message
        self.steps = steps
        self.tasks: dict[str, _Task] = {}
        self.received: list[JSON] = []
        """Every message the server read, in order."""
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)
        self._sessions = itertools.count(1)
        self._session: str | None = None  # the session of the request being answered

    @property
    def _g2(self) -> bool:
        return self.generation is Generation.V2026_07_28

    # -- serving ----------------------------------------------------------------------------

    @asynccontextmanager
    async def http(self) -> AsyncIterator[HostileHTTPServer]:
        """Serve on a free port of 127.0.0.1: ``async with server.http() as h: h.url``."""

        async def on_request(request: Received, conn: Conn) -> None:
            body = request.json
            session = request.headers.get("mcp-session-id")
            if not self._g2 and isinstance(body, dict) and body.get("method") == "initialize":
                session = f"fault-{next(self._sessions)}"
            answer = await self.answer(body, session=session) if isinstance(body, dict) else None
            if answer is None or isinstance(answer, _Drop):
                return
            if isinstance(answer, bytes):
                length = str(len(answer))
                await conn.head(200, {"Content-Type": "application/json", "Content-Length": length})
                await conn.write(answer)
                return
            headers = {} if self._g2 else {"Mcp-Session-Id": session or "fault-0"}
            status = 200
            error = answer.get("error")
            if self._g2 and isinstance(error, dict):
                status = _ERROR_STATUS.get(error.get("code"), 200)  # type: ignore[arg-type]
            await conn.json(answer, status=status, headers=headers)

        async with HostileHTTPServer(on_request, on_initialize=on_request) as server:
            yield server

    @asynccontextmanager
    async def memory(self) -> AsyncIterator[Transport]:
        """An unopened client transport wired to this server in process."""
        transport, end = memory_transport_pair()
        async with anyio.create_task_group() as group:
            group.start_soon(self._serve_memory, end)
            try:
                yield transport
            finally:
                group.cancel_scope.cancel()

    async def _serve_memory(self, end: MemoryServerEnd) -> None:
        try:
            while True:
                message = await end.receive()
                if not isinstance(message, dict):
                    continue
                answer = await self.answer(message)
                if isinstance(answer, bytes):
                    await end.send_raw(answer)
                elif isinstance(answer, dict):
                    await end.send(answer)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    # -- the protocol -----------------------------------------------------------------------

    async def answer(self, message: JSON, *, session: str | None = None) -> Answer:
        """The answer to one message the client sent (None for a notification or a reply);
        ``session``: the HTTP session it came in (tasks/list lists only that session's tasks
        unless V-28 is broken)."""
        self.received.append(message)
        if "method" not in message or "id" not in message:
            return None
        if self.on_message is not None:
            scripted = await self.on_message(message)
            if scripted is not None:
                return scripted
        method = message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        handler = getattr(self, "_m_" + method.replace("/", "_"), None)
        if handler is None:
            return self._error(message, -32601, f"method {method} not found")
        self._session = session  # read by the (synchronous) handler below
        out: JSON | tuple[int, str, Any] = handler(params)
        if isinstance(out, tuple):
            code, text, data = out
            return self._error(message, code, text, data)
        if self._g2:
            out.setdefault("resultType", "complete")
        return {"jsonrpc": "2.0", "id": message["id"], "result": out}

    @staticmethod
    def _error(message: JSON, code: int, text: str, data: Any = None) -> JSON:
        error: JSON = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}

    def _now(self) -> str:
        moment = _EPOCH + dt.timedelta(seconds=next(self._clock))
        return moment.isoformat().replace("+00:00", "Z")

    def _declares(self, params: JSON) -> bool:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        caps = (meta or {}).get("io.modelcontextprotocol/clientCapabilities")
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions

    def _m_initialize(self, params: JSON) -> JSON:
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "fault-server", "version": "0"},
        }

    def _m_server_discover(self, params: JSON) -> JSON:
        return {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
            "serverInfo": {"name": "fault-server", "version": "0"},
        }

    def _m_ping(self, params: JSON) -> JSON:
        return {}

    def _m_tools_list(self, params: JSON) -> JSON:
        tools = []
        for name, support in _TOOLS.items():
            tool: JSON = {"name": name, "inputSchema": {"type": "object"}}
            if support is not None:
                tool["execution"] = {"taskSupport": support}
            tools.append(tool)
        return {"tools": tools}

    def _result(self, text: str, *, is_error: bool = False) -> JSON:
        return {"content": [{"type": "text", "text": text}], "isError": is_error}

    def _m_tools_call(self, params: JSON) -> JSON | tuple[int, str, Any]:
        name = params.get("name")
        if name not in _TOOLS:
            return (-32602, f"unknown tool {name!r}", None)
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        text = str((arguments or {}).get("text", name))
        support = _TOOLS[name]
        if self._g2:
            wants_task = self._declares(params) or "E S2" in self.breaks
        else:
            wants_task = isinstance(params.get("task"), dict)
        if not wants_task:
            if support == "required":
                if self._g2 and "E S3" not in self.breaks:
                    data: JSON = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
                    return (-32021, "this tool runs only as a task", data)
                if not self._g2 and "V-16" not in self.breaks:
                    return (-32601, "this tool must be called as a task", None)
            return self._result(text)
        if support is None and not self._g2 and "V-17" not in self.breaks:
            return (-32601, "this tool does not run as a task", None)
        if support is None and self._g2:
            return self._result(text)
        requested = params.get("task", {}).get("ttl") if not self._g2 else None
        now = self._now()
        task = _Task(f"task-{next(self._ids)}", str(name), text, requested, now, now)
        task.session = self._session
        if "V-05" in self.breaks:
            task.status = "input_required"
        self.tasks[task.task_id] = task
        if self._g2:
            return {**self._task(task, detailed=False), "resultType": "task"}
        return {"task": self._task(task, detailed=False)}

    def _task(self, task: _Task, *, detailed: bool = True) -> JSON:
        out: JSON = {
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": task.created_at,
            "lastUpdatedAt": task.updated_at,
        }
        if self._g2:
            out["ttlMs"] = 60_000
            out["pollIntervalMs"] = 10
        else:
            if not (detailed and "V-08" in self.breaks):
                out["ttl"] = task.ttl
            out["pollInterval"] = 10
        if task.status == "failed" and "V-13" not in self.breaks:
            out["statusMessage"] = "failed on purpose"
        if self._g2 and detailed:
            if task.status == "completed":
                out["result"] = {
                    **self._result(task.text, is_error=task.tool == "fail"),
                    "resultType": "complete",
                }
            elif task.status == "failed":
                out["error"] = {"code": -32603, "message": "failed on purpose"}
        return out

    def _finish(self, task: _Task) -> None:
        if task.status in _TERMINAL:
            return
        if task.tool == "protocol_error" or (task.tool == "fail" and not self._g2):
            task.status = "failed"
        else:
            task.status = "completed"
        task.updated_at = self._now()

    def _find(self, params: JSON) -> _Task | tuple[int, str, Any]:
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if task is None:
            return (-32602, f"no task {params.get('taskId')!r}", None)
        return task

    def _m_tasks_get(self, params: JSON) -> JSON | tuple[int, str, Any]:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        task.gets += 1
        if "E S5" in self.breaks and task.gets == 1:
            return (-32602, f"no task {task.task_id!r} (yet)", None)
        if task.status not in _TERMINAL and task.tool != "slow":
            task.polls += 1
            if task.polls >= self.steps:
                self._finish(task)
        return self._task(task)

    def _m_tasks_result(self, params: JSON) -> JSON | tuple[int, str, Any]:
        if self._g2:
            if "E S16" in self.breaks:
                return {"content": []}
            return (-32601, "tasks/result is not a 2026-07-28 method", None)
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        self._finish(task)
        meta = {RELATED_TASK_META: {"taskId": task.task_id}}
        if "V-12" in self.breaks:
            return {"_meta": meta}
        if task.status == "cancelled":
            return (-32603, "the task was cancelled", None)
        if task.tool == "protocol_error":
            return (-32603, "failed on purpose", None)
        return {**self._result(task.text, is_error=task.tool == "fail"), "_meta": meta}

    def _m_tasks_cancel(self, params: JSON) -> JSON | tuple[int, str, Any]:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        if self._g2:
            if task.status not in _TERMINAL:
                task.status = "cancelled"
                task.updated_at = self._now()
            return {}
        if task.status in _TERMINAL and "V-14" not in self.breaks:
            return (-32602, f"task {task.task_id} is already {task.status}", None)
        if "C-41" in self.breaks:
            return {**self._task(task), "status": "cancelled"}
        if task.status not in _TERMINAL:
            task.status = "cancelled"
            task.updated_at = self._now()
        return self._task(task)

    def _m_tasks_list(self, params: JSON) -> JSON | tuple[int, str, Any]:
        if self._g2 and "E S17" not in self.breaks:
            return (-32601, "tasks/list is not a 2026-07-28 method", None)
        tasks = list(self.tasks.values())
        if self._session is not None and "V-28" not in self.breaks:
            tasks = [t for t in tasks if t.session in (None, self._session)]
        if "V-19" in self.breaks and tasks:
            tasks = tasks[:-1]
        return {"tasks": [self._task(t) for t in tasks]}

    def _m_tasks_update(self, params: JSON) -> JSON | tuple[int, str, Any]:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        return {}


def raw_json(value: Any) -> bytes:
    """``value`` as the bytes of one message (for an ``on_message`` hook to mangle)."""
    return json.dumps(value).encode()
