"""``mcp-tasks monitor`` without a browser: what the journals record for the page (schema 4:
history by triggers, snapshot counts, heartbeats), what the readers read back, and the web
app's rules (read-only by default, the cancel token, the Host check, escaping, trace links).

The journals are real (an SQLite file, the embedded PostgreSQL); the app is served by
Starlette's test client (the real app, in process). The browser tests are
tests/test_monitor_browser.py."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pg import postgres_url
from test_cli import CLI, RUN_TIMEOUT, env
from test_journal_protocol import SERVER, Store, _task, entry_of, make_store

from mcp_tasks_client.journal import (
    JournalError,
    Lease,
    QueuedInput,
    RecordedOutcome,
    SQLiteJournal,
)
from mcp_tasks_client.models import TaskStatus

with warnings.catch_warnings():  # starlette 1.x would rather drive the app with httpx2
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from mcp_tasks_client.monitor.board import Event, open_reader
from mcp_tasks_client.monitor.command import (
    bind,
    cancel_through_server,
    check_trace_url,
    serve,
)
from mcp_tasks_client.monitor.pages import PageSettings
from mcp_tasks_client.monitor.pictures import hour_buckets
from mcp_tasks_client.monitor.web import make_app

__all__ = ["postgres_url"]

NOW = dt.datetime.now(dt.timezone.utc)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request.param, request, tmp_path)


def _fresh(task_id: str, order: int = 0) -> Any:
    moment = NOW - dt.timedelta(seconds=30 - order)  # before anything else happens to it
    return attrs.evolve(entry_of(task_id, order=order), created_at=moment)


async def _a_fleet(store: Store) -> None:
    """Two workers: A takes both tasks, moves one to input_required (an input queued) and
    back, finishes it; B takes the other over after A's lease ran out, and it fails."""
    with store.open() as journal:
        await journal.record(_fresh("t1", 0))
        await journal.record(_fresh("t2", 1))
        taken = await journal.claim_due("worker-a", 30.0, 10)
        assert [e.task_id for e in taken] == ["t1", "t2"]
        lease1 = taken[0].lease
        assert lease1 is not None
        for status, message in [
            (TaskStatus.WORKING, "working on it"),  # the same as recorded: no event
            (TaskStatus.WORKING, "step 2"),
            (TaskStatus.INPUT_REQUIRED, "which colour?"),
        ]:
            snap = attrs.evolve(_task("t1", status), status_message=message)
            assert await journal.snapshot_leased(SERVER, "t1", snap, lease1)
        await journal.queue_input(
            QueuedInput(SERVER, "t1", "colour", "elicitation/create", {"message": "?"})
        )
        await journal.answered(SERVER, "t1", "colour")
        await journal.snapshot_leased(SERVER, "t1", _task("t1", TaskStatus.WORKING), lease1)
        done = RecordedOutcome("completed", result={"content": []})
        assert await journal.finish_leased(SERVER, "t1", done, lease1)
        # worker-a's lease on t2 runs out; worker-b takes it over.
        await journal.claim(SERVER, "t2", "worker-a", -1.0)
        again = await journal.claim_due("worker-b", 30.0, 10)
        assert [e.task_id for e in again] == ["t2"]
        lease2 = again[0].lease
        assert lease2 is not None
        assert lease2.token == 2
        assert await journal.finish_leased(
            SERVER, "t2", RecordedOutcome("failed", error="-32603: boom"), lease2
        )
        stale = Lease("worker-a", 1, 0.0)  # A's late outcome is fenced: no event either
        assert not await journal.finish_leased(SERVER, "t2", done, stale)


