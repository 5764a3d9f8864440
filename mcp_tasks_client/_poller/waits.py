"""The caller's waits: ``wait``, ``as_completed`` (``wait_any``, ``wait_all``) and ``watch``.

Job: hold the tasks a wait names, park until they end (or have news, for a watch), and end
the wait with the outcome, the error that ended the task, or DeadlineExceeded; on the
deadline or the caller's cancellation, abandon what it still waits on (with
``PollPolicy.cancel_on_abandon``: one ``tasks/cancel`` each, all at once, bounded together by
``abandon_timeout``). Every hold is released however the wait ends.

May import: ``parking``, ``registry``, ``relays`` (to call a progress callback), ``models``,
``outcomes``, ``_exceptions``, ``_sansio``, anyio. It reaches the rest of the poller only
through what its constructor takes (hold, release; the port: the latest progress, cancel).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeAlias

import anyio
import anyio.lowlevel

from .._exceptions import DeadlineExceeded, MCPTasksError
from .._sansio.progress import TaskProgress
from .._sansio.scheduler import PollPolicy
from .._sansio.task_machine import Violation
from .._sansio.tracker import CancelAsked, Tracker
from ..models import CallToolResult, CreateTaskResult, Task
from ..outcomes import Completed, Outcome
from .parking import Inbox, WatchItem, WatchQueue, bounded
from .port import PollPort
from .registry import Tracked, add_item, discard_item
from .relays import call_progress

__all__ = ["Abandon", "ProgressCallback", "TaskRef", "Waits", "seconds", "task_id_of"]

TaskRef: TypeAlias = CreateTaskResult | Task | str
"""What the caller may hand a wait: the created task, a snapshot, or a bare task id (resume).

One of:

- a ``CreateTaskResult``: what ``Client.start`` returned;
- a ``Task``: a snapshot (from ``get_task``, ``list_tasks``, a journal);
- a ``str``: a bare task id, to resume a wait on a task started elsewhere.

``wait`` also takes the CallToolResult a 2026-07-28 ``start`` returns when the server answered
inline (its outcome is Completed at once, with no task)."""

ProgressCallback: TypeAlias = Callable[[TaskProgress], None]
"""Called with each TaskProgress of a task a wait holds; runs in the reader: must not block."""


def task_id_of(ref: TaskRef) -> str:
    if isinstance(ref, str):
        return ref
    return ref.task.task_id if isinstance(ref, CreateTaskResult) else ref.task_id


def seconds(value: float | dt.timedelta | None) -> float:
    if value is None:
        return math.inf
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value)


class Abandon:
    """The caller gave up on tasks: with ``cancel_on_abandon``, one ``tasks/cancel`` each for
    those no other wait holds; whether one is worth sending (never two for one task, none
    for a task reported terminal: its status won the race) is the Tracker's ``CancelAsked``."""

    def __init__(
        self,
        policy: PollPolicy,
        port: PollPort,
        tracker: Tracker,
        warn: Callable[[Violation | MCPTasksError], None],
    ) -> None:
        self.policy = policy
        self._port = port
        self._tracker = tracker
        self._warn = warn
        self.count = 0
        """``tasks/cancel`` requests sent."""

    async def __call__(self, waiting: list[Tracked], held: list[Tracked]) -> tuple[str, ...]:
        """The caller gave up on ``waiting`` (its wait holds ``held``): the ids a cancel was
        sent for, all at once and bounded together by ``abandon_timeout``."""
        if not self.policy.cancel_on_abandon:
            return ()
        chosen = [
            tracked
            for tracked in dict.fromkeys(waiting)
            if not tracked.done
            and tracked.refs <= held.count(tracked)  # another wait still holds it: keep it
            and self._tracker.handle(CancelAsked(tracked.task_id))  # [SendCancel] or nothing
        ]
        self.count += len(chosen)

        async def cancel(task_id: str) -> None:
            try:
                await self._port.cancel_task(task_id, timeout=self.policy.abandon_timeout)
            except MCPTasksError as exc:
                self._warn(exc)

        with anyio.move_on_after(self.policy.abandon_timeout):
            async with anyio.create_task_group() as group:
                for tracked in chosen:
                    group.start_soon(cancel, tracked.task_id)
        return tuple(t.task_id for t in chosen)


