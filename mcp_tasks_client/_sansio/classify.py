"""How a terminal task's outcome is classified, for both generations (sans-I/O).

2025-11-25 fetches the outcome with ``tasks/result`` once the task is terminal: a result (for
``completed``, or an ``isError`` result for ``failed``), a JSON-RPC error (the call's own), or
for mcp 1.30's failed tasks only ``_meta`` (A-14). 2026-07-28 inlines it in the terminal
snapshot: ``completed`` carries ``result`` (an ``isError`` result stays completed, E S7),
``failed`` carries ``error`` (a JSON-RPC error object, E S8).

Each function returns the outcome, or the typed error that stands for it when what the server
sent cannot be an outcome (the wait ends with that error: nothing is guessed).
"""

from __future__ import annotations

from collections.abc import Callable

from .._exceptions import DecodeError, MCPTasksError, RPCError
from ..models import CallToolResult, JSONObject, Task, TaskStatus
from ..outcomes import Cancelled, Completed, Failed, Outcome

__all__ = ["inline_outcome", "legacy_outcome"]

DecodeResult = Callable[[JSONObject], CallToolResult]

_INVALID_INLINE_TYPES = frozenset({"task", "input_required"})


def legacy_outcome(
    task: Task, raw: JSONObject | None, error: RPCError | None, decode: DecodeResult
) -> Outcome | MCPTasksError:
    """2025-11-25: ``task`` is terminal; ``raw`` is what ``tasks/result`` returned, or
    ``error`` the JSON-RPC error it answered (C-27: nothing is fetched for cancelled)."""
    if task.status is TaskStatus.CANCELLED:
        return Cancelled(task)
    if error is not None:
        return Failed(task, error=error) if task.status is TaskStatus.FAILED else error
    assert raw is not None
    try:
        result = decode(raw)
    except DecodeError as exc:
        if task.status is TaskStatus.FAILED:  # mcp 1.30: only _meta, no content
            return Failed(task, raw=raw)
        return exc.under("$.result")
    if task.status is TaskStatus.FAILED:
        return Failed(task, result=result, raw=raw)
    return Completed(task, result)


def inline_outcome(task: Task, decode: DecodeResult) -> Outcome | MCPTasksError:
    """2026-07-28: the outcome a terminal snapshot carries (E C27, S6-S8, A-17, A-18)."""
    if task.status is TaskStatus.CANCELLED:
        return Cancelled(task)
    if task.status is TaskStatus.FAILED:
        if task.error is None:
            return Failed(task)  # S6 says MUST carry error; what came is kept on the task
        problem = task.error
        return Failed(
            task,
            error=RPCError.from_error(
                problem.code, problem.message, problem.data, method="tasks/get"
            ),
        )
    if task.result is None:
        return DecodeError("$.result.result", "a completed task without its result (E S6)")
    kind = task.result.get("resultType", "complete")
    if not isinstance(kind, str) or kind in _INVALID_INLINE_TYPES:
        return DecodeError(
            "$.result.result.resultType", f"an inlined result has resultType {kind!r}", kind
        )
    try:
        return Completed(task, decode(task.result))
    except DecodeError as exc:
        return exc.under("$.result.result")
