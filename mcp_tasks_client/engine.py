"""The polling engine: many tasks, one sans-I/O Tracker, a thin loop, typed outcomes.

Job of this module: the public :class:`Poller`, composing the pieces of ``_poller`` (each
module there names its job) behind its methods. May import every ``_poller`` module and the
floors below; imported only by the package's front and its users (``cli``, ``resume``,
``conformance``). It reaches its connection only through one ``PollPort`` (the Client is one).

Theory of operation. A :class:`Poller` lives inside an ``async with`` the caller wrote; it
polls only the tasks the caller waits on or watches, and stops when nobody waits on a task any
more. Every decision about a task is the sans-I/O :class:`~._sansio.tracker.Tracker`'s: what
happens is fed to it as an event (a wait holds or releases a task, a poll answered or failed,
a status was pushed, an outcome fetched, an input answered, the listen acknowledged or ended,
a cancel asked for, the connection ended) and the actions it returns are carried out here in
order (``_perform``): accept a snapshot (journal, status message, watchers), fetch an outcome,
serve input, record, end, warn, reopen the listen. ``_poller.scheduling.PollLoop`` sleeps until
the earliest due poll and sends what is due, at most the in-flight bound at once
(``PollPolicy.max_in_flight``, or sized to the measured latency under ``PollPolicy.in_flight``),
and says when polls fall behind their due times (``FallingBehind``) and each resize
(``InFlightResized``) in ``Poller.warnings``.
Notifications never replace polling (C-22); a task reported terminal is never polled again,
and its outcome is remembered (the newest ``Limits.max_answered_inputs``) for later waits.

A wait ends with the task's :data:`Outcome`, with the typed error that ended it (a transport
failure, TaskNotFound, IllegalTransition under ``ViolationPolicy.RAISE``), or with
DeadlineExceeded at the caller's deadline; with ``PollPolicy.cancel_on_abandon`` the task is
then cancelled with exactly one ``tasks/cancel`` (all of a wait's cancels sent at once, bounded
together by ``PollPolicy.abandon_timeout``; a task another wait still holds is not cancelled).
When the connection ends, every wait ends at once with that error. Leaving the ``async with``
cancels everything the poller started. Logs and spans follow the client's own settings.
"""

from __future__ import annotations

import collections
import datetime as dt
import functools
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from types import TracebackType

import anyio
import anyio.abc

from . import observability as _obs
from ._exceptions import DecodeError, InFlightResized, MCPTasksError, TransportError, UsageError
from ._poller.figures import PollerFigures
from ._poller.following import Following
from ._poller.journal_sink import JournalSink
from ._poller.observing import first_snapshot, status_changed, tracking_ended, tracking_started
from ._poller.parking import WatchItem
from ._poller.port import PollPort
from ._poller.registry import Registry, Tracked, monotonic_expiry
from ._poller.relays import Listener, relay_input, relay_progress
from ._poller.scheduling import PollLoop
from ._poller.waits import Abandon, ProgressCallback, TaskRef, Waits, task_id_of
from ._sansio import tracker as _t
from ._sansio.progress import StatusMessage, next_status_message
from ._sansio.scheduler import PollPolicy
from ._sansio.task_machine import Violation
from .inputs import InputRouter
from .journal import Journal
from .models import CallToolResult, CreateTaskResult, JSONRPCNotification, Task
from .outcomes import Outcome

__all__ = ["Poller", "ProgressCallback", "TaskRef", "WatchItem"]

log = _obs.get_logger("poller")


