"""What the monitor page shows, read from a journal: the board (tasks, workers, inputs waiting,
the last hour's history) and one task's history; and the wait for the journal to change.

Each reader has a connection of its own and only reads (``SELECT``; SQLite's is opened
read-only), so the page never holds up a worker: the history it reads is written by the
journal's own triggers (schema 4, see :mod:`mcp_tasks_client.journal`). The journal is first
opened the usual way (:class:`~mcp_tasks_client.journal.SQLiteJournal` checks the file's owner
and mode, :class:`~mcp_tasks_client.journal_postgres.PostgresJournal` the schema), which
migrates an older journal, then closed.

A change is noticed cheaply: on SQLite by ``PRAGMA data_version`` (it moves when another
connection commits; no table is read), on PostgreSQL by ``LISTEN`` on the journal's
``<schema>.changes`` channel (a trigger announces each statement that adds history) and its
``<schema>.outcomes`` channel.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread
import attrs

from ..journal import JournalError, SQLiteJournal

R = TypeVar("R")

__all__ = [
    "Board",
    "BoardReader",
    "Event",
    "PostgresReader",
    "SQLiteReader",
    "TaskRow",
    "WaitingInput",
    "WorkerRow",
    "open_reader",
]

OPEN_STATUSES = ("working", "input_required")
ENDED_STATUSES = ("completed", "failed", "cancelled", "expired", "lost")


@attrs.frozen
class TaskRow:
    """One task as the board shows it (times in seconds since the epoch)."""

    server: str
    task_id: str
    tool: str
    generation: str
    created_at: float
    status: str
    """The outcome's status once recorded, else the last snapshot's (``recorded``: none yet)."""
    message: str | None
    changes: int
    """How many times its workers saw its status or message change (its ``status`` events)."""
    changed_at: float | None
    owner: str | None
    lease_until: float | None
    lease_token: int
    ended_at: float | None
    traceparent: str | None

    @property
    def is_open(self) -> bool:
        return self.ended_at is None

    @property
    def trace_id(self) -> str | None:
        """The W3C trace id of the task's span (from its traceparent), or None."""
        parts = (self.traceparent or "").split("-")
        return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None


@attrs.frozen
class Event:
    """One line of a task's history: ``kind`` is ``created``, ``leased``, ``takeover``,
    ``status``, ``input``, ``answered`` or ``outcome``; ``status`` the status it shows (or the
    input's method), ``detail`` the status message, input key, error or previous owner."""

    server: str
    task_id: str
    at: float
    kind: str
    status: str | None
    detail: str | None
    owner: str | None


@attrs.frozen
class WorkerRow:
    """A worker (a ``resume`` owner name), its last heartbeat and the tasks it holds now."""

    owner: str
    seen_at: float
    lease: float
    held: tuple[str, ...]


@attrs.frozen
class WaitingInput:
    """An input request queued in the journal for a worker with a handler to answer."""

    server: str
    task_id: str
    key: str
    method: str
    queued_by: str | None
    at: float


@attrs.frozen
class Board:
    """Everything the main page shows, read at ``now`` (the journal's clock)."""

    now: float
    tasks: tuple[TaskRow, ...]
    workers: tuple[WorkerRow, ...]
    inputs: tuple[WaitingInput, ...]
    recent: tuple[Event, ...]
    """The last hour's events of the kinds that change a status (for the counts picture)."""


class BoardReader(Protocol):
    """Reads a journal for the page; every method is safe to call from many tasks."""

    name: str

    async def board(self, *, limit: int = 500) -> Board:
        """The newest ``limit`` tasks and the rest of the board."""
        ...

    async def task(self, server: str, task_id: str) -> tuple[TaskRow, list[Event]] | None:
        """One task and its history (oldest first), or None when the journal lacks it."""
        ...

    async def wait_change(self, timeout: float) -> bool:
        """Wait until the journal changes (True) or ``timeout`` seconds pass (False)."""
        ...

    async def reset_watch(self) -> None:
        """Drop what :meth:`wait_change` keeps open (after it failed): the next wait starts
        anew."""
        ...

    async def now(self) -> float:
        """The journal's clock (seconds since the epoch): what ages and leases are judged by."""
        ...

    async def aclose(self) -> None: ...


