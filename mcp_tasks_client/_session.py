"""The session: one conversation with one server, under the Client.

Its one job: moving JSON-RPC messages between the caller's requests and the transport. It
correlates requests with their answers, bounds every wait by its deadline, runs the reader,
dispatches what arrives (answers, server->client requests, notifications), serves the server's
requests with the handlers registered for them, and watches a task call whose caller stopped
waiting (the orphan watch). What a message means in a generation is its driver's business
(``_drivers``); what the caller may ask for, typed, is the Client's (``_client.py``).

May import: ``_drivers``, ``_sansio``, ``_io.base``, ``models``, ``_exceptions``,
``_limits``, ``observability``. Never the Client, the Poller or the InputRouter.

Theory of operation. :meth:`Session.open` enters the transport and starts one reader task in a
task group the session owns. The reader feeds every incoming message to the sans-I/O
:class:`RPCConnection` and acts on the event it returns: a response wakes the one caller
waiting for it; a server->client request goes to the handler registered for its method (or is
answered with a JSON-RPC error saying no handler was registered: the library never answers on
the caller's behalf, except ``ping``, which the spec requires every party to answer); a
notification goes to the registered callbacks.

If the connection breaks (the child process exits, the server sends a response for an id never
used, stdout carries something that is not JSON-RPC), every waiting request fails with that
error, and so does every later one: nothing hangs, nothing reconnects on its own.

Every send is bounded: a request's by its deadline, a notification's by ``Timeouts.request``
(or its own ``timeout=``), an answer to the server by ``Timeouts.request``. At most
``Limits.max_server_requests`` server->client requests are handled at once; one beyond that
is answered at once with a JSON-RPC error, so a flood costs no memory; so is one whose string
id is longer than ``Limits.max_request_id_chars`` (-32600, ``"id": null``). Requests whose
handler was registered ``held`` (it waits by design: the receiver's blocking ``tasks/result``)
have their own bound, ``Limits.max_held_server_requests``, as the transports have their own
pool for the client's held requests: however many are held, every other request is answered.

:meth:`Session.close` cancels everything the session started, ends every pending request (and
every Poller wait on its client) with :class:`~mcp_tasks_client.errors.ClientClosed`, and
closes the transport.

The session's life is :class:`SessionState`, moved only along ``_MOVES`` (as the task machine's
table); its reader's is :class:`ReaderState`.
"""

from __future__ import annotations

import collections
import datetime as dt
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NamedTuple, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import attrs

from . import observability as _obs
from ._drivers import Driver
from ._exceptions import (
    ClientClosed,
    DecodeError,
    LimitExceeded,
    MCPTasksError,
    ProtocolError,
    RequestTimeout,
    RPCError,
    TransportClosed,
    TransportError,
    UsageError,
)
from ._io.base import Incoming, Transport, TransportFault
from ._limits import Limits
from ._sansio.answer_book import related_task_id
from ._sansio.connection import (
    DuplicateRequest,
    ErrorReceived,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResultReceived,
    RPCConnection,
    UncorrelatedError,
)
from ._sansio.progress import ProgressBook, ProgressStats, TaskProgress, progress_token_of
from ._sansio.task_machine import Violation
from .models import (
    ErrorObject,
    JSONObject,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    Task,
    TaskStatus,
)

__all__ = [
    "NotificationHandler",
    "OrphanedTask",
    "ProgressHandler",
    "ReaderState",
    "RequestHandler",
    "RequestOptions",
    "Session",
    "SessionState",
    "Timeouts",
]

log = _obs.get_logger("client")

_UNANSWERED = (
    "the answer to the abandoned task call of %r (request %r) did not come %s: a task may "
    "exist on the server that no one knows the id of"
)

T = TypeVar("T")

RequestHandler = Callable[[JSONRPCRequest], Awaitable[JSONObject | None]]
"""Answers one server->client request with a result object (raise RPCError to answer an
error). Returning None sends nothing: only for a duplicate delivery already answered once."""

NotificationHandler = Callable[[JSONRPCNotification], None]
"""Receives one notification; runs in the reader, so it must not block. (The reader is the
client's reader task, or over HTTP the stream task that read the notification while the reader
was idle: ``Transport.take_notifications``. Either way, in the order messages arrived.)"""

ProgressHandler = Callable[[TaskProgress | Violation | DecodeError], None]
"""Receives each progress event tied to a task, and each problem with a progress
notification (a soft Violation of V-24 / E C43, or a DecodeError); runs in the reader."""

_NOT_INLINE = frozenset({"initialize", "subscriptions/listen"})


def _is_terminal(status: object) -> bool:
    """A wire status that is terminal, as ``TaskStatus.is_terminal`` says (the one place)."""
    try:
        return isinstance(status, str) and TaskStatus(status).is_terminal
    except ValueError:
        return False


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class SessionState(enum.Enum):
    """Where a session is in its life."""

    NEW = "new"
    """Made, not entered."""
    OPEN = "open"
    """Entered: the transport is open and the reader runs (the handshake may be under way)."""
    BROKEN = "broken"
    """The connection broke (``Session.broken`` says how); every request fails with that."""
    CLOSED = "closed"
    """Closed by the caller: every request fails with ClientClosed."""


_MOVES: dict[SessionState, frozenset[SessionState]] = {
    SessionState.NEW: frozenset({SessionState.OPEN, SessionState.CLOSED}),
    SessionState.OPEN: frozenset({SessionState.BROKEN, SessionState.CLOSED}),
    SessionState.BROKEN: frozenset({SessionState.CLOSED}),
    SessionState.CLOSED: frozenset(),
}
"""Every move a session's life may make; anything else is a bug (AssertionError)."""


