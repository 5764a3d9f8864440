"""The waiters of the tracked tasks: who waits on and watches each one, and how they are told.

Job: the waiters' side of each task the Poller follows, and only that. A :class:`Tracked` is
one task's waits (how many hold it), its watchers, its ``as_completed`` inboxes, its progress
callbacks, its input workers and its span; when the task ends, :meth:`Registry.end` tells them
all, once, with what ended it. Where the task is in its life, and how it ended, is not kept
here: the sans-I/O Tracker's record of the task (``_sansio.tracker.TaskRecord``: its phase,
``TRACKING`` -> ``FINISHING`` -> ``ENDED`` or ``RELEASED``, and its task machine) is the one
lifecycle, and a :class:`Tracked` reads it; the Tracker's memory of ended tasks answers a later
wait on a task that ended (issue 20: ``watch()`` then ``wait(created)``), never this module.

May import: ``parking``, ``models``, ``outcomes``, ``_exceptions``, ``_sansio.task_machine``,
``_sansio.progress``, ``_sansio.tracker`` (the record it reads), anyio (cancel scopes). No I/O,
no clock, no logging: the poller does those around the calls here.
"""

from __future__ import annotations

import collections
import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from .._exceptions import MCPTasksError
from .._sansio.progress import StatusMessage, TaskProgress
from .._sansio.task_machine import TaskMachine
from .._sansio.tracker import Phase, TaskRecord, Tracker, expiry_instant
from ..models import Task
from ..observability import TaskTrace
from ..outcomes import Outcome
from .parking import DoneWakeup, Inbox, WatchItem, WatchQueue

if TYPE_CHECKING:
    from .._drivers import TaskFollow

__all__ = ["Registry", "Tracked", "monotonic_expiry"]


@attrs.define(eq=False)
class Tracked:
    """One tracked task, the waiters' side (slotted, and small: a poller may hold 100,000 of
    them): who waits and watches, and how they are told. Its protocol side (the phase, the
    machine, the next poll, expiry, busy streak, input keys) is the Tracker's ``record``, read
    here and never written. What only some tasks need (an event to wait on, watchers,
    listeners, progress callbacks, input scopes) is made on first use; ``None`` until then."""

    task_id: str
    record: TaskRecord
    """The Tracker's record of the task (for a task answered from memory: its last one)."""
    refs: int = 0
    ended: Outcome | MCPTasksError | None = None
    """What its waits were told when it ended (None: not ended for them yet)."""
    done_event: DoneWakeup | None = None
    """Made by the first ``wait()`` that has to wait; one for all of them."""
    watchers: list[WatchQueue] | None = None
    listeners: Inbox | list[Inbox] | None = None
    """The ``as_completed`` inboxes told when it ends: the one inbox itself (the usual case:
    no list per task), or a list once there are more."""
    progress_callbacks: list[Callable[[TaskProgress], None]] | None = None
    message: StatusMessage | None = None
    """The latest accepted snapshot's status message, with when it was first seen."""
    input_queue: collections.deque[tuple[str, Any]] | None = None
    """Taken 2026 input keys (key, InputRequest) no worker has started yet, oldest first."""
    input_workers: int = 0
    """Workers draining ``input_queue`` (at most ``Limits.max_server_requests``)."""
    input_scopes: set[anyio.CancelScope] | None = None
    """One per 2026 input worker of this task: cancelled when its tracking ends."""
    span: TaskTrace | None = None
    """The task's span (``observability.TaskTrace``: start or tracking to outcome), None when
    spans are off."""
    follow: TaskFollow | None = None
    """How the task's input arrives and its outcome is fetched, in the client's generation
    (its driver's follower, ``following.py``): made on first need."""

    def hold(self) -> None:
        """One more wait holds the task."""
        self.refs += 1

    @property
    def machine(self) -> TaskMachine:
        """The task's machine (the last accepted snapshot), the Tracker's."""
        return self.record.machine

    @property
    def tracking(self) -> bool:
        """Polled while held: the Tracker's record is ``TRACKING`` (no terminal snapshot yet,
        not ended, not released)."""
        return self.record.phase is Phase.TRACKING

    @property
    def released(self) -> bool:
        """Nobody held it before it ended: the Tracker dropped its record."""
        return self.record.phase is Phase.RELEASED

    @property
    def done(self) -> bool:
        """Its waits were told how it ended (``ended`` is set)."""
        return self.ended is not None

    def told(self) -> Outcome | MCPTasksError:
        """What its waits were told it ended with (only once ``done``)."""
        assert self.ended is not None
        return self.ended

    @property
    def error(self) -> MCPTasksError | None:
        """The error that ended it for its waits (None: not ended, or ended with an outcome)."""
        ended = self.ended
        return ended if isinstance(ended, MCPTasksError) else None

    def stop_inputs(self) -> None:
        if self.input_queue is not None:
            self.input_queue.clear()  # keys not started are moot: nobody waits for them
        for scope in self.input_scopes or ():
            scope.cancel()

    def done_wakeup(self) -> DoneWakeup:
        """What is set when the task ends, made on first use (one for every wait)."""
        if self.done_event is None:
            self.done_event = DoneWakeup()
        return self.done_event

    def add_listener(self, inbox: Inbox) -> None:
        current = self.listeners
        if current is None:
            self.listeners = inbox
        elif isinstance(current, Inbox):
            self.listeners = [current, inbox]
        else:
            current.append(inbox)

    def remove_listener(self, inbox: Inbox) -> None:
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

    def push(self, item: WatchItem) -> None:
        """News for this task's watchers."""
        for watcher in self.watchers or ():
            watcher.push(item)


