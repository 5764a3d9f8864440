"""A durable record of the tasks a caller started, so polling survives the process.

A task id is a handle to work that may run for hours; the 2026-07-28 extension says clients
SHOULD keep task ids so polling resumes after a crash. Nothing is written unless the caller
passes a :class:`Journal`: to :meth:`Client.start <mcp_tasks_client.Client.start>` (the task is
recorded before ``start`` returns) and to :class:`~mcp_tasks_client.Poller` (each accepted
snapshot, each answered 2026 input key, and the outcome, recorded before the wait wakes).
:func:`~mcp_tasks_client.resume` attaches a poller to every open task of a journal.

The :class:`Journal` protocol is async and keyed by ``(server, task_id)`` (a task id is unique
per server only). It has leases (:meth:`Journal.claim`) so that many processes sharing one
journal never poll the same task twice; :class:`SQLiteJournal` implements them with one SQLite
file in WAL mode, and a server-backed journal can implement the same protocol.

Task ids and session ids are bearer capabilities, and a journal tells ``resume`` which servers
to talk to: :class:`SQLiteJournal` trusts a file only as ssh trusts its keys. It creates the
file owner-only (0600), and refuses (:class:`JournalError` naming the file and the rule, the
file left as it is) one that the current user does not own, even when that user is root, and
one whose mode gives the group or others any access (read, write or execute: a reader learns
the ids, a writer plants a server). SQLite's companions (``-wal``, ``-shm``, ``-journal``) are
held to the same rules before the file is opened, and checked again once the connection has
made them (a companion it made with wider permissions is narrowed to 0600). It refuses a file
that is not one of its journals (another SQLite database, a text file, a newer schema) and
never writes to it. Every SQLite call runs on a worker thread, off the event loop.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread
import attrs

from . import observability as _obs
from ._exceptions import DeadlineExceeded, MCPTasksError, UsageError
from ._generation import Generation
from .models import CallToolResult, JSONObject, Task, TaskStatus
from .outcomes import Cancelled, Completed, Expired, Failed, Lost, Outcome
from .wire import decode, encode

if TYPE_CHECKING:  # imported when a SQLiteJournal opens: a program without one never loads it
    import sqlite3

log = _obs.get_logger("journal")

R = TypeVar("R")

__all__ = [
    "Journal",
    "JournalBusy",
    "JournalEntry",
    "JournalError",
    "JournalTimeout",
    "JournalUnavailable",
    "JournalWait",
    "Lease",
    "LeaseLost",
    "NotJournaled",
    "QueuedInput",
    "RecordedOutcome",
    "RecordedSession",
    "SQLiteJournal",
    "SharedJournal",
    "WatchedJournal",
    "outcome_of",
    "wait_in_journal",
]


class JournalError(MCPTasksError):
    """The journal cannot be used: not a journal, corrupt, not the current user's, open to
    the group or others, or a write failed.

    ``path`` names the file (the journal, or the companion at fault); it was not modified.
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"journal {path}: {problem}")


class JournalUnavailable(JournalError):
    """The journal's database could not be reached: a connection refused or dropped (a
    restart), at the statement named in ``problem``. Nothing was written by it."""


class JournalTimeout(JournalError):
    """A statement ran past the journal's bound (PostgreSQL ``statement_timeout``, SQLite
    ``busy_timeout``) and was cancelled by the database: nothing was written by it."""


class JournalBusy(JournalError):
    """Every pooled connection stayed busy for the pool's whole timeout (an exhausted pool):
    the statement was never sent."""


class LeaseLost(MCPTasksError):
    """A worker's lease on a task is no longer surely its own (it could not renew it in time,
    or another worker took the task over): the poll it was about to send was not sent."""

    def __init__(self, task_id: str, owner: str) -> None:
        self.task_id = task_id
        self.owner = owner
        super().__init__(f"task {task_id!r}: the lease of {owner} is no longer surely its own")


class NotJournaled(JournalError):
    """The task was created but the journal could not record it: ``created`` is the task the
    server made (its id is not lost; record or cancel it yourself). ``__cause__`` says why."""

    def __init__(self, path: str, problem: str, created: Any) -> None:
        super().__init__(path, problem)
        self.created = created


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        raise ValueError("journal times are timezone-aware (UTC)")
    return value.astimezone(dt.timezone.utc)


@attrs.frozen
class RecordedSession:
    """The generation-1 session a task is bound to: its id and the initialize result it
    agreed (wire JSON), so a new process can resume it (``Client(resume=...)``)."""

    session_id: str
    initialize: JSONObject


@attrs.frozen
class RecordedOutcome:
    """How a task ended, as recorded: ``status`` is ``completed``, ``failed``, ``cancelled``,
    ``expired`` or ``lost``; ``result`` the CallToolResult's wire JSON when there was one;
    ``error`` a short text (the JSON-RPC error, or why the task was lost)."""

    status: str
    result: JSONObject | None = None
    error: str | None = None
    recorded_at: dt.datetime = attrs.field(
        factory=lambda: dt.datetime.now(dt.timezone.utc), converter=_utc
    )


@attrs.frozen
class Lease:
    """A worker's lease on an open task, as the journal holds it.

    ``owner`` holds it until ``until`` (seconds since the epoch, by the journal's clock: the
    database server's for PostgreSQL). ``token`` is the lease's generation: it grows by one
    each time the task changes hands (a renewal by the same owner keeps it), and a fenced
    write (:meth:`SharedJournal.finish_leased`) names it, so a worker that lost the task while
    paused cannot record over the one that took it. ``left`` is the seconds the lease had left
    when it was read (by the journal's clock), where the read said (``lease_of``).
    """

    owner: str
    token: int
    until: float
    left: float | None = None


@attrs.frozen
class JournalEntry:
    """One task as the journal knows it.

    ``server`` is the transport's identity (its URL, or ``stdio:`` and the command line);
    ``session`` is set for a generation-1 task over HTTP (the task is bound to it);
    ``snapshot`` is the last accepted snapshot; ``answered_inputs`` the 2026 input keys this
    client answered; ``outcome`` is None while the task is open.
    """

    server: str
    task_id: str
    generation: Generation
    protocol_version: str
    tool: str
    created_at: dt.datetime = attrs.field(converter=_utc)
    session: RecordedSession | None = None
    snapshot: Task | None = None
    answered_inputs: tuple[str, ...] = ()
    outcome: RecordedOutcome | None = None
    traceparent: str | None = None
    """The W3C trace context of the task's span when it was recorded (tracing on): a resume
    continues the same trace from it (a remote parent)."""
    tracestate: str | None = None
    lease: Lease | None = None
    """The lease as last written (live or run out; None: never leased, or released). Set on
    the entries ``claim_due`` returns: the lease just taken, whose token fences writes."""

    @property
    def is_open(self) -> bool:
        return self.outcome is None