class ReaderState(enum.Enum):
    """What the session's reader is doing."""

    READING = "reading"
    """Dispatching what it read (or not started yet)."""
    IDLE = "idle"
    """Waiting in ``transport.receive()`` with everything before dispatched: a transport may
    then hand a notification straight to the session (``Transport.take_notifications``)."""
    STOPPED = "stopped"
    """The direct path broke the session: the reader reads no more."""


@attrs.frozen
class Timeouts:
    """Deadlines for requests, in seconds (C-13). Printing it shows every default.

    ``request`` applies to every request that is not given its own ``timeout=``;
    ``initialize`` to the handshake. When a request times out the client stops waiting, ignores
    a late answer (C-47) and, if ``notify_cancelled``, sends ``notifications/cancelled`` for it
    (C-13 SHOULD). A task is never cancelled by a timeout: that takes ``tasks/cancel``.
    """

    request: float = 30.0
    initialize: float = 30.0
    notify_cancelled: bool = True
    orphan_watch: float = 60.0
    """After a task call (``start``) timed out or was cancelled once its request was sent, how
    long the client still reads its answer, to report the task it created (``OrphanedTask``)."""


@attrs.frozen
class OrphanedTask:
    """A task the server created for a ``start()`` whose caller stopped waiting (timeout or
    cancellation) before the answer arrived. It runs on the server; nothing cancels it unless
    the caller does (``client.cancel_task(task_id)``). Reported to ``on_orphaned_task``
    handlers and logged as a WARNING."""

    task_id: str
    tool: str
    reason: str
    """``"timeout"`` or ``"cancelled"``: how the caller stopped waiting."""
    raw: JSONObject
    """The answer as received (decode it, or keep it for the record)."""


_ANSWERS = (JSONRPCResponse, JSONRPCError, TransportFault)
"""What an inline exchange returns that :meth:`Session._dispatch` handles without awaiting
anything (a result, an error, a fault: no server request to serve)."""


def _timed_out(scope: anyio.CancelScope) -> None:
    """Raise TimeoutError, as ``anyio.fail_after`` does, if ``scope``'s deadline ended it."""
    if scope.cancelled_caught and anyio.current_time() >= scope.deadline:
        raise TimeoutError


class _AwaitedAnswer:
    """One request's caller, waiting for its answer: what arrived (``result`` or ``error``),
    and whether it did (``answered``). The ``anyio.Event`` to sleep on is made only once
    someone waits: a request answered in its caller's own task (``Transport.exchange``) never
    does, and makes none."""

    __slots__ = ("_event", "answered", "error", "method", "on_result", "result")

    def __init__(self, method: str, on_result: Callable[[JSONObject], None] | None = None) -> None:
        self.method = method
        self.result: JSONObject | None = None
        self.error: MCPTasksError | None = None
        self.on_result = on_result
        """Called by the reader with the result before it reads the next message."""
        self.answered = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        """The answer (or what ended the request) is in: wake the caller."""
        self.answered = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self.answered:
            await anyio.lowlevel.checkpoint()  # as Event.wait does on a set event
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


class RequestOptions(NamedTuple):
    """How one request is sent: every option the Client may choose, in one immutable record,
    so the path every request takes (:meth:`Session.call`, its observation and its exchange)
    keeps one signature however many options there are. A NamedTuple, not a frozen attrs
    class: one is made per request, and a frozen attrs ``__init__`` (a guarded setattr per
    field) costs about three times as much, more than the whole of the request's hooks when
    tracing is off."""

    timeout: float | None = None
    """Seconds (default ``Timeouts.request``)."""
    notify: bool = True
    """Send ``notifications/cancelled`` after a timeout (C-13 SHOULD)."""
    orphan_tool: str | None = None
    """A task call: its answer is read on after the caller stops waiting (OrphanedTask)."""
    tasks: bool = False
    """The request may create a task (the driver's params and the created id)."""
    on_result: Callable[[JSONObject], None] | None = None
    """Called by the reader with the result before it reads the next message."""
    on_id: Callable[[RequestId], None] | None = None
    """Called with the request id before it is sent."""
    held: bool = False
    """The server may keep it open by design: an HTTP transport uses its held pool."""
    trace: _obs.TaskTrace | None = None
    """The task span the request hangs under (a task call's, made before its task id is
    known). None: the span of the task its ``taskId`` names, if one is open, else the current
    context."""
    cache_miss: bool = False
    """The request went out because the caller's ResultCache had no fresh answer for it: its
    span carries ``mcp_tasks.cache.hit = false`` (a hit sends no request)."""


