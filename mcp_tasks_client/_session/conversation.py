"""The session's conversation: its life, correlation and deadlines, and the reader.

Job: one request's way out and its answer's way back. :class:`Session` opens and closes the
transport, sends each request (its deadline, its cancellation, ``notifications/cancelled``
after a timeout: C-13), correlates every answer with the caller waiting for it, and runs the
reader, which hands what is not an answer to the part whose job it is: server requests to
``serving``, notifications to ``fan_out``; a task call whose caller stopped waiting goes to
``orphans``; the records and spans around a request are ``request_spans``'s.

May import: the session's parts (``_session.terms``, ``fan_out``, ``orphans``,
``request_spans``, ``serving``), ``_drivers``, ``_sansio``, ``_io.base``, ``_io._deadlines``
(the loop's clock), ``models``, ``_exceptions``, ``_limits``, ``observability``.

Theory of operation. :meth:`Session.open` enters the transport and starts one reader task in
a task group the session owns. The reader feeds every incoming message to the sans-I/O
:class:`RPCConnection` and acts on the event it returns: a response wakes the one caller
waiting for it (its :class:`~mcp_tasks_client._session.terms.AwaitedAnswer`). A request whose
answer only its caller needs runs in the caller's own task when the transport can
(``Transport.exchange``: no hop through the reader), and its common answer (a result under
its own id) is settled there by the caller in one step (``RPCConnection.settle``: no event, no
look-up of the waiter); any other answer is dispatched as the reader dispatches it. If the
connection breaks, every waiting request fails with that error, and so does every later one.
The session's life is :class:`SessionState`, moved only along ``MOVES``; its reader's is
:class:`ReaderState`.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .. import observability as _obs
from .._drivers import Driver
from .._exceptions import (
    ClientClosed,
    MCPTasksError,
    ProtocolError,
    RequestTimeout,
    TransportClosed,
    TransportError,
    UsageError,
)
from .._io._deadlines import loop_clock
from .._io.base import Incoming, Transport, TransportFault
from .._limits import Limits
from .._sansio.connection import (
    DuplicateRequest,
    ErrorReceived,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResultReceived,
    RPCConnection,
    UncorrelatedError,
)
from ..models import (
    JSONObject,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    Task,
)
from .fan_out import NotificationFanOut
from .orphans import OrphanWatch
from .request_spans import RequestObserver
from .serving import ServerRequests
from .terms import (
    MOVES,
    AwaitedAnswer,
    NotificationHandler,
    OrphanedTask,
    ReaderState,
    RequestHandler,
    RequestOptions,
    SessionState,
    Timeouts,
    subscribe,
)

if TYPE_CHECKING:  # the progress book's module loads with the first progress token
    from .._sansio.progress import ProgressStats, TaskProgress
    from .terms import ProgressHandler

__all__ = ["Session"]

log = _obs.get_logger("client")

_NOT_INLINE = frozenset({"initialize", "subscriptions/listen"})

_ANSWERS = (JSONRPCResponse, JSONRPCError, TransportFault)
"""What an inline exchange returns that :meth:`Session._dispatch` handles without awaiting
anything (a result, an error, a fault: no server request to serve)."""


def _timed_out(scope: anyio.CancelScope) -> None:
    """Raise TimeoutError, as ``anyio.fail_after`` does, if ``scope``'s deadline ended it."""
    if scope.cancelled_caught and anyio.current_time() >= scope.deadline:
        raise TimeoutError


