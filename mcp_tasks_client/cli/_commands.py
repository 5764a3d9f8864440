"""The subcommands: each opens the run's Client (and Poller) and reports what came of it."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from urllib.parse import urlsplit

import anyio

from .._client import Client, Timeouts
from .._drivers import driver_for
from .._drivers.refusals import error_text, lacks_client_capability
from .._exceptions import (
    BackedOff,
    CapabilityNotNegotiated,
    DeadlineExceeded,
    GetStreamUnavailable,
    HTTPStatusError,
    InputNotHandled,
    InputRequired,
    InvalidToolAnnotation,
    MCPTasksError,
    RequestTimeout,
    TaskNotCancellable,
    TaskNotFound,
    TransportError,
    UnexpectedPlainResult,
    UnsupportedInGeneration,
    UsageError,
)
from .._generation import Generation
from .._io.base import Transport
from .._io.http import HttpTransport
from ..builders import TaskHandle, ToolCall
from ..engine import WatchItem
from ..inputs import InputRouter
from ..journal import (
    Journal,
    JournalEntry,
    SharedJournal,
    WatchedJournal,
    outcome_of,
    wait_in_journal,
)
from ..models import CallToolResult, ClientCapabilities, CreateTaskResult, Task, TaskStatus
from ..outcomes import Completed, Failed, Lost, Outcome
from ..resume import Resumed, client_for, resume
from ._connect import (
    client_info,
    identity_of,
    make_client,
    make_policy,
    make_poller,
    make_transport,
)
from ._exit import ExitCode, for_error
from ._inputs import Answering, FileAnswers, make_answering
from ._interrupt import Interrupted, cancel_command, cancel_on_interrupt
from ._journal import journal_name, open_journal
from ._options import CallArgs, Options, call_args
from ._output import Output

__all__ = ["run"]

ANSWER_HOW = "use --inputs FILE.json or --inputs interactive"
PROBE_STATUSES = frozenset({400, 404, 405, 406, 415})
"""HTTP statuses with which a server may refuse a generation it does not speak (a 2025-11-25
server asked without a session: 400 "Missing session ID")."""
CONNECTION_ERRORS = (TransportError, RequestTimeout, OSError)
"""Errors after which the server may answer again later (down, unreachable, no answer)."""


class Run:
    """One invocation: the options, the output, and how input is answered (if at all)."""

    def __init__(self, options: Options, output: Output) -> None:
        self.options = options
        self.out = output
        self.answering: Answering | None = None
        """How ``--inputs`` answers (None without it)."""
        self.router: InputRouter | None = None
        """The router of the run's one client (every command but ``resume``, which makes one
        per client it opens)."""
        self.answers: FileAnswers | None = None
        self.journal: Journal | None = None
        self.worker = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """This run's name in the journal: its leases (``resume``) and the input keys it takes."""
        self.withheld: set[str] = set()
        """Servers of ``resume`` that were not sent the ``--header`` values (said once each)."""
        self.listen_tried = False
        self.journaled: set[str] = set()
        """The tasks this run found in (or recorded to) the journal."""
        self.listen_error: TransportError | RequestTimeout | None = None
        """Why the server's GET stream did not open (None: it opened, or was not tried)."""

    # -- hints -----------------------------------------------------------------------------

    def input_hint(self, task_id: str | None) -> str:
        where = f"task {task_id}" if task_id else "the call"
        if self.answers is not None and self.answers.unanswered:
            missed = "; ".join(self.answers.unanswered)
            return (
                f"{where} asked for input; {self.answers.path} has no answer for {missed}: "
                "add one to the file, or use --inputs interactive"
            )
        if self.router is None:
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

    def hint_for(self, error: BaseException, task_id: str | None, last: Task | None) -> str | None:
        if isinstance(error, (InputNotHandled, InputRequired)):
            return self.input_hint(task_id)
        if isinstance(error, TaskNotFound) and task_id is not None:
            return self.lost_hint(task_id)
        if isinstance(error, HTTPStatusError) and error.status_code == 404:
            return self.path_hint()
        if isinstance(error, HTTPStatusError) and error.status_code in PROBE_STATUSES:
            return self.probe_hint()
        if isinstance(error, CapabilityNotNegotiated) and error.capability.startswith("tasks"):
            return self.generation_hint()
        journal = self.options.journal
        kept = journal is not None and task_id is not None and task_id in self.journaled
        if kept and isinstance(error, CONNECTION_ERRORS):
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
        hint = self.hint_for(error, task_id, last)
        return self.out.error(error, task_id=task_id, last=last, hint=hint, waited=waited)

    # -- the run ---------------------------------------------------------------------------

    async def __call__(self, command: str, ns: argparse.Namespace) -> ExitCode:
        try:
            self.answering = make_answering(self.options.inputs, self.options.generation, self.out)
            self.answers = self.answering.answers if self.answering is not None else None
            if command == "probe":
                return await self.probe(ns)
            if command == "conformance-client":
                return await self.conformance_client(ns)
            if command == "explore":
                return await self.explore(ns)
            if command == "call":
                self.check_call(ns)
            with contextlib.ExitStack() as stack:
                if self.options.journal is not None:
                    self.journal = stack.enter_context(
                        open_journal(self.options.journal, self.options.reconnect)
                    )
                self.router = self.new_router()
                if command == "resume":
                    return await self.resume(getattr(ns, "workers", None), ns.lease)
                if command == "list" and self.journal is not None:
                    return await self.list_journal()
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
                        read = await self.from_journal(entry)
                        if read is not None:
                            return read
                async with make_client(self.options, self.router, entry) as client:
                    if self.router is not None:
                        self.router.attach(client)
                        await self.listen_for_input(client)
                    return await self.dispatch(client, command, ns)
        except (MCPTasksError, OSError) as exc:
            task_id = getattr(ns, "task_id", None)
            return self.failed(exc, task_id)

    def new_router(self) -> InputRouter | None:
        """A router answering as ``--inputs`` says (None without it), taking each input key in
        the journal first when there is one (answered once across every run sharing it)."""
        if self.answering is None:
            return None
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
            return await self.call(client, ns)
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
        return await self.follow(client, task_id, render=command == "wait")

    async def probe(self, ns: argparse.Namespace) -> ExitCode:
        """Which generations the server speaks; then, when it speaks ``--generation``, one
        verdict per rule of that generation (the conformance probe): exit 1 if any fails."""
        # Imported here: the other commands never load the conformance kit.
        from ..conformance import ProbeVerdict
        from ..conformance import probe as conformance_probe
        from ..probe import probe_server

        options = self.options
        report = await probe_server(
            lambda: make_transport(options.server),
            client_info=client_info(options),
            timeout=options.timeout,
        )
        code = ExitCode.COMPLETED
        if not report.generations:
            said = (report.initialize_error, report.discover_error)
            errors = [e for e in said if e is not None]
            codes = [for_error(e) for e in errors]
            code = ExitCode.CONNECTION if ExitCode.CONNECTION in codes else ExitCode.PROTOCOL
        self.out.probe(report, code)
        if code is not ExitCode.COMPLETED:
            self.out.note("the server answered neither generation's opening")
            return code
        if options.generation not in report.generations:
            self.out.note(
                f"the server does not speak {options.generation.value}: no rules checked "
                "(choose --generation from the generations above)"
            )
            return code
        # A URL goes to the probe as a URL: the checks of a session of its own (V-27) need
        # it, and the Python API reaches them with one (issue 23).
        server = options.server
        target: str | Callable[[], Transport] = (
            server.url if server.url is not None else lambda: make_transport(server)
        )
        rules = await conformance_probe(
            target,
            options.generation,
            headers=dict(server.headers) if server.url is not None else None,
            safe_tools=dict(ns.safe_tool),
            negative=ns.negative,
            client_info=client_info(options),
            timeout=options.timeout,
        )
        failed = rules.with_verdict(ProbeVerdict.FAIL)
        code = ExitCode.FAILED if failed else ExitCode.COMPLETED
        self.out.rules(rules, code)
        return code

    async def conformance_client(self, ns: argparse.Namespace) -> ExitCode:
        """``conformance-client``: its scripted servers come from the ``testing`` extra
        (hypothesis), imported only for this command; without the extra, a usage error naming
        it (the other commands never need it)."""
        try:
            from ._conformance_client import conformance_client
        except ModuleNotFoundError as exc:
            if exc.name != "hypothesis":
                raise
            raise UsageError(
                "conformance-client needs the `testing` extra: "
                "pip install 'mcp-tasks-client[testing]'"
            ) from None
        json_lines = self.options.json or not sys.stdout.isatty()
        return await conformance_client(ns, self.options.timeout, json_lines=json_lines)

    async def explore(self, ns: argparse.Namespace) -> ExitCode:
        """``explore``: needs the ``testing`` extra (hypothesis), imported only for it."""
        try:
            from ._explore import explore
        except ModuleNotFoundError as exc:
            if exc.name != "hypothesis":
                raise
            raise UsageError(
                "explore needs the `testing` extra: pip install 'mcp-tasks-client[testing]'"
            ) from None
        return await explore(ns, self.options)

    def check_call(self, ns: argparse.Namespace) -> None:
        """What the generation refuses of a call, in the command line's words, before anything
        is sent; and, for a task not waited on, whether a later run can reach it."""
        args = call_args(ns)
        generation = self.options.generation.value
        driver = driver_for(self.options.generation)
        if args.ttl is not None:
            ttl_ms = int(args.ttl.total_seconds() * 1000)
            try:
                driver.task_call_params({}, ttl_ms)
            except UsageError:
                raise UsageError(
                    f"--ttl: a {generation} client cannot ask for a ttl (the server picks how "
                    "long it keeps a task): drop --ttl"
                ) from None
        if not args.task or args.wait:
            return
        if self.options.server.stdio is not None:  # a journal cannot keep a process
            self.out.warn(
                "over --stdio the server process ends with this run, and its tasks with it: "
                "add --wait to follow the task to its end"
            )
        elif self.options.journal is None and driver.unknown_task_hint():
            self.out.warn(
                f"a {generation} server may bind the task to this run's session, which "
                "ends with this run: later status, wait, result and cancel may not find "
                "it; add --journal FILE to keep the session (or --wait)"
            )

    async def call(self, client: Client, ns: argparse.Namespace) -> ExitCode:
        args = call_args(ns)
        call = await self.related(client, ToolCall(args.tool, args.arguments), args)
        timeout = self.options.timeout
        if not args.task:
            result = await client.call_tool(call, timeout=timeout, inputs=self.router)
            return self.finished(None, Completed(None, result))
        task_call = call.as_task(args.ttl)
        if args.wait:
            # Ask for the task's progress to show it, where the generation reports it by token.
            token = f"mcp-tasks-{uuid.uuid4().hex}"
            task_call = client.driver.with_task_progress(task_call, token)
        try:
            started = await client.start(
                task_call, timeout=timeout, inputs=self.router, journal=self.journal
            )
        except UnexpectedPlainResult as exc:  # 2025-11-25: refused in an isError result
            if not exc.refused or not isinstance(exc.result, CallToolResult):
                raise
            return self.refused(args.tool, exc.result)
        if isinstance(started, CallToolResult):  # 2026-07-28: the server answered inline
            if started.is_error:
                return self.refused(args.tool, started)
            self.out.note("the server ran the call inline: no task was made")
            return self.out.outcome(None, Completed(None, started))
        self.out.created(started.task)
        if self.journal is not None:
            self.journaled.add(started.task.task_id)
        self.out.open_task, self.out.open_status = started.task.task_id, started.task.status.value
        if not args.wait:
            return ExitCode.COMPLETED
        return await self.follow(client, started, render=True)

    async def related(self, client: Client, call: ToolCall, args: CallArgs) -> ToolCall:
        """``call`` naming the ``--related`` ids: each as its journal entry for this server
        when the journal holds one (the Client checks the server), else as the bare id (which
        the Client refuses, UnknownRelatedTask, unless ``--related-from-elsewhere``)."""
        if args.related_from_elsewhere:
            return call.related_to(*args.related, from_elsewhere=True)
        named: list[TaskHandle] = []
        for task_id in args.related:
            entry = None
            if self.journal is not None:
                entry = await self.journal.get(client.transport.identity, task_id)
            named.append(task_id if entry is None else entry)
        return call.related_to(*named)

    def refused(self, tool: str, result: CallToolResult) -> ExitCode:
        """A task call answered with an error and no task (a misspelt tool, arguments the tool
        refuses): the server's reason on stderr, the result as the outcome, exit 1 (the same
        in both generations)."""
        said = error_text(result) or "(no text)"
        self.out.warn(f"the server refused the call of {tool!r} and made no task: {said}")
        hint = None
        if tool in said:  # the server names the tool it does not know (both peers do)
            listing = shlex.join([*self.server_words(), *self.generation_words(), "tools"])
            hint = f"is {tool!r} the tool's name? `{listing}` lists the server's tools"
        return self.out.outcome(None, Completed(None, result), hint=hint, refused=True)

    def generation_words(self) -> list[str]:
        return ["--generation", self.options.generation.value]

    async def listen(self, client: Client) -> None:
        """2025-11-25 over HTTP: open the server's standalone GET stream, once per run (when
        the server offers one); what kept it from opening is kept in ``listen_error``."""
        if self.listen_tried or not isinstance(client.transport, HttpTransport):
            return
        self.listen_tried = True
        try:
            await client.open_listen_stream(timeout=self.options.timeout)
        except UnsupportedInGeneration:
            return  # the generation has no such stream (its status comes by listen)
        except (GetStreamUnavailable, TransportError, RequestTimeout) as exc:
            self.listen_error = exc

    async def listen_for_input(self, client: Client) -> None:
        """With ``--inputs``: the GET stream is open before the first call, so a question the
        server sends there as soon as it has made a task (fastmcp does, untagged) is heard:
        a server sends nothing on a stream that is not open. A server that offers none
        (HTTP 405) asks elsewhere, so only another failure is worth a note."""
        await self.listen(client)
        error = self.listen_error
        if error is not None and not isinstance(error, GetStreamUnavailable):
            self.out.note(
                f"questions the server sends on its GET stream go unanswered: it did not open "
                f"({error})"
            )

    async def listen_for_progress(self, client: Client) -> None:
        """2025-11-25 over HTTP: a task's progress and status notifications come on the
        standalone GET stream, which is opened (when the server offers one) to show them."""
        await self.listen(client)
        if self.listen_error is not None:
            self.out.note(
                f"no progress shown: the server's GET stream did not open ({self.listen_error})"
            )

    async def from_journal(self, entry: JournalEntry) -> ExitCode | None:
        """``wait``/``result`` of a journaled task: its outcome from the journal, when it holds
        one or a live worker holds the task (waiting for it there: the server is not asked);
        None when no live worker holds it (the server is asked, as without a journal)."""
        journal = self.journal
        if not isinstance(journal, WatchedJournal):
            return None
        task_id = entry.task_id
        self.out.open_task = task_id
        try:
            found = await wait_in_journal(
                journal, entry.server, task_id, timeout=self.options.deadline
            )
        except DeadlineExceeded as exc:
            return self.failed(exc, task_id, entry.snapshot, waited=True)
        if found.outcome is None:
            self.out.note(f"no live worker holds task {task_id}: asking the server")
            return None
        self.out.source = {"source": "journal", "held_by": found.held_by}
        by = f" (followed by {found.held_by})" if found.held_by else ""
        self.out.note(f"outcome of task {task_id} read from the journal{by}")
        ended = outcome_of(found.entry)
        if isinstance(ended, Lost):
            return self.out.lost(Resumed(found.entry, ended))
        return self.finished(task_id, ended)

    async def resume(self, workers: int | None = None, lease: float = 60.0) -> ExitCode:
        """Every open task of the journal, followed to its end; the worst exit code. With
        ``workers``, as one of many workers sharing it (``resume(workers=N)``)."""
        assert self.journal is not None
        options = self.options
        answering = self.answering
        capabilities = answering.capabilities() if answering is not None else None

        def opener(entry: JournalEntry) -> Client:
            return client_for(
                entry,
                client_info=client_info(options),
                capabilities=capabilities or ClientCapabilities(),
                headers=self.headers_for(entry),
                timeouts=Timeouts(request=options.timeout, initialize=options.timeout),
            )

        def router_for(client: Client) -> InputRouter:
            router = self.new_router()  # one per client, sharing the answers and the journal
            assert router is not None
            return router

        codes: list[ExitCode] = []

        def report(item: Resumed) -> None:
            hint = None
            if isinstance(item.ended, CONNECTION_ERRORS):
                hint = (
                    f"task {item.entry.task_id} is still in the journal: run "
                    f"`{self.journal_command('resume')}` again once {item.entry.server} answers"
                )
            codes.append(self.out.resumed(item, hint))

        policy = make_policy(options, answers_input=answering is not None)
        await resume(
            self.journal,
            opener,
            policy=policy,
            inputs=router_for if answering is not None else None,
            deadline=options.deadline,
            owner=self.worker,
            on_resumed=report,
            workers=workers,
            lease=lease,
        )
        if not codes:
            self.out.note(f"no open task in {journal_name(options.journal or '')}")
        return max(codes, default=ExitCode.COMPLETED)

    async def list_journal(self) -> ExitCode:
        """``list --journal``: the tasks the journal holds (of the server named, if one is),
        open or ended, as last recorded; the server is not asked (a 2025-11-25 server lists
        only the tasks of the session asking, and each run opens a new one)."""
        assert self.journal is not None
        server = self.options.server
        named = identity_of(server) if server.url is not None or server.stdio else None
        entries = [e for e in await self.journal.entries() if named in (None, e.server)]
        self.out.journaled(entries)
        if not entries:
            where = f" for {named}" if named is not None else ""
            self.out.note(f"no task in {journal_name(self.options.journal or '')}{where}")
        return ExitCode.COMPLETED

    def headers_for(self, entry: JournalEntry) -> dict[str, str]:
        """The ``--header`` values, for an entry of the server they were given for (``--url``)
        only: a journal entry naming another server (planted, say) never receives them."""
        server = self.options.server
        if not server.headers or entry.server == server.url:
            return dict(server.headers)
        if entry.server not in self.withheld:
            self.withheld.add(entry.server)
            self.out.warn(
                f"the tasks of {entry.server} are followed without --header "
                f"(the headers were given for {server.url} only)"
            )
        return {}

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

    async def follow(
        self, client: Client, ref: CreateTaskResult | str, *, render: bool
    ) -> ExitCode:
        """Watch the task to its end (the live line or JSON lines when ``render``), then
        report its outcome, or the error or deadline that ended the wait."""
        task_id = ref.task.task_id if isinstance(ref, CreateTaskResult) else ref
        last = ref.task if isinstance(ref, CreateTaskResult) else None
        self.out.open_task = task_id
        deadline = self.options.deadline
        unanswered: InputNotHandled | None = None
        await self.listen_for_progress(client)
        async with make_poller(client, self.options, self.router, self.journal) as poller:
            try:
                async with (
                    self.out.following(task_id, poller, show=render) as view,
                    contextlib.aclosing(_generator(poller.watch(ref, deadline=deadline))) as items,
                ):
                    async for item in items:
                        if render:
                            self.out.item(view, item)
                        if not isinstance(item, Task):
                            continue
                        last = item
                        self.out.open_status = item.status.value
                        if item.status is TaskStatus.INPUT_REQUIRED and self.router is None:
                            # Nothing here can answer (and nothing was declared): say how.
                            requests = item.input_requests or {}
                            asked = next(iter(requests), None)
                            method = "input" if asked is None else requests[asked].method
                            unanswered = InputNotHandled(task_id, method, asked)
                            break
                if unanswered is not None:  # reported once the live line has stopped
                    return self.failed(unanswered, task_id, last, waited=True)
                # The watch ended at the terminal snapshot: its outcome, without a new poll.
                outcome = await poller.wait(last if last is not None else ref)
            except DeadlineExceeded as exc:
                seen = exc.snapshots.get(task_id)
                seen = seen if isinstance(seen, Task) else last
                return self.failed(exc, task_id, seen, waited=True)
            except MCPTasksError as exc:
                return self.failed(exc, task_id, last, waited=True)
            finally:  # --on-busy back-off: every backoff said, never silent
                for warning in poller.warnings:
                    if isinstance(warning, BackedOff):
                        self.out.warn(str(warning))
        return self.finished(task_id, outcome)


def _generator(
    items: AsyncIterator[WatchItem],
) -> AsyncGenerator[WatchItem, None]:
    """``Poller.watch()``'s items as the async generator they are (closed when left early)."""
    assert isinstance(items, AsyncGenerator)
    return items


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
