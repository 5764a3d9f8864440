"""Resume from a journal against the real peers: a client process SIGKILLed while it waits,
and a new one that follows its task to the result (generation 1 over HTTP with the session
kept: mcp 1.30 and TypeScript SDK 1.32; generation 2: fastmcp 4.1.4). Where a task cannot be
followed, the typed Lost outcome, recorded, and never a hang."""

from __future__ import annotations

import datetime as dt
import functools
import signal
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from peers.harness import PEERS, stdio_command, stdio_env
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    Held,
    HttpTransport,
    JournalEntry,
    Lost,
    Poller,
    PollPolicy,
    SQLiteJournal,
    StdioTransport,
    ToolCall,
    client_for,
    resume,
)
from mcp_tasks_client.errors import JournalError, NotJournaled, TransportError
from mcp_tasks_client.models import Implementation, TextContent

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
HERE = Path(__file__).parent
OPEN = functools.partial(client_for, client_info=INFO)


def text_of(result: object) -> str:
    content = getattr(result, "content", ())
    return " ".join(block.text for block in content if isinstance(block, TextContent))


@pytest.fixture(params=["mcp1", "ts1", "fastmcp4"])
def server(request: pytest.FixtureRequest) -> tuple[str, Generation]:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    generation = Generation.V2026_07_28 if request.param == "fastmcp4" else Generation.V2025_11_25
    return url, generation


async def test_a_killed_waiter_is_resumed_by_a_new_process(
    server: tuple[str, Generation], tmp_path: Path
) -> None:
    """The Done-when of the journal: SIGKILL mid-wait, resume elsewhere, get the result."""
    url, generation = server
    path = tmp_path / "journal.db"
    command = [sys.executable, str(HERE / "journal_child.py"), url, generation.value]
    async with await anyio.open_process([*command, str(path), "2"]) as child:
        assert child.stdout is not None
        try:
            with anyio.fail_after(30):
                line = await BufferedByteReceiveStream(child.stdout).receive_until(b"\n", 4096)
            assert line.startswith(b"waiting "), line
            task_id = line.split()[1].decode()
        finally:
            child.send_signal(signal.SIGKILL)  # this process, by its own pid
            with anyio.fail_after(10):
                assert await child.wait() == -signal.SIGKILL
    with SQLiteJournal(path) as journal:
        [entry] = await journal.entries(open_only=True)
        assert entry.task_id == task_id
        assert (entry.session is not None) == (generation is Generation.V2025_11_25)
        with anyio.fail_after(30):
            [resumed] = await resume(journal, OPEN, policy=FAST)
        assert resumed.entry.task_id == task_id
        assert isinstance(resumed.ended, Completed), resumed.ended
        assert "journaled" in text_of(resumed.ended.result)
        done = await journal.get(entry.server, task_id)
        assert done is not None
        assert done.outcome is not None
        assert done.outcome.status == "completed"
        assert done.snapshot is not None
        assert done.snapshot.status.is_terminal
        assert await journal.entries(open_only=True) == []
        assert await resume(journal, OPEN, policy=FAST) == []  # nothing left to follow


async def _journaled_task(
    url: str, path: Path, *, keep_session: bool, tool: str = "slow_echo"
) -> JournalEntry:
    with SQLiteJournal(path) as journal:
        transport = HttpTransport(url, delete_session_on_close=not keep_session)
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
            call = ToolCall(tool, {"text": "x", "seconds": 0.5})
            created = task_created(await client.start(call.as_task(), journal=journal))
        entry = await journal.get(url, created.task.task_id)
    assert entry is not None
    return entry


@pytest.fixture(params=["mcp1", "ts1"])
def gen1_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    return url


