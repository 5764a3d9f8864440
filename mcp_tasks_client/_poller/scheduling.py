"""The scheduler loop: when each tracked task is polled, and at most how many at once.

Job: one driver task sleeps until the earliest due poll of the sans-I/O :class:`PollScheduler`
(a deadline heap, not a sleeping coroutine per task) and starts the ``tasks/get`` calls that
are due, at most ``PollPolicy.max_in_flight`` at once; a due poll that finds no free slot
waits in line (``delayed`` counts it). One poll: its answer goes to ``observe`` unless it is
stale (a terminal snapshot arrived while it was in flight, A-08) or the task stopped being
polled meanwhile (released, finishing, ended); then the next one is scheduled from the
server's ``pollInterval`` (C-19), slowed for ids a listen acknowledged (A-25). An interval past
``PollPolicy.max_server_interval`` is capped at it and pulled in to the task's ttl or the
latest deadline of its waits, with a warning (once a task): a server's 1e12 ms is no reason to
go silent for years. A poll answered busy (HTTP 429/503, ServerBusy) ends the task's waits
with it under ``BusyPolicy.FAIL``; under ``BusyPolicy.BACK_OFF`` it is scheduled again by the
sans-I/O scheduler's busy rule (never sooner than ``Retry-After``) with a ``BackedOff``
warning each time; the waits' own deadlines still end them meanwhile.

Only a record in ``TRACKING`` is ever polled: a task reported terminal is never polled again.

May import: ``registry``, ``_sansio.scheduler``, ``_sansio.task_machine``, ``_exceptions``,
``models``, anyio. What it needs from the poller comes in as the callables of its
constructor.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

from .._exceptions import (
    BackedOff,
    DeadlineExceeded,
    MCPTasksError,
    PollIntervalCapped,
    RequestTimeout,
    ServerBusy,
    TaskNotFound,
    UnknownValue,
)
from .._sansio.scheduler import BusyPolicy, PollPolicy, PollScheduler
from .._sansio.task_machine import Violation, ViolationPolicy
from ..models import Task
from .registry import Registry, Tracked

__all__ = ["Driver", "server_interval"]


def server_interval(task: Task) -> float | None:
    return None if task.poll_interval is None else task.poll_interval / 1000.0


class Driver:
    """The scheduler loop of one Poller (see the module docstring)."""

    def __init__(
        self,
        policy: PollPolicy,
        scheduler: PollScheduler,
        registry: Registry,
        *,
        get: Callable[..., Awaitable[Task]],
        observe: Callable[[Tracked, Task], None],
        end: Callable[[Tracked, MCPTasksError], None],
        expire: Callable[[Tracked], None],
        warn: Callable[[MCPTasksError | Violation], None],
        failed: Callable[[Tracked, Exception], None],
        acknowledged: Callable[[], frozenset[str]],
        before_poll: Callable[[str], None] | None = None,
    ) -> None:
        self.policy = policy
        # The Poller's ``before_poll``: called with the task id before each tasks/get; what
        # it raises is raised instead of the poll (resume checks its lease there).
        self._before_poll = before_poll
        self.scheduler = scheduler
        self._registry = registry
        self._get = get
        self._observe = observe
        self._end = end
        self._expire = expire
        self._warn = warn
        self._failed = failed
        self._acknowledged = acknowledged
        self._wake = anyio.Event()
        # When the sleeping driver wakes by itself (-inf while it is not sleeping on a time):
        # an answered poll due no sooner need not wake it (one wake-up per due time, not one
        # per answer).
        self._sleeping_until = -math.inf
        # PollPolicy.max_in_flight: polls running, and due ones waiting for a slot (oldest
        # first). A counter the driver reads, not a limiter each poll acquires.
        self._in_flight = 0
        self._ready: collections.deque[str] = collections.deque()
        self.sent = 0
        """``tasks/get`` requests sent."""
        self.delayed = 0
        """Polls that were due but waited for a slot (``PollPolicy.max_in_flight`` saturated)."""

    async def get(self, task_id: str, timeout: float | None = None) -> Task:
        """One ``tasks/get`` (``get``: ``Client.get_task``), counted in ``sent``, once
        ``before_poll`` let it go."""
        if self._before_poll is not None:
            self._before_poll(task_id)
        self.sent += 1
        limit = self.policy.request_timeout if timeout is None else timeout
        return await self._get(task_id, timeout=limit)

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

    def track(self, tracked: Tracked, first: Task) -> None:
        """Poll ``tracked`` from now on (its first poll one wait after now)."""
        now = anyio.current_time()
        interval = server_interval(first)
        self.scheduler.track(
            tracked.task_id, now, interval, not_after=self._not_after(tracked, now, interval)
        )
        self._wake.set()

    def _not_after(self, tracked: Tracked, now: float, interval: float | None) -> float | None:
        """The latest the next poll may be due: the ttl backstop's expiry; and, for a server
        interval past ``max_server_interval``, the task's ttl or its waits' latest deadline
        too (one still ahead: a poll is not pulled into the past), with a warning, once."""
        limit = tracked.expires_at
        if not self.scheduler.distrusts(interval):
            return limit
        assert interval is not None
        ends = [
            end
            for end in (limit, tracked.ttl_ends, tracked.waits_until)
            if end is not None and now < end < math.inf
        ]
        if not tracked.interval_warned:
            tracked.interval_warned = True
            longest = self.policy.max_server_interval
            self._warn(PollIntervalCapped(tracked.task_id, interval, longest))
        return min(ends) if ends else None

    def untrack(self, task_id: str) -> None:
        self.scheduler.untrack(task_id)

    async def run(self, task_group: anyio.abc.TaskGroup) -> None:
        """The loop, for the poller's life; polls run in ``task_group``."""
        limit = self.policy.max_in_flight
        ready = self._ready
        while True:
            self._take_due()
            while (poll := self._next_poll()) is not None:
                task_group.start_soon(self._run_poll, *poll)
            if self._wake.is_set():
                self._wake = anyio.Event()
            if ready and self._in_flight >= limit:
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
        limit = self.policy.max_in_flight
        now = anyio.current_time() if now is None else now
        for task_id in self.scheduler.pop_due(now):
            if self._in_flight >= limit or ready:
                self.delayed += 1
            ready.append(task_id)

    def _next_poll(self) -> tuple[Tracked, str] | None:
        """The next task in line, when a slot is free (taken for it)."""
        ready = self._ready
        while ready and self._in_flight < self.policy.max_in_flight:
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
                # The driver may be waiting for a slot with no deadline (the line was full):
                # it must look again, at the line and at the polls scheduled for later.
                self._wake.set()
                return
            # Going on with the next poll here: the driver needs waking only for a due time
            # sooner than the one it sleeps until that this task did not take (a poll answered
            # with no wait at all, polled back to back, is taken here, not woken for: a
            # wake-up per poll cost a scheduler pass on trio).
            due = self.scheduler.next_due()
            if due is not None and due < self._sleeping_until:
                self._wake.set()
            tracked, task_id = poll

    async def _poll(self, task_id: str) -> float | None:
        """One ``tasks/get`` of a tracked task, observed, and its next poll scheduled; the
        time it was scheduled from (None: not scheduled)."""
        tracked = self._registry.live.get(task_id)
        if tracked is None or not tracked.tracking:
            return None
        expired = tracked.expires_at is not None and anyio.current_time() >= tracked.expires_at
        mark = tracked.machine.mark()
        snapshot: Task | None
        try:
            snapshot = await self.get(task_id)
        except TaskNotFound as exc:
            if expired:  # the server may delete a task once its ttl ran out (T:459)
                self._expire(tracked)
            else:
                self._end(tracked, exc)
            return None
        except UnknownValue as exc:
            if exc.path != "$.result.status" or self.policy.on_violation is ViolationPolicy.RAISE:
                self._end(tracked, exc)
                return None
            self._warn(exc)  # an unknown status, ignored under WARN
            snapshot = None
        except ServerBusy as exc:
            return self._busy(tracked, exc)
        except MCPTasksError as exc:
            self._end(tracked, exc)
            return None
        if not tracked.tracking:
            return None  # released, finishing or ended while the poll was in flight
        tracked.busy_in_row = 0
        if tracked.machine.is_stale(mark, snapshot):
            # A terminal status arrived (a notification) while this poll was in flight: its
            # older answer is stale, not a change after terminal (A-08, the machine's rule; a
            # poller that stops at terminal cannot tell the two apart; the conformance probe
            # polls past terminal). Likewise an answer older than a snapshot pushed while the
            # poll was in flight: overtaken, not the server's clock going backwards.
            return None
        if snapshot is not None:
            self._observe(tracked, snapshot)
        if not tracked.tracking:
            return None
        if expired:
            self._expire(tracked)
            return None
        current = tracked.machine.current
        interval = asked = server_interval(current)
        if task_id in self._acknowledged():  # pushed to us: a slow safety poll only
            base = interval if interval is not None else self.policy.initial
            interval = base * self.policy.listen_safety_factor
        # The driver is woken for the new due time (if sooner than its sleep) by _run_poll,
        # once it knows whether it takes that poll itself.
        now = anyio.current_time()
        self.scheduler.answered(
            task_id, now, interval, not_after=self._not_after(tracked, now, asked)
        )
        return now

    def _busy(self, tracked: Tracked, busy: ServerBusy) -> float | None:
        """A poll answered 429/503: the end of the task's waits (``BusyPolicy.FAIL``, or a
        Retry-After too long to wait out), or the same poll scheduled again after the busy
        rule's wait, with a warning. The time it was scheduled from (None: not scheduled)."""
        if self.policy.on_busy is BusyPolicy.FAIL:
            self._end(tracked, busy)
            return None
        if not tracked.tracking:
            return None  # released, finishing or ended while the poll was in flight
        tracked.busy_in_row += 1
        now = anyio.current_time()
        interval = server_interval(tracked.machine.current)
        due = self.scheduler.busy(
            tracked.task_id, now, tracked.busy_in_row, busy.retry_after, interval
        )
        if due is None:
            self._end(tracked, busy)
            return None
        self._warn(BackedOff(busy, tracked.task_id, due - now, tracked.busy_in_row))
        return now
