"""What the caller asks for, as values built before anything is sent.

A plain call and a task call are different types, so a type checker catches passing one where
the other belongs: ``Client.call_tool`` takes a :class:`ToolCall`, ``Client.start`` takes the
:class:`TaskToolCall` that only ``ToolCall.as_task`` makes. Nothing ever augments a call the
caller did not build with ``as_task`` (T:113-117).

Related task ids (a draft, agents-wg PR 28, 2026-09-16): ``ToolCall.related_to(...)`` names
earlier tasks the call builds on (cancel-and-restart, follow-up work), sent as ``params._meta
["io.modelcontextprotocol/relatedTaskIds"]`` in both generations; a server MAY ignore it. The
draft says a client SHOULD send only ids the same server returned, and SHOULD NOT let a
language model fill the field in: so the step takes task handles (a ``CreateTaskResult``, a
``Task``, a journal's entry) or ids the caller holds, never text, and the Client refuses an id
it cannot vouch came from its server (``UnknownRelatedTask``) unless the caller says
``from_elsewhere=True``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import attrs

from ._sansio.progress import ProgressToken, check_progress_token
from .models import CreateTaskResult, JSONObject, Task

if TYPE_CHECKING:  # the tool and content models: imported where a program uses them
    from .models import InputRequiredResult

__all__ = [
    "RELATED_TASK_IDS",
    "GetPrompt",
    "ReadResource",
    "RelatedTask",
    "TaskHandle",
    "TaskToolCall",
    "ToolCall",
]

RELATED_TASK_IDS = "io.modelcontextprotocol/relatedTaskIds"
"""The ``_meta`` key of a call's related task ids (a draft: agents-wg PR 28)."""


@runtime_checkable
class _Recorded(Protocol):
    """A journal's record of a task (``JournalEntry``): its id and the server it came from."""

    @property
    def task_id(self) -> str: ...

    @property
    def server(self) -> str: ...


TaskHandle = CreateTaskResult | Task | _Recorded | str
"""What ``related_to`` takes: a created task, a snapshot, a journal entry, or a task id."""


def _checked_id(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} is empty: a task id is never empty")
    return value


@attrs.frozen
class RelatedTask:
    """One related task id of a call and what vouches for it: ``server``, the identity of the
    server a journal recorded it for (checked against the Client's transport); or
    ``from_elsewhere``, the caller's word that it is right though this client never read it
    from its server. Neither: the Client must have read it from its server itself."""

    task_id: str
    server: str | None = None
    from_elsewhere: bool = False

    @classmethod
    def of(cls, handle: TaskHandle, *, from_elsewhere: bool = False) -> RelatedTask:
        """The related task ``handle`` names (TypeError for anything else, ValueError for an
        empty id)."""
        if isinstance(handle, CreateTaskResult):
            return cls(handle.task.task_id, None, from_elsewhere)
        if isinstance(handle, Task):
            return cls(handle.task_id, None, from_elsewhere)
        if isinstance(handle, str):
            return cls(_checked_id(handle, "a related task id"), None, from_elsewhere)
        if isinstance(handle, _Recorded):
            task_id = _checked_id(handle.task_id, "a journal entry's task_id")
            return cls(
                task_id, _checked_id(handle.server, "a journal entry's server"), from_elsewhere
            )
        raise TypeError(
            "related_to() takes a CreateTaskResult, a Task, a JournalEntry or a task id "
            f"string, got {type(handle).__name__}"
        )


_Answerable = TypeVar("_Answerable", "ToolCall", "GetPrompt", "ReadResource")


def _answering(
    request: _Answerable, answer: InputRequiredResult, responses: Mapping[str, Any]
) -> _Answerable:
    """``request`` again with MRTR answers (E C45-C47): only keys the server asked for, and
    its ``requestState`` exactly as it came (none when none came)."""
    asked = set((answer.input_requests or {}).keys())
    unknown = sorted(set(responses) - asked)
    if unknown:
        raise ValueError(f"responses for keys the server did not ask for: {unknown!r}")
    return attrs.evolve(
        request, input_responses=dict(responses), request_state=answer.request_state
    )


