"""Issue 24, item 4: input requests in a journal shared by many workers, on both journals.

A key is taken for answering once across every process (``claim_input``, one transaction);
a worker with no handler for a task queues its request in the journal (``queue_input``) and a
worker that registers one answers it (``InputRouter.answer_queued``). Checked on the journals
(round trips, the version-1 schema brought to 2, a hypothesis state machine with many workers
racing on their own connections) and end to end: two worker processes on one PostgreSQL
journal against a real 2026-07-28 peer (fastmcp 4.1.4) and a 2025-11-25 one (mcp 1.30), the
peer's own request log counting the answers it received."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import psycopg
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from budget import examples
from conftest import require_peer
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)
from peers.harness import running_http_peer
from peers.request_log import ENV
from pg import new_schema, postgres_url
from started import task_created
from test_journal_protocol import SERVER, Store, entry_of, make_store

from mcp_tasks_client import (
    Client,
    Completed,
    HttpTransport,
    InputContext,
    InputEvent,
    InputEventKind,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
    client_for,
)
from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import JournalError, QueuedInput, RecordedOutcome, SQLiteJournal
from mcp_tasks_client.journal_postgres import PostgresJournal
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)

__all__ = ["postgres_url"]

HERE = Path(__file__).parent
INFO = Implementation("mcp-tasks-client-tests", "0")
AT = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request.param, request, tmp_path)


def _queued(task_id: str, key: str, *, by: str = "w1", order: int = 0) -> QueuedInput:
    return QueuedInput(
        server=SERVER,
        task_id=task_id,
        key=key,
        method="elicitation/create",
        params={"message": f"{key}?", "requestedSchema": {"type": "object"}},
        request_id=7,
        session_id="sess-1",
        queued_by=by,
        queued_at=AT + dt.timedelta(seconds=order),
    )


# -- the journals -------------------------------------------------------------------------------


def test_a_key_is_taken_once_and_a_queued_one_leaves_the_queue_when_taken(store: Store) -> None:
    async def main() -> None:
        with store.open() as journal, store.open() as other:
            await journal.record(entry_of("t-1"))
            await journal.record(entry_of("t-2", order=1))
            assert await journal.queue_input(_queued("t-1", "a"))
            assert not await other.queue_input(_queued("t-1", "a", by="w2"))  # queued already
            assert await journal.queue_input(_queued("t-2", "b", order=1))
            (first, second) = await other.queued_inputs(SERVER)
            assert first == _queued("t-1", "a")  # round trip: id, session, params, time
            assert second.key == "b"
            assert await other.queued_inputs("http://elsewhere/") == []
            assert await other.claim_input(SERVER, "t-1", "a", "w2")
            assert not await journal.claim_input(SERVER, "t-1", "a", "w1")  # taken
            assert [q.key for q in await journal.queued_inputs()] == ["b"]
            # Taken without being queued (the worker with a handler saw it first).
            assert await journal.claim_input(SERVER, "t-1", "c", "w1")
            assert not await journal.queue_input(_queued("t-1", "c"))  # answered: not queued
            assert await other.input_answerers(SERVER, "t-1") == {"a": "w2", "c": "w1"}
            # A task that ended has nothing left to answer.
            await journal.finish(SERVER, "t-2", RecordedOutcome("completed"))
            assert await journal.queued_inputs() == []

    anyio.run(main)


def test_a_version_1_sqlite_journal_is_brought_to_version_2(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    store = Store("sqlite", str(path))
    with store.open() as journal:
        anyio.run(journal.record, entry_of("t-1"))
    db = sqlite3.connect(path)
    db.execute("DROP TABLE inputs")  # version 1 had neither the table nor the trace columns
    db.execute("ALTER TABLE tasks DROP COLUMN traceparent")
    db.execute("ALTER TABLE tasks DROP COLUMN tracestate")
    db.execute("ALTER TABLE tasks DROP COLUMN lease_token")  # nor (version 3) lease tokens
    # nor (version 4) the history, the heartbeats and the triggers that write the history
    triggers = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for (trigger,) in triggers:
        db.execute(f"DROP TRIGGER {trigger}")
    db.execute("DROP TABLE events")
    db.execute("DROP TABLE workers")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    with store.open() as journal:
        assert anyio.run(journal.claim_input, SERVER, "t-1", "k", "w1")
        assert [e.task_id for e in anyio.run(journal.entries)] == ["t-1"]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    db.close()


def test_a_version_1_postgres_journal_is_brought_to_version_2(postgres_url: str) -> None:
    schema = new_schema()
    with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
        anyio.run(journal.record, entry_of("t-1"))
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {schema}.inputs")  # version 1 had neither this table
        conn.execute(  # nor the trace columns
            f"ALTER TABLE {schema}.tasks DROP COLUMN traceparent, DROP COLUMN tracestate, "
            "DROP COLUMN lease_token"  # and (version 3) the lease tokens
        )
        # nor (version 4) the history, the heartbeats and what writes them
        conn.execute(f"DROP TABLE {schema}.events, {schema}.workers")
        conn.execute(
            f"DROP FUNCTION {schema}.task_events, {schema}.input_events, "
            f"{schema}.announce_change CASCADE"
        )
        conn.execute(f"UPDATE {schema}.meta SET value = '1' WHERE key = 'schema_version'")
    with PostgresJournal(postgres_url, schema=schema) as journal:
        assert anyio.run(journal.claim_input, SERVER, "t-1", "k", "w1")
        assert [e.task_id for e in anyio.run(journal.entries)] == ["t-1"]
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'")
        assert row.fetchone() == ("4",)


def test_a_router_with_a_journal_says_which_journal_it_needs() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    assert router.journal is None
    with pytest.raises(Exception, match="attach the InputRouter"):
        anyio.run(router.answer_queued)


# -- answered once across many workers: a state machine -------------------------------------------

WORKERS = ["w1", "w2", "w3"]
TASKS = ["t-0", "t-1", "t-2"]
KEYS = st.sampled_from(["k1", "k2", "k3", "k4"])


class AnsweredOnce(RuleBasedStateMachine):
    """Workers, each on its own connection, see input requests of tasks. One with a handler
    takes the key (``claim_input``); one without queues the request; workers with handlers
    drain the queue; several take one key at the same moment (a race on the database). After
    every step: each key was taken by exactly the first worker to try, never by a second;
    the queue holds exactly the requests queued and not yet taken, of open tasks."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        store.schema = new_schema()
        if store.kind == "sqlite":
            Path(store.where).unlink(missing_ok=True)
        self.store = store
        self.contexts = [store.open() for _ in WORKERS]
        self.journals = dict(zip(WORKERS, (c.__enter__() for c in self.contexts), strict=True))
        self.taken: dict[tuple[str, str], str] = {}  # (task, key) -> the worker that took it
        self.queued: dict[tuple[str, str], str] = {}  # (task, key) -> the worker that queued it
        self.ended: set[str] = set()
        self.order = 0
        for order, task_id in enumerate(TASKS):
            anyio.run(self.journals["w1"].record, entry_of(task_id, order=order))

    def teardown(self) -> None:
        for context in self.contexts:
            context.__exit__(None, None, None)
        if self.store.kind == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.store.where}{suffix}").unlink(missing_ok=True)

    @rule(worker=st.sampled_from(WORKERS), task=st.sampled_from(TASKS), key=KEYS)
    def a_worker_with_a_handler_takes_a_key(self, worker: str, task: str, key: str) -> None:
        got = anyio.run(self.journals[worker].claim_input, SERVER, task, key, worker)
        assert got == ((task, key) not in self.taken)
        if got:
            self.taken[(task, key)] = worker
            self.queued.pop((task, key), None)

    @rule(worker=st.sampled_from(WORKERS), task=st.sampled_from(TASKS), key=KEYS)
    def a_worker_without_one_queues_it(self, worker: str, task: str, key: str) -> None:
        self.order += 1
        queued = _queued(task, key, by=worker, order=self.order)
        added = anyio.run(self.journals[worker].queue_input, queued)
        fresh = (task, key) not in self.taken and (task, key) not in self.queued
        assert added == fresh
        if fresh:
            self.queued[(task, key)] = worker

    @rule(worker=st.sampled_from(WORKERS))
    def a_worker_with_handlers_drains_the_queue(self, worker: str) -> None:
        journal = self.journals[worker]
        for queued in anyio.run(journal.queued_inputs, SERVER):
            if anyio.run(journal.claim_input, SERVER, queued.task_id, queued.key, worker):
                self.taken[(queued.task_id, queued.key)] = worker
                self.queued.pop((queued.task_id, queued.key), None)

    @rule(task=st.sampled_from(TASKS), key=KEYS)
    def every_worker_takes_one_key_at_once(self, task: str, key: str) -> None:
        won: list[str] = []

        async def race() -> None:
            async def take(worker: str) -> None:
                if await self.journals[worker].claim_input(SERVER, task, key, worker):
                    won.append(worker)

            async with anyio.create_task_group() as group:
                for worker in WORKERS:
                    group.start_soon(take, worker)

        anyio.run(race)
        if (task, key) in self.taken:
            assert won == []
        else:
            assert len(won) == 1
            self.taken[(task, key)] = won[0]
            self.queued.pop((task, key), None)

    @rule(task=st.sampled_from(TASKS))
    def a_task_ends(self, task: str) -> None:
        anyio.run(self.journals["w2"].finish, SERVER, task, RecordedOutcome("completed"))
        self.ended.add(task)

    @invariant()
    def each_key_is_taken_by_one_worker(self) -> None:
        for task in TASKS:
            seen = anyio.run(self.journals["w3"].input_answerers, SERVER, task)
            assert seen == {k: w for (t, k), w in self.taken.items() if t == task}

    @invariant()
    def the_queue_holds_what_no_one_took(self) -> None:
        queued = anyio.run(self.journals["w1"].queued_inputs)
        expected = {key: by for key, by in self.queued.items() if key[0] not in self.ended}
        assert {(q.task_id, q.key): q.queued_by for q in queued} == expected
        assert [q.queued_at for q in queued] == sorted(q.queued_at for q in queued)


