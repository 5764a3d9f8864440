"""Progress for tasks, and status messages with the time they were set, sans-I/O.

Theory of operation. A caller who wants progress puts a ``progressToken`` on its call (C-46:
a string or an integer, unique across the active requests); nothing else ever asks for it.
The :class:`ProgressBook` is the client's map of tokens: a token is *pending* while its
request is in flight, *bound* to a task once the task call's answer names the task, and
*ended* once that task is known terminal (2025-11-25: the token stays valid until then, C-46,
V-24) or, in 2026-07-28, as soon as the task call returned (E C43: progress is not supported on
tasks, only on the originating request's stream). A ``notifications/progress`` is read against
the book:

- for a bound task it is a :class:`TaskProgress`, with ``received_at`` the caller's clock;
- progress for a pending task call is kept (the latest only) and becomes the task's when the
  answer arrives; progress for a plain request is the caller's own business (ignored here);
- a token of no known request or task is tied by the related-task ``_meta``
  (``io.modelcontextprotocol/related-task``) when it names a task; otherwise it is a soft
  :class:`Violation` (V-24), counted, nothing stored;
- V-24 soft violations: ``progress`` not above every earlier one (the event is still
  delivered: the server said it), progress after the task was terminal (not delivered), a
  related-task id that names another task than the token's;
- malformed params are a :class:`DecodeError` (counted, nothing stored).

The book holds at most ``capacity`` tokens: past it the entry that ended first goes, and when
none has ended the oldest one (its later progress is then tied by the related-task ``_meta``
or counted as unknown).

Status messages. A snapshot's ``statusMessage`` is whatever the server last set, and a
terminal snapshot often carries a message set while the task was working ("working",
"step 3/3"). :func:`next_status_message` tracks, per task, when the current message was
first seen and under which status, as a :class:`StatusMessage`, so a watcher can tell a
current message from a carried-over one.

Time is whatever the caller passes in (``now``); nothing here sleeps or reads a clock.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any, TypeAlias

import attrs

from .._exceptions import DecodeError, UsageError
from ..models import RELATED_TASK_META, RequestId, Task, TaskStatus
from .task_machine import Violation

__all__ = [
    "ProgressBook",
    "ProgressStats",
    "ProgressToken",
    "StatusMessage",
    "TaskProgress",
    "check_progress_token",
    "next_status_message",
    "progress_token_of",
]

ProgressToken: TypeAlias = str | int
"""A ``progressToken``: a string or an integer (C-46), never a boolean."""

_TokenKey: TypeAlias = tuple[bool, str | int]
"""A token as the book keys it: ``(is_string, value)``, so ``"1"`` and ``1`` differ."""


def check_progress_token(token: object) -> ProgressToken:
    """``token`` if it is a valid progress token (a str, or an int that is not a bool);
    TypeError otherwise."""
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        raise TypeError(
            f"a progressToken is a string or an integer (C-46), got {type(token).__name__}"
        )
    return token


def progress_token_of(params: Mapping[str, Any] | None) -> ProgressToken | None:
    """The progress token a request's params carry in ``_meta`` (None when there is none);
    UsageError when it is not a string or an integer."""
    meta = (params or {}).get("_meta")
    if not isinstance(meta, Mapping) or "progressToken" not in meta:
        return None
    try:
        return check_progress_token(meta["progressToken"])
    except TypeError as exc:
        raise UsageError(str(exc)) from None


def _key(token: object) -> _TokenKey | None:
    """The book's key of a token as it came on the wire (an integral float is the integer a
    JSON writer may have printed as ``1.0``); None for what cannot be a token."""
    if isinstance(token, str):
        return (True, token)
    if isinstance(token, bool):
        return None
    if isinstance(token, int):
        return (False, token)
    if isinstance(token, float) and math.isfinite(token) and token.is_integer():
        return (False, int(token))
    return None


@attrs.frozen
class TaskProgress:
    """One ``notifications/progress`` for a task (2025-11-25: it reuses the token the task
    call carried, C-46, V-24), as ``Poller.watch()`` yields it and ``on_progress`` sees it."""

    task_id: str
    progress: float
    """The server's ``progress``: it must increase with each notification (V-24)."""
    total: float | None
    """The server's ``total``, if it knows one."""
    message: str | None
    """The server's human-readable ``message``, if it sent one."""
    received_at: dt.datetime
    """When the client read it (the client's clock, UTC)."""
    token: ProgressToken
    """The token it carried."""