def _with_answers(
    params: dict[str, Any],
    meta: JSONObject | None,
    input_responses: Mapping[str, Any] | None,
    request_state: str | None,
) -> dict[str, Any]:
    if meta is not None:
        params["_meta"] = dict(meta)
    if input_responses is not None:
        params["inputResponses"] = dict(input_responses)
    if request_state is not None:
        params["requestState"] = request_state
    return params


@attrs.frozen
class ToolCall:
    """A plain ``tools/call``. ``meta`` goes to ``params._meta`` as given (a progressToken...)."""

    name: str
    arguments: JSONObject = attrs.field(factory=dict)
    meta: JSONObject | None = None
    input_responses: Mapping[str, Any] | None = None
    """MRTR (2026-07-28): answers by input key (ElicitResult, CreateMessageResult, ... or
    their JSON), sent as ``inputResponses``. Made by :meth:`answering`."""
    request_state: str | None = None
    """MRTR: the server's ``requestState``, echoed byte for byte (E C46)."""
    related: tuple[RelatedTask, ...] = ()
    """Earlier tasks this call builds on (:meth:`related_to`), in the order named."""

    def related_to(self, *tasks: TaskHandle, from_elsewhere: bool = False) -> ToolCall:
        """This call naming ``tasks`` as related (draft: ``_meta`` ``io.modelcontextprotocol/
        relatedTaskIds``, both generations): earlier tasks it builds on, or a cancelled one it
        restarts. Each is a ``CreateTaskResult``, a ``Task``, a ``JournalEntry`` or a task id
        your program holds; added after those already named (each id is sent once, and
        checked for each way it was named).

        The draft says: a client SHOULD name only task ids the same server returned, and
        SHOULD NOT let a language model fill this field in. So ids are never taken from text a
        model wrote: pass what your program got from the server. When the call is sent the
        Client checks each id: one it read from its server, or a journal entry recorded for
        that server, goes; any other raises UnknownRelatedTask, nothing sent. With
        ``from_elsewhere=True`` you vouch for these ids yourself (another client of the same
        server gave them to you, say), and they are sent as they are."""
        added = list(self.related)
        for handle in tasks:
            related = RelatedTask.of(handle, from_elsewhere=from_elsewhere)
            if related not in added:  # the same id vouched for twice is checked twice
                added.append(related)
        return attrs.evolve(self, related=tuple(added))

    @property
    def related_task_ids(self) -> list[str]:
        """The related task ids sent, in order, each once (empty: the ``_meta`` key is not
        sent)."""
        return list(dict.fromkeys(related.task_id for related in self.related))

    def answering(self, answer: InputRequiredResult, responses: Mapping[str, Any]) -> ToolCall:
        """The retry of this call after ``answer`` (E C45-C47): the same name, arguments and
        meta, ``responses`` as ``inputResponses`` (keys the server asked for), and the
        server's ``requestState`` exactly as it came (none when none came). The Client sends
        it with a new request id."""
        return _answering(self, answer, responses)

    def with_progress_token(self, token: ProgressToken) -> ToolCall:
        """This call with ``params._meta.progressToken`` = ``token`` (a string or an integer,
        C-46; TypeError otherwise), the rest of ``meta`` kept. The server may then send
        ``notifications/progress`` with it: for a task call (``.as_task()``) until the task
        is terminal (2025-11-25), each one a ``TaskProgress`` of the task in
        ``Poller.watch()`` and ``wait(..., on_progress=...)``. A token must not be in use by
        another active request or live task (``Client.start`` raises UsageError)."""
        meta = dict(self.meta or {})
        meta["progressToken"] = check_progress_token(token)
        return attrs.evolve(self, meta=meta)

    @property
    def progress_token(self) -> ProgressToken | None:
        """The ``progressToken`` this call carries in ``meta``, if any (as given)."""
        token = (self.meta or {}).get("progressToken")
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    def as_task(self, ttl: dt.timedelta | None = None) -> TaskToolCall:
        """This call, task-augmented; ``ttl`` is how long the server should keep the task
        (C-18, whole milliseconds; ``None`` leaves it to the server)."""
        return TaskToolCall(self, ttl)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        meta = self.meta
        if self.related:
            meta = {**(meta or {}), RELATED_TASK_IDS: self.related_task_ids}
        return _with_answers(params, meta, self.input_responses, self.request_state)


