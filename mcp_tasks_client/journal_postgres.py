"""A :class:`~mcp_tasks_client.journal.Journal` in PostgreSQL, shared by many worker processes.

Install with the ``postgres`` extra (psycopg 3 and psycopg-pool). One journal is one
PostgreSQL schema (``mcp_tasks`` unless you name another) holding two tables: ``meta`` (what
the schema is and its version) and ``tasks`` (one row per ``(server, task_id)``, as in the
SQLite journal). Nothing is created unless the caller says so (``create=True``); a schema of
something else, or of a newer version, is refused with :class:`JournalError` and never
modified.

Leases are how workers share the work. :meth:`PostgresJournal.claim_due` takes the oldest
open tasks no live lease holds with ``SELECT ... FOR UPDATE SKIP LOCKED``, so two workers
asking at once get different tasks and neither waits for the other; ``claim`` renews one;
``finish`` records the outcome, drops the lease and announces it with ``NOTIFY`` in the same
transaction, so :meth:`PostgresJournal.wait_outcomes` in any process wakes on it without
polling the MCP server again. Leases are timed by the database server's clock (one clock for
every worker, whatever their own clocks say), unless the caller passes ``clock``.

Why threads: psycopg's async API runs on asyncio only, and this library serves trio as well.
Each statement runs on a worker thread (``anyio.to_thread``) with a connection from a
psycopg-pool ``ConnectionPool``, bounded by ``statement_timeout`` on the server; a cancelled
caller waits at most that long for its statement. Waiting for notifications holds no thread:
the listening connection's socket is awaited with ``anyio.wait_readable``.

Credentials: the connection string (or libpq's ``PG*`` environment) may carry a password. It
is never logged and never part of an error: errors name the journal by
:attr:`PostgresJournal.path`, the URL without its password.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import attrs

try:
    import psycopg
    import psycopg_pool
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
    from psycopg.types.json import Jsonb
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "PostgresJournal needs the postgres extra: pip install 'mcp-tasks-client[postgres]'"
    ) from exc

from . import observability as _obs
from ._exceptions import UsageError
from ._generation import Generation
from .journal import (
    JournalBusy,
    JournalEntry,
    JournalError,
    JournalTimeout,
    JournalUnavailable,
    Lease,
    QueuedInput,
    RecordedOutcome,
    _entry_of,
    _outcome_from,
    _queued,
    _request_json,
)
from .models import Task
from .wire import encode

__all__ = ["SCHEMA_VERSION", "PostgresJournal", "Reconnect"]

log = _obs.get_logger("journal")

R = TypeVar("R")

SCHEMA_VERSION = 4
"""The version of the tables this release reads and writes. 2: each task's trace context
(``traceparent``, ``tracestate``) and the ``inputs`` table. 3: each lease's generation
(``lease_token``), which fences a paused worker's late writes. 4: what the monitor page reads:
each task's history (``events``, written by triggers in the statements that change a task, and
announced on the channel ``<schema>.changes``) and the workers' heartbeats (``workers``). An
older journal is migrated when opened."""

_APPLICATION = "mcp-tasks-client journal"
_LOCK_CLASS = 0x4D435454  # "MCTT": the advisory lock that serialises creating a journal
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_COLUMNS = (
    "server, task_id, generation, protocol_version, tool, created_at, session_id, "
    "initialize, snapshot, answered, outcome, traceparent, tracestate"
)
_READ = _COLUMNS + ", lease_owner, lease_token, lease_until"
"""What an entry is read from: the columns written, and the lease."""
# A new lease's generation: one more when the task changes hands, the same when its owner
# renews it (the SET clause of a statement with the parameter ``owner``).
_NEXT_TOKEN = "lease_token = lease_token + (lease_owner IS DISTINCT FROM %(owner)s)::int"
# Seconds since the epoch: the caller's clock when one was given, else the server's.
_NOW = "COALESCE(%(now)s::float8, extract(epoch FROM clock_timestamp())::float8)"
# A worker's heartbeat, in the statement of each claim and renewal (a CTE of it, with the
# parameters ``owner`` and ``lease``): written at most once a second. An idle worker looks for
# work 20 times a second, and a look within the second reads the row and writes nothing (not
# even a row lock, which ON CONFLICT ... WHERE would take).
_HEARTBEAT = (
    "beat AS (INSERT INTO {w} AS w (owner, seen_at, lease) "
    f"SELECT %(owner)s, {_NOW}, %(lease)s WHERE NOT EXISTS (SELECT 1 FROM {{w}} "
    f"WHERE owner = %(owner)s AND seen_at >= {_NOW} - 1.0) ON CONFLICT (owner) DO UPDATE "
    "SET seen_at = excluded.seen_at, lease = excluded.lease)"
)


def _inputs_table(schema: sql.Identifier) -> sql.Composed:
    """Version 2: input requests queued for a worker with a handler, and the keys taken for
    answering (``answered_by`` set), once per key across every worker (``claim_input``)."""
    return sql.SQL(
        """CREATE TABLE {}.inputs (
            seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            server text NOT NULL,
            task_id text NOT NULL,
            key text NOT NULL,
            request jsonb,
            queued_by text,
            answered_by text,
            at float8 NOT NULL,
            PRIMARY KEY (server, task_id, key)
        )"""
    ).format(schema)


def _activity(schema: sql.Identifier, name: str) -> list[sql.Composed]:
    """Version 4: what the monitor page reads. Each task's history is written by triggers in
    the transaction of the statement that changed the task (a worker makes no extra round
    trip, and a status is recorded only when it or its message changes, not at every poll);
    each statement that adds history announces it on ``<schema>.changes`` (empty payload)."""
    event = "INSERT INTO {s}.events (server, task_id, at, kind, status, detail, owner) VALUES "
    now = "extract(epoch FROM clock_timestamp())"
    # One function, told by its trigger which event to write (a row the same statement
    # changes in two ways gets each event once).
    task_events = f"""CREATE FUNCTION {{s}}.task_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_ARGV[0] = 'created' THEN
                {event} (NEW.server, NEW.task_id, extract(epoch FROM NEW.created_at),
                    'created', NEW.snapshot->>'status', NEW.snapshot->>'statusMessage', NULL);
            ELSIF TG_ARGV[0] = 'lease' THEN
                {event} (NEW.server, NEW.task_id, {now},
                    CASE WHEN OLD.lease_owner IS NULL THEN 'leased' ELSE 'takeover' END, NULL,
                    OLD.lease_owner, NEW.lease_owner);
            ELSIF TG_ARGV[0] = 'status' THEN
                {event} (NEW.server, NEW.task_id, {now}, 'status', NEW.snapshot->>'status',
                    NEW.snapshot->>'statusMessage', NEW.lease_owner);
            ELSIF TG_ARGV[0] = 'answered' THEN
                {event} (NEW.server, NEW.task_id, {now}, 'answered', NULL, NEW.answered->>-1,
                    NEW.lease_owner);
            ELSE
                {event} (NEW.server, NEW.task_id, {now}, 'outcome', NEW.outcome->>'status',
                    NEW.outcome->>'error', OLD.lease_owner);
            END IF;
            RETURN NULL;
        END $$"""
    # Each update trigger names its column (UPDATE OF): a statement that does not set the
    # column never evaluates the trigger (a renewal sets the lease, not the snapshot), and its
    # WHEN judges, without a call, whether the change is one the page shows (a poll that
    # brought the same snapshot is not: the cheap whole-value comparison comes first).
    when = {
        "lease": "NEW.lease_owner IS NOT NULL AND NEW.lease_owner IS DISTINCT FROM OLD.lease_owner",
        "status": "NEW.snapshot IS DISTINCT FROM OLD.snapshot AND "
        "(NEW.snapshot->>'status', NEW.snapshot->>'statusMessage') IS DISTINCT FROM "
        "(OLD.snapshot->>'status', OLD.snapshot->>'statusMessage')",
        "answered": "NEW.answered IS DISTINCT FROM OLD.answered",
        "outcome": "OLD.outcome IS NULL AND NEW.outcome IS NOT NULL",
    }
    column = {"lease": "lease_owner", "status": "snapshot", "answered": "answered"}
    triggers = [
        f"CREATE TRIGGER task_{kind} AFTER UPDATE OF {column.get(kind, kind)} ON {{s}}.tasks "
        f"FOR EACH ROW WHEN ({condition}) EXECUTE FUNCTION {{s}}.task_events('{kind}')"
        for kind, condition in when.items()
    ]
    input_events = f"""CREATE FUNCTION {{s}}.input_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            {event} (NEW.server, NEW.task_id, {now}, 'input', NEW.request->>'method', NEW.key,
                NEW.queued_by);
            RETURN NULL;
        END $$"""
    statements = [
        """CREATE TABLE {s}.events (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            server text NOT NULL,
            task_id text NOT NULL,
            at float8 NOT NULL,
            kind text NOT NULL,
            status text,
            detail text,
            owner text
        )""",
        "CREATE INDEX events_task ON {s}.events (server, task_id)",
        "CREATE INDEX events_at ON {s}.events (at)",
        "CREATE TABLE {s}.workers (owner text PRIMARY KEY, seen_at float8 NOT NULL, "
        "lease float8 NOT NULL)",
        task_events,
        "CREATE TRIGGER task_created AFTER INSERT ON {s}.tasks FOR EACH ROW "
        "EXECUTE FUNCTION {s}.task_events('created')",
        *triggers,
        input_events,
        "CREATE TRIGGER input_events AFTER INSERT ON {s}.inputs FOR EACH ROW "
        "WHEN (NEW.request IS NOT NULL) EXECUTE FUNCTION {s}.input_events()",
        """CREATE FUNCTION {s}.announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_notify({channel}, ''); RETURN NULL; END $$""",
        "CREATE TRIGGER announce_change AFTER INSERT ON {s}.events FOR EACH STATEMENT "
        "EXECUTE FUNCTION {s}.announce_change()",
    ]
    channel = sql.Literal(f"{name}.changes")
    return [sql.SQL(text).format(s=schema, channel=channel) for text in statements]


def _create_statements(schema: sql.Identifier, name: str) -> list[sql.Composed]:
    return [
        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema),
        sql.SQL("CREATE TABLE {}.meta (key text PRIMARY KEY, value text NOT NULL)").format(schema),
        sql.SQL(
            """CREATE TABLE {}.tasks (
                seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                server text NOT NULL,
                task_id text NOT NULL,
                generation text NOT NULL,
                protocol_version text NOT NULL,
                tool text NOT NULL,
                created_at timestamptz NOT NULL,
                session_id text,
                initialize jsonb,
                snapshot jsonb,
                answered jsonb NOT NULL DEFAULT '[]',
                outcome jsonb,
                lease_owner text,
                lease_until float8,
                traceparent text,
                tracestate text,
                lease_token bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (server, task_id)
            )"""
        ).format(schema),
        # What claim_due scans: open tasks, oldest first.
        sql.SQL(
            "CREATE INDEX tasks_open ON {}.tasks (created_at, seq) WHERE outcome IS NULL"
        ).format(schema),
        _inputs_table(schema),
        *_activity(schema, name),
        sql.SQL(
            "INSERT INTO {}.meta (key, value) VALUES ('application', {}), ('schema_version', {})"
        ).format(schema, sql.Literal(_APPLICATION), sql.Literal(str(SCHEMA_VERSION))),
    ]


def _migration_1_to_2(schema: sql.Identifier, name: str) -> list[sql.Composed]:
    """Version 1 to 2: the trace context columns and the inputs table."""
    return [
        sql.SQL(
            "ALTER TABLE {}.tasks ADD COLUMN traceparent text, ADD COLUMN tracestate text"
        ).format(schema),
        _inputs_table(schema),
        sql.SQL("UPDATE {}.meta SET value = '2' WHERE key = 'schema_version'").format(schema),
    ]


def _migration_3_to_4(schema: sql.Identifier, name: str) -> list[sql.Composed]:
    """Version 3 to 4: what the monitor page reads."""
    return [
        *_activity(schema, name),
        sql.SQL("UPDATE {}.meta SET value = '4' WHERE key = 'schema_version'").format(schema),
    ]


def _migration_2_to_3(schema: sql.Identifier, name: str) -> list[sql.Composed]:
    """Version 2 to 3: each lease's generation (the fence of late writes)."""
    return [
        sql.SQL("ALTER TABLE {}.tasks ADD COLUMN lease_token bigint NOT NULL DEFAULT 0").format(
            schema
        ),
        sql.SQL("UPDATE {}.meta SET value = '3' WHERE key = 'schema_version'").format(schema),
    ]


