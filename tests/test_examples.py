"""Docs that run: the examples, as the README tells a user to run them, against a real server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import require_peer

REPO = Path(__file__).resolve().parent.parent


def run_example(name: str, *args: str, peer: str = "mcp1") -> str:
    """Run ``examples/<name>`` (it starts the bundled peer of its generation); its stdout."""
    require_peer(peer)
    run = subprocess.run(
        [sys.executable, str(REPO / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_demo_starts_a_task_on_a_real_server_and_prints_its_outcome() -> None:
    out = run_example("demo.py")
    assert "protocol 2025-11-25" in out
    assert "  need_task" in out
    assert "plain call: plain_echo -> ['echo: hello from the demo']" in out
    assert "task started:" in out
    # progress events for the task, each status message with the time it was set, and the
    # terminal snapshot's carried-over message shown as what it is (not "completed - step 4")
    for step in range(1, 5):
        assert f"progress {step}/4: step {step}/4 (received " in out
        assert f'working: "step {step}/4" (set ' in out
    assert 'completed (its message "step 4/4" is from ' in out
    assert ", while working)" in out
    assert "outcome: completed -> ['progressed 4 steps token=\"demo-1\"']" in out
    assert "warning:" not in out


def test_agent_host_routes_each_tasks_question_to_its_own_conversation() -> None:
    out = run_example("agent_host.py")
    assert "[alice] asked: Confirm: deploy to prod? -> yes" in out
    assert "[bob] asked: Confirm: wipe the cache? -> no" in out
    assert "[model] asked to complete: 'release notes'" in out
    assert "deploy: completed -> confirmed=True action=accept" in out
    assert "wipe: completed -> confirmed=False action=decline" in out
    assert "digest: completed -> model host-model-1 said: RELEASE NOTES" in out


def test_the_demo_speaks_2026_07_28_with_the_same_code() -> None:
    out = run_example("demo.py", "--generation", "2026-07-28", peer="fastmcp4")
    assert "discovered fastmcp-tasks-peer, versions ['2026-07-28']" in out
    assert "server tasks extension: True" in out
    assert "plain call: greet -> ['Hello, demo!']" in out
    assert "task started:" in out
    # 2026-07-28 sends no progress for tasks (E C43): the server's progress is its status
    # message, shown with the time it was set; no progress event is made up
    assert 'working: "step 4/4" (set ' in out
    assert "progress 1/4" not in out
    assert "outcome: completed -> ['progressed 4 steps']" in out


def test_the_agent_host_routes_2026_07_28_questions_by_task_id() -> None:
    out = run_example("agent_host.py", "--generation", "2026-07-28", peer="fastmcp4")
    assert "[alice] asked: Delete prod.db? -> yes" in out
    assert "[bob] asked: Delete cache? -> no" in out
    assert "[carol] asked: Your name? -> carol" in out
    assert "deploy: completed -> deleted prod.db" in out
    assert "wipe: completed -> kept cache (decline)" in out
    assert "greet: completed -> Hello, carol!" in out


def test_resume_example_survives_a_killed_waiter() -> None:
    out = run_example("resume_journal.py")
    assert "killing it (SIGKILL)" in out
    assert ", open" in out
    assert "completed -> ['echo (task): survived a crash']" in out


def test_resume_example_in_2026_07_28() -> None:
    out = run_example("resume_journal.py", "--generation", "2026-07-28", peer="fastmcp4")
    assert "completed -> ['computed after a crash in 3.0s']" in out
