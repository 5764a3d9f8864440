"""The async facade: one connection to one server, driven by the caller.

Theory of operation. Entering :class:`Client` enters its transport, starts one reader task in a
task group the client owns, and performs the handshake the caller configured (L:40-147). The
reader feeds every incoming message to the sans-I/O :class:`RPCConnection` and acts on the event
it returns: a response wakes the one caller waiting for it; a server->client request goes to the
handler the caller registered for its method (or is answered with a JSON-RPC error saying no
handler was registered: the library never answers on the caller's behalf, except ``ping``, which
the spec requires every party to answer); a notification goes to the registered callbacks.

If the connection breaks (the child process exits, the server sends a response for an id never
used, stdout carries something that is not JSON-RPC), every waiting request fails with that
error, and so does every later one: nothing hangs, nothing reconnects on its own.

Every send is bounded: a request's by its deadline, a notification's by ``Timeouts.request``
(or its own ``timeout=``), an answer to the server by ``Timeouts.request``. At most
``Limits.max_server_requests`` server->client requests are handled at once; one beyond that
is answered at once with a JSON-RPC error, so a flood costs no memory; so is one whose string
id is longer than ``Limits.max_request_id_chars`` (-32600, ``"id": null``).

Leaving the ``async with`` cancels everything the client started, ends every pending request
(and every Poller wait on this client) with :class:`~mcp_tasks_client.ClientClosed`, and closes
the transport.
"""

from __future__ import annotations

import collections
import datetime as dt
import functools
import logging
import math
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import attrs

from . import observability as _obs
from ._errors import (
    CapabilityNotNegotiated,
    ClientClosed,
    CreatedTaskUnreadable,
    DecodeError,
    InputRequired,
    InvalidParams,
    InvalidToolAnnotation,
    LimitExceeded,
    MCPTasksError,
    MethodNotFound,
    MissingClientCapability,
    ProtocolError,
    RequestTimeout,
    RPCError,
    TaskAugmentationNotAllowed,
    TaskAugmentationRequired,
    TaskNotCancellable,
    TaskNotFound,
    TransportClosed,
    TransportError,
    UnexpectedPlainResult,
    UnsupportedInGeneration,
    UnsupportedProtocolVersion,
    UsageError,
)
from ._generation import Generation
from ._limits import Limits
from ._protocol.connection import (
    DuplicateRequest,
    ErrorReceived,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResultReceived,
    RPCConnection,
    UncorrelatedError,
)
from ._protocol.dialects import Dialect, Stateless, dialect_for, header_annotations
from ._protocol.progress import (
    ProgressBook,
    ProgressStats,
    TaskProgress,
    progress_token_of,
)
from ._protocol.task_machine import Violation
from ._transports.base import Incoming, Transport, TransportFault
from .builders import GetPrompt, ReadResource, TaskToolCall, ToolCall
from .journal import Journal, JournalEntry, JournalError, NotJournaled, RecordedSession
from .models import (
    TASKS_EXTENSION,
    CallToolResult,
    ClientCapabilities,
    CreateTaskResult,
    DiscoverResult,
    ErrorObject,
    GetPromptResult,
    Implementation,
    InitializeResult,
    InputRequest,
    InputRequiredResult,
    JSONObject,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    ListPromptsResult,
    ListResourcesResult,
    ListTasksResult,
    ListToolsResult,
    Prompt,
    ReadResourceResult,
    RequestId,
    Resource,
    ServerCapabilities,
    Task,
    TaskSupport,
    TextContent,
    Tool,
)

__all__ = [
    "CallInputs",
    "Client",
    "NotificationHandler",
    "OrphanedTask",
    "ProgressHandler",
    "RequestHandler",
    "Timeouts",
]

# How the SDK peers word a refused call inside an isError result (tests/peers/): mcp 1.30
# "This tool requires task-augmented invocation" / "does not support task-augmented
# invocation"; TS 1.32 "MCP error -32601: Tool X requires task augmentation".
_REQUIRES_TASK = re.compile(r"requires? task[- ]augment", re.IGNORECASE)
_DOES_NOT_SUPPORT_TASK = re.compile(
    r"(does not|doesn't|not) (support|allow)\w* task[- ]augment|taskSupport.{0,20}forbidden",
    re.IGNORECASE,
)


def _mentions_task(message: str) -> bool:
    return "task" in message.lower()


def _error_text(result: CallToolResult) -> str | None:
    """The text of an isError result, for recognising a server's refusal."""
    if not result.is_error:
        return None
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


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

_TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
_NOT_INLINE = frozenset({"initialize", "subscriptions/listen"})


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class _Answerable(Protocol):
    """A request MRTR can answer and repeat (ToolCall, TaskToolCall, GetPrompt, ...)."""

    def answering(self: A, answer: InputRequiredResult, responses: Mapping[str, Any]) -> A: ...


A = TypeVar("A", bound=_Answerable)


class CallInputs(Protocol):
    """What answers a call's MRTR input requests (an InputRouter)."""

    async def answer_call_input(self, key: str, request: InputRequest) -> JSONObject | None: ...


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


def _timed_out(scope: anyio.CancelScope) -> None:
    """Raise TimeoutError, as ``anyio.fail_after`` does, if ``scope``'s deadline ended it."""
    if scope.cancelled_caught and anyio.current_time() >= scope.deadline:
        raise TimeoutError


