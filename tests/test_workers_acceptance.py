"""Issue 24's Done-when: three worker processes share one PostgreSQL journal and 300 tasks on
a real peer, for both generations (mcp 1.30 with its session kept; fastmcp 4.1.4). One worker
is SIGKILLed midway and the others finish its tasks; the server's own request log shows no
task polled by two workers in the same lease; a trigger on the journal shows every outcome
recorded exactly once; a waiter in a fourth process sees each outcome through the journal."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import psycopg
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from conftest import require_peer
from peers.harness import running_http_peer
from peers.request_log import ENV
from pg import new_schema, postgres_url
from test_resume_workers import start_tasks

from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal_postgres import PostgresJournal

__all__ = ["postgres_url"]

HERE = Path(__file__).parent
TASKS = 300
CAPACITY = 40  # tasks each worker follows at once
LEASE = 3.0  # seconds: short, so the killed worker's tasks are taken over soon
KILLED = "w1"

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The test drives processes (workers on trio, the waiter on asyncio): one loop here."""
    return "trio"


@pytest.fixture(params=["mcp1", "fastmcp4"])
def logged_peer(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Generation, Path]]:
    """A peer of this test's own, logging every task request it receives."""
    name: str = request.param
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv(ENV, str(log))
    # fastmcp's task worker runs 10 tasks at once by default: 300 four-second tasks were two
    # minutes of queueing in the server, nothing of the workers'. Let it run them all.
    monkeypatch.setenv("FASTMCP_DOCKET_CONCURRENCY", str(TASKS))
    generation = Generation.V2026_07_28 if name == "fastmcp4" else Generation.V2025_11_25
    with running_http_peer(require_peer(name)) as url:
        yield url, generation, log


def _audit(url: str, schema: str) -> None:
    """Every change of a task's outcome, as the database saw it (not as a worker says)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {schema}.outcome_writes (task_id text, old jsonb, new jsonb)")
        conn.execute(
            f"""CREATE FUNCTION {schema}.audit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO {schema}.outcome_writes VALUES (NEW.task_id, OLD.outcome, NEW.outcome);
                RETURN NEW;
            END $$"""
        )
        conn.execute(
            f"CREATE TRIGGER audit AFTER UPDATE ON {schema}.tasks FOR EACH ROW "
            f"WHEN (OLD.outcome IS DISTINCT FROM NEW.outcome) EXECUTE FUNCTION {schema}.audit()"
        )


class _RunTimes:
    """Each task's run time, by its index: the first ones the workers take are short (longer
    than a lease all the same); the rest are still running when the workers reach them,
    however long the 300 creations take on a loaded machine, so the killed worker holds some.
    A late task runs for what its creation estimates the remaining creations will take (at
    the rate so far), and some seconds more: they all end a few seconds after the last one."""

    SHORT, AFTER = 4.0, 6.0
    FIRST = 3 * CAPACITY  # what the three workers take first

    def __init__(self) -> None:
        self.started = 0.0

    def __call__(self, n: int) -> float:
        now = time.monotonic()
        if n == 0:
            self.started = now
        if n < self.FIRST:
            return self.SHORT
        return self.AFTER + (now - self.started) / n * (TASKS - n)


class _Tail:
    """Reads the request log as the peer writes it: whole lines, each once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def polled_by(self, worker: str) -> set[str]:
        """The tasks ``worker`` polled in the lines written since the last call."""
        if not self.path.exists():  # the peer writes it at the first task request
            return set()
        with self.path.open("rb") as log:
            log.seek(self.offset)
            written = log.read()
        whole = written[: written.rfind(b"\n") + 1]  # a line still being written: next time
        self.offset += len(whole)
        entries = [json.loads(line) for line in whole.splitlines()]
        return {e["task"] for e in entries if e["worker"] == worker and e.get("task")}


async def _lines(process: anyio.abc.Process, into: list[dict[str, Any]]) -> None:
    assert process.stdout is not None
    buffered = BufferedByteReceiveStream(process.stdout)
    while True:
        try:
            line = await buffered.receive_until(b"\n", 65536)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            return
        into.append(json.loads(line))