@attrs.frozen
class ProgressStats:
    """What the client's progress book holds and has counted (printing it shows all)."""

    tokens: int
    """Tokens held now (pending requests, live and ended tasks): at most
    ``Limits.max_progress_tokens``."""
    delivered: int
    """Progress notifications delivered as TaskProgress."""
    for_requests: int
    """Progress for plain (not task) requests: left to the caller's own handlers."""
    unknown: int
    """Progress for a token of no known request or task (and no related-task id)."""
    late: int
    """Progress after the task was terminal (2026-07-28: after the task call returned)."""
    out_of_order: int
    """Progress not above an earlier one for the same token (still delivered)."""
    malformed: int
    """Progress notifications whose params could not be read."""
    evicted: int
    """Tokens forgotten to stay within the capacity."""


@attrs.define(eq=False)
class _TokenRecord:
    """One progress token in use: the request it came with, its task and its latest progress."""

    key: _TokenKey
    token: ProgressToken
    request_id: RequestId | None
    task_call: bool
    task_id: str | None = None
    ended: bool = False
    highest: float | None = None
    latest: TaskProgress | None = None
    pending: tuple[float, float | None, str | None, dt.datetime] | None = None
    """The latest progress that came before the task existed: the task's once it is bound."""


@attrs.frozen
class _Params:
    key: _TokenKey
    token: ProgressToken
    progress: float
    total: float | None
    message: str | None
    related: str | None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _read(params: object) -> _Params:
    """The params of a ``notifications/progress``; DecodeError names the path."""
    if not isinstance(params, Mapping):
        raise DecodeError("$.params", "expected an object", params)
    raw_token = params.get("progressToken")
    key = _key(raw_token)
    if key is None:
        raise DecodeError(
            "$.params.progressToken", "expected a string or an integer", _short(raw_token)
        )
    progress = params.get("progress")
    if not _number(progress):
        raise DecodeError("$.params.progress", "expected a finite number", _short(progress))
    total = params.get("total")
    if total is not None and not _number(total):
        raise DecodeError("$.params.total", "expected a finite number", _short(total))
    message = params.get("message")
    if message is not None and not isinstance(message, str):
        raise DecodeError("$.params.message", "expected a string", _short(message))
    meta = params.get("_meta")
    related: str | None = None
    if isinstance(meta, Mapping):
        tag = meta.get(RELATED_TASK_META)
        task_id = tag.get("taskId") if isinstance(tag, Mapping) else None
        related = task_id if isinstance(task_id, str) else None
    assert isinstance(progress, (int, float))
    assert total is None or isinstance(total, (int, float))
    return _Params(key, key[1], progress, total, message, related)


def _short(value: object) -> object:
    """What a DecodeError keeps of an offending value: a long string or container is cut, so
    a hostile server cannot make the warnings hold its megabytes."""
    if isinstance(value, str) and len(value) > 100:
        return value[:100] + "..."
    if isinstance(value, (dict, list)):
        return f"<{type(value).__name__} of {len(value)}>"
    return value


def _quote(token: ProgressToken) -> str:
    text = repr(token)
    return text if len(text) <= 100 else text[:100] + "..."