class _Done:
    """An ``anyio.Event`` made only once someone waits: a request answered in its caller's
    own task (``Transport.exchange``) never does, and makes none."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self._set:
            await anyio.lowlevel.checkpoint()  # as Event.wait does on a set event
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


@attrs.define
class _Waiter:
    method: str
    done: _Done = attrs.field(factory=_Done)
    result: JSONObject | None = None
    error: MCPTasksError | None = None
    on_result: Callable[[JSONObject], None] | None = None
    """Called by the reader with the result before it reads the next message."""


def _resumed_first_id() -> int:
    """Where a client resuming a session starts its request ids: at random in [2**32, 2**52)
    (exact in every JSON parser). The session's earlier requestors numbered theirs from 1,
    an id MUST NOT be used twice within one session, and concurrent clients of one session
    (workers sharing a journal) must not collide either: the server routes responses by id."""
    return 2**32 + secrets.randbelow(2**52 - 2**32)


class Client:
    """An MCP client connection, opened with ``async with``.

    Nothing is declared, sent, polled or answered unless the caller configured it: the client
    capabilities are exactly ``capabilities``; the protocol version is the ``generation``'s.

    Args:
        transport: How to reach the server (HttpTransport, StdioTransport, MemoryTransport);
            the client opens and closes it.
        generation: The protocol generation to speak, chosen by you (``probe_server`` tells
            what a server speaks); never guessed, never switched.
        client_info: Your name and version, sent in ``initialize`` (2025-11-25) or in every
            request's ``_meta`` (2026-07-28).
        capabilities: Exactly what the client declares (``{}`` by default);
            ``InputRouter.capabilities()`` builds it from the handlers you serve.
        timeouts: Request deadlines (:class:`Timeouts`); a call's own ``timeout=`` wins.
        limits: Bounds on what a server can make the client hold (:class:`Limits`).
        on_warning: Called with each problem that ruined no request (also kept in
            ``warnings``); it must not block.
        resume: The InitializeResult of a kept 2025-11-25 session the transport carries
            (``HttpTransport(url, session_id=...)``): the session is resumed without
            ``initialize``.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        generation: Generation,
        client_info: Implementation,
        capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
        timeouts: Timeouts = Timeouts(),
        limits: Limits = Limits(),  # noqa: B008 - frozen value
        on_warning: Callable[[MCPTasksError], None] | None = None,
        resume: InitializeResult | None = None,
    ) -> None:
        if resume is not None:
            if generation.stateless:
                raise UsageError(f"{generation.value} has no session to resume (E C7)")
            if transport.session is None:
                raise UsageError(
                    "Client(resume=...) resumes the session the transport carries: give the "
                    "transport its session id (HttpTransport(url, session_id=...))"
                )
            if not isinstance(resume, InitializeResult):
                raise UsageError(
                    f"resume= takes the InitializeResult of the session, got {type(resume)!r}"
                )
        self.transport = transport
        self.generation = generation
        self.client_info = client_info
        self.capabilities = capabilities
        self.timeouts = timeouts
        self.limits = limits
        self._on_warning = on_warning
        self._dialect: Dialect = dialect_for(generation, capabilities, client_info)
        self._connection = RPCConnection(_resumed_first_id() if resume is not None else 1)
        self._waiters: dict[RequestId, _Waiter] = {}
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, list[NotificationHandler]] = {}
        self._initialize_result: InitializeResult | None = None
        self._resume = resume
        self._discover_result: DiscoverResult | None = None
        self._known_tools: dict[str, Tool] = {}
        self._broken: MCPTasksError | None = None
        self._entered = False
        self._task_group: anyio.abc.TaskGroup | None = None
        self._serving = 0
        # The reader waits in transport.receive() with everything before dispatched: a
        # transport may then hand a notification straight to _take_notification.
        self._reader_idle = False
        self._reader_stopped = False  # the direct path broke the client: the reader stops
        self._end_listeners: list[Callable[[MCPTasksError], None]] = []
        self._orphan_handlers: list[Callable[[OrphanedTask], None]] = []
        self._progress = ProgressBook(
            limits.max_progress_tokens, tasks_keep_tokens=not self._dialect.stateless
        )
        self._progress_handlers: list[ProgressHandler] = []
        self._wall_clock: Callable[[], dt.datetime] = _utc_now
        self.warnings: collections.deque[MCPTasksError] = collections.deque(
            maxlen=limits.max_warnings
        )
        """Problems that ruined no request (an uncorrelated error, a side stream that ended);
        the last ``Limits.max_warnings`` of them (``on_warning`` sees every one)."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        if self._entered:
            raise UsageError("a Client can be entered only once")
        self._entered = True
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
        try:
            await self._handshake()
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        # The caller's exception is not passed into the task group: it would come back wrapped
        # in an ExceptionGroup. Only a failure of the client's own tasks surfaces from here.
        task_group = self._task_group
        assert task_group is not None
        self.transport.take_notifications(None)
        self._break(ClientClosed(), replace=True)
        task_group.cancel_scope.cancel()
        try:
            await task_group.__aexit__(None, None, None)
        finally:
            await self.transport.__aexit__(None, None, None)

    async def _handshake(self) -> None:
        if self._dialect.stateless:
            # E C7: no initialize, no session; every request says who the client is. Nothing
            # is sent until the caller asks (server/discover too: Client.discover).
            self.transport.stateless(self._dialect.headers)
            return
        requested = self._dialect.generation.protocol_version
        if self._resume is not None:
            # A session an earlier client kept (HttpTransport(delete_session_on_close=False)):
            # what it agreed on stands; nothing is sent until the caller asks. A server that
            # forgot the session answers the first request with 404: SessionExpired.
            if not self._dialect.supports(self._resume.protocol_version):
                raise UnsupportedProtocolVersion(requested, [self._resume.protocol_version])
            self._initialize_result = self._resume
            self.transport.negotiated(self._resume.protocol_version)
            return
        params = {
            "protocolVersion": requested,
            "capabilities": self.encode(self.capabilities),
            "clientInfo": self.encode(self.client_info),
        }
        try:
            raw = await self.request("initialize", params, timeout=self.timeouts.initialize)
        except InvalidParams as exc:  # some servers refuse with -32602 {supported}
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if isinstance(supported, list):
                raise UnsupportedProtocolVersion(requested, [str(v) for v in supported]) from exc
            raise
        result = self._decode(raw, InitializeResult)
        if not self._dialect.supports(result.protocol_version):  # C-08
            raise UnsupportedProtocolVersion(requested, [result.protocol_version])
        self._initialize_result = result
        self.transport.negotiated(result.protocol_version)
        await self.notify("notifications/initialized", timeout=self.timeouts.initialize)  # C-09

    # -- what the handshake agreed -----------------------------------------------------------

    @property
    def initialize_result(self) -> InitializeResult:
        if self._dialect.stateless:
            raise UnsupportedInGeneration(
                "initialize", self.generation.value, "use discover() for the server's capabilities"
            )
        if self._initialize_result is None:
            raise UsageError("the client is not connected; use `async with Client(...)`")
        return self._initialize_result

    @property
    def discover_result(self) -> DiscoverResult | None:
        """What the last :meth:`discover` returned (2026-07-28), or None before one."""
        return self._discover_result

    @property
    def protocol_version(self) -> str:
        if self._dialect.stateless:
            return self._dialect.protocol_version
        return self.initialize_result.protocol_version

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """2025-11-25: what ``initialize`` returned. 2026-07-28: what :meth:`discover` returned
        (UsageError before a discover: a stateless client learns nothing unasked, E C11)."""
        if self._dialect.stateless:
            if self._discover_result is None:
                raise UsageError(
                    "a 2026-07-28 client knows the server's capabilities only from "
                    "`await client.discover()`"
                )
            return self._discover_result.capabilities
        return self.initialize_result.capabilities

    @property
    def server_info(self) -> Implementation:
        return self.initialize_result.server_info

    async def discover(self, *, timeout: float | None = None) -> DiscoverResult:
        """``server/discover`` (2026-07-28, E C9-C11): the server's versions and capabilities.

        Sent only when called. UnsupportedProtocolVersion when the server does not list this
        client's version; ProtocolVersionRefused (-32022) carries what it supports.
        """
        if not self._dialect.stateless:
            raise UnsupportedInGeneration(
                "server/discover", self.generation.value, "initialize told the capabilities"
            )
        raw = await self.request("server/discover", timeout=timeout)
        result = self._decode(raw, DiscoverResult)
        if not any(self._dialect.supports(v) for v in result.supported_versions):
            raise UnsupportedProtocolVersion(
                self._dialect.protocol_version, result.supported_versions
            )
        self._discover_result = result
        return result

    # -- registration ------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer server->client ``method`` requests with ``handler`` (one per method)."""
        if method in self._request_handlers:
            raise UsageError(f"a handler for {method!r} is already registered")
        self._request_handlers[method] = handler

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

    # -- requests ----------------------------------------------------------------------------

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request and wait for its raw result object.

        Raises RPCError (or a subclass) for a JSON-RPC error answer, RequestTimeout after
        ``timeout`` seconds (default: ``Timeouts.request``), a TransportError when the
        connection breaks.
        """
        return await self._request(method, params, timeout, self.timeouts.notify_cancelled)

    async def _request(
        self,
        method: str,
        params: JSONObject | None,
        timeout: float | None,
        notify: bool,
        *,
        orphan_tool: str | None = None,
        tasks: bool = False,
        on_result: Callable[[JSONObject], None] | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> JSONObject:
        """:meth:`_exchange`, observed (a DEBUG record, a span) only when someone listens."""
        tracer = _obs.tracer()
        if tracer is None and not _obs.REDACTION.enabled and not log.isEnabledFor(logging.DEBUG):
            return await self._exchange(
                method, params, timeout, notify, orphan_tool, tasks, on_result, on_id
            )
        return await self._observed(
            tracer, method, params, timeout, notify, orphan_tool, tasks, on_result, on_id
        )

    async def _observed(
        self,
        tracer: Any,
        method: str,
        params: JSONObject | None,
        timeout: float | None,
        notify: bool,
        orphan_tool: str | None,
        tasks: bool,
        on_result: Callable[[JSONObject], None] | None,
        on_id: Callable[[RequestId], None] | None,
    ) -> JSONObject:
        """One request with its DEBUG record (method, id, elapsed, outcome) and its span."""
        ids: list[RequestId] = []

        def seen(request_id: RequestId) -> None:
            ids.append(request_id)
            if on_id is not None:
                on_id(request_id)

        task_id = params.get("taskId") if isinstance(params, dict) else None
        task_id = task_id if isinstance(task_id, str) else None
        _obs.remember(task_id)
        tool = params.get("name") if method == "tools/call" and params is not None else None
        outcome = "cancelled"
        started = time.perf_counter()
        try:
            if tracer is None:
                raw = await self._exchange(
                    method, params, timeout, notify, orphan_tool, tasks, on_result, seen
                )
            else:
                attributes: dict[str, Any] = {
                    "mcp.method.name": method,
                    "mcp.protocol.version": self.generation.protocol_version,
                    "mcp_tasks.generation": self.generation.value,
                }
                if isinstance(tool, str):
                    attributes["gen_ai.tool.name"] = tool
                if task_id is not None:
                    attributes["mcp_tasks.task.id"] = _obs.task_attr(task_id)
                name = f"{method} {tool}" if isinstance(tool, str) else method
                with _obs.span(name, attributes, client=True) as span:
                    try:
                        raw = await self._exchange(
                            method, params, timeout, notify, orphan_tool, tasks, on_result, seen
                        )
                    finally:
                        if ids:
                            span.set_attribute("jsonrpc.request.id", str(ids[0]))
                    created = self._dialect.created_task_id(raw) if tasks else None
                    if created is not None:
                        span.set_attribute("mcp_tasks.task.id", _obs.task_attr(created))
            if tasks:
                _obs.remember(self._dialect.created_task_id(raw))
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
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s (id %r%s) %.1f ms: %s",
                    method,
                    ids[0] if ids else None,
                    "" if task_id is None else f", task {_obs.task_id_label(task_id)}",
                    (time.perf_counter() - started) * 1000.0,
                    outcome,
                )
        return raw

    async def _exchange(
        self,
        method: str,
        params: JSONObject | None,
        timeout: float | None,
        notify: bool,
        orphan_tool: str | None = None,
        tasks: bool = False,
        on_result: Callable[[JSONObject], None] | None = None,
        on_id: Callable[[RequestId], None] | None = None,
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
        limit = self.timeouts.request if timeout is None else timeout
        token = progress_token_of(params)  # C-46: a token in use raises before anything
        if token is not None:
            self._progress.check(token)
        message = self._connection.request(
            method, self._dialect.params(method, params, tasks=tasks)
        )
        if token is not None:
            on_result = self._open_progress(token, message.id, orphan_tool is not None, on_result)
        waiter = _Waiter(method, on_result=on_result)
        self._waiters[message.id] = waiter
        if on_id is not None:
            on_id(message.id)
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
        try:
            # fail_after's scope without its generator (a scope per request is enough cost).
            with anyio.CancelScope(deadline=anyio.current_time() + limit) as deadline:
                if inline:
                    sent = True
                    item = await self.transport.exchange(message)
                    if item is not None:
                        await self._dispatch(item)
                else:
                    await self.transport.send(message)
                    sent = True
                if not waiter.done.is_set():
                    await waiter.done.wait()
            _timed_out(deadline)
        except TimeoutError:
            if not waiter.done.is_set():
                keep = self._keep_reading(message.id, waiter, orphan_tool, sent, "timeout")
                if not keep:
                    self._give_up(message.id, notify=notify and method != "initialize")
                raise RequestTimeout(method, limit) from None
            # The answer arrived in the same instant as the deadline: it is the answer.
        except BaseException:
            if waiter.done.is_set():
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
            self._warn(LimitExceeded("max_progress_tokens", limit, "the progress tokens held"))
        if not task_call:
            return on_result

        def bind(raw: JSONObject) -> None:
            task_id = self._dialect.created_task_id(raw)
            if task_id is not None:
                earlier = self._progress.bind(request_id, task_id, now=self._wall_clock())
                task = raw.get("task")
                if isinstance(task, dict) and task.get("status") in _TERMINAL_STATUSES:
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

    def _ended_hook(self, task_id: str) -> Callable[[JSONObject], None]:
        """From the reader, at a snapshot's arrival: a terminal one ends the task's progress
        token before the next message is read (progress after it is late, V-24)."""

        def ended(raw: JSONObject) -> None:
            if raw.get("taskId") == task_id and raw.get("status") in _TERMINAL_STATUSES:
                self._progress.task_ended(task_id)

        return ended

    def _saw(self, task: Task) -> Task:
        """A snapshot the client read: a terminal one ends its task's progress token."""
        if task.status.is_terminal:
            self._progress.task_ended(task.task_id)
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
            self._warn(exc)

    def _keep_reading(
        self,
        request_id: RequestId,
        waiter: _Waiter,
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
        self, request_id: RequestId, waiter: _Waiter, tool: str, reason: str
    ) -> None:
        try:
            with anyio.move_on_after(self.timeouts.orphan_watch):
                await waiter.done.wait()
        except BaseException:  # cancelled: the client is closing
            self._end_orphan_watch(request_id, waiter, tool, reason)
            raise
        finally:
            self._waiters.pop(request_id, None)
            self._progress.close_request(request_id)
        if not waiter.done.is_set():
            self._give_up(request_id, notify=False)
            within = f"within {self.timeouts.orphan_watch:g} s"
            log.warning(_UNANSWERED, tool, request_id, within)
            return
        self._end_orphan_watch(request_id, waiter, tool, reason)

    def _end_orphan_watch(
        self, request_id: RequestId, waiter: _Waiter, tool: str, reason: str
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

    def _report_orphan(self, waiter: _Waiter, tool: str, reason: str) -> None:
        task_id = self._dialect.created_task_id(waiter.result)
        if task_id is None or waiter.result is None:
            return  # an error, or no task: nothing runs on the server
        orphan = OrphanedTask(task_id, tool, reason, waiter.result)
        _obs.remember(task_id)
        log.warning(
            "task %r of tool %r was created after its caller stopped waiting (%s); it runs "
            "on the server until it ends or is cancelled",
            _obs.TaskId(task_id),
            tool,
            reason,
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

    async def list_tools_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListToolsResult:
        """One page of ``tools/list``; the cursor is opaque (C-23)."""
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self.request("tools/list", params, timeout=timeout)
        page = self._decode(raw, ListToolsResult)
        if isinstance(self._dialect, Stateless):
            page = self._checked_annotations(page, self._dialect)
        for tool in page.tools:  # the caller listed them: their metadata guards later calls
            self._known_tools.pop(tool.name, None)
            self._known_tools[tool.name] = tool
        while len(self._known_tools) > self.limits.max_known_tools:  # the oldest go first
            del self._known_tools[next(iter(self._known_tools))]
        return page

    def _checked_annotations(self, page: ListToolsResult, dialect: Stateless) -> ListToolsResult:
        """E C60: a tool with invalid ``x-mcp-header`` annotations is reported and left out;
        the valid annotations of the others are what their calls' headers mirror."""
        kept: list[Tool] = []
        for tool in page.tools:
            try:
                annotations = header_annotations(tool.input_schema)
            except ValueError as exc:
                dialect.tool_headers.pop(tool.name, None)
                self._warn(InvalidToolAnnotation(tool.name, str(exc)))  # logged there
                continue
            dialect.tool_headers.pop(tool.name, None)
            if annotations:
                dialect.tool_headers[tool.name] = annotations
            while len(dialect.tool_headers) > self.limits.max_known_tools:
                del dialect.tool_headers[next(iter(dialect.tool_headers))]
            kept.append(tool)
        if len(kept) == len(page.tools):
            return page
        return attrs.evolve(page, tools=tuple(kept))

    async def list_tools(self, *, timeout: float | None = None) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` page by page (``timeout`` applies per page).

        A cursor the server already gave is a ProtocolError (the pages would loop forever).
        """
        cursors = _Cursors("tools/list")
        while True:
            page = await self.list_tools_page(cursors.current, timeout=timeout)
            for tool in page.tools:
                yield tool
            if not cursors.follow(page.next_cursor):
                return

    def known_tool(self, name: str) -> Tool | None:
        """The tool's metadata as the caller's own ``list_tools`` last saw it (no request)."""
        return self._known_tools.get(name)

    async def call_tool(
        self,
        call: ToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> CallToolResult:
        """A plain ``tools/call``, never task-augmented; see :meth:`_call_tool_once`.

        With ``inputs`` (an InputRouter, for this call only), a 2026-07-28 answer that needs
        input first (MRTR, E C45-C48) is answered by its default handlers and the call retried
        (a new request: same params, ``inputResponses``, ``requestState`` echoed), at most
        ``Limits.max_input_rounds`` times; ``timeout`` applies to each round. An input no
        handler answers raises InputRequired, as without ``inputs``.
        """
        if isinstance(call, TaskToolCall):
            raise UsageError(
                f"call_tool() makes a plain call; {call.name!r} was built with as_task(): "
                "pass it to start() to run it as a task, or pass the ToolCall itself"
            )
        if not isinstance(call, ToolCall):
            raise UsageError(f"call_tool() takes a ToolCall, got {type(call).__name__}")
        return await self._mrtr(
            call, functools.partial(self._call_tool_once, tool=tool, timeout=timeout), inputs
        )

    async def _mrtr(
        self, request: A, once: Callable[[A], Awaitable[T]], inputs: CallInputs | None
    ) -> T:
        """``once(request)``; with ``inputs``, each MRTR round answered and retried."""
        rounds = 0
        while True:
            try:
                return await once(request)
            except InputRequired as needed:
                if inputs is None:
                    raise
                answers = await self._answers(needed, inputs, rounds)
                request = request.answering(needed.answer, answers)
                rounds += 1

    async def _answers(
        self, needed: InputRequired, inputs: CallInputs, rounds: int
    ) -> dict[str, JSONObject]:
        """The answers to one MRTR round, or ``needed`` raised again when one is missing."""
        if rounds >= self.limits.max_input_rounds:
            raise LimitExceeded(
                "max_input_rounds",
                self.limits.max_input_rounds,
                f"the MRTR rounds of {needed.name!r}",
            ) from needed
        answer: InputRequiredResult = needed.answer
        responses: dict[str, JSONObject] = {}
        for key, request in (answer.input_requests or {}).items():
            response = await inputs.answer_call_input(key, request)
            if response is None:
                raise needed
            responses[key] = response
        return responses

    def _created_hook(
        self, on_created: Callable[[str], None] | None
    ) -> Callable[[JSONObject], None] | None:
        if on_created is None:
            return None

        def hook(raw: JSONObject) -> None:
            task_id = self._dialect.created_task_id(raw)
            if task_id is not None:
                on_created(task_id)

        return hook

    def _plain_answer(self, raw: JSONObject, cls: type[T], method: str, name: str) -> T:
        answer = self._read(raw, functools.partial(self._dialect.read_answer, cls=cls))
        if isinstance(answer, InputRequiredResult):
            raise InputRequired(method, name, answer)
        return answer

    # -- resources and prompts (both generations; MRTR in 2026-07-28) ---------------------

    async def list_resources_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListResourcesResult:
        """One page of ``resources/list``; the cursor is opaque."""
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self.request("resources/list", params, timeout=timeout)
        return self._decode(raw, ListResourcesResult)

    async def list_resources(self, *, timeout: float | None = None) -> AsyncIterator[Resource]:
        """Every resource, page by page (a cursor given twice is a ProtocolError)."""
        cursors = _Cursors("resources/list")
        while True:
            page = await self.list_resources_page(cursors.current, timeout=timeout)
            for resource in page.resources:
                yield resource
            if not cursors.follow(page.next_cursor):
                return

    async def read_resource(
        self,
        read: ReadResource | str,
        *,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> ReadResourceResult:
        """``resources/read``. In 2026-07-28 it may need input first: InputRequired, or with
        ``inputs`` answered and retried as for :meth:`call_tool`."""
        request = ReadResource(read) if isinstance(read, str) else read

        async def once(request: ReadResource) -> ReadResourceResult:
            params = self._call_params(request.params())
            raw = await self.request("resources/read", params, timeout=timeout)
            return self._plain_answer(raw, ReadResourceResult, "resources/read", request.uri)

        return await self._mrtr(request, once, inputs)

    async def list_prompts_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListPromptsResult:
        """One page of ``prompts/list``; the cursor is opaque."""
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self.request("prompts/list", params, timeout=timeout)
        return self._decode(raw, ListPromptsResult)

    async def list_prompts(self, *, timeout: float | None = None) -> AsyncIterator[Prompt]:
        """Every prompt, page by page (a cursor given twice is a ProtocolError)."""
        cursors = _Cursors("prompts/list")
        while True:
            page = await self.list_prompts_page(cursors.current, timeout=timeout)
            for prompt in page.prompts:
                yield prompt
            if not cursors.follow(page.next_cursor):
                return

    async def get_prompt(
        self,
        get: GetPrompt,
        *,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> GetPromptResult:
        """``prompts/get``; MRTR as for :meth:`read_resource`."""

        async def once(request: GetPrompt) -> GetPromptResult:
            params = self._call_params(request.params())
            raw = await self.request("prompts/get", params, timeout=timeout)
            return self._plain_answer(raw, GetPromptResult, "prompts/get", request.name)

        return await self._mrtr(get, once, inputs)

    async def _call_tool_once(
        self, call: ToolCall, *, tool: Tool | None = None, timeout: float | None = None
    ) -> CallToolResult:
        """A plain ``tools/call``, never task-augmented (2026-07-28: the tasks extension is not
        declared, so the server cannot make it a task, E S2).

        The tool's own errors are in ``is_error``; protocol errors raise RPCError. A tool whose
        metadata (``tool=``, or what the caller's ``list_tools`` saw) says ``taskSupport:
        "required"`` raises TaskAugmentationRequired before anything is sent (C-17); so does
        the server's refusal of such a call (-32601, or an isError result saying so; -32021
        naming the tasks extension in 2026-07-28). A 2026-07-28 answer that needs input first
        (MRTR) raises InputRequired: answer it and call ``call.answering(...)``.
        """
        meta = tool or self._known_tools.get(call.name)
        stateless = self._dialect.stateless  # 2026-07-28 tools carry no taskSupport (E 4)
        if not stateless and meta is not None and meta.task_support is TaskSupport.REQUIRED:
            raise TaskAugmentationRequired(call.name)
        try:
            raw = await self.request(
                "tools/call", self._call_params(call.params()), timeout=timeout
            )
        except MethodNotFound as exc:
            if _mentions_task(exc.message):
                raise TaskAugmentationRequired(call.name, server_said=exc.message) from exc
            raise
        except MissingClientCapability as exc:
            if TASKS_EXTENSION in exc.extensions:  # E S3: only runs as a task
                raise TaskAugmentationRequired(call.name, server_said=exc.message) from exc
            raise
        result = self._plain_answer(raw, CallToolResult, "tools/call", call.name)
        said = _error_text(result)
        if said is not None and _REQUIRES_TASK.search(said):
            raise TaskAugmentationRequired(call.name, server_said=said)
        return result

    async def start(
        self,
        call: TaskToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
        on_created: Callable[[str], None] | None = None,
        journal: Journal | None = None,
    ) -> CreateTaskResult | CallToolResult:
        """Start a tool call as a task; see :meth:`_start_once`. ``inputs`` answers MRTR
        rounds before the task exists, as for :meth:`call_tool` (E S21).

        With ``journal``, the created task is recorded (:meth:`journal_entry`) before this
        returns, within ``timeout`` (default ``Timeouts.request``); if the journal fails or
        takes longer, NotJournaled carries the created task.

        ``on_created(task_id)`` is called by the reader the moment the answer naming the
        created task arrives, before any later message is dispatched: bind the task's input
        handlers there (``InputRouter.binding``) and a server that asks at once (over stdio,
        on the GET stream) finds them. It must not block; what it raises is logged.
        """
        if isinstance(call, ToolCall):
            raise UsageError(
                f"start() runs a task; {call.name!r} is a plain ToolCall: pass "
                "call.as_task() (or call_tool() for a plain call)"
            )
        if not isinstance(call, TaskToolCall):
            raise UsageError(f"start() takes a TaskToolCall (ToolCall.as_task()), got {call!r}")
        once = functools.partial(
            self._start_once, tool=tool, timeout=timeout, on_created=on_created
        )
        started = await self._mrtr(call, once, inputs)
        if journal is not None and isinstance(started, CreateTaskResult):
            limit = self.timeouts.request if timeout is None else timeout
            try:
                with anyio.fail_after(limit):  # a journal that hangs must not hold the task
                    await journal.record(self.journal_entry(started.task, call.name))
            except TimeoutError as exc:
                problem = f"the journal did not record the task within {limit:g} s"
                raise NotJournaled(type(journal).__name__, problem, started) from exc
            except JournalError as exc:
                raise NotJournaled(exc.path, exc.problem, started) from exc
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
                raise NotJournaled(type(journal).__name__, problem, started) from exc
        return started

    def journal_entry(self, task: Task, tool: str) -> JournalEntry:
        """What a journal records for ``task`` (started on this client with ``tool``): this
        server's identity, the generation and protocol version, and in 2025-11-25 the session
        the task is bound to with the initialize result it agreed (to resume it later)."""
        session = None
        if not self._dialect.stateless and self.transport.session is not None:
            session = RecordedSession(self.transport.session, self.encode(self.initialize_result))
        return JournalEntry(
            server=self.transport.identity,
            task_id=task.task_id,
            generation=self.generation,
            protocol_version=self.protocol_version,
            tool=tool,
            created_at=dt.datetime.now(dt.timezone.utc),
            session=session,
            snapshot=task,
        )

    async def _start_once(
        self,
        call: TaskToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        on_created: Callable[[str], None] | None = None,
    ) -> CreateTaskResult | CallToolResult:
        """Start a tool call as a task; returns the created task (T:463, E C18).

        2025-11-25: ``params.task``, and the answer is always a task (a plain answer raises
        UnexpectedPlainResult, or the typed refusal). Checked before sending, from what the
        caller already has (never a hidden request): the server declared
        ``tasks.requests.tools.call`` (C-16), and the tool's metadata does not forbid tasks
        (C-17).

        2026-07-28: the tasks extension is declared on this request only, and the server
        decides (E C20): a CreateTaskResult, or the call's own CallToolResult when it ran it
        inline; InputRequired when it needs input first (MRTR). When the caller ran
        ``discover()`` and the server has no tasks extension, CapabilityNotNegotiated.

        A Poller waits on either answer alike (``poller.wait(await client.start(call))``).
        """
        if self._dialect.stateless:
            if self._discover_result is not None and not self.server_capabilities.tasks_extension:
                raise CapabilityNotNegotiated(f"extensions[{TASKS_EXTENSION!r}]", rule="E C11")
        else:
            tasks = self.server_capabilities.tasks
            if tasks is None or not tasks.tools_call:
                raise CapabilityNotNegotiated("tasks.requests.tools.call", rule="C-16, T:113")
        meta = tool or self._known_tools.get(call.name)
        stateless = self._dialect.stateless  # 2026-07-28 tools carry no taskSupport (E 4)
        if not stateless and meta is not None and meta.task_support is TaskSupport.FORBIDDEN:
            raise TaskAugmentationNotAllowed(call.name)
        params = self._dialect.task_call_params(self._call_params(call.call.params()), call.ttl_ms)
        try:
            # C-26: a task-augmented request is never cancelled with notifications/cancelled,
            # not even when it times out before its CreateTaskResult arrives. Its late
            # answer is still read, and the task it created reported (OrphanedTask).
            raw = await self._request(
                "tools/call",
                params,
                timeout,
                notify=False,
                orphan_tool=call.name,
                tasks=True,
                on_result=self._created_hook(on_created),
            )
        except MethodNotFound as exc:
            raise TaskAugmentationNotAllowed(call.name, server_said=exc.message) from exc
        try:
            answer = self._dialect.read_start(raw)
        except DecodeError as exc:
            task_id = self._dialect.created_task_id(raw)
            if task_id is None:
                raise exc.under("$.result") from None
            _obs.remember(task_id)
            log.warning(
                "task %r was created, but its answer is malformed: %s", _obs.TaskId(task_id), exc
            )
            error = exc.under("$.result")
            raise CreatedTaskUnreadable(
                error.path, error.problem, error.value, task_id=task_id, raw=raw
            ) from None
        if isinstance(answer, CreateTaskResult):
            return answer
        if isinstance(answer, InputRequiredResult):
            raise InputRequired("tools/call", call.name, answer)
        if self._dialect.stateless:
            return answer  # E C18: the server chose to answer inline
        # A plain answer to a task call: the server ran it inline, or refused in an isError.
        said = _error_text(answer)
        if said is not None and _DOES_NOT_SUPPORT_TASK.search(said):
            raise TaskAugmentationNotAllowed(call.name, server_said=said)
        raise UnexpectedPlainResult(call.name, answer)

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """``tasks/get``: the task's current snapshot (T:454-459; E: with its inline result,
        error or input requests).

        -32602 is TaskNotFound here: the task id is the only parameter (unknown, expired, or
        another session's task).
        """
        # C-24 / A-26: the taskId param is the source of truth; no related-task _meta here.
        try:
            raw = await self._request(
                "tasks/get",
                {"taskId": task_id},
                timeout,
                self.timeouts.notify_cancelled,
                on_result=self._ended_hook(task_id),
            )
        except InvalidParams as exc:
            raise TaskNotFound(exc.code, exc.message, exc.data, method=exc.method) from exc
        task = self._read(raw, self._dialect.read_task)
        if task.task_id != task_id:  # V-26: a snapshot of another task is no answer
            raise DecodeError(
                "$.result.taskId", f"asked for task {task_id!r}, got another (V-26)", task.task_id
            )
        return self._saw(task)

    async def task_result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """``tasks/result``: blocks until the task is terminal, then its CallToolResult (T:465).

        Give it a deadline of its own (A-12): a task may legitimately run for its whole ttl.
        A JSON-RPC error the tool call ended in is raised as RPCError (V-12); so a -32602 here
        is InvalidParams, not TaskNotFound: it may be the tool's own invalid-params error as
        well as an unknown task (``get_task`` tells the two apart). 2025-11-25 only: in
        2026-07-28 the result is inline in the terminal snapshot (UnsupportedInGeneration).
        """
        raw = await self.task_result_raw(task_id, timeout=timeout)
        return self._decode(raw, CallToolResult)

    async def task_result_raw(self, task_id: str, *, timeout: float | None = None) -> JSONObject:
        """``tasks/result`` as the raw result object (a failed task's may hold only ``_meta``)."""
        if self._dialect.inline_results:
            raise UnsupportedInGeneration(
                "tasks/result", self.generation.value, "the result is inline in get_task()"
            )
        return await self.request("tasks/result", {"taskId": task_id}, timeout=timeout)

    async def update_task(
        self, task_id: str, responses: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        """``tasks/update`` (2026-07-28, E C28-C33): answers to some or all of the task's
        outstanding ``inputRequests``, by key (ElicitResult, CreateMessageResult,
        ListRootsResult, or their JSON). The ack is eventually consistent: the next snapshot
        may still show an answered key (an InputRouter does not show it twice).
        """
        if not self._dialect.stateless:
            raise UnsupportedInGeneration(
                "tasks/update", self.generation.value, "input is answered by an InputRouter"
            )
        params = {
            "taskId": task_id,
            "inputResponses": {k: self.encode(v) for k, v in responses.items()},
        }
        try:
            raw = await self.request("tasks/update", params, timeout=timeout)
        except InvalidParams as exc:
            raise TaskNotFound(exc.code, exc.message, exc.data, method=exc.method) from exc
        self._read(raw, self._dialect.read_ack)

    async def listen_tasks(
        self,
        task_ids: Sequence[str],
        *,
        timeout: float = math.inf,
        on_open: Callable[[RequestId], None] | None = None,
    ) -> None:
        """``subscriptions/listen`` for ``task_ids`` (2026-07-28, E C39-C44): the request stays
        open while the server pushes ``notifications/subscriptions/acknowledged`` (the ids it
        agreed to) and ``notifications/tasks`` (full snapshots) to the ``on_notification``
        handlers; it returns when the server closes it. Cancel the caller's scope to end it
        (HTTP: the stream is closed; stdio: ``notifications/cancelled``, E C44). A Poller with
        ``PollPolicy(listen=True)`` keeps one open for the tasks it waits on. ``on_open``
        gets the listen's request id before it is sent: the ``subscriptionId`` its
        notifications carry (E C41).
        """
        if not self._dialect.stateless:
            raise UnsupportedInGeneration(
                "subscriptions/listen", self.generation.value, "status comes unasked (C-22)"
            )
        params = {"notifications": {"taskIds": list(task_ids)}}
        raw = await self._request(
            "subscriptions/listen", params, timeout, notify=True, tasks=True, on_id=on_open
        )
        self._read(raw, self._dialect.read_ack)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task | None:
        """``tasks/cancel``. 2025-11-25: the task, now ``cancelled`` (T:494-497, C-26); needs
        the server's ``tasks.cancel`` capability (C-28). 2026-07-28: None, an empty and
        eventually consistent ack (E C36): the task may still end otherwise.

        -32602 raises TaskNotCancellable: a terminal (2025-11-25) or unknown task.
        """
        if not self._dialect.stateless:
            tasks = self.server_capabilities.tasks
            if tasks is None or not tasks.cancel:
                raise CapabilityNotNegotiated("tasks.cancel", rule="C-28")
        try:
            raw = await self.request("tasks/cancel", {"taskId": task_id}, timeout=timeout)
        except InvalidParams as exc:
            raise TaskNotCancellable(exc.code, exc.message, exc.data, method=exc.method) from exc
        cancelled = self._read(raw, self._dialect.read_cancel)
        return cancelled if cancelled is None else self._saw(cancelled)

    async def list_tasks_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListTasksResult:
        """One page of ``tasks/list`` (T:487-490); needs ``tasks.list`` (C-28). 2025-11-25
        only: 2026-07-28 has no task listing (E S17, UnsupportedInGeneration)."""
        if not self._dialect.lists_tasks:
            raise UnsupportedInGeneration(
                "tasks/list", self.generation.value, "keep the ids of the tasks you start"
            )
        tasks = self.server_capabilities.tasks
        if tasks is None or not tasks.list:
            raise CapabilityNotNegotiated("tasks.list", rule="C-28")
        params = {"cursor": cursor} if cursor is not None else None
        raw = await self.request("tasks/list", params, timeout=timeout)
        page = self._decode(raw, ListTasksResult)
        for task in page.tasks:
            self._saw(task)
        return page

    async def list_tasks(self, *, timeout: float | None = None) -> AsyncIterator[Task]:
        """Every task the server lists, following ``nextCursor`` (opaque, C-23); a cursor the
        server already gave is a ProtocolError (the pages would loop forever)."""
        cursors = _Cursors("tasks/list")
        while True:
            page = await self.list_tasks_page(cursors.current, timeout=timeout)
            for task in page.tasks:
                yield task
            if not cursors.follow(page.next_cursor):
                return

    async def open_listen_stream(self, *, timeout: float | None = None) -> None:
        """Open the transport's standalone server stream (HTTP GET, X:133), if it has one.

        RequestTimeout if the server has not started the stream within ``timeout`` (default
        ``Timeouts.request``); the attempt is then abandoned.
        """
        if self._dialect.stateless:
            raise UnsupportedInGeneration(
                "the standalone GET stream", self.generation.value, "E C56: there is none"
            )
        opener = getattr(self.transport, "open_listen_stream", None)
        if opener is None:
            raise UsageError(f"{type(self.transport).__name__} has no listen stream")
        limit = self.timeouts.request if timeout is None else timeout
        try:
            with anyio.fail_after(limit):
                await opener()
        except TimeoutError:
            raise RequestTimeout("GET (listen stream)", limit) from None
        except TransportClosed:
            if isinstance(self._broken, ClientClosed):
                raise self._broken from None
            raise

    # -- codec -------------------------------------------------------------------------------

    @property
    def dialect(self) -> Dialect:
        """The generation's sans-I/O dialect: what a request carries, what an answer means."""
        return self._dialect

    def decode(self, raw: Any, cls: type[T]) -> T:
        """``raw`` (parsed JSON) as ``cls``, read the way this client's generation writes it
        (a DecodeError names the path)."""
        return self._dialect.converter.decode(raw, cls)

    def encode(self, value: Any) -> Any:
        """``value`` (any model) as this generation's wire JSON."""
        return self._dialect.converter.encode(value)

    def read_status_notification(self, notification: JSONRPCNotification) -> Task:
        """The task a status notification carries (``notifications/tasks/status`` in
        2025-11-25, ``notifications/tasks`` in 2026-07-28); DecodeError under ``$.params``."""
        try:
            task = self._dialect.read_task(notification.params or {})
        except DecodeError as exc:
            raise exc.under("$.params") from None
        return self._saw(task)

    def _read(self, raw: JSONObject, reader: Callable[[JSONObject], T]) -> T:
        try:
            return reader(raw)
        except DecodeError as exc:
            raise exc.under("$.result") from None

    def _call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """A call's params with its MRTR answers as wire JSON."""
        responses = params.get("inputResponses")
        if isinstance(responses, dict):
            params["inputResponses"] = {k: self.encode(v) for k, v in responses.items()}
        return params

    def _decode(self, raw: Any, cls: type[T]) -> T:
        try:
            return self._dialect.converter.decode(raw, cls)
        except DecodeError as exc:
            raise exc.under("$.result") from None

    # -- the reader --------------------------------------------------------------------------

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
            self._reader_idle = True
            try:
                item = await self.transport.receive()
            except TransportClosed as exc:
                self._break(exc)
                return
            finally:
                self._reader_idle = False
            if self._reader_stopped or not await self._dispatch(item):
                return

    def _take_notification(self, notification: JSONRPCNotification) -> bool:
        """The transport's direct path (``Transport.take_notifications``): dispatch a
        notification where it arrived, as the reader would, when the reader is idle (waiting
        for the next item, nothing before this one undispatched); False otherwise, and the
        notification goes through the reader. What a handler raises breaks the client as it
        does in the reader, and the reader reads no more."""
        if not self._reader_idle or self._reader_stopped:
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
            self._reader_stopped = True
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
                    waiter.error = event.error
                waiter.done.set()
            # Its token, if it had one, stops now (a task call's was bound, or it made no
            # task): progress read after the answer is not the request's.
            self._progress.close_request(event.request_id)
        elif isinstance(event, RequestReceived):
            await self._serve(event.request)
        elif isinstance(event, NotificationReceived):
            self._dispatch_notification(event.notification)
        elif isinstance(event, UncorrelatedError):
            self._warn(event.error)
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
                self._warn(fault.error)
            return
        self._connection.abandon(fault.request_id)
        waiter = self._waiters.get(fault.request_id)
        if waiter is not None and not waiter.done.is_set():
            waiter.error = fault.error
            waiter.done.set()

    def _break(self, error: MCPTasksError, *, replace: bool = False) -> None:
        if self._broken is not None and not replace:
            return
        self._broken = error
        self._connection.fail_pending()
        for waiter in self._waiters.values():
            if not waiter.done.is_set():
                waiter.error = error
                waiter.done.set()
        for listener in list(self._end_listeners):
            try:
                listener(error)
            except Exception:  # a listener bug must not skip the close (or the other listeners)
                log.exception("on_connection_end listener raised")

    def _warn(self, warning: MCPTasksError) -> None:
        self.warnings.append(warning)
        log.warning("client warning: %s: %s", type(warning).__name__, warning)
        if self._on_warning is not None:
            self._on_warning(warning)

    def _dispatch_notification(self, notification: JSONRPCNotification) -> None:
        if notification.method == "notifications/progress":
            self._on_progress_notification(notification)
        handlers = self._notification_handlers.get(notification.method)
        if not handlers:
            log.debug("no handler for notification %s", notification.method)
            return
        for handler in handlers:
            handler(notification)

    async def _serve(self, request: JSONRPCRequest) -> None:
        """Start the handler for one server->client request, within
        ``Limits.max_server_requests``; beyond it the request is refused at once, from the
        reader (which reads nothing more until the refusal is sent: back-pressure)."""
        if self._serving >= self.limits.max_server_requests:
            reply = self._connection.respond_error(
                request.id,
                -32000,
                "too many concurrent requests "
                f"(Limits.max_server_requests={self.limits.max_server_requests})",
            )
            await self._send_reply(reply)
            return
        assert self._task_group is not None
        self._serving += 1
        self._task_group.start_soon(self._answer, request)

    def _id_too_long(self, request_id: RequestId) -> bool:
        return isinstance(request_id, str) and len(request_id) > self.limits.max_request_id_chars

    async def _refuse_id(self, request: JSONRPCRequest) -> None:
        """A server->client request whose string id is past ``Limits.max_request_id_chars``:
        answered -32600 Invalid Request with ``id: null`` (JSON-RPC 2.0, 5: an id that could
        not be taken is answered as null), from the reader; the id is never stored."""
        limit = self.limits.max_request_id_chars
        self._warn(
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

    async def _send_reply(self, reply: JSONRPCResponse | JSONRPCError) -> None:
        """Send an answer to the server, bounded; a failure is a warning, never raised (it runs
        in the client's own tasks: a foreign exception would escape ``async with Client``)."""
        try:
            with anyio.fail_after(self.timeouts.request):
                await self.transport.send(reply)
        except TimeoutError:
            self._warn(RequestTimeout("an answer to the server", self.timeouts.request))
        except MCPTasksError as exc:
            self._warn(exc)
        except Exception as exc:  # a result the wire cannot carry (a lone surrogate ...)
            log.exception("the answer to server request %r could not be sent", reply.id)
            error = TransportError(
                f"the answer to server request {reply.id!r} could not be sent: "
                f"{type(exc).__name__}: {exc}"
            )
            error.__cause__ = exc
            self._warn(error)

    async def _answer(self, request: JSONRPCRequest) -> None:
        try:
            await self._answer_one(request)
        finally:
            self._serving -= 1

    async def _answer_one(self, request: JSONRPCRequest) -> None:
        from ._errors import RPCError

        handler = self._request_handlers.get(request.method)
        if request.method == "ping" and handler is None:
            reply: Any = self._connection.respond(request.id, {})  # every party answers ping
        elif handler is None:
            reply = self._connection.respond_error(
                request.id, -32601, f"no handler registered for {request.method}"
            )
        else:
            try:
                result = await handler(request)
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


class _Cursors:
    """The cursors of one pagination (C-23: opaque), refusing one given twice."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.current: str | None = None
        self._seen: set[str] = set()

    def follow(self, next_cursor: str | None) -> bool:
        """Move to ``next_cursor``; False at the last page."""
        if next_cursor is None:
            return False
        if next_cursor in self._seen:
            raise ProtocolError(
                f"{self.method} gave the cursor {next_cursor[:100]!r} twice: its pages loop"
            )
        self._seen.add(next_cursor)
        self.current = next_cursor
        return True


def _subscribe(handlers: list[T], handler: T) -> Callable[[], None]:
    handlers.append(handler)

    def unsubscribe() -> None:
        if handler in handlers:
            handlers.remove(handler)

    return unsubscribe
