"""The terminal view (rich): tables for listings, a live line while a task runs.

Every string a server supplied reaches the screen through :func:`_safe.for_terminal` (``_t``
below, or ``safe_data`` for JSON shown as JSON): its control characters are shown, not run.

What a run on a terminal loads (issue 34): rich's console and text, which every line shown
needs, and nothing else up front. A table, rich's JSON view, the live line, the tool and
content models and the outcomes are imported by the method that shows one (after the first,
a look-up in ``sys.modules`` beside rendering a line; the live line keeps its table class
for its redraws), so ``mcp-tasks status`` on a terminal loads what its captured run does,
plus this module and rich's console (``tests/test_startup.py`` pins it).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread
from rich.console import Console, RenderableType
from rich.text import Text

from .._drivers import driver_for
from .._exceptions import MCPTasksError
from .._generation import Generation
from ._exit import ExitCode, for_error, for_outcome
from ._output import (
    HELD,
    Output,
    TaskView,
    apply_watch_item,
    error_json,
    interrupt_lines,
    journaled_status,
    result_of,
)
from ._safe import for_terminal, safe_data

if TYPE_CHECKING:  # each imported by the commands that use it alone (``status`` none)
    from rich.live import Live
    from rich.table import Table

    from ..conformance import ProbeReport
    from ..engine import Poller, WatchItem
    from ..journal import JournalEntry
    from ..models import CallToolResult, Task, Tool
    from ..outcomes import Outcome
    from ..probe import ServerProbe
    from ..resume import Resumed

__all__ = ["RichOutput"]

T = TypeVar("T")

STYLES = {
    "working": "yellow",
    "input_required": "magenta",
    "completed": "green",
    "failed": "red",
    "cancelled": "dim",
}
REFRESH = 0.1  # seconds between redraws of the live line
SHOWN_CHARS = 256 * 1024
"""How much of a result the terminal shows (characters of text, or of JSON for other
blocks); the rest is left out with a note (``--output FILE`` and ``--json`` have it all)."""


def _t(text: str, style: str = "") -> Text:
    """Server text as rich Text, its control characters shown, not run."""
    return Text(for_terminal(text), style=style)


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f}s"
    minutes, seconds = divmod(int(value), 60)
    return f"{minutes}m{seconds:02d}s"


class _LiveLine:
    """The live line: spinner, task, status, message, elapsed, next poll, progress."""

    def __init__(self, view: TaskView) -> None:
        # (the commands that follow a task alone come here; the table class is kept for the
        # redraws, ten a second)
        from rich.spinner import Spinner
        from rich.table import Table

        self.view = view
        self.spinner = Spinner("dots")
        self.table: type[Table] = Table
        self.next_poll: float | None = None  # read in the event loop (the Poller's clock)
        self.done = False

    def __rich__(self) -> RenderableType:
        view = self.view
        grid = self.table.grid(padding=(0, 1))
        status = view.status or "?"
        line: list[RenderableType] = [
            Text("•") if self.done else self.spinner,
            _t(view.task_id, style="bold"),
            _t(status, style=STYLES.get(status, "")),
        ]
        if view.message:
            line.append(_t(f"- {view.message}", style="italic"))
            if view.message_carried is not None and view.message_since is not None:
                said = f"(said while {view.message_carried}, {_clock(view.message_since)})"
                line.append(Text(said, style="dim"))
            elif view.message_since is not None:
                line.append(Text(f"(since {_clock(view.message_since)})", style="dim"))
        line.append(Text(f"elapsed {_seconds(view.elapsed)}", style="dim"))
        if self.next_poll is not None:
            when = "polling" if self.next_poll <= 0 else f"next poll {_seconds(self.next_poll)}"
            line.append(Text(when, style="dim"))
        if view.progress is not None:
            total = view.total
            from rich.progress_bar import ProgressBar

            line.append(ProgressBar(total=total, completed=view.progress, width=24))
            shown = f"{view.progress:g}" + (f"/{total:g}" if total is not None else "")
            line.append(Text(shown))
            if view.progress_message:
                line.append(_t(view.progress_message, style="dim"))
        if view.last_input:
            line.append(_t(f"[{view.last_input}]", style="magenta"))
        grid.add_row(*line)
        return grid


class RichOutput(Output):
    """Human output on a terminal: stdout for results, stderr for errors and remarks."""

    def __init__(self, generation: Generation) -> None:
        super().__init__(generation)
        self.console = Console(highlight=False)
        self.errors = Console(stderr=True, highlight=False)
        self._live: Live | None = None
        self._prompt_lock = anyio.Lock()

    # -- listings --------------------------------------------------------------------------

    def tools(self, tools: Sequence[Tool]) -> None:
        from rich.table import Table

        table = Table("tool", "task support", "description", box=None, header_style="bold")
        driver = driver_for(self.generation)
        for tool in tools:
            # Where the listing does not say (2026-07-28: the server decides per call, E 4):
            # "unknown", never "forbidden".
            said = driver.task_support(tool)
            support = "unknown" if said is None else said.value
            table.add_row(_t(tool.name), support, _t(tool.description or ""))
        self.console.print(table)

    def tasks(self, tasks: Sequence[Task]) -> None:
        if not tasks:
            self.console.print("no tasks")
            return
        from rich.table import Table

        table = Table("task", "status", "message", "created", box=None, header_style="bold")
        for task in tasks:
            status = task.status.value
            table.add_row(
                _t(task.task_id),
                _t(status, style=STYLES.get(status, "")),
                _t(task.status_message or ""),
                task.created_at.isoformat(timespec="seconds"),
            )
        self.console.print(table)

    def journaled(self, entries: Sequence[JournalEntry]) -> None:
        if not entries:
            return  # the run says so (a note)
        from rich.table import Table

        table = Table("task", "status", "tool", "server", "created", box=None, header_style="bold")
        for entry in entries:
            status = journaled_status(entry)
            table.add_row(
                _t(entry.task_id),
                _t(status, style=STYLES.get(status, "")),
                _t(entry.tool),
                _t(entry.server),
                entry.created_at.isoformat(timespec="seconds"),
            )
        self.console.print(table)

    def _task_line(self, task: Task, prefix: str = "") -> None:
        status = task.status.value
        text = Text(prefix)
        text.append(for_terminal(task.task_id), style="bold")
        text.append(" ")
        text.append(status, style=STYLES.get(status, ""))
        if task.status_message:
            text.append(for_terminal(f" - {task.status_message}"), style="italic")
        self.console.print(text)

    def status(self, task: Task) -> None:
        self._task_line(task)

    def created(self, task: Task) -> None:
        self._task_line(task, "task created: ")

    def cancel(self, task_id: str, task: Task | None) -> None:
        if task is None:
            self.console.print(_t(f"cancel of {task_id} requested (acknowledged)"))
        else:
            self._task_line(task, "cancelled: ")

    def rules(self, report: ProbeReport, code: ExitCode) -> None:
        from rich.table import Table

        table = Table("rule", "level", "verdict", "evidence", box=None, header_style="bold")
        styles = {"pass": "green", "fail": "bold red", "warn": "yellow", "not_applicable": "dim"}
        for result in report.results:
            verdict = result.verdict.value
            table.add_row(
                Text(result.rule.id),
                Text(result.rule.level.value),
                Text(verdict, style=styles.get(verdict, "")),
                _t(result.evidence),
            )
        self.console.print(table)
        from ..conformance import ProbeVerdict

        counts = ", ".join(f"{len(report.with_verdict(v))} {v.value}" for v in ProbeVerdict)
        self.console.print(Text(f"{report.generation.value}: {counts}", style="bold"))

    def probe(self, report: ServerProbe, code: ExitCode) -> None:
        from rich.table import Table

        table = Table(box=None, show_header=False)
        table.add_row("generations", ", ".join(g.value for g in report.generations) or "none")
        table.add_row(
            "runs tasks in", ", ".join(g.value for g in report.task_generations) or "none"
        )
        table.add_row("versions", _t(", ".join(report.versions) or "none"))
        if report.initialize is not None:
            info = report.initialize.server_info
            table.add_row("initialize", _t(f"{info.name} {info.version}"))
        else:
            table.add_row("initialize", _t(str(report.initialize_error), style="dim"))
        if report.discover is not None:
            name = (report.discover.server_info or {}).get("name")
            table.add_row("server/discover", _t(f"{name or '?'}"))
        else:
            table.add_row("server/discover", _t(str(report.discover_error), style="dim"))
        self.console.print(table)

    # -- outcomes and errors ---------------------------------------------------------------

    def _content(self, result: CallToolResult) -> None:
        """The result's content on the terminal: text blocks as text, others as JSON, in
        linear time (soft wrap: the terminal wraps the lines, rich does not re-flow them), and
        no more than :data:`SHOWN_CHARS` characters of it; past that, a note says what was
        left out and how to get it all."""
        from rich.json import JSON

        from ..models import TextContent  # (a result shown: a status shows none)

        pieces: list[tuple[str, bool]] = []  # (what to show, shown as JSON)
        for block in result.content:
            if isinstance(block, TextContent):
                pieces.append((block.text, False))
            else:
                pieces.append((_json_text(self.encode(block)), True))
        if result.structured_content is not None and not any(
            isinstance(b, TextContent) for b in result.content
        ):
            pieces.append((_json_text(result.structured_content), True))
        budget = SHOWN_CHARS
        total = sum(len(text) for text, _ in pieces)
        for text, as_json in pieces:
            if budget <= 0:
                break
            head = text[:budget]
            budget -= len(head)
            if as_json and len(head) == len(text):
                self.console.print(JSON(head), soft_wrap=True)
            else:
                self.console.print(_t(head), soft_wrap=True)
        if total > SHOWN_CHARS:
            left = total - SHOWN_CHARS
            self.console.print(
                Text(
                    f"... {left:,} more characters not shown (the first {SHOWN_CHARS:,} of "
                    f"{total:,}): --output FILE writes the whole result (or --json)",
                    style="yellow",
                ),
                soft_wrap=True,
            )

    def outcome(
        self,
        task_id: str | None,
        outcome: Outcome,
        *,
        code: ExitCode | None = None,
        hint: str | None = None,
        refused: bool = False,
    ) -> ExitCode:
        from ..outcomes import Cancelled, Completed, Expired, Failed  # (a status has none)

        self.open_task = None
        code = for_outcome(outcome) if code is None else code
        head = Text()
        if refused:  # not "completed": the line above says the server refused the call
            head.append("refused", style="bold red")
            head.append(": no task was made; the server's answer:")
        elif isinstance(outcome, Completed):
            head.append("completed", style="bold green")
            if outcome.result.is_error:
                head.append(" (the tool reports an error: isError)", style="red")
        elif isinstance(outcome, Failed):
            head.append("failed", style="bold red")
            if outcome.error is not None:
                said = f": {outcome.error.message} (JSON-RPC {outcome.error.code})"
                head.append(for_terminal(said))
            elif outcome.task.status_message:
                head.append(for_terminal(f": {outcome.task.status_message}"))
        elif isinstance(outcome, Cancelled):
            head.append("cancelled", style="bold")
            if outcome.task.status_message:
                head.append(for_terminal(f": {outcome.task.status_message}"))
        else:
            assert isinstance(outcome, Expired)
            head.append("expired", style="bold red")
            head.append(f": the task's ttl ran out at {outcome.expired_at.isoformat()}")
        if task_id is not None:
            head.append(for_terminal(f"  [{task_id}]"), style="dim")
        self.console.print(head)
        result = result_of(outcome)
        if self.result_file is not None:
            written = self.write_result(result)
            if written is not None:
                self.console.print(_t(f"result written to {self.result_path} ({written:,} bytes)"))
        elif result is not None:
            self._content(result)
        if hint is not None:
            self.warn(hint)
        return code

    def lost(self, item: Resumed) -> ExitCode:
        self.open_task = None
        return self.resumed(item)

    def resumed(self, item: Resumed, hint: str | None = None) -> ExitCode:
        entry, ended = item.entry, item.ended
        from ..outcomes import Lost  # (resume's commands alone come here)

        self.console.print(_t(f"{entry.tool} on {entry.server}", style="dim"))
        if isinstance(ended, Lost):
            text = Text("lost", style="bold red")
            text.append(for_terminal(f": {ended.reason}  [{entry.task_id}]"))
            self.console.print(text)
            return ExitCode.LOST
        from ..resume import Held  # (resume's commands alone come here)

        if isinstance(ended, Held):
            self.console.print(_t(f"held elsewhere: {HELD}  [{entry.task_id}]"))
            return ExitCode.COMPLETED
        if isinstance(ended, MCPTasksError):
            return self.error(ended, task_id=entry.task_id, hint=hint)
        return self.outcome(entry.task_id, ended, hint=hint)

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
        code = for_error(error) if code is None else code
        self.say_error(error, hint)
        return code

    def say_error(self, error: BaseException, hint: str | None) -> None:
        detail = error_json(error)
        text = Text("error: ", style="bold red")
        text.append(for_terminal(f"{detail['type']}: {detail['message']}"))
        self.errors.print(text)
        if hint:
            self.errors.print(_t(hint, style="yellow"))

    def note(self, text: str) -> None:
        self.errors.print(_t(text, style="dim"))

    def interrupted(
        self, task_id: str | None, status: str | None, cancel: str | None, caveat: str | None
    ) -> None:
        live, self._live = self._live, None
        if live is not None:  # a second Ctrl-C cut the unwinding short: end the line first
            live.stop()
        for line in interrupt_lines(task_id, cancel, caveat):
            self.errors.print(_t(line, style="yellow"), soft_wrap=True)

    def warn(self, text: str) -> None:
        self.errors.print(_t(text, style="yellow"))

    # -- following a task ------------------------------------------------------------------

    @asynccontextmanager
    async def following(
        self, task_id: str, poller: Poller, *, show: bool = True
    ) -> AsyncIterator[TaskView]:
        view = TaskView(
            task_id, lambda: poller.next_poll(task_id), lambda: poller.status_message(task_id)
        )
        if not show:
            yield view
            return
        from rich.live import Live

        line = _LiveLine(view)
        live = Live(
            line, console=self.console, auto_refresh=False, transient=False, redirect_stderr=False
        )

        async def tick() -> None:
            while True:
                line.next_poll = view.next_poll()
                if self._live is live:
                    live.refresh()
                await anyio.sleep(REFRESH)

        self._live = live
        live.start()
        # Entered by hand, like the Poller's: the body's exception is not the ticker's, and
        # must not come out wrapped in an ExceptionGroup.
        group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(tick)
        try:
            yield view
        finally:
            try:
                group.cancel_scope.cancel()
                await group.__aexit__(None, None, None)  # raises Cancelled under Ctrl-C
            finally:
                # The live line ends (its newline written) whatever the unwinding: what comes
                # next ("interrupted: ...") starts a line of its own, not over the spinner's.
                line.next_poll = None
                line.done = True
                self._live = None
                live.refresh()
                live.stop()

    def item(self, view: TaskView, item: WatchItem) -> None:
        from ..inputs import InputEvent, InputEventKind  # (a followed task's items alone)

        apply_watch_item(view, item, self.generation)
        settled = isinstance(item, InputEvent) and item.kind is not InputEventKind.ARRIVED
        if settled and self._live is not None:  # what became of a question stays on screen
            assert isinstance(item, InputEvent)
            self._live.console.print(_t(f"input {item.kind.value}: {item.method}", style="magenta"))
        if self._live is not None:
            self._live.refresh()

    async def prompting(self, ask: Callable[[], T]) -> T:
        async with self._prompt_lock:
            live = self._live
            self._live = None
            if live is not None:
                live.stop()
            try:
                return await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)
            finally:
                if live is not None:
                    live.start()
                    self._live = live


def _json_text(value: object) -> str:
    """Server JSON to show on the terminal: indented, every string in it made safe."""
    return json.dumps(safe_data(value), indent=2, ensure_ascii=False)


def _clock(when: dt.datetime) -> str:
    """A wall-clock time in the terminal's local zone, to the second."""
    return when.astimezone().strftime("%H:%M:%S")