def _task_row(row: Sequence[Any]) -> TaskRow:
    (server, task_id, tool, generation, created, status, message, changes, changed_at) = row[:9]
    owner, until, token, ended_status, ended_at, traceparent = row[9:15]
    ended = _epoch(ended_at) if ended_at is not None else None
    return TaskRow(
        server=server,
        task_id=task_id,
        tool=tool,
        generation=generation,
        created_at=_epoch(created),
        status=ended_status or status or "recorded",
        message=message,
        changes=int(changes or 0),
        changed_at=changed_at,
        owner=owner if ended is None else None,
        lease_until=until if ended is None else None,
        lease_token=int(token or 0),
        ended_at=ended,
        traceparent=traceparent,
    )


def _epoch(value: Any) -> float:
    """A time column (ISO text in SQLite's tasks, timestamptz in PostgreSQL) in epoch seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    raise TypeError(f"not a time: {value!r}")


def _workers(
    rows: Sequence[Sequence[Any]], tasks: Sequence[TaskRow], now: float
) -> list[WorkerRow]:
    held: dict[str, list[str]] = {}
    for task in tasks:
        if task.owner is not None and (task.lease_until or -math.inf) >= now:
            held.setdefault(task.owner, []).append(task.task_id)
    return [WorkerRow(row[0], row[1], row[2], tuple(held.get(row[0], ()))) for row in rows]


def _board(
    now: float,
    tasks: list[TaskRow],
    workers: Sequence[Sequence[Any]],
    inputs: list[WaitingInput],
    recent: list[Event],
) -> Board:
    held = _workers(workers, tasks, now)
    return Board(now, tuple(tasks), tuple(held), tuple(inputs), tuple(recent))


# A task's status changes and the last one's time, from its history (the index on the events'
# task); ``{s}`` the schema's prefix. ``tasks.`` is the outer row.
_CHANGES = (
    "(SELECT count(*) FROM {s}events e WHERE e.server = tasks.server AND "
    "e.task_id = tasks.task_id AND e.kind = 'status'), "
    "(SELECT max(at) FROM {s}events e WHERE e.server = tasks.server AND "
    "e.task_id = tasks.task_id AND e.kind = 'status')"
)

# -- SQLite -------------------------------------------------------------------------------------

_SQLITE_TASKS = (
    "SELECT server, task_id, tool, generation, created_at, "
    "json_extract(snapshot_json, '$.status'), json_extract(snapshot_json, '$.statusMessage'), "
    f"{_CHANGES.format(s='')}, lease_owner, lease_until, lease_token, "
    "json_extract(outcome_json, '$.status'), json_extract(outcome_json, '$.recordedAt'), "
    "traceparent FROM tasks"
)
_EVENTS = "SELECT server, task_id, at, kind, status, detail, owner FROM events"
_RECENT = " WHERE at >= ? AND kind IN ('created', 'status', 'outcome') ORDER BY at"


class SQLiteReader:
    """Reads an SQLite journal file with a read-only connection of its own."""

    def __init__(self, path: str, *, watch_interval: float = 0.2) -> None:
        import sqlite3

        if not os.path.isfile(path):  # never made by looking at it
            raise JournalError(path, "no journal there (workers make it: --journal FILE)")
        SQLiteJournal(path).close()  # the owner and mode checks, and any migration
        self.name = path
        self.watch_interval = watch_interval
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                f"{Path(path).resolve().as_uri()}?mode=ro",
                uri=True,
                check_same_thread=False,
                isolation_level=None,
            )
        except sqlite3.Error as exc:
            raise JournalError(path, f"cannot open for reading: {exc}") from None

    async def _read(self, work: Callable[[Any], R]) -> R:
        import sqlite3

        def run() -> R:
            with self._lock:
                try:
                    return work(self._db)
                except sqlite3.Error as exc:
                    raise JournalError(self.name, f"{type(exc).__name__}: {exc}") from None

        return await anyio.to_thread.run_sync(run)

    async def board(self, *, limit: int = 500) -> Board:
        """Deadline: none of its own (SQLite reads do not wait for writers in WAL mode).
        Cancelled: the read, in a worker thread, finishes first."""

        def read(db: Any) -> Board:
            now = dt.datetime.now(dt.timezone.utc).timestamp()
            db.execute("BEGIN")  # one snapshot of the file for the whole board
            try:
                tasks = [
                    _task_row(row)
                    for row in db.execute(
                        f"{_SQLITE_TASKS} ORDER BY created_at DESC LIMIT ?", (limit,)
                    )
                ]
                workers = db.execute(
                    "SELECT owner, seen_at, lease FROM workers ORDER BY owner"
                ).fetchall()
                inputs = [
                    WaitingInput(row[0], row[1], row[2], json.loads(row[3])["method"], *row[4:])
                    for row in db.execute(
                        "SELECT i.server, i.task_id, i.key, i.request_json, i.queued_by, i.at "
                        "FROM inputs i JOIN tasks t ON t.server = i.server AND "
                        "t.task_id = i.task_id WHERE i.answered_by IS NULL AND "
                        "i.request_json IS NOT NULL AND t.outcome_json IS NULL ORDER BY i.at"
                    )
                ]
                recent = [Event(*row) for row in db.execute(_EVENTS + _RECENT, (now - 3600,))]
            finally:
                db.execute("COMMIT")
            return Board(
                now,
                tuple(tasks),
                tuple(_workers(workers, tasks, now)),
                tuple(inputs),
                tuple(recent),
            )

        return await self._read(read)

    async def task(self, server: str, task_id: str) -> tuple[TaskRow, list[Event]] | None:
        """Deadline: none of its own. Cancelled: the read, in a worker thread, finishes first."""

        def read(db: Any) -> tuple[TaskRow, list[Event]] | None:
            key = (server, task_id)
            row = db.execute(f"{_SQLITE_TASKS} WHERE server=? AND task_id=?", key).fetchone()
            if row is None:
                return None
            where = " WHERE server=? AND task_id=? ORDER BY at, rowid"
            return _task_row(row), [Event(*r) for r in db.execute(_EVENTS + where, key)]

        return await self._read(read)

    async def wait_change(self, timeout: float) -> bool:
        """Looks at ``PRAGMA data_version`` every ``watch_interval`` seconds.
        Deadline: ``timeout``. Cancelled: between two looks."""

        def version(db: Any) -> int:
            return int(db.execute("PRAGMA data_version").fetchone()[0])

        first = await self._read(version)
        with anyio.move_on_after(timeout):
            while True:
                await anyio.sleep(self.watch_interval)
                if await self._read(version) != first:
                    return True
        return False

    async def now(self) -> float:
        return dt.datetime.now(dt.timezone.utc).timestamp()  # leases are timed by this clock

    async def reset_watch(self) -> None:
        pass  # nothing kept open between waits

    async def aclose(self) -> None:
        with self._lock:
            self._db.close()


# -- PostgreSQL ---------------------------------------------------------------------------------

_PG_TASKS = (
    "SELECT server, task_id, tool, generation, created_at, snapshot->>'status', "
    f"snapshot->>'statusMessage', {_CHANGES.format(s='{s}.')}, lease_owner, lease_until, "
    "lease_token, outcome->>'status', outcome->>'recordedAt', traceparent FROM {s}.tasks AS tasks"
)
_APPLICATION = "mcp-tasks monitor"
"""The reader's connections' ``application_name``: ``pg_stat_activity`` shows the page's."""
_PG_EVENTS = _EVENTS.replace("events", "{s}.events")