_MIGRATIONS = {"1": _migration_1_to_2, "2": _migration_2_to_3, "3": _migration_3_to_4}
"""From each older version to the next."""


@attrs.frozen
class Reconnect:
    """How a :class:`PostgresJournal` rides out a lost database (a restart, a dropped
    connection): a statement that could not reach it is tried again, after ``first`` seconds,
    then twice as long each time up to ``longest``, for at most ``within`` seconds in all;
    then :class:`~mcp_tasks_client.journal.JournalUnavailable` is raised. Each try is logged
    (a warning naming the error). Statements are tried again only when the database was not
    reached or the connection broke: each of the journal's statements is safe to repeat (a
    repeated lease or outcome write changes nothing). A ``wait_outcomes`` listener reconnects
    the same way, and reads the outcomes again (an announcement made while it was away is
    not lost). Without a Reconnect (the default) the first failure is raised.
    """

    within: float = 30.0
    first: float = 0.1
    longest: float = 2.0

    def __attrs_post_init__(self) -> None:
        if not (self.within > 0 and 0 < self.first <= self.longest):
            raise UsageError("Reconnect: within > 0 and 0 < first <= longest (seconds)")

    def delays(self) -> Iterable[float]:
        """The waits before each new try, in order, as long as they fit in ``within``."""
        spent, delay = 0.0, self.first
        while spent + delay <= self.within:
            yield delay
            spent += delay
            delay = min(self.longest, delay * 2)