def test_the_journal_records_each_tasks_history_for_the_page(store: Store) -> None:
    anyio.run(_a_fleet, store)
    reader = open_reader(store.where, schema=store.schema)

    async def main() -> None:
        try:
            found = await reader.task(SERVER, "t1")
            assert found is not None
            row, events = found
            assert [(e.kind, e.status, e.detail) for e in events] == [
                ("created", "working", "working on it"),
                ("leased", None, None),
                ("status", "working", "step 2"),
                ("status", "input_required", "which colour?"),
                ("input", "elicitation/create", "colour"),
                ("answered", None, "colour"),
                ("status", "working", "working on it"),
                ("outcome", "completed", None),
            ]
            assert events[1].owner == "worker-a"
            assert row.status == "completed"
            assert row.changes == 3
            assert not row.is_open
            assert [e.at for e in events] == sorted(e.at for e in events)
            two = await reader.task(SERVER, "t2")
            assert two is not None
            kinds = [(e.kind, e.status, e.detail, e.owner) for e in two[1]]
            assert kinds[1:] == [
                ("leased", None, None, "worker-a"),
                ("takeover", None, "worker-a", "worker-b"),
                ("outcome", "failed", "-32603: boom", "worker-b"),
            ]
            assert await reader.task(SERVER, "nope") is None
            board = await reader.board()
            assert [t.task_id for t in board.tasks] == ["t2", "t1"]  # newest first
            assert {w.owner for w in board.workers} == {"worker-a", "worker-b"}
            assert all(w.held == () for w in board.workers)  # both tasks ended
            assert all(abs(w.seen_at - board.now) < 600 for w in board.workers)
            assert board.inputs == ()  # the task that asked has ended
            statuses = {(e.task_id, e.status) for e in board.recent}
            assert ("t2", "failed") in statuses
            assert ("t1", "input_required") in statuses
        finally:
            await reader.aclose()

    anyio.run(main)


def test_the_board_shows_held_tasks_and_inputs_waiting(store: Store) -> None:
    async def main() -> None:
        with store.open() as journal:
            await journal.record(_fresh("open"))
            taken = await journal.claim_due("worker-c", 30.0, 1)
            assert taken
            await journal.queue_input(
                QueuedInput(SERVER, "open", "k1", "sampling/createMessage", {}, queued_by="w")
            )
        reader = open_reader(store.where, schema=store.schema)
        try:
            board = await reader.board()
            (worker,) = board.workers
            assert worker.owner == "worker-c"
            assert worker.held == ("open",)
            assert worker.lease == 30.0
            (waiting,) = board.inputs
            assert (waiting.task_id, waiting.key, waiting.method) == (
                "open",
                "k1",
                "sampling/createMessage",
            )
            (task,) = board.tasks
            assert task.owner == "worker-c"
            assert task.lease_until is not None
        finally:
            await reader.aclose()

    anyio.run(main)


def test_a_write_wakes_the_readers_change_wait(store: Store) -> None:
    """SQLite: PRAGMA data_version; PostgreSQL: NOTIFY from the events trigger."""

    async def main() -> None:
        with store.open() as journal:
            await journal.record(_fresh("a"))
            reader = open_reader(store.where, schema=store.schema)
            try:
                assert not await reader.wait_change(0.3)  # nothing written meanwhile
                async with anyio.create_task_group() as group:
                    woke: list[bool] = []

                    async def wait() -> None:
                        woke.append(await reader.wait_change(30))

                    group.start_soon(wait)
                    await anyio.sleep(0.3)
                    await journal.record(_fresh("b", 1))
                assert woke == [True]
            finally:
                await reader.aclose()

    anyio.run(main)


def test_heartbeats_are_written_at_most_once_a_second(store: Store) -> None:
    """An idle worker looks for work 20 times a second: its heartbeat is not 20 writes."""
    clock = [1000.0]

    async def main() -> None:
        with store.open(clock=lambda: clock[0]) as journal:
            for step in range(10):
                clock[0] = 1000.0 + step * 0.3
                await journal.claim_due("idle", 30.0, 5)
            await journal.renew("idle", [(SERVER, "none")], 30.0)  # 1002.7: within a second
        reader = open_reader(store.where, schema=store.schema)
        try:
            (worker,) = (await reader.board()).workers
            # 1000.0 written; 1000.3..1000.9 are within a second; 1001.2 written; then
            # 1001.5..2.1 within a second of it; 2.4 written; 2.7 (a look, a renewal) not.
            assert worker.seen_at == pytest.approx(1002.4)
        finally:
            await reader.aclose()

    anyio.run(main)


