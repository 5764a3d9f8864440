"""A scripted MCP tasks server that keeps the rules unless told to break some.

:class:`FaultServer` speaks either generation with a fixed set of tools (below), in process
(:meth:`FaultServer.memory`, a connected transport) or over real HTTP on 127.0.0.1
(:meth:`FaultServer.http`, on :class:`HostileHTTPServer`). Its tasks move by polls, not by
the clock: a task is ``working`` for ``steps`` ``tasks/get`` answers, then terminal (a
2025-11-25 ``tasks/result`` ends it at once), so a test needs no sleeps; only with
``self_paced`` does an answered 2025-11-25 task a blocking ``tasks/result`` waits on end by
itself. Its timestamps follow ``clock`` (the real time by default, each later than the last),
so ``createdAt`` plus ``ttl`` is a moment a client can believe.

Drive it two ways:

- ``breaks={"V-08", ...}``: break exactly those rules (:data:`BREAKABLE` lists what each
  does), so a checker that should catch a rule can be shown to catch it;
- ``on_message``: a coroutine that sees every request first and returns None (answer as
  usual), a JSON-RPC object (send it instead), ``bytes`` (sent as they are: a malformed
  message), :data:`DROP` (no answer: over HTTP the connection closes) or a :class:`Busy`
  (over HTTP only: an HTTP 429 or 503, with ``Retry-After`` when it has one; the request is
  not served, as a rate limiter in front of a server would refuse it). A slow answer is a
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

``listen=True`` (2026-07-28) serves ``subscriptions/listen``: the acknowledgement naming the
listened tasks it has, then a ``notifications/tasks`` (the task as ``tasks/get`` shows it, with
the listen's ``subscriptionId``) of each at once and at each change, and the graceful close
once every one has ended; without it a listen is -32601, as on the bundled peers.

What differs by generation is one dialect module each (``_fault_v2025_11_25.py``,
``_fault_v2026_07_28.py``) on ``_fault_base.py``; :data:`DIALECTS` is the only map from a
generation to its dialect. This module serves, keeps the tasks, and answers what both
generations answer alike (``ping``, ``tools/list``, ``tools/call``, ``tasks/get``,
``tasks/update``, ``initialize``, ``server/discover``). In 2026-07-28 its cacheable results
(``server/discover``, ``tools/list``) carry the caching hints ``cache_hints`` (SEP-2549).

May import: ``_generation``, ``models``, ``_io``, this package's ``_http`` and
``_fault_*`` modules.
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
from .._io.base import Transport
from .._io.memory import MemoryServerEnd, memory_transport_pair
from ..models import TASKS_EXTENSION
from ._fault_base import (
    FORM,
    JSON,
    TERMINAL,
    Channel,
    Dialect,
    FaultTask,
    MemoryChannel,
    Refusal,
    SSEChannel,
    wall_clock,
)
from ._fault_v2025_11_25 import Dialect2025
from ._fault_v2026_07_28 import Dialect2026
from ._http import Conn, HostileHTTPServer, Received, sse_event

__all__ = [
    "BREAKABLE",
    "DIALECTS",
    "DROP",
    "PRESETS",
    "Busy",
    "FaultServer",
    "Hook",
    "raw_json",
]


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Final = _Drop()
"""An ``on_message`` answer: send nothing back (HTTP: close the connection unanswered)."""


@attrs.frozen
class Busy:
    """An ``on_message`` answer over HTTP: HTTP ``status`` (429 or 503) with ``Retry-After:
    retry_after`` (left out when None) and a short text body, instead of serving the request.
    In process (:meth:`FaultServer.memory`) there is no HTTP status to send: ValueError."""

    status: int = attrs.field(default=429)
    retry_after: str | None = None

    @status.validator
    def _busy_status(self, attribute: attrs.Attribute[int], value: int) -> None:
        if value not in (429, 503):
            raise ValueError(f"a busy server answers 429 or 503, not {value}")


Answer = JSON | bytes | _Drop | Busy | None
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
    "E A-23": "need_task and fail called without the extension answer an earlier draft's "
    "-32003 (naming requiredCapabilities), not -32021",
    "E S7": "fail's isError result ends its task failed (the result inlined next to an error)",
    "E S13": "the tasks/update ack carries a status",
    "E S14": "ask's second input request reuses the key of its first (shown once, then dropped)",
    "E S16": "tasks/result answers a result",
    "E S17": "tasks/list answers a result",
    "E S21": "confirm creates its task at once and asks its input inside it, not by MRTR first",
    "E H1": "server/discover and tools/list answer without ttlMs and cacheScope (SEP-2549)",
    "E C40": "a listen (served with listen=True) pushes its first notifications/tasks before "
    "its acknowledgement",
    "E C41": "a listen's notifications/tasks carry no _meta subscriptionId",
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

DIALECTS: Mapping[Generation, type[Dialect]] = {
    Generation.V2025_11_25: Dialect2025,
    Generation.V2026_07_28: Dialect2026,
}
"""Every generation a FaultServer speaks, with its dialect (the registry)."""

_ASK_ON = frozenset({"result", "get"})


class FaultServer:
    """A scripted tasks server for ``generation`` (one of :data:`DIALECTS`, else ValueError);
    see the module docstring."""

    def __init__(
        self,
        generation: Generation,
        *,
        breaks: Iterable[str] = (),
        on_message: Hook | None = None,
        steps: int = 2,
        ask_on: str = "result",
        cache_hints: tuple[int, str] = (60_000, "public"),
        tasks_settings: Mapping[str, Any] | None = None,
        clock: Callable[[], dt.datetime] = wall_clock,
        self_paced: float | None = None,
        listen: bool = False,
        listen_delay: float = 0.0,
    ) -> None:
        if ask_on not in _ASK_ON:
            raise ValueError(f"ask_on is one of {sorted(_ASK_ON)}, not {ask_on!r}")
        try:
            dialect = DIALECTS[generation]
        except (KeyError, TypeError):
            known = ", ".join(g.value for g in DIALECTS)
            raise ValueError(f"no FaultServer speaks {generation!r} (known: {known})") from None
        self._dialect: Dialect = dialect(self)
        self._dialect.check_ask_on(ask_on)
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
        self.cache_hints = cache_hints
        """``(ttlMs, cacheScope)`` of every complete cacheable result (2026-07-28, SEP-2549:
        ``server/discover``, ``tools/list``); left out with E H1 broken."""
        self.tasks_settings: dict[str, Any] = dict(tasks_settings or {})
        """2026-07-28: the settings object of the tasks extension it advertises in
        ``server/discover`` and names in a -32021's ``requiredCapabilities`` (``{}``; a
        ``{"revision": ...}`` plays a server of a later revision of the extension)."""
        self.tasks: dict[str, FaultTask] = {}
        self.received: list[JSON] = []
        """Every message the server read, in order."""
        self.ended_sessions: set[str] = set()
        """2025-11-25 HTTP sessions the client ended with DELETE (then answered 404)."""
        self.sent_requests: list[JSON] = []
        """Every request the server sent the client, in order."""
        self._ids = itertools.count(1)
        self.clock = clock
        """What the server dates its tasks by (``createdAt``, ``lastUpdatedAt``): the real
        time by default, so a client applying the TTL backstop (C-37, E C26) from
        ``createdAt`` sees a live task; each stamp is later than the one before."""
        self._last_stamp: dt.datetime | None = None
        self.self_paced = self_paced
        """2025-11-25: seconds after which an answered asking task a client waits on with a
        blocking ``tasks/result`` ends by itself (None: only its polls end it). A client
        that follows its task by ``tasks/result`` alone (C-20 allows it) gets its result."""
        self._request_ids = itertools.count(1)
        self.get_streams_opened = 0
        """How many GET SSE streams clients opened (over HTTP, 2025-11-25)."""
        self._session: str | None = None  # the session of the request being answered
        self.serves_listen = listen
        """2026-07-28: serve ``subscriptions/listen`` (E C39-C44): the acknowledgement, then
        a ``notifications/tasks`` of each listened task at once and at each change, and the
        graceful close once every one has ended (False: -32601, as the bundled peers)."""
        self.listen_delay = listen_delay
        """Seconds a listen waits between its acknowledgement and its first pushes (0: none):
        a loaded server, whose pushes reach the client well after the acknowledgement."""
        self._request_id: Any = None  # the id of the request being answered
        self._changed: anyio.Event | None = None
        """Set (and dropped) at each stamp, that is at each change of a task: what a listen
        waits on (made by the first waiter, inside the server's loop)."""

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

    # -- serving ----------------------------------------------------------------------------

    @asynccontextmanager
    async def http(self) -> AsyncIterator[HostileHTTPServer]:
        """Serve on a free port of 127.0.0.1: ``async with server.http() as h: h.url``.

        A request that sends the client requests of its own answers as an SSE stream."""

        dialect = self._dialect

        async def on_request(request: Received, conn: Conn) -> None:
            body = request.json
            refused = dialect.http_refusal(request, body)
            if refused is not None:
                await conn.json(refused[0], status=refused[1])
                return
            session, headers = dialect.http_session(body, request.headers.get("mcp-session-id"))
            channel = SSEChannel(conn, headers)
            answer = (
                await self.answer(body, channel, session=session)
                if isinstance(body, dict)
                else None
            )
            if isinstance(answer, Busy):
                headers = {"Content-Type": "text/plain", "Content-Length": "9"}
                if answer.retry_after is not None:
                    headers["Retry-After"] = answer.retry_after
                await conn.head(answer.status, headers)
                await conn.write(b"slow down")
                return
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
            await conn.json(answer, status=dialect.http_status(answer), headers=headers)

        async def on_response(request: Received, conn: Conn) -> None:
            body = request.json
            if isinstance(body, dict):
                await self.answer(body)
            await conn.head(202, {"Content-Length": "0"})

        dialect.serving_http()
        async with HostileHTTPServer(
            on_request,
            on_initialize=on_request,
            on_response=on_response,
            on_delete=dialect.on_delete,
            on_get=dialect.on_get,
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
        channel = MemoryChannel(end)

        async def one(message: JSON) -> None:
            answer = await self.answer(message, channel)
            if isinstance(answer, Busy):
                raise TypeError("a Busy answer is an HTTP status: serve with server.http()")
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
        self, message: JSON, channel: Channel | None = None, *, session: str | None = None
    ) -> Answer:
        """The answer to one message the client sent (None for a notification or a reply).

        ``channel`` is where requests to the client go while answering (None: nowhere);
        ``session``: the HTTP session it came in (tasks/list lists only that session's tasks
        unless V-28 is broken).
        Deadline: none of its own (the test's scope bounds it). Cancelled: the message is left
        unanswered."""
        self.received.append(message)
        if "method" not in message:
            self._dialect.client_answered(message)
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
        out: JSON | Refusal
        slow = getattr(self, "_a_" + method.replace("/", "_"), None)
        self._request_id = message["id"]  # read by a handler before its first await
        if slow is not None:
            out = await slow(params, channel or Channel())
        else:
            handler = getattr(self, "_m_" + method.replace("/", "_"), None)
            if handler is None:
                return self._error(message, -32601, f"method {method} not found")
            self._session = session  # read by the (synchronous) handler below
            out = handler(params)
        if isinstance(out, tuple):
            code, text, data = out
            return self._error(message, code, text, data)
        out = self._dialect.hinted(method, out)
        return {"jsonrpc": "2.0", "id": message["id"], "result": self._dialect.result(out)}

    @staticmethod
    def _error(message: JSON, code: int, text: str, data: Any = None) -> JSON:
        error: JSON = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}

    def _now(self) -> str:
        moment = self.clock()
        if self._last_stamp is not None and moment <= self._last_stamp:
            moment = self._last_stamp + dt.timedelta(milliseconds=1)  # strictly later
        self._last_stamp = moment
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    # -- server->client requests -----------------------------------------------------------

    async def _request(self, channel: Channel, method: str, params: JSON) -> Any:
        request_id = f"fault-{next(self._request_ids)}"
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.sent_requests.append(request)
        await channel.push(request)
        return request_id

    def _questions(self, task: FaultTask, arguments: JSON) -> list[tuple[str, JSON]]:
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
                "params": {"mode": "form", "message": f"{task.text}?", "requestedSchema": FORM},
            }
        return self._dialect.questions(task, first)

    # -- methods ----------------------------------------------------------------------------

    async def _a_initialize(self, params: JSON, channel: Channel) -> JSON:
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
            "supportedVersions": [self.generation.protocol_version],
            "capabilities": {
                "tools": {},
                "extensions": {TASKS_EXTENSION: dict(self.tasks_settings)},
            },
            "serverInfo": {"name": "fault-server", "version": "0"},
        }

    def _m_ping(self, params: JSON) -> JSON:
        return {}

    def _tools(self) -> Mapping[str, str | None]:
        return self._dialect.tools

    def _m_tools_list(self, params: JSON) -> JSON:
        tools = []
        for name, support in self._tools().items():
            tool: JSON = {"name": name, "inputSchema": {"type": "object"}}
            if support is not None:
                tool["execution"] = {"taskSupport": support}
            tools.append(tool)
        return {"tools": tools}

    def _m_tools_call(self, params: JSON) -> JSON | Refusal:
        name = params.get("name")
        tools = self._tools()
        if not isinstance(name, str) or name not in tools:
            return (-32602, f"unknown tool {name!r}", None)
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        arguments = arguments or {}
        text = str(arguments.get("text", name))
        support = tools[name]
        if not self._dialect.wants_task(name, params):
            return self._dialect.call_without_task(support, text)
        if support is None:
            refused = self._dialect.task_of_taskless_tool(text)
            if refused is not None:
                return refused
        responses = params.get("inputResponses")
        mrtr = name == "confirm" and "E S21" not in self.breaks
        if mrtr and not (isinstance(responses, dict) and "confirm" in responses):
            probe = FaultTask("", "confirm", text, None, "", "")
            return {
                "resultType": "input_required",
                "inputRequests": dict(self._questions(probe, arguments)),
                "requestState": "fault-confirm",
            }
        requested = self._dialect.requested_ttl(params)
        now = self._now()
        task = FaultTask(f"task-{next(self._ids)}", name, text, requested, now, now)
        if name == "ask" or (name == "confirm" and not mrtr):
            task.questions = self._questions(task, arguments)
        task.session = self._session
        if "V-05" in self.breaks:
            task.status = "input_required"
        self.tasks[task.task_id] = task
        return self._dialect.created(task)

    def _task(self, task: FaultTask, *, detailed: bool = True) -> JSON:
        out: JSON = {
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": task.created_at,
            "lastUpdatedAt": task.updated_at,
        }
        if task.status == "failed" and "V-13" not in self.breaks:
            out["statusMessage"] = "failed on purpose"
        self._dialect.task_fields(task, out, detailed=detailed)
        return out

    def _finish(self, task: FaultTask) -> None:
        if task.status in TERMINAL:
            return
        if task.tool == "protocol_error" or self._dialect.ends_failed(task):
            task.status = "failed"
        else:
            task.status = "completed"
        task.updated_at = self._now()
        task.ended.set()

    def _find(self, params: JSON) -> FaultTask | Refusal:
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if task is None:
            return (-32602, f"no task {params.get('taskId')!r}", None)
        return task

    async def _a_tasks_get(self, params: JSON, channel: Channel) -> JSON | Refusal:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        task.gets += 1
        if "E S5" in self.breaks and task.gets == 1:
            return (-32602, f"no task {task.task_id!r} (yet)", None)
        if task.questions and task.status not in TERMINAL:
            self._dialect.waiting(task)
            await self._dialect.polled_waiting(task, channel)
        elif task.status not in TERMINAL and task.tool != "slow":
            task.polls += 1
            if task.polls >= self.steps:
                self._finish(task)
        out = self._task(task)
        if "V-26" in self.breaks:
            moved = dt.datetime.fromisoformat(task.created_at.replace("Z", "+00:00"))
            moved += dt.timedelta(milliseconds=task.gets)
            out["createdAt"] = moved.isoformat().replace("+00:00", "Z")
        return out

    async def _a_tasks_result(self, params: JSON, channel: Channel) -> JSON | Refusal:
        return await self._dialect.tasks_result(params, channel)

    def _m_tasks_cancel(self, params: JSON) -> JSON | Refusal:
        task = self._find(params)
        if isinstance(task, tuple):
            return task
        return self._dialect.tasks_cancel(task)

    def _m_tasks_list(self, params: JSON) -> JSON | Refusal:
        return self._dialect.tasks_list(params)

    async def _a_subscriptions_listen(self, params: JSON, channel: Channel) -> JSON | Refusal:
        return await self._dialect.listen(params, channel, self._request_id)

    async def changed(self) -> None:
        """Wait until a task changes (its next stamp). Deadline: none (a listen's own).
        Cancelled: the wait ends; nothing changes."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def _listing(self) -> JSON:
        """``tasks/list`` of every task the caller's session may see (one page)."""
        tasks = list(self.tasks.values())
        if self._session is not None and "V-28" not in self.breaks:
            tasks = [t for t in tasks if t.session in (None, self._session)]
        if "V-19" in self.breaks and tasks:
            tasks = tasks[:-1]
        return {"tasks": [self._task(t) for t in tasks]}

    def _m_tasks_update(self, params: JSON) -> JSON | Refusal:
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


def raw_json(value: Any) -> bytes:
    """``value`` as the bytes of one message (for an ``on_message`` hook to mangle)."""
    return json.dumps(value).encode()