class Waits:
    """The wait kinds of one Poller; see ``Poller.wait``, ``as_completed`` and ``watch``."""

    def __init__(
        self,
        hold: Callable[[TaskRef, float], Awaitable[Tracked]],
        release: Callable[[Tracked], None],
        abandon: Abandon,
        port: PollPort,
        backlog: int,
    ) -> None:
        self._hold = hold
        self._release = release
        self._abandon = abandon
        self._progress = port.progress
        self._backlog = backlog

    def _report(self, tracked: Tracked, on_progress: ProgressCallback) -> None:
        add_item(tracked, "progress_callbacks", on_progress)
        latest = self._progress(tracked.task_id)
        if latest is not None:
            call_progress(on_progress, latest)

    async def wait(
        self,
        task: TaskRef | CallToolResult,
        deadline: float | dt.timedelta | None,
        on_progress: ProgressCallback | None,
    ) -> Outcome:
        if isinstance(task, CallToolResult):
            return Completed(None, task)
        # as_completed for one task, without its inbox: the wait parks on the task's own
        # wakeup (shared by every wait on it, see DoneWakeup), so a waited task costs the
        # poller no more than a tracked one plus this frame and that wakeup.
        until = anyio.current_time() + seconds(deadline)
        tracked = await self._hold(task, until)
        reporting = False
        try:
            if on_progress is not None and not tracked.done:
                reporting = True
                self._report(tracked, on_progress)
            ended = False
            try:
                with bounded(until):
                    if tracked.done:
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
            result = tracked.told()
            if isinstance(result, MCPTasksError):
                raise result
            return result
        finally:
            if reporting:
                discard_item(tracked, "progress_callbacks", on_progress)
            self._release(tracked)

    async def as_completed(
        self,
        tasks: Iterable[TaskRef],
        deadline: float | dt.timedelta | None,
        on_progress: ProgressCallback | None,
    ) -> AsyncIterator[tuple[str, Outcome | MCPTasksError]]:
        until = anyio.current_time() + seconds(deadline)
        inbox = Inbox()
        held: list[Tracked] = []
        reporting: set[Tracked] = set()  # the tasks on_progress was registered with
        try:
            for ref in tasks:
                tracked = await self._hold(ref, until)
                held.append(tracked)
                tracked.add_listener(inbox)
                if tracked.done:
                    inbox.put(tracked)
                elif on_progress is not None and tracked not in reporting:
                    reporting.add(tracked)
                    self._report(tracked, on_progress)
            remaining = {t.task_id for t in held}
            while remaining:
                ended: Tracked | None = None
                try:
                    with bounded(until):
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
                    yield ended.task_id, ended.told()
        finally:
            for tracked in held:
                tracked.remove_listener(inbox)
                self._release(tracked)
            for tracked in reporting:
                assert on_progress is not None
                discard_item(tracked, "progress_callbacks", on_progress)

    async def watch(
        self, task: TaskRef, deadline: float | dt.timedelta | None
    ) -> AsyncIterator[WatchItem]:
        until = anyio.current_time() + seconds(deadline)
        tracked = await self._hold(task, until)
        queue = WatchQueue(self._backlog)
        latest = self._progress(tracked.task_id)
        if latest is not None and not tracked.machine.is_terminal:
            queue.push(latest)
        queue.push(tracked.machine.current)
        if tracked.machine.is_terminal or tracked.done:
            queue.close()
        else:
            add_item(tracked, "watchers", queue)
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
            discard_item(tracked, "watchers", queue)
            queue.close()
            self._release(tracked)