def _positive_ttl(instance: object, attribute: object, value: dt.timedelta | None) -> None:
    if value is not None and value <= dt.timedelta(0):
        raise ValueError(f"ttl must be positive, got {value}")


@attrs.frozen
class TaskToolCall:
    """A ``tools/call`` with ``params.task`` (T:128): made by :meth:`ToolCall.as_task`."""

    call: ToolCall
    ttl: dt.timedelta | None = attrs.field(default=None, validator=_positive_ttl)

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def ttl_ms(self) -> int | None:
        """The requested ttl in whole milliseconds (A-18: integers), or None."""
        if self.ttl is None:
            return None
        return max(1, round(self.ttl.total_seconds() * 1000))

    @property
    def progress_token(self) -> ProgressToken | None:
        """The ``progressToken`` the call carries, if any."""
        return self.call.progress_token

    def with_progress_token(self, token: ProgressToken) -> TaskToolCall:
        """This task call with a progress token (see :meth:`ToolCall.with_progress_token`)."""
        return attrs.evolve(self, call=self.call.with_progress_token(token))

    def related_to(self, *tasks: TaskHandle, from_elsewhere: bool = False) -> TaskToolCall:
        """This task call naming ``tasks`` as related (see :meth:`ToolCall.related_to`)."""
        return attrs.evolve(self, call=self.call.related_to(*tasks, from_elsewhere=from_elsewhere))

    @property
    def related(self) -> tuple[RelatedTask, ...]:
        return self.call.related

    def answering(self, answer: InputRequiredResult, responses: Mapping[str, Any]) -> TaskToolCall:
        """The retry of this task call after an MRTR ``answer`` (see ToolCall.answering)."""
        return attrs.evolve(self, call=self.call.answering(answer, responses))

    def params(self) -> dict[str, Any]:
        """The 2025-11-25 params: the call's, with ``task`` (the Client asks its dialect)."""
        params = self.call.params()
        params["task"] = {} if self.ttl_ms is None else {"ttl": self.ttl_ms}
        return params


@attrs.frozen
class GetPrompt:
    """A ``prompts/get``; like a ToolCall, answerable after an MRTR round (2026-07-28)."""

    name: str
    arguments: Mapping[str, str] = attrs.field(factory=dict)
    meta: JSONObject | None = None
    input_responses: Mapping[str, Any] | None = None
    request_state: str | None = None

    def answering(self, answer: InputRequiredResult, responses: Mapping[str, Any]) -> GetPrompt:
        return _answering(self, answer, responses)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.name}
        if self.arguments:
            params["arguments"] = dict(self.arguments)
        return _with_answers(params, self.meta, self.input_responses, self.request_state)


@attrs.frozen
class ReadResource:
    """A ``resources/read``; like a ToolCall, answerable after an MRTR round (2026-07-28)."""

    uri: str
    meta: JSONObject | None = None
    input_responses: Mapping[str, Any] | None = None
    request_state: str | None = None

    @property
    def name(self) -> str:
        return self.uri

    def answering(self, answer: InputRequiredResult, responses: Mapping[str, Any]) -> ReadResource:
        return _answering(self, answer, responses)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"uri": self.uri}
        return _with_answers(params, self.meta, self.input_responses, self.request_state)
