"""Tasks, as both protocol generations show them (T, SCH ``Task``; 2026: E ``DetailedTask``).

One :class:`Task` serves both generations: the 2026-07-28 wire names ``ttlMs`` and
``pollIntervalMs`` are read into ``ttl`` and ``poll_interval`` (both milliseconds), and the
fields only 2026-07-28 has (``result``, ``error``, ``input_requests``: what a ``tasks/get``
inlines) stay ``None`` under 2025-11-25, whose codec keeps such keys in ``extra``.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from typing import Any

import attrs

from ._base import MAX_DURATION_MS, UNSET, JSONObject, Unset, extra_field, meta_field, ranged
from .jsonrpc import ErrorObject

__all__ = [
    "MODEL_IMMEDIATE_RESPONSE_META",
    "RELATED_TASK_META",
    "CreateTaskResult",
    "InputRequest",
    "ListTasksResult",
    "Task",
    "TaskMetadata",
    "TaskStatus",
]

RELATED_TASK_META = "io.modelcontextprotocol/related-task"
"""``_meta`` key tying a message to a task: ``{"taskId": ...}`` (T:470)."""

MODEL_IMMEDIATE_RESPONSE_META = "io.modelcontextprotocol/model-immediate-response"
"""``_meta`` key of a ``CreateTaskResult``: a non-binding string for the model (T:175)."""


class TaskStatus(enum.Enum):
    """The five statuses of 2025-11-25; the last three are terminal (T:403-407)."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    # Members are singletons and compare by identity: hashing them by identity too keeps every
    # set and dict lookup of a status in C (Enum's own ``__hash__`` is a Python call, several
    # a poll: the transition table, ``is_terminal``).
    __hash__ = object.__hash__

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


@attrs.frozen
class TaskMetadata:
    """``params.task`` of a task-augmented request: the requested ttl in ms (C-18).

    A server asking the client to run its request as a task sends one too, so ``ttl`` is bounded
    like :attr:`Task.ttl`: a handler may well turn it into a ``timedelta``.
    """

    ttl: int | None = ranged(0, MAX_DURATION_MS, default=None)
    extra: JSONObject = extra_field()


@attrs.frozen
class InputRequest:
    """One entry of a 2026-07-28 task's ``inputRequests`` (or an MRTR ``InputRequiredResult``):
    a server->client request written as ``{method, params}``, without ``jsonrpc`` or ``id``
    (E C50). ``params`` is kept as received; the InputRouter decodes it by ``method``."""

    method: str
    params: JSONObject | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class Task:
    """A task as ``tasks/get``, ``tasks/cancel``, ``tasks/list`` and status notifications show it.

    ``ttl`` is milliseconds from creation, ``None`` for unlimited, or ``UNSET`` when the server
    left the required key out (A-06: read leniently, flagged by the conformance probe).
    ``ttl`` and ``poll_interval`` (milliseconds) lie in ``0 <= x <= MAX_DURATION_MS``: the
    decoder refuses anything else, so ``timedelta(milliseconds=x)`` and ``x / 1000.0`` never
    overflow.
    """

    task_id: str
    status: TaskStatus
    created_at: dt.datetime
    last_updated_at: dt.datetime
    ttl: float | Unset | None = ranged(
        0, MAX_DURATION_MS, default=UNSET, metadata={"nullable": True}
    )
    status_message: str | None = None
    poll_interval: float | None = ranged(0, MAX_DURATION_MS, default=None)
    result: JSONObject | None = None
    """2026-07-28: a ``completed`` task's result, inlined (what the call returned), as received."""
    error: ErrorObject | None = None
    """2026-07-28: a ``failed`` task's JSON-RPC error, inlined."""
    input_requests: Mapping[str, InputRequest] | None = None
    """2026-07-28: an ``input_required`` task's outstanding requests by key, every one still
    open (E C28, C30)."""
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class CreateTaskResult:
    """The answer to an accepted task-augmented request: ``{"task": Task}`` in 2025-11-25
    (T:463, V-04), the flat ``{"resultType": "task", ...Task}`` in 2026-07-28 (E 3.3)."""

    task: Task
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()

    @property
    def model_immediate_response(self) -> str | None:
        """The server's non-binding message for the model, if it sent one (T:175)."""
        value: Any = (self.meta or {}).get(MODEL_IMMEDIATE_RESPONSE_META)
        return value if isinstance(value, str) else None


@attrs.frozen
class ListTasksResult:
    """One page of ``tasks/list``."""

    tasks: tuple[Task, ...]
    next_cursor: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
