"""The client as a task receiver (2025-11-25, T:392-497): the bookkeeping, sans-I/O.

A server may ask this client to run its ``elicitation/create`` or ``sampling/createMessage`` as
a task. The receiver rules (C-31..C-45) the book keeps, with no clock of its own (``now`` is
passed in: a monotonic float for expiry, a wall-clock instant for the timestamps):

- ids are unguessable (``secrets.token_urlsafe``, C-34) and unique;
- a task starts ``working``; ``working`` and ``input_required`` may follow each other and end
  in any terminal status; a terminal status never changes (C-35);
- ``ttl`` is the requested one, else the caller's default, capped by the caller's maximum; a
  task past ``createdAt + ttl`` is dropped, and is then unknown (C-37, T:459);
- ``tasks/list`` pages in creation order with an opaque cursor; an invalid cursor is -32602
  (C-40, C-42); cancelling a terminal or unknown task is -32602 (C-41);
- every task belongs to the connection (``owner``) that created it: another one's id is
  unknown to it (C-45);
- at most ``capacity`` tasks are held: beyond it, a new one is refused.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Hashable
from typing import Protocol

import attrs

from ..models import ErrorObject, JSONObject, Task, TaskStatus
from .task_machine import TRANSITIONS

__all__ = ["NotCancellable", "ReceiverBook", "ReceiverFull", "ReceiverStore", "UnknownTask"]


class ReceiverStore(Protocol):
    """Where a TaskReceiver keeps its tasks; :class:`ReceiverBook` (in memory) is the default.

    A store of the caller's (shared by processes, persisted) keeps the same rules: the
    receiver's behaviour is only as correct as its store. ``now`` is monotonic seconds,
    ``wall`` the timestamp to write.
    """

    def __len__(self) -> int: ...

    def create(
        self,
        owner: Hashable,
        method: str,
        requested_ttl_ms: int | None,
        *,
        now: float,
        wall: dt.datetime,
    ) -> Task: ...

    def get(self, owner: Hashable, task_id: str, *, now: float) -> Task: ...

    def move(
        self, task_id: str, status: TaskStatus, message: str | None, wall: dt.datetime
    ) -> Task | None: ...

    def finish(
        self,
        task_id: str,
        *,
        wall: dt.datetime,
        result: JSONObject | None = None,
        error: ErrorObject | None = None,
        message: str | None = None,
    ) -> Task | None: ...

    def cancel(self, owner: Hashable, task_id: str, *, now: float, wall: dt.datetime) -> Task: ...

    def outcome(
        self, owner: Hashable, task_id: str, *, now: float
    ) -> tuple[Task, JSONObject | None, ErrorObject | None] | None: ...

    def page(
        self, owner: Hashable, cursor: str | None, size: int, *, now: float
    ) -> tuple[list[Task], str | None]: ...

    def next_expiry(self) -> float | None: ...

    def sweep(self, now: float) -> list[str]: ...

    def reap(self) -> list[str]: ...


class UnknownTask(KeyError):
    """No such task for this owner (never created, expired, or another connection's)."""


class NotCancellable(ValueError):
    """The task is terminal already."""


class ReceiverFull(RuntimeError):
    """``capacity`` tasks are held already."""


@attrs.define
class _ReceivedRecord:
    """One task this client runs for the server: its latest state, whose it is, its outcome."""

    task: Task
    owner: Hashable
    method: str
    seq: int
    expires: float | None
    result: JSONObject | None = None
    error: ErrorObject | None = None


def _token() -> str:
    return secrets.token_urlsafe(16)


class ReceiverBook:
    """The tasks this client runs for its servers."""

    def __init__(
        self,
        *,
        default_ttl_ms: int | None,
        max_ttl_ms: int | None,
        poll_interval_ms: int | None,
        capacity: int,
        new_id: Callable[[], str] = _token,
    ) -> None:
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.capacity = capacity
        self._new_id = new_id
        self._entries: dict[str, _ReceivedRecord] = {}
        self._seq = 0
        self._unreaped: list[str] = []

    def __len__(self) -> int:
        return len(self._entries)

    # -- lifecycle of one task ---------------------------------------------------------------

    def ttl_for(self, requested: int | None) -> int | None:
        """The ttl a task gets: the requested one, else the default; never above the max."""
        ttl = requested if requested is not None else self.default_ttl_ms
        if self.max_ttl_ms is not None:
            ttl = self.max_ttl_ms if ttl is None else min(ttl, self.max_ttl_ms)
        return ttl

    def create(
        self,
        owner: Hashable,
        method: str,
        requested_ttl_ms: int | None,
        *,
        now: float,
        wall: dt.datetime,
    ) -> Task:
        self.sweep(now)
        if len(self._entries) >= self.capacity:
            raise ReceiverFull(f"{self.capacity} tasks are held already")
        task_id = self._new_id()
        while task_id in self._entries:  # pragma: no cover - 128 random bits
            task_id = self._new_id()
        ttl = self.ttl_for(requested_ttl_ms)
        task = Task(
            task_id=task_id,
            status=TaskStatus.WORKING,
            created_at=wall,
            last_updated_at=wall,
            ttl=ttl,
            poll_interval=self.poll_interval_ms,
        )
        self._seq += 1
        expires = None if ttl is None else now + ttl / 1000.0
        self._entries[task_id] = _ReceivedRecord(task, owner, method, self._seq, expires)
        return task

    def get(self, owner: Hashable, task_id: str, *, now: float) -> Task:
        return self._entry(owner, task_id, now).task

    def method_of(self, owner: Hashable, task_id: str, *, now: float) -> str:
        return self._entry(owner, task_id, now).method

    def move(
        self, task_id: str, status: TaskStatus, message: str | None, wall: dt.datetime
    ) -> Task | None:
        """``task_id`` to a non-terminal ``status``; None when it is gone or terminal."""
        assert not status.is_terminal, "end a task with finish() or cancel()"
        return self._change(task_id, status, message, wall)

    def finish(
        self,
        task_id: str,
        *,
        wall: dt.datetime,
        result: JSONObject | None = None,
        error: ErrorObject | None = None,
        message: str | None = None,
    ) -> Task | None:
        """End ``task_id`` with its body's ``result`` (completed) or ``error`` (failed); None
        when it is gone or already terminal (cancelled meanwhile: the outcome is dropped)."""
        status = TaskStatus.FAILED if error is not None else TaskStatus.COMPLETED
        task = self._change(task_id, status, message, wall)
        if task is not None:
            entry = self._entries[task_id]
            entry.result, entry.error = result, error
        return task

    def cancel(self, owner: Hashable, task_id: str, *, now: float, wall: dt.datetime) -> Task:
        entry = self._entry(owner, task_id, now)
        if entry.task.status.is_terminal:
            raise NotCancellable(f"task {task_id} is {entry.task.status.value}")
        task = self._change(task_id, TaskStatus.CANCELLED, "cancelled by the requestor", wall)
        assert task is not None
        return task

    def outcome(
        self, owner: Hashable, task_id: str, *, now: float
    ) -> tuple[Task, JSONObject | None, ErrorObject | None] | None:
        """The terminal task with its result or error; None while it is not terminal."""
        entry = self._entry(owner, task_id, now)
        if not entry.task.status.is_terminal:
            return None
        return entry.task, entry.result, entry.error

    # -- listing and expiry -----------------------------------------------------------------

    def page(
        self, owner: Hashable, cursor: str | None, size: int, *, now: float
    ) -> tuple[list[Task], str | None]:
        """One page of ``owner``'s tasks in creation order; ValueError for a bad cursor."""
        self.sweep(now)
        after = 0
        if cursor is not None:
            head, _, number = cursor.partition(":")
            if head != "after" or not number.isdigit() or len(number) > 20:
                raise ValueError(f"invalid cursor {cursor[:60]!r}")
            after = int(number)
        mine = [e for e in self._entries.values() if e.owner == owner and e.seq > after]
        chosen = mine[:size]
        more = len(mine) > size
        next_cursor = f"after:{chosen[-1].seq}" if more and chosen else None
        return [e.task for e in chosen], next_cursor

    def next_expiry(self) -> float | None:
        times = [e.expires for e in self._entries.values() if e.expires is not None]
        return min(times) if times else None

    def sweep(self, now: float) -> list[str]:
        """Drop the tasks past their ttl; their ids (also kept for :meth:`reap`: every
        operation sweeps, and whoever runs the tasks' bodies must learn of each drop)."""
        gone = [
            task_id
            for task_id, entry in self._entries.items()
            if entry.expires is not None and entry.expires <= now
        ]
        for task_id in gone:
            del self._entries[task_id]
        self._unreaped += gone
        return gone

    def reap(self) -> list[str]:
        """The ids dropped by any sweep since the last reap."""
        gone, self._unreaped = self._unreaped, []
        return gone

    # -- internals ---------------------------------------------------------------------------

    def _entry(self, owner: Hashable, task_id: str, now: float) -> _ReceivedRecord:
        self.sweep(now)
        entry = self._entries.get(task_id)
        if entry is None or entry.owner != owner:
            raise UnknownTask(task_id)
        return entry

    def _change(
        self, task_id: str, status: TaskStatus, message: str | None, wall: dt.datetime
    ) -> Task | None:
        entry = self._entries.get(task_id)
        if entry is None or status not in TRANSITIONS[entry.task.status]:
            return None
        if entry.task.status.is_terminal:  # a terminal status never changes, not even to itself
            return None
        updated = max(wall, entry.task.last_updated_at)  # never backwards (V-26)
        entry.task = attrs.evolve(
            entry.task, status=status, status_message=message, last_updated_at=updated
        )
        return entry.task