async def test_a_task_whose_session_was_deleted_is_lost(gen1_url: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    entry = await _journaled_task(gen1_url, path, keep_session=False)
    with SQLiteJournal(path) as journal:
        with anyio.fail_after(30):
            [resumed] = await resume(journal, OPEN, policy=FAST)
        assert isinstance(resumed.ended, Lost)
        assert "session expired" in resumed.ended.reason
        assert resumed.ended.last == entry.snapshot
        recorded = await journal.get(entry.server, entry.task_id)
        assert recorded is not None
        assert recorded.outcome is not None
        assert recorded.outcome.status == "lost"


async def test_a_task_the_server_does_not_know_is_lost(gen1_url: str, tmp_path: Path) -> None:
    """A kept session, but a task id it never had (what a server that forgot it answers)."""
    path = tmp_path / "journal.db"
    real = await _journaled_task(gen1_url, path, keep_session=True)
    with SQLiteJournal(path) as journal:
        forgotten = JournalEntry(
            server=real.server,
            task_id="no-such-task",
            generation=real.generation,
            protocol_version=real.protocol_version,
            tool=real.tool,
            created_at=real.created_at,
            session=real.session,
        )
        await journal.record(forgotten)
        with anyio.fail_after(30):
            results = await resume(journal, OPEN, policy=FAST)
        ended = {r.entry.task_id: r.ended for r in results}
        assert isinstance(ended[real.task_id], Completed)
        lost = ended["no-such-task"]
        assert isinstance(lost, Lost)
        assert "does not know" in lost.reason


async def test_a_task_another_process_holds_is_left_alone(gen1_url: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    entry = await _journaled_task(gen1_url, path, keep_session=True)
    with SQLiteJournal(path) as journal:
        assert await journal.claim(entry.server, entry.task_id, "someone-else", 60)
        with anyio.fail_after(30):
            [resumed] = await resume(journal, OPEN, policy=FAST)
        assert resumed.ended == Held(entry.task_id)
        still = await journal.get(entry.server, entry.task_id)
        assert still is not None
        assert still.is_open


async def test_an_unreachable_server_leaves_the_task_open(tmp_path: Path) -> None:
    """A refused connection is the error, not Lost: the task may well be alive."""
    path = tmp_path / "journal.db"
    with SQLiteJournal(path) as journal:
        entry = JournalEntry(
            server="http://127.0.0.1:9/mcp",
            task_id="t-1",
            generation=Generation.V2026_07_28,
            protocol_version=Generation.V2026_07_28.protocol_version,
            tool="slow_compute",
            created_at=dt.datetime.now(dt.timezone.utc),
        )
        await journal.record(entry)
        with anyio.fail_after(30):
            [resumed] = await resume(journal, OPEN, policy=FAST)
        assert isinstance(resumed.ended, TransportError)
        assert (await journal.entries(open_only=True))[0].task_id == "t-1"


async def test_a_generation_1_stdio_task_is_lost_without_connecting(tmp_path: Path) -> None:
    """Its session ended with the server process; resume says so and starts nothing."""
    path = tmp_path / "journal.db"
    peer = PEERS["mcp1"]
    transport = StdioTransport(stdio_command(peer), env=stdio_env(peer))
    with SQLiteJournal(path) as journal:
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
            call = ToolCall("slow_echo", {"text": "x", "seconds": 0.2})
            created = task_created(await client.start(call.as_task(), journal=journal))
        entry = await journal.get(transport.identity, created.task.task_id)
        assert entry is not None
        assert entry.server.startswith("stdio:")
        assert entry.session is None
        with anyio.fail_after(30):
            [resumed] = await resume(journal, OPEN, policy=FAST)
        assert isinstance(resumed.ended, Lost)
        assert "stdio" in resumed.ended.reason


async def test_a_journal_that_fails_does_not_lose_the_created_task(
    gen1_url: str, tmp_path: Path
) -> None:
    """The task exists on the server even though the journal could not record it: the error
    carries it, and the task is still there to cancel or follow."""
    journal = SQLiteJournal(tmp_path / "journal.db")
    journal.close()  # every write now fails
    transport = HttpTransport(gen1_url)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        call = ToolCall("slow_echo", {"text": "x", "seconds": 0.2}).as_task()
        with pytest.raises(NotJournaled) as caught:
            await client.start(call, journal=journal)
        created = task_created(caught.value.created)
        assert isinstance(caught.value.__cause__, JournalError)
        assert (await client.get_task(created.task.task_id)).task_id == created.task.task_id


async def test_a_poller_whose_journal_fails_still_ends_the_wait(
    gen1_url: str, tmp_path: Path
) -> None:
    """Journal writes are the journal's problem: each failure is a warning, the outcome stands."""
    path = tmp_path / "journal.db"
    journal = SQLiteJournal(path)
    transport = HttpTransport(gen1_url)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        call = ToolCall("slow_echo", {"text": "x", "seconds": 0.3}).as_task()
        created = task_created(await client.start(call, journal=journal))
        journal.close()
        async with Poller(client, FAST, journal=journal) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert any(isinstance(w, JournalError) for w in poller.warnings)
    with SQLiteJournal(path) as reopened:
        entry = await reopened.get(transport.identity, created.task.task_id)
        assert entry is not None
        assert entry.is_open  # the outcome could not be written: a later resume will fetch it


class _LeaseTableGone(SQLiteJournal):
    """A journal whose leases fail (as a shared journal's lease service may): fault injection."""

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        raise JournalError(self.path, "the lease table is unavailable")


async def test_a_journal_whose_leases_fail_reports_each_task_and_follows_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with SQLiteJournal(path) as journal:
        await journal.record(
            JournalEntry(
                server="http://127.0.0.1:9/mcp",
                task_id="t-1",
                generation=Generation.V2026_07_28,
                protocol_version=Generation.V2026_07_28.protocol_version,
                tool="slow_compute",
                created_at=dt.datetime.now(dt.timezone.utc),
            )
        )
    with _LeaseTableGone(path) as failing:
        with anyio.fail_after(30):
            [resumed] = await resume(failing, OPEN, policy=FAST)
        assert isinstance(resumed.ended, JournalError)
        assert "lease table" in str(resumed.ended)
        assert [e.task_id for e in await failing.entries(open_only=True)] == ["t-1"]


class _HangingJournal(SQLiteJournal):
    """A journal whose writes never finish (a stuck shared store): fault injection."""

    async def record(self, entry: JournalEntry) -> None:
        await anyio.sleep_forever()


async def test_a_journal_that_hangs_does_not_hold_the_created_task(
    gen1_url: str, tmp_path: Path
) -> None:
    """start() bounds the journal's write by its own timeout: NotJournaled, with the task."""
    with _HangingJournal(tmp_path / "journal.db") as journal:
        transport = HttpTransport(gen1_url)
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
            call = ToolCall("slow_echo", {"text": "x", "seconds": 0.2}).as_task()
            with anyio.fail_after(30), pytest.raises(NotJournaled) as caught:
                await client.start(call, journal=journal, timeout=2)
            assert "did not record the task within 2 s" in str(caught.value)
            created = task_created(caught.value.created)
            assert (await client.get_task(created.task.task_id)).task_id == created.task.task_id
