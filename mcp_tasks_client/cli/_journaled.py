"""The commands that read the journal (``--journal``): ``resume``, ``list --journal``, and
``wait``/``result`` of a journaled task answered from it. Imported only with ``--journal``:
a run without one never loads sqlite3 nor the resume machinery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._client import Client, Timeouts
from .._exceptions import DeadlineExceeded
from ..inputs import InputRouter
from ..journal import JournalEntry, WatchedJournal, outcome_of, wait_in_journal
from ..models import ClientCapabilities
from ..outcomes import Lost
from ..resume import Resumed, client_for, resume
from ._connect import client_info, identity_of, make_policy
from ._exit import ExitCode
from ._journal import journal_name
from ._next_steps import CONNECTION_ERRORS

if TYPE_CHECKING:
    from ._commands import Run

__all__ = ["from_journal", "list_journal", "resume_all"]


async def from_journal(run: Run, entry: JournalEntry) -> ExitCode | None:
    """``wait``/``result`` of a journaled task: its outcome from the journal, when it holds
    one or a live worker holds the task (waiting for it there: the server is not asked);
    None when no live worker holds it (the server is asked, as without a journal)."""
    journal, out = run.journal, run.out
    if not isinstance(journal, WatchedJournal):
        return None
    task_id = entry.task_id
    out.open_task = task_id
    try:
        found = await wait_in_journal(journal, entry.server, task_id, timeout=run.options.deadline)
    except DeadlineExceeded as exc:
        return run.failed(exc, task_id, entry.snapshot, waited=True)
    if found.outcome is None:
        out.note(f"no live worker holds task {task_id}: asking the server")
        return None
    out.source = {"source": "journal", "held_by": found.held_by}
    by = f" (followed by {found.held_by})" if found.held_by else ""
    out.note(f"outcome of task {task_id} read from the journal{by}")
    ended = outcome_of(found.entry)
    if isinstance(ended, Lost):
        return out.lost(Resumed(found.entry, ended))
    return run.finished(task_id, ended)


async def resume_all(run: Run, workers: int | None = None, lease: float = 60.0) -> ExitCode:
    """Every open task of the journal, followed to its end; the worst exit code. With
    ``workers``, as one of many workers sharing it (``resume(workers=N)``)."""
    assert run.journal is not None
    options = run.options
    answering = run.answering
    capabilities = answering.capabilities() if answering is not None else None

    def opener(entry: JournalEntry) -> Client:
        return client_for(
            entry,
            client_info=client_info(options),
            capabilities=capabilities or ClientCapabilities(),
            headers=headers_for(run, entry),
            timeouts=Timeouts(request=options.timeout, initialize=options.timeout),
        )

    def router_for(client: Client) -> InputRouter:
        router = run.new_router()  # one per client, sharing the answers and the journal
        assert router is not None
        return router

    codes: list[ExitCode] = []

    def report(item: Resumed) -> None:
        hint = None
        if isinstance(item.ended, CONNECTION_ERRORS):
            hint = (
                f"task {item.entry.task_id} is still in the journal: run "
                f"`{run.next_steps.journal_command('resume')}` again once {item.entry.server} "
                "answers"
            )
        codes.append(run.out.resumed(item, hint))

    policy = make_policy(options, answers_input=answering is not None)
    await resume(
        run.journal,
        opener,
        policy=policy,
        inputs=router_for if answering is not None else None,
        deadline=options.deadline,
        owner=run.worker,
        on_resumed=report,
        workers=workers,
        lease=lease,
    )
    if not codes:
        run.out.note(f"no open task in {journal_name(options.journal or '')}")
    return max(codes, default=ExitCode.COMPLETED)


async def list_journal(run: Run) -> ExitCode:
    """``list --journal``: the tasks the journal holds (of the server named, if one is),
    open or ended, as last recorded; the server is not asked (a 2025-11-25 server lists
    only the tasks of the session asking, and each run opens a new one)."""
    assert run.journal is not None
    server = run.options.server
    named = identity_of(server) if server.url is not None or server.stdio else None
    entries = [e for e in await run.journal.entries() if named in (None, e.server)]
    run.out.journaled(entries)
    if not entries:
        where = f" for {named}" if named is not None else ""
        run.out.note(f"no task in {journal_name(run.options.journal or '')}{where}")
    return ExitCode.COMPLETED


def headers_for(run: Run, entry: JournalEntry) -> dict[str, str]:
    """The ``--header`` values, for an entry of the server they were given for (``--url``)
    only: a journal entry naming another server (planted, say) never receives them."""
    server = run.options.server
    if not server.headers or entry.server == server.url:
        return dict(server.headers)
    if entry.server not in run.withheld:
        run.withheld.add(entry.server)
        run.out.warn(
            f"the tasks of {entry.server} are followed without --header "
            f"(the headers were given for {server.url} only)"
        )
    return {}