# -- the app --------------------------------------------------------------------------------------


@pytest.fixture
def journal_file(tmp_path: Path) -> str:
    path = str(tmp_path / "j.db")
    anyio.run(_a_fleet, Store("sqlite", path))
    return path


def _client(journal: str, **options: Any) -> Iterator[TestClient]:
    settings = PageSettings(journal, **options.pop("settings", {}))
    app = make_app(open_reader(journal), settings, tick=0.5, **options)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def test_the_board_and_a_tasks_page_render_from_the_journal(journal_file: str) -> None:
    for client in _client(journal_file):
        page = client.get("/")
        assert page.status_code == 200
        assert 'data-task="t1"' in page.text
        assert 'data-task="t2"' in page.text
        assert "read-only" in page.text
        assert '<svg xmlns="http://www.w3.org/2000/svg" class="counts"' in page.text
        live = client.get("/?part=live")
        assert live.text.startswith('<p id="summary"')
        only = client.get("/", params={"status": "failed"})
        assert 'data-task="t2"' in only.text.split('id="failures"')[0]
        assert 'data-task="t1"' not in only.text
        detail = client.get("/task", params={"server": SERVER, "id": "t1"})
        assert detail.status_code == 200
        assert detail.text.count('class="event"') == 8
        assert 'class="timeline"' in detail.text
        assert "mark-input" in detail.text
        assert 'id="cancel"' not in detail.text  # read-only
        assert client.get("/task", params={"server": SERVER, "id": "x"}).status_code == 404


def test_cancel_is_refused_without_the_flag_and_the_token(journal_file: str) -> None:
    """Refused before anything is sent: read-only (403), no token or a wrong one (403), an
    ended task (409). A cancel that goes through is in tests/test_monitor_browser.py, against
    a real server."""
    form = {"server": SERVER, "id": "t1"}
    for client in _client(journal_file):  # read-only: even the right-looking form is refused
        refused = client.post("/cancel", data={**form, "token": "anything"})
        assert refused.status_code == 403
        assert "read-only" in refused.text
    with SQLiteJournal(journal_file) as journal:
        anyio.run(journal.record, _fresh("t3", 5))
    cancel = cancel_through_server(journal_file, "mcp_tasks")
    options: dict[str, Any] = {"settings": {"cancel_token": "s3cret"}, "cancel": cancel}
    for client in _client(journal_file, **options):
        assert client.post("/cancel", data={**form, "id": "t3"}).status_code == 403
        wrong = client.post("/cancel", data={**form, "id": "t3", "token": "s3cres"})
        assert wrong.status_code == 403
        assert "token" in wrong.text
        by_header = client.post(
            "/cancel", data={**form, "id": "t3"}, headers={"X-Monitor-Token": "s3cre"}
        )
        assert by_header.status_code == 403
        ended = client.post("/cancel", data={**form, "token": "s3cret"})
        assert ended.status_code == 409
        assert "ended (completed)" in ended.text
        page = client.get("/task", params={"server": SERVER, "id": "t3"})
        assert 'name="token" value="s3cret"' in page.text
    with pytest.raises(ValueError, match="go together"):
        make_app(open_reader(journal_file), PageSettings(journal_file, cancel_token="s3cret"))


