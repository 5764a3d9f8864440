"""The SQLite journal trusts a file as ssh trusts its keys: the current user must own it (even
root), and neither the group nor others may have any access to it, nor to its SQLite
companions (``-wal``, ``-shm``, ``-journal``). A refused file is left exactly as it was.

These tests run on real files. Another user's file is made with ``os.chown`` to a uid that is
not ours, which needs root (the suite runs as root here; elsewhere those cases are skipped).
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from pathlib import Path

import anyio
import pytest

from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import JournalEntry, JournalError, SQLiteJournal

OTHER_UID = 4242  # no one's: a uid that is not the current user's
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="os.chown to another uid needs root"
)


def _made(path: Path) -> None:
    """A valid journal with one open task, left with its WAL beside it when it can be."""

    async def write() -> None:
        with SQLiteJournal(path) as journal:
            await journal.record(
                JournalEntry(
                    server="http://127.0.0.1:1/mcp",
                    task_id="t-1",
                    generation=Generation.V2026_07_28,
                    protocol_version=Generation.V2026_07_28.protocol_version,
                    tool="job",
                    created_at=dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc),
                )
            )

    anyio.run(write)


def _state(path: Path) -> dict[str, tuple[bytes, int, int]]:
    """The journal and its companions: content, mode and owner of each."""
    out = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        file = Path(str(path) + suffix)
        if file.exists():
            info = file.stat()
            out[suffix] = (file.read_bytes(), stat.S_IMODE(info.st_mode), info.st_uid)
    return out


@as_root
def test_a_journal_another_user_owns_is_refused_even_as_root(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    _made(path)
    os.chown(path, OTHER_UID, -1)
    before = _state(path)
    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path)
    assert caught.value.path == str(path)
    assert f"owned by uid {OTHER_UID}" in str(caught.value)
    assert "not by the current user" in str(caught.value)
    assert _state(path) == before


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o640, 0o604, 0o610], ids=oct)
def test_a_journal_the_group_or_others_may_use_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "tasks.db"
    _made(path)
    path.chmod(mode)
    before = _state(path)
    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path)
    assert caught.value.path == str(path)
    assert f"mode {mode:o}" in str(caught.value)
    assert "by group or others" in str(caught.value)
    if mode & 0o022:
        assert "writable" in str(caught.value)
    assert _state(path) == before


@as_root
@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_companion_another_user_owns_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / "tasks.db"
    _made(path)
    companion = Path(str(path) + suffix)
    companion.write_bytes(b"")  # planted beside a good journal
    companion.chmod(0o600)
    os.chown(companion, OTHER_UID, -1)
    before = _state(path)
    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path)
    assert caught.value.path == str(companion)
    assert f"{suffix} companion is owned by uid {OTHER_UID}" in str(caught.value)
    assert _state(path) == before


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_companion_others_may_read_is_refused_and_nothing_is_written_to_it(
    tmp_path: Path, suffix: str
) -> None:
    """Seen before the fix: task ids written into a ``-wal`` readable by others."""
    path = tmp_path / "tasks.db"
    companion = Path(str(path) + suffix)
    companion.write_bytes(b"")
    companion.chmod(0o644)
    with pytest.raises(JournalError) as caught:
        SQLiteJournal(path)  # a new journal beside a planted companion
    assert caught.value.path == str(companion)
    assert "readable by group or others (mode 644)" in str(caught.value)
    assert companion.read_bytes() == b""
    assert stat.S_IMODE(companion.stat().st_mode) == 0o644


def test_the_journal_and_the_companions_it_makes_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    old = os.umask(0o000)  # the loosest umask a user may have
    try:
        with SQLiteJournal(path) as journal:

            async def write() -> None:
                await journal.claim("http://127.0.0.1:1/mcp", "t-1", "me", 5.0)

            anyio.run(write)
            made = _state(path)
            assert {"", "-wal", "-shm"} <= set(made)
            for suffix, (_, mode, uid) in made.items():
                assert mode == 0o600, (suffix, oct(mode))
                assert uid == os.geteuid()
    finally:
        os.umask(old)
    with SQLiteJournal(path):  # and it opens again
        pass