class PostgresReader:
    """Reads a PostgreSQL journal with one connection of its own (and one more that LISTENs
    while :meth:`wait_change` waits)."""

    def __init__(self, conninfo: str, *, schema: str = "mcp_tasks") -> None:
        import psycopg
        from psycopg import sql

        from ..journal_postgres import PostgresJournal

        journal = PostgresJournal(conninfo, schema=schema, max_size=1)
        journal.open()  # the schema's checks, and any migration
        journal.close()
        self.name = journal.path
        self._conninfo = conninfo
        self._schema = schema
        self._sql = sql
        self._lock = threading.Lock()
        self._conn = psycopg.Connection.connect(
            conninfo, autocommit=True, application_name=_APPLICATION
        )
        self._listener: Any = None

    def _q(self, text: str) -> Any:
        return self._sql.SQL(text).format(s=self._sql.Identifier(self._schema))

    async def _read(self, work: Callable[[Any], R]) -> R:
        """``work`` on the reader's connection; a connection the database dropped (a restart)
        is replaced once, and the read made again (reads are safe to repeat)."""
        import psycopg

        def run() -> R:
            with self._lock:
                for attempt in (1, 2):
                    try:
                        if self._conn.closed or self._conn.broken:
                            self._conn = psycopg.Connection.connect(
                                self._conninfo, autocommit=True, application_name=_APPLICATION
                            )
                        return work(self._conn)
                    except psycopg.OperationalError as exc:
                        if attempt == 2 or not (self._conn.closed or self._conn.broken):
                            raise JournalError(self.name, f"{type(exc).__name__}: {exc}") from None
                    except psycopg.Error as exc:
                        raise JournalError(self.name, f"{type(exc).__name__}: {exc}") from None
                raise AssertionError("unreachable")

        return await anyio.to_thread.run_sync(run)

    async def now(self) -> float:
        def read(conn: Any) -> float:
            row = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
            return float(row.fetchone()[0])

        return await self._read(read)

    async def board(self, *, limit: int = 500) -> Board:
        """Deadline: the server's ``statement_timeout`` if any. Cancelled: the read, in a
        worker thread, finishes first."""

        def read(conn: Any) -> Board:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                now = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8")
                now = now.fetchone()[0]
                tasks = [
                    _task_row(row)
                    for row in conn.execute(
                        self._q(_PG_TASKS + " ORDER BY created_at DESC, seq DESC LIMIT %s"),
                        (limit,),
                    )
                ]
                workers = conn.execute(
                    self._q("SELECT owner, seen_at, lease FROM {s}.workers ORDER BY owner")
                ).fetchall()
                inputs = [
                    WaitingInput(*row)
                    for row in conn.execute(
                        self._q(
                            "SELECT i.server, i.task_id, i.key, i.request->>'method', "
                            "i.queued_by, i.at FROM {s}.inputs i JOIN {s}.tasks t ON "
                            "t.server = i.server AND t.task_id = i.task_id WHERE "
                            "i.answered_by IS NULL AND i.request IS NOT NULL AND "
                            "t.outcome IS NULL ORDER BY i.at"
                        )
                    )
                ]
                recent = [
                    Event(*row)
                    for row in conn.execute(
                        self._q(
                            _EVENTS.replace("events", "{s}.events") + _RECENT.replace("?", "%s")
                        ),
                        (now - 3600,),
                    )
                ]
            return Board(
                now,
                tuple(tasks),
                tuple(_workers(workers, tasks, now)),
                tuple(inputs),
                tuple(recent),
            )

        return await self._read(read)

    async def task(self, server: str, task_id: str) -> tuple[TaskRow, list[Event]] | None:
        """Deadline: the server's ``statement_timeout`` if any. Cancelled: the read, in a
        worker thread, finishes first."""

        def read(conn: Any) -> tuple[TaskRow, list[Event]] | None:
            key = (server, task_id)
            row = conn.execute(
                self._q(_PG_TASKS + " WHERE server=%s AND task_id=%s"), key
            ).fetchone()
            if row is None:
                return None
            events = conn.execute(
                self._q(_PG_EVENTS + " WHERE server=%s AND task_id=%s ORDER BY at, seq"),
                key,
            )
            return _task_row(row), [Event(*r) for r in events]

        return await self._read(read)

    async def reset_watch(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await anyio.to_thread.run_sync(listener.close)

    def _listen(self) -> Any:
        import psycopg

        try:
            conn = psycopg.Connection.connect(
                self._conninfo, autocommit=True, application_name=_APPLICATION
            )
        except psycopg.Error as exc:
            raise JournalError(self.name, f"cannot listen: {exc}") from None
        for channel in ("changes", "outcomes"):
            conn.execute(
                self._sql.SQL("LISTEN {}").format(self._sql.Identifier(f"{self._schema}.{channel}"))
            )
        return conn

    async def wait_change(self, timeout: float) -> bool:
        """Waits on the LISTEN connection's socket (no thread held while waiting).
        Deadline: ``timeout``. Cancelled: the listening connection stays open for the next."""
        if self._listener is None:
            self._listener = await anyio.to_thread.run_sync(self._listen)
        conn = self._listener
        import psycopg

        def announced() -> bool:
            try:
                return bool(list(conn.notifies(timeout=0)))
            except psycopg.Error as exc:
                raise JournalError(self.name, f"listening: {exc}") from None

        with anyio.move_on_after(timeout):
            while True:
                if await anyio.to_thread.run_sync(announced):
                    return True
                await anyio.wait_readable(conn.fileno())
        return False

    async def aclose(self) -> None:
        with self._lock:
            self._conn.close()
            if self._listener is not None:
                self._listener.close()


def open_reader(journal: str, *, schema: str = "mcp_tasks") -> BoardReader:
    """The reader for ``journal``: a ``postgresql://`` (or ``postgres://``) URL, else a file."""
    if journal.startswith(("postgresql://", "postgres://")):
        return PostgresReader(journal, schema=schema)
    return SQLiteReader(journal)
