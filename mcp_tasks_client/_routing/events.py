"""What input routing says to its handlers and listeners: the values of ``inputs``.

Job: the values an input request is described by, and nothing that acts: what a handler is
told (:class:`InputContext`), the handler types, what a listener hears (:class:`InputEvent`,
:class:`InputEventKind`, and :data:`ERROR_EVENTS`, the one map from an RPCError to the event
that reports it), the policy for a handler that raises, the ``UNTAGGED`` key, and what a
Poller lends a handler of the tasks it tracks (:class:`TrackedTasks`). ``mcp_tasks_client.
inputs`` re-exports each public name: users import from there (or the package).

May import: ``_client`` (types only), ``receiver``, ``_exceptions``, ``models``.

Theory of operation: plain values and two lookups (:func:`pick`: the handler of a task, else
the default; :func:`event_for`: the event of an error), so the router's parts share one
vocabulary and one table.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol, TypeVar

import attrs

from .._exceptions import MCPTasksError, RPCError
from ..models import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ListRootsResult,
    RequestId,
    Task,
)
from ..receiver import ReceivedTask

__all__ = [
    "ELICIT",
    "ERROR_EVENTS",
    "ROOTS",
    "SAMPLE",
    "UNTAGGED",
    "ElicitationHandler",
    "HandlerErrorPolicy",
    "InputContext",
    "InputEvent",
    "InputEventKind",
    "Key",
    "RootsHandler",
    "SamplingHandler",
    "Subscribed",
    "TrackedTasks",
    "Untagged",
    "event_for",
    "no_snapshot",
    "pick",
    "unhandled",
]

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"


@attrs.frozen
class InputContext:
    """What a handler knows about the request it answers."""

    task_id: str | None
    """The related task (None for a request with no related-task meta, sent to a default)."""
    request_id: RequestId
    """The JSON-RPC id (2025-11-25), or the ``inputRequests`` key (2026-07-28)."""
    method: str
    _snapshot: Callable[[str], Task | None] = attrs.field(alias="snapshot", repr=False)
    candidates: tuple[Task, ...] = attrs.field(default=(), kw_only=True)
    """For a request naming no task: the tasks it may belong to (the Poller's, ``working``
    or ``input_required``), for the handler to decide; empty otherwise."""
    receiving: ReceivedTask | None = attrs.field(default=None, kw_only=True)
    """The task this handler runs as, when the server asked for the request as a task and a
    TaskReceiver runs it (2025-11-25); None otherwise."""

    @property
    def key(self) -> str:
        """The request's key: its ``inputRequests`` key (2026-07-28) or JSON-RPC id."""
        return str(self.request_id)

    def latest(self) -> Task | None:
        """The task's latest snapshot seen by the Poller (no request is sent)."""
        return None if self.task_id is None else self._snapshot(self.task_id)


ElicitationHandler = Callable[[InputContext, ElicitRequestParams], Awaitable[ElicitResult]]
SamplingHandler = Callable[
    [InputContext, CreateMessageRequestParams], Awaitable[CreateMessageResult]
]
RootsHandler = Callable[[InputContext], Awaitable[ListRootsResult]]
H = TypeVar("H")


class HandlerErrorPolicy(enum.Enum):
    """What happens when a handler raises something other than RPCError."""

    ANSWER_ERROR = "answer_error"
    """Answer the server with -32603 naming the failure; the task goes on (or fails) server-side."""
    ANSWER_ERROR_AND_CANCEL = "answer_error_and_cancel"
    """The same, after sending ``tasks/cancel`` for the task."""


class InputEventKind(enum.Enum):
    ARRIVED = "arrived"
    ANSWERED = "answered"
    UNHANDLED = "unhandled"
    """No handler for this task and no default: answered with -32601."""
    REJECTED = "rejected"
    """The request itself was bad (undeclared mode, malformed params): answered with -32602."""
    HANDLER_FAILED = "handler_failed"
    DUPLICATE = "duplicate"
    """Delivered again after it was already taken: not handled, not answered twice."""
    QUEUED = "queued"
    """No handler here for this task: queued in the router's shared journal for a worker that
    registers one (:meth:`InputRouter.answer_queued`); not answered here."""
    ACCEPTED_AS_TASK = "accepted_as_task"
    """Answered with a CreateTaskResult (the client's task receiver runs the handler as a task
    of this client, 2025-11-25); ANSWERED, UNHANDLED, REJECTED or HANDLER_FAILED follows when
    the handler is done."""


@attrs.frozen
class InputEvent:
    """Something that happened to an input request of a task; the Poller relays these."""

    kind: InputEventKind
    task_id: str | None
    request_id: RequestId
    method: str
    error: MCPTasksError | None = None


ERROR_EVENTS: Mapping[int, InputEventKind] = {
    -32601: InputEventKind.UNHANDLED,
    -32602: InputEventKind.REJECTED,
}
"""The one map from an input request's RPCError (a handler's, or the router's own refusal) to
the event that reports it: no handler (-32601 Method not found), a bad request (-32602 Invalid
params); any other code is HANDLER_FAILED (:func:`event_for`)."""


def event_for(error: RPCError) -> InputEventKind:
    """The InputEvent kind that reports ``error`` (:data:`ERROR_EVENTS`)."""
    return ERROR_EVENTS.get(error.code, InputEventKind.HANDLER_FAILED)


class Untagged(enum.Enum):
    """The key of handlers for requests that carry no related-task meta (``UNTAGGED``)."""

    UNTAGGED = "untagged"


UNTAGGED = Untagged.UNTAGGED
"""``router.on_elicitation(UNTAGGED, handler)``: for elicitations that name no task (a
server that forgets the related-task meta); the handler sees the candidate tasks in
``ctx.candidates`` and decides, the library never guesses."""

Key = str | None | Untagged


def pick(table: dict[Key, H], task_id: str | None, method: str) -> H | None:
    if task_id is None:
        return table.get(UNTAGGED) or table.get(None)
    return table.get(task_id) or table.get(None)


def unhandled(task_id: str | None, method: str) -> RPCError:
    which = f"task {task_id}" if task_id else "requests without a related task"
    return RPCError(-32601, f"no handler registered for {method} of {which}")


class TrackedTasks(Protocol):
    """What a handler's :class:`InputContext` reads of the tasks a Poller tracks: a Poller
    hands its own to the router with :meth:`InputRouter.subscribe` and
    :meth:`InputRouter.answer_input` (never a request: both read what the Poller holds)."""

    def snapshot(self, task_id: str) -> Task | None:
        """The latest snapshot of a tracked task, or None."""

    def candidates(self) -> Sequence[Task]:
        """The tracked tasks a request naming no task may belong to."""


def no_snapshot(task_id: str) -> Task | None:
    return None


@attrs.frozen
class Subscribed:
    """The tasks of every subscribed Poller, as one :class:`TrackedTasks`: a task's snapshot
    from the Poller that tracks it (the newest subscriber first, should two track it), the
    candidates of all of them."""

    pollers: tuple[TrackedTasks, ...]

    def snapshot(self, task_id: str) -> Task | None:
        for tasks in reversed(self.pollers):
            found = tasks.snapshot(task_id)
            if found is not None:
                return found
        return None

    def candidates(self) -> list[Task]:
        return [task for tasks in self.pollers for task in tasks.candidates()]
