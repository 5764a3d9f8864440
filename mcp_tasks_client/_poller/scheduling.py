"""The poll loop: carries out the Tracker's polls, at most the in-flight bound at once.

Job: one loop task sleeps until the earliest due poll of the Tracker's scheduler (a deadline
heap, not a sleeping coroutine per task), asks the Tracker (``Tick``) which polls are due and
sends them, at most ``PollPolicy.max_in_flight`` at once; a due poll that finds no free slot
waits in line (``delayed`` counts it). One poll is a ticket from the Tracker
(``Tracker.send_poll``: None when the task stopped being polled meanwhile), one ``tasks/get``,
and its answer or typed failure handed back to the Tracker (``Polled`` / ``PollFailed``); the
actions it returns (accept the snapshot, fetch the outcome, serve input, end, warn, ...) go to
the Poller's ``perform``. A ``Poll`` the Tracker returns outside a ``Tick`` (one it held back
while the task's input round was answered) joins the same line (:meth:`PollLoop.enqueue`).
Every decision (stale answers, A-08; the next poll's time, C-19 and A-25; expiry; a busy
server; no poll during an input round) is the Tracker's (``_sansio/tracker.py``): nothing
here decides anything about a task but when its poll is sent.

Keeping pace: the loop hands each poll's due and send times, and each answer's round trip and
next due time, to its sans-I/O :class:`~.._sansio.pace.Pace` (no clock read there), which says
when polls fall behind (a ``FallingBehind`` for ``warn``) and, under ``PollPolicy(in_flight=
FollowLatency(...))``, resizes the in-flight bound (an ``InFlightResized`` for ``warn``); the
bound the loop reads is always ``Pace.limit`` (``PollPolicy.max_in_flight`` unless it follows).

May import: ``registry``, ``_sansio.tracker``, ``_sansio.scheduler``, ``_sansio.pace``,
``_exceptions``, ``models``, anyio. What it needs from the Poller comes in through its
constructor: the Tracker, the port (its ``get_task``), ``perform``, ``failed``, ``warn`` and
``before_poll``.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence

import anyio
import anyio.abc

from .._exceptions import DeadlineExceeded, MCPTasksError, RequestTimeout
from .._sansio.pace import Pace
from .._sansio.scheduler import PollPolicy
from .._sansio.tracker import Action, Poll, Polled, PollFailed, Tick, Tracker
from ..models import Task
from .port import PollPort
from .registry import Registry, Tracked

__all__ = ["PollLoop"]


class PollLoop:
    """The poll loop of one Poller (see the module docstring)."""

    def __init__(
        self,
        policy: PollPolicy,
        tracker: Tracker,
        registry: Registry,
        port: PollPort,
        *,
        perform: Callable[[Sequence[Action]], None],
        failed: Callable[[Tracked, Exception], None],
        warn: Callable[[MCPTasksError], None],
        before_poll: Callable[[str], None] | None = None,
    ) -> None:
        self.policy = policy
        self.pace = Pace(policy)
        """Lateness, round trips and the in-flight bound (``pace.limit``)."""
        self._warn = warn
        # The Poller's ``before_poll``: called with the task id before each tasks/get; what
        # it raises is raised instead of the poll (resume checks its lease there).
        self._before_poll = before_poll
        self._tracker = tracker
        self.scheduler = tracker.scheduler
        self._registry = registry
        self._port = port
        self._perform = perform
        self._failed = failed
        self._wake = anyio.Event()
        # When the sleeping loop wakes by itself (-inf while it is not sleeping on a time):
        # an answered poll due no sooner need not wake it (one wake-up per due time, not one
        # per answer).
        self._sleeping_until = -math.inf
        # The in-flight bound (pace.limit): polls running, and due ones waiting for a slot
        # (oldest first). A counter the loop reads, not a limiter each poll acquires.
        self._in_flight = 0
        self._ready: collections.deque[str] = collections.deque()
        self.sent = 0
        """``tasks/get`` requests sent."""
        self.delayed = 0
        """Polls that were due but waited for a slot (the in-flight bound saturated)."""

    async def get(self, task_id: str, timeout: float | None = None) -> Task:
        """One ``tasks/get`` (the port's ``get_task``), counted in ``sent``, once
        ``before_poll`` let it go."""
        if self._before_poll is not None:
            self._before_poll(task_id)
        self.sent += 1
        limit = self.policy.request_timeout if timeout is None else timeout
        return await self._port.get_task(task_id, timeout=limit)

    async def first(self, task_id: str, until: float) -> Task:
        """The first snapshot of a task resumed by its bare id, within the wait's deadline."""
        left = until - anyio.current_time()
        if left <= 0:
            raise DeadlineExceeded([task_id], {})
        try:
            return await self.get(task_id, min(self.policy.request_timeout, left))
        except RequestTimeout:
            if anyio.current_time() >= until:
                raise DeadlineExceeded([task_id], {}) from None
            raise

    def wake(self) -> None:
        """A task was tracked (its first poll is scheduled): look at the schedule again."""
        self._wake.set()

    def enqueue(self, task_id: str) -> None:
        """The Tracker's ``Poll`` outside a ``Tick`` (a poll held back while the task's input
        was being answered, due now): into the line, sent when a slot is free."""
        if self._in_flight >= self.policy.max_in_flight or self._ready:
            self.delayed += 1
        self._ready.append(task_id)
        self._wake.set()

    async def run(self, task_group: anyio.abc.TaskGroup) -> None:
        """The loop, for the poller's life; polls run in ``task_group``."""
        pace = self.pace
        ready = self._ready
        while True:
            self._take_due()
            while (poll := self._next_poll()) is not None:
                task_group.start_soon(self._run_poll, *poll)
            if self._wake.is_set():
                self._wake = anyio.Event()
            if ready and self._in_flight >= pace.limit:
                await self._wake.wait()  # a slot frees (or a task is added)
                continue
            due = self.scheduler.next_due()
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

    def _take_due(self, now: float | None = None) -> None:
        """The tasks due by ``now`` (the poll that just ended read it; default: the clock)
        into the line, counting those that must wait for a slot."""
        ready = self._ready
        limit = self.pace.limit
        now = anyio.current_time() if now is None else now
        for poll in self._tracker.handle(Tick(now)):
            if isinstance(poll, Poll):  # all a Tick asks for
                if self._in_flight >= limit or ready:
                    self.delayed += 1
                ready.append(poll.task_id)

    def _next_poll(self) -> tuple[Tracked, str] | None:
        """The next task in line, when a slot is free (taken for it)."""
        ready = self._ready
        limit = self.pace.limit
        while ready and self._in_flight < limit:
            task_id = ready.popleft()
            tracked = self._registry.live.get(task_id)
            if tracked is not None:
                self._in_flight += 1
                return tracked, task_id
        return None

    async def _run_poll(self, tracked: Tracked, task_id: str) -> None:
        """One poll, then the next one due or in line, in this same task while there is one
        (a task spawned per poll cost more than the rest of the poller's per-poll work)."""
        while True:
            try:
                try:
                    now = await self._poll(task_id)
                except Exception as exc:  # ends that task's waits, never the poller's group
                    now = None
                    self._failed(tracked, exc)
            except BaseException:
                self._in_flight -= 1
                self._wake.set()
                raise
            self._in_flight -= 1
            self._take_due(now)
            poll = self._next_poll()
            if poll is None:
                # The loop may be waiting for a slot with no deadline (the line was full):
                # it must look again, at the line and at the polls scheduled for later.
                self._wake.set()
                return
            # Going on with the next poll here: the loop needs waking only for a due time
            # sooner than the one it sleeps until that this task did not take (a poll answered
            # with no wait at all, polled back to back, is taken here, not woken for: a
            # wake-up per poll cost a scheduler pass on trio).
            due = self.scheduler.next_due()
            if due is not None and due < self._sleeping_until:
                self._wake.set()
            tracked, task_id = poll

    async def _poll(self, task_id: str) -> float | None:
        """One ``tasks/get`` of a polled task, its answer (or typed failure) handed to the
        Tracker and the actions carried out; the time it answered (None: not sent)."""
        tracker, pace, scheduler = self._tracker, self.pace, self.scheduler
        sent = anyio.current_time()
        ticket = tracker.send_poll(task_id, sent)
        if ticket is None:
            return None  # released, finishing or ended: never polled again
        due = scheduler.due(task_id)  # the entry that fell due stays until it is answered
        if due is not None and sent - due > pace.tolerance:
            late = pace.sent(due, sent, len(self._ready), self._in_flight)
            if late is not None:
                self._warn(late)
        try:
            snapshot = await self.get(task_id)
        except MCPTasksError as exc:
            now = anyio.current_time()
            actions = tracker.handle(PollFailed(ticket, exc, now))
        else:
            now = anyio.current_time()
            actions = tracker.handle(Polled(ticket, snapshot, now))
        # The next due time only matters to a bound that follows latency (its cycles).
        next_due = scheduler.due(task_id) if pace.following else None
        resized = pace.answered(sent, now, next_due, scheduler)
        if resized is not None:
            self._warn(resized)
            self._wake.set()  # a larger bound: the loop takes more of the line now
        if actions:
            # The loop is woken for the new due time (if sooner than its sleep) by _run_poll,
            # once it knows whether it takes that poll itself.
            self._perform(actions)
        return now