async def test_three_workers_share_300_tasks_and_survive_a_kill(
    postgres_url: str, logged_peer: tuple[str, Generation, Path], tmp_path: Path
) -> None:
    url, generation, request_log = logged_peer
    schema = new_schema()
    script = [sys.executable, str(HERE / "journal_worker.py")]
    reports: dict[str, list[dict[str, Any]]] = {"w1": [], "w2": [], "w3": [], "waiter": []}
    processes: list[anyio.abc.Process] = []
    killed_at = 0.0
    async with anyio.create_task_group() as group:
        try:
            # The workers start first and wait to be told to go: a loaded machine's seconds of
            # interpreter start-up are spent while the tasks are created, not after.
            workers = {}
            for name in ("w1", "w2", "w3"):
                argv = [*script, "work", postgres_url, schema, name, str(CAPACITY), str(LEASE)]
                # stderr to a file: a pipe nobody reads would stop a worker that logs a lot.
                errors = tmp_path / f"{name}.stderr"
                workers[name] = await anyio.open_process(argv, stderr=errors.open("wb"))
                processes.append(workers[name])
                group.start_soon(_lines, workers[name], reports[name])
            # Ready before the tasks are made: on a loaded machine the seconds between the last
            # creation and the first poll must be few, or w1 could reach only tasks about to
            # end (and end before the kill).
            with anyio.fail_after(240):
                for name, process in workers.items():
                    while not reports[name]:
                        assert process.returncode is None, f"{name} ended before it was ready"
                        await anyio.sleep(0.05)
                    assert reports[name].pop(0) == {"ready": name}
            async with PostgresJournal(postgres_url, schema=schema, create=True) as journal:
                ends: dict[str, float] = {}
                ids = await start_tasks(url, generation, journal, TASKS, _RunTimes(), ends=ends)
            _audit(postgres_url, schema)
            for process in workers.values():
                assert process.stdin is not None
                await process.stdin.send(b"go\n")
            ids_file = tmp_path / "ids.json"
            ids_file.write_text(json.dumps(ids))
            waiter = await anyio.open_process(
                [*script, "wait", postgres_url, schema, url, str(ids_file)]
            )
            processes.append(waiter)
            group.start_soon(_lines, waiter, reports["waiter"])
            with anyio.fail_after(240):
                # Once it surely holds a task: one it has polled that cannot end for a while
                # yet, so it cannot have recorded it. (Not "once it reported some": its tasks
                # may all end together, and it reports them only then.)
                tail, polled = _Tail(request_log), set[str]()
                while not any(ends[task] > time.time() + 1.5 for task in polled):
                    assert workers[KILLED].returncode is None, "w1 ended before the kill"
                    await anyio.sleep(0.05)
                    polled |= tail.polled_by(KILLED)
                workers[KILLED].send_signal(signal.SIGKILL)  # its own pid
                killed_at = time.time()
                assert await workers[KILLED].wait() == -signal.SIGKILL
                for name in ("w2", "w3"):
                    assert await workers[name].wait() == 0
                assert await waiter.wait() == 0
        finally:
            for process in processes:
                if process.returncode is None:
                    process.kill()
                    await process.wait()

    # Every outcome recorded, exactly once, as the database saw it.
    async with PostgresJournal(postgres_url, schema=schema) as journal:
        entries = {entry.task_id: entry for entry in await journal.entries()}
    assert sorted(entries) == sorted(ids)
    assert {e.outcome.status if e.outcome else None for e in entries.values()} == {"completed"}
    with psycopg.connect(postgres_url) as conn:
        writes = conn.execute(f"SELECT task_id, old FROM {schema}.outcome_writes").fetchall()
    assert sorted(task_id for task_id, _ in writes) == sorted(ids)  # one write each
    assert all(old is None for _, old in writes)

    # Each task's outcome was reported once between the workers. Other reports may repeat: a
    # worker that could not renew a lease in time reports the task Held, and one whose wait
    # failed (the loaded server reset a connection) reports the error, and the task is taken
    # again when the lease runs out. Only the last few w1 finished (recorded, as the journal
    # shows) may have died with it before it printed them.
    ended = [
        line["task"]
        for name in ("w1", "w2", "w3")
        for line in reports[name]
        if line["ended"] in {"Completed", "Failed", "Cancelled", "Expired", "Lost"}
    ]
    twice = {task for task in ended if ended.count(task) > 1}
    assert not twice, [(n, line) for n in reports for line in reports[n] if line["task"] in twice]
    assert len(set(ids) - set(ended)) <= CAPACITY
    assert reports["w2"]
    assert reports["w3"]

    # The waiter saw each outcome, through the journal only.
    assert sorted(line["task"] for line in reports["waiter"]) == sorted(ids)

    # The server's log: per task, each worker's polls are one unbroken run (never back to an
    # earlier holder), and a task changes hands only when its holder let it go: it was killed
    # (the next one polls after the kill), or it reported giving the task up (Held: a lease
    # it could not renew in time; an error: its wait failed, and its lease ran out).
    gave_up = {
        (name, line["task"])
        for name in ("w1", "w2", "w3")
        for line in reports[name]
        if line["ended"] not in {"Completed", "Failed", "Cancelled", "Expired", "Lost"}
    }
    polls: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for raw in request_log.read_text().splitlines():
        line = json.loads(raw)
        if line["worker"]:
            polls[line["task"]].append((line["t"], line["worker"]))
    assert set(polls) == set(ids)
    taken_over = 0
    for task, seen in polls.items():
        seen.sort()
        runs = [seen[0][1]]
        for at, worker in seen[1:]:
            if worker != runs[-1]:
                held_by = runs[-1]
                killed = held_by == KILLED and at >= killed_at
                assert killed or (held_by, task) in gave_up, (task, held_by, at, worker)
                runs.append(worker)
                taken_over += killed
        assert len(runs) == len(set(runs)), (task, seen)
    assert taken_over > 0  # w1 held running tasks when it died, and the others finished them