def display_name(conninfo: str) -> str:
    """``conninfo`` as a URL without its password (what errors and logs may show).

    Raises UsageError when it is not a PostgreSQL connection string.
    """
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.Error as exc:
        raise UsageError(f"not a PostgreSQL connection string ({exc})") from None
    user = params.get("user")
    host = str(params.get("host") or "")
    port = params.get("port")
    dbname = params.get("dbname") or ""
    who = f"{user}@" if user else ""
    if host.startswith("/"):  # a unix socket directory
        return f"postgresql://{who}/{dbname}?host={host}"
    at = f"{host}:{port}" if port else host
    return f"postgresql://{who}{at}/{dbname}"


def notify_payload(server: str, task_id: str) -> str:
    """What ``finish`` announces for a task: a fixed-size digest (a NOTIFY payload is limited
    to 8000 bytes, a URL and task id are not, and the ids are not for every listener)."""
    return hashlib.sha256(f"{server}\n{task_id}".encode()).hexdigest()[:32]


class PostgresJournal:
    """A :class:`~mcp_tasks_client.journal.SharedJournal` in a PostgreSQL database.

    ``conninfo`` is a libpq URL or key/value string (``postgresql://user@host/db``); what it
    leaves out comes from libpq's environment (``PGHOST``, ``PGPASSWORD``, ``PGPASSFILE``,
    ...). ``schema`` names the PostgreSQL schema that holds the journal; ``create=True``
    creates it when absent (otherwise a missing journal is a JournalError).

    Open it with ``async with PostgresJournal(...) as journal:`` (or ``open()`` / ``close()``,
    or ``with``: these block while connecting). ``max_size`` pooled connections serve the
    journal's statements (every one is short: a row read or written by its key); each
    :meth:`wait_outcomes` call holds one more connection of its own while it waits.
    ``statement_timeout`` bounds every statement on the server, ``connect_timeout`` each
    connection attempt and the wait for a free pooled connection.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "mcp_tasks",
        create: bool = False,
        min_size: int = 1,
        max_size: int = 4,
        statement_timeout: float = 10.0,
        connect_timeout: float = 10.0,
        max_answered_keys: int = 10_000,
        clock: Callable[[], float] | None = None,
        reconnect: Reconnect | None = None,
    ) -> None:
        if not _SCHEMA_NAME.fullmatch(schema):
            raise UsageError(
                f"schema {schema!r}: use lower-case letters, digits and _ (at most 40)"
            )
        if not 1 <= min_size <= max_size:
            raise UsageError("pool sizes: 1 <= min_size <= max_size")
        if statement_timeout <= 0 or connect_timeout <= 0:
            raise UsageError("statement_timeout and connect_timeout are positive seconds")
        if max_answered_keys < 1:
            raise UsageError("max_answered_keys must be at least 1")
        self.path = display_name(conninfo)
        """The journal as errors and logs name it: the URL without a password."""
        self.schema = schema
        self.create = create
        self.statement_timeout = statement_timeout
        self.connect_timeout = connect_timeout
        self.max_answered_keys = max_answered_keys
        self._conninfo = conninfo
        self._password = str(conninfo_to_dict(conninfo).get("password") or "")
        self._clock = clock
        self.reconnect = reconnect
        """How a lost database is ridden out (None: the first failure is raised)."""
        self._ident = sql.Identifier(schema)
        self._channel = f"{schema}.outcomes"
        self._pool: psycopg_pool.ConnectionPool[psycopg.Connection[Any]] = (
            psycopg_pool.ConnectionPool(
                conninfo,
                min_size=min_size,
                max_size=max_size,
                open=False,
                configure=self._configure,
                # A connection the database dropped (a restart) is replaced before it is used.
                check=psycopg_pool.ConnectionPool.check_connection,
                kwargs={"connect_timeout": max(1, round(connect_timeout))},
                timeout=connect_timeout,
                name=f"mcp_tasks_journal:{schema}",
            )
        )
        self._opened = False

    def __repr__(self) -> str:
        return f"PostgresJournal({self.path!r}, schema={self.schema!r})"

    # -- opening and closing --------------------------------------------------------------------

    def _fail(self, problem: str) -> JournalError:
        if self._password:
            problem = problem.replace(self._password, "***")
        return JournalError(self.path, problem)

    def _error(self, exc: BaseException) -> JournalError:
        """The typed JournalError for a database failure, logged (a warning) as it is made."""
        error: JournalError
        if isinstance(exc, psycopg.errors.QueryCanceled):
            problem = f"a statement ran past statement_timeout ({self.statement_timeout} s)"
            error = JournalTimeout(self.path, self._hide(problem))
        elif isinstance(exc, psycopg_pool.PoolTimeout) and self._pool_full():
            problem = f"no pooled connection came free within {self.connect_timeout} s"
            error = JournalBusy(self.path, self._hide(problem))
        elif isinstance(exc, psycopg_pool.PoolTimeout):  # room to connect: it could not
            problem = f"no database connection within {self.connect_timeout} s"
            error = JournalUnavailable(self.path, self._hide(problem))
        elif isinstance(exc, psycopg.OperationalError) and not isinstance(
            exc, psycopg.errors.QueryCanceled
        ):
            text = str(exc).strip() or type(exc).__name__
            error = JournalUnavailable(self.path, self._hide(f"{type(exc).__name__}: {text}"))
        else:
            text = str(exc).strip() or type(exc).__name__
            return self._fail(f"{type(exc).__name__}: {text}")
        log.warning("journal %s: %s: %s", self.path, type(error).__name__, error.problem)
        return error

    def _pool_full(self) -> bool:
        """Every connection the pool may open is open (and was busy): an exhausted pool."""
        return self._pool.get_stats().get("pool_size", 0) >= self._pool.max_size

    def _hide(self, problem: str) -> str:
        return problem.replace(self._password, "***") if self._password else problem

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.autocommit = True
        millis = str(max(1, round(self.statement_timeout * 1000)))
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false), "
            "set_config('TimeZone', 'UTC', false)",
            (millis,),
        )

    def open(self) -> None:
        """Connect, and check (or, with ``create=True``, create) the journal's tables; blocks."""
        if self._opened:
            return
        try:
            self._pool.open(wait=True, timeout=self.connect_timeout)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self._pool.close()
            raise self._fail(f"cannot connect ({self._error(exc).problem})") from None
        try:
            with self._pool.connection() as conn:
                _check_schema(conn, self)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self._pool.close()
            raise self._error(exc) from None
        except BaseException:
            self._pool.close()
            raise
        self._opened = True
        log.debug("journal %s open (schema %s)", self.path, self.schema)

    def close(self) -> None:
        self._opened = False
        self._pool.close()

    def __enter__(self) -> PostgresJournal:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> PostgresJournal:
        """Open the connection pool and check the schema. Deadline: ``connect_timeout`` for each
        connection. Cancelled: the opening, in a worker thread, finishes first."""
        await anyio.to_thread.run_sync(self.open)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the pool. Deadline: the pool's own close. Cancelled: the close, in a worker
        thread, finishes first."""
        await anyio.to_thread.run_sync(self.close)

    # -- running SQL off the event loop ---------------------------------------------------------

    async def _run(self, work: Callable[[psycopg.Connection[Any]], R]) -> R:
        """``work`` on a pooled connection, in a worker thread; with :attr:`reconnect`, tried
        again (after its delays) while the database cannot be reached."""
        if not self._opened:
            raise self._fail("not open (use `async with PostgresJournal(...)` or open())")

        def run() -> R:
            try:
                with self._pool.connection() as conn:
                    return work(conn)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                raise self._error(exc) from None

        delays = iter(self.reconnect.delays() if self.reconnect is not None else ())
        while True:
            try:
                return await anyio.to_thread.run_sync(run)
            except JournalUnavailable:
                delay = next(delays, None)
                if delay is None:
                    raise
                log.warning("journal %s: trying again in %.2f s", self.path, delay)
                await anyio.sleep(delay)

    def _sql(self, text: str) -> sql.Composed:
        """``text`` with each ``{t}`` the journal's tasks table, each ``{w}`` its workers."""
        return sql.SQL(text).format(
            t=sql.SQL("{}.tasks").format(self._ident), w=sql.SQL("{}.workers").format(self._ident)
        )

    def _args(self, **args: Any) -> dict[str, Any]:
        return {"now": self._clock() if self._clock is not None else None, **args}

    # -- the protocol ---------------------------------------------------------------------------

    async def record(self, entry: JournalEntry) -> None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        session = entry.session
        statement = self._sql(
            f"INSERT INTO {{t}} AS t ({_COLUMNS}) VALUES (%(server)s, %(task_id)s, %(generation)s, "
            "%(version)s, %(tool)s, %(created)s, %(session)s, %(initialize)s, %(snapshot)s, "
            "%(answered)s, %(outcome)s, %(traceparent)s, %(tracestate)s) "
            "ON CONFLICT (server, task_id) DO UPDATE SET generation=excluded.generation, "
            "protocol_version=excluded.protocol_version, tool=excluded.tool, "
            "created_at=excluded.created_at, session_id=excluded.session_id, "
            "initialize=excluded.initialize, snapshot=excluded.snapshot, "
            "answered=excluded.answered, outcome=excluded.outcome, "
            "traceparent=excluded.traceparent, tracestate=excluded.tracestate "
            "WHERE t.outcome IS NULL"
        )
        args = {
            "server": entry.server,
            "task_id": entry.task_id,
            "generation": entry.generation.value,
            "version": entry.protocol_version,
            "tool": entry.tool,
            "created": entry.created_at,
            "session": session.session_id if session else None,
            "initialize": Jsonb(session.initialize) if session else None,
            "snapshot": _task_json(entry.snapshot, entry.generation),
            "answered": Jsonb(list(entry.answered_inputs)),
            "outcome": _outcome_json(entry.outcome),
            "traceparent": entry.traceparent,
            "tracestate": entry.tracestate,
        }
        await self._run(lambda conn: conn.execute(statement, args))
        _obs.remember(entry.task_id)
        log.debug("recorded task %s of %s", _obs.TaskId(entry.task_id), entry.tool)

    async def snapshot(self, server: str, task_id: str, snapshot: Task) -> None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._sql("SELECT generation FROM {t} WHERE server=%s AND task_id=%s")
        update = self._sql(
            "UPDATE {t} SET snapshot=%s WHERE server=%s AND task_id=%s AND outcome IS NULL"
        )

        def work(conn: psycopg.Connection[Any]) -> None:
            row = conn.execute(select, (server, task_id)).fetchone()
            if row is not None:
                conn.execute(update, (_task_json(snapshot, Generation(row[0])), server, task_id))

        await self._run(work)

    async def answered(self, server: str, task_id: str, key: str) -> None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._sql("SELECT answered FROM {t} WHERE server=%s AND task_id=%s FOR UPDATE")
        update = self._sql("UPDATE {t} SET answered=%s WHERE server=%s AND task_id=%s")

        def work(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                row = conn.execute(select, (server, task_id)).fetchone()
                if row is not None and key not in row[0]:
                    kept = [*row[0], key][-self.max_answered_keys :]
                    conn.execute(update, (Jsonb(kept), server, task_id))

        await self._run(work)

    async def finish(self, server: str, task_id: str, outcome: RecordedOutcome) -> None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        update = self._sql(
            "UPDATE {t} SET outcome=%s, lease_owner=NULL, lease_until=NULL "
            "WHERE server=%s AND task_id=%s AND outcome IS NULL"
        )

        def work(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                changed = conn.execute(update, (_outcome_json(outcome), server, task_id))
                if changed.rowcount == 1:
                    # Delivered when this transaction commits, never before the row is there.
                    conn.execute(
                        "SELECT pg_notify(%s, %s)",
                        (self._channel, notify_payload(server, task_id)),
                    )

        await self._run(work)
        log.debug("task %s finished in the journal", _obs.TaskId(task_id))

    async def get(self, server: str, task_id: str) -> JournalEntry | None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._sql(f"SELECT {_READ} FROM {{t}} WHERE server=%s AND task_id=%s")
        row = await self._run(lambda conn: conn.execute(select, (server, task_id)).fetchone())
        return self._entry(row) if row is not None else None

    async def entries(self, *, open_only: bool = False) -> list[JournalEntry]:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        where = " WHERE outcome IS NULL" if open_only else ""
        select = self._sql(f"SELECT {_READ} FROM {{t}}{where} ORDER BY created_at, seq")
        rows = await self._run(lambda conn: conn.execute(select).fetchall())
        return [self._entry(row) for row in rows]

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        update = self._sql(
            f"UPDATE {{t}} SET {_NEXT_TOKEN}, lease_owner=%(owner)s, "
            f"lease_until={_NOW} + %(lease)s "
            "WHERE server=%(server)s AND task_id=%(task_id)s AND outcome IS NULL AND "
            f"(lease_owner IS NULL OR lease_owner=%(owner)s OR lease_until < {_NOW})"
        )
        args = self._args(owner=owner, lease=lease, server=server, task_id=task_id)
        return await self._run(lambda conn: conn.execute(update, args).rowcount == 1)

    async def release(self, server: str, task_id: str, owner: str) -> None:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        update = self._sql(
            "UPDATE {t} SET lease_owner=NULL, lease_until=NULL "
            "WHERE server=%s AND task_id=%s AND lease_owner=%s"
        )
        await self._run(lambda conn: conn.execute(update, (server, task_id, owner)))

    async def claim_due(self, owner: str, lease: float, limit: int) -> list[JournalEntry]:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        if limit < 1:
            return []
        # SKIP LOCKED: rows another worker is claiming right now are passed over, not waited
        # for; the UPDATE re-checks each row it locked, so a lease is never taken twice.
        update = self._sql(
            f"WITH {_HEARTBEAT}, "
            "due AS (SELECT server, task_id FROM {t} WHERE outcome IS NULL AND "
            f"(lease_owner IS NULL OR lease_until < {_NOW}) "
            "ORDER BY created_at, seq LIMIT %(limit)s FOR UPDATE SKIP LOCKED) "
            f"UPDATE {{t}} AS t SET {_NEXT_TOKEN}, lease_owner=%(owner)s, "
            f"lease_until={_NOW} + %(lease)s "
            "FROM due WHERE t.server = due.server AND t.task_id = due.task_id RETURNING "
            + ", ".join(f"t.{column.strip()}" for column in _READ.split(","))
        )
        args = self._args(owner=owner, lease=lease, limit=limit)
        rows = await self._run(lambda conn: conn.execute(update, args).fetchall())
        entries = [self._entry(row) for row in rows]
        entries.sort(key=lambda entry: entry.created_at)
        return entries

    async def renew(
        self, owner: str, tasks: Sequence[tuple[str, str]], lease: float
    ) -> set[tuple[str, str]]:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        if not tasks:
            return set()
        update = self._sql(
            f"WITH {_HEARTBEAT} UPDATE {{t}} AS t SET {_NEXT_TOKEN}, lease_owner=%(owner)s, "
            f"lease_until={_NOW} + %(lease)s "
            "FROM unnest(%(servers)s::text[], %(ids)s::text[]) AS k(server, task_id) "
            "WHERE t.server = k.server AND t.task_id = k.task_id AND t.outcome IS NULL AND "
            f"(t.lease_owner IS NULL OR t.lease_owner=%(owner)s OR t.lease_until < {_NOW}) "
            "RETURNING t.server, t.task_id"
        )
        args = self._args(
            owner=owner, lease=lease, servers=[s for s, _ in tasks], ids=[t for _, t in tasks]
        )
        rows = await self._run(lambda conn: conn.execute(update, args).fetchall())
        return {(row[0], row[1]) for row in rows}

    # -- fenced writes and leases read back ------------------------------------------------------

    async def finish_leased(
        self, server: str, task_id: str, outcome: RecordedOutcome, lease: Lease
    ) -> bool:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        # The fence: the lease's owner and generation, checked by the statement that records.
        update = self._sql(
            "UPDATE {t} SET outcome=%s, lease_owner=NULL, lease_until=NULL "
            "WHERE server=%s AND task_id=%s AND outcome IS NULL "
            "AND lease_owner=%s AND lease_token=%s"
        )
        args = (_outcome_json(outcome), server, task_id, lease.owner, lease.token)

        def work(conn: psycopg.Connection[Any]) -> bool:
            with conn.transaction():
                if conn.execute(update, args).rowcount != 1:
                    return False
                conn.execute(
                    "SELECT pg_notify(%s, %s)", (self._channel, notify_payload(server, task_id))
                )
                return True

        recorded = await self._run(work)
        if not recorded:
            log.warning(
                "task %s: outcome not recorded, the lease (token %d) is no longer %s's",
                _obs.TaskId(task_id),
                lease.token,
                lease.owner,
            )
        return recorded

    async def snapshot_leased(
        self, server: str, task_id: str, snapshot: Task, lease: Lease
    ) -> bool:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._sql("SELECT generation FROM {t} WHERE server=%s AND task_id=%s")
        update = self._sql(
            "UPDATE {t} SET snapshot=%s WHERE server=%s AND task_id=%s AND outcome IS NULL "
            "AND lease_owner=%s AND lease_token=%s"
        )

        def work(conn: psycopg.Connection[Any]) -> bool:
            row = conn.execute(select, (server, task_id)).fetchone()
            if row is None:
                return False
            json = _task_json(snapshot, Generation(row[0]))
            args = (json, server, task_id, lease.owner, lease.token)
            return bool(conn.execute(update, args).rowcount == 1)

        return await self._run(work)

    async def lease_of(self, server: str, task_id: str) -> Lease | None:
        """The live lease, judged by the database server's clock (unless ``clock`` was given).
        Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._sql(
            f"SELECT lease_owner, lease_token, lease_until, lease_until - {_NOW} FROM {{t}} "
            "WHERE server=%(server)s AND task_id=%(task_id)s AND outcome IS NULL "
            f"AND lease_owner IS NOT NULL AND lease_until >= {_NOW}"
        )
        args = self._args(server=server, task_id=task_id)
        row = await self._run(lambda conn: conn.execute(select, args).fetchone())
        if row is None:
            return None
        return Lease(row[0], row[1], row[2], left=row[3])

    # -- input requests shared between workers ---------------------------------------------------

    def _inputs_sql(self, text: str) -> sql.Composed:
        """``text`` with ``{i}`` the inputs table and ``{t}`` the tasks table."""
        return sql.SQL(text).format(
            i=sql.SQL("{}.inputs").format(self._ident), t=sql.SQL("{}.tasks").format(self._ident)
        )

    async def queue_input(self, queued: QueuedInput) -> bool:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        insert = self._inputs_sql(
            "INSERT INTO {i} (server, task_id, key, request, queued_by, at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (server, task_id, key) DO NOTHING"
        )
        args = (
            queued.server,
            queued.task_id,
            queued.key,
            Jsonb(_request_json(queued)),
            queued.queued_by,
            queued.queued_at.timestamp(),
        )
        return await self._run(lambda conn: conn.execute(insert, args).rowcount == 1)

    async def claim_input(self, server: str, task_id: str, key: str, owner: str) -> bool:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        # One statement: the row's lock makes a second claimer wait for the first's commit,
        # then see answered_by set and change nothing (RETURNING no row).
        upsert = self._inputs_sql(
            f"INSERT INTO {{i}} AS i (server, task_id, key, answered_by, at) VALUES "
            f"(%(server)s, %(task_id)s, %(key)s, %(owner)s, {_NOW}) "
            "ON CONFLICT (server, task_id, key) DO UPDATE SET answered_by = excluded.answered_by "
            "WHERE i.answered_by IS NULL RETURNING 1"
        )
        args = self._args(server=server, task_id=task_id, key=key, owner=owner)
        return await self._run(lambda conn: len(conn.execute(upsert, args).fetchall()) == 1)

    async def queued_inputs(self, server: str | None = None) -> list[QueuedInput]:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._inputs_sql(
            "SELECT i.server, i.task_id, i.key, i.request, i.queued_by, i.at FROM {i} AS i "
            "LEFT JOIN {t} AS t ON t.server = i.server AND t.task_id = i.task_id "
            "WHERE i.answered_by IS NULL AND i.request IS NOT NULL AND t.outcome IS NULL "
            "AND (%(server)s::text IS NULL OR i.server = %(server)s) ORDER BY i.at, i.seq"
        )
        rows = await self._run(lambda conn: conn.execute(select, {"server": server}).fetchall())
        return [_queued(*row) for row in rows]

    async def input_answerers(self, server: str, task_id: str) -> dict[str, str]:
        """Deadline: ``statement_timeout`` for the statement, on the server (and
        ``connect_timeout`` for a connection). Cancelled: the statement, already running in a
        worker thread, finishes (at most ``statement_timeout``) before the cancellation is
        raised."""
        select = self._inputs_sql(
            "SELECT key, answered_by FROM {i} WHERE server=%s AND task_id=%s "
            "AND answered_by IS NOT NULL"
        )
        rows = await self._run(lambda conn: conn.execute(select, (server, task_id)).fetchall())
        return {row[0]: row[1] for row in rows}

    # -- outcomes announced ---------------------------------------------------------------------

    async def wait_outcome(
        self, server: str, task_id: str, *, timeout: float | None = None
    ) -> RecordedOutcome | None:
        """The outcome of a task once any process records it; None if ``timeout`` seconds
        pass first (the task is still open). A task never recorded is a JournalError.
        Deadline: ``timeout`` (None: none). Cancelled: the listening connection is closed.
        """
        found = await self.wait_outcomes([(server, task_id)], timeout=timeout)
        return found.get((server, task_id))

    async def wait_outcomes(
        self,
        tasks: Iterable[tuple[str, str]],
        *,
        timeout: float | None = None,
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None = None,
    ) -> dict[tuple[str, str], RecordedOutcome]:
        """Wait until each ``(server, task_id)`` has an outcome, recorded by any process, or
        ``timeout`` seconds pass; the outcomes recorded by then. ``on_outcome`` sees each one
        as it is found (those already recorded first).

        One connection of its own LISTENs for the journal's announcements while this waits
        (no thread is held, and the MCP servers are not asked). Cancelling it closes that
        connection. A task the journal does not hold is a JournalError (nothing would ever
        announce it).
        Deadline: ``timeout`` (None: none).
        """
        listener = OutcomeListener(self)
        return await listener.wait_outcomes(tasks, timeout=timeout, on_outcome=on_outcome)

    # -- rows -----------------------------------------------------------------------------------

    def _entry(self, row: Sequence[Any]) -> JournalEntry:
        return _entry_of(row, self._fail, lambda value: value)


class OutcomeListener:
    """Waits for outcomes a :class:`PostgresJournal` announces (``NOTIFY`` on its channel when
    an outcome is recorded), on one connection of its own per wait: the journal's one job of
    being waited on, apart from its statements."""

    def __init__(self, journal: PostgresJournal) -> None:
        self.journal = journal

    async def wait_outcomes(
        self,
        tasks: Iterable[tuple[str, str]],
        *,
        timeout: float | None = None,
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None = None,
    ) -> dict[tuple[str, str], RecordedOutcome]:
        """:meth:`PostgresJournal.wait_outcomes`, on a connection of this wait's own that
        LISTENs. Deadline: ``timeout`` (None: none). Cancelled: that connection is closed."""
        wanted = {notify_payload(s, t): (s, t) for s, t in tasks}
        found: dict[tuple[str, str], RecordedOutcome] = {}
        if not wanted:
            return found
        if not self.journal._opened:
            raise self.journal._fail("not open (use `async with PostgresJournal(...)` or open())")
        delays = iter(self.journal.reconnect.delays() if self.journal.reconnect is not None else ())
        check = True  # the first read: a task the journal does not hold is an error
        with anyio.move_on_after(timeout):
            while wanted:
                try:
                    await self._listen_until_found(wanted, found, on_outcome, check)
                except JournalUnavailable:
                    delay = next(delays, None)
                    if delay is None:
                        raise
                    # Away from the channel: announcements may be missed; the outcomes are
                    # read again once listening anew.
                    log.warning("journal %s: listening again in %.2f s", self.journal.path, delay)
                    await anyio.sleep(delay)
                check = False
        return found

    async def _listen_until_found(
        self,
        wanted: dict[str, tuple[str, str]],
        found: dict[tuple[str, str], RecordedOutcome],
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None,
        check: bool,
    ) -> None:
        """LISTEN on a connection of its own, read what is recorded already, then take each
        announced outcome until none is wanted. Cancelled: the connection is closed."""
        conn = await anyio.to_thread.run_sync(self._listener)
        try:
            ready = await anyio.to_thread.run_sync(
                self._outcomes_of, conn, list(wanted.values()), check
            )
            self._take(ready, wanted, found, on_outcome)
            while wanted:
                # Announcements that arrived during a query wait in psycopg's backlog,
                # not on the socket: take those before waiting for the socket.
                payloads = await anyio.to_thread.run_sync(self._announced, conn)
                if not payloads:
                    await anyio.wait_readable(conn.fileno())
                    continue
                keys = [wanted[p] for p in payloads if p in wanted]
                if keys:
                    ready = await anyio.to_thread.run_sync(self._outcomes_of, conn, keys, False)
                    self._take(ready, wanted, found, on_outcome)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(conn.close)

    def _listener(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.Connection.connect(
                self.journal._conninfo, connect_timeout=max(1, round(self.journal.connect_timeout))
            )
        except psycopg.Error as exc:
            error = self.journal._error(exc)
            raise type(error)(self.journal.path, f"cannot connect ({error.problem})") from None
        try:
            self.journal._configure(conn)
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.journal._channel)))
        except psycopg.Error as exc:
            conn.close()
            raise self.journal._error(exc) from None
        return conn

    def _outcomes_of(
        self, conn: psycopg.Connection[Any], keys: Sequence[tuple[str, str]], check: bool
    ) -> list[tuple[str, str, RecordedOutcome | None]]:
        select = self.journal._sql(
            "SELECT t.server, t.task_id, t.outcome FROM {t} AS t "
            "JOIN unnest(%s::text[], %s::text[]) AS k(server, task_id) "
            "ON t.server = k.server AND t.task_id = k.task_id"
        )
        try:
            rows = conn.execute(select, ([s for s, _ in keys], [t for _, t in keys])).fetchall()
        except psycopg.Error as exc:
            raise self.journal._error(exc) from None
        if check and len(rows) < len(set(keys)):
            known = {(row[0], row[1]) for row in rows}
            missing = next(key for key in keys if key not in known)
            raise self.journal._fail(f"task {missing[1]!r} of {missing[0]} is not in the journal")
        return [(row[0], row[1], _outcome_from(row[2])) for row in rows]

    def _announced(self, conn: psycopg.Connection[Any]) -> list[str]:
        try:
            return [note.payload for note in conn.notifies(timeout=0)]
        except psycopg.Error as exc:
            raise self.journal._error(exc) from None

    @staticmethod
    def _take(
        ready: list[tuple[str, str, RecordedOutcome | None]],
        wanted: dict[str, tuple[str, str]],
        found: dict[tuple[str, str], RecordedOutcome],
        on_outcome: Callable[[str, str, RecordedOutcome], None] | None,
    ) -> None:
        for server, task_id, outcome in ready:
            if outcome is None:
                continue
            wanted.pop(notify_payload(server, task_id), None)
            found[(server, task_id)] = outcome
            if on_outcome is not None:
                on_outcome(server, task_id, outcome)


def _check_schema(conn: psycopg.Connection[Any], journal: PostgresJournal) -> None:
    """Check the journal's schema on ``conn`` (create it with ``journal.create``, migrate an
    older one), under an advisory lock: two processes opening a new journal at once, one
    creates and the other checks."""
    with conn.transaction():
        # Two processes opening a new journal at once: one creates, the other checks.
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_CLASS, journal.schema)
        )
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s",
                (journal.schema,),
            )
        }
        exists = conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (journal.schema,)
        ).fetchone()
        if not tables:
            if not journal.create:
                what = "is empty" if exists else "does not exist"
                raise journal._fail(
                    f"schema {journal.schema!r} {what}: no journal there (create=True creates one)"
                )
            for statement in _create_statements(journal._ident, journal.schema):
                conn.execute(statement)
            log.info("created journal schema %s in %s", journal.schema, journal.path)
            return
        if "meta" not in tables or "tasks" not in tables:
            raise journal._fail(
                f"schema {journal.schema!r} holds something else, not a journal "
                "(it was left as it is)"
            )
        meta = dict(conn.execute(sql.SQL("SELECT key, value FROM {}.meta").format(journal._ident)))
        if meta.get("application") != _APPLICATION:
            raise journal._fail(
                f"schema {journal.schema!r} holds something else, not a journal "
                "(it was left as it is)"
            )
        version = meta.get("schema_version")
        if version in _MIGRATIONS:  # under the advisory lock: one process migrates
            while version in _MIGRATIONS:
                for statement in _MIGRATIONS[version](journal._ident, journal.schema):
                    conn.execute(statement)
                version = str(int(version) + 1)
            log.info("journal schema %s migrated to version %s", journal.schema, version)
        elif version != str(SCHEMA_VERSION):
            raise journal._fail(
                f"journal schema {version}; this version reads {SCHEMA_VERSION} (left as it is)"
            )


def _task_json(task: Task | None, generation: Generation) -> Jsonb | None:
    return None if task is None else Jsonb(encode(task, generation))


def _outcome_json(outcome: RecordedOutcome | None) -> Jsonb | None:
    if outcome is None:
        return None
    return Jsonb(
        {
            "status": outcome.status,
            "result": outcome.result,
            "error": outcome.error,
            "recordedAt": outcome.recorded_at.isoformat(),
        }
    )