class ProgressBook:
    """The client's progress tokens: see the module docstring.

    ``tasks_keep_tokens``: 2025-11-25 (a task's token stays valid until it is terminal);
    False for 2026-07-28 (a token ends with its task call's answer, E C43).
    """

    def __init__(self, capacity: int, *, tasks_keep_tokens: bool = True) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.tasks_keep_tokens = tasks_keep_tokens
        self._entries: dict[_TokenKey, _TokenRecord] = {}  # insertion order: the oldest first
        self._ended: dict[_TokenKey, None] = {}  # the order they ended in
        self._by_request: dict[RequestId, _TokenKey] = {}
        self._by_task: dict[str, _TokenKey] = {}
        self._delivered = 0
        self._for_requests = 0
        self._unknown = 0
        self._late = 0
        self._out_of_order = 0
        self._malformed = 0
        self._evicted = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def stats(self) -> ProgressStats:
        return ProgressStats(
            tokens=len(self._entries),
            delivered=self._delivered,
            for_requests=self._for_requests,
            unknown=self._unknown,
            late=self._late,
            out_of_order=self._out_of_order,
            malformed=self._malformed,
            evicted=self._evicted,
        )

    # -- the caller's side: tokens on requests --------------------------------------------

    def holder(self, token: ProgressToken) -> str | None:
        """What holds ``token`` now ("request 3", "task 't-1'"), or None when it is free
        (never used, or its task ended): C-46, a token is unique across active requests."""
        key = _key(token)
        entry = self._entries.get(key) if key is not None else None
        if entry is None or entry.ended:
            return None
        if entry.task_id is not None:
            return f"task {entry.task_id!r}"
        return f"request {entry.request_id!r}"

    def check(self, token: ProgressToken) -> None:
        """UsageError when ``token`` is not a valid token or is in use (C-46)."""
        try:
            check_progress_token(token)
        except TypeError as exc:
            raise UsageError(str(exc)) from None
        holder = self.holder(token)
        if holder is not None:
            raise UsageError(
                f"progressToken {_quote(token)} is in use by {holder}: a token is unique "
                "across active requests, and a task's stays active until the task is "
                "terminal (C-46); use another token"
            )

    def open(self, token: ProgressToken, request_id: RequestId, *, task_call: bool) -> bool:
        """A request carrying ``token`` is about to be sent (UsageError as :meth:`check`).
        Returns True when an entry that had not ended was evicted to make room."""
        self.check(token)
        key = _key(token)
        assert key is not None
        self._remove(key)  # an ended entry of the same token: the token is free again
        evicted_live = False
        while len(self._entries) >= self.capacity:
            evicted_live = self._evict() or evicted_live
        self._entries[key] = _TokenRecord(key, token, request_id, task_call)
        self._by_request[request_id] = key
        return evicted_live

    def bind(self, request_id: RequestId, task_id: str, *, now: dt.datetime) -> TaskProgress | None:
        """The task call ``request_id`` created ``task_id``: its token is the task's now.
        Returns the progress that came before, as the task's (None if none came)."""
        key = self._by_request.pop(request_id, None)
        entry = self._entries.get(key) if key is not None else None
        if entry is None:
            return None
        previous = self._by_task.get(task_id)
        if previous is not None and previous != entry.key:
            self._remove(previous)  # the same id again (a server's bug): the newer token wins
        entry.request_id = None
        entry.task_id = task_id
        self._by_task[task_id] = entry.key
        if entry.pending is not None:
            progress, total, message, received_at = entry.pending
            entry.pending = None
            entry.latest = TaskProgress(task_id, progress, total, message, received_at, entry.token)
            self._delivered += 1
        if not self.tasks_keep_tokens:
            self._end(entry)
        return entry.latest

    def close_request(self, request_id: RequestId) -> None:
        """The request ended without creating a task (answered, failed, given up on): its
        token is free."""
        key = self._by_request.pop(request_id, None)
        if key is not None:
            entry = self._entries.get(key)
            if entry is not None and entry.task_id is None:
                self._remove(key)

    def task_ended(self, task_id: str) -> None:
        """The task is known terminal: its token stops (V-24), and is free again (C-46)."""
        key = self._by_task.get(task_id)
        entry = self._entries.get(key) if key is not None else None
        if entry is not None:
            self._end(entry)

    def latest(self, task_id: str) -> TaskProgress | None:
        """The last progress delivered for the task (None if none, or its token is gone)."""
        key = self._by_task.get(task_id)
        entry = self._entries.get(key) if key is not None else None
        return entry.latest if entry is not None else None

    def task_of(self, token: ProgressToken) -> str | None:
        """The task ``token`` is bound to (live or ended), if the book still holds it."""
        key = _key(token)
        entry = self._entries.get(key) if key is not None else None
        return entry.task_id if entry is not None else None

    # -- the server's side: notifications/progress -----------------------------------------

    def receive(
        self, params: object, *, now: dt.datetime
    ) -> tuple[TaskProgress | None, tuple[Violation | DecodeError, ...]]:
        """Read one ``notifications/progress``'s params: the TaskProgress to deliver (None:
        nothing for a task), and the problems to report."""
        try:
            read = _read(params)
        except DecodeError as exc:
            self._malformed += 1
            return None, (exc,)
        entry = self._entries.get(read.key)
        if entry is None:
            return self._unknown_token(read, now)
        if entry.task_id is None:
            if not entry.task_call:
                self._for_requests += 1
                return None, ()
            order = self._check_order(entry, read)
            entry.pending = (read.progress, read.total, read.message, now)
            return None, order
        task_id = entry.task_id
        problems: list[Violation | DecodeError] = []
        if read.related is not None and read.related != task_id:
            problems.append(
                Violation(
                    task_id,
                    "V-24",
                    f"progress for token {_quote(read.token)} of this task names task "
                    f"{read.related[:100]!r} in its related-task _meta",
                    soft=True,
                )
            )
        if entry.ended:
            self._late += 1
            problems.append(self._late_violation(task_id))
            return None, tuple(problems)
        problems.extend(self._check_order(entry, read))
        progress = self._deliver(task_id, read, now)
        entry.latest = progress
        return progress, tuple(problems)

    def _unknown_token(
        self, read: _Params, now: dt.datetime
    ) -> tuple[TaskProgress | None, tuple[Violation | DecodeError, ...]]:
        if read.related is None:
            self._unknown += 1
            violation = Violation(
                "",
                "V-24",
                f"progress for token {_quote(read.token)}, which no request or task of this "
                "client holds",
                soft=True,
            )
            return None, (violation,)
        task_id = read.related
        key = self._by_task.get(task_id)
        entry = self._entries.get(key) if key is not None else None
        if entry is not None and entry.ended:
            self._late += 1
            return None, (self._late_violation(task_id),)
        if not self.tasks_keep_tokens:
            self._late += 1  # E C43: no progress for a task once its call returned
            return None, (self._late_violation(task_id),)
        problems: tuple[Violation | DecodeError, ...] = ()
        if entry is not None:
            problems = (
                Violation(
                    task_id,
                    "V-24",
                    f"progress for this task with token {_quote(read.token)}, not the "
                    f"task call's {_quote(entry.token)}",
                    soft=True,
                ),
            )
        progress = self._deliver(task_id, read, now)
        if entry is not None:
            entry.latest = progress
        return progress, problems

    def _deliver(self, task_id: str, read: _Params, now: dt.datetime) -> TaskProgress:
        self._delivered += 1
        return TaskProgress(task_id, read.progress, read.total, read.message, now, read.token)

    def _check_order(
        self, entry: _TokenRecord, read: _Params
    ) -> tuple[Violation | DecodeError, ...]:
        previous = entry.highest
        if previous is None or read.progress > previous:
            entry.highest = read.progress
            return ()
        self._out_of_order += 1
        task_id = entry.task_id if entry.task_id is not None else ""
        return (
            Violation(
                task_id,
                "V-24",
                f"progress {read.progress!r} is not above the earlier {previous!r} "
                f"(token {_quote(entry.token)})",
                soft=True,
            ),
        )

    def _late_violation(self, task_id: str) -> Violation:
        if self.tasks_keep_tokens:
            return Violation(task_id, "V-24", "progress after the task was terminal", soft=True)
        return Violation(
            task_id,
            "E C43",
            "progress for a task after its task call returned (not supported on tasks)",
            soft=True,
        )

    # -- bookkeeping -------------------------------------------------------------------------

    def _end(self, entry: _TokenRecord) -> None:
        if entry.ended:
            return
        entry.ended = True
        self._ended[entry.key] = None

    def _evict(self) -> bool:
        """Forget one entry: the one that ended first, else the oldest. True when the one
        forgotten had not ended."""
        self._evicted += 1
        if self._ended:
            self._remove(next(iter(self._ended)))
            return False
        self._remove(next(iter(self._entries)))
        return True

    def _remove(self, key: _TokenKey) -> None:
        entry = self._entries.pop(key, None)
        self._ended.pop(key, None)
        if entry is None:
            return
        if entry.request_id is not None and self._by_request.get(entry.request_id) == key:
            del self._by_request[entry.request_id]
        if entry.task_id is not None and self._by_task.get(entry.task_id) == key:
            del self._by_task[entry.task_id]


