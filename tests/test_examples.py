"""Docs that run: the README's demo command runs examples/demo.py against a real server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import require_peer

REPO = Path(__file__).resolve().parent.parent


def test_demo_starts_a_task_on_a_real_server_and_prints_its_outcome() -> None:
    require_peer("mcp1")
    run = subprocess.run(
        [sys.executable, str(REPO / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "protocol 2025-11-25" in out
    assert "need_task    taskSupport=required" in out
    assert "plain call: plain_echo -> ['echo: hello from the demo']" in out
    assert "task started:" in out
    assert "outcome: completed -> ['echo (task): rendered scene 3']" in out


def test_agent_host_routes_each_tasks_question_to_its_own_conversation() -> None:
    require_peer("mcp1")
    run = subprocess.run(
        [sys.executable, str(REPO / "examples" / "agent_host.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "[alice] asked: Confirm: deploy to prod? -> yes" in out
    assert "[bob] asked: Confirm: wipe the cache? -> no" in out
    assert "[model] asked to complete: 'release notes'" in out
    assert "deploy: completed -> confirmed=True action=accept" in out
    assert "wipe: completed -> confirmed=False action=decline" in out
    assert "digest: completed -> model host-model-1 said: RELEASE NOTES" in out