class Session:
    """One conversation with one server: correlation, deadlines, the reader, dispatch, serving
    the server's requests and the orphan watch (see the module docstring). The Client owns it;
    callers reach it through the Client."""

    def __init__(
        self,
        transport: Transport,
        driver: Driver,
        *,
        timeouts: Timeouts,
        limits: Limits,
        on_warning: Callable[[MCPTasksError], None] | None = None,
        first_id: int = 1,
        tracing: _obs.Tracing | None = None,
        redaction: _obs.Redaction | None = None,
    ) -> None:
        self.transport = transport
        self.timeouts = timeouts
        self.limits = limits
        self._driver = driver
        self._on_warning = on_warning
        self._state = SessionState.NEW
        self._reader = ReaderState.READING
        self._connection = RPCConnection(first_id)
        self._waiters: dict[RequestId, _AwaitedAnswer] = {}
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, list[NotificationHandler]] = {}
        self._broken: MCPTasksError | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._serving = 0
        self._held_methods: set[str] = set()
        self._holding = 0
        self._end_listeners: list[Callable[[MCPTasksError], None]] = []
        self._orphan_handlers: list[Callable[[OrphanedTask], None]] = []
        self._progress = ProgressBook(
            limits.max_progress_tokens, tasks_keep_tokens=driver.progress_outlives_call
        )
        self._progress_handlers: list[ProgressHandler] = []
        self._wall_clock: Callable[[], dt.datetime] = _utc_now
        notify = timeouts.notify_cancelled
        self._plain = (RequestOptions(None, notify), RequestOptions(None, notify, held=True))
        self.tracing = tracing if tracing is not None else _obs.default_tracing()
        """The client's span settings (given, or the process default's copied now)."""
        self.redaction = redaction if redaction is not None else _obs.default_redaction()
        """The client's task-id redaction (given, or the process default's copied now)."""
        self.traces = _obs.TaskTraces(self.tracing, self.redaction)
        """The open task spans, by task id (one trace per task)."""
        self.received_traces = _obs.ReceivedTraces(tracing=self.tracing)
        """The traces of the tasks this client runs for the server (a TaskReceiver's)."""
        self._opened_at = 0.0
        self.warnings: collections.deque[MCPTasksError] = collections.deque(
            maxlen=limits.max_warnings
        )

    # -- life ------------------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self._state

    def _move(self, to: SessionState) -> None:
        assert to in _MOVES[self._state], f"session: {self._state.value} -> {to.value}"
        self._state = to

    @property
    def broken(self) -> MCPTasksError | None:
        """What ended the conversation (ClientClosed once closed), or None while it is open."""
        return self._broken

    async def open(self) -> None:
        """Enter the transport and start the reader (UsageError on a second open)."""
        if self._state is not SessionState.NEW:
            raise UsageError("a Client can be entered only once")
        self._move(SessionState.OPEN)
        self._opened_at = time.monotonic()
        self.transport.apply_limits(self.limits)
        await self.transport.__aenter__()
        task_group = anyio.create_task_group()
        try:
            await task_group.__aenter__()
        except BaseException:
            await self.transport.__aexit__(None, None, None)
            raise
        self._task_group = task_group
        task_group.start_soon(self._read_loop)
        self.transport.take_notifications(self._take_notification)

    async def close(self) -> None:
        """Cancel everything the session started, end every pending request with ClientClosed
        and close the transport."""
        # The caller's exception is not passed into the task group: it would come back wrapped
        # in an ExceptionGroup. Only a failure of the session's own tasks surfaces from here.
        task_group = self._task_group
        assert task_group is not None
        self.transport.take_notifications(None)
        self._break(ClientClosed(), replace=True)
        self.traces.close()
        meters = self.tracing.meters
        if meters is not None and self._opened_at:
            meters.session.record(time.monotonic() - self._opened_at)
        task_group.cancel_scope.cancel()
        try:
            await task_group.__aexit__(None, None, None)
        finally:
            await self.transport.__aexit__(None, None, None)

    # -- registration ------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler, *, held: bool = False) -> None:
        """Answer server->client ``method`` requests with ``handler`` (one per method).
        ``held``: the handler may wait by design (a blocking ``tasks/result``); such requests
        count against ``Limits.max_held_server_requests``, never ``max_server_requests``, so
        however many are held the server's other requests are still answered."""
        if method in self._request_handlers:
            raise UsageError(f"a handler for {method!r} is already registered")
        self.transport.check_serves(method)
        self._request_handlers[method] = handler
        if held:
            self._held_methods.add(method)

    def on_orphaned_task(self, handler: Callable[[OrphanedTask], None]) -> Callable[[], None]:
        """Call ``handler`` with each task created by a ``start()`` its caller stopped waiting
        for (see :class:`OrphanedTask`); returns its unsubscriber. Runs in the reader: must
        not block (start a task of your own to cancel or poll it)."""
        return _subscribe(self._orphan_handlers, handler)

    def on_connection_end(self, listener: Callable[[MCPTasksError], None]) -> Callable[[], None]:
        """Call ``listener`` with the error that ended the connection: ClientClosed when the
        caller closed it, or what broke it (ProcessExited, a fatal ProtocolError ...). A Poller
        ends its waits then. One that raises is logged and stops nothing. Returns the
        unsubscriber."""
        return _subscribe(self._end_listeners, listener)

    def on_notification(self, method: str, handler: NotificationHandler) -> Callable[[], None]:
        """Call ``handler`` for every ``method`` notification; returns its unsubscriber."""
        return _subscribe(self._notification_handlers.setdefault(method, []), handler)

    def on_progress(self, handler: ProgressHandler) -> Callable[[], None]:
        """Call ``handler`` with each :class:`TaskProgress` (a ``notifications/progress``
        for a task whose call carried a progress token, or that names the task in its
        related-task ``_meta``) and with each problem such a notification has (a soft
        :class:`Violation`: V-24, E C43; a DecodeError). A Poller relays them to its
        watchers, waits and ``warnings``. Runs in the reader: must not block. Returns the
        unsubscriber. ``on_notification("notifications/progress", ...)`` still sees them raw."""
        return _subscribe(self._progress_handlers, handler)

    def progress(self, task_id: str) -> TaskProgress | None:
        """The last progress delivered for the task, if its token is still held (no
        request)."""
        return self._progress.latest(task_id)

    @property
    def progress_stats(self) -> ProgressStats:
        """What the progress book holds and has counted (bounded by
        ``Limits.max_progress_tokens``)."""
        return self._progress.stats

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request and wait for its raw result object.

        Raises RPCError (or a subclass) for a JSON-RPC error answer, RequestTimeout after
        ``timeout`` seconds (default: ``Timeouts.request``), a TransportError when the
        connection breaks.
        """
        return await self.call(method, params, self.options(timeout))

    def options(self, timeout: float | None, *, held: bool = False) -> RequestOptions:
        """A plain request's options (``Timeouts.notify_cancelled``): the default ones made
        once, when ``timeout`` is None."""
        if timeout is None:
            return self._plain[held]
        return RequestOptions(timeout, self.timeouts.notify_cancelled, held=held)

    def call(
        self, method: str, params: JSONObject | None, options: RequestOptions
    ) -> Coroutine[Any, Any, JSONObject]:
        """One request with every option the Client may choose (:class:`RequestOptions`),
        observed (a DEBUG record, a span, trace context in ``_meta``, metrics) only when
        someone listens; see :meth:`_exchange`. Await it: it is the request's coroutine itself
        (a plain method choosing one, not a coroutine awaiting it: one frame fewer a request).
        Deadline and cancellation: :meth:`_exchange`'s."""
        quiet = self.tracing.tracer is None and not self.redaction.enabled
        if quiet and not log.isEnabledFor(logging.DEBUG):
            return self._exchange(method, params, options)
        return self._observed(method, params, options)

    async def _observed(
        self, method: str, params: JSONObject | None, options: RequestOptions
    ) -> JSONObject:
        """One request with its DEBUG record (method, id, elapsed, outcome), its span (under
        its task's span when it has one), the trace context in its ``_meta`` and its
        duration metric."""
        ids: list[RequestId] = []
        on_id = options.on_id

        def seen(request_id: RequestId) -> None:
            ids.append(request_id)
            if on_id is not None:
                on_id(request_id)

        options = options._replace(on_id=seen)
        task_id = params.get("taskId") if isinstance(params, dict) else None
        task_id = task_id if isinstance(task_id, str) else None
        redaction = self.redaction
        redaction.remember(task_id)
        tracer = self.tracing.tracer
        outcome = "cancelled"
        started = time.perf_counter()
        try:
            if tracer is None:
                raw = await self._exchange(method, params, options)
            else:
                raw = await self._traced(method, params, options, task_id, ids)
            if options.tasks:
                redaction.remember(self._driver.created_task_id(raw))
            outcome = "result"
        except RPCError as exc:
            outcome = f"error {exc.code}"
            raise
        except RequestTimeout:
            outcome = "timeout"
            raise
        except TransportError as exc:
            outcome = f"transport error ({type(exc).__name__})"
            raise
        except MCPTasksError as exc:
            outcome = type(exc).__name__
            raise
        finally:
            elapsed = time.perf_counter() - started
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s (id %r%s) %.1f ms: %s",
                    method,
                    ids[0] if ids else None,
                    "" if task_id is None else f", task {redaction.label(task_id)}",
                    elapsed * 1000.0,
                    outcome,
                    extra=redaction.log_extra,
                )
            meters = self.tracing.meters
            if meters is not None:
                metric = {"mcp.method.name": method}
                if outcome != "result":
                    metric["error.type"] = outcome
                meters.operation.record(elapsed, metric)
        return raw

    async def _traced(
        self,
        method: str,
        params: JSONObject | None,
        options: RequestOptions,
        task_id: str | None,
        ids: list[RequestId],
    ) -> JSONObject:
        """The request in its CLIENT span, under its task's span when it has one (the
        options', or the one its ``taskId`` names), the span's context in ``_meta``. A poll
        under ``tracing(polls="changes")`` opens no span: it carries its task span's context,
        and is recorded afterwards only if it saw a change (or failed)."""
        trace = options.trace or self.traces.get(task_id)
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "mcp.protocol.version": self._driver.protocol_version,
            "mcp_tasks.generation": self._driver.generation.value,
        }
        tool = params.get("name") if method == "tools/call" and params is not None else None
        if isinstance(tool, str):
            attributes["gen_ai.tool.name"] = tool
        if task_id is not None:
            attributes["mcp_tasks.task.id"] = self.redaction.label(task_id)
        if options.cache_miss:
            attributes["mcp_tasks.cache.hit"] = False
        name = f"{method} {tool}" if isinstance(tool, str) else method
        if method == "tasks/get" and trace is not None:
            if self.tracing.quiet_polls:
                return await self._quiet_poll(params, options, trace, attributes, ids)
            trace.polls += 1
        parent = None if trace is None else trace.context
        with self.tracing.span(name, attributes, client=True, parent=parent) as span:
            try:
                raw = await self._exchange(method, params, options, self.tracing.carrier())
            finally:
                if ids:
                    span.set_attribute("jsonrpc.request.id", str(ids[0]))
            created = self._driver.created_task_id(raw) if options.tasks else None
            if created is not None:
                span.set_attribute("mcp_tasks.task.id", self.redaction.label(created))
                if options.trace is not None:
                    self.traces.bind(created, options.trace)
        return raw

    async def _quiet_poll(
        self,
        params: JSONObject | None,
        options: RequestOptions,
        trace: _obs.TaskTrace,
        attributes: dict[str, Any],
        ids: list[RequestId],
    ) -> JSONObject:
        start_ns = time.time_ns()
        trace.polls += 1
        try:
            carried = self.tracing.carrier(trace.context)
            raw = await self._exchange("tasks/get", params, options, carried)
        except MCPTasksError as exc:
            if ids:
                attributes["jsonrpc.request.id"] = str(ids[0])
            self.tracing.record_span("tasks/get", attributes, trace.context, start_ns, exc)
            raise
        try:
            task = self._driver.read_task(raw)
            # Status and message: lastUpdatedAt is no news (fastmcp 4.1.4 moves it per read).
            key: tuple[Any, ...] = (task.status, task.status_message)
        except DecodeError:
            key = ("undecodable",)
        if trace.saw(key):
            if ids:
                attributes["jsonrpc.request.id"] = str(ids[0])
            self.tracing.record_span("tasks/get", attributes, trace.context, start_ns)
        return raw

    async def _exchange(
        self,
        method: str,
        params: JSONObject | None,
        options: RequestOptions,
        meta: dict[str, str] | None = None,
    ) -> JSONObject:
        """Send a request, wait for its answer within ``timeout``.

        On timeout, ``notifications/cancelled`` is sent (in the background, bounded) when
        ``notify``; never for ``initialize`` (C-13: it MUST NOT be cancelled). With
        ``orphan_tool`` (a task call), a request that was sent keeps being read after the caller
        stops waiting, so the task it may create is reported, never lost (OrphanedTask).
        """
        if self._broken is not None:
            raise self._broken
        if self._task_group is None:
            raise UsageError("the client is not connected; use `async with Client(...)`")
        timeout, notify, orphan_tool = options.timeout, options.notify, options.orphan_tool
        on_result, held = options.on_result, options.held
        limit = self.timeouts.request if timeout is None else timeout
        token = progress_token_of(params)  # C-46: a token in use raises before anything
        if token is not None:
            self._progress.check(token)
        wire = self._driver.params(method, params, tasks=options.tasks)
        if meta:  # SEP-414 trace context; a key the caller put in _meta stays
            wire = _obs.with_carrier(wire, meta)
        message = self._connection.request(method, wire)
        if token is not None:
            on_result = self._open_progress(token, message.id, orphan_tool is not None, on_result)
        waiter = _AwaitedAnswer(method, on_result=on_result)
        self._waiters[message.id] = waiter
        if options.on_id is not None:
            options.on_id(message.id)
        sent = False
        keep = False
        # A request whose answer only this caller needs runs in the caller's task when the
        # transport can (HTTP): no task, no hop through the reader. A task call keeps the
        # background path (its answer is read on after the caller stops waiting: orphans), as
        # do a progress-carrying request, initialize and a listen (long-lived streams).
        inline = (
            self.transport.inline_requests
            and orphan_tool is None
            and token is None
            and method not in _NOT_INLINE
        )
        deadline = anyio.current_time() + limit
        try:
            item: Incoming | None = None
            if inline:
                # One cancel scope per request: the exchange's own carries the deadline (and
                # raises TimeoutError past it). An answer or a fault is dispatched without a
                # wait; anything else (an answer that went through the reader, a server's
                # request as the answer) is waited for below, within the same deadline.
                sent = True
                item = await self.transport.exchange(message, held=held, deadline=deadline)
                if isinstance(item, _ANSWERS):
                    await self._dispatch(item)
                    item = None
            if not inline or item is not None or not waiter.answered:
                # fail_after's scope without its generator.
                with anyio.CancelScope(deadline=deadline) as scope:
                    if item is not None:
                        await self._dispatch(item)
                    elif not inline:
                        await self.transport.send(message, held=held)
                        sent = True
                    if not waiter.answered:
                        await waiter.wait()
                _timed_out(scope)
        except TimeoutError:
            if not waiter.answered:
                keep = self._keep_reading(message.id, waiter, orphan_tool, sent, "timeout")
                if not keep:
                    self._give_up(message.id, notify=notify and method != "initialize")
                raise RequestTimeout(method, limit) from None
            # The answer arrived in the same instant as the deadline: it is the answer.
        except BaseException:
            if waiter.answered:
                # Cancelled in the same instant the answer arrived: the caller never sees it,
                # so a task it created is reported like any other orphan.
                if orphan_tool is not None:
                    self._report_orphan(waiter, orphan_tool, "cancelled")
            else:
                keep = self._keep_reading(message.id, waiter, orphan_tool, sent, "cancelled")
                if not keep:
                    # E C44: a listen the caller ends is cancelled by notification on stdio.
                    ends_listen = sent and method == "subscriptions/listen"
                    self._give_up(message.id, notify=ends_listen)
            raise
        finally:
            if not keep:
                self._waiters.pop(message.id, None)
                if token is not None:
                    self._progress.close_request(message.id)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

    def _open_progress(
        self,
        token: str | int,
        request_id: RequestId,
        task_call: bool,
        on_result: Callable[[JSONObject], None] | None,
    ) -> Callable[[JSONObject], None] | None:
        """Hold ``token`` for the request; for a task call, the answer's hook that binds it
        to the created task (from the reader, before the next message is dispatched)."""
        if self._progress.open(token, request_id, task_call=task_call):
            limit = self.limits.max_progress_tokens
            self.warn(LimitExceeded("max_progress_tokens", limit, "the progress tokens held"))
        if not task_call:
            return on_result

        def bind(raw: JSONObject) -> None:
            task_id = self._driver.created_task_id(raw)
            if task_id is not None:
                earlier = self._progress.bind(request_id, task_id, now=self._wall_clock())
                task = raw.get("task")
                if isinstance(task, dict) and _is_terminal(task.get("status")):
                    self._progress.task_ended(task_id)  # created already terminal
                if earlier is not None:
                    self._emit_progress(earlier)
            if on_result is not None:
                on_result(raw)

        return bind

    def _on_progress_notification(self, notification: JSONRPCNotification) -> None:
        progress, problems = self._progress.receive(notification.params, now=self._wall_clock())
        for problem in problems:
            self._emit_progress(problem)
        if progress is not None:
            self._emit_progress(progress)

    def _emit_progress(self, item: TaskProgress | Violation | DecodeError) -> None:
        for handler in list(self._progress_handlers):
            try:
                handler(item)
            except Exception:  # the caller's handler: logged, it stops nothing
                log.exception("an on_progress handler raised")

    def saw(self, task: Task) -> Task:
        """A snapshot the client read: a terminal one ends its task's progress token."""
        if task.status.is_terminal:
            self._progress.task_ended(task.task_id)
            # A task no Poller follows: its span ends with the terminal status read.
            status = task.status.value
            self.traces.terminal(
                task.task_id, {"mcp_tasks.outcome": status, "mcp_tasks.task.status": status}
            )
        return task

    def _give_up(self, request_id: RequestId, *, notify: bool) -> None:
        """Stop waiting for ``request_id``; with ``notify``, tell the server (C-13), in the
        background and bounded, so the caller gets control back at its deadline."""
        self._connection.abandon(request_id)
        if self._task_group is None or self._broken is not None:
            return
        self._task_group.start_soon(self._abandon_in_background, request_id, notify)

    async def _abandon_in_background(self, request_id: RequestId, notify: bool) -> None:
        with anyio.move_on_after(self.timeouts.request):
            await self.transport.abandon(request_id)
        if not notify or self._broken is not None or self.transport.cancels_by_closing:
            return  # E C38: a stateless HTTP request is cancelled by closing its stream
        try:
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": "client timeout"}
            )
        except MCPTasksError as exc:
            self.warn(exc)

    def _keep_reading(
        self,
        request_id: RequestId,
        waiter: _AwaitedAnswer,
        tool: str | None,
        sent: bool,
        reason: str,
    ) -> bool:
        """After a task call was sent, read its answer for ``Timeouts.orphan_watch`` more
        seconds in the background and report the task it created (no lost task ids)."""
        if tool is None or not sent or self._task_group is None or self._broken is not None:
            return False
        self._task_group.start_soon(self._watch_orphan, request_id, waiter, tool, reason)
        return True

    async def _watch_orphan(
        self, request_id: RequestId, waiter: _AwaitedAnswer, tool: str, reason: str
    ) -> None:
        try:
            with anyio.move_on_after(self.timeouts.orphan_watch):
                await waiter.wait()
        except BaseException:  # cancelled: the client is closing
            self._end_orphan_watch(request_id, waiter, tool, reason)
            raise
        finally:
            self._waiters.pop(request_id, None)
            self._progress.close_request(request_id)
        if not waiter.answered:
            self._give_up(request_id, notify=False)
            within = f"within {self.timeouts.orphan_watch:g} s"
            log.warning(_UNANSWERED, tool, request_id, within)
            return
        self._end_orphan_watch(request_id, waiter, tool, reason)

    def _end_orphan_watch(
        self, request_id: RequestId, waiter: _AwaitedAnswer, tool: str, reason: str
    ) -> None:
        """Report the task the watched answer created, or warn that no answer came: the close
        (or the connection's end) marks the waiter done with ClientClosed or what broke it,
        and a request's own fault ends it too. An error answer from the server created no
        task: nothing to say."""
        if waiter.result is not None:
            self._report_orphan(waiter, tool, reason)
        elif isinstance(waiter.error, RPCError):
            return
        elif isinstance(waiter.error, ClientClosed) or waiter.error is None:
            log.warning(_UNANSWERED, tool, request_id, "before the client closed")
        else:
            log.warning(
                _UNANSWERED, tool, request_id, f"before its request failed ({waiter.error})"
            )

    def _report_orphan(self, waiter: _AwaitedAnswer, tool: str, reason: str) -> None:
        task_id = self._driver.created_task_id(waiter.result)
        if task_id is None or waiter.result is None:
            return  # an error, or no task: nothing runs on the server
        orphan = OrphanedTask(task_id, tool, reason, waiter.result)
        self.redaction.remember(task_id)
        log.warning(
            "task %r of tool %r was created after its caller stopped waiting (%s); it runs "
            "on the server until it ends or is cancelled",
            _obs.TaskId(task_id, self.redaction),
            tool,
            reason,
            extra=self.redaction.log_extra,
        )
        for handler in list(self._orphan_handlers):
            try:
                handler(orphan)
            except Exception:
                log.exception("on_orphaned_task handler raised")

    async def notify(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> None:
        """Send a notification; RequestTimeout if the send takes longer than ``timeout``
        (default ``Timeouts.request``)."""
        if self._broken is not None:
            raise self._broken
        limit = self.timeouts.request if timeout is None else timeout
        message = self._connection.notify(method, params)
        try:
            with anyio.fail_after(limit):
                await self.transport.send(message)
        except TimeoutError:
            raise RequestTimeout(method, limit) from None

    async def _read_loop(self) -> None:
        try:
            await self._read_messages()
        except Exception as exc:  # the promise: a foreign exception never escapes the client
            log.exception("the client's reader failed")
            error = TransportError(f"the client's reader failed: {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            self._break(error)

    async def _read_messages(self) -> None:
        while True:
            self._reader = ReaderState.IDLE
            try:
                item = await self.transport.receive()
            except TransportClosed as exc:
                self._break(exc)
                return
            finally:
                if self._reader is ReaderState.IDLE:
                    self._reader = ReaderState.READING
            if self._reader is ReaderState.STOPPED or not await self._dispatch(item):
                return

    def _take_notification(self, notification: JSONRPCNotification) -> bool:
        """The transport's direct path (``Transport.take_notifications``): dispatch a
        notification where it arrived, as the reader would, when the reader is idle (waiting
        for the next item, nothing before this one undispatched); False otherwise, and the
        notification goes through the reader. What a handler raises breaks the client as it
        does in the reader, and the reader reads no more."""
        if self._reader is not ReaderState.IDLE:
            return False
        try:
            event = self._connection.receive(notification)
            if isinstance(event, NotificationReceived):
                self._dispatch_notification(event.notification)
        except Exception as exc:  # the promise, as in _read_loop
            log.exception("the client's reader failed")
            error = TransportError(f"the client's reader failed: {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            self._break(error)
            self._reader = ReaderState.STOPPED
        return True

    async def _dispatch(self, item: Incoming) -> bool:
        """What one incoming message or fault means; False when nothing more can be read (the
        connection broke). The reader's, and a caller's for the answer its inline request
        (``Transport.exchange``) returned."""
        if isinstance(item, TransportFault):
            self._on_fault(item)
            return not (item.request_id is None and item.fatal)
        if isinstance(item, JSONRPCRequest) and self._id_too_long(item.id):
            await self._refuse_id(item)
            return True
        try:
            event = self._connection.receive(item)
        except ProtocolError as exc:
            self._break(exc)
            return False
        if isinstance(event, (ResultReceived, ErrorReceived)):
            waiter = self._waiters.get(event.request_id)
            if waiter is not None:
                if isinstance(event, ResultReceived):
                    waiter.result = event.result
                    if waiter.on_result is not None:
                        self._call_on_result(waiter.on_result, event.result)
                else:
                    waiter.error = self._driver.read_error(event.error)
                waiter.set()
            # Its token, if it had one, stops now (a task call's was bound, or it made no
            # task): progress read after the answer is not the request's.
            self._progress.close_request(event.request_id)
        elif isinstance(event, RequestReceived):
            await self._serve(event.request)
        elif isinstance(event, NotificationReceived):
            self._dispatch_notification(event.notification)
        elif isinstance(event, UncorrelatedError):
            self.warn(event.error)
        elif isinstance(event, DuplicateRequest):
            log.debug("%s %r arrived again; answered once", event.request.method, event.request.id)
        elif isinstance(event, LateResponse):
            log.debug("ignored late answer to %s (id %r)", event.method, event.request_id)
        return True

    @staticmethod
    def _call_on_result(hook: Callable[[JSONObject], None], result: JSONObject) -> None:
        try:
            hook(result)
        except Exception:  # the caller's hook: logged, it stops nothing
            log.exception("an on_created hook raised")

    def _on_fault(self, fault: TransportFault) -> None:
        if fault.request_id is None:
            if fault.fatal:
                self._break(fault.error)
            else:
                self.warn(fault.error)
            return
        self._connection.abandon(fault.request_id)
        waiter = self._waiters.get(fault.request_id)
        if waiter is not None and not waiter.answered:
            waiter.error = fault.error
            waiter.set()

    def _break(self, error: MCPTasksError, *, replace: bool = False) -> None:
        if self._broken is not None and not replace:
            return
        self._broken = error
        closing = isinstance(error, ClientClosed) and replace
        target = SessionState.CLOSED if closing else SessionState.BROKEN
        if self._state is not target:
            self._move(target)
        self._connection.fail_pending()
        for waiter in self._waiters.values():
            if not waiter.answered:
                waiter.error = error
                waiter.set()
        for listener in list(self._end_listeners):
            try:
                listener(error)
            except Exception:  # a listener bug must not skip the close (or the other listeners)
                log.exception("on_connection_end listener raised")

    def warn(self, warning: MCPTasksError) -> None:
        self.warnings.append(warning)
        log.warning("client warning: %s: %s", type(warning).__name__, warning)
        if self._on_warning is not None:
            self._on_warning(warning)

    def _dispatch_notification(self, notification: JSONRPCNotification) -> None:
        read = self._driver.read_notification(notification)
        if read is not notification:
            log.debug("read %s in its current form (an earlier draft's)", notification.method)
            notification = read
        if notification.method == "notifications/progress":
            self._on_progress_notification(notification)
        handlers = self._notification_handlers.get(notification.method)
        if not handlers:
            log.debug("no handler for notification %s", notification.method)
            return
        for handler in handlers:
            handler(notification)

    async def _serve(self, request: JSONRPCRequest) -> None:
        """Start the handler for one server->client request, within its bound: a request whose
        handler was registered ``held`` within ``Limits.max_held_server_requests``, any other
        within ``Limits.max_server_requests`` (the two never share: held requests cannot starve
        the others); beyond its bound the request is refused at once, from the reader (which
        reads nothing more until the refusal is sent: back-pressure)."""
        held = request.method in self._held_methods
        if held:
            busy, name, limit = (
                self._holding,
                "max_held_server_requests",
                self.limits.max_held_server_requests,
            )
        else:
            busy, name, limit = (
                self._serving,
                "max_server_requests",
                self.limits.max_server_requests,
            )
        if busy >= limit:
            what = "held" if held else "concurrent"
            reply = self._connection.respond_error(
                request.id, -32000, f"too many {what} requests (Limits.{name}={limit})"
            )
            await self._send_reply(reply)
            return
        assert self._task_group is not None
        if held:
            self._holding += 1
        else:
            self._serving += 1
        self._task_group.start_soon(self._answer, request, held)

    def _id_too_long(self, request_id: RequestId) -> bool:
        return isinstance(request_id, str) and len(request_id) > self.limits.max_request_id_chars

    async def _refuse_id(self, request: JSONRPCRequest) -> None:
        """A server->client request whose string id is past ``Limits.max_request_id_chars``:
        answered -32600 Invalid Request with ``id: null`` (JSON-RPC 2.0, 5: an id that could
        not be taken is answered as null), from the reader; the id is never stored."""
        limit = self.limits.max_request_id_chars
        self.warn(
            LimitExceeded(
                "max_request_id_chars", limit, f"the id of a {request.method[:100]} request"
            )
        )
        reply = JSONRPCError(
            None,
            ErrorObject(
                -32600,
                f"request id longer than {limit} characters (Limits.max_request_id_chars={limit})",
            ),
        )
        await self._send_reply(reply)

    async def reply(self, reply: JSONRPCResponse, *, timeout: float | None = None) -> None:
        """Send the answer to a server request this session did not serve itself (one queued
        in a shared journal by another process, for the same session). Raises RequestTimeout
        after ``timeout`` (default ``Timeouts.request``) and the transport's errors."""
        bound = self.timeouts.request if timeout is None else timeout
        try:
            with anyio.fail_after(bound):
                await self.transport.send(reply)
        except TimeoutError:
            raise RequestTimeout("an answer to the server", bound) from None

    async def _send_reply(self, reply: JSONRPCResponse | JSONRPCError) -> None:
        """Send an answer to the server, bounded; a failure is a warning, never raised (it runs
        in the client's own tasks: a foreign exception would escape ``async with Client``)."""
        try:
            with anyio.fail_after(self.timeouts.request):
                await self.transport.send(reply)
        except TimeoutError:
            self.warn(RequestTimeout("an answer to the server", self.timeouts.request))
        except MCPTasksError as exc:
            self.warn(exc)
        except Exception as exc:  # a result the wire cannot carry (a lone surrogate ...)
            log.exception("the answer to server request %r could not be sent", reply.id)
            error = TransportError(
                f"the answer to server request {reply.id!r} could not be sent: "
                f"{type(exc).__name__}: {exc}"
            )
            error.__cause__ = exc
            self.warn(error)

    async def _answer(self, request: JSONRPCRequest, held: bool) -> None:
        try:
            await self._answer_one(request)
        finally:
            if held:
                self._holding -= 1
            else:
                self._serving -= 1

    async def _handled(self, handler: RequestHandler, request: JSONRPCRequest) -> Any:
        """A handler's call; with spans on, in a SERVER span named by the method. A request
        about a task whose span is open (its related-task ``_meta``, or the ``taskId`` of a
        receiver-side ``tasks/*``) joins that task's trace and links the server's context
        (``_meta.traceparent``, SEP-414); any other continues the server's trace, or is a root
        when it carries none (the reader's context is the one the client was entered in: no
        parent of the server's requests)."""
        tracing = self.tracing
        if tracing.tracer is None:
            return await handler(request)
        params = request.params if isinstance(request.params, dict) else {}
        remote = _obs.extract(params.get("_meta"))
        task_id = related_task_id(params) or params.get("taskId")
        # A server's tasks/* is about a task this client runs for it (a receiver's): that
        # task's trace; any other request's related task is one of the client's own.
        if request.method.startswith("tasks/"):
            joined = self.received_traces.get(task_id)
        else:
            trace = self.traces.get(task_id)
            joined = None if trace is None else trace.context
        attributes: dict[str, Any] = {
            "mcp.method.name": request.method,
            "jsonrpc.request.id": self.redaction.text_attr(str(request.id)),
            "mcp_tasks.generation": self._driver.generation.value,
        }
        if isinstance(task_id, str):
            attributes["mcp_tasks.task.id"] = self.redaction.label(task_id)
        if joined is not None:
            parent, links = joined, None if remote is None else [remote[1]]
        else:  # the server's trace, or a root: never whatever span was open at open()
            parent, links = _obs.root_context() if remote is None else remote[0], None
        with tracing.span(request.method, attributes, server=True, parent=parent, links=links):
            return await handler(request)

    async def _answer_one(self, request: JSONRPCRequest) -> None:
        handler = self._request_handlers.get(request.method)
        if request.method == "ping" and handler is None:
            reply: Any = self._connection.respond(request.id, {})  # every party answers ping
        elif handler is None:
            reply = self._connection.respond_error(
                request.id, -32601, f"no handler registered for {request.method}"
            )
        else:
            try:
                result = await self._handled(handler, request)
                if result is None:
                    self._connection.drop(request.id)
                    return
                reply = self._connection.respond(request.id, result)
            except RPCError as exc:
                reply = self._connection.respond_error(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:  # a handler bug must still answer the server
                log.exception("handler for %s raised", request.method)
                reply = self._connection.respond_error(
                    request.id, -32603, f"client handler failed: {type(exc).__name__}"
                )
        await self._send_reply(reply)


def _subscribe(handlers: list[T], handler: T) -> Callable[[], None]:
    handlers.append(handler)

    def unsubscribe() -> None:
        if handler in handlers:
            handlers.remove(handler)

    return unsubscribe
