"""``resume(workers=N)`` against the real peers, on both journals: workers sharing one journal
follow each task once between them, a dead worker's tasks are taken over when its leases run
out, and (PostgreSQL) a waiter sees every outcome through the journal, not from the server.
Generation 1 with its session kept (mcp 1.30), generation 2 (fastmcp 4.1.4)."""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from pg import postgres_url
from started import task_created
from test_inputs_shared import _start_asking_task
from test_journal_protocol import Store, make_store

from mcp_tasks_client import (
    Client,
    Completed,
    HttpTransport,
    InputContext,
    InputEventKind,
    InputRouter,
    PollPolicy,
    ToolCall,
    client_for,
    resume,
)
from mcp_tasks_client._exceptions import UsageError
from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import Journal, JournalEntry, RecordedOutcome, SQLiteJournal
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.resume import Held, Resumed

__all__ = ["postgres_url"]

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
OPEN = functools.partial(client_for, client_info=INFO)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: object) -> Store:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    return make_store(request.param, request, tmp_path)


@pytest.fixture(params=["mcp1", "fastmcp4"])
def server(request: pytest.FixtureRequest) -> tuple[str, Generation]:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    generation = Generation.V2026_07_28 if request.param == "fastmcp4" else Generation.V2025_11_25
    return url, generation


async def start_tasks(
    url: str,
    generation: Generation,
    journal: Journal,
    count: int,
    seconds: float | Callable[[int], float],
    *,
    ends: dict[str, float] | None = None,
) -> list[str]:
    """``count`` journaled tasks on the server (generation 1: its session kept).

    ``seconds`` is each task's run time, or a function of its index; ``ends``, when given,
    gets the earliest time each task can end by this clock (when its request went out, plus
    its run time).
    """
    transport = HttpTransport(url, delete_session_on_close=False)
    ids = []
    async with Client(transport, generation=generation, client_info=INFO) as client:
        for n in range(count):
            run = seconds(n) if callable(seconds) else seconds
            if generation is Generation.V2026_07_28:
                call = ToolCall("slow_compute", {"seconds": run, "label": f"n{n}"})
            else:
                call = ToolCall("slow_echo", {"text": f"n{n}", "seconds": run})
            sent = time.time()
            created = task_created(await client.start(call.as_task(), journal=journal))
            ids.append(created.task.task_id)
            if ends is not None:
                ends[created.task.task_id] = sent + run
    return ids


async def test_workers_sharing_a_journal_follow_each_task_once(
    store: Store, server: tuple[str, Generation]
) -> None:
    url, generation = server
    with store.open() as journal:
        ids = await start_tasks(url, generation, journal, 12, 0.5)
    reports: dict[str, list[Resumed]] = {}

    async def worker(name: str) -> None:
        with store.open() as journal:
            reports[name] = await resume(
                journal, OPEN, policy=FAST, owner=name, workers=3, lease=10, idle=0.1
            )

    with anyio.fail_after(90):
        async with anyio.create_task_group() as group:
            for name in ("w1", "w2", "w3"):
                group.start_soon(worker, name)
    every = [item for items in reports.values() for item in items]
    assert not [item for item in every if isinstance(item.ended, Held)]  # never reported
    assert Counter(item.entry.task_id for item in every) == Counter(ids)  # once each
    assert all(isinstance(item.ended, Completed) for item in every), every
    with store.open() as journal:
        assert await journal.entries(open_only=True) == []
        for task_id in ids:
            entry = await journal.get(url, task_id)
            assert entry is not None
            assert entry.outcome is not None
            assert entry.outcome.status == "completed"


async def test_a_dead_workers_tasks_are_taken_over_when_its_leases_run_out(
    store: Store, fastmcp4_http_url: str
) -> None:
    with store.open() as journal:
        ids = await start_tasks(fastmcp4_http_url, Generation.V2026_07_28, journal, 4, 0.2)
        # A worker claimed them all, then died (it will never renew nor release).
        dead = await journal.claim_due("dead-worker", 1.5, 10)
        assert sorted(entry.task_id for entry in dead) == sorted(ids)
        with anyio.fail_after(60):
            done = await resume(journal, OPEN, policy=FAST, workers=2, lease=10, idle=0.1)
        assert sorted(item.entry.task_id for item in done) == sorted(ids)
        assert all(isinstance(item.ended, Completed) for item in done), done
        assert await journal.entries(open_only=True) == []


async def test_a_waiter_sees_each_outcome_through_the_journal(
    postgres_url: str, fastmcp4_http_url: str, tmp_path: object
) -> None:
    store = Store("postgres", postgres_url)
    with store.open() as journal:
        ids = await start_tasks(fastmcp4_http_url, Generation.V2026_07_28, journal, 6, 0.3)
    seen: dict[str, RecordedOutcome] = {}

    async def waiter() -> None:
        with store.open() as journal:
            found = await journal.wait_outcomes(
                [(fastmcp4_http_url, task_id) for task_id in ids], timeout=60
            )
            seen.update({task_id: outcome for (_, task_id), outcome in found.items()})

    async def worker() -> None:
        await anyio.sleep(0.2)  # the waiter listens before the first outcome (either way works)
        with store.open() as journal:
            await resume(journal, OPEN, policy=FAST, workers=6, idle=0.1)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            group.start_soon(worker)
    assert sorted(seen) == sorted(ids)
    assert {outcome.status for outcome in seen.values()} == {"completed"}


