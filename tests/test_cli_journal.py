"""``mcp-tasks --journal``: a 2025-11-25 task started by one run and followed by the next (its
session kept and resumed), ``resume`` after the waiting process was SIGKILLed, and journal
files the command refuses (exit 9, the file left as it is). Against the real peers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest
from test_cli import CLI, GEN2, REPO, cli, env, texts

from mcp_tasks_client.cli import ExitCode


@pytest.fixture(params=["mcp1", "ts1"])
def gen1_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    return url


def test_a_task_started_by_one_run_is_followed_by_the_next(gen1_url: str, tmp_path: Path) -> None:
    """Without the journal a new run cannot see a 2025-11-25 task (it belongs to the session
    that made it); with it, status, wait and result resume that session."""
    journal = str(tmp_path / "tasks.db")
    server = ["--url", gen1_url, "--journal", journal]
    args = json.dumps({"text": "journaled", "seconds": 1})
    started = cli(*server, "call", "slow_echo", "--args", args, "--task")
    assert started.code == ExitCode.COMPLETED, started.stderr
    task_id = started.of("created")[0]["task_id"]

    alone = cli("--url", gen1_url, "status", task_id)  # no journal: a new session
    assert alone.code == ExitCode.LOST, alone.stderr

    status = cli(*server, "status", task_id)
    assert status.code == ExitCode.COMPLETED, status.stderr
    assert status.last["task_id"] == task_id

    waited = cli(*server, "wait", task_id)
    assert waited.code == ExitCode.COMPLETED, waited.stderr
    assert waited.last["status"] == "completed"
    assert texts(waited.last["result"]) == "echo (task): journaled"
    assert oct(os.stat(journal).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("peer", ["mcp1", "fastmcp4"])
def test_resume_after_the_waiting_run_was_killed(
    peer: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url: str = request.getfixturevalue(f"{peer}_http_url")
    journal = str(tmp_path / "tasks.db")
    generation: tuple[str, ...] = GEN2 if peer == "fastmcp4" else ()
    tool, args = ("slow_echo", {"text": "after the kill", "seconds": 2})
    if peer == "fastmcp4":
        tool, args = ("slow_compute", {"seconds": 2, "label": "after the kill"})
    command = [*CLI, "--url", url, *generation, "--journal", journal, "--json"]
    command += ["call", tool, "--args", json.dumps(args), "--task", "--wait"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env(), cwd=REPO)
    try:
        assert child.stdout is not None
        created = json.loads(child.stdout.readline())
        assert created["event"] == "created", created
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()

    resumed = cli("--journal", journal, "--json", "--interval", "0.2", "resume")
    assert resumed.code == ExitCode.COMPLETED, resumed.stderr
    outcome = resumed.last
    assert outcome["event"] == "outcome"
    assert outcome["resumed"] is True
    assert outcome["task_id"] == created["task_id"]
    assert outcome["server"] == url
    assert outcome["status"] == "completed"
    assert "after the kill" in texts(outcome["result"])

    again = cli("--journal", journal, "resume")  # nothing left open
    assert again.code == ExitCode.COMPLETED
    assert again.stdout == ""


def test_resume_reports_a_task_whose_session_is_gone_as_lost(
    mcp1_http_url: str, tmp_path: Path
) -> None:
    """A journaled task whose kept session the server no longer has: exit 8, recorded."""
    journal = str(tmp_path / "tasks.db")
    server = ["--url", mcp1_http_url, "--journal", journal]
    args = json.dumps({"text": "x", "seconds": 1})
    started = cli(*server, "call", "slow_echo", "--args", args, "--task")
    assert started.code == ExitCode.COMPLETED, started.stderr
    task_id = started.of("created")[0]["task_id"]
    # End that session the way the server would after an idle timeout: DELETE it.
    db = sqlite3.connect(journal)
    (session_id,) = db.execute("SELECT session_id FROM tasks").fetchone()
    db.close()
    httpx.delete(mcp1_http_url, headers={"Mcp-Session-Id": session_id}, timeout=10)
    lost = cli("--journal", journal, "resume")
    assert lost.code == ExitCode.LOST, lost.stderr
    assert lost.last["status"] == "lost"
    assert lost.last["task_id"] == task_id
    assert "session expired" in lost.last["error"]["message"]
    assert cli("--journal", journal, "resume").stdout == ""  # recorded: not tried again


@pytest.mark.parametrize(
    "content", [b"my notes\n", b"SQLite format 3\x00" + b"\x00" * 200], ids=["text", "sqlite"]
)
def test_a_foreign_journal_file_is_refused_and_left_alone(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.write_bytes(content)
    path.chmod(0o600)
    ran = cli("--journal", str(path), "resume")
    assert ran.code == ExitCode.JOURNAL
    assert ran.last["event"] == "error"
    assert ran.last["error"]["type"] == "JournalError"
    assert path.read_bytes() == content


def test_resume_needs_a_journal_and_takes_no_server() -> None:
    assert cli("resume").code == ExitCode.USAGE
    assert cli("--url", "http://127.0.0.1:9/mcp", "--journal", "x.db", "resume").code == 2