@attrs.frozen
class QueuedInput:
    """An input request of a task that the worker which saw it had no handler for, queued in
    a shared journal for a worker that registers one (:meth:`InputRouter.answer_queued
    <mcp_tasks_client.InputRouter.answer_queued>`).

    ``key`` is the request's key: its ``inputRequests`` key (2026-07-28) or its JSON-RPC id
    as text (2025-11-25, where ``request_id`` is the id itself, for the answer to name);
    ``method`` and ``params`` are the request as the server sent it; ``session_id`` the
    session it came on (2025-11-25 over HTTP: only that session can answer it).
    """

    server: str
    task_id: str
    key: str
    method: str
    params: JSONObject
    request_id: str | int | None = None
    session_id: str | None = None
    queued_by: str | None = None
    queued_at: dt.datetime = attrs.field(
        factory=lambda: dt.datetime.now(dt.timezone.utc), converter=_utc
    )


@runtime_checkable
class Journal(Protocol):
    """What the client needs of a journal; every method is safe to call from many tasks.

    ``record`` adds a task (an entry for the same ``(server, task_id)`` is replaced only while
    that task is open). ``snapshot``, ``answered`` and ``finish`` update a recorded task and do
    nothing for one never recorded. ``claim`` takes a lease on an open task for ``owner`` until
    ``lease`` seconds from now, and is False when another owner's lease is live; ``release``
    gives it back.
    """

    async def record(self, entry: JournalEntry) -> None:
        """Record ``entry`` (a new open task). Deadline: the journal's own bound on a statement
        (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the library
        bounds each call it makes as well. Cancelled: the caller stops waiting; a write
        already handed to the database is done whole or not at all."""

    async def snapshot(self, server: str, task_id: str, snapshot: Task) -> None:
        """Keep ``snapshot`` as the task's latest. Deadline: the journal's own bound on a
        statement (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the
        library bounds each call it makes as well. Cancelled: the caller stops waiting; a
        write already handed to the database is done whole or not at all."""

    async def answered(self, server: str, task_id: str, key: str) -> None:
        """Note that the input ``key`` of the task was answered (never answered again). Deadline:
        the journal's own bound on a statement (SQLiteJournal ``busy_timeout``,
        PostgresJournal ``statement_timeout``); the library bounds each call it makes as well.
        Cancelled: the caller stops waiting; a write already handed to the database is done
        whole or not at all."""

    async def finish(self, server: str, task_id: str, outcome: RecordedOutcome) -> None:
        """Record the task's outcome: the task is no longer open. Deadline: the journal's own
        bound on a statement (SQLiteJournal ``busy_timeout``, PostgresJournal
        ``statement_timeout``); the library bounds each call it makes as well. Cancelled: the
        caller stops waiting; a write already handed to the database is done whole or not at
        all."""

    async def get(self, server: str, task_id: str) -> JournalEntry | None:
        """The entry of the task, or None. Deadline: the journal's own bound on a statement
        (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the library
        bounds each call it makes as well. Cancelled: the caller stops waiting; a write
        already handed to the database is done whole or not at all."""

    async def entries(self, *, open_only: bool = False) -> Sequence[JournalEntry]:
        """Every entry (``open_only``: the open tasks). Deadline: the journal's own bound on a
        statement (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the
        library bounds each call it makes as well. Cancelled: the caller stops waiting; a
        write already handed to the database is done whole or not at all."""

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        """Take a lease on the open task for ``owner``; False when another owner holds one.
        Deadline: the journal's own bound on a statement (SQLiteJournal ``busy_timeout``,
        PostgresJournal ``statement_timeout``); the library bounds each call it makes as well.
        Cancelled: the caller stops waiting; a write already handed to the database is done
        whole or not at all."""

    async def release(self, server: str, task_id: str, owner: str) -> None:
        """Give ``owner``'s lease on the task back. Deadline: the journal's own bound on a
        statement (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the
        library bounds each call it makes as well. Cancelled: the caller stops waiting; a
        write already handed to the database is done whole or not at all."""