def add_item(tracked: Tracked, name: str, item: object) -> None:
    """Add ``item`` to one of ``tracked``'s lazily made lists."""
    items = getattr(tracked, name)
    if items is None:
        setattr(tracked, name, [item])
    else:
        items.append(item)


def discard_item(tracked: Tracked, name: str, item: object) -> None:
    """Remove ``item`` (once) from one of ``tracked``'s lazily made lists, if it is there."""
    items = getattr(tracked, name)
    if items is not None and item in items:
        items.remove(item)


def monotonic_expiry(task: Task, wall_clock: Callable[[], dt.datetime]) -> float | None:
    """Monotonic time of ``createdAt + ttl`` (``PollPolicy.ttl_backstop``), None for none."""
    ends = expiry_instant(task)
    if ends is None:
        return None
    return anyio.current_time() + (ends - wall_clock()).total_seconds()


class Registry:
    """The waiters' side of the tasks being tracked (``live``, by id). A task that ended
    stays here only while a wait still holds it; the memory of ended tasks is the
    ``tracker``'s, read here."""

    def __init__(self, tracker: Tracker) -> None:
        self.live: dict[str, Tracked] = {}
        self._tracker = tracker

    def __len__(self) -> int:
        return len(self.live)

    def held(self, task_id: str) -> Tracked | None:
        """The record a new wait on ``task_id`` joins: the live one; or, for a task the
        Tracker remembers ended with an outcome, one told that outcome at once (answered from
        memory, never polled again); None: neither."""
        tracked = self.live.get(task_id)
        if tracked is not None:
            return tracked
        recalled = self._tracker.recall(task_id)
        if recalled is None:
            return None
        record, outcome = recalled
        return Tracked(task_id, record, ended=outcome)

    def add(self, tracked: Tracked) -> None:
        self.live[tracked.task_id] = tracked

    def finishing(self, tracked: Tracked) -> bool:
        """The Tracker's ``FetchOutcome`` (its record is ``FINISHING`` now): the terminal
        snapshot was the last one, so watchers are closed; False (nothing to fetch) when its
        waits were told its end already."""
        if tracked.done:
            return False
        tracked.close_watchers()
        return True

    def release(self, tracked: Tracked) -> bool:
        """One hold less; True when that stopped the tracking of a task that had not ended
        (the caller tells the Tracker, which drops its record, and stops what it started)."""
        tracked.refs -= 1
        if tracked.refs > 0:
            return False
        if tracked.tracking:
            self._drop(tracked)
            tracked.stop_inputs()
            return True
        if tracked.done:
            self._drop(tracked)
        return False  # finishing: live until its end is told (nobody hears it)

    def end(
        self,
        tracked: Tracked,
        outcome: Outcome | None = None,
        error: MCPTasksError | None = None,
    ) -> bool:
        """Tell every waiter of ``tracked`` it ended with ``outcome`` or ``error``; False
        (nothing done) when they were told already or the task was released."""
        if tracked.done or tracked.released:
            return False
        tracked.ended = outcome if error is None else error
        tracked.follow = None  # what it held is in the outcome, if anywhere
        tracked.stop_inputs()
        if tracked.done_event is not None:
            tracked.done_event.set()
        tracked.close_watchers()
        listeners = tracked.listeners
        if isinstance(listeners, Inbox):
            listeners.put(tracked)
        else:
            for listener in listeners or ():
                listener.put(tracked)
        if tracked.refs <= 0:
            self._drop(tracked)
        return True

    def snapshot(self, task_id: str) -> Task | None:
        """The latest accepted snapshot of a tracked task."""
        tracked = self.live.get(task_id)
        return tracked.machine.current if tracked is not None else None

    def _drop(self, tracked: Tracked) -> None:
        if self.live.get(tracked.task_id) is tracked:
            del self.live[tracked.task_id]