def test_reading_needs_the_runs_access_token_then_its_cookie(journal_file: str) -> None:
    """The page lists task ids (bearer capabilities) and every user of the machine reaches
    127.0.0.1: without the printed URL's token, nothing is shown."""
    settings = PageSettings(journal_file)
    app = make_app(open_reader(journal_file), settings, tick=0.5, access_token="let-me-in")
    with TestClient(app, base_url="http://127.0.0.1:4321") as client:
        for path in ("/", "/task?server=x&id=y", "/changes", "/?token=let-me-out"):
            refused = client.get(path)
            assert refused.status_code == 403
            assert "printed" in refused.text
        assert client.post("/cancel", data={"token": "let-me-in"}).status_code == 403
        entry = client.get("/?token=let-me-in")
        assert entry.status_code == 200
        cookie = entry.headers["set-cookie"]
        assert cookie.startswith("mcp_tasks_monitor_4321=let-me-in;")
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert 'data-task="t1"' in client.get("/").text  # the cookie, now
        client.cookies.clear()
        assert client.get("/").status_code == 403


def test_a_foreign_host_header_is_refused(journal_file: str) -> None:
    """A DNS-rebinding page reaches the app under its own name: refused."""
    for client in _client(journal_file):
        assert client.get("/", headers={"Host": "evil.example"}).status_code == 400
        assert client.get("/", headers={"Host": "127.0.0.1:8000"}).status_code == 200


def test_journal_text_is_escaped_and_trace_ids_link(tmp_path: Path) -> None:
    path = str(tmp_path / "j.db")
    trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    hostile = attrs.evolve(
        _fresh("<img src=x onerror=alert(1)>"),
        tool="<script>alert(1)</script>",
        traceparent=trace,
    )
    with SQLiteJournal(path) as journal:
        anyio.run(journal.record, hostile)
    template = check_trace_url("https://tracing.example/trace/{trace_id}")
    for client in _client(path, settings={"trace_url": template}):
        page = client.get("/").text
        assert "<script>alert(1)" not in page
        assert "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert 'href="https://tracing.example/trace/0af7651916cd43dd8448eb211c80319c"' in page
    for bad in ["javascript:alert(1)//{trace_id}", "https://tracing.example/"]:
        with pytest.raises(ValueError, match="trace_id"):
            check_trace_url(bad)


@pytest.mark.anyio
async def test_served_by_hypercorn_the_stream_says_when_the_journal_changed(
    journal_file: str,
) -> None:
    """The real server (hypercorn on this test's loop: trio or asyncio) on 127.0.0.1: a write
    to the journal reaches an open ``/changes`` stream as ``data: change``."""
    import httpx

    reader = open_reader(journal_file)
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    try:
        async with anyio.create_task_group() as group:
            await group.start(
                lambda task_status: serve(
                    reader, sock, PageSettings(journal_file), tick=30, task_status=task_status
                )
            )
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                assert "t1" in (await client.get("/")).text
                async with client.stream("GET", "/changes") as stream:
                    lines = stream.aiter_lines()
                    assert await lines.__anext__() == "retry: 2000"
                    with SQLiteJournal(journal_file) as journal:
                        await journal.record(_fresh("t9", 9))
                    with anyio.fail_after(20):
                        async for line in lines:
                            if line.startswith("data:"):
                                assert line == "data: change"
                                break
            group.cancel_scope.cancel()
    finally:
        await reader.aclose()


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.integers(-7200, 600),
            st.sampled_from(["working", "input_required", "completed", "failed"]),
        ),
        max_size=40,
    )
)
def test_hour_buckets_count_each_task_once_per_status_and_slice(
    events: list[tuple[str, int, str]],
) -> None:
    now = 10_000.0
    recent = [Event(SERVER, t, now + at, "status", s, None, None) for t, at, s in events]
    slots = hour_buckets(recent, now)
    assert len(slots) == 12
    inside = [(t, at, s) for t, at, s in events if -3600 <= at < 0]
    for n, slot in enumerate(slots):
        for status, count in slot.items():
            lo, hi = -3600 + n * 300, -3600 + (n + 1) * 300
            tasks = {t for t, at, s in inside if s == status and lo <= at < hi}
            assert count == len(tasks)
    assert sum(sum(s.values()) for s in slots) <= len(inside)


