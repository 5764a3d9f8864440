"""The next step a failed run's message names: the command or option that gets past it.

Each first mistake (issue 34) ends with one: a task id the server does not know (``--journal``
for a 2025-11-25 task), a URL's path nothing answers at, a generation the server runs no tasks
in (``probe``, ``--generation``), input nothing answers (``--inputs``), a deadline reached (the
task keeps running: the command that cancels it), a server down while the journal keeps the
task (``resume``). The text only: imports nothing a command would not load anyway.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .._drivers import driver_for
from .._exceptions import (
    CapabilityNotNegotiated,
    DeadlineExceeded,
    HTTPStatusError,
    InputNotHandled,
    InputRequired,
    RequestTimeout,
    TaskNotFound,
    TransportError,
)
from .._generation import Generation
from ._interrupt import cancel_command
from ._journal import journal_name
from ._options import Options

if TYPE_CHECKING:
    from ..models import Task
    from ._inputs import FileAnswers

__all__ = ["ANSWER_HOW", "CONNECTION_ERRORS", "NextSteps"]

ANSWER_HOW = "use --inputs FILE.json or --inputs interactive"
PROBE_STATUSES = frozenset({400, 404, 405, 406, 415})
"""HTTP statuses with which a server may refuse a generation it does not speak (a 2025-11-25
server asked without a session: 400 "Missing session ID")."""
CONNECTION_ERRORS = (TransportError, RequestTimeout, OSError)
"""Errors after which the server may answer again later (down, unreachable, no answer)."""


class NextSteps:
    """The hints of one run's messages, from its options (header values never printed). (A
    plain class, one per run: an attrs class compiles its generated methods on every
    command's start, issue 34.)"""

    __slots__ = ("_options",)

    def __init__(self, options: Options) -> None:
        self._options = options

    @property
    def options(self) -> Options:
        """The run's options (read-only)."""
        return self._options

    def for_error(
        self,
        error: BaseException,
        task_id: str | None,
        last: Task | None,
        *,
        answers: FileAnswers | None,
        answered: bool,
        journaled: bool,
    ) -> str | None:
        """The hint for ``error`` (None: the message says it all). ``answers``: the
        ``--inputs`` file's; ``answered``: something answers input; ``journaled``: the task
        is in the run's journal."""
        if isinstance(error, (InputNotHandled, InputRequired)):
            return self.input_hint(task_id, answers, answered=answered)
        if isinstance(error, TaskNotFound) and task_id is not None:
            return self.lost_hint(task_id)
        if isinstance(error, HTTPStatusError) and error.status_code == 404:
            return self.path_hint()
        if isinstance(error, HTTPStatusError) and error.status_code in PROBE_STATUSES:
            return self.probe_hint()
        if isinstance(error, CapabilityNotNegotiated) and error.capability.startswith("tasks"):
            return self.generation_hint()
        journal = self.options.journal
        if journaled and isinstance(error, CONNECTION_ERRORS):
            return (
                f"task {task_id} is still in the journal {journal_name(journal or '')}: once the "
                f"server answers again, `{self.journal_command('resume')}` follows it (or "
                "wait with the same --journal)"
            )
        stdio = self.options.server.stdio
        if isinstance(error, FileNotFoundError | PermissionError) and stdio is not None:
            return f"--stdio runs {stdio[0]!r}: is it installed, and on PATH (or a path to it)?"
        if isinstance(error, DeadlineExceeded):
            status = last.status.value if last is not None else "unknown"
            keeps = f" ({cancel_command(self.options, task_id)})" if task_id else ""
            limit = self.options.deadline
            reached = "the deadline" if limit is None else f"--deadline {limit:g}s"
            return (
                f"{reached} reached with the task {status}; it keeps running on the server{keeps}"
            )
        return None

    def input_hint(
        self, task_id: str | None, answers: FileAnswers | None, *, answered: bool
    ) -> str:
        where = f"task {task_id}" if task_id else "the call"
        if answers is not None and answers.unanswered:
            missed = "; ".join(answers.unanswered)
            return (
                f"{where} asked for input; {answers.path} has no answer for {missed}: "
                "add one to the file, or use --inputs interactive"
            )
        if not answered:
            still = (
                f" (it still waits on the server: {cancel_command(self.options, task_id)})"
                if task_id
                else ""
            )
            return f"{where} needs input and nothing answers it: {ANSWER_HOW}{still}"
        return f"{where} asked for input that was not answered: {ANSWER_HOW}"

    def lost_hint(self, task_id: str) -> str:
        hint = f"the server does not know task {task_id}: an unknown id, or expired and deleted"
        driver = driver_for(self.options.generation)
        if not driver.tasks_bound_to_session:
            return hint
        hint = (
            hint
            + driver.unknown_task_hint()
            + ", and each mcp-tasks run opens a new session (over --stdio, a new server process)"
        )
        if self.options.journal is None and self.options.server.url is not None:
            hint += (
                "; start the task with --journal FILE and give the same --journal to status, "
                "wait, result and cancel: the journal keeps the session"
            )
        return hint

    def server_words(self) -> list[str]:
        """``mcp-tasks`` and the run's server options (header values never printed)."""
        words = ["mcp-tasks"]
        server = self.options.server
        if server.url is not None:
            words += ["--url", server.url]
            for name, _ in server.headers:
                words += ["--header", f"{name}: <value>"]
        else:
            assert server.stdio is not None
            words += ["--stdio", shlex.join(server.stdio)]
        return words

    def generation_words(self) -> list[str]:
        return ["--generation", self.options.generation.value]

    def journal_command(self, command: str) -> str:
        words = ["mcp-tasks", "--journal", self.options.journal or "FILE", command]
        return shlex.join(words)

    def probe_hint(self) -> str:
        """Where the server may not speak the generation asked for: the command that says."""
        generation = self.options.generation.value
        return (
            f"if the server does not speak {generation} (--generation), "
            f"`{shlex.join([*self.server_words(), 'probe'])}` says which generations it does"
        )

    def path_hint(self) -> str:
        """HTTP 404: most likely the URL's path, not the generation."""
        url = self.options.server.url or ""
        where = urlsplit(url)
        return (
            f"nothing answers at the path {where.path or '/'!r} of {where.netloc}: is the URL's "
            "path right? (MCP servers commonly serve at /mcp)"
        )

    def generation_hint(self) -> str:
        """A server that runs no tasks in the generation asked for may in the other one."""
        asked = self.options.generation
        others = [g.value for g in Generation if g is not asked]
        probe = shlex.join([*self.server_words(), "probe"])
        return (
            f"the server runs no tasks in {asked.value} (--generation, default 2025-11-25): "
            f"`{probe}` says which generations it speaks; then add "
            + " or ".join(f"--generation {g}" for g in others)
        )
