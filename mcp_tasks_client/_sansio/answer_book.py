"""Input bookkeeping, sans-I/O: which server->client requests each task has outstanding.

A server asks for input mid-task (an elicitation, a sampling request) with a JSON-RPC request
tagged with ``_meta["io.modelcontextprotocol/related-task"]`` (T:470, V-21). The book keys
every such request by ``(task_id, request_id)`` and moves it through two states:

    (absent) --arrived--> PENDING --answered--> ANSWERED

The rules kept here:

- a request is routed to exactly one task: the one its related-task meta names, or ``None``
  (no task) when it carries none;
- a request that arrives again while PENDING or after ANSWERED is a duplicate (a re-delivery on
  a re-issued ``tasks/result``): it is not handled again and never answered twice;
- answering is recorded once; answering an unknown or already answered key is a bug in the
  caller of the book (ValueError);
- the book never forgets a key of a task it holds (:meth:`InputBook.hold`: a task a Poller
  tracks): a re-delivery of it is refused however many keys came since, so a key is never
  answered twice (SECURITY.md). Such a task's keys are bounded by ``per_task``
  (``Limits.max_inputs_per_task``): :meth:`InputBook.take` refuses the whole batch that would
  go past it with :class:`LimitExceeded`, and the caller fails the task (a bound fails, it
  never forgets). Each key's size is bounded before it gets here (``Limits.max_request_id_chars``),
  so memory is linear in keys and small;
- answered requests of tasks not held (a question naming no task, or a task nobody tracks)
  are remembered up to ``capacity`` (``Limits.max_answered_inputs``), the oldest forgotten
  first (a re-delivery of a forgotten one would be handled again: the capacity is large);
  pending ones are bounded by how many the client handles at once
  (``Limits.max_server_requests``); :meth:`InputBook.release` hands a held task's records to
  that bounded memory when its tracking ends, and :meth:`InputBook.forget` drops them all.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .._exceptions import LimitExceeded
from ..models import RELATED_TASK_META, RequestId

__all__ = ["InputBook", "InputKey", "InputState", "related_task_id"]


def related_task_id(params: Mapping[str, Any] | None) -> str | None:
    """The task a request belongs to, from ``params._meta`` (T:470); None when untagged."""
    if not params:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    related = meta.get(RELATED_TASK_META)
    if not isinstance(related, Mapping):
        return None
    task_id = related.get("taskId")
    return task_id if isinstance(task_id, str) else None


class InputState(enum.Enum):
    PENDING = "pending"
    ANSWERED = "answered"


@attrs.frozen
class InputKey:
    task_id: str | None
    request_id: RequestId


DEFAULT_CAPACITY = 10_000
"""``Limits.max_answered_inputs``'s default (this core does not import the limits)."""
DEFAULT_PER_TASK = 10_000
"""``Limits.max_inputs_per_task``'s default."""


class InputBook:
    """Outstanding and answered input requests, by task."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, per_task: int = DEFAULT_PER_TASK) -> None:
        self.capacity = capacity
        self.per_task = per_task
        # task -> request id -> (state, method); one small dict per task with records.
        self._tasks: dict[str | None, dict[RequestId, tuple[InputState, str]]] = {}
        self._held: set[str] = set()
        # Answered records of tasks not held, oldest first (a dict keeps insertion order).
        self._loose: dict[InputKey, None] = {}

    def __len__(self) -> int:
        """Records held (pending and answered)."""
        return sum(len(records) for records in self._tasks.values())

    # -- tasks held while tracked ------------------------------------------------------------

    def hold(self, task_id: str) -> None:
        """Never forget a record of ``task_id`` until :meth:`release` or :meth:`forget`."""
        if task_id in self._held:
            return
        self._held.add(task_id)
        for request_id in self._tasks.get(task_id, ()):
            self._loose.pop(InputKey(task_id, request_id), None)

    def held(self, task_id: str | None) -> bool:
        return task_id in self._held

    def release(self, task_id: str) -> None:
        """``task_id`` is no longer tracked: its answered records join the bounded memory of
        answered requests (the oldest forgotten first)."""
        if task_id not in self._held:
            return
        self._held.discard(task_id)
        for request_id, (state, _) in self._tasks.get(task_id, {}).items():
            if state is InputState.ANSWERED:
                self._loose[InputKey(task_id, request_id)] = None
        self._trim()

    def take(self, task_id: str, requests: Mapping[RequestId, str]) -> list[RequestId]:
        """Hold ``task_id`` and record each of ``requests`` (id -> method) not seen before;
        the ids newly taken, in order. LimitExceeded (nothing taken) when the task's records
        would go past ``per_task``."""
        self.hold(task_id)
        records = self._tasks.get(task_id)
        seen = records if records is not None else {}
        new = [request_id for request_id in requests if request_id not in seen]
        if not new:
            return []
        if len(seen) + len(new) > self.per_task:
            raise LimitExceeded(
                "max_inputs_per_task",
                self.per_task,
                f"the {len(seen) + len(new)} input requests of task {task_id[:100]!r}",
            )
        if records is None:
            records = self._tasks[task_id] = {}
        for request_id in new:
            records[request_id] = (InputState.PENDING, requests[request_id])
        return new

    # -- one request at a time -----------------------------------------------------------------

    def arrived(self, task_id: str | None, request_id: RequestId, method: str) -> bool:
        """Record an incoming request; False when it is a duplicate (do not handle it).
        LimitExceeded (nothing recorded) past ``per_task`` records of a held task."""
        records = self._tasks.get(task_id)
        if records is not None and request_id in records:
            return False
        if task_id in self._held and records is not None and len(records) >= self.per_task:
            where = f"the input requests of task {str(task_id)[:100]!r}"
            raise LimitExceeded("max_inputs_per_task", self.per_task, where)
        if records is None:
            records = self._tasks[task_id] = {}
        records[request_id] = (InputState.PENDING, method)
        return True

    def answered(self, task_id: str | None, request_id: RequestId) -> None:
        records = self._tasks.get(task_id)
        record = None if records is None else records.get(request_id)
        if record is None or record[0] is not InputState.PENDING:
            raise ValueError(f"no pending input request {InputKey(task_id, request_id)}")
        assert records is not None
        records[request_id] = (InputState.ANSWERED, record[1])
        if task_id not in self._held:
            self._loose[InputKey(task_id, request_id)] = None
            self._trim()

    def _trim(self) -> None:
        while len(self._loose) > self.capacity:
            oldest = next(iter(self._loose))
            del self._loose[oldest]
            records = self._tasks.get(oldest.task_id)
            if records is not None:
                records.pop(oldest.request_id, None)
                if not records:
                    del self._tasks[oldest.task_id]

    def state(self, task_id: str | None, request_id: RequestId) -> InputState | None:
        record = self._tasks.get(task_id, {}).get(request_id)
        return None if record is None else record[0]

    def pending(self, task_id: str | None) -> list[tuple[RequestId, str]]:
        """The requests of ``task_id`` still waiting for their answer, as (id, method)."""
        return [
            (request_id, method)
            for request_id, (state, method) in self._tasks.get(task_id, {}).items()
            if state is InputState.PENDING
        ]

    def forget(self, task_id: str) -> None:
        """Drop every record of ``task_id`` (its task ended: nothing of it can come again)."""
        self._held.discard(task_id)
        for request_id in self._tasks.pop(task_id, {}):
            self._loose.pop(InputKey(task_id, request_id), None)

    def answered_count(self, task_id: str | None) -> int:
        return sum(
            1 for state, _ in self._tasks.get(task_id, {}).values() if state is InputState.ANSWERED
        )
