"""The polling engine: many tasks, one scheduler, typed outcomes.

Theory of operation. A :class:`Poller` lives inside an ``async with`` the caller wrote; it
polls only the tasks the caller waits on or watches, and stops polling a task when nobody
waits on it any more. One driver task sleeps until the earliest due poll of the sans-I/O
:class:`PollScheduler` (a deadline heap, not a sleeping coroutine per task) and starts the
``tasks/get`` calls that are due, at most ``PollPolicy.max_in_flight`` at once. Every snapshot
(from a poll, or from a ``notifications/tasks/status`` the server pushed) goes through the
task's :class:`TaskMachine`; an accepted snapshot reaches watchers at once, and a terminal one
ends the task: its outcome is fetched (``tasks/result`` for completed and failed, C-27 nothing
for cancelled) and every waiter wakes. Notifications never replace polling (C-22): they only
deliver news sooner.

A wait ends with the task's :data:`Outcome`, with the typed error that ended it (a transport
failure, TaskNotFound, IllegalTransition under ``ViolationPolicy.RAISE``), or with
DeadlineExceeded at the caller's deadline; with ``PollPolicy.cancel_on_abandon`` the task is
then cancelled with exactly one ``tasks/cancel`` (all of a wait's cancels sent at once, bounded
together by ``PollPolicy.abandon_timeout``; a task another wait still holds is not cancelled).
When the connection ends (ClientClosed, or what broke it), every wait ends at once with that
error. Leaving the ``async with`` cancels everything the poller started.

A ``tasks/result`` is the outcome only once the task is known terminal: an error it returns
earlier (a server that does not block, T:465) is kept aside, the call is opened again while the
task still needs input, and the result is fetched afresh at terminal; if that fetch returns a
result, the early error is recorded as a violation in ``warnings``.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import functools
import logging
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, TypeAlias

import anyio
import anyio.abc
import anyio.lowlevel
import attrs
import sniffio

from . import observability as _obs
from ._client import Client
from ._drivers import TaskFollow
from ._errors import (
    DeadlineExceeded,
    DecodeError,
    IllegalTransition,
    InputNotHandled,
    InputStuck,
    InvalidParams,
    MCPTasksError,
    RequestTimeout,
    TaskNotFound,
    TransportError,
    UnknownValue,
    UsageError,
)
from ._protocol.progress import StatusMessage, TaskProgress, next_status_message
from ._protocol.scheduler import PollPolicy, PollScheduler, UnhandledInputPolicy
from ._protocol.task_machine import TaskMachine, Violation, ViolationPolicy
from .inputs import InputEvent, InputEventKind, InputRouter
from .journal import Journal, JournalError, recorded_outcome
from .models import (
    CallToolResult,
    CreateTaskResult,
    InputRequest,
    JSONObject,
    JSONRPCNotification,
    Task,
    TaskStatus,
)
from .outcomes import Completed, Expired, Outcome

__all__ = ["Poller", "ProgressCallback", "TaskRef", "WatchItem"]

log = _obs.get_logger("poller")

TaskRef: TypeAlias = CreateTaskResult | Task | str
"""What the caller may hand a wait: the created task, a snapshot, or a bare task id (resume).

One of:

- a ``CreateTaskResult``: what ``Client.start`` returned;
- a ``Task``: a snapshot (from ``get_task``, ``list_tasks``, a journal);
- a ``str``: a bare task id, to resume a wait on a task started elsewhere.

``wait`` also takes the CallToolResult a 2026-07-28 ``start`` returns when the server answered
inline (its outcome is Completed at once, with no task)."""

Ended: TypeAlias = "tuple[str, Outcome | MCPTasksError]"

WatchItem: TypeAlias = Task | InputEvent | TaskProgress
"""What ``Poller.watch()`` yields: a new snapshot, an input event, or a progress event."""

ProgressCallback: TypeAlias = Callable[[TaskProgress], None]
"""Called with each TaskProgress of a task a wait holds; runs in the reader: must not block."""

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"
"""``_meta`` key naming the listen a notification belongs to (2026-07-28, E C41)."""


def _seconds(value: float | dt.timedelta | None) -> float:
    if value is None:
        return math.inf
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value)


def _server_interval(task: Task) -> float | None:
    return None if task.poll_interval is None else task.poll_interval / 1000.0


def expires_at(task: Task) -> dt.datetime | None:
    """``createdAt + ttl``; None for no ttl (null: unlimited; UNSET: unknown, A-06) and for an
    instant past the calendar's end (year 9999): such a task never expires in our time."""
    if not isinstance(task.ttl, (int, float)):
        return None
    try:
        return task.created_at + dt.timedelta(milliseconds=task.ttl)
    except OverflowError:
        return None


class _WatchQueue:
    """What one ``watch()`` has not read yet, bounded: a snapshot replaces the unread one
    (only the newest state matters to a watcher that fell behind), a progress event the
    unread progress event, each then read in its new place; past ``backlog`` unread items the
    oldest is dropped (``skipped`` counts both). So at most one snapshot is unread, and the
    one a watcher just read is the poller's latest until it awaits again."""

    def __init__(self, backlog: int) -> None:
        self.backlog = backlog
        self.skipped = 0
        self._items: collections.deque[WatchItem] = collections.deque()
        self._ready: anyio.Event | None = None  # made when a reader has to wait
        self._closed = False

    def push(self, item: WatchItem) -> None:
        if self._closed:
            return
        if isinstance(item, (Task, TaskProgress)):
            kind = type(item)
            for index, unread in enumerate(self._items):
                if type(unread) is kind:
                    del self._items[index]
                    self.skipped += 1
                    break
        if len(self._items) >= self.backlog:
            self._items.popleft()
            self.skipped += 1
        self._items.append(item)
        if self._ready is not None:
            self._ready.set()

    def close(self) -> None:
        self._closed = True
        if self._ready is not None:
            self._ready.set()

    async def get(self) -> WatchItem:
        """The oldest unread item; EndOfStream once closed and read to the end."""
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            ready = self._ready = anyio.Event()
            await ready.wait()
        return self._items.popleft()


