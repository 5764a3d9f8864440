"""The SQLite journal on real files: round trips in both generations, owner-only files, leases
shared by two connections, and foreign or corrupt files refused and never modified. A
hypothesis state machine checks it against a dict model."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import stat
from pathlib import Path

import anyio
import pytest
from budget import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client import (
    Generation,
    Journal,
    JournalEntry,
    RecordedOutcome,
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


@pytest.mark.parametrize("generation", list(Generation))
def test_an_entry_round_trips_and_is_updated_until_it_ends(
    tmp_path: Path, generation: Generation
) -> None:
    async def main() -> None:
        with SQLiteJournal(tmp_path / "j.db") as journal:
            entry = _entry("t-1", generation)
            await journal.record(entry)
            assert await journal.get(entry.server, "t-1") == entry
            later = _task("t-1", TaskStatus.INPUT_REQUIRED)
            await journal.snapshot(entry.server, "t-1", later)
            await journal.answered(entry.server, "t-1", "confirm")
            await journal.answered(entry.server, "t-1", "confirm")  # a key is kept once
            await journal.answered(entry.server, "t-1", "name")
            got = await journal.get(entry.server, "t-1")
            assert got is not None
            assert got.snapshot == later
            assert got.answered_inputs == ("confirm", "name")
            assert got.is_open
            assert [e.task_id for e in await journal.entries(open_only=True)] == ["t-1"]
            done = RecordedOutcome("completed", result={"content": []}, recorded_at=NOW)
            await journal.finish(entry.server, "t-1", done)
            # The first outcome stands; a later snapshot or record does not reopen the task.
            await journal.finish(entry.server, "t-1", RecordedOutcome("lost", error="late"))
            await journal.snapshot(entry.server, "t-1", _task("t-1"))
            await journal.record(entry)
            got = await journal.get(entry.server, "t-1")
            assert got is not None
            assert got.outcome == done
            assert got.snapshot == later
            assert await journal.entries(open_only=True) == []
            assert [e.task_id for e in await journal.entries()] == ["t-1"]
            # Updates to a task never recorded change nothing.
            await journal.snapshot(entry.server, "t-404", later)
            await journal.finish(entry.server, "t-404", done)
            assert await journal.get(entry.server, "t-404") is None

    anyio.run(main)


def test_answered_keys_are_bounded_oldest_first(tmp_path: Path) -> None:
    """A server that asks for ever new input keys cannot grow a task's row without bound."""

    async def main() -> None:
        with SQLiteJournal(tmp_path / "j.db", max_answered_keys=3) as journal:
            entry = _entry("t-1", Generation.V2026_07_28)
            await journal.record(entry)
            for key in ("a", "b", "c", "d", "e"):
                await journal.answered(entry.server, "t-1", key)
            got = await journal.get(entry.server, "t-1")
            assert got is not None
            assert got.answered_inputs == ("c", "d", "e")

    anyio.run(main)
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


def test_leases_are_shared_by_every_connection_to_the_file(tmp_path: Path) -> None:
    async def main() -> None:
        with SQLiteJournal(tmp_path / "j.db") as one, SQLiteJournal(tmp_path / "j.db") as two:
            entry = _entry("t-1")
            await one.record(entry)
            assert await one.claim(entry.server, "t-1", "proc-a", 60)
            assert await one.claim(entry.server, "t-1", "proc-a", 60)  # renewing is claiming
            assert not await two.claim(entry.server, "t-1", "proc-b", 60)
            await two.release(entry.server, "t-1", "proc-b")  # not b's: nothing changes
            assert not await two.claim(entry.server, "t-1", "proc-b", 60)
            await one.release(entry.server, "t-1", "proc-a")
            assert await two.claim(entry.server, "t-1", "proc-b", -1)  # a lease already over
            assert await one.claim(entry.server, "t-1", "proc-a", 60)
            await one.finish(entry.server, "t-1", RecordedOutcome("cancelled"))
            assert not await two.claim(entry.server, "t-1", "proc-b", 60)  # ended: no lease
            assert not await two.claim(entry.server, "t-404", "proc-b", 60)

    anyio.run(main)


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


# -- the journal against a model --------------------------------------------------------------

IDS = st.sampled_from(["a", "b", "c"])
OWNERS = st.sampled_from(["p1", "p2"])


class JournalModel(RuleBasedStateMachine):
    """Any sequence of journal operations leaves the file as a dict model says."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"journal-model-{os.getpid()}"
        self.dir.mkdir(exist_ok=True)
        path = self.dir / f"{id(self):x}.db"
        path.unlink(missing_ok=True)
        self.journal = SQLiteJournal(path)
        self.path = path
        self.open: dict[str, JournalEntry] = {}
        self.ended: dict[str, str] = {}
        self.leases: dict[str, str] = {}
        self.answered: dict[str, list[str]] = {}

    def teardown(self) -> None:
        self.journal.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    @rule(task_id=IDS)
    def record(self, task_id: str) -> None:
        anyio.run(self.journal.record, _entry(task_id))
        if task_id not in self.ended:
            self.open[task_id] = _entry(task_id)
            self.answered[task_id] = []

    @precondition(lambda self: bool(self.open))
    @rule(data=st.data(), key=st.sampled_from(["x", "y"]))
    def answer(self, data: st.DataObject, key: str) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.open)))
        anyio.run(self.journal.answered, "http://127.0.0.1:1/mcp", task_id, key)
        if key not in self.answered[task_id]:
            self.answered[task_id].append(key)

    @rule(task_id=IDS, status=st.sampled_from(["completed", "failed", "lost"]))
    def finish(self, task_id: str, status: str) -> None:
        anyio.run(self.journal.finish, "http://127.0.0.1:1/mcp", task_id, RecordedOutcome(status))
        if task_id in self.open:
            del self.open[task_id]
            self.ended[task_id] = status
            self.leases.pop(task_id, None)

    @rule(task_id=IDS, owner=OWNERS)
    def claim(self, task_id: str, owner: str) -> None:
        got = anyio.run(self.journal.claim, "http://127.0.0.1:1/mcp", task_id, owner, 60.0)
        expected = task_id in self.open and self.leases.get(task_id, owner) == owner
        assert got == expected
        if expected:
            self.leases[task_id] = owner

    @rule(task_id=IDS, owner=OWNERS)
    def release(self, task_id: str, owner: str) -> None:
        anyio.run(self.journal.release, "http://127.0.0.1:1/mcp", task_id, owner)
        if self.leases.get(task_id) == owner:
            del self.leases[task_id]

    @invariant()
    def matches(self) -> None:
        entries = anyio.run(self.journal.entries)
        assert {e.task_id for e in entries if e.is_open} == set(self.open)
        for entry in entries:
            if entry.outcome is not None:
                assert entry.outcome.status == self.ended[entry.task_id]
            else:
                assert list(entry.answered_inputs) == self.answered[entry.task_id]


TestJournalModel = JournalModel.TestCase
TestJournalModel.settings = settings(
    max_examples=examples(25), stateful_step_count=15, deadline=None
)