@runtime_checkable
class SharedJournal(Journal, Protocol):
    """A journal many worker processes share as a queue of work (``resume(workers=...)``).

    ``claim_due`` takes up to ``limit`` open tasks that no live lease holds, oldest first, for
    ``owner`` until ``lease`` seconds from now, and returns them; two owners asking at once get
    different tasks. Tasks ``owner`` already holds are not returned again (renew those with
    ``renew``). ``renew`` extends ``owner``'s leases on ``tasks`` (``(server, task_id)`` pairs)
    to ``lease`` seconds from now, as ``claim`` would each, in one go; the pairs it holds now.
    """

    async def claim_due(self, owner: str, lease: float, limit: int) -> Sequence[JournalEntry]:
        """Take leases on up to ``limit`` due open tasks no live lease holds. Deadline: the
        journal's own bound on a statement (SQLiteJournal ``busy_timeout``, PostgresJournal
        ``statement_timeout``); the library bounds each call it makes as well. Cancelled: the
        caller stops waiting; a write already handed to the database is done whole or not at
        all."""

    async def renew(
        self, owner: str, tasks: Sequence[tuple[str, str]], lease: float
    ) -> set[tuple[str, str]]:
        """Extend ``owner``'s leases on ``tasks``; the pairs it holds now. Deadline: the
        journal's own bound on a statement (SQLiteJournal ``busy_timeout``, PostgresJournal
        ``statement_timeout``); the library bounds each call it makes as well. Cancelled: the
        caller stops waiting; a write already handed to the database is done whole or not at
        all."""

    async def queue_input(self, queued: QueuedInput) -> bool:
        """Queue an input request for a worker with a handler; False when the key is queued or
        answered already (nothing changes). Deadline: the journal's own bound on a statement
        (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the library
        bounds each call it makes as well. Cancelled: the caller stops waiting; a write
        already handed to the database is done whole or not at all."""

    async def claim_input(self, server: str, task_id: str, key: str, owner: str) -> bool:
        """Take the right to answer the task's input ``key`` for ``owner``, in one
        transaction: True once per key across every process sharing the journal, False ever
        after (another worker answers, or answered, it). A queued key is taken off the queue by
        the same write. Deadline: the journal's own bound on a statement (SQLiteJournal
        ``busy_timeout``, PostgresJournal ``statement_timeout``); the library bounds each call
        it makes as well. Cancelled: the caller stops waiting; a write already handed to the
        database is done whole or not at all."""

    async def queued_inputs(self, server: str | None = None) -> Sequence[QueuedInput]:
        """The queued input requests no worker took yet, of open tasks (of ``server`` only,
        when given), oldest first. Deadline: the journal's own bound on a statement
        (SQLiteJournal ``busy_timeout``, PostgresJournal ``statement_timeout``); the library
        bounds each call it makes as well. Cancelled: the caller stops waiting; a write
        already handed to the database is done whole or not at all."""

    async def input_answerers(self, server: str, task_id: str) -> dict[str, str]:
        """The task's input keys taken for answering, each with the owner that took it.
        Deadline: the journal's own bound on a statement (SQLiteJournal ``busy_timeout``,
        PostgresJournal ``statement_timeout``); the library bounds each call it makes as
        well. Cancelled: the caller stops waiting; a write already handed to the database is
        done whole or not at all."""

    async def finish_leased(
        self, server: str, task_id: str, outcome: RecordedOutcome, lease: Lease
    ) -> bool:
        """Record the outcome only while ``lease`` (its owner and token) is the task's, checked
        in the statement that records: True when recorded; False when another worker took
        the task since (the fence), or it has an outcome already. Deadline: the journal's own
        bound on a statement (SQLiteJournal ``busy_timeout``, PostgresJournal
        ``statement_timeout``). Cancelled: the caller stops
        waiting; a write already handed to the database is done whole or not at all."""

    async def snapshot_leased(
        self, server: str, task_id: str, snapshot: Task, lease: Lease
    ) -> bool:
        """Keep ``snapshot`` only while ``lease`` is the task's (as ``finish_leased``): True when
        kept. Deadline: the journal's own bound on a statement (SQLiteJournal
        ``busy_timeout``, PostgresJournal ``statement_timeout``). Cancelled: the caller stops
        waiting; a write already handed to the database is done whole or not at all."""

    async def lease_of(self, server: str, task_id: str) -> Lease | None:
        """The live lease on the open task (by the journal's clock), with ``left`` set; None
        when no worker holds it (never leased, released, run out, or the task ended).
        Deadline: the journal's own bound on a statement (SQLiteJournal
        ``busy_timeout``, PostgresJournal ``statement_timeout``). Cancelled: the caller stops
        waiting; a write already handed to the database is done whole or not at all."""


@runtime_checkable
class WatchedJournal(Journal, Protocol):
    """A journal whose readers can wait for outcomes without asking the MCP servers: the
    PostgreSQL journal (``LISTEN/NOTIFY``) and the SQLite one (a cheap check of the file)."""

    async def lease_of(self, server: str, task_id: str) -> Lease | None:
        """As :meth:`SharedJournal.lease_of`."""

    async def wait_outcomes(
        self,
        tasks: Iterable[tuple[str, str]],
        *,
        timeout: float | None = None,
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None = None,
    ) -> dict[tuple[str, str], RecordedOutcome]:
        """The outcomes of ``tasks`` recorded (by any process) before ``timeout`` seconds
        pass; a task the journal does not hold is a JournalError. Deadline: ``timeout``
        (None: none). Cancelled: nothing is left behind (a listening connection is closed)."""


@attrs.frozen
class JournalWait:
    """What :func:`wait_in_journal` found.

    ``outcome`` is the task's recorded outcome; None when no live worker holds the task (ask
    its server: nothing else will record it). ``held_by`` names the worker whose lease the
    wait relied on last (None: no worker held the task while this waited); ``entry`` is the
    task as the journal had it when the wait ended.
    """

    entry: JournalEntry
    outcome: RecordedOutcome | None
    held_by: str | None = None


async def wait_in_journal(
    journal: WatchedJournal, server: str, task_id: str, *, timeout: float | None = None
) -> JournalWait:
    """Wait for the outcome of a journaled task through the journal alone, while a live
    worker holds its lease: the MCP server is never asked.

    Returns at once with the outcome the journal holds, or with ``outcome=None`` when no live
    worker holds the task (the caller decides whether to poll the server). While a worker
    holds it, this waits for the outcome to be recorded (``LISTEN/NOTIFY`` on PostgreSQL, the
    file on SQLite), looking at the lease again each time it could have run out: a worker that
    died leaves a lease that runs out, and then ``outcome=None`` comes back.

    A task the journal does not hold is a JournalError. Deadline: ``timeout`` seconds (None:
    none), then DeadlineExceeded (the task may still run). Cancelled: nothing is left behind.
    """
    end = math.inf if timeout is None else anyio.current_time() + timeout
    held_by: str | None = None
    key = (server, task_id)
    while True:
        entry = await journal.get(server, task_id)
        if entry is None:
            raise JournalError(
                getattr(journal, "path", "journal"), f"task {task_id!r} of {server} is not in it"
            )
        if entry.outcome is not None:
            return JournalWait(entry, entry.outcome, held_by)
        lease = await journal.lease_of(server, task_id)
        if lease is None:
            again = await journal.get(server, task_id)  # it may have ended in between
            entry = again if again is not None else entry
            return JournalWait(entry, entry.outcome, held_by)
        held_by = lease.owner
        left = end - anyio.current_time()
        if left <= 0:
            seen = {task_id: entry.snapshot} if entry.snapshot is not None else {}
            raise DeadlineExceeded([task_id], seen)
        # Until the lease could run out (a little after): then whether it was renewed.
        until_lapse = (lease.left if lease.left is not None else 1.0) + 0.05
        found = await journal.wait_outcomes([key], timeout=min(left, until_lapse))
        if key in found:
            done = await journal.get(server, task_id)
            return JournalWait(done if done is not None else entry, found[key], held_by)


