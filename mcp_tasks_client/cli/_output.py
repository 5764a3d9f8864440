"""What a run shows: JSON lines (``--json``, or stdout not a terminal), or the terminal view.

Every watch item (a Task snapshot, an InputEvent) goes through :func:`apply_watch_item`, the
one place that turns it into display state and into its JSON event: a new kind of item is
taught to the CLI there and nowhere else.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, TypeVar

from .._exceptions import (
    DecodeError,
    HTTPStatusError,
    InputNotHandled,
    InputRequired,
    MCPTasksError,
    RPCError,
    TaskAugmentationNotAllowed,
    TaskAugmentationRequired,
    UsageError,
)
from .._generation import Generation
from ..models import Task
from ..wire import encode
from ._exit import ExitCode, for_error, for_outcome
from ._safe import for_terminal, json_line

if TYPE_CHECKING:  # each imported by the commands that use it alone (``status`` none)
    from .._sansio.progress import StatusMessage
    from ..conformance import ProbeReport
    from ..engine import Poller, WatchItem
    from ..journal import JournalEntry
    from ..models import CallToolResult, Tool
    from ..outcomes import Outcome
    from ..probe import ServerProbe
    from ..resume import Resumed

__all__ = [
    "JsonOutput",
    "Output",
    "TaskView",
    "apply_watch_item",
    "error_json",
    "outcome_json",
]

T = TypeVar("T")
Event = dict[str, Any]
"""One line of JSON output."""


class TaskView:
    """What is known of the task being followed, for the live line. (A plain class: one per
    followed task, never compared; an attrs class compiles its generated methods on every
    command's start, a status's too: issue 34.)"""

    __slots__ = (
        "last_input", "message", "message_carried", "message_since", "next_poll", "progress",
        "progress_message", "started", "status", "status_message", "task_id", "total",
    )  # fmt: skip

    def __init__(
        self,
        task_id: str,
        next_poll: Callable[[], float | None] = lambda: None,
        status_message: Callable[[], StatusMessage | None] = lambda: None,
    ) -> None:
        self.task_id = task_id
        self.next_poll = next_poll
        """Seconds until the next poll (from the Poller), or None."""
        self.status_message = status_message
        """The current status message with when it was set (from the Poller), or None."""
        self.status: str | None = None
        self.message: str | None = None
        self.message_since: dt.datetime | None = None
        """When the shown message was first reported (its snapshot's ``lastUpdatedAt``)."""
        self.message_carried: str | None = None
        """The status the message was set under, when the current snapshot only carries it
        over (a terminal snapshot still saying what the task said while working): shown as
        such."""
        self.progress: float | None = None
        """Progress so far, and ``total`` when known: shown as a bar once set."""
        self.total: float | None = None
        self.progress_message: str | None = None
        self.last_input: str | None = None
        self.started = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


def apply_watch_item(view: TaskView, item: WatchItem, generation: Generation) -> Event:
    """A ``Poller.watch()`` item: the view updated for it, and its JSON event returned.

    Extend this function, and only this one, for a new kind of watch item (progress, say:
    set ``view.progress`` / ``view.total`` / ``view.message`` and return its event).
    """
    from .._sansio.progress import TaskProgress  # (loaded by what follows a task)

    if isinstance(item, Task):
        view.status = item.status.value
        view.message = item.status_message
        view.message_since = view.message_carried = None
        event: Event = {
            "event": "status",
            "task_id": item.task_id,
            "status": item.status.value,
            "task": encode(item, generation),
        }
        said = view.status_message()
        if item.status_message is not None and said is not None and said.text == view.message:
            current = said.is_current_for(item)
            view.message_since = said.since
            view.message_carried = None if current else said.status.value
            event["message"] = {
                "text": said.text,
                "since": said.since.isoformat(),
                "set_while": said.status.value,
                "current": current,
            }
        return event
    if isinstance(item, TaskProgress):
        view.progress, view.total = item.progress, item.total
        view.progress_message = item.message
        return {
            "event": "progress",
            "task_id": item.task_id,
            "progress": item.progress,
            "total": item.total,
            "message": item.message,
            "received_at": item.received_at.isoformat(),
        }
    view.last_input = f"{item.method}: {item.kind.value}"
    event = {
        "event": "input",
        "task_id": item.task_id,
        "kind": item.kind.value,
        "method": item.method,
        "request_id": item.request_id,
    }
    if item.error is not None:
        event["error"] = error_json(item.error)
    return event


def message_of(error: BaseException) -> str:
    """The error's message, in the command line's words where the library's name its API."""
    if isinstance(error, InputNotHandled):
        if error.request_id is None:
            return f"task {error.task_id} needs input and nothing answered it"
        return f"task {error.task_id} asked for {error.method} and nothing answered it"
    if isinstance(error, InputRequired):
        keys = sorted((getattr(error.answer, "input_requests", None) or {}).keys())
        return f"{error.method} {error.name or ''} needs input first (keys {keys!r})"
    if isinstance(error, TaskAugmentationRequired | TaskAugmentationNotAllowed):
        said = f"; the server said: {error.server_said}" if error.server_said else ""
        if isinstance(error, TaskAugmentationRequired):
            return f"tool {error.tool!r} must be called as a task: add --task{said}"
        return f"tool {error.tool!r} does not run as a task: call it without --task{said}"
    if isinstance(error, HTTPStatusError):
        return http_status_line(error)
    if isinstance(error, OSError) and not isinstance(error, MCPTasksError):
        return os_error_line(error)
    return str(error) if isinstance(error, MCPTasksError) else repr(error)


# Compiled by ``re`` (and kept in its cache) when an HTML page is first met (issue 34).
_TITLE = r"(?is)<title[^>]*>(.*?)</title>|<h1[^>]*>(.*?)</h1>"
_TAG = r"<[^>]*>"


def http_status_line(error: HTTPStatusError) -> str:
    """An HTTP error in one line: its status, and the body's gist. An HTML page (a web server
    or a proxy, not an MCP endpoint) is named by its title, never shown whole; any other body
    has its line breaks folded and is cut at 300 characters (``body`` keeps it all)."""
    where = f" to {error.method}" if error.method else ""
    body = error.body.strip()
    head = body[:200].lower()
    if head.startswith("<") and ("<html" in head or "<!doctype" in head or "<head" in head):
        found = re.search(_TITLE, body)
        title = next((g for g in found.groups() if g), "") if found is not None else ""
        title = " ".join(re.sub(_TAG, " ", title).split())
        what = f"an HTML page titled {title[:120]!r}" if title else "an HTML page"
        return f"HTTP {error.status_code}{where}: {what} (is this an MCP endpoint?)"
    folded = " ".join(body.split())
    if len(folded) > 300:
        folded = folded[:300] + "..."
    return (
        f"HTTP {error.status_code}{where}: {folded}"
        if folded
        else f"HTTP {error.status_code}{where}"
    )


def os_error_line(error: OSError) -> str:
    """An operating-system error in words, naming the file or command it is about."""
    what = error.strerror or str(error) or type(error).__name__
    name = error.filename
    return f"{what}: {name!r}" if name is not None else what


def error_json(error: BaseException) -> Event:
    """An error as JSON: its type and message, and what a script may branch on."""
    out: Event = {"type": type(error).__name__, "message": message_of(error)}
    if isinstance(error, RPCError):
        out["code"] = error.code
        out["message"] = error.message
        if error.data is not None:
            out["data"] = _jsonable(error.data)
    if isinstance(error, DecodeError):
        out["path"] = error.path
    return out


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def outcome_json(task_id: str | None, outcome: Outcome, generation: Generation) -> Event:
    """The final line for a task (or a plain call): its status, and result or error."""
    from ..outcomes import Cancelled, Completed, Expired, Failed  # (a status has none)

    event: Event = {"event": "outcome", "task_id": task_id}
    if isinstance(outcome, Completed):
        event["status"] = "completed"
        event["result"] = encode(outcome.result, generation)
    elif isinstance(outcome, Failed):
        event["status"] = "failed"
        if outcome.result is not None:
            event["result"] = encode(outcome.result, generation)
        if outcome.error is not None:
            event["error"] = error_json(outcome.error)
        elif outcome.result is None:
            said = outcome.task.status_message or "the task failed"
            event["error"] = {"type": "TaskFailed", "message": said}
            if outcome.raw is not None:
                event["raw"] = outcome.raw
    elif isinstance(outcome, Cancelled):
        event["status"] = "cancelled"
        said = outcome.task.status_message or "the task was cancelled"
        event["error"] = {"type": "Cancelled", "message": said}
    else:
        assert isinstance(outcome, Expired)
        event["status"] = "expired"
        event["last_status"] = outcome.task.status.value
        event["error"] = {
            "type": "Expired",
            "message": f"the task's ttl ran out at {outcome.expired_at.isoformat()}",
        }
    event["exit_code"] = int(for_outcome(outcome))
    return event


def result_of(outcome: Outcome) -> CallToolResult | None:
    """The CallToolResult an outcome carries, if any."""
    from ..outcomes import Completed, Failed

    if isinstance(outcome, (Completed, Failed)):
        return outcome.result
    return None


def resumed_json(item: Resumed, generation: Generation) -> tuple[Event, ExitCode]:
    """A resumed task's line and exit code (a task held elsewhere is not a failure: 0)."""
    from ..outcomes import Lost
    from ..resume import Held  # (resume's commands alone come here)

    entry, ended = item.entry, item.ended
    where = {"server": entry.server, "tool": entry.tool, "resumed": True}
    if isinstance(ended, Lost):
        code = ExitCode.LOST
        event: Event = {
            "event": "outcome",
            "task_id": entry.task_id,
            "status": "lost",
            "error": {"type": "Lost", "message": ended.reason},
        }
    elif isinstance(ended, Held):
        code = ExitCode.COMPLETED
        event = {"event": "held", "task_id": entry.task_id, "message": HELD}
    elif isinstance(ended, MCPTasksError):
        code = for_error(ended)
        event = {"event": "error", "task_id": entry.task_id, "error": error_json(ended)}
    else:
        event = outcome_json(entry.task_id, ended, generation)
        code = for_outcome(ended)
    return {**event, **where, "exit_code": int(code)}, code


def journaled_status(entry: JournalEntry) -> str:
    """A journaled task's status as last recorded: its outcome's, else its last snapshot's."""
    if entry.outcome is not None:
        return entry.outcome.status
    return entry.snapshot.status.value if entry.snapshot is not None else "unknown"


def journaled_json(entry: JournalEntry) -> Event:
    snapshot = entry.snapshot
    return {
        "event": "task",
        "task_id": entry.task_id,
        "status": journaled_status(entry),
        "task": None if snapshot is None else encode(snapshot, entry.generation),
        "journaled": True,
        "open": entry.is_open,
        "server": entry.server,
        "generation": entry.generation.value,
        "tool": entry.tool,
        "created_at": entry.created_at.isoformat(),
    }


HELD = "another process holds this task's lease (it is following it): left alone"


def quiet_stdout() -> None:
    """Standard output's reader left: send what is still written there (the interpreter's own
    flush at exit included) to /dev/null, so it cannot fail again with a traceback."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def interrupt_lines(task_id: str | None, cancel: str | None, caveat: str | None) -> list[str]:
    """What an interrupted run says to a person."""
    if task_id is None:
        return ["interrupted"]
    lines = [f"interrupted: task {task_id} keeps running on the server"]
    if cancel is not None:
        lines.append(f"to cancel it: {cancel}")
    if caveat is not None:
        lines.append(f"({caveat})")
    return lines


class Output:
    """What every output mode does; the JSON mode is this class's own behaviour."""

    def __init__(self, generation: Generation, stdout: IO[str] | None = None) -> None:
        self.generation = generation
        self.stdout = stdout or sys.stdout
        self.result_file: IO[str] | None = None
        self.result_path: str | None = None
        self.open_task: str | None = None
        """The task this run started or follows, until its outcome is known (for Ctrl-C)."""
        self.open_status: str | None = None
        self.shown: dict[str, tuple[str, str | None]] = {}
        """The status and message of each task's last "status" line (one line per change)."""
        self.source: dict[str, Any] = {}
        """``wait``/``result``: where the outcome came from, added to its line (``"source"``:
        ``"journal"`` or ``"server"``; ``"held_by"``: the worker whose lease the wait relied
        on)."""

    def keep_result(self, path: str) -> None:
        """``--output FILE``: the file is opened now (emptied, as a shell's ``>`` does), so a
        path that cannot be written fails before anything starts; the outcome's result is
        written there as one line of wire JSON (what ``--json`` puts in "result")."""
        try:
            self.result_file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - kept open
        except OSError as exc:
            raise UsageError(f"--output: cannot write {path}: {exc.strerror or exc}") from None
        self.result_path = path

    def write_result(self, result: CallToolResult | None) -> int | None:
        """The result into the ``--output`` file: the bytes written, or None (no file, or no
        result: the file is then left empty, and a line on stderr says so)."""
        file = self.result_file
        if file is None:
            return None
        self.result_file = None
        with file:
            if result is None:
                self.warn(f"the task ended with no result: {self.result_path} left empty")
                return None
            file.write(json_line(self.encode(result)))
            file.write("\n")
            return file.tell()

    def encode(self, value: object) -> Any:
        return encode(value, self.generation)

    def emit(self, event: Event) -> None:
        """One JSON line on stdout (no raw control character in it: see ``_safe``)."""
        self.stdout.write(json_line(event) + "\n")
        self.stdout.flush()

    # -- listings --------------------------------------------------------------------------

    def tools(self, tools: Sequence[Tool]) -> None:
        for tool in tools:
            self.emit(
                {
                    "event": "tool",
                    "name": tool.name,
                    "task_support": tool.task_support.value,
                    "tool": self.encode(tool),
                }
            )

    def tasks(self, tasks: Sequence[Task]) -> None:
        for task in tasks:
            self.emit(
                {
                    "event": "task",
                    "task_id": task.task_id,
                    "status": task.status.value,
                    "task": self.encode(task),
                }
            )

    def journaled(self, entries: Sequence[JournalEntry]) -> None:
        """``list --journal``: one "task" line per journal entry (``"journaled": true``)."""
        for entry in entries:
            self.emit(journaled_json(entry))

    def status(self, task: Task) -> None:
        self.emit(
            {
                "event": "status",
                "task_id": task.task_id,
                "status": task.status.value,
                "task": self.encode(task),
            }
        )

    def created(self, task: Task) -> None:
        self.emit(
            {
                "event": "created",
                "task_id": task.task_id,
                "status": task.status.value,
                "task": self.encode(task),
            }
        )

    def cancel(self, task_id: str, task: Task | None) -> None:
        self.emit(
            {
                "event": "cancel",
                "task_id": task_id,
                "status": None if task is None else task.status.value,
                "task": None if task is None else self.encode(task),
            }
        )

    def probe(self, report: ServerProbe, code: ExitCode) -> None:
        self.emit({**probe_json(report), "exit_code": int(code)})

    def rules(self, report: ProbeReport, code: ExitCode) -> None:
        """One ``rule`` line per rule (``rule``, ``level``, ``verdict``, ``evidence``), then a
        ``rules`` summary with the verdict counts and the exit code."""
        for result in report.to_json():
            self.emit({"event": "rule", **result})
        from ..conformance import ProbeVerdict

        counts = {v.value: len(report.with_verdict(v)) for v in ProbeVerdict}
        self.emit(
            {
                "event": "rules",
                "generation": report.generation.value,
                "verdicts": counts,
                "error": report.error,
                "exit_code": int(code),
            }
        )

    # -- outcomes and errors ---------------------------------------------------------------

    def outcome(
        self,
        task_id: str | None,
        outcome: Outcome,
        *,
        code: ExitCode | None = None,
        hint: str | None = None,
        refused: bool = False,
    ) -> ExitCode:
        """The final line of a task (or a plain call); ``code`` where the run reads the
        outcome otherwise than :func:`for_outcome` (input nothing could answer), with a
        ``hint`` (also on stderr); ``refused``: a task call the server answered with an error
        and no task (``"refused": true``)."""
        self.open_task = None
        event = outcome_json(task_id, outcome, self.generation)
        event.update(self.source)
        code = for_outcome(outcome) if code is None else code
        if refused:
            event["refused"] = True
        event["exit_code"] = int(code)
        if hint is not None:
            event["hint"] = hint
        if self.write_result(result_of(outcome)) is not None:
            event["output"] = self.result_path
        self.emit(event)
        if hint is not None:
            self.warn(hint)
        return code

    def lost(self, item: Resumed) -> ExitCode:
        """A task the journal recorded as Lost (``wait``/``result`` read it there)."""
        self.open_task = None
        event, code = resumed_json(item, self.generation_of(item))
        del event["resumed"]
        self.emit({**event, **self.source})
        return code

    def resumed(self, item: Resumed, hint: str | None = None) -> ExitCode:
        """One task of ``resume``, as it ended: its outcome line (``"resumed": true``), or the
        task lost, held by another process, or the error that stopped following it (with a
        ``hint``, also on stderr)."""
        event, code = resumed_json(item, self.generation_of(item))
        if hint is not None:
            event["hint"] = hint
        self.emit(event)
        if hint is not None:
            self.warn(hint)
        return code

    @staticmethod
    def generation_of(item: Resumed) -> Generation:
        return item.entry.generation

    def call_result(self, result: CallToolResult) -> ExitCode:
        from ..outcomes import Completed

        return self.outcome(None, Completed(None, result))

    def error(
        self,
        error: BaseException,
        *,
        task_id: str | None = None,
        last: Task | None = None,
        hint: str | None = None,
        code: ExitCode | None = None,
        waited: bool = False,
    ) -> ExitCode:
        """The run ended with ``error``: the last line says so (the "outcome" when it ended
        the wait on a task, else an "error"), and a readable message goes to stderr."""
        code = for_error(error) if code is None else code
        event: Event = {
            "event": "outcome" if waited else "error",
            "task_id": task_id,
            "status": None if last is None else last.status.value,
            "error": error_json(error),
            "exit_code": int(code),
        }
        if hint is not None:
            event["hint"] = hint
        self.emit(event)
        self.say_error(error, hint)
        return code

    def say_error(self, error: BaseException, hint: str | None) -> None:
        # stderr is often the terminal even in JSON mode (mcp-tasks ... | jq): server text in
        # the message or the hint is shown, never acted on.
        said = for_terminal(f"{type(error).__name__}: {message_of(error)}")
        sys.stderr.write(f"mcp-tasks: {said}\n")
        if hint:
            sys.stderr.write(f"mcp-tasks: {for_terminal(hint)}\n")
        sys.stderr.flush()

    def note(self, text: str) -> None:
        """A remark for a person (stderr on a terminal; nothing in JSON mode)."""

    def warn(self, text: str) -> None:
        """Something a person must know, in every mode: a line on stderr."""
        sys.stderr.write(f"mcp-tasks: {for_terminal(text)}\n")
        sys.stderr.flush()

    def interrupted(
        self, task_id: str | None, status: str | None, cancel: str | None, caveat: str | None
    ) -> None:
        """The run was interrupted (Ctrl-C): a final "interrupted" line on stdout, and on
        stderr what became of the task and the command that cancels it."""
        event: Event = {"event": "interrupted", "task_id": task_id, "status": status}
        if cancel is not None:
            event["cancel"] = cancel
        event["exit_code"] = int(ExitCode.INTERRUPTED)
        try:
            self.emit(event)
        except BrokenPipeError:
            # Ctrl-C at the terminal reached the reader too (`--json | jq`): the line is lost,
            # the hint below is not (stderr is the terminal).
            quiet_stdout()
        for line in interrupt_lines(task_id, cancel, caveat):
            sys.stderr.write(f"mcp-tasks: {for_terminal(line)}\n")
        sys.stderr.flush()

    # -- following a task ------------------------------------------------------------------

    @asynccontextmanager
    async def following(
        self, task_id: str, poller: Poller, *, show: bool = True
    ) -> AsyncIterator[TaskView]:
        """The view of the task followed in the body (on a terminal, the live line)."""
        yield TaskView(
            task_id, lambda: poller.next_poll(task_id), lambda: poller.status_message(task_id)
        )

    def item(self, view: TaskView, item: WatchItem) -> None:
        """A watch item's line; a snapshot's only when its status or status message changed
        (a server may touch ``lastUpdatedAt`` at every poll: fastmcp does)."""
        event = apply_watch_item(view, item, self.generation)
        if isinstance(item, Task):
            said = (item.status.value, item.status_message)
            if self.shown.get(item.task_id) == said:
                return
            self.shown[item.task_id] = said
        self.emit(event)

    async def prompting(self, ask: Callable[[], T]) -> T:
        """Run ``ask`` (a blocking prompt on the terminal) with the display paused."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)


class JsonOutput(Output):
    """JSON lines on stdout, one object per line, each with an "event" key."""


def probe_json(report: ServerProbe) -> Event:
    discover_error = report.discover_error
    initialize_error = report.initialize_error
    return {
        "event": "probe",
        "generations": [g.value for g in report.generations],
        "task_generations": [g.value for g in report.task_generations],
        "versions": list(report.versions),
        "discover": None
        if report.discover is None
        else encode(report.discover, Generation.V2026_07_28),
        "discover_error": None if discover_error is None else error_json(discover_error),
        "initialize": None
        if report.initialize is None
        else encode(report.initialize, Generation.V2025_11_25),
        "initialize_error": None if initialize_error is None else error_json(initialize_error),
    }