async def test_worker_mode_arguments_are_checked(tmp_path: object) -> None:
    store = Store("sqlite", f"{tmp_path}/j.db")
    with store.open() as journal:
        with pytest.raises(UsageError, match="workers"):
            await resume(journal, OPEN, workers=0)
        with pytest.raises(UsageError, match="idle"):
            await resume(journal, OPEN, workers=2, idle=0)
        assert await resume(journal, OPEN, workers=2) == []  # nothing open: done at once


async def test_a_follower_whose_lease_was_taken_stops_following_that_task(
    store: Store, fastmcp4_http_url: str
) -> None:
    """A process that stalled past its lease finds, at its next renewal, that another took
    the task: it stops waiting on it at once (reported Held), so the two never poll it in
    one lease."""
    with store.open() as journal:
        [task_id] = await start_tasks(fastmcp4_http_url, Generation.V2026_07_28, journal, 1, 30)

        async def thief() -> None:
            await anyio.sleep(0.3)
            # Another worker whose clock is an hour ahead sees the lease as run out.
            with store.open(clock=lambda: time.time() + 3600) as other:
                assert await other.claim(fastmcp4_http_url, task_id, "thief", 60)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(thief)
                done = await resume(journal, OPEN, policy=FAST, lease=1.5)
        assert [(item.entry.task_id, item.ended) for item in done] == [(task_id, Held(task_id))]
        entry = await journal.get(fastmcp4_http_url, task_id)
        assert entry is not None
        assert entry.is_open  # the thief's now
        assert not await journal.claim(fastmcp4_http_url, task_id, "someone", 60)


# -- input: a router per client ---------------------------------------------------------------

ASKS = ElicitationCapability(form={})


async def _accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})


def _asks_opener() -> functools.partial[Client]:
    return functools.partial(
        client_for, client_info=INFO, capabilities=InputRouter(elicitation=ASKS).capabilities()
    )


async def test_a_router_factory_gives_each_client_its_own_router(
    server: tuple[str, Generation], tmp_path: Path
) -> None:
    """Worker mode, one task at a time: a client per claim, so three clients, each answered
    by a router of its own (each attached to its client: the factory is called with it), each
    taking its key in the shared journal first (2025-11-25: each task on its own session)."""
    url, generation = server
    made: list[tuple[InputRouter, Client]] = []
    events: list[InputEventKind] = []

    def routers(client: Client) -> InputRouter:
        router = InputRouter(elicitation=ASKS, journal=journal, worker=f"r{len(made)}")
        router.default_elicitation(_accept)
        router.subscribe(lambda event: events.append(event.kind))
        made.append((router, client))
        return router

    with SQLiteJournal(tmp_path / "j.db") as journal:
        ids = [await _start_asking_task(url, generation, journal) for _ in range(3)]
        with anyio.fail_after(60):
            done = await resume(
                journal, _asks_opener(), policy=FAST, inputs=routers, workers=1, idle=0.1
            )
        answerers = {t: await journal.input_answerers(url, t) for t in ids}
    assert sorted(item.entry.task_id for item in done) == sorted(ids)
    assert all(isinstance(item.ended, Completed) for item in done), done
    assert len(made) == 3
    assert len({id(client) for _, client in made}) == 3
    for router, client in made:  # attached to the client it was made for, and no other
        with pytest.raises(UsageError, match="one client"):
            router.attach(next(c for r, c in made if r is not router))
        router.attach(client)  # again, to its own: nothing changes
    assert events.count(InputEventKind.ANSWERED) == 3
    assert sorted(w for keys in answerers.values() for w in keys.values()) == ["r0", "r1", "r2"]


async def test_one_router_for_many_clients_is_a_usage_error_before_anything_is_claimed(
    mcp1_http_url: str, tmp_path: Path
) -> None:
    """One InputRouter serves one client: worker mode (a client per claim) and open tasks on
    two 2025-11-25 sessions (a client each) refuse it at once; no task was leased."""
    router = InputRouter(elicitation=ASKS)
    router.default_elicitation(_accept)
    with SQLiteJournal(tmp_path / "j.db") as journal:
        ids = [await _start_asking_task(mcp1_http_url, Generation.V2025_11_25, journal)]
        ids.append(await _start_asking_task(mcp1_http_url, Generation.V2025_11_25, journal))
        with pytest.raises(UsageError, match=r"worker mode .*RouterFactory"):
            await resume(journal, _asks_opener(), inputs=router, workers=2)
        with pytest.raises(UsageError, match=r"need 2 clients .*RouterFactory"):
            await resume(journal, _asks_opener(), inputs=router)
        for task_id in ids:  # not leased by either
            assert await journal.claim(mcp1_http_url, task_id, "another", 60)


async def test_one_router_for_the_one_client_of_a_resume_still_answers(
    fastmcp4_http_url: str, tmp_path: Path
) -> None:
    """Open tasks of one 2026-07-28 server: one client, so one InputRouter does; resume
    attaches it (the opener may have attached it already: the same client, nothing changes)."""
    router = InputRouter(elicitation=ASKS)
    router.default_elicitation(_accept)
    opener = _asks_opener()

    def attaching(entry: JournalEntry) -> Client:
        client = opener(entry)
        router.attach(client)
        return client

    with SQLiteJournal(tmp_path / "j.db") as journal:
        ids = [await _start_asking_task(fastmcp4_http_url, Generation.V2026_07_28, journal)]
        ids.append(await _start_asking_task(fastmcp4_http_url, Generation.V2026_07_28, journal))
        with anyio.fail_after(60):
            done = await resume(journal, attaching, policy=FAST, inputs=router)
    assert sorted(item.entry.task_id for item in done) == sorted(ids)
    assert all(isinstance(item.ended, Completed) for item in done), done
