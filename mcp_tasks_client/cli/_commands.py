"""The subcommands: each opens the run's Client (and Poller) and reports what came of it.

:class:`Run` holds one invocation's state and dispatches; each command's own work lives in a
module of its own, imported when that command runs (a script calling ``mcp-tasks status`` in
a loop pays for the status command, not for the Poller, the journal or the conformance kit):
``_call`` (call), ``_follow`` (wait, result), ``_journaled`` (resume, list and wait with
``--journal``), ``_probe`` (probe, conformance-client, explore); the hints of every message
are ``_next_steps``'s.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
from typing import TYPE_CHECKING

import anyio

from .._client import Client
from .._drivers.refusals import error_text, lacks_client_capability
from .._exceptions import (
    InvalidToolAnnotation,
    MCPTasksError,
    TaskNotCancellable,
    TaskNotFound,
)
from ..models import Task
from ._connect import identity_of, make_client
from ._exit import ExitCode
from ._interrupt import Interrupted, cancel_on_interrupt
from ._next_steps import ANSWER_HOW, NextSteps
from ._options import Options
from ._output import Output

if TYPE_CHECKING:
    from ..inputs import InputRouter
    from ..journal import Journal
    from ..outcomes import Outcome
    from ._inputs import Answering, FileAnswers

__all__ = ["OWN_COMMANDS", "Run", "run", "run_own_command"]

OWN_COMMANDS: dict[str, str] = {
    "probe": "._probe:probe",
    "conformance-client": "._probe:conformance_client",
    "explore": "._probe:explore",
}
"""The commands that open no Client of the run's own, each as the ``module:function`` that
runs it (``async def function(run: Run, ns: argparse.Namespace) -> ExitCode``), imported when
that command runs. A new such command is one line here, beside its subparser in ``_options``."""


async def run_own_command(run: Run, command: str, ns: argparse.Namespace) -> ExitCode:
    """The command of ``OWN_COMMANDS``: its module imported now, its function awaited."""
    module, _, name = OWN_COMMANDS[command].partition(":")
    function = getattr(importlib.import_module(module, __package__), name)
    return ExitCode(await function(run, ns))


class Run:
    """One invocation: the options, the output, how input is answered (if at all), and the
    dispatch to each command."""

    def __init__(self, options: Options, output: Output) -> None:
        self.options = options
        self.out = output
        self.next_steps = NextSteps(options)
        self.answering: Answering | None = None
        """How ``--inputs`` answers (None without it)."""
        self.router: InputRouter | None = None
        """The router of the run's one client (every command but ``resume``, which makes one
        per client it opens)."""
        self.answers: FileAnswers | None = None
        self.journal: Journal | None = None
        self.withheld: set[str] = set()
        """Servers of ``resume`` that were not sent the ``--header`` values (said once each)."""
        self.listen_tried = False
        self.journaled: set[str] = set()
        """The tasks this run found in (or recorded to) the journal."""
        self.listen_error: BaseException | None = None
        """Why the server's GET stream did not open (None: it opened, or was not tried)."""

    @functools.cached_property
    def worker(self) -> str:
        """This run's name in the journal: its leases (``resume``) and the input keys it takes."""
        import uuid

        return f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    # -- how a run ends --------------------------------------------------------------------

    def finished(self, task_id: str | None, outcome: Outcome) -> ExitCode:
        """The outcome's line; exit 5 with a hint when it failed for want of input this run
        could not answer (a 2025-11-25 server that asks for elicitation the client did not
        declare fails the task saying so), as when the task waits for input."""
        capability = self.lacking(outcome)
        if capability is None:
            return self.out.outcome(task_id, outcome)
        where = f"task {task_id}" if task_id else "the call"
        hint = (
            f"{where} asked for {capability}, which this run does not offer without --inputs: "
            f"{ANSWER_HOW}"
        )
        return self.out.outcome(task_id, outcome, code=ExitCode.INPUT, hint=hint)

    def lacking(self, outcome: Outcome) -> str | None:
        """The client capability the server said the run lacks, when nothing answers input."""
        if self.router is not None:
            return None
        from ..outcomes import Completed, Failed  # (a command that ends no task loads none)

        said: list[str | None] = []
        if isinstance(outcome, Failed):
            said.append(outcome.task.status_message)
            said.append(outcome.error.message if outcome.error is not None else None)
            said.append(error_text(outcome.result) if outcome.result is not None else None)
        elif isinstance(outcome, Completed) and outcome.result.is_error:
            said.append(error_text(outcome.result))
        return lacks_client_capability(" ".join(s for s in said if s))

    def failed(
        self,
        error: BaseException,
        task_id: str | None = None,
        last: Task | None = None,
        *,
        waited: bool = False,
    ) -> ExitCode:
        stdio = self.options.server.stdio
        unnamed = isinstance(error, OSError) and error.filename is None
        if unnamed and stdio is not None and isinstance(error, FileNotFoundError | PermissionError):
            error = type(error)(error.errno, error.strerror, stdio[0])  # name the command
        journaled = self.options.journal is not None and task_id in self.journaled
        hint = self.next_steps.for_error(
            error,
            task_id,
            last,
            answers=self.answers,
            answered=self.router is not None,
            journaled=journaled,
        )
        return self.out.error(error, task_id=task_id, last=last, hint=hint, waited=waited)

    # -- the run ---------------------------------------------------------------------------

    async def __call__(self, command: str, ns: argparse.Namespace) -> ExitCode:
        try:
            if self.options.inputs is not None:
                from ._inputs import make_answering

                self.answering = make_answering(
                    self.options.inputs, self.options.generation, self.out
                )
                self.answers = self.answering.answers if self.answering is not None else None
            if command in OWN_COMMANDS:
                return await run_own_command(self, command, ns)
            if command == "call":
                from ._call import check_call

                check_call(self, ns)
            with contextlib.ExitStack() as stack:
                if self.options.journal is not None:
                    from ._journal import open_journal

                    self.journal = stack.enter_context(
                        open_journal(self.options.journal, self.options.reconnect)
                    )
                self.router = self.new_router()
                return await self.with_journal(command, ns)
        except (MCPTasksError, OSError) as exc:
            task_id = getattr(ns, "task_id", None)
            return self.failed(exc, task_id)

    async def with_journal(self, command: str, ns: argparse.Namespace) -> ExitCode:
        """The command, its journal (if any) open: what the journal answers itself, else
        the run's Client opened (as the journal's entry says, when it holds the task)."""
        if self.journal is not None:
            from ._journaled import list_journal, resume_all

            if command == "resume":
                return await resume_all(self, getattr(ns, "workers", None), ns.lease)
            if command == "list":
                return await list_journal(self)
        entry = None
        task_id_given: str | None = getattr(ns, "task_id", None)
        if self.journal is not None and task_id_given is not None:
            server = identity_of(self.options.server)
            entry = await self.journal.get(server, task_id_given)
            if entry is not None:
                self.journaled.add(task_id_given)
        if command in ("wait", "result"):
            self.out.source = {"source": "server"}
            if entry is not None and not ns.ask_server:
                from ._journaled import from_journal

                read = await from_journal(self, entry)
                if read is not None:
                    return read
        async with make_client(self.options, self.router, entry) as client:
            if self.router is not None:
                from ._follow import listen_for_input

                self.router.attach(client)
                await listen_for_input(self, client)
            return await self.dispatch(client, command, ns)

    def new_router(self) -> InputRouter | None:
        """A router answering as ``--inputs`` says (None without it), taking each input key in
        the journal first when there is one (answered once across every run sharing it)."""
        if self.answering is None:
            return None
        from ..journal import SharedJournal

        journal = self.journal if isinstance(self.journal, SharedJournal) else None
        return self.answering.router(journal, self.worker)

    async def dispatch(self, client: Client, command: str, ns: argparse.Namespace) -> ExitCode:
        if command == "tools":
            seen = len(client.warnings)
            self.out.tools([tool async for tool in client.list_tools()])
            for warning in list(client.warnings)[seen:]:
                if isinstance(warning, InvalidToolAnnotation):  # left out of the listing
                    self.out.warn(f"tool {warning.tool!r} not listed: {warning.reason}")
            return ExitCode.COMPLETED
        if command == "call":
            from ._call import call

            return await call(self, client, ns)
        if command == "list":
            tasks = [task async for task in client.list_tasks()]
            self.out.tasks(tasks)
            if not tasks and client.driver.unknown_task_hint():
                self.out.warn(
                    f"a {self.options.generation.value} server may list only the tasks of the "
                    "session asking, and this run's is new: tasks started with --journal FILE "
                    "are listed by list --journal FILE"
                )
            return ExitCode.COMPLETED
        task_id: str = ns.task_id
        if command == "status":
            self.out.status(await client.get_task(task_id))
            return ExitCode.COMPLETED
        if command == "cancel":
            return await self.cancel(client, task_id)
        assert command in ("wait", "result"), command
        from ._follow import follow

        return await follow(self, client, task_id, render=command == "wait")

    async def cancel(self, client: Client, task_id: str) -> ExitCode:
        try:
            task = await client.cancel_task(task_id)
        except TaskNotCancellable as exc:
            try:  # -32602: already terminal, or unknown: ask which
                current = await client.get_task(task_id)
            except TaskNotFound as lost:
                return self.failed(lost, task_id)
            hint = f"task {task_id} is already {current.status.value}: nothing to cancel"
            return self.out.error(exc, task_id=task_id, last=current, hint=hint)
        self.out.cancel(task_id, task)
        return ExitCode.COMPLETED


async def run(options: Options, command: str, ns: argparse.Namespace, output: Output) -> ExitCode:
    """The command, cancelled by Ctrl-C (then KeyboardInterrupt is raised here, once
    everything it started has unwound: ``main`` reports it)."""
    interrupted = Interrupted()
    async with anyio.create_task_group() as group:
        work = anyio.CancelScope()
        await group.start(cancel_on_interrupt, work, interrupted)
        code = ExitCode.INTERRUPTED
        with work:
            code = await Run(options, output)(command, ns)
        group.cancel_scope.cancel()
    if interrupted.seen:
        raise KeyboardInterrupt
    return code
