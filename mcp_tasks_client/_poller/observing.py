"""What the Poller tells the logs and the tracer about a tracked task's life.

Job: the start of a task's tracking (a DEBUG record, and the ``mcp_tasks.task`` span when
spans are on) and its end (the outcome at INFO, a release at DEBUG, the error that ended it;
the span ended with them), and each change of its status (DEBUG). Warnings are the poller's
own (``Poller._warn``).

May import: ``observability``, ``registry``, ``models``, ``_exceptions``, ``port`` (the
client's task spans), ``scheduling`` (the first poll of a task tracked by id). No I/O of its own.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .. import observability as _obs
from .._exceptions import MCPTasksError
from ..models import Task
from .registry import Tracked

if TYPE_CHECKING:
    from .port import PollPort
    from .scheduling import PollLoop

__all__ = ["first_snapshot", "status_changed", "tracking_ended", "tracking_started"]

log = _obs.get_logger("poller")


def tracking_started(tracked: Tracked, first: Task, client: PollPort) -> None:
    redaction = client.redaction
    redaction.remember(tracked.task_id)
    if log.isEnabledFor(logging.DEBUG):
        task = _obs.TaskId(tracked.task_id, redaction)
        log.debug("tracking task %s (%s)", task, first.status.value, extra=redaction.log_extra)
    if client.tracing.tracer is not None:
        # The task's span: the one its start (or a resume) began, else one begun now; the
        # Poller owns it from here and ends it with the outcome.
        tracked.span = client.task_traces.track(
            tracked.task_id,
            {
                "mcp_tasks.task.id": redaction.label(tracked.task_id),
                "mcp_tasks.generation": client.generation.value,
                "mcp_tasks.task.status": first.status.value,
            },
        )


async def first_snapshot(client: PollPort, loop: PollLoop, task_id: str, until: float) -> Task:
    """The first snapshot of a task tracked by its bare id, read in the task's span (begun now
    unless its start or a resume began it), so that poll is in the task's trace too."""
    traces = client.task_traces
    began = client.tracing.tracer is not None and traces.get(task_id) is None
    label = client.redaction.label
    trace = traces.track(task_id, {"mcp_tasks.task.id": label(task_id)}) if began else None
    try:
        return await loop.first(task_id, until)
    except BaseException as exc:
        if trace is not None:  # never tracked after all: its span ends with what stopped it
            error = exc if isinstance(exc, MCPTasksError) else None
            trace.end({"mcp_tasks.outcome": "error" if error else "cancelled"}, error)
        raise


def tracking_ended(
    tracked: Tracked,
    outcome: str,
    redaction: _obs.Redaction,
    error: MCPTasksError | None = None,
) -> None:
    """The end of a task's tracking: its outcome (INFO) and the end of its span; ids in the
    records shown as the tracking client's ``redaction`` says."""
    status = tracked.machine.current.status.value
    task, extra = _obs.TaskId(tracked.task_id, redaction), redaction.log_extra
    if error is None:
        # An outcome at INFO; a task nobody waits on any more is no outcome: DEBUG.
        level = logging.DEBUG if outcome == "released" else logging.INFO
        log.log(level, "task %s: %s (%s)", task, outcome, status, extra=extra)
    else:
        log.info(
            "task %s: tracking ended by %s (%s)", task, type(error).__name__, status, extra=extra
        )
    trace, tracked.span = tracked.span, None
    if trace is not None and outcome == "released":
        # Nobody waits on it any more, but the task goes on: its span stays open (a later
        # wait adopts it again; else its terminal status or the client's close ends it).
        trace.owned = False
    elif trace is not None:
        attributes = {"mcp_tasks.outcome": outcome, "mcp_tasks.task.status": status}
        trace.end(attributes, error)


def status_changed(
    tracked: Tracked, previous: Task, snapshot: Task, redaction: _obs.Redaction
) -> None:
    """An accepted snapshot: a DEBUG record when its status is not the previous one's."""
    if snapshot.status is not previous.status:
        log.debug(
            "task %s: %s -> %s",
            _obs.TaskId(tracked.task_id, redaction),
            previous.status.value,
            snapshot.status.value,
            extra=redaction.log_extra,
        )
