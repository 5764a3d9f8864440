"""The tracked tasks: each one's record, its lifecycle as a table, and the tasks that ended.

Job: every rule about where a tracked task is in its life lives here. A task is tracked while
someone waits on it or watches it; its record moves through :data:`MOVES` and nowhere else:

- ``TRACKING``: polled (and pushed to) while someone holds it;
- ``FINISHING``: a terminal snapshot was accepted; it is never polled again, its outcome is
  being fetched;
- ``DONE``: its outcome (or the error that ended its tracking) is set and every waiter woke;
- ``RELEASED``: nobody held it any more before it ended; the record is dropped, and whatever
  of it is still in flight (a poll, an input handler) finds it released and does nothing.

A move the table does not allow raises :class:`IllegalMove` (a bug in the poller, never the
server's doing). A task whose end was seen terminal (or ended with an outcome) is remembered,
the newest ``capacity`` of them, so that a later wait on it is answered from memory and never
polls it again (issue 20: ``watch()`` then ``wait(created)``).

May import: ``parking``, ``models``, ``outcomes``, ``_exceptions``, ``_sansio.task_machine``,
``_sansio.progress``, anyio (cancel scopes). No I/O, no clock, no logging: the poller does
those around the calls here.
"""

from __future__ import annotations

import collections
import datetime as dt
import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import attrs

from .._exceptions import MCPTasksError
from .._sansio.progress import StatusMessage, TaskProgress
from .._sansio.task_machine import TaskMachine
from .._sansio.tracker import expiry_instant
from ..models import Task
from ..observability import TaskTrace
from ..outcomes import Outcome
from .parking import DoneWakeup, Inbox, WatchItem, WatchQueue

if TYPE_CHECKING:
    from .._drivers import TaskFollow

__all__ = [
    "MOVES",
    "IllegalMove",
    "Registry",
    "TrackState",
    "Tracked",
    "monotonic_expiry",
]


class TrackState(enum.Enum):
    """Where a tracked task is in its life (see the module docstring)."""

    TRACKING = "tracking"
    FINISHING = "finishing"
    DONE = "done"
    RELEASED = "released"


MOVES: dict[TrackState, frozenset[TrackState]] = {
    TrackState.TRACKING: frozenset({TrackState.FINISHING, TrackState.DONE, TrackState.RELEASED}),
    TrackState.FINISHING: frozenset({TrackState.DONE}),
    TrackState.DONE: frozenset(),
    TrackState.RELEASED: frozenset(),
}
"""state -> the states a record may move to. DONE and RELEASED are final."""


class IllegalMove(AssertionError):
    """A record was moved against :data:`MOVES` (a bug in the poller)."""


@attrs.define(eq=False)
class Tracked:
    """One tracked task, the waiters' side (slotted, and small: a poller may hold 100,000 of
    them): who waits and watches, and how they are told. Its protocol side (the machine, the
    next poll, expiry, busy streak, input keys) is the Tracker's record; ``machine`` is that
    record's, read here. What only some tasks need (an event to wait on, watchers, listeners,
    progress callbacks, input scopes) is made on first use; ``None`` until then."""

    task_id: str
    machine: TaskMachine
    refs: int = 0
    state: TrackState = TrackState.TRACKING
    outcome: Outcome | None = None
    error: MCPTasksError | None = None
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

    def move(self, to: TrackState) -> None:
        """Move to ``to``; IllegalMove unless :data:`MOVES` allows it."""
        if to not in MOVES[self.state]:
            raise IllegalMove(f"task {self.task_id!r}: {self.state.value} -> {to.value}")
        self.state = to

    @property
    def tracking(self) -> bool:
        """Polled while held: no terminal snapshot yet, not ended, not released."""
        return self.state is TrackState.TRACKING

    @property
    def done(self) -> bool:
        """Ended: ``outcome`` or ``error`` is set, and every waiter was woken."""
        return self.state is TrackState.DONE

    @property
    def ended(self) -> Outcome | MCPTasksError:
        if self.error is not None:
            return self.error
        assert self.outcome is not None
        return self.outcome

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
    """The records of the tasks being tracked (``live``, by id), and the newest ``capacity``
    tasks that ended once seen terminal (or with an outcome), to answer later waits."""

    def __init__(self, capacity: int) -> None:
        self.live: dict[str, Tracked] = {}
        self.capacity = capacity
        self._ended: collections.OrderedDict[str, Tracked] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self.live)

    def held(self, task_id: str) -> Tracked | None:
        """The record a new wait on ``task_id`` joins: the live one, or the one of a task that
        ended with an outcome (answered from memory, never polled again)."""
        tracked = self.live.get(task_id)
        if tracked is not None:
            return tracked
        tracked = self._ended.get(task_id)
        if tracked is None or tracked.outcome is None:
            return None
        self._ended.move_to_end(task_id)
        return tracked

    def terminal_snapshot(self, task_id: str) -> Task | None:
        """The terminal snapshot of a remembered task whose tracking ended with an error (its
        result could not be fetched or read): a new wait finishes from it, with no poll."""
        tracked = self._ended.get(task_id)
        if tracked is None or tracked.outcome is not None:
            return None
        return tracked.machine.current

    def add(self, tracked: Tracked) -> None:
        self.live[tracked.task_id] = tracked

    def finishing(self, tracked: Tracked) -> bool:
        """TRACKING -> FINISHING (a terminal snapshot); False when it was not tracking."""
        if not tracked.tracking:
            return False
        tracked.move(TrackState.FINISHING)
        tracked.close_watchers()  # the terminal snapshot was the last one
        return True

    def release(self, tracked: Tracked) -> bool:
        """One hold less; True when that stopped the tracking of a task that had not ended
        (TRACKING -> RELEASED: the caller stops polling it and whatever it started)."""
        tracked.refs -= 1
        if tracked.refs > 0:
            return False
        if tracked.tracking:
            tracked.move(TrackState.RELEASED)
            self._drop(tracked)
            tracked.stop_inputs()
            return True
        if tracked.done:
            self._drop(tracked)
        return False

    def end(
        self,
        tracked: Tracked,
        outcome: Outcome | None = None,
        error: MCPTasksError | None = None,
    ) -> bool:
        """-> DONE with ``outcome`` or ``error``, every waiter told; False (nothing done)
        when it had ended or been released already."""
        if tracked.state in (TrackState.DONE, TrackState.RELEASED):
            return False
        tracked.outcome, tracked.error = outcome, error
        tracked.move(TrackState.DONE)
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
        if outcome is not None or tracked.machine.is_terminal:
            self._remember(tracked)
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

    def _remember(self, tracked: Tracked) -> None:
        self._ended[tracked.task_id] = tracked
        self._ended.move_to_end(tracked.task_id)
        while len(self._ended) > self.capacity:
            self._ended.popitem(last=False)