class _Inbox:
    """What one ``as_completed`` has been told and not yielded yet: the tasks that ended, in
    order. Its event is made only when the reader has to wait (one per wake-up, not per
    task)."""

    __slots__ = ("_ended", "_wake")

    def __init__(self) -> None:
        self._ended: collections.deque[_Tracked] = collections.deque()
        self._wake: anyio.Event | None = None

    def put(self, tracked: _Tracked) -> None:
        self._ended.append(tracked)
        if self._wake is not None:
            self._wake.set()

    async def get(self) -> _Tracked:
        """The oldest ended task not read yet (a checkpoint even when one is there)."""
        if self._ended:
            await anyio.lowlevel.checkpoint()
        while not self._ended:
            wake = self._wake = anyio.Event()
            await wake.wait()
        self._wake = None
        return self._ended.popleft()


class _DoneWakeup:
    """Set once, when its task ends; every ``wait()`` on the task parks on it (one for all).

    Lighter than an ``anyio.Event`` for a wait that may sleep for hours on 100,000 tasks
    (issue 12): the waiter awaits what :meth:`park` returns straight from ``Poller.wait``'s
    own frame, with no coroutine of the event's in between. On asyncio that is a bare future
    (an ``anyio.Event`` is an ``asyncio.Event`` with its deque, plus two coroutines while it
    waits); on trio ``wait_task_rescheduled`` (a ``trio.Event`` adds its set, its own
    coroutine and an abort closure). Cancellation is each loop's own: asyncio cancels the
    future (the waiter then calls :meth:`unpark`), trio calls the abort function. Any other
    backend gets an ``anyio.Event``."""

    __slots__ = ("_event", "_parked", "is_set")

    def __init__(self) -> None:
        self.is_set = False
        self._parked: Any = None
        """Who waits: None, one future or trio task, or a list of them."""
        self._event: anyio.Event | None = None  # another backend's waiters

    def set(self) -> None:
        if self.is_set:
            return
        self.is_set = True
        parked, self._parked = self._parked, None
        if type(parked) is list:
            for one in parked:
                _wake(one)
        elif parked is not None:
            _wake(parked)
        if self._event is not None:
            self._event.set()

    def park(self) -> tuple[Awaitable[Any], object]:
        """What to await until :meth:`set` (not set yet), and the token :meth:`unpark`
        takes once the await is over, however it ended."""
        library = sniffio.current_async_library()
        if library == "asyncio":
            import asyncio

            future = asyncio.get_running_loop().create_future()
            self._add(future)
            return future, future
        if library == "trio":
            import trio

            task = trio.lowlevel.current_task()
            self._add(task)
            abort = functools.partial(_abort, self, task)
            return trio.lowlevel.wait_task_rescheduled(abort), task  # noqa: ASYNC105 - awaited by the caller
        if self._event is None:
            self._event = anyio.Event()
        return self._event.wait(), None

    def unpark(self, token: object) -> None:
        """``token``'s wait is over: forget it if :meth:`set` has not (a cancelled wait)."""
        parked = self._parked
        if parked is token:
            self._parked = None
        elif type(parked) is list and token in parked:
            parked.remove(token)
            if not parked:
                self._parked = None

    def _add(self, token: object) -> None:
        parked = self._parked
        if parked is None:
            self._parked = token
        elif type(parked) is list:
            parked.append(token)
        else:
            self._parked = [parked, token]


def _wake(token: Any) -> None:
    """Wake one parked waiter: a future gets its result (unless cancelled), a trio task is
    rescheduled."""
    if hasattr(token, "set_result"):
        if not token.done():
            token.set_result(None)
    else:
        import trio

        trio.lowlevel.reschedule(token)


def _abort(wakeup: _DoneWakeup, task: object, _raise_cancel: object) -> Any:
    """trio is cancelling a parked wait: forget the task, let the cancellation through."""
    import trio

    wakeup.unpark(task)
    return trio.lowlevel.Abort.SUCCEEDED


@attrs.define(eq=False)
class _Tracked:
    """One tracked task (slotted, and small: a poller may hold 100,000 of them). What only
    some tasks need (an event to wait on, watchers, listeners, progress callbacks, input
    scopes) is made on first use; ``None`` until then."""

    task_id: str
    machine: TaskMachine
    expires_at: float | None  # monotonic, from createdAt + ttl
    refs: int = 0
    finishing: bool = False
    is_done: bool = False
    """Ended: ``outcome`` or ``error`` is set, and every waiter was woken."""
    outcome: Outcome | None = None
    error: MCPTasksError | None = None
    done_event: _DoneWakeup | None = None
    """Made by the first ``wait()`` that has to wait; one for all of them."""
    watchers: list[_WatchQueue] | None = None
    listeners: _Inbox | list[_Inbox] | None = None
    """The ``as_completed`` inboxes told when it ends: the one inbox itself (the usual case:
    no list per task), or a list once there are more."""
    progress_callbacks: list[ProgressCallback] | None = None
    message: StatusMessage | None = None
    """The latest accepted snapshot's status message, with when it was first seen."""
    # 2026-07-28 input: handlers running, and snapshots in a row asking nothing new.
    inputs_running: int = 0
    stuck_polls: int = 0
    input_scopes: set[anyio.CancelScope] | None = None
    """One per running 2026 input handler of this task: cancelled when its tracking ends."""
    span: Any = None
    """The task's lifecycle span (tracking to outcome), None when spans are off."""

    def stop_inputs(self) -> None:
        for scope in self.input_scopes or ():
            scope.cancel()

    def set_done(self) -> None:
        self.is_done = True
        if self.done_event is not None:
            self.done_event.set()

    def done_wakeup(self) -> _DoneWakeup:
        """What is set when the task ends, made on first use (one for every wait)."""
        if self.done_event is None:
            self.done_event = _DoneWakeup()
        return self.done_event

    def add_listener(self, inbox: _Inbox) -> None:
        current = self.listeners
        if current is None:
            self.listeners = inbox
        elif isinstance(current, _Inbox):
            self.listeners = [current, inbox]
        else:
            current.append(inbox)

    def remove_listener(self, inbox: _Inbox) -> None:
        """Remove ``inbox`` once (it is there as often as it was added)."""
        current = self.listeners
        if current is inbox:
            self.listeners = None
        elif isinstance(current, list) and inbox in current:
            current.remove(inbox)

    def close_watchers(self) -> None:
        watchers, self.watchers = self.watchers, None
        for watcher in watchers or ():
            watcher.close()

    follow: TaskFollow | None = None
    """How the task's input arrives and its outcome is fetched, in the client's generation
    (its driver's follower): made on first need."""

    @property
    def ended(self) -> Outcome | MCPTasksError:
        if self.error is not None:
            return self.error
        assert self.outcome is not None
        return self.outcome