class Session:
    """One conversation with one server: its life, correlation and deadlines, and the reader
    that dispatches what arrives to its parts (see the package docstring). The Client owns
    it; callers reach it through the Client."""

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
        self._params_as_given = type(driver).params is Driver.params
        """The driver's ``params`` is the base one (params unchanged): fixed by its class."""
        self._on_warning = on_warning
        self._state = SessionState.NEW
        self._reader = ReaderState.READING
        self._connection = RPCConnection(first_id)
        self._waiters: dict[RequestId, AwaitedAnswer] = {}
        self._broken: MCPTasksError | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._end_listeners: list[Callable[[MCPTasksError], None]] = []
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
        self._now: Callable[[], float] = anyio.current_time  # the loop's own, once open
        self.warnings: collections.deque[MCPTasksError] = collections.deque(
            maxlen=limits.max_warnings
        )
        # The parts, one job each (the package docstring draws them).
        self._fan_out = NotificationFanOut(driver, limits, self.traces, self.warn)
        self.saw: Callable[[Task], Task] = self._fan_out.saw
        """See :meth:`NotificationFanOut.saw` (its bound method: no forwarding frame a poll)."""
        self._observer = RequestObserver(
            driver, self.tracing, self.redaction, self.traces, self.received_traces, self._exchange
        )
        self._server_requests = ServerRequests(
            self._connection, transport, limits, timeouts, self.warn, self._observer
        )
        self._orphans = OrphanWatch(
            driver,
            timeouts,
            self.redaction,
            self._waiters,
            self._fan_out.close_request,
            self._abandoned,
        )

    # -- life ------------------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self._state

    def _move(self, to: SessionState) -> None:
        assert to in MOVES[self._state], f"session: {self._state.value} -> {to.value}"
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
        self._now = loop_clock()  # anyio.current_time's clock, less its look-up per request
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

    # -- registration: each with the part that serves it ----------------------------------------

    def on_request(self, method: str, handler: RequestHandler, *, held: bool = False) -> None:
        """See :meth:`ServerRequests.on_request`."""
        self._server_requests.on_request(method, handler, held=held)

    def on_orphaned_task(self, handler: Callable[[OrphanedTask], None]) -> Callable[[], None]:
        """See :meth:`OrphanWatch.on_orphaned_task`."""
        return self._orphans.on_orphaned_task(handler)

    def on_connection_end(self, listener: Callable[[MCPTasksError], None]) -> Callable[[], None]:
        """Call ``listener`` with the error that ended the connection: ClientClosed when the
        caller closed it, or what broke it (ProcessExited, a fatal ProtocolError ...). A Poller
        ends its waits then. One that raises is logged and stops nothing. Returns the
        unsubscriber."""
        return subscribe(self._end_listeners, listener)

    def on_notification(self, method: str, handler: NotificationHandler) -> Callable[[], None]:
        """See :meth:`NotificationFanOut.on_notification`."""
        return self._fan_out.on_notification(method, handler)

    def on_progress(self, handler: ProgressHandler) -> Callable[[], None]:
        """See :meth:`NotificationFanOut.on_progress`."""
        return self._fan_out.on_progress(handler)

    def progress(self, task_id: str) -> TaskProgress | None:
        """The last progress delivered for the task, if its token is still held (no
        request)."""
        return self._fan_out.progress(task_id)

    @property
    def progress_stats(self) -> ProgressStats:
        """What the progress book holds and has counted (bounded by
        ``Limits.max_progress_tokens``)."""
        return self._fan_out.progress_stats

    async def reply(self, reply: JSONRPCResponse, *, timeout: float | None = None) -> None:
        """See :meth:`ServerRequests.reply`."""
        await self._server_requests.reply(reply, timeout=timeout)

    # -- requests --------------------------------------------------------------------------------

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
        return self._observer.observed(method, params, options)

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
        # C-46: a token in use raises before anything. A plain dict with no ``_meta`` (a
        # poll's params) carries none: no call to find out.
        if params is None or (type(params) is dict and "_meta" not in params):
            token = None
        else:
            from .._sansio.progress import progress_token_of  # (a call with a _meta)

            token = progress_token_of(params)
            if token is not None:
                self._fan_out.book.check(token)
        # A driver that keeps params as they are (2025-11-25) is not asked per request.
        wire = (
            params
            if self._params_as_given
            else self._driver.params(method, params, tasks=options.tasks)
        )
        if meta:  # SEP-414 trace context; a key the caller put in _meta stays
            wire = _obs.with_carrier(wire, meta)
        message = self._connection.request(method, wire)
        if token is not None:
            on_result = self._fan_out.open_progress(
                token, message.id, orphan_tool is not None, on_result
            )
        waiter = AwaitedAnswer(method, on_result=on_result)
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
        deadline = self._now() + limit
        try:
            item: Incoming | None = None
            if inline:
                # One cancel scope per request: the exchange's own carries the deadline (and
                # raises TimeoutError past it). An answer or a fault is dispatched without a
                # wait; anything else (an answer that went through the reader, a server's
                # request as the answer) is waited for below, within the same deadline.
                sent = True
                item = await self.transport.exchange(message, held=held, deadline=deadline)
                if (
                    type(item) is JSONRPCResponse
                    and item.id == message.id
                    and self._connection.settle(message.id)
                ):
                    # The common answer, matched to its request in one step: no event, no
                    # look-up of the waiter (it is this one), no progress token to close (an
                    # inline request carries none). Anything else goes through _settle.
                    waiter.result = item.result
                    if waiter.on_result is not None:  # _call_on_result's work, inline
                        try:
                            waiter.on_result(item.result)
                        except Exception:  # the caller's hook: logged, it stops nothing
                            log.exception("an on_created hook raised")
                    waiter.answered = True  # nobody waits on its event: this task is its caller
                    item = None
                elif isinstance(item, _ANSWERS):
                    self._settle(item)
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
                    self._orphans.report(waiter, orphan_tool, "cancelled")
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
                    self._fan_out.close_request(message.id)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

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

    def _abandoned(self, request_id: RequestId) -> None:
        """The orphan watch gave up on ``request_id``: no ``notifications/cancelled`` (its
        caller already stopped waiting)."""
        self._give_up(request_id, notify=False)

    def _keep_reading(
        self,
        request_id: RequestId,
        waiter: AwaitedAnswer,
        tool: str | None,
        sent: bool,
        reason: str,
    ) -> bool:
        """After a task call was sent, read its answer for ``Timeouts.orphan_watch`` more
        seconds in the background and report the task it created (no lost task ids)."""
        if tool is None or not sent or self._task_group is None or self._broken is not None:
            return False
        self._task_group.start_soon(self._orphans.watch, request_id, waiter, tool, reason)
        return True

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
                self._fan_out.dispatch(event.notification)
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
        if isinstance(item, _ANSWERS):
            return self._settle(item)
        if isinstance(item, JSONRPCRequest) and self._server_requests.id_too_long(item.id):
            await self._server_requests.refuse_id(item)
            return True
        try:
            event = self._connection.receive(item)
        except ProtocolError as exc:
            self._break(exc)
            return False
        if isinstance(event, RequestReceived):
            assert self._task_group is not None
            await self._server_requests.serve(event.request, self._task_group)
        else:
            self._settled(event)
        return True

    def _settle(self, item: JSONRPCResponse | JSONRPCError | TransportFault) -> bool:
        """What :meth:`_dispatch` does with an answer or a fault, which never awaits: a
        caller's inline answer is settled here without a coroutine."""
        if isinstance(item, TransportFault):
            self._on_fault(item)
            return not (item.request_id is None and item.fatal)
        try:
            event = self._connection.receive(item)
        except ProtocolError as exc:
            self._break(exc)
            return False
        self._settled(event)
        return True

    def _settled(self, event: Any) -> None:
        """Act on an incoming message's event, a server's request aside (:meth:`_dispatch`)."""
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
            self._fan_out.close_request(event.request_id)
        elif isinstance(event, NotificationReceived):
            self._fan_out.dispatch(event.notification)
        elif isinstance(event, UncorrelatedError):
            self.warn(event.error)
        elif isinstance(event, DuplicateRequest):
            log.debug("%s %r arrived again; answered once", event.request.method, event.request.id)
        elif isinstance(event, LateResponse):
            log.debug("ignored late answer to %s (id %r)", event.method, event.request_id)

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