# -- status messages -----------------------------------------------------------------------


@attrs.frozen
class StatusMessage:
    """A task's current ``statusMessage``, with when it was set and under which status.

    Compare ``status`` with the snapshot's: a terminal snapshot that merely carries over a
    message set while the task was working has ``status`` WORKING, so the message is not
    news about the end (:meth:`is_current_for`).
    """

    text: str
    status: TaskStatus
    """The task's status in the first snapshot that showed this message."""
    since: dt.datetime
    """``lastUpdatedAt`` of the first snapshot that showed it (the server's clock): when the
    server set it, or later if that snapshot was the first the client saw."""
    seen_at: dt.datetime
    """When the client first saw it (the client's clock)."""

    def is_current_for(self, snapshot: Task) -> bool:
        """True when ``snapshot`` shows this message under the status it was set under."""
        return snapshot.status_message == self.text and snapshot.status is self.status


def next_status_message(
    previous: StatusMessage | None, snapshot: Task, *, now: dt.datetime
) -> StatusMessage | None:
    """The StatusMessage of ``snapshot``, given the previous snapshot's: the same value while
    the text stays the same (its time and status are when it was first seen), a new one when
    the text changes, None when the snapshot has no message."""
    text = snapshot.status_message
    if text is None:
        return None
    if previous is not None and previous.text == text:
        return previous
    return StatusMessage(text, snapshot.status, snapshot.last_updated_at, now)