class Poller:
    """Drives tasks to their outcomes with one scheduler; see the module docstring."""

    def __init__(
        self,
        client: Client,
        policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
        *,
        inputs: InputRouter | None = None,
        rng: random.Random | None = None,
        wall_clock: Callable[[], dt.datetime] | None = None,
        journal: Journal | None = None,
    ) -> None:
        if policy.listen:
            client.driver.check_listen()
        self.client = client
        self.policy = policy
        self.inputs = inputs
        self.journal = journal
        """Where each accepted snapshot, answered 2026 input key and outcome of a tracked task
        is recorded (a task the journal never recorded is not added). Snapshots are written in
        the background, newest first-come; an outcome is written before its wait wakes; a
        journal failure is a warning, never the end of a wait."""
        self._journal_pending: dict[str, Task] = {}
        self._journal_wake = anyio.Event()
        self._scheduler = PollScheduler(policy, rng)
        self._wall_clock = wall_clock or (lambda: dt.datetime.now(dt.timezone.utc))
        self._tracked: dict[str, _Tracked] = {}
        # Ids a tasks/cancel was sent for (one per task), the newest max_answered_inputs of them.
        self._cancel_sent: dict[str, None] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False
        self._wake = anyio.Event()
        # When the sleeping driver wakes by itself (-inf while it is not sleeping on a time):
        # an answered poll due no sooner need not wake it (one wake-up per due time, not one
        # per answer).
        self._sleeping_until = -math.inf
        # PollPolicy.max_in_flight: polls running, and due ones waiting for a slot (oldest
        # first). A counter the driver reads, not a limiter each poll acquires.
        self._in_flight = 0
        self._ready: collections.deque[str] = collections.deque()
        # 2026 input handlers at once: as many as server->client requests in 2025-11-25.
        self._input_limiter = anyio.CapacityLimiter(client.limits.max_server_requests)
        # PollPolicy.listen: the ids the open listen asked for, those the server acknowledged.
        self._listening: frozenset[str] = frozenset()
        self._acknowledged: frozenset[str] = frozenset()
        self._listen_id: object = None  # the open listen's request id: its subscriptionId
        self._listen_changed = anyio.Event()
        self.listens_opened = 0
        self._unsubscribe: list[Callable[[], None]] = []
        self.warnings: collections.deque[Violation | MCPTasksError] = collections.deque(
            maxlen=client.limits.max_warnings
        )
        """Soft violations, and (under ViolationPolicy.WARN) ignored bad snapshots: the last
        ``Limits.max_warnings`` of them."""
        self.polls_sent = 0
        self.cancels_sent = 0
        self.polls_delayed = 0
        """Polls that were due but waited for a slot (``PollPolicy.max_in_flight`` saturated)."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Poller:
        if self._task_group is not None:
            raise UsageError("a Poller can be entered only once")
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._unsubscribe.append(
            self.client.on_notification(self.client.driver.status_notification, self._on_status)
        )
        self._unsubscribe.append(self.client.on_connection_end(self._on_connection_end))
        self._unsubscribe.append(self.client.on_progress(self._on_progress))
        if self.policy.listen:
            self._unsubscribe.append(
                self.client.on_notification(
                    "notifications/subscriptions/acknowledged", self._on_acknowledged
                )
            )
            self._task_group.start_soon(self._keep_listening)
        if self.inputs is not None:
            self._unsubscribe.append(self.inputs.subscribe(self._on_input))
            self.inputs.snapshot_source = self.snapshot
            self.inputs.candidates_source = self._candidates
        if self.journal is not None:
            self._task_group.start_soon(self._write_snapshots, self.journal)
        self._task_group.start_soon(self._drive)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._closed = True
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        closed = UsageError("the poller was closed")
        for tracked in list(self._tracked.values()):
            self._end(tracked, error=closed)

    # -- the caller's waits --------------------------------------------------------------

    async def wait(
        self,
        task: TaskRef | CallToolResult,
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Outcome:
        """The task's outcome; raises the error that ended it, or DeadlineExceeded.

        A CallToolResult (a 2026-07-28 server answered the task call inline) is Completed at
        once, with ``task`` None: ``poller.wait(await client.start(call))`` reads the same in
        both generations.

        ``on_progress`` is called with the task's latest known TaskProgress when the wait
        starts, then with each new one until the wait ends (the task's call must have carried
        a progress token: ``ToolCall.with_progress_token``). It runs in the client's reader:
        it must not block; what it raises is logged.
        """
        if isinstance(task, CallToolResult):
            return Completed(None, task)
        # as_completed for one task, without its inbox: the wait parks on the task's own
        # wakeup (shared by every wait on it, see _DoneWakeup), so a waited task costs the
        # poller no more than a tracked one plus this frame and that wakeup.
        until = anyio.current_time() + _seconds(deadline)
        tracked = await self._hold(task, until)
        reporting = False
        try:
            if on_progress is not None and not tracked.is_done:
                reporting = True
                _append(tracked, "progress_callbacks", on_progress)
                latest = self.client.progress(tracked.task_id)
                if latest is not None:
                    _call(on_progress, latest)
            ended = False
            try:
                with _bounded(until):
                    if tracked.is_done:
                        await anyio.lowlevel.checkpoint()
                    else:  # parked in this frame (no coroutine of the wakeup's)
                        wakeup = tracked.done_wakeup()
                        parked, token = wakeup.park()
                        try:
                            await parked
                        finally:
                            wakeup.unpark(token)
                    ended = True
            except anyio.get_cancelled_exc_class():  # the caller's cancellation, not ours
                with anyio.CancelScope(shield=True):
                    await self._abandon([tracked], [tracked])
                raise
            if not ended:
                sent = await self._abandon([tracked], [tracked])
                raise DeadlineExceeded(
                    [tracked.task_id],
                    {tracked.task_id: tracked.machine.current},
                    cancel_sent=sent,
                )
            result = tracked.ended
            if isinstance(result, MCPTasksError):
                raise result
            return result
        finally:
            if reporting:
                _discard(tracked, "progress_callbacks", on_progress)
            self._release(tracked)

    async def wait_any(
        self,
        tasks: Sequence[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> tuple[str, Outcome | MCPTasksError]:
        """The first task to end, as ``(task_id, outcome or error)``; the others keep running."""
        if not tasks:
            raise UsageError("wait_any needs at least one task")
        async for ended in self.as_completed(tasks, deadline=deadline, on_progress=on_progress):
            return ended
        raise AssertionError("unreachable")  # pragma: no cover

    async def wait_all(
        self,
        tasks: Sequence[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Outcome | MCPTasksError]:
        """Every task's outcome (or the error that ended it), keyed by task id."""
        return {
            task_id: ended
            async for task_id, ended in self.as_completed(
                tasks, deadline=deadline, on_progress=on_progress
            )
        }

    async def as_completed(
        self,
        tasks: Iterable[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> AsyncIterator[tuple[str, Outcome | MCPTasksError]]:
        """``(task_id, outcome or error)`` for each task, in the order they end.

        At the deadline the tasks still running raise DeadlineExceeded (and, with
        ``cancel_on_abandon``, get one ``tasks/cancel`` each); so does cancelling the caller.
        Breaking out of the loop early is not abandoning: nothing is cancelled.
        ``on_progress``: as for :meth:`wait`, for every task of this wait (``task_id`` on
        each event says which), until that task ends.
        """
        until = anyio.current_time() + _seconds(deadline)
        inbox = _Inbox()
        held: list[_Tracked] = []
        reporting: set[_Tracked] = set()  # the tasks on_progress was registered with
        try:
            for ref in tasks:
                tracked = await self._hold(ref, until)
                held.append(tracked)
                tracked.add_listener(inbox)
                if tracked.is_done:
                    inbox.put(tracked)
                elif on_progress is not None and tracked not in reporting:
                    reporting.add(tracked)
                    _append(tracked, "progress_callbacks", on_progress)
                    latest = self.client.progress(tracked.task_id)
                    if latest is not None:
                        _call(on_progress, latest)
            remaining = {t.task_id for t in held}
            while remaining:
                ended: _Tracked | None = None
                try:
                    with _bounded(until):
                        ended = await inbox.get()
                except anyio.get_cancelled_exc_class():  # the caller's cancellation, not ours
                    with anyio.CancelScope(shield=True):
                        await self._abandon([t for t in held if t.task_id in remaining], held)
                    raise
                if ended is None:
                    waiting = [t for t in held if t.task_id in remaining]
                    sent = await self._abandon(waiting, held)
                    raise DeadlineExceeded(
                        [t.task_id for t in waiting],
                        {t.task_id: t.machine.current for t in waiting},
                        cancel_sent=sent,
                    )
                if ended.task_id in remaining:
                    remaining.discard(ended.task_id)
                    yield ended.task_id, ended.ended
        finally:
            for tracked in held:
                tracked.remove_listener(inbox)
                self._release(tracked)
            for tracked in reporting:
                assert on_progress is not None
                _discard(tracked, "progress_callbacks", on_progress)

    async def watch(
        self, task: TaskRef, *, deadline: float | dt.timedelta | None = None
    ) -> AsyncIterator[WatchItem]:
        """Each new snapshot of the task (from polls and notifications), the terminal one last,
        each InputEvent of its input requests (arrived, answered, unhandled...), and each
        TaskProgress (when the task's call carried a progress token; the latest known one
        first).

        Then ``await poller.wait(task)`` returns the outcome at once. A snapshot is new when
        its status, status message or ``lastUpdatedAt`` changed; :meth:`status_message`, read
        right after a snapshot, tells when its message was set and under which status. A
        watcher that reads slower than snapshots arrive gets the latest one (those in between
        are folded into it; progress events likewise), and at most
        ``Limits.max_watch_backlog`` unread items: memory does not grow with a server's
        notification rate.
        """
        until = anyio.current_time() + _seconds(deadline)
        tracked = await self._hold(task, until)
        queue = _WatchQueue(self.client.limits.max_watch_backlog)
        latest = self.client.progress(tracked.task_id)
        if latest is not None and not tracked.machine.is_terminal:
            queue.push(latest)
        queue.push(tracked.machine.current)
        if tracked.machine.is_terminal or tracked.is_done:
            queue.close()
        else:
            _append(tracked, "watchers", queue)
        try:
            while True:
                snapshot: WatchItem | None = None
                try:
                    with anyio.CancelScope(deadline=until):
                        snapshot = await queue.get()
                except anyio.EndOfStream:
                    break
                except anyio.get_cancelled_exc_class():  # the caller's cancellation, not ours
                    with anyio.CancelScope(shield=True):
                        await self._abandon([tracked], [tracked])
                    raise
                if snapshot is None:
                    sent = await self._abandon([tracked], [tracked])
                    raise DeadlineExceeded(
                        [tracked.task_id],
                        {tracked.task_id: tracked.machine.current},
                        cancel_sent=sent,
                    )
                yield snapshot
            if tracked.error is not None:
                raise tracked.error
        finally:
            _discard(tracked, "watchers", queue)
            queue.close()
            self._release(tracked)

    def _candidates(self) -> list[Task]:
        """The tracked tasks a request naming no task may belong to."""
        live = (TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED)
        return [
            t.machine.current
            for t in self._tracked.values()
            if not t.is_done and t.machine.current.status in live
        ]

    def snapshot(self, task_id: str) -> Task | None:
        """The latest accepted snapshot of a tracked task (no request)."""
        tracked = self._tracked.get(task_id)
        return tracked.machine.current if tracked is not None else None

    def status_message(self, task_id: str) -> StatusMessage | None:
        """The status message of the latest accepted snapshot of a tracked task, with when it
        was first seen (``since``: that snapshot's ``lastUpdatedAt``; ``seen_at``: the
        poller's clock) and under which status: a terminal snapshot that carries over a
        message set while working has ``status`` WORKING (``is_current_for(snapshot)`` is
        False). None when the snapshot has no message or the task is not tracked. Read right
        after ``watch()`` yields a snapshot (no await between), it is that snapshot's."""
        tracked = self._tracked.get(task_id)
        return tracked.message if tracked is not None else None

    def next_poll(self, task_id: str) -> float | None:
        """Seconds until the next ``tasks/get`` of a task being waited on (0 while one is due or
        in flight), or None when it is not being polled (not tracked, or ending): for a
        display; the schedule is the policy's and the server's, never changed by asking."""
        tracked = self._tracked.get(task_id)
        if tracked is None or tracked.finishing or tracked.is_done:
            return None
        due = self._scheduler.due(task_id)
        return None if due is None else max(0.0, due - anyio.current_time())

    # -- tracking ----------------------------------------------------------------------------

    async def _hold(self, ref: TaskRef, until: float) -> _Tracked:
        if self._task_group is None or self._closed:
            raise UsageError("the poller is not running; use `async with Poller(...)`")
        if isinstance(ref, CreateTaskResult):
            first = ref.task
        elif isinstance(ref, Task):
            first = ref
        else:
            tracked = self._tracked.get(ref)
            first = (
                tracked.machine.current if tracked is not None else await self._first(ref, until)
            )
        # A ref the caller hands in is no news from the server: an already tracked task keeps
        # its own latest snapshot (the CreateTaskResult of a finished task is stale).
        tracked = self._tracked.get(first.task_id)
        if tracked is None:
            tracked = _Tracked(first.task_id, TaskMachine(first), self._expiry(first))
            tracked.message = next_status_message(None, first, now=self._wall_clock())
            self._tracked[first.task_id] = tracked
            self._tracking(tracked, first)
            # What the caller handed in may not carry the outcome (a 2026 CreateTaskResult):
            # a terminal seed is then polled for it at once (E A-2), not finished from.
            if first.status.is_terminal and self.client.driver.seed_is_news(ref):
                self._start_finish(tracked)
            else:
                if first.status is TaskStatus.INPUT_REQUIRED:
                    self._follow(tracked).input_required(first)
                self._scheduler.track(
                    first.task_id,
                    anyio.current_time(),
                    _server_interval(first),
                    not_after=tracked.expires_at,
                )
                self._wake.set()
                self._listen_set_changed()
        tracked.refs += 1
        return tracked

    def _release(self, tracked: _Tracked) -> None:
        tracked.refs -= 1
        if tracked.refs <= 0 and not tracked.finishing and not tracked.is_done:
            # Nobody waits on it any more: stop polling (the library never polls unasked).
            self._scheduler.untrack(tracked.task_id)
            self._tracked.pop(tracked.task_id, None)
            self._untracked(tracked, "released")
            if tracked.follow is not None:  # nor hold anything open for it unasked
                tracked.follow.stop()
            tracked.stop_inputs()  # nor keep asking its questions
            self._listen_set_changed()
        elif tracked.refs <= 0 and tracked.is_done:
            self._tracked.pop(tracked.task_id, None)

    def _expiry(self, task: Task) -> float | None:
        """Monotonic time of ``createdAt + ttl``, only under ``PollPolicy.ttl_backstop``."""
        if not self.policy.ttl_backstop:
            return None
        ends = expires_at(task)
        if ends is None:
            return None
        return anyio.current_time() + (ends - self._wall_clock()).total_seconds()

    async def _get(self, task_id: str, timeout: float | None = None) -> Task:
        self.polls_sent += 1
        limit = self.policy.request_timeout if timeout is None else timeout
        return await self.client.get_task(task_id, timeout=limit)

    async def _first(self, task_id: str, until: float) -> Task:
        """The first snapshot of a task resumed by its bare id, within the wait's deadline."""
        left = until - anyio.current_time()
        if left <= 0:
            raise DeadlineExceeded([task_id], {})
        try:
            return await self._get(task_id, min(self.policy.request_timeout, left))
        except RequestTimeout:
            if anyio.current_time() >= until:
                raise DeadlineExceeded([task_id], {}) from None
            raise

    # -- observability ---------------------------------------------------------------------

    def _warn(self, item: Violation | MCPTasksError) -> None:
        """Every warning the poller keeps: in ``warnings`` and a WARNING record."""
        self.warnings.append(item)
        log.warning("poller warning: %s: %s", type(item).__name__, item)

    def _tracking(self, tracked: _Tracked, first: Task) -> None:
        _obs.remember(tracked.task_id)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("tracking task %s (%s)", _obs.TaskId(tracked.task_id), first.status.value)
        if _obs.tracer() is not None:
            tracked.span = _obs.start_span(
                "mcp_tasks.task",
                {
                    "mcp_tasks.task.id": _obs.task_attr(tracked.task_id),
                    "mcp_tasks.generation": self.client.generation.value,
                    "mcp_tasks.task.status": first.status.value,
                },
            )

    def _untracked(
        self, tracked: _Tracked, outcome: str, error: MCPTasksError | None = None
    ) -> None:
        """The end of a task's tracking: its outcome (INFO) and the end of its span."""
        status = tracked.machine.current.status.value
        if error is None:
            # An outcome at INFO; a task nobody waits on any more is no outcome: DEBUG.
            level = logging.DEBUG if outcome == "released" else logging.INFO
            log.log(level, "task %s: %s (%s)", _obs.TaskId(tracked.task_id), outcome, status)
        else:
            log.info(
                "task %s: tracking ended by %s (%s)",
                _obs.TaskId(tracked.task_id),
                type(error).__name__,
                status,
            )
        span, tracked.span = tracked.span, None
        if span is not None:
            attributes = {"mcp_tasks.outcome": outcome, "mcp_tasks.task.status": status}
            _obs.end_span(span, attributes, error)

    # -- the driver ------------------------------------------------------------------------

    async def _drive(self) -> None:
        assert self._task_group is not None
        limit = self.policy.max_in_flight
        ready = self._ready
        while True:
            self._take_due()
            while (poll := self._next_poll()) is not None:
                self._task_group.start_soon(self._run_poll, *poll)
            if self._wake.is_set():
                self._wake = anyio.Event()
            if ready and self._in_flight >= limit:
                await self._wake.wait()  # a slot frees (or a task is added)
                continue
            due = self._scheduler.next_due()
            delay = math.inf if due is None else due - anyio.current_time()
            if delay > 0:
                self._sleeping_until = math.inf if due is None else due
                try:
                    if delay == math.inf:  # nothing due: only a wake-up (no deadline scope)
                        await self._wake.wait()
                    else:
                        with anyio.move_on_after(delay):
                            await self._wake.wait()
                finally:
                    self._sleeping_until = -math.inf

    def _take_due(self) -> None:
        """The tasks due now into the line, counting those that must wait for a slot."""
        ready = self._ready
        limit = self.policy.max_in_flight
        for task_id in self._scheduler.pop_due(anyio.current_time()):
            if self._in_flight >= limit or ready:
                self.polls_delayed += 1
            ready.append(task_id)

    def _next_poll(self) -> tuple[_Tracked, str] | None:
        """The next task in line, when a slot is free (taken for it)."""
        ready = self._ready
        while ready and self._in_flight < self.policy.max_in_flight:
            task_id = ready.popleft()
            tracked = self._tracked.get(task_id)
            if tracked is not None:
                self._in_flight += 1
                return tracked, task_id
        return None

    async def _run_poll(self, tracked: _Tracked, task_id: str) -> None:
        """One poll, then the next one due or in line, in this same task while there is one
        (a task spawned per poll cost more than the rest of the poller's per-poll work)."""
        while True:
            try:
                await self._guarded(tracked, functools.partial(self._poll, task_id))
            except BaseException:
                self._in_flight -= 1
                self._wake.set()
                raise
            self._in_flight -= 1
            self._take_due()
            poll = self._next_poll()
            if poll is None:
                # The driver may be waiting for a slot with no deadline (the line was full):
                # it must look again, at the line and at the polls scheduled for later.
                self._wake.set()
                return
            # Going on with the next poll here: the driver needs waking only for a due time
            # sooner than the one it sleeps until that this task did not take (a poll answered
            # with no wait at all, polled back to back, is taken here, not woken for: a
            # wake-up per poll cost a scheduler pass on trio).
            due = self._scheduler.next_due()
            if due is not None and due < self._sleeping_until:
                self._wake.set()
            tracked, task_id = poll

    async def _poll(self, task_id: str) -> None:
        tracked = self._tracked.get(task_id)
        if tracked is None or tracked.finishing or tracked.is_done:
            return
        expired = tracked.expires_at is not None and anyio.current_time() >= tracked.expires_at
        mark = tracked.machine.mark()
        try:
            snapshot = await self._get(task_id)
        except TaskNotFound as exc:
            if expired:  # the server may delete a task once its ttl ran out (T:459)
                self._expire(tracked)
            else:
                self._end(tracked, error=exc)
            return
        except UnknownValue as exc:
            if exc.path != "$.result.status" or self.policy.on_violation is ViolationPolicy.RAISE:
                self._end(tracked, error=exc)
                return
            self._warn(exc)  # an unknown status, ignored under WARN
            snapshot = None
        except MCPTasksError as exc:
            self._end(tracked, error=exc)
            return
        if self._tracked.get(task_id) is not tracked or tracked.is_done:
            return  # released or ended while the poll was in flight
        if tracked.machine.is_stale(mark) or tracked.finishing:
            # A terminal status arrived (a notification) while this poll was in flight: its
            # older answer is stale, not a change after terminal (A-08, the machine's rule; a
            # poller that stops at terminal cannot tell the two apart; the conformance probe
            # polls past terminal). ``finishing``: the task's end is already under way.
            return
        if snapshot is not None:
            self._observe(tracked, snapshot)
        if tracked.finishing or tracked.is_done:
            return
        if expired:
            self._expire(tracked)
            return
        current = tracked.machine.current
        interval = _server_interval(current)
        if task_id in self._acknowledged:  # pushed to us: a slow safety poll only
            base = interval if interval is not None else self.policy.initial
            interval = base * self.policy.listen_safety_factor
        # The driver is woken for the new due time (if sooner than its sleep) by _run_poll,
        # once it knows whether it takes that poll itself.
        self._scheduler.answered(
            task_id, anyio.current_time(), interval, not_after=tracked.expires_at
        )

    def _on_status(self, notification: JSONRPCNotification) -> None:
        """A status notification: news sooner than the next poll (C-22: never instead)."""
        try:
            snapshot = self.client.read_status_notification(notification)
        except DecodeError as exc:
            self._warn(exc)
            return
        tracked = self._tracked.get(snapshot.task_id)
        if tracked is not None and not tracked.finishing and not tracked.is_done:
            self._observe(tracked, snapshot)

    def _observe(self, tracked: _Tracked, snapshot: Task) -> None:
        previous = tracked.machine.current
        observation = tracked.machine.observe(snapshot)
        for violation in observation.violations:
            if violation.soft or self.policy.on_violation is ViolationPolicy.WARN:
                self._warn(violation)
            else:
                self._end(
                    tracked,
                    error=IllegalTransition(
                        tracked.task_id, previous.status.value, snapshot.status.value
                    ),
                )
                return
        if not observation.accepted:
            return
        if self.journal is not None:
            self._journal_pending[tracked.task_id] = snapshot
            self._journal_wake.set()
        tracked.message = next_status_message(tracked.message, snapshot, now=self._wall_clock())
        if snapshot.status is not previous.status:
            log.debug(
                "task %s: %s -> %s",
                _obs.TaskId(tracked.task_id),
                previous.status.value,
                snapshot.status.value,
            )
        if (snapshot.status, snapshot.status_message, snapshot.last_updated_at) != (
            previous.status,
            previous.status_message,
            previous.last_updated_at,
        ):
            for watcher in tracked.watchers or ():
                watcher.push(snapshot)
        if snapshot.status.is_terminal:
            self._start_finish(tracked)
        elif snapshot.status is TaskStatus.INPUT_REQUIRED:
            self._follow(tracked).input_required(snapshot)
        else:
            tracked.stuck_polls = 0

    # -- push (2026-07-28 subscriptions/listen) ------------------------------------------

    def _wanted(self) -> frozenset[str]:
        return frozenset(
            task_id
            for task_id, tracked in self._tracked.items()
            if not tracked.finishing and not tracked.is_done
        )

    def _listen_set_changed(self) -> None:
        if self.policy.listen and self._wanted() != self._listening:
            self._listen_changed.set()

    async def _keep_listening(self) -> None:
        """One listen at a time for the tasks waited on, reopened when that set changes; a
        listen that ends or fails falls back to polling (a warning), until the set changes."""
        scope: anyio.CancelScope | None = None
        async with anyio.create_task_group() as group:
            while True:
                await self._listen_changed.wait()
                self._listen_changed = anyio.Event()
                await anyio.sleep(self.policy.floor)  # a burst of new waits: one reopen
                wanted = self._wanted()
                if wanted == self._listening:
                    continue
                if scope is not None:
                    scope.cancel()
                self._listening, self._acknowledged = wanted, frozenset()
                if wanted:
                    scope = anyio.CancelScope()
                    group.start_soon(self._listen_once, wanted, scope)

    async def _listen_once(self, task_ids: frozenset[str], scope: anyio.CancelScope) -> None:
        with scope:
            self.listens_opened += 1

            def opened(request_id: object) -> None:
                self._listen_id = request_id

            try:
                await self.client.listen_tasks(sorted(task_ids), on_open=opened)
            except MCPTasksError as exc:
                self._warn(exc)
            if self._listening == task_ids:
                # Ended or refused by the server: poll as usual again. ``_listening`` keeps
                # this set, so the listen is reopened only when the set of waited tasks
                # changes, never in a loop against a server that will not listen.
                self._acknowledged = frozenset()

    def _on_acknowledged(self, notification: JSONRPCNotification) -> None:
        """E C40: the ids the server agreed to push; the others keep their usual polling."""
        params = notification.params or {}
        meta = params.get("_meta")
        subscription = meta.get(SUBSCRIPTION_ID_META) if isinstance(meta, dict) else None
        if subscription is not None and str(subscription) != str(self._listen_id):
            return  # E C41: another (or an earlier) listen's acknowledgement
        filters = params.get("notifications")
        ids = filters.get("taskIds") if isinstance(filters, dict) else None
        if not isinstance(ids, list):
            self._warn(
                DecodeError("$.params.notifications.taskIds", "expected an array of ids", ids)
            )
            return
        self._acknowledged = frozenset(i for i in ids if isinstance(i, str)) & self._listening

    # -- progress ------------------------------------------------------------------------

    def _on_progress(self, item: TaskProgress | Violation | DecodeError) -> None:
        """The client read a progress notification: a task's progress goes to its watchers
        and waits; a problem (V-24, E C43, a malformed one) to ``warnings``."""
        if not isinstance(item, TaskProgress):
            self._warn(item)
            return
        tracked = self._tracked.get(item.task_id)
        if tracked is None or tracked.finishing or tracked.is_done:
            return
        for watcher in tracked.watchers or ():
            watcher.push(item)
        for callback in list(tracked.progress_callbacks or ()):
            _call(callback, item)

    # -- input ---------------------------------------------------------------------------

    def _serve_inputs(self, tracked: _Tracked, snapshot: Task) -> None:
        requests = snapshot.input_requests or {}
        if self.inputs is None:
            if requests and self.policy.on_unhandled_input is UnhandledInputPolicy.FAIL:
                key, request = next(iter(requests.items()))
                self._end(tracked, error=InputNotHandled(tracked.task_id, request.method, key))
            return
        assert self._task_group is not None
        taken = self.inputs.take_inputs(tracked.task_id, requests)
        for key, request in taken:
            tracked.inputs_running += 1
            self._task_group.start_soon(
                self._guarded,
                tracked,
                functools.partial(self._answer_input, tracked, key, request),
            )
        tracked.stuck_polls = 0 if taken or tracked.inputs_running else tracked.stuck_polls + 1
        limit = self.policy.stuck_input_polls
        if limit is not None and tracked.stuck_polls >= limit:
            self._end(tracked, error=InputStuck(tracked.task_id, list(requests), limit))

    async def _answer_input(self, tracked: _Tracked, key: str, request: InputRequest) -> None:
        """One input request: its handler, then ``tasks/update`` with its answer alone
        (partial answers are allowed, E A-10). The next poll shows what the server made of it."""
        assert self.inputs is not None
        scope = anyio.CancelScope()
        if tracked.input_scopes is None:
            tracked.input_scopes = set()
        tracked.input_scopes.add(scope)
        try:
            with scope:  # the wait ended: the question is moot, stop asking
                async with self._input_limiter:
                    response = await self.inputs.answer_input(tracked.task_id, key, request)
                if response is None or tracked.is_done:
                    return
                await self.client.update_task(
                    tracked.task_id, {key: response}, timeout=self.policy.request_timeout
                )
                if self.journal is not None:
                    await self._journaled(
                        self.journal.answered(self.client.transport.identity, tracked.task_id, key)
                    )
        except InvalidParams as exc:
            # The server refused this answer (a key already answered, S13 says ignore; or the
            # task is gone, which the next poll tells as such): recorded, the wait goes on.
            self._warn(exc)
        finally:
            tracked.inputs_running -= 1
            if tracked.input_scopes is not None:
                tracked.input_scopes.discard(scope)

        # tasks/result returns once the task is terminal (T:465), but the status (completed or
        # failed, A-14) still comes from a poll, and every poll goes through the scheduler: a
        # tasks/get sent from here would ignore the floor and pollInterval (C-19), race the
        # poll in flight, poll a task nobody waits on any more (abandoned), and turn a ttl
        # deletion (-32602) into TaskNotFound instead of Expired. The next due poll finds out.

    def _on_input(self, event: InputEvent) -> None:
        if event.task_id is None:
            return
        tracked = self._tracked.get(event.task_id)
        if tracked is None or tracked.is_done:
            return
        for watcher in tracked.watchers or ():
            watcher.push(event)
        if (
            event.kind is InputEventKind.UNHANDLED
            and self.policy.on_unhandled_input is UnhandledInputPolicy.FAIL
        ):
            self._end(tracked, error=InputNotHandled(event.task_id, event.method, event.request_id))

    # -- ending ----------------------------------------------------------------------------

    def _start_finish(self, tracked: _Tracked) -> None:
        if tracked.finishing or tracked.is_done:
            return
        tracked.finishing = True
        self._scheduler.untrack(tracked.task_id)
        self._listen_set_changed()
        tracked.close_watchers()  # the terminal snapshot was the last one
        assert self._task_group is not None
        self._task_group.start_soon(
            self._guarded, tracked, functools.partial(self._finish, tracked)
        )

    async def _guarded(self, tracked: _Tracked, work: Callable[[], Awaitable[None]]) -> None:
        """Run one of the poller's own tasks for ``tracked``: whatever it raises ends that
        task's waits with a typed error, never the poller's task group (a foreign exception
        would escape ``async with Poller`` as an ExceptionGroup)."""
        try:
            await work()
        except MCPTasksError as exc:
            self._end(tracked, error=exc)
        except Exception as exc:
            name = type(exc).__name__
            error = TransportError(f"tracking {tracked.task_id!r} failed: {name}: {exc}")
            error.__cause__ = exc
            self._end(tracked, error=error)

    def _follow(self, tracked: _Tracked) -> TaskFollow:
        """The task's follower from the client's driver, made on first need."""
        if tracked.follow is None:
            tracked.follow = self.client.driver.follow(_TaskLink(self, tracked), self.policy)
        return tracked.follow

    async def _finish(self, tracked: _Tracked) -> None:
        ended = await self._follow(tracked).outcome(tracked.machine.current)
        if isinstance(ended, MCPTasksError):
            self._end(tracked, error=ended)
        else:
            await self._record_outcome(tracked.task_id, ended)
            self._end(tracked, outcome=ended)

    # -- the journal -----------------------------------------------------------------------

    async def _journaled(self, write: Awaitable[None]) -> None:
        """One journal write, bounded by ``request_timeout``; a failure is a warning."""
        try:
            with anyio.fail_after(self.policy.request_timeout):
                await write
        except MCPTasksError as exc:
            self._warn(exc)
        except TimeoutError:
            self._warn(JournalError("journal", "a write did not finish in time"))
        except Exception as exc:
            self._warn(JournalError("journal", f"{type(exc).__name__}: {exc}"))

    async def _record_outcome(self, task_id: str, outcome: Outcome) -> None:
        if self.journal is None:
            return
        server = self.client.transport.identity
        last = self._journal_pending.pop(task_id, None) or outcome.task
        if last is not None:  # the terminal snapshot, then the outcome
            await self._journaled(self.journal.snapshot(server, task_id, last))
        recorded = recorded_outcome(outcome, self.client.encode)
        await self._journaled(self.journal.finish(server, task_id, recorded))

    async def _write_snapshots(self, journal: Journal) -> None:
        server = self.client.transport.identity
        while True:
            await self._journal_wake.wait()
            self._journal_wake = anyio.Event()
            while self._journal_pending:
                task_id, snapshot = self._journal_pending.popitem()
                await self._journaled(journal.snapshot(server, task_id, snapshot))

    def _expire(self, tracked: _Tracked) -> None:
        task = tracked.machine.current
        expired_at = expires_at(task)
        assert expired_at is not None  # only a task with a representable expiry expires
        self._scheduler.untrack(tracked.task_id)
        outcome = Expired(task, expired_at)
        if self.journal is not None and self._task_group is not None:
            self._task_group.start_soon(self._record_outcome, tracked.task_id, outcome)
        self._end(tracked, outcome=outcome)

    def _on_connection_end(self, error: MCPTasksError) -> None:
        """The connection ended (ClientClosed, or what broke it): every wait ends now with that
        error, not at its next poll (which may be minutes away)."""
        for tracked in list(self._tracked.values()):
            self._end(tracked, error=error)

    def _end(
        self,
        tracked: _Tracked,
        *,
        outcome: Outcome | None = None,
        error: MCPTasksError | None = None,
    ) -> None:
        if tracked.is_done:
            return
        tracked.outcome, tracked.error = outcome, error
        tracked.finishing = True
        self._untracked(tracked, type(outcome).__name__ if outcome is not None else "error", error)
        self._scheduler.untrack(tracked.task_id)
        tracked.stop_inputs()
        tracked.set_done()
        self._listen_set_changed()
        tracked.close_watchers()
        listeners = tracked.listeners
        if isinstance(listeners, _Inbox):
            listeners.put(tracked)
        else:
            for listener in listeners or ():
                listener.put(tracked)
        if tracked.refs <= 0:
            self._tracked.pop(tracked.task_id, None)

    async def _abandon(self, waiting: list[_Tracked], held: list[_Tracked]) -> tuple[str, ...]:
        """The caller gave up on ``waiting`` (its wait holds ``held``): with cancel_on_abandon,
        one tasks/cancel for each task no other wait holds, all sent at once and bounded
        together by ``abandon_timeout``; returns the ids a cancel was sent for."""
        if not self.policy.cancel_on_abandon:
            return ()
        chosen = [
            tracked
            for tracked in dict.fromkeys(waiting)
            if not tracked.is_done
            and tracked.task_id not in self._cancel_sent
            and tracked.refs <= held.count(tracked)  # another wait still holds it: keep it
        ]
        for tracked in chosen:
            self._cancel_sent[tracked.task_id] = None
            while len(self._cancel_sent) > self.client.limits.max_answered_inputs:
                del self._cancel_sent[next(iter(self._cancel_sent))]
        self.cancels_sent += len(chosen)

        async def cancel(task_id: str) -> None:
            try:
                await self.client.cancel_task(task_id, timeout=self.policy.abandon_timeout)
            except MCPTasksError as exc:
                self._warn(exc)

        with anyio.move_on_after(self.policy.abandon_timeout):
            async with anyio.create_task_group() as group:
                for tracked in chosen:
                    group.start_soon(cancel, tracked.task_id)
        return tuple(t.task_id for t in chosen)


class _TaskLink:
    """What a tracked task's driver follower may do through the Poller (``TaskLink``)."""

    __slots__ = ("_poller", "_tracked", "task_id")

    def __init__(self, poller: Poller, tracked: _Tracked) -> None:
        self._poller = poller
        self._tracked = tracked
        self.task_id = tracked.task_id

    async def task_result(self, *, held: bool) -> JSONObject:
        timeout = self._poller.policy.result_timeout
        return await self._poller.client.task_result_raw(self.task_id, timeout=timeout, held=held)

    def serve_inputs(self, snapshot: Task) -> None:
        self._poller._serve_inputs(self._tracked, snapshot)

    def start_soon(self, work: Callable[[], Awaitable[None]]) -> None:
        group = self._poller._task_group
        assert group is not None
        group.start_soon(self._poller._guarded, self._tracked, work)

    def warn(self, problem: Any) -> None:
        self._poller._warn(problem)

    def decode_result(self, raw: JSONObject) -> CallToolResult:
        return self._poller.client.decode(raw, CallToolResult)


_UNBOUNDED = contextlib.nullcontext()


def _bounded(until: float) -> contextlib.AbstractContextManager[object]:
    """A cancel scope with ``until`` as its deadline; none at all for no deadline (a scope is
    several hundred bytes, and a wait may sleep for hours)."""
    return _UNBOUNDED if until == math.inf else anyio.CancelScope(deadline=until)


def _append(tracked: _Tracked, name: str, item: object) -> None:
    """Add ``item`` to one of ``tracked``'s lazily made lists."""
    items = getattr(tracked, name)
    if items is None:
        setattr(tracked, name, [item])
    else:
        items.append(item)


def _discard(tracked: _Tracked, name: str, item: object) -> None:
    """Remove ``item`` (once) from one of ``tracked``'s lazily made lists, if it is there."""
    items = getattr(tracked, name)
    if items is not None and item in items:
        items.remove(item)


def _call(callback: ProgressCallback, progress: TaskProgress) -> None:
    try:
        callback(progress)
    except Exception:  # the caller's callback: logged, it stops nothing
        log.exception("an on_progress callback raised")
