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
cancelled; ``plain`` [no execution: task forbidden]; ``ask`` [optional] asks for input in its
task (``{"sampling": true}``: a ``sampling/createMessage``, else a form
``elicitation/create``); 2026-07-28 only: ``confirm`` [required] asks its input by MRTR
before it creates its task (E S21).

Input in a task (``ask``): 2025-11-25, the task goes ``input_required`` at its first poll and
the server sends its ``elicitation/create`` (tagged with related-task ``_meta``) on the stream
of the client's ``tasks/result`` (in process: on the connection; over HTTP: an SSE response),
which blocks; once the client answers, the task is ``working`` again, ends after ``steps`` more
polls, and ``tasks/result`` answers then. Over HTTP, ``ask_on="get"`` sends the question on the
client's standalone GET SSE stream instead (it waits until the client opens one), and
``tasks/result`` answers as plain JSON once the task ends. 2026-07-28, ``tasks/get`` shows
``input_required`` with ``inputRequests`` (keys ``q1``, then ``q2``), each answered by
``tasks/update`` (an empty ack); then the task runs ``steps`` polls. :data:`PRESETS` names
servers that break several rules at once, as servers in the wild do (:meth:`FaultServer.preset`).
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
from ._http import Conn, HostileHTTPServer, Received, sse_event

__all__ = ["BREAKABLE", "DROP", "PRESETS", "FaultServer", "Hook", "raw_json"]

JSON = dict[str, Any]


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Final = _Drop()
"""An ``on_message`` answer: send nothing back (HTTP: close the connection unanswered)."""

Answer = JSON | bytes | _Drop | None
Hook = Callable[[JSON], Awaitable[Answer]]

BREAKABLE: Mapping[str, str] = {
    "V-02": "a roots/list request goes out before the initialize answer (over HTTP: on the "
    "initialize response's SSE stream)",
    "V-05": "a created task is already input_required",
    "V-08": "tasks/get leaves ttl out",
    "V-12": "tasks/result answers only _meta",
    "V-13": "a failed task has no statusMessage",
    "V-14": "cancelling a terminal task succeeds",
    "V-16": "need_task called without a task answers a plain result",
    "V-17": "a task for the plain tool is accepted",
    "V-11": "tasks/result of an unfinished task answers -32602 at once instead of blocking "
    "(after any question it asks)",
    "V-19": "tasks/list leaves the newest task out",
    "V-21": "ask's in-task request carries no related-task _meta",
    "V-22": "ask's task stays working while its question is open (asked on the stream of the "
    "first tasks/get after creation)",
    "V-26": "every tasks/get moves the task's createdAt",
    "C-41": "tasks/cancel answers cancelled but the task goes on working",
    "E S2": "a task is created for a call that did not declare the extension",
    "E S3": "need_task called without the extension answers a plain result",
    "E S5": "the first tasks/get of each task answers -32602",
    "E S7": "fail's isError result ends its task failed (the result inlined next to an error)",
    "E S13": "the tasks/update ack carries a status",
    "E S14": "ask's second input request reuses the key of its first (shown once, then dropped)",
    "E S16": "tasks/result answers a result",
    "E S17": "tasks/list answers a result",
    "E S21": "confirm creates its task at once and asks its input inside it, not by MRTR first",
    "V-27": "over HTTP, a bogus MCP-Protocol-Version is served (not 400) and a session the "
    "client ended with DELETE goes on (not 404)",
    "V-28": "tasks/list lists the tasks of every session, not only the caller's (over HTTP; "
    "without it each 2025-11-25 session has its own Mcp-Session-Id and sees its own tasks)",
}
"""The rules :class:`FaultServer` can break, and how it breaks each."""

PRESETS: Mapping[str, tuple[Generation, frozenset[str], str]] = {
    "deviating-2025": (
        Generation.V2025_11_25,
        frozenset({"V-11", "V-21", "V-26"}),
        "answers tasks/result for an unfinished task with -32602 instead of blocking, sends "
        "in-task elicitations without related-task metadata, and changes a task's createdAt "
        "between snapshots",
    ),
}
"""Named servers with several deviations: name -> (generation, the rules broken, what it does)."""