def test_a_key_is_answered_once_across_many_workers(store: Store) -> None:
    class Machine(AnsweredOnce):
        def __init__(self) -> None:
            super().__init__(store)

    run_state_machine_as_test(
        Machine,
        settings=settings(max_examples=examples(15), stateful_step_count=20, deadline=None),
    )


# -- two worker processes against the real peers ------------------------------------------------


@pytest.fixture(params=["mcp1", "fastmcp4"])
def logged_peer(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Generation, Path]]:
    """A peer of this test's own, logging the task requests and answers it receives."""
    name: str = request.param
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv(ENV, str(log))
    generation = Generation.V2026_07_28 if name == "fastmcp4" else Generation.V2025_11_25
    with running_http_peer(require_peer(name)) as url:
        yield url, generation, log


async def _start_asking_task(url: str, generation: Generation, journal: Any) -> str:
    """A journaled task that asks one question (generation 1: its session kept)."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    transport = HttpTransport(url, delete_session_on_close=False)
    async with Client(
        transport, generation=generation, client_info=INFO, capabilities=router.capabilities()
    ) as client:
        if generation is Generation.V2026_07_28:
            call = ToolCall("confirm_delete", {"filename": "shared.txt"})
        else:
            call = ToolCall("confirm", {"text": "shared"})
        created = task_created(await client.start(call.as_task(), journal=journal))
    return created.task.task_id


async def _run_workers(
    postgres_url: str,
    schema: str,
    url: str,
    task_id: str,
    modes: dict[str, str],
    *,
    gate: Path,
    arrivals: int,
) -> dict[str, list[dict[str, Any]]]:
    """The worker processes, each in its ``mode``; their JSON lines by name. Their handlers
    answer once ``arrivals`` workers said the question arrived (``gate`` is made then)."""
    script = [sys.executable, str(HERE / "input_worker.py")]
    lines: dict[str, list[dict[str, Any]]] = {name: [] for name in modes}
    processes: dict[str, anyio.abc.Process] = {}

    async def read(name: str) -> None:
        stdout = processes[name].stdout
        assert stdout is not None
        buffered = BufferedByteReceiveStream(stdout)
        while True:
            try:
                raw = await buffered.receive_until(b"\n", 1 << 20)
            except (anyio.EndOfStream, anyio.IncompleteRead):
                return
            lines[name].append(json.loads(raw))
            arrived = [n for n in lines if {"event": "arrived"} in lines[n]]
            if len(arrived) >= arrivals:
                await anyio.Path(gate).touch()

    try:
        async with anyio.create_task_group() as group:
            for name, mode in modes.items():
                argv = [*script, mode, postgres_url, schema, url, task_id, name, str(gate)]
                with (gate.parent / f"{name}.err").open("wb") as err:
                    processes[name] = await anyio.open_process(argv, stderr=err)
                group.start_soon(read, name)
            with anyio.fail_after(120):
                for name, process in processes.items():
                    code = await process.wait()
                    errors = (gate.parent / f"{name}.err").read_text()[-3000:]
                    assert code == 0, (name, lines[name], errors)
    finally:
        for process in processes.values():
            if process.returncode is None:
                process.kill()  # its own pid
                await process.wait()
    return lines


def _answers(request_log: Path, task_id: str) -> list[dict[str, Any]]:
    """The answers the peer received for ``task_id``: ``tasks/update`` (2026-07-28) or JSON-RPC
    responses carrying its related-task (2025-11-25)."""
    found = []
    for raw in request_log.read_text().splitlines():
        line = json.loads(raw)
        if line["task"] == task_id and line["method"] in {"tasks/update", "response"}:
            found.append(line)
    return found


def _events(lines: list[dict[str, Any]]) -> list[str]:
    return [line["event"] for line in lines if "event" in line]


def _accepted(lines: list[dict[str, Any]]) -> None:
    (outcome,) = [line for line in lines if "outcome" in line]
    assert outcome["outcome"] == "Completed", outcome
    text = outcome["text"].lower()
    assert "deleted shared.txt" in text or "confirmed=true action=accept" in text, text


@pytest.mark.anyio
async def test_two_workers_with_handlers_answer_a_question_once(
    postgres_url: str, logged_peer: tuple[str, Generation, Path], tmp_path: Path
) -> None:
    """Two workers with a handler for the task: one answers, the other does not; the server
    received one answer. 2026-07-28: both wait on the task, both see the key (the handlers
    are held until both did), and the journal gives it to one. 2025-11-25: the request comes
    on the stream of the one waiting on the task (a second waiter on one task and one session
    is not a worker's case: leases keep it away, and mcp 1.30 answers only one of two held
    ``tasks/result``), which takes it in the journal; the other looks at the journal's queue
    meanwhile and finds nothing to answer."""
    url, generation, request_log = logged_peer
    schema = new_schema()
    both_see_it = generation is Generation.V2026_07_28
    async with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
        task_id = await _start_asking_task(url, generation, journal)
        lines = await _run_workers(
            postgres_url,
            schema,
            url,
            task_id,
            {"a": "wait-answering", "b": "wait-answering" if both_see_it else "serve"},
            gate=tmp_path / "gate",
            arrivals=2 if both_see_it else 1,
        )
        answerers = await journal.input_answerers(url, task_id)
    for name in ("a", "b") if both_see_it else ("a",):
        _accepted(lines[name])
    handled = [name for name in ("a", "b") if any("handled" in line for line in lines[name])]
    assert len(handled) == 1, lines
    (winner,) = handled
    assert list(answerers.values()) == [winner]
    (answer,) = _answers(request_log, task_id)
    assert answer["worker"] == winner
    assert "answered" in _events(lines[winner])
    loser = "b" if winner == "a" else "a"
    assert "answered" not in _events(lines[loser])
    if not both_see_it:
        assert {"answered": 0} in lines["b"]
    if both_see_it:  # it saw the key too, and left it to the winner
        assert _events(lines[loser]) == ["arrived", "duplicate"]


@pytest.mark.anyio
async def test_a_worker_without_a_handler_queues_the_question_for_one_with_a_handler(
    postgres_url: str, logged_peer: tuple[str, Generation, Path], tmp_path: Path
) -> None:
    """The worker polling the task has no handler: it queues the request in the journal and
    answers nothing; a second worker, not polling, with a handler for the task, answers it from
    the queue (2025-11-25: on the task's session, which it resumed); the task completes with
    that answer, and the server received exactly that one answer."""
    url, generation, request_log = logged_peer
    schema = new_schema()
    async with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
        task_id = await _start_asking_task(url, generation, journal)
        lines = await _run_workers(
            postgres_url,
            schema,
            url,
            task_id,
            {"poller": "wait-silent", "helper": "serve"},
            gate=tmp_path / "gate",
            arrivals=0,
        )
        answerers = await journal.input_answerers(url, task_id)
        assert await journal.queued_inputs() == []
    _accepted(lines["poller"])
    assert "queued" in _events(lines["poller"])
    assert "answered" not in _events(lines["poller"])
    assert not any("handled" in line for line in lines["poller"])
    assert {"answered": 1} in lines["helper"]  # it stayed until the task ended
    assert list(answerers.values()) == ["helper"]
    (answer,) = _answers(request_log, task_id)
    assert answer["worker"] == "helper"


@pytest.fixture(params=["mcp1", "fastmcp4"])
def server(request: pytest.FixtureRequest) -> tuple[str, Generation]:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    generation = Generation.V2026_07_28 if request.param == "fastmcp4" else Generation.V2025_11_25
    return url, generation


@pytest.mark.anyio
async def test_on_an_sqlite_journal_a_queued_question_is_answered_by_another_client(
    server: tuple[str, Generation], tmp_path: Path
) -> None:
    """The same queue on one machine's SQLite journal, in one process: a client whose router
    has no handler waits on the task and queues its question; a second client of the task
    (2025-11-25: its session, resumed from the journal) answers it from the queue."""
    url, generation = server
    events: list[str] = []
    with SQLiteJournal(tmp_path / "j.db") as journal:
        task_id = await _start_asking_task(url, generation, journal)
        entry = await journal.get(url, task_id)
        assert entry is not None
        capability = ElicitationCapability(form={})
        silent = InputRouter(elicitation=capability, journal=journal, worker="silent")
        silent.subscribe(lambda event: events.append(f"silent {event.kind.value}"))
        helper = InputRouter(elicitation=capability, journal=journal, worker="helper")
        helper.subscribe(lambda event: events.append(f"helper {event.kind.value}"))

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})

        helper.on_elicitation(task_id, accept)
        opened = [
            client_for(entry, client_info=INFO, capabilities=router.capabilities())
            for router in (silent, helper)
        ]
        async with opened[0] as waiting, opened[1] as answering:
            silent.attach(waiting)
            helper.attach(answering)
            async with Poller(waiting, PollPolicy(floor=0.05, jitter=0.0), inputs=silent) as poller:
                ref = await waiting.get_task(task_id)
                async with anyio.create_task_group() as group:

                    async def answer_when_queued() -> None:
                        while not await helper.answer_queued():
                            await anyio.sleep(0.05)

                    group.start_soon(answer_when_queued)
                    with anyio.fail_after(60):
                        outcome = await poller.wait(ref)
        answerers = await journal.input_answerers(url, task_id)
    assert list(answerers.values()) == ["helper"]
    assert isinstance(outcome, Completed)
    assert events.count("silent queued") == 1
    assert events.count("helper answered") == 1
    assert "silent answered" not in events


@pytest.mark.anyio
async def test_a_journal_that_fails_leaves_the_question_unanswered(
    fastmcp4_http_url: str, tmp_path: Path
) -> None:
    """The journal cannot say whether another worker took the key: nothing is answered (the
    handler never runs), and the router says why (HANDLER_FAILED with the JournalError)."""
    url = fastmcp4_http_url
    journal = SQLiteJournal(tmp_path / "j.db")
    with journal:
        task_id = await _start_asking_task(url, Generation.V2026_07_28, journal)
        entry = await journal.get(url, task_id)
    assert entry is not None  # the journal is closed from here on: every call fails
    router = InputRouter(elicitation=ElicitationCapability(form={}), journal=journal, worker="w")
    called: list[str] = []

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        called.append(ctx.key)
        return ElicitResult(ElicitAction.ACCEPT, {"confirm": True})

    router.on_elicitation(task_id, accept)
    failed: list[InputEvent] = []
    async with client_for(entry, client_info=INFO, capabilities=router.capabilities()) as client:
        router.attach(client)
        async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), inputs=router) as poller:
            ref = await client.get_task(task_id)
            with anyio.fail_after(30):
                async for item in poller.watch(ref):
                    if isinstance(item, InputEvent) and item.kind is InputEventKind.HANDLER_FAILED:
                        failed.append(item)
                        break
        still = await client.get_task(task_id)
    assert called == []
    (event,) = failed
    assert isinstance(event.error, JournalError)
    assert event.task_id == task_id
    assert still.status.value == "input_required"  # no answer went out