class Poller(PollerFigures):
    """Drives tasks to their outcomes with one scheduler; see the module docstring. Its
    counters and pace figures (``polls_sent``, ``polls_late``, ``in_flight_limit``, ...) are
    ``PollerFigures``'."""

    def __init__(
        self,
        client: PollPort,
        policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
        *,
        inputs: InputRouter | None = None,
        rng: random.Random | None = None,
        wall_clock: Callable[[], dt.datetime] | None = None,
        journal: Journal | None = None,
        before_poll: Callable[[str], None] | None = None,
    ) -> None:
        # ``journal`` records each accepted snapshot (in the background, newest first-come),
        # answered 2026 input key and outcome (before its wait wakes) of a task it recorded; a
        # journal failure is a warning. ``before_poll`` is called with a task's id before each
        # tasks/get and each outcome's fetch; what it raises ends that task's waits (``resume``
        # checks there that its lease on the task is still surely its own).
        self._client, self._inputs, self._journal = client, inputs, journal
        self._policy = policy = policy.for_client(client.timeouts.request)
        limits = client.limits
        self._warnings: collections.deque[Violation | MCPTasksError] = collections.deque(
            maxlen=limits.max_warnings
        )
        self._tracker = tracker = _t.Tracker(
            policy,
            rng=rng,
            capacity=limits.max_answered_inputs,
            max_inputs_per_task=limits.max_inputs_per_task,
            handles_inputs=inputs is not None,
        )
        self._registry = Registry(tracker)
        timeout = policy.request_timeout
        self._sink = None if journal is None else JournalSink(journal, client, timeout, self._warn)
        self._generation = Following(
            client,
            policy,
            inputs,
            tracker,
            self._sink,
            end=self._end,
            perform=self._perform,
            warn=self._warn,
            spawn=self._spawn,
            before_outcome=before_poll,
        )
        self._wall_clock = wall_clock or (lambda: dt.datetime.now(dt.timezone.utc))
        self._listener = Listener(client, policy, self._feed, self._warn)
        self._loop = PollLoop(
            policy,
            tracker,
            self._registry,
            client,
            perform=self._perform,
            failed=self._failed,
            warn=self._warn,
            before_poll=before_poll,
        )
        self._abandon = Abandon(policy, client, tracker, self._warn)
        self._waits = Waits(
            self._hold, self._release, self._abandon, client, limits.max_watch_backlog
        )
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False
        self._unsubscribe: list[Callable[[], None]] = []

    # -- its configuration: read-only (each is woven into the pieces at construction) --------

    @property
    def client(self) -> PollPort:
        return self._client

    @property
    def policy(self) -> PollPolicy:
        """The policy in force (the one given, with the client's request timeout if asked)."""
        return self._policy

    @property
    def inputs(self) -> InputRouter | None:
        return self._inputs

    @property
    def journal(self) -> Journal | None:
        return self._journal

    @property
    def warnings(self) -> collections.deque[Violation | MCPTasksError]:
        """Soft violations, and (under ViolationPolicy.WARN) ignored bad snapshots: the last
        ``Limits.max_warnings`` of them."""
        return self._warnings

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Poller:
        """Start the poller's own tasks (its scheduler, and the listen and journal writer when
        asked for). Deadline: none; nothing is sent. Cancelled: the task group is left again."""
        if self._task_group is not None:
            raise UsageError("a Poller can be entered only once")
        group = self._task_group = anyio.create_task_group()
        await group.__aenter__()
        client, unsubscribe = self.client, self._unsubscribe
        status = self._generation.status_notification
        unsubscribe.append(client.on_notification(status, self._on_status))
        unsubscribe.append(client.on_connection_end(self._on_connection_end))
        unsubscribe.append(
            client.on_progress(functools.partial(relay_progress, self._registry, warn=self._warn))
        )
        if self.policy.listen:
            acknowledged = "notifications/subscriptions/acknowledged"
            unsubscribe.append(client.on_notification(acknowledged, self._listener.on_acknowledged))
            group.start_soon(self._listener.run)
        if self.inputs is not None:
            relay = functools.partial(relay_input, self._registry, self._tracker, self._perform)
            unsubscribe.append(self.inputs.subscribe(relay, tasks=self._tracker))
        if self._sink is not None:
            group.start_soon(self._sink.run)
        group.start_soon(self._loop.run, group)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Cancel everything the poller started and end every wait still running with UsageError.
        Deadline: none (nothing is awaited on the network). Cancelled: the close still
        completes."""
        assert self._task_group is not None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._closed = True
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        closed = UsageError("the poller was closed")
        for tracked in list(self._registry.live.values()):
            self._end(tracked, error=closed)

    # -- the caller's waits (in _poller.waits) -------------------------------------------

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
        both generations. A task this poller already reported terminal (its outcome is
        remembered) is answered at once, with no request, whatever reference names it.

        ``on_progress`` is called with the task's latest known TaskProgress when the wait
        starts, then with each new one until the wait ends (the task's call must have carried
        a progress token: ``ToolCall.with_progress_token``). It runs in the client's reader:
        it must not block; what it raises is logged.
        Deadline: ``deadline`` (None: none), then DeadlineExceeded; with ``cancel_on_abandon``
        one tasks/cancel is sent, bounded by ``abandon_timeout``. Cancelled: the same cancel,
        shielded; nothing else is left running for this wait.
        """
        return await self._waits.wait(task, deadline, on_progress)

    async def wait_any(
        self,
        tasks: Sequence[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> tuple[str, Outcome | MCPTasksError]:
        """The first task to end, as ``(task_id, outcome or error)``; the others keep running.
        Deadline and cancellation as :meth:`as_completed`; the tasks that did not end keep
        running (nothing is cancelled for them once one ended).
        """
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
        """Every task's outcome (or the error that ended it), keyed by task id.
        Deadline and cancellation as :meth:`as_completed`.
        """
        return {
            task_id: ended
            async for task_id, ended in self.as_completed(
                tasks, deadline=deadline, on_progress=on_progress
            )
        }

    def as_completed(
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
        return self._waits.as_completed(tasks, deadline, on_progress)

    def watch(
        self, task: TaskRef, *, deadline: float | dt.timedelta | None = None
    ) -> AsyncIterator[WatchItem]:
        """Each new snapshot of the task (from polls and notifications), the terminal one last,
        each InputEvent of its input requests (arrived, answered, unhandled...), and each
        TaskProgress (when the task's call carried a progress token; the latest known one
        first).

        Then ``await poller.wait(task)`` returns the outcome at once, with no more requests:
        a task reported terminal is never polled again. A snapshot is new when
        its status, status message or ``lastUpdatedAt`` changed; :meth:`status_message`, read
        right after a snapshot, tells when its message was set and under which status. A
        watcher that reads slower than snapshots arrive gets the latest one (those in between
        are folded into it; progress events likewise), and at most
        ``Limits.max_watch_backlog`` unread items: memory does not grow with a server's
        notification rate.
        """
        return self._waits.watch(task, deadline)

    def snapshot(self, task_id: str) -> Task | None:
        """The latest accepted snapshot of a tracked task (no request)."""
        return self._registry.snapshot(task_id)

    def status_message(self, task_id: str) -> StatusMessage | None:
        """The status message of the latest accepted snapshot of a tracked task, with when it
        was first seen (``since``: that snapshot's ``lastUpdatedAt``; ``seen_at``: the
        poller's clock) and under which status: a terminal snapshot that carries over a
        message set while working has ``status`` WORKING (``is_current_for(snapshot)`` is
        False). None when the snapshot has no message or the task is not tracked. Read right
        after ``watch()`` yields a snapshot (no await between), it is that snapshot's."""
        tracked = self._registry.live.get(task_id)
        return tracked.message if tracked is not None else None

    def next_poll(self, task_id: str) -> float | None:
        """Seconds until the next ``tasks/get`` of a task being waited on (0 while one is due or
        in flight), or None when it is not being polled (not tracked, or ending): for a
        display; the schedule is the policy's and the server's, never changed by asking."""
        tracked = self._registry.live.get(task_id)
        if tracked is None or not tracked.tracking:
            return None
        due = self._tracker.scheduler.due(task_id)
        return None if due is None else max(0.0, due - anyio.current_time())

    # -- tracking ----------------------------------------------------------------------------

    async def _hold(self, ref: TaskRef, until: float) -> Tracked:
        if self._task_group is None or self._closed:
            raise UsageError("the poller is not running; use `async with Poller(...)`")
        task_id = task_id_of(ref)
        # A task tracked, or remembered with its outcome: a ref the caller hands in is no news
        # from the server (the CreateTaskResult of a finished task is stale), never polled.
        tracked = self._registry.held(task_id)
        if tracked is None:
            first = self._tracker.terminal_snapshot(task_id)  # finished again, not polled
            seed = False
            if first is None:
                if isinstance(ref, CreateTaskResult):
                    first, seed = ref.task, self._generation.polls_seed(ref)
                elif isinstance(ref, Task):
                    first = ref
                else:
                    first = await first_snapshot(self.client, self._loop, ref, until)
            tracked = self._registry.held(first.task_id)  # held, or ended, while we awaited?
            if tracked is None:
                tracked = self._track(first, seed, until)
        elif tracked.tracking:  # one more wait: its deadline may pull a capped poll in
            self._tracker.handle(_t.Track(tracked.machine.current, 0.0, waits_until=until))
        tracked.hold()
        return tracked

    def _track(self, first: Task, seed: bool, until: float) -> Tracked:
        ttl_ends = monotonic_expiry(first, self._wall_clock)
        expiry = ttl_ends if self.policy.ttl_backstop else None
        now = anyio.current_time()
        record, actions = self._tracker.track(_t.Track(first, now, expiry, ttl_ends, until, seed))
        tracked = Tracked(first.task_id, record)
        tracked.message = next_status_message(None, first, now=self._wall_clock())
        self._registry.add(tracked)
        tracking_started(tracked, first, self.client)
        self._perform(actions)
        self._loop.wake()
        return tracked

    def _release(self, tracked: Tracked) -> None:
        if self._registry.release(tracked):
            # Nobody waits on it: stop polling (never unasked), hold no tasks/result open for
            # it, ask none of its questions (the registry cancelled its input handlers).
            self._perform(self._tracker.handle(_t.Release(tracked.task_id)))
            tracking_ended(tracked, "released", self.client.redaction)
            self._generation.released(tracked)

    # -- observability ---------------------------------------------------------------------

    def _warn(self, item: Violation | MCPTasksError) -> None:
        """Every warning the poller keeps: in ``warnings`` and a WARNING record (a resize the
        caller opted in to, ``InFlightResized``: an INFO one)."""
        self.warnings.append(item)
        level = logging.INFO if isinstance(item, InFlightResized) else logging.WARNING
        log.log(level, "poller warning: %s: %s", type(item).__name__, item)

    # -- news from the server, and the tracker's actions -----------------------------------

    def _on_status(self, notification: JSONRPCNotification) -> None:
        """A status notification: news sooner than the next poll (C-22: never instead)."""
        try:
            snapshot = self.client.read_status_notification(notification)
        except DecodeError as exc:
            self._warn(exc)
            return
        self._perform(self._tracker.handle(_t.Pushed(snapshot, anyio.current_time())))

    def _on_connection_end(self, error: MCPTasksError) -> None:
        """The connection ended (ClientClosed, or what broke it): every wait ends now with that
        error, not at its next poll (which may be minutes away)."""
        for tracked in list(self._registry.live.values()):
            self._end(tracked, error=error)

    def _feed(self, event: _t.Event) -> None:
        self._perform(self._tracker.handle(event))

    def _perform(self, actions: Sequence[_t.Action]) -> None:
        """Carry out the tracker's actions, in order (those of a poll, a push, a release)."""
        live = self._registry.live
        for action in actions:
            if isinstance(action, _t.Warn):
                self._warn(action.problem)
                continue
            if isinstance(action, _t.Relisten):
                self._listener.want(action.task_ids)
                continue
            tracked = live.get(action.task_id)
            if tracked is None:
                continue
            if isinstance(action, _t.Accepted):
                self._accepted(tracked, action)
            elif isinstance(action, _t.FetchOutcome):
                if self._registry.finishing(tracked):
                    self._spawn(tracked, functools.partial(self._finish, tracked))
            elif isinstance(action, _t.ServeInput):
                if action.keys or action.snapshot.input_requests is None:
                    self._generation.needs_input(tracked, action.snapshot, action.keys)
            elif isinstance(action, _t.RecordOutcome):
                if self._sink is not None and self._task_group is not None:
                    self._task_group.start_soon(self._sink.outcome, tracked.task_id, action.outcome)
            elif isinstance(action, _t.End):
                self._ended(tracked, action.outcome, action.error)
            elif isinstance(action, _t.Poll):  # held back for an input round, due now
                self._loop.enqueue(action.task_id)

    def _accepted(self, tracked: Tracked, action: _t.Accepted) -> None:
        snapshot = action.snapshot
        if self._sink is not None:
            self._sink.snapshot(tracked.task_id, snapshot)
        tracked.message = next_status_message(tracked.message, snapshot, now=self._wall_clock())
        status_changed(tracked, action.previous, snapshot, self.client.redaction)
        if action.news:
            tracked.push(snapshot)

    # -- ending ----------------------------------------------------------------------------

    async def _finish(self, tracked: Tracked) -> None:
        """The terminal task's outcome fetched; recorded (awaited) before its waits wake."""
        ended = await self._generation.outcome(tracked)
        for action in self._tracker.handle(_t.OutcomeFetched(tracked.task_id, ended)):
            if isinstance(action, _t.RecordOutcome) and self._sink is not None:
                await self._sink.outcome(action.task_id, action.outcome)
            elif not isinstance(action, _t.RecordOutcome):
                self._perform((action,))

    def _spawn(self, tracked: Tracked, work: Callable[[], Awaitable[None]]) -> None:
        assert self._task_group is not None
        self._task_group.start_soon(self._guarded, tracked, work)

    async def _guarded(self, tracked: Tracked, work: Callable[[], Awaitable[None]]) -> None:
        """Run one of the poller's own tasks for ``tracked`` (what it raises: ``_failed``)."""
        try:
            await work()
        except Exception as exc:
            self._failed(tracked, exc)

    def _failed(self, tracked: Tracked, exc: Exception) -> None:
        """What one of ``tracked``'s own tasks raised (``_guarded``, a poll) ends its waits with
        a typed error, never the poller's task group (no ExceptionGroup out of the Poller)."""
        if not isinstance(exc, MCPTasksError):
            name = type(exc).__name__
            error = TransportError(f"tracking {tracked.task_id!r} failed: {name}: {exc}")
            error.__cause__, exc = exc, error  # the typed error, caused by the foreign one
        self._end(tracked, error=exc)

    def _end(self, tracked: Tracked, *, error: MCPTasksError) -> None:
        """End ``tracked``'s waits with ``error`` from outside the protocol (the connection
        ended, the poller closed, its own task failed): through the tracker, once."""
        self._perform(self._tracker.handle(_t.TrackingFailed(tracked.task_id, error)))
        self._ended(tracked, None, error)  # a record the tracker no longer follows

    def _ended(self, tracked: Tracked, outcome: Outcome | None, err: MCPTasksError | None) -> None:
        if not self._registry.end(tracked, outcome, err):
            return
        name = "error" if outcome is None else type(outcome).__name__
        tracking_ended(tracked, name, self.client.redaction, err)
        self._generation.ended(tracked)