_TOOLS: dict[str, str | None] = {
    "echo": "optional",
    "need_task": "required",
    "fail": "required",
    "protocol_error": "optional",
    "slow": "optional",
    "plain": None,
    "ask": "optional",
    "confirm": "required",
}
_GEN2_ONLY = frozenset({"confirm"})
_ASK_ON = frozenset({"result", "get"})
_FORM = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
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
    questions: list[tuple[str, JSON]] = attrs.Factory(list)
    """Input still to ask, in order: (key, {"method", "params"})."""
    asked: Any = None
    """2025-11-25: the id of the request sent for the first question, until it is answered."""
    answers: list[Any] = attrs.Factory(list)
    shown_reused: bool = False
    answered: anyio.Event = attrs.Factory(anyio.Event)
    ended: anyio.Event = attrs.Factory(anyio.Event)

    session: str | None = None


class _Channel:
    """Where a server->client request goes: the stream of the request being answered."""

    async def push(self, message: JSON) -> None:  # pragma: no cover - nothing to push to
        return None


class _MemoryChannel(_Channel):
    def __init__(self, end: MemoryServerEnd) -> None:
        self._end = end

    async def push(self, message: JSON) -> None:
        await self._end.send(message)


class _SSEChannel(_Channel):
    """The SSE response of one POST: opened at the first push, the answer its last event."""

    def __init__(self, conn: Conn, headers: dict[str, str]) -> None:
        self._conn = conn
        self._headers = headers
        self.opened = False

    async def push(self, message: JSON) -> None:
        if not self.opened:
            self.opened = True
            await self._conn.head(200, {"Content-Type": "text/event-stream", **self._headers})
        await self._conn.write(sse_event(message))


