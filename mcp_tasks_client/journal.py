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
import os
import stat
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread
import attrs

from . import observability as _obs
from ._exceptions import MCPTasksError, UsageError
from ._generation import Generation
from .models import JSONObject, Task
from .outcomes import Cancelled, Completed, Failed, Outcome
from .wire import decode, encode

if TYPE_CHECKING:  # imported when a SQLiteJournal opens: a program without one never loads it
    import sqlite3

log = _obs.get_logger("journal")

R = TypeVar("R")

__all__ = [
    "Journal",
    "JournalEntry",
    "JournalError",
    "NotJournaled",
    "QueuedInput",
    "RecordedOutcome",
    "RecordedSession",
    "SQLiteJournal",
    "SharedJournal",
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


# -- SQLite -------------------------------------------------------------------------------------

_APPLICATION_ID = 0x4D435454  # "MCTT": this file is an mcp-tasks-client journal
_SCHEMA_VERSION = 2
"""2: each task's trace context (``traceparent``, ``tracestate``) and the ``inputs`` table
(input requests queued for a worker with a handler, and the keys taken for answering); a
version-1 file is migrated in place when opened (two columns and a table added)."""
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
_MIGRATIONS = {
    1: (
        "ALTER TABLE tasks ADD COLUMN traceparent TEXT",
        "ALTER TABLE tasks ADD COLUMN tracestate TEXT",
        _INPUTS,
    )
}
"""From each older schema version to the next: the statements, run in one transaction."""
_COLUMNS = (
    "server, task_id, generation, protocol_version, tool, created_at, session_id, "
    "initialize_json, snapshot_json, answered_json, outcome_json, traceparent, tracestate"
)


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
    ) -> None:
        if max_answered_keys < 1:
            raise UsageError("max_answered_keys must be at least 1")
        self.path = str(path)
        self._clock = clock or _now
        """Seconds since the epoch that leases are timed by (this machine's clock)."""
        self.max_answered_keys = max_answered_keys
        """How many answered input keys a task keeps (the oldest go first): a server that
        asks for ever new keys cannot grow a journal row without bound."""
        self._lock = threading.Lock()
        self._db = self._open(busy_timeout)

    def _fail(self, problem: str) -> JournalError:
        return JournalError(self.path, problem)

    def _open(self, busy_timeout: float) -> sqlite3.Connection:
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
                    raise self._fail(f"{type(exc).__name__}: {exc}") from None

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
            f"SELECT {_COLUMNS} FROM tasks WHERE server=? AND task_id=?", (server, task_id)
        )
        return self._entry(rows[0]) if rows else None

    async def entries(self, *, open_only: bool = False) -> list[JournalEntry]:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        where = " WHERE outcome_json IS NULL" if open_only else ""
        rows = await self._query(f"SELECT {_COLUMNS} FROM tasks{where} ORDER BY created_at")
        return [self._entry(row) for row in rows]

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        """Deadline: ``busy_timeout`` for each statement (another process's write holding the
        file). Cancelled: the statement, already running in a worker thread, finishes first;
        then the cancellation is raised."""
        now = self._clock()
        changed = await self._execute(
            "UPDATE tasks SET lease_owner=?, lease_until=? WHERE server=? AND task_id=? "
            "AND outcome_json IS NULL AND "
            "(lease_owner IS NULL OR lease_owner=? OR lease_until < ?)",
            (owner, now + lease, server, task_id, owner, now),
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
                    f"SELECT {_COLUMNS} FROM tasks WHERE outcome_json IS NULL AND "
                    "(lease_owner IS NULL OR lease_until < ?) ORDER BY created_at LIMIT ?",
                    (now, limit),
                ).fetchall()
                db.executemany(
                    "UPDATE tasks SET lease_owner=?, lease_until=? WHERE server=? AND task_id=?",
                    [(owner, now + lease, row[0], row[1]) for row in rows],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return rows

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
                        "UPDATE tasks SET lease_owner=?, lease_until=? WHERE server=? AND "
                        "task_id=? AND outcome_json IS NULL AND "
                        "(lease_owner IS NULL OR lease_owner=? OR lease_until < ?)",
                        (owner, now + lease, server, task_id, owner, now),
                    ).rowcount
                    if changed == 1:
                        held.add((server, task_id))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return held

        return await self._in_thread(extend) if tasks else set()

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
        (server, task_id, generation, version, tool, created, session_id, initialize) = row[:8]
        snapshot_json, answered_json, outcome_json, traceparent, tracestate = row[8:13]
        try:
            gen = Generation(generation)
            return JournalEntry(
                server=server,
                task_id=task_id,
                generation=gen,
                protocol_version=version,
                tool=tool,
                created_at=dt.datetime.fromisoformat(created),
                session=(
                    RecordedSession(session_id, json.loads(initialize))
                    if session_id is not None and initialize is not None
                    else None
                ),
                snapshot=(decode(json.loads(snapshot_json), Task, gen) if snapshot_json else None),
                answered_inputs=tuple(json.loads(answered_json)),
                outcome=_load_outcome(outcome_json),
                traceparent=traceparent,
                tracestate=tracestate,
            )
        except (ValueError, TypeError, KeyError, MCPTasksError) as exc:
            raise self._fail(f"unreadable entry for task {task_id!r}: {exc}") from None


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
    if raw is None:
        return None
    data = json.loads(raw)
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