def outcome_of(entry: JournalEntry) -> Outcome | Lost:
    """The typed outcome of an ended journaled task, as a Poller would have returned it (or
    Lost): from the recorded outcome and the last snapshot. An open task is a UsageError; an
    outcome the journal cannot have written is a JournalError."""
    recorded = entry.outcome
    if recorded is None:
        raise UsageError(f"task {entry.task_id!r} is open: it has no outcome yet")
    if recorded.status == "lost":
        return Lost(entry.task_id, recorded.error or "lost", entry.snapshot)
    task = entry.snapshot
    if recorded.status == "expired":
        last = task if task is not None else _task_of(entry, TaskStatus.WORKING, recorded)
        return Expired(last, recorded.recorded_at)
    status = _TERMINAL.get(recorded.status)
    if status is None:
        raise JournalError("journal", f"task {entry.task_id!r}: outcome {recorded.status!r}")
    if task is None or task.status is not status:
        task = _task_of(entry, status, recorded)
    if status is TaskStatus.CANCELLED:
        return Cancelled(task)
    result: CallToolResult | None = None
    raw: JSONObject | None = None
    if recorded.result is not None:
        try:
            result = decode(recorded.result, CallToolResult, entry.generation)
        except MCPTasksError:
            raw = recorded.result
    if status is TaskStatus.FAILED:
        return Failed(task, result=result, raw=raw)
    if result is None:
        raise JournalError("journal", f"task {entry.task_id!r}: completed without a result")
    return Completed(task, result)


_TERMINAL = {s.value: s for s in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)}


def _task_of(entry: JournalEntry, status: TaskStatus, recorded: RecordedOutcome) -> Task:
    """The task as its recorded outcome says it ended (no terminal snapshot was kept)."""
    return Task(
        task_id=entry.task_id,
        status=status,
        created_at=entry.created_at,
        last_updated_at=recorded.recorded_at,
        status_message=recorded.error,
    )


# -- SQLite -------------------------------------------------------------------------------------

