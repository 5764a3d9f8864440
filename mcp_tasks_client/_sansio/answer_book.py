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
- the book is bounded: pending requests by how many the client handles at once
  (``Limits.max_server_requests``), answered ones by ``capacity`` (the oldest answered record
  is forgotten first; a re-delivery of a forgotten one would be handled again, which is why
  the capacity is large), and a task's records go with :meth:`InputBook.forget`; each id's
  size is bounded before it gets here (the client refuses a string id longer than
  ``Limits.max_request_id_chars``).
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Mapping
from typing import Any

import attrs

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


class InputBook:
    """Outstanding and answered input requests, by task."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._state: dict[InputKey, InputState] = {}
        self._methods: dict[InputKey, str] = {}
        self._answered_order: collections.deque[InputKey] = collections.deque()

    def __len__(self) -> int:
        """Records held (pending and answered)."""
        return len(self._state)

    def arrived(self, task_id: str | None, request_id: RequestId, method: str) -> bool:
        """Record an incoming request; False when it is a duplicate (do not handle it)."""
        key = InputKey(task_id, request_id)
        if key in self._state:
            return False
        self._state[key] = InputState.PENDING
        self._methods[key] = method
        return True

    def answered(self, task_id: str | None, request_id: RequestId) -> None:
        key = InputKey(task_id, request_id)
        if self._state.get(key) is not InputState.PENDING:
            raise ValueError(f"no pending input request {key}")
        self._state[key] = InputState.ANSWERED
        self._answered_order.append(key)
        while len(self._answered_order) > self.capacity:
            oldest = self._answered_order.popleft()
            if self._state.get(oldest) is InputState.ANSWERED:
                del self._state[oldest]
                del self._methods[oldest]

    def state(self, task_id: str | None, request_id: RequestId) -> InputState | None:
        return self._state.get(InputKey(task_id, request_id))

    def pending(self, task_id: str | None) -> list[tuple[RequestId, str]]:
        """The requests of ``task_id`` still waiting for their answer, as (id, method)."""
        return [
            (key.request_id, self._methods[key])
            for key, state in self._state.items()
            if key.task_id == task_id and state is InputState.PENDING
        ]

    def forget(self, task_id: str) -> None:
        """Drop every record of ``task_id`` (its task ended: nothing of it can come again)."""
        for key in [k for k in self._state if k.task_id == task_id]:
            del self._state[key]
            del self._methods[key]
        self._answered_order = collections.deque(
            k for k in self._answered_order if k.task_id != task_id
        )

    def answered_count(self, task_id: str | None) -> int:
        return sum(
            1
            for key, state in self._state.items()
            if key.task_id == task_id and state is InputState.ANSWERED
        )