class FaultServer:
    """A scripted tasks server for ``generation``; see the module docstring."""

    def __init__(
        self,
        generation: Generation,
        *,
        breaks: Iterable[str] = (),
        on_message: Hook | None = None,
        steps: int = 2,
        ask_on: str = "result",
    ) -> None:
        if ask_on not in _ASK_ON:
            raise ValueError(f"ask_on is one of {sorted(_ASK_ON)}, not {ask_on!r}")
        if ask_on == "get" and generation is Generation.V2026_07_28:
            raise ValueError("2026-07-28 asks by inputRequests; it has no GET stream (E C56)")
        self.generation = generation
        self.ask_on = ask_on
        """Where a 2025-11-25 in-task question goes over HTTP: ``"result"``, the stream of
        the request being answered (the blocking tasks/result, or the poll V-22 broken asks
        on); ``"get"``, the client's GET SSE stream (the question, and the request that would
        have carried it, wait until one is open). In process there is one connection: both
        are it."""
        self.breaks = frozenset(breaks)
        unknown = self.breaks - BREAKABLE.keys()
        if unknown:
            raise ValueError(f"FaultServer cannot break {sorted(unknown)}; see BREAKABLE")
        self.on_message = on_message
        self.steps = steps
        self.tasks: dict[str, _Task] = {}
        self.received: list[JSON] = []
        """Every message the server read, in order."""
        self.ended_sessions: set[str] = set()
        """2025-11-25 HTTP sessions the client ended with DELETE (then answered 404)."""
        self.sent_requests: list[JSON] = []
        """Every request the server sent the client, in order."""
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)
        self._request_ids = itertools.count(1)
        self._asking: dict[Any, _Task] = {}
        self._get_streams: list[_SSEChannel] = []
        self._get_opened: anyio.Event | None = None
        self.get_streams_opened = 0
        """How many GET SSE streams clients opened (over HTTP)."""

        self._sessions = itertools.count(1)
        self._session: str | None = None  # the session of the request being answered

    @classmethod
    def preset(
        cls, name: str, *, on_message: Hook | None = None, steps: int = 2, ask_on: str = "result"
    ) -> FaultServer:
        """The server :data:`PRESETS` names (its generation, the rules it breaks)."""
        try:
            generation, breaks, _ = PRESETS[name]
        except KeyError:
            raise ValueError(f"no FaultServer preset {name!r}; see PRESETS") from None
        return cls(generation, breaks=breaks, on_message=on_message, steps=steps, ask_on=ask_on)

    @property
    def _g2(self) -> bool:
        return self.generation is Generation.V2026_07_28

    # -- serving ----------------------------------------------------------------------------

    @asynccontextmanager
    async def http(self) -> AsyncIterator[HostileHTTPServer]:
        """Serve on a free port of 127.0.0.1: ``async with server.http() as h: h.url``.

        A request that sends the client requests of its own answers as an SSE stream."""

        async def on_request(request: Received, conn: Conn) -> None:
            body = request.json
            session = request.headers.get("mcp-session-id")
            if not self._g2 and "V-27" not in self.breaks:
                version = request.headers.get("mcp-protocol-version")
                rpc_id = body.get("id") if isinstance(body, dict) else None
                if version is not None and version != self.generation.value:
                    refused = self._error({"id": rpc_id}, -32600, f"unsupported version {version}")
                    await conn.json(refused, status=400)
                    return
                if session is not None and session in self.ended_sessions:
                    await conn.json(
                        self._error({"id": rpc_id}, -32600, "session ended"), status=404
                    )
                    return
            if not self._g2 and isinstance(body, dict) and body.get("method") == "initialize":
                session = f"fault-{next(self._sessions)}"
            headers = {} if self._g2 else {"Mcp-Session-Id": session or "fault-0"}
            channel = _SSEChannel(conn, headers)
            answer = (
                await self.answer(body, channel, session=session)
                if isinstance(body, dict)
                else None
            )
            if channel.opened:
                if isinstance(answer, dict):
                    await conn.write(sse_event(answer))
                elif isinstance(answer, bytes):
                    await conn.write(b"data: " + answer + b"\n\n")
                return
            if answer is None or isinstance(answer, _Drop):
                return
            if isinstance(answer, bytes):
                length = str(len(answer))
                await conn.head(200, {"Content-Type": "application/json", "Content-Length": length})
                await conn.write(answer)
                return
            status = 200
            error = answer.get("error")
            if self._g2 and isinstance(error, dict):
                status = _ERROR_STATUS.get(error.get("code"), 200)  # type: ignore[arg-type]
            await conn.json(answer, status=status, headers=headers)

        async def on_delete(request: Received, conn: Conn) -> None:
            session = request.headers.get("mcp-session-id")
            if self._g2:
                await conn.head(405, {"Content-Length": "0"})
                return
            if session is not None:
                self.ended_sessions.add(session)
            await conn.head(200, {"Content-Length": "0"})

        async def on_response(request: Received, conn: Conn) -> None:
            body = request.json
            if isinstance(body, dict):
                await self.answer(body)
            await conn.head(202, {"Content-Length": "0"})

        async def on_get(request: Received, conn: Conn) -> None:
            # the standalone GET stream: open until the client goes; asks go out on it
            if self._g2:
                await conn.head(405, {"Content-Length": "0"})
                return
            headers = {"Mcp-Session-Id": request.headers.get("mcp-session-id") or "fault-0"}
            await conn.head(200, {"Content-Type": "text/event-stream", **headers})
            channel = _SSEChannel(conn, headers)
            channel.opened = True
            self.get_streams_opened += 1
            self._get_streams.append(channel)
            if self._get_opened is not None:
                self._get_opened.set()
            try:
                await conn.client_closed()
            finally:
                self._get_streams.remove(channel)

        self._get_opened = anyio.Event()
        async with HostileHTTPServer(
            on_request,
            on_initialize=on_request,
            on_response=on_response,
            on_delete=on_delete,
            on_get=on_get,
        ) as server:
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
        channel = _MemoryChannel(end)

        async def one(message: JSON) -> None:
            answer = await self.answer(message, channel)
            try:
                if isinstance(answer, bytes):
                    await end.send_raw(answer)
                elif isinstance(answer, dict):
                    await end.send(answer)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return

        async with anyio.create_task_group() as group:
            while True:
                try:
                    message = await end.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    group.cancel_scope.cancel()
                    return
                if not isinstance(message, dict):
                    continue
                if "method" in message and "id" in message:
                    # each request on its own: one that waits for the client (a blocking
                    # tasks/result asking a question) holds up nothing else
                    group.start_soon(one, message)
                else:
                    await self.answer(message, channel)

    # -- the protocol -----------------------------------------------------------------------

    async def answer(
        self, message: JSON, channel: _Channel | None = None, *, session: str | None = None
    ) -> Answer:
        """The answer to one message the client sent (None for a notification or a reply).

        ``channel`` is where requests to the client go while answering (None: nowhere);
        ``session``: the HTTP session it came in (tasks/list lists only that session's tasks
        unless V-28 is broken)."""
        self.received.append(message)
        if "method" not in message:
            self._client_answered(message)
            return None
        if "id" not in message:
            return None
        if self.on_message is not None:
            scripted = await self.on_message(message)
            if scripted is not None:
                return scripted
        method = message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        out: JSON | tuple[int, str, Any]
        slow = getattr(self, "_a_" + method.replace("/", "_"), None)
        if slow is not None:
            out = await slow(params, channel or _Channel())
        else:
            handler = getattr(self, "_m_" + method.replace("/", "_"), None)
            if handler is None:
                return self._error(message, -32601, f"method {method} not found")
            self._session = session  # read by the (synchronous) handler below
            out = handler(params)
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

    # -- server->client requests -----------------------------------------------------------

    async def _request(self, channel: _Channel, method: str, params: JSON) -> Any:
        request_id = f"fault-{next(self._request_ids)}"
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.sent_requests.append(request)
        await channel.push(request)
        return request_id

    def _client_answered(self, message: JSON) -> None:
        task = self._asking.pop(message.get("id"), None)
        if task is None:
            return
        task.answers.append(message.get("result", message.get("error")))
        task.asked = None
        task.questions.pop(0)
        if task.status == "input_required":
            task.status = "working"
            task.updated_at = self._now()
        task.answered.set()

    async def _ask(self, task: _Task, channel: _Channel) -> None:
        """2025-11-25: send the task's first question as a request to the client."""
        if task.asked is not None or not task.questions:
            return
        _, question = task.questions[0]
        params = dict(question["params"])
        if "V-21" not in self.breaks:
            params["_meta"] = {RELATED_TASK_META: {"taskId": task.task_id}}
        task.asked = "sending"
        if self.ask_on == "get" and self._get_opened is not None:
            while not self._get_streams:  # over HTTP: wait for the client's GET stream
                if self._get_opened.is_set():  # one opened and closed again
                    self._get_opened = anyio.Event()
                await self._get_opened.wait()
            channel = self._get_streams[-1]
        request_id = await self._request(channel, question["method"], params)
        task.asked = request_id
        self._asking[request_id] = task

    def _questions(self, task: _Task, arguments: JSON) -> list[tuple[str, JSON]]:
        if arguments.get("sampling") is True:
            first: JSON = {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi?"}}],
                    "maxTokens": 16,
                },
            }
        else:
            first = {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": f"{task.text}?", "requestedSchema": _FORM},
            }
        if task.tool == "confirm" or not self._g2:
            return [("confirm" if task.tool == "confirm" else "q1", first)]
        second = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "and again?", "requestedSchema": _FORM},
        }
        return [("q1", first), ("q1" if "E S14" in self.breaks else "q2", second)]

    # -- methods ----------------------------------------------------------------------------

    async def _a_initialize(self, params: JSON, channel: _Channel) -> JSON:
        if "V-02" in self.breaks:
            await self._request(channel, "roots/list", {})
        return self._m_initialize(params)

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

    def _tools(self) -> dict[str, str | None]:
        return {n: s for n, s in _TOOLS.items() if self._g2 or n not in _GEN2_ONLY}

    def _m_tools_list(self, params: JSON) -> JSON:
        tools = []
        for name, support in self._tools().items():
            tool: JSON = {"name": name, "inputSchema": {"type": "object"}}
            if support is not None:
                tool["execution"] = {"taskSupport": support}
            tools.append(tool)
        return {"tools": tools}

    def _result(self, text: str, *, is_error: bool = False) -> JSON:
        return {"content": [{"type": "text", "text": text}], "isError": is_error}

    def _m_tools_call(self, params: JSON) -> JSON | tuple[int, str, Any]:
        name = params.get("name")
        tools = self._tools()
        if name not in tools:
            return (-32602, f"unknown tool {name!r}", None)
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        arguments = arguments or {}
        text = str(arguments.get("text", name))
        support = tools[name]
        if self._g2:
            # E S2 broken: a task anyway (confirm, task-only, keeps -32021: E S3 holds)
            wants_task = self._declares(params) or ("E S2" in self.breaks and name != "confirm")
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
        responses = params.get("inputResponses")
        mrtr = name == "confirm" and "E S21" not in self.breaks
        if mrtr and not (isinstance(responses, dict) and "confirm" in responses):
            probe = _Task("", "confirm", text, None, "", "")
            return {
                "resultType": "input_required",
                "inputRequests": dict(self._questions(probe, arguments)),
                "requestState": "fault-confirm",
            }
        requested = params.get("task", {}).get("ttl") if not self._g2 else None
        now = self._now()
        task = _Task(f"task-{next(self._ids)}", str(name), text, requested, now, now)
        if name == "ask" or (name == "confirm" and not mrtr):
            task.questions = self._questions(task, arguments)
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
            is_error = task.tool == "fail"
            result = {**self._result(_text(task), is_error=is_error), "resultType": "complete"}
            if task.status == "completed":
                out["result"] = result
            elif task.status == "failed":
                out["error"] = {"code": -32603, "message": "failed on purpose"}
                if is_error:  # E S7 broken: the tool's own isError result, failed
                    out["result"] = result
            elif task.status == "input_required" and task.questions:
                key, question = task.questions[0]
                out["inputRequests"] = {key: question}
        return out

    def _finish(self, task: _Task) -> None:
        if task.status in _TERMINAL:
            return
        if task.tool == "protocol_error" or (
            task.tool == "fail" and (not self._g2 or "E S7" in self.breaks)
        ):
            task.status = "failed"
        else:
            task.status = "completed"
        task.updated_at = self._now()
        task.ended.set()

    def _find(self, params: JSON) -> _Task | tuple[int, str, Any]:
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if task is None:
            return (-32602, f"no task {params.get('taskId')!r}", None)
        return task

    async def _a_tasks_get(self, params: JSON, channel: _Channel) -> JSON | tuple[int, str, Any]:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        task.gets += 1
        if "E S5" in self.breaks and task.gets == 1:
            return (-32602, f"no task {task.task_id!r} (yet)", None)
        if task.questions and task.status not in _TERMINAL:
            self._waiting(task)
            if not self._g2 and "V-22" in self.breaks:
                await self._ask(task, channel)  # asked while the task says working
        elif task.status not in _TERMINAL and task.tool != "slow":
            task.polls += 1
            if task.polls >= self.steps:
                self._finish(task)
        out = self._task(task)
        if "V-26" in self.breaks:
            moved = dt.datetime.fromisoformat(task.created_at.replace("Z", "+00:00"))
            moved += dt.timedelta(milliseconds=task.gets)
            out["createdAt"] = moved.isoformat().replace("+00:00", "Z")
        return out

    def _waiting(self, task: _Task) -> None:
        """A poll of a task with a question open: it is input_required (unless V-22 is
        broken); 2026-07-28 with E S14 broken, a reused key shown once is dropped next."""
        if self._g2 and task.shown_reused:
            task.shown_reused = False
            task.questions.pop(0)
            if not task.questions:
                task.status = "working"
                task.updated_at = self._now()
                return
        if self._g2 and len(task.questions) == 1 and "E S14" in self.breaks and task.answers:
            task.shown_reused = True
        if task.status != "input_required" and (self._g2 or "V-22" not in self.breaks):
            task.status = "input_required"
            task.updated_at = self._now()

    async def _a_tasks_result(self, params: JSON, channel: _Channel) -> JSON | tuple[int, str, Any]:
        if self._g2:
            if "E S16" in self.breaks:
                return {"content": []}
            return (-32601, "tasks/result is not a 2026-07-28 method", None)
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        if task.questions and task.status not in _TERMINAL:
            await self._ask(task, channel)
            while task.questions and task.status not in _TERMINAL:
                answered = task.answered = anyio.Event()
                await answered.wait()
        if task.status not in _TERMINAL:
            if "V-11" in self.breaks:
                return (-32602, f"task {task.task_id} is not finished yet", None)
            if task.answers:
                await task.ended.wait()  # an asking task blocks until its polls end it
            else:
                self._finish(task)
        meta = {RELATED_TASK_META: {"taskId": task.task_id}}
        if "V-12" in self.breaks:
            return {"_meta": meta}
        if task.status == "cancelled":
            return (-32603, "the task was cancelled", None)
        if task.tool == "protocol_error":
            return (-32603, "failed on purpose", None)
        return {**self._result(_text(task), is_error=task.tool == "fail"), "_meta": meta}

    def _m_tasks_cancel(self, params: JSON) -> JSON | tuple[int, str, Any]:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        if self._g2:
            if task.status not in _TERMINAL:
                task.status = "cancelled"
                task.updated_at = self._now()
                task.ended.set()
            return {}
        if task.status in _TERMINAL and "V-14" not in self.breaks:
            return (-32602, f"task {task.task_id} is already {task.status}", None)
        if "C-41" in self.breaks:
            return {**self._task(task), "status": "cancelled"}
        if task.status not in _TERMINAL:
            task.status = "cancelled"
            task.updated_at = self._now()
            task.ended.set()
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
        responses = params.get("inputResponses")
        if isinstance(responses, dict) and task.questions:
            key, _ = task.questions[0]
            if key in responses and not task.shown_reused:  # other keys: ignored (S13)
                task.questions.pop(0)
                task.answers.append(responses[key])
                if task.status == "input_required":
                    task.status = "working"
                    task.updated_at = self._now()
        if "E S13" in self.breaks:
            return {"status": task.status}
        return {}


def _text(task: _Task) -> str:
    """The tool's answer: its text, and what the client answered to its questions."""
    return task.text if not task.answers else f"{task.text}: {json.dumps(task.answers)}"


def raw_json(value: Any) -> bytes:
    """``value`` as the bytes of one message (for an ``on_message`` hook to mangle)."""
    return json.dumps(value).encode()