_APPLICATION_ID = 0x4D435454  # "MCTT": this file is an mcp-tasks-client journal
_SCHEMA_VERSION = 4
"""2: each task's trace context (``traceparent``, ``tracestate``) and the ``inputs`` table
(input requests queued for a worker with a handler, and the keys taken for answering). 3: each
lease's generation (``lease_token``), which fences a paused worker's late writes. 4: what the
monitor page reads (``_ACTIVITY``): each task's history (the ``events`` table, written by
triggers in the statements that change a task) and the workers' heartbeats. An older file
is migrated in place when opened (columns and tables added)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"
_COMPANIONS = ("-wal", "-shm", "-journal")  # SQLite's files beside the journal
_SCHEMA = """
CREATE TABLE tasks (
    server TEXT NOT NULL,
    task_id TEXT NOT NULL,
    generation TEXT NOT NULL,
    protocol_version TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at TEXT NOT NULL,
    session_id TEXT,
    initialize_json TEXT,
    snapshot_json TEXT,
    answered_json TEXT NOT NULL DEFAULT '[]',
    outcome_json TEXT,
    lease_owner TEXT,
    lease_until REAL,
    traceparent TEXT,
    tracestate TEXT,
    lease_token INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (server, task_id)
)
"""
# Version 2: input requests queued for a worker with a handler, and the keys taken for
# answering (answered_by set), once per key across every process (claim_input).
_INPUTS = """
CREATE TABLE inputs (
    server TEXT NOT NULL,
    task_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_json TEXT,
    queued_by TEXT,
    answered_by TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (server, task_id, key)
)
"""
# Version 4: what the monitor page reads. The history of each task is written by triggers, in
# the transaction of the statement that changed the task: a worker makes no extra round trip,
# and a status is recorded only when it (or its message) changes, not at every poll. No poll
# counter either: a poll that brings the same snapshot changes no byte of the row, and SQLite
# then writes nothing at all (no WAL frame, no fsync); a counter would make every poll a write.
_SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
_EVENT = "INSERT INTO events (server, task_id, at, kind, status, detail, owner) VALUES "
_STATUS_OF = "json_extract({}.snapshot_json, '$.status')"
_MESSAGE_OF = "json_extract({}.snapshot_json, '$.statusMessage')"
_ACTIVITY = (
    """CREATE TABLE events (
        server TEXT NOT NULL,
        task_id TEXT NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        status TEXT,
        detail TEXT,
        owner TEXT
    )""",
    "CREATE INDEX events_task ON events (server, task_id)",
    "CREATE INDEX events_at ON events (at)",
    "CREATE TABLE workers (owner TEXT PRIMARY KEY, seen_at REAL NOT NULL, lease REAL NOT NULL)",
    f"""CREATE TRIGGER task_created AFTER INSERT ON tasks BEGIN {_EVENT}
        (NEW.server, NEW.task_id, (julianday(NEW.created_at) - 2440587.5) * 86400.0, 'created',
        {_STATUS_OF.format("NEW")}, {_MESSAGE_OF.format("NEW")}, NULL); END""",
    f"""CREATE TRIGGER task_status AFTER UPDATE OF snapshot_json ON tasks
        WHEN OLD.snapshot_json IS NOT NEW.snapshot_json
        AND ({_STATUS_OF.format("OLD")} IS NOT {_STATUS_OF.format("NEW")}
        OR {_MESSAGE_OF.format("OLD")} IS NOT {_MESSAGE_OF.format("NEW")})
        BEGIN {_EVENT} (NEW.server, NEW.task_id, {_SQLITE_NOW}, 'status',
        {_STATUS_OF.format("NEW")}, {_MESSAGE_OF.format("NEW")}, NEW.lease_owner); END""",
    f"""CREATE TRIGGER task_leased AFTER UPDATE OF lease_owner ON tasks
        WHEN NEW.lease_owner IS NOT NULL AND NEW.lease_owner IS NOT OLD.lease_owner
        BEGIN {_EVENT} (NEW.server, NEW.task_id, {_SQLITE_NOW},
        CASE WHEN OLD.lease_owner IS NULL THEN 'leased' ELSE 'takeover' END, NULL,
        OLD.lease_owner, NEW.lease_owner); END""",
    f"""CREATE TRIGGER task_answered AFTER UPDATE OF answered_json ON tasks
        WHEN NEW.answered_json IS NOT OLD.answered_json
        BEGIN {_EVENT} (NEW.server, NEW.task_id, {_SQLITE_NOW}, 'answered', NULL,
        json_extract(NEW.answered_json, '$[#-1]'), NEW.lease_owner); END""",
    f"""CREATE TRIGGER task_outcome AFTER UPDATE OF outcome_json ON tasks
        WHEN OLD.outcome_json IS NULL AND NEW.outcome_json IS NOT NULL
        BEGIN {_EVENT} (NEW.server, NEW.task_id, {_SQLITE_NOW}, 'outcome',
        json_extract(NEW.outcome_json, '$.status'), json_extract(NEW.outcome_json, '$.error'),
        OLD.lease_owner); END""",
    f"""CREATE TRIGGER input_queued AFTER INSERT ON inputs WHEN NEW.request_json IS NOT NULL
        BEGIN {_EVENT} (NEW.server, NEW.task_id, {_SQLITE_NOW}, 'input',
        json_extract(NEW.request_json, '$.method'), NEW.key, NEW.queued_by); END""",
)
# A worker's heartbeat, written with its claims and renewals: at most once a second (an idle
# worker looks for work 20 times a second; a look that changes nothing writes nothing).
_HEARTBEAT = (
    "INSERT INTO workers (owner, seen_at, lease) VALUES (?, ?, ?) ON CONFLICT (owner) DO "
    "UPDATE SET seen_at=excluded.seen_at, lease=excluded.lease "
    "WHERE workers.seen_at < excluded.seen_at - 1.0"
)
_MIGRATIONS = {
    1: (
        "ALTER TABLE tasks ADD COLUMN traceparent TEXT",
        "ALTER TABLE tasks ADD COLUMN tracestate TEXT",
        _INPUTS,
    ),
    2: ("ALTER TABLE tasks ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0",),
    3: (*_ACTIVITY,),
}
"""From each older schema version to the next: the statements, run in one transaction."""
_COLUMNS = (
    "server, task_id, generation, protocol_version, tool, created_at, session_id, "
    "initialize_json, snapshot_json, answered_json, outcome_json, traceparent, tracestate"
)
_READ = f"{_COLUMNS}, lease_owner, lease_token, lease_until"
"""What an entry is read from: the columns written, and the lease."""
# A new lease's generation: one more when the task changes hands (the owner given as the
# statement's parameter), the same when its owner renews it.
_NEXT_TOKEN = "lease_token + (lease_owner IS NOT ?)"


class JournalFile:
    """Opens an SQLite journal file as only its owner may: the one job of making the file (owner-
    only, with the current schema), or checking one that exists (its owner, mode, companions,
    that it is a journal, its schema and integrity) and migrating an older schema. The checks
    and their refusals are the module's (see its docstring); nothing it refuses is modified.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def _fail(self, problem: str) -> JournalError:
        return JournalError(self.path, problem)

    def open(self, busy_timeout: float) -> sqlite3.Connection:
        """The file's connection (autocommit, usable from any thread), made or checked first."""
        import sqlite3

        created = False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            self._check_existing()
        except OSError as exc:
            raise self._fail(f"cannot create: {exc.strerror}") from None
        else:
            os.close(fd)
            created = True
        self._check_companions(narrow=False)
        try:
            db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._fail(f"cannot open: {exc}") from None
        try:
            if created:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("BEGIN IMMEDIATE")
                db.execute(_SCHEMA)
                db.execute(_INPUTS)
                for statement in _ACTIVITY:
                    db.execute(statement)
                db.execute(f"PRAGMA application_id={_APPLICATION_ID}")
                db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
                db.execute("COMMIT")
            else:
                self._check_schema(db)
                db.execute("PRAGMA journal_mode=WAL")
                # Only an older schema takes the write lock: opening a current journal must
                # not wait for (or hold up) another process's write.
                if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                    self._migrate(db)
            # The companions the connection made (or another process made meanwhile).
            self._check_companions(narrow=True)
        except sqlite3.Error as exc:
            db.close()
            raise self._fail(f"not a usable journal ({exc})") from None
        except BaseException:
            db.close()
            raise
        return db

    def _trusted(self, path: str, info: os.stat_result, what: str) -> None:
        """The ownership and mode rules, for the journal file or one of its companions."""
        me = os.geteuid()
        if info.st_uid != me:
            raise JournalError(
                path,
                f"{what} is owned by uid {info.st_uid}, not by the current user (uid {me}): "
                "a journal must belong to the user who runs it, even root (as ssh requires of "
                "its keys); it was left as it is",
            )
        loose = stat.S_IMODE(info.st_mode) & 0o077
        if loose:
            who = "writable" if loose & 0o022 else "readable" if loose & 0o044 else "usable"
            raise JournalError(
                path,
                f"{what} is {who} by group or others (mode {stat.S_IMODE(info.st_mode):o}); a "
                "journal holds task and session ids, which are bearer capabilities, and names "
                "the servers resume talks to: chmod 600 it (it was left as it is)",
            )

    def _check_existing(self) -> None:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise self._fail(f"cannot read: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise self._fail("not a regular file")
        self._trusted(self.path, info, "the journal file")
        if info.st_size == 0:
            raise self._fail("empty file (not a journal); it was left as it is")
        with open(self.path, "rb") as file:
            head = file.read(len(_SQLITE_MAGIC))
        if head != _SQLITE_MAGIC:
            raise self._fail("not a journal (not an SQLite database); it was left as it is")

    def _check_companions(self, *, narrow: bool) -> None:
        """SQLite's ``-wal``, ``-shm`` and ``-journal`` files, held to the journal's rules.
        With ``narrow`` (after the connection opened: a companion of ours it made), one of
        ours with group or others bits is chmod 600 instead of refused."""
        for suffix in _COMPANIONS:
            path = self.path + suffix
            try:
                info = os.stat(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                problem = f"cannot check the {suffix} companion: {exc.strerror}"
                raise JournalError(path, problem) from None
            if not stat.S_ISREG(info.st_mode):
                raise JournalError(path, f"the {suffix} companion is not a regular file")
            if narrow and info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o077:
                os.chmod(path, 0o600)
                continue
            self._trusted(path, info, f"the journal's {suffix} companion")

    def _check_schema(self, db: sqlite3.Connection) -> None:
        application_id = db.execute("PRAGMA application_id").fetchone()[0]
        if application_id != _APPLICATION_ID:
            raise self._fail(
                "an SQLite database of something else, not a journal; it was left as it is"
            )
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != _SCHEMA_VERSION and version not in _MIGRATIONS:
            raise self._fail(
                f"journal schema {version}; this version reads {_SCHEMA_VERSION} (left as it is)"
            )
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise self._fail(f"corrupt ({check}); it was left as it is")

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        """Bring an older schema to this version, in one transaction (another process may be
        migrating the same file: the version is read again under the write lock)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            while version in _MIGRATIONS:
                for statement in _MIGRATIONS[version]:
                    db.execute(statement)
                version += 1
                db.execute(f"PRAGMA user_version={version}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        log.info("journal schema migrated to version %d", version)


class SQLiteJournal:
    """A :class:`Journal` in one SQLite file (stdlib ``sqlite3``, WAL), shared safely by many
    processes on one machine. Create it with ``SQLiteJournal(path)`` (the file is made, owner-
    only, if it does not exist; checked, and never modified, if it is not a journal), and
    ``close()`` it when done (or use ``with``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 10.0,
        max_answered_keys: int = 10_000,
        clock: Callable[[], float] | None = None,
        watch_interval: float = 0.05,
    ) -> None:
        if max_answered_keys < 1:
            raise UsageError("max_answered_keys must be at least 1")
        if not watch_interval > 0:
            raise UsageError("watch_interval must be positive (seconds)")
        self.path = str(path)
        self.watch_interval = watch_interval
        """How often :meth:`wait_outcomes` looks at the file (a stat, no SQL)."""
        self._clock = clock or _now
        """Seconds since the epoch that leases are timed by (this machine's clock)."""
        self.max_answered_keys = max_answered_keys
        """How many answered input keys a task keeps (the oldest go first): a server that
        asks for ever new keys cannot grow a journal row without bound."""
        self._lock = threading.Lock()
        self._db = JournalFile(self.path).open(busy_timeout)

    def _fail(self, problem: str) -> JournalError:
        return JournalError(self.path, problem)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteJournal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- running SQL off the event loop ---------------------------------------------------------

    async def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._in_thread(lambda db: db.execute(sql, tuple(args)).fetchall())

    async def _execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        return await self._in_thread(lambda db: db.execute(sql, tuple(args)).rowcount)

    async def _in_thread(self, work: Callable[[sqlite3.Connection], R]) -> R:
        import sqlite3

        def run() -> R:
            with self._lock:
                try:
                    return work(self._db)
                except sqlite3.Error as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                        # Another process held the write lock past busy_timeout.
                        log.warning("journal %s: %s (busy_timeout)", self.path, problem)
                        raise JournalTimeout(self.path, problem) from None
                    raise self._fail(problem) from None

        return await anyio.to_thread.run_sync(run)

    # -- the protocol ---------------------------------------------------------------------------

    async def record(self, entry: JournalEntry) -> None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        session = entry.session
        await self._execute(
            f"INSERT INTO tasks ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (server, task_id) DO UPDATE SET generation=excluded.generation, "
            "protocol_version=excluded.protocol_version, tool=excluded.tool, "
            "created_at=excluded.created_at, session_id=excluded.session_id, "
            "initialize_json=excluded.initialize_json, snapshot_json=excluded.snapshot_json, "
            "answered_json=excluded.answered_json, outcome_json=excluded.outcome_json, "
            "traceparent=excluded.traceparent, tracestate=excluded.tracestate "
            "WHERE tasks.outcome_json IS NULL",
            (
                entry.server,
                entry.task_id,
                entry.generation.value,
                entry.protocol_version,
                entry.tool,
                entry.created_at.isoformat(),
                session.session_id if session else None,
                json.dumps(session.initialize) if session else None,
                _dump_task(entry.snapshot, entry.generation),
                json.dumps(list(entry.answered_inputs)),
                _dump_outcome(entry.outcome),
                entry.traceparent,
                entry.tracestate,
            ),
        )
        _obs.remember(entry.task_id)
        log.debug("recorded task %s of %s", _obs.TaskId(entry.task_id), entry.tool)

    async def snapshot(self, server: str, task_id: str, snapshot: Task) -> None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""

        def update(db: sqlite3.Connection) -> None:
            row = db.execute(
                "SELECT generation FROM tasks WHERE server=? AND task_id=?", (server, task_id)
            ).fetchone()
            if row is None:
                return
            db.execute(
                "UPDATE tasks SET snapshot_json=? WHERE server=? AND task_id=? "
                "AND outcome_json IS NULL",
                (_dump_task(snapshot, Generation(row[0])), server, task_id),
            )

        await self._in_thread(update)

    async def answered(self, server: str, task_id: str, key: str) -> None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""

        def update(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT answered_json FROM tasks WHERE server=? AND task_id=?",
                    (server, task_id),
                ).fetchone()
                if row is not None:
                    keys = json.loads(row[0])
                    if key not in keys:
                        kept = [*keys, key][-self.max_answered_keys :]
                        db.execute(
                            "UPDATE tasks SET answered_json=? WHERE server=? AND task_id=?",
                            (json.dumps(kept), server, task_id),
                        )
            finally:
                db.execute("COMMIT")

        await self._in_thread(update)

    async def finish(self, server: str, task_id: str, outcome: RecordedOutcome) -> None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        await self._execute(
            "UPDATE tasks SET outcome_json=?, lease_owner=NULL, lease_until=NULL "
            "WHERE server=? AND task_id=? AND outcome_json IS NULL",
            (_dump_outcome(outcome), server, task_id),
        )
        log.debug("task %s finished in the journal", _obs.TaskId(task_id))

    async def get(self, server: str, task_id: str) -> JournalEntry | None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        rows = await self._query(
            f"SELECT {_READ} FROM tasks WHERE server=? AND task_id=?", (server, task_id)
        )
        return self._entry(rows[0]) if rows else None

    async def entries(self, *, open_only: bool = False) -> list[JournalEntry]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        where = " WHERE outcome_json IS NULL" if open_only else ""
        rows = await self._query(f"SELECT {_READ} FROM tasks{where} ORDER BY created_at")
        return [self._entry(row) for row in rows]

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        now = self._clock()
        changed = await self._execute(
            f"UPDATE tasks SET lease_token={_NEXT_TOKEN}, lease_owner=?, lease_until=? "
            "WHERE server=? AND task_id=? AND outcome_json IS NULL AND "
            "(lease_owner IS NULL OR lease_owner=? OR lease_until < ?)",
            (owner, owner, now + lease, server, task_id, owner, now),
        )
        return changed == 1

    async def release(self, server: str, task_id: str, owner: str) -> None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        await self._execute(
            "UPDATE tasks SET lease_owner=NULL, lease_until=NULL "
            "WHERE server=? AND task_id=? AND lease_owner=?",
            (server, task_id, owner),
        )

    async def claim_due(self, owner: str, lease: float, limit: int) -> list[JournalEntry]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        now = self._clock()

        def take(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
            # One write transaction: a second process waits for it (busy_timeout) and then
            # sees these leases, so two owners never take the same task.
            db.execute("BEGIN IMMEDIATE")
            try:
                rows = db.execute(
                    f"SELECT {_READ} FROM tasks WHERE outcome_json IS NULL AND "
                    "(lease_owner IS NULL OR lease_until < ?) ORDER BY created_at LIMIT ?",
                    (now, limit),
                ).fetchall()
                taken = []
                for row in rows:
                    token = row[14] + (row[13] != owner)
                    db.execute(
                        "UPDATE tasks SET lease_owner=?, lease_until=?, lease_token=? "
                        "WHERE server=? AND task_id=?",
                        (owner, now + lease, token, row[0], row[1]),
                    )
                    taken.append((*row[:13], owner, token, now + lease))
                db.execute(_HEARTBEAT, (owner, now, lease))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return taken

        if limit < 1:
            return []
        return [self._entry(row) for row in await self._in_thread(take)]

    async def renew(
        self, owner: str, tasks: Sequence[tuple[str, str]], lease: float
    ) -> set[tuple[str, str]]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        now = self._clock()

        def extend(db: sqlite3.Connection) -> set[tuple[str, str]]:
            held = set()
            db.execute("BEGIN IMMEDIATE")
            try:
                for server, task_id in tasks:
                    changed = db.execute(
                        f"UPDATE tasks SET lease_token={_NEXT_TOKEN}, lease_owner=?, "
                        "lease_until=? WHERE server=? AND task_id=? AND outcome_json IS NULL "
                        "AND (lease_owner IS NULL OR lease_owner=? OR lease_until < ?)",
                        (owner, owner, now + lease, server, task_id, owner, now),
                    ).rowcount
                    if changed == 1:
                        held.add((server, task_id))
                db.execute(_HEARTBEAT, (owner, now, lease))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return held

        return await self._in_thread(extend) if tasks else set()

    # -- fenced writes, leases and outcomes read back ---------------------------------------------

    async def finish_leased(
        self, server: str, task_id: str, outcome: RecordedOutcome, lease: Lease
    ) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        changed = await self._execute(
            "UPDATE tasks SET outcome_json=?, lease_owner=NULL, lease_until=NULL "
            "WHERE server=? AND task_id=? AND outcome_json IS NULL "
            "AND lease_owner=? AND lease_token=?",
            (_dump_outcome(outcome), server, task_id, lease.owner, lease.token),
        )
        if changed != 1:
            log.warning(
                "task %s: outcome not recorded, the lease (token %d) is no longer %s's",
                _obs.TaskId(task_id),
                lease.token,
                lease.owner,
            )
        return changed == 1

    async def snapshot_leased(
        self, server: str, task_id: str, snapshot: Task, lease: Lease
    ) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""

        def update(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT generation FROM tasks WHERE server=? AND task_id=?", (server, task_id)
            ).fetchone()
            if row is None:
                return 0
            return db.execute(
                "UPDATE tasks SET snapshot_json=? WHERE server=? AND task_id=? "
                "AND outcome_json IS NULL AND lease_owner=? AND lease_token=?",
                (
                    _dump_task(snapshot, Generation(row[0])),
                    server,
                    task_id,
                    lease.owner,
                    lease.token,
                ),
            ).rowcount

        return await self._in_thread(update) == 1

    async def lease_of(self, server: str, task_id: str) -> Lease | None:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        now = self._clock()
        rows = await self._query(
            "SELECT lease_owner, lease_token, lease_until FROM tasks WHERE server=? AND "
            "task_id=? AND outcome_json IS NULL AND lease_owner IS NOT NULL AND lease_until >= ?",
            (server, task_id, now),
        )
        if not rows:
            return None
        owner, token, until = rows[0]
        return Lease(owner, token, until, left=until - now)

    def _file_mark(self) -> tuple[int, ...]:
        """What changes when any process writes the journal: the file's and its write-ahead
        log's size and modification time (a stat each, no SQL)."""
        mark: list[int] = []
        for path in (self.path, self.path + "-wal"):
            try:
                info = os.stat(path)
            except OSError:
                mark += [-1, -1]
            else:
                mark += [info.st_size, info.st_mtime_ns]
        return tuple(mark)

    async def wait_outcomes(
        self,
        tasks: Iterable[tuple[str, str]],
        *,
        timeout: float | None = None,
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None = None,
    ) -> dict[tuple[str, str], RecordedOutcome]:
        """Wait until each ``(server, task_id)`` has an outcome, recorded by any process, or
        ``timeout`` seconds pass; the outcomes recorded by then (``on_outcome`` sees each as it
        is found). The MCP servers are not asked: the file is looked at every
        ``watch_interval`` seconds (a stat of it and its write-ahead log), and read only when
        it changed (or a second passed, for a write within the clock's resolution). A task
        the journal does not hold is a JournalError.
        Deadline: ``timeout`` (None: none). Cancelled: between two looks at the file.
        """
        wanted = set(tasks)
        found: dict[tuple[str, str], RecordedOutcome] = {}
        first = True
        seen: tuple[int, ...] | None = None
        read_at = -math.inf
        with anyio.move_on_after(timeout):
            while wanted:
                mark = self._file_mark()
                now = anyio.current_time()
                if mark != seen or now - read_at >= 1.0:
                    seen, read_at = mark, now
                    for key in sorted(wanted):
                        rows = await self._query(
                            "SELECT outcome_json FROM tasks WHERE server=? AND task_id=?", key
                        )
                        if not rows:
                            if first:
                                raise self._fail(f"task {key[1]!r} of {key[0]} is not in it")
                            continue
                        outcome = _load_outcome(rows[0][0])
                        if outcome is not None:
                            wanted.discard(key)
                            found[key] = outcome
                            if on_outcome is not None:
                                on_outcome(key[0], key[1], outcome)
                    first = False
                if wanted:
                    await anyio.sleep(self.watch_interval)
        return found

    # -- input requests shared between workers ---------------------------------------------------

    async def queue_input(self, queued: QueuedInput) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        added = await self._execute(
            "INSERT INTO inputs (server, task_id, key, request_json, queued_by, at) "
            "VALUES (?,?,?,?,?,?) ON CONFLICT (server, task_id, key) DO NOTHING",
            (
                queued.server,
                queued.task_id,
                queued.key,
                json.dumps(_request_json(queued)),
                queued.queued_by,
                queued.queued_at.timestamp(),
            ),
        )
        return added == 1

    async def claim_input(self, server: str, task_id: str, key: str, owner: str) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        rows = await self._query(
            "INSERT INTO inputs (server, task_id, key, answered_by, at) VALUES (?,?,?,?,?) "
            "ON CONFLICT (server, task_id, key) DO UPDATE SET answered_by=excluded.answered_by "
            "WHERE inputs.answered_by IS NULL RETURNING 1",
            (server, task_id, key, owner, self._clock()),
        )
        return len(rows) == 1

    async def queued_inputs(self, server: str | None = None) -> list[QueuedInput]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        where = "" if server is None else " AND i.server = ?"
        rows = await self._query(
            "SELECT i.server, i.task_id, i.key, i.request_json, i.queued_by, i.at FROM inputs i "
            "LEFT JOIN tasks t ON t.server = i.server AND t.task_id = i.task_id "
            "WHERE i.answered_by IS NULL AND i.request_json IS NOT NULL "
            f"AND t.outcome_json IS NULL{where} ORDER BY i.at, i.rowid",
            () if server is None else (server,),
        )
        return [_queued(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5]) for row in rows]

    async def input_answerers(self, server: str, task_id: str) -> dict[str, str]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        rows = await self._query(
            "SELECT key, answered_by FROM inputs WHERE server=? AND task_id=? "
            "AND answered_by IS NOT NULL",
            (server, task_id),
        )
        return {row[0]: row[1] for row in rows}

    def _entry(self, row: tuple[Any, ...]) -> JournalEntry:
        return _entry_of(row, self._fail, json.loads)


def _entry_of(
    row: Sequence[Any], fail: Callable[[str], JournalError], load: Callable[[Any], Any]
) -> JournalEntry:
    """A tasks row (the columns ``_READ`` names, in either journal) as a JournalEntry;
    ``load`` reads a JSON column (SQLite keeps text, PostgreSQL hands back the value)."""
    (server, task_id, generation, version, tool, created, session_id, initialize) = row[:8]
    snapshot_json, answered_json, outcome_json, traceparent, tracestate = row[8:13]
    owner, token, until = row[13:16] if len(row) >= 16 else (None, 0, None)
    try:
        gen = Generation(generation)
        return JournalEntry(
            server=server,
            task_id=task_id,
            generation=gen,
            protocol_version=version,
            tool=tool,
            created_at=dt.datetime.fromisoformat(created) if isinstance(created, str) else created,
            session=(
                RecordedSession(session_id, load(initialize))
                if session_id is not None and initialize is not None
                else None
            ),
            snapshot=(decode(load(snapshot_json), Task, gen) if snapshot_json else None),
            answered_inputs=tuple(load(answered_json)),
            outcome=_outcome_from(load(outcome_json) if outcome_json is not None else None),
            traceparent=traceparent,
            tracestate=tracestate,
            lease=Lease(owner, token, until) if owner is not None and until else None,
        )
    except (ValueError, TypeError, KeyError, MCPTasksError) as exc:
        raise fail(f"unreadable entry for task {task_id!r}: {exc}") from None


def _now() -> float:
    return dt.datetime.now(dt.timezone.utc).timestamp()


def _request_json(queued: QueuedInput) -> JSONObject:
    """What a journal keeps of a queued request besides its key."""
    return {
        "method": queued.method,
        "params": queued.params,
        "id": queued.request_id,
        "session": queued.session_id,
    }


def _queued(
    server: str, task_id: str, key: str, request: Any, queued_by: str | None, at: float
) -> QueuedInput:
    """A queued row as a QueuedInput (``request``: the method, params and id, decoded)."""
    return QueuedInput(
        server=server,
        task_id=task_id,
        key=key,
        method=request["method"],
        params=request.get("params") or {},
        request_id=request.get("id"),
        session_id=request.get("session"),
        queued_by=queued_by,
        queued_at=dt.datetime.fromtimestamp(at, dt.timezone.utc),
    )


def _dump_task(task: Task | None, generation: Generation) -> str | None:
    return None if task is None else json.dumps(encode(task, generation))


def _dump_outcome(outcome: RecordedOutcome | None) -> str | None:
    if outcome is None:
        return None
    return json.dumps(
        {
            "status": outcome.status,
            "result": outcome.result,
            "error": outcome.error,
            "recordedAt": outcome.recorded_at.isoformat(),
        }
    )


def _load_outcome(raw: str | None) -> RecordedOutcome | None:
    return None if raw is None else _outcome_from(json.loads(raw))


def _outcome_from(data: Any) -> RecordedOutcome | None:
    """An outcome column's JSON value (None: open) as a RecordedOutcome."""
    if data is None:
        return None
    return RecordedOutcome(
        status=data["status"],
        result=data.get("result"),
        error=data.get("error"),
        recorded_at=dt.datetime.fromisoformat(data["recordedAt"]),
    )


def recorded_outcome(outcome: Outcome, encode: Callable[[Any], Any]) -> RecordedOutcome:
    """``outcome`` as a journal records it (``encode``: the client's, for the result JSON)."""
    if isinstance(outcome, Completed):
        return RecordedOutcome("completed", result=encode(outcome.result))
    if isinstance(outcome, Failed):
        result = encode(outcome.result) if outcome.result is not None else outcome.raw
        error: str | None
        if outcome.error is not None:
            error = f"{outcome.error.code}: {outcome.error.message}"
        else:
            error = outcome.task.status_message
        return RecordedOutcome("failed", result=result, error=error)
    if isinstance(outcome, Cancelled):
        return RecordedOutcome("cancelled", error=outcome.task.status_message)
    return RecordedOutcome("expired", error=f"ttl ran out at {outcome.expired_at.isoformat()}")


# The public path, as ``_exceptions`` does for its classes: ``mcp_tasks_client.errors``
# re-exports these two, and a traceback names that import even before ``errors`` was imported.
JournalError.__module__ = NotJournaled.__module__ = "mcp_tasks_client.errors"