def test_a_missing_journal_is_refused_and_not_made(tmp_path: Path) -> None:
    """The monitor only reads: pointed at no journal, it says so and creates nothing."""
    path = tmp_path / "none.db"
    with pytest.raises(JournalError, match="no journal there"):
        open_reader(str(path))
    assert not path.exists()
    ran = subprocess.run(
        [*CLI, "monitor", "--journal", str(path)],
        capture_output=True,
        text=True,
        env=env(),
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert ran.returncode == 2
    assert "no journal there" in ran.stderr
    assert not path.exists()


def test_the_postgres_reader_rides_out_a_dropped_connection(postgres_url: str) -> None:
    """A database restart drops the reader's connection: the next read connects again."""
    store = Store("postgres", postgres_url)

    async def main() -> None:
        with store.open() as journal:
            await journal.record(_fresh("a"))
        reader = open_reader(postgres_url, schema=store.schema)
        try:
            assert [t.task_id for t in (await reader.board()).tasks] == ["a"]
            with psycopg.connect(postgres_url, autocommit=True) as admin:
                killed = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'mcp-tasks monitor'"
                ).fetchall()
            assert killed  # the reader's connection
            assert [t.task_id for t in (await reader.board()).tasks] == ["a"]
        finally:
            await reader.aclose()

    anyio.run(main)


def test_without_the_extra_the_command_names_it(journal_file: str) -> None:
    code = (
        "import sys\n"
        "sys.modules['starlette'] = None  # as if the monitor extra were not installed\n"
        "from mcp_tasks_client.cli import main\n"
        f"sys.exit(main(['monitor', '--journal', {journal_file!r}]))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env(),
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert ran.returncode == 2
    assert "pip install 'mcp-tasks-client[monitor]'" in ran.stderr


@pytest.mark.anyio
async def test_a_2026_task_followed_by_a_worker_has_its_history(
    fastmcp4_http_url: str, tmp_path: Path
) -> None:
    """The other generation, for real: a 2026-07-28 task on fastmcp 4, started with a journal
    and followed by ``resume`` in worker mode; the page's reader shows its history."""
    from mcp_tasks_client import Client, HttpTransport, PollPolicy, ToolCall, client_for, resume
    from mcp_tasks_client._generation import Generation
    from mcp_tasks_client.models import CreateTaskResult, Implementation

    info = Implementation("monitor-test", "0")
    path = tmp_path / "j.db"
    with SQLiteJournal(path) as journal:
        transport = HttpTransport(fastmcp4_http_url)
        async with Client(transport, generation=Generation.V2026_07_28, client_info=info) as c:
            call = ToolCall("slow_compute", {"seconds": 0.5, "label": "seen"})
            created = await c.start(call.as_task(), journal=journal)
            assert isinstance(created, CreateTaskResult)  # slow_compute: the server makes a task
            task_id = created.task.task_id
        ended = await resume(
            journal,
            lambda entry: client_for(entry, client_info=info),
            policy=PollPolicy(floor=0.1, jitter=0.0),
            workers=2,
            owner="worker-2026",
            idle=0.05,
        )
        assert [r.entry.task_id for r in ended] == [task_id]
    reader = open_reader(str(path))
    try:
        found = await reader.task(fastmcp4_http_url, task_id)
        assert found is not None
        row, events = found
        assert row.generation == "2026-07-28"
        assert row.status == "completed"
        kinds = [e.kind for e in events]
        assert kinds[0] == "created"
        assert ("leased", "worker-2026") in [(e.kind, e.owner) for e in events]
        assert kinds[-1] == "outcome"
        assert events[-1].status == "completed"
        (worker,) = (await reader.board()).workers
        assert worker.owner == "worker-2026"
    finally:
        await reader.aclose()
