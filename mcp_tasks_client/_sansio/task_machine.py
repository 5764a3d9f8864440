"""The 2025-11-25 task status machine, as a table (T:403-407, C-35, V-09, A-08).

Every rule about which status may follow which lives here. A task starts ``working``; the
non-terminal statuses (``working``, ``input_required``) may follow each other freely and may
end in any terminal status; a terminal status (``completed``, ``failed``, ``cancelled``) never
changes. Polling can miss statuses, so the only violations a client can observe are a change
after a terminal status and a status the protocol does not have (A-08); the latter is caught
by the codec (an unknown enum value) and reported through the same policy.

Other things a snapshot must not do (V-26, implied, so reported as soft): change its
``createdAt`` or move ``lastUpdatedAt`` backwards.
"""

from __future__ import annotations

import enum

import attrs

from ..models import Task, TaskStatus

__all__ = ["TRANSITIONS", "Observation", "TaskMachine", "Violation", "ViolationPolicy"]

_ANY_STATUS = frozenset(TaskStatus)

TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.WORKING: _ANY_STATUS,
    TaskStatus.INPUT_REQUIRED: _ANY_STATUS,
    TaskStatus.COMPLETED: frozenset({TaskStatus.COMPLETED}),
    TaskStatus.FAILED: frozenset({TaskStatus.FAILED}),
    TaskStatus.CANCELLED: frozenset({TaskStatus.CANCELLED}),
}
"""status -> the statuses a later snapshot may show."""


class ViolationPolicy(enum.Enum):
    """What the engine does when a server breaks the status machine; the caller chooses."""

    RAISE = "raise"
    """The wait fails with a typed error (IllegalTransition, or the DecodeError)."""
    WARN = "warn"
    """The offending snapshot is ignored and recorded as a warning; polling goes on."""


@attrs.frozen
class Violation:
    """A rule a snapshot (or a progress notification) broke; ``soft`` ones (V-26, V-24) are
    only ever warnings."""

    task_id: str
    """The task concerned; empty for progress that names no task this client knows."""
    rule: str
    detail: str
    soft: bool = False


@attrs.frozen
class Observation:
    """The result of showing the machine one snapshot."""

    accepted: bool
    """False when the snapshot broke a hard rule and the previous one stands."""
    violations: tuple[Violation, ...] = ()


class TaskMachine:
    """The last accepted snapshot of one task, and the rules the next one must keep."""

    __slots__ = ("_accepted", "_terminal_at", "current")

    def __init__(self, first: Task) -> None:
        self.current = first
        self._accepted = 0
        self._terminal_at: int | None = 0 if first.status.is_terminal else None

    def mark(self) -> int:
        """A mark to take when a poll is sent; see :meth:`is_stale`."""
        return self._accepted

    def is_stale(self, mark: int, answer: Task | None = None) -> bool:
        """The stale rule (A-08): the answer to a poll sent at ``mark`` is stale when a
        terminal snapshot was accepted after it went out (a status notification overtook
        it). A stale answer is dropped, not checked: it is no change after terminal.

        Overtaken, not terminal: an ``answer`` older (``lastUpdatedAt``) than a snapshot
        accepted after the poll went out (a push delivered on another channel while the poll
        was in flight) is stale too, not the server's clock going backwards (V-26). Only an
        answer with nothing accepted between its poll and its arrival is checked for that."""
        if self._terminal_at is not None and self._terminal_at > mark:
            return True
        return (
            answer is not None
            and self._accepted > mark
            and answer.last_updated_at < self.current.last_updated_at
        )

    @property
    def status(self) -> TaskStatus:
        return self.current.status

    @property
    def is_terminal(self) -> bool:
        return self.current.status.is_terminal

    def observe(self, snapshot: Task) -> Observation:
        previous = self.current
        if snapshot.task_id != previous.task_id:
            raise ValueError(f"snapshot of {snapshot.task_id!r} shown to {previous.task_id!r}")
        if snapshot.status not in TRANSITIONS[previous.status]:
            violation = Violation(
                previous.task_id,
                "T:404-407",
                f"status went from terminal {previous.status.value!r} to {snapshot.status.value!r}",
            )
            return Observation(False, (violation,))
        soft: list[Violation] = []
        if snapshot.created_at != previous.created_at:
            soft.append(Violation(previous.task_id, "V-26", "createdAt changed", soft=True))
        if snapshot.last_updated_at < previous.last_updated_at:
            soft.append(
                Violation(previous.task_id, "V-26", "lastUpdatedAt went backwards", soft=True)
            )
        self.current = snapshot
        self._accepted += 1
        if snapshot.status.is_terminal and self._terminal_at is None:
            self._terminal_at = self._accepted
        return Observation(True, tuple(soft))
