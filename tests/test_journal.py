"""The SQLite journal on real files: owner-only files, and foreign or corrupt files refused and
never modified. What every journal does (round trips, leases, the state machines) is in
test_journal_protocol.py, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import stat
from pathlib import Path

import anyio
import attrs
import pytest

from mcp_tasks_client import (
    Generation,
    Journal,
    JournalEntry,
    RecordedSession,
    SQLiteJournal,
)
from mcp_tasks_client.errors import JournalError, UsageError
from mcp_tasks_client.models import Task, TaskStatus

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


def _task(task_id: str, status: TaskStatus = TaskStatus.WORKING) -> Task:
    return Task(
        task_id=task_id,
        status=status,
        created_at=NOW,
        last_updated_at=NOW,
        ttl=60_000,
        poll_interval=500,
        status_message="working on it",
    )


def _entry(task_id: str, generation: Generation = Generation.V2025_11_25) -> JournalEntry:
    session = None
    if generation is Generation.V2025_11_25:
        session = RecordedSession("sess-1", {"protocolVersion": "2025-11-25"})
    return JournalEntry(
        server="http://127.0.0.1:1/mcp",
        task_id=task_id,
        generation=generation,
        protocol_version=generation.protocol_version,
        tool="slow_echo",
        created_at=NOW,
        session=session,
        snapshot=_task(task_id),
    )


def test_sqlite_journal_is_a_journal(tmp_path: Path) -> None:
    with SQLiteJournal(tmp_path / "j.db") as journal:
        assert isinstance(journal, Journal)


def test_max_answered_keys_is_at_least_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="at least 1"):
        SQLiteJournal(tmp_path / "k.db", max_answered_keys=0)


def test_the_file_and_its_wal_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "j.db"

    async def main() -> None:
        with SQLiteJournal(path) as journal:
            await journal.record(_entry("t-1"))
            for name in ("j.db", "j.db-wal", "j.db-shm"):
                mode = stat.S_IMODE((tmp_path / name).stat().st_mode)
                assert mode & 0o077 == 0, (name, oct(mode))

    old = os.umask(0)  # whatever the umask, even none, the files are 0600
    try:
        anyio.run(main)
    finally:
        os.umask(old)


def _unchanged(path: Path) -> tuple[bytes, int]:
    info = path.stat()
    return path.read_bytes(), info.st_mtime_ns


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"task ids, one per line\nt-1\n", "not an SQLite database"),
        (b"", "empty file"),
        (b"SQLite format 3\x00" + b"\x00" * 84, "not a usable journal"),
    ],
)
def test_a_foreign_file_is_refused_and_left_as_it_is(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "j.db"
    path.write_bytes(content)
    path.chmod(0o600)
    before = _unchanged(path)
    with pytest.raises(JournalError, match=problem) as caught:
        SQLiteJournal(path)
    assert caught.value.path == str(path)
    assert _unchanged(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.db"]


def _other_database(path: Path, *, application_id: int = 0, user_version: int = 0) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.execute(f"PRAGMA application_id={application_id}")
    db.execute(f"PRAGMA user_version={user_version}")
    db.commit()
    db.close()
    path.chmod(0o600)


def test_another_programs_database_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    _other_database(path)
    before = _unchanged(path)
    with pytest.raises(JournalError, match="something else"):
        SQLiteJournal(path)
    assert _unchanged(path) == before


def test_a_newer_schema_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with SQLiteJournal(path):
        pass
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    before = _unchanged(path)
    with pytest.raises(JournalError, match="schema 99"):
        SQLiteJournal(path)
    assert _unchanged(path) == before


_SCHEMA_1 = """
CREATE TABLE tasks (
    server TEXT NOT NULL, task_id TEXT NOT NULL, generation TEXT NOT NULL,
    protocol_version TEXT NOT NULL, tool TEXT NOT NULL, created_at TEXT NOT NULL,
    session_id TEXT, initialize_json TEXT, snapshot_json TEXT,
    answered_json TEXT NOT NULL DEFAULT '[]', outcome_json TEXT, lease_owner TEXT,
    lease_until REAL, PRIMARY KEY (server, task_id)
)
"""
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_opening_a_current_journal_does_not_wait_for_another_writer(tmp_path: Path) -> None:
    """A current journal is opened without taking the write lock (it was taken to migrate on
    every open): another process holding a write transaction does not make the open wait
    for its busy timeout and fail."""
    path = tmp_path / "j.db"
    SQLiteJournal(path).close()  # created at the current schema
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        journal = SQLiteJournal(path, busy_timeout=0.2)
        journal.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_version_1_journal_is_migrated_and_keeps_its_tasks(tmp_path: Path) -> None:
    """Schema 2 adds each task's trace context: a version-1 file (as 0.x wrote it) is
    migrated in place when opened; its tasks read back, with no trace context."""
    path = tmp_path / "j.db"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(_SCHEMA_1)
    db.execute("PRAGMA application_id=0x4D435454")
    db.execute("PRAGMA user_version=1")
    db.execute(
        "INSERT INTO tasks (server, task_id, generation, protocol_version, tool, created_at) "
        "VALUES ('http://127.0.0.1:1/mcp', 'old', '2026-07-28', '2026-07-28', 'slow_echo', ?)",
        (NOW.isoformat(),),
    )
    db.commit()
    db.close()

    async def main() -> None:
        with SQLiteJournal(path) as journal:
            old = await journal.get("http://127.0.0.1:1/mcp", "old")
            assert old is not None
            assert old.traceparent is None
            assert old.tracestate is None
            traced = attrs.evolve(_entry("new"), traceparent=TRACEPARENT, tracestate="k=v")
            await journal.record(traced)
        with SQLiteJournal(path) as journal:  # opened again: version 4, nothing to migrate
            again = await journal.get(traced.server, "new")
            assert again is not None
            assert again.traceparent == TRACEPARENT
            assert again.tracestate == "k=v"

    anyio.run(main)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    db.close()


def test_a_corrupt_journal_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "j.db"

    async def fill() -> None:
        with SQLiteJournal(path) as journal:
            for n in range(200):
                await journal.record(_entry(f"t-{n}"))

    anyio.run(fill)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    data[2 * page : 3 * page] = b"\xa5" * page  # a table page is now garbage
    path.write_bytes(bytes(data))
    before = _unchanged(path)
    with pytest.raises(JournalError, match=r"corrupt|not a usable journal"):
        SQLiteJournal(path)
    assert _unchanged(path) == before


def test_a_journal_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with SQLiteJournal(path):
        pass
    path.chmod(0o644)
    with pytest.raises(JournalError, match="chmod 600"):
        SQLiteJournal(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="regular file"):
        SQLiteJournal(tmp_path)
