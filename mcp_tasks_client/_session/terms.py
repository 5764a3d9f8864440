"""The session's terms: what a caller and the session's parts say to each other.

Job: the values every part of the session shares, and nothing that acts: the session's life
(:class:`SessionState`, moved only along ``MOVES``) and its reader's (:class:`ReaderState`),
the deadlines (:class:`Timeouts`), how one request is sent (:class:`RequestOptions`), where
its caller waits for its answer (:class:`AwaitedAnswer`), a task
orphaned by its caller (:class:`OrphanedTask`), the handler types, and the one subscribe
helper the parts use for their listener lists.

May import: ``observability``, ``_exceptions``, ``_sansio``, ``models``.

Theory of operation: plain values. A part that needs one imports it from here, never from
another part, so the parts (``conversation``, ``serving``, ``orphans``, ``fan_out``,
``request_spans``) depend on this module and on each other only as the package's header draws.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import anyio
import anyio.lowlevel
import attrs

from .. import observability as _obs
from .._exceptions import DecodeError, MCPTasksError
from ..models import JSONObject, JSONRPCNotification, JSONRPCRequest, RequestId

if TYPE_CHECKING:  # a type checker sees the alias; a run builds it on first use
    from .._sansio.progress import TaskProgress
    from .._sansio.task_machine import Violation

__all__ = [
    "MOVES",
    "AwaitedAnswer",
    "NotificationHandler",
    "OrphanedTask",
    "ProgressHandler",
    "ReaderState",
    "RequestHandler",
    "RequestOptions",
    "SessionState",
    "Timeouts",
    "subscribe",
]

T = TypeVar("T")

RequestHandler = Callable[[JSONRPCRequest], Awaitable[JSONObject | None]]
"""Answers one server->client request with a result object (raise RPCError to answer an
error). Returning None sends nothing: only for a duplicate delivery already answered once."""

NotificationHandler = Callable[[JSONRPCNotification], None]
"""Receives one notification; runs in the reader, so it must not block. (The reader is the
client's reader task, or over HTTP the stream task that read the notification while the reader
was idle: ``Transport.take_notifications``. Either way, in the order messages arrived.)"""

if TYPE_CHECKING:
    ProgressHandler = Callable[[TaskProgress | Violation | DecodeError], None]
    """Receives each progress event tied to a task, and each problem with a progress
    notification (a soft Violation of V-24 / E C43, or a DecodeError); runs in the reader."""
else:

    def __getattr__(name: str) -> object:
        # ProgressHandler, built on first use: its parts (the progress book's module and the
        # task machine's) are loaded by a client that follows progress, not by every start.
        if name != "ProgressHandler":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from .._sansio.progress import TaskProgress
        from .._sansio.task_machine import Violation

        alias = Callable[[TaskProgress | Violation | DecodeError], None]
        globals()[name] = alias  # the next use is a plain global read
        return alias


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


MOVES: dict[SessionState, frozenset[SessionState]] = {
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


class AwaitedAnswer:
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


def subscribe(handlers: list[T], handler: T) -> Callable[[], None]:
    """Add ``handler`` to ``handlers``; returns the function that takes it out again."""
    handlers.append(handler)

    def unsubscribe() -> None:
        if handler in handlers:
            handlers.remove(handler)

    return unsubscribe
