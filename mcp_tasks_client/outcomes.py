"""How a task ended, as typed values (T:403-407). The server's detail is never stringified."""

from __future__ import annotations

import datetime as dt
from typing import TypeAlias

import attrs

from ._exceptions import RPCError
from .models import CallToolResult, JSONObject, Task

__all__ = ["Cancelled", "Completed", "Expired", "Failed", "Lost", "Outcome"]


@attrs.frozen
class Completed:
    """``completed``: the tool's result (``tasks/result`` in 2025-11-25, inline in 2026-07-28;
    its ``is_error`` may be set, E S7). ``task`` is None when no task was made: a 2026-07-28
    server answered the task call inline (``Client.start`` returned the CallToolResult)."""

    task: Task | None
    result: CallToolResult


@attrs.frozen
class Failed:
    """``failed``: the task's ``statusMessage`` is on ``task``. 2025-11-25: ``tasks/result``
    gave a JSON-RPC ``error``, an ``isError`` ``result``, or (mcp 1.30 does this) only ``raw``
    with neither (A-14). 2026-07-28: the inlined JSON-RPC ``error`` (E C27: a tool's own
    ``isError`` result is Completed there)."""

    task: Task
    error: RPCError | None = None
    result: CallToolResult | None = None
    raw: JSONObject | None = None


@attrs.frozen
class Cancelled:
    """``cancelled``: no result is fetched (C-27, A-13)."""

    task: Task


@attrs.frozen
class Expired:
    """The task's ttl ran out (``createdAt + ttl``) before it reached a terminal status.

    ``task`` is the last snapshot seen (the server may have deleted the task since, T:459).
    """

    task: Task
    expired_at: dt.datetime


@attrs.frozen
class Lost:
    """A journaled task that cannot be followed any more (``resume``): the server forgot it
    (TaskNotFound), or the generation-1 session it is bound to is gone (SessionExpired, or a
    stdio session, which ends with its process). ``last`` is the last snapshot the journal
    had. Not an Outcome a Poller returns: only resume reports it."""

    task_id: str
    reason: str
    last: Task | None = None


Outcome: TypeAlias = Completed | Failed | Cancelled | Expired
