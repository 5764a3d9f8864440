"""Docs that run: the examples, as the README tells a user to run them, against a real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
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
        cwd=REPO,  # the examples that run `python -m mcp_tasks_client.cli` find this checkout
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
    # terminal snapshot's carried-over message shown as what it is (not "completed - step 4").
    # A watcher that falls behind sees the latest snapshot and progress (folded), so under
    # load only the last step is certain to be shown.
    assert "progress 4/4: step 4/4 (received " in out
    assert re.search(r'working: "step [1-4]/4" \(set ', out)
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


def test_a_script_polls_a_long_running_tool_through_the_cli() -> None:
    args = '{"seconds": 1, "label": "report"}'
    out = run_example("cli_polling.py", "--args", args, "--every", "0.3", peer="fastmcp4")
    assert "[1] started " in out
    assert "[1] status working" in out
    assert "[1] outcome completed: computed report in 1.0s" in out
    assert "[2] started " in out
    assert "[2] result: computed report in 1.0s (exit code 0: completed)" in out


def test_trio_many_takes_each_outcome_as_it_comes() -> None:
    out = run_example("trio_many.py", "--tasks", "8")
    assert "8 tasks started" in out
    for index in range(8):
        assert re.search(rf"\] job {index} \([\d.]+s\): echo \(task\): job {index}$", out, re.M)
    assert re.search(r"^all 8 done; \d+ tasks/get for 8 tasks$", out, re.M)


def test_the_asyncio_host_binds_each_tasks_handler_before_it_can_ask() -> None:
    out = run_example("asyncio_host.py")
    assert "[alice] asked 'Immediate: ok?' -> yes" in out
    assert "[bob] asked 'Confirm: drop the table?' -> no" in out
    assert "[carol] asked 'Confirm: ship v2?' -> yes" in out
    assert "alice: task done -> immediate confirmed=true action=accept" in out
    assert "bob: task done -> confirmed=False action=decline" in out
    assert "carol: task done -> confirmed=True action=accept" in out


def test_the_property_example_says_it_needs_the_testing_extra() -> None:
    """Without hypothesis (the `testing` extra), it names the extra and exits 2: no traceback."""
    without = (
        "import runpy, sys; sys.modules['hypothesis'] = None; "
        "runpy.run_path(sys.argv[1], run_name='__main__')"
    )
    example = str(REPO / "examples" / "conformance_property.py")
    run = subprocess.run(
        [sys.executable, "-c", without, example],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert "needs the `testing` extra" in run.stderr
    assert "pip install -e '.[testing]'" in run.stderr
    assert "Traceback" not in run.stderr


def _spans_and_summary(out: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return lines[:-1], lines[-1]


def test_the_tracing_example_prints_one_trace_for_its_task() -> None:
    for generation, peer in (("2025-11-25", "mcp1"), ("2026-07-28", "fastmcp4")):
        out = run_example("tracing_console.py", "--generation", generation, peer=peer)
        spans, summary = _spans_and_summary(out)
        assert summary["outcome"] == "Completed"
        trace_id = "0x" + summary["trace_id"]
        (task,) = [s for s in spans if s["name"] == "mcp_tasks.task"]
        (turn,) = [s for s in spans if s["name"] == "agent.turn"]
        assert task["parent_id"] == turn["context"]["span_id"]
        mine = [s for s in spans if s["context"]["trace_id"] == trace_id]
        calls = [s for s in mine if s["name"].startswith(("tools/call", "tasks/"))]
        assert any(s["name"].startswith("tools/call") for s in calls)
        for span in calls:
            assert span["parent_id"] == task["context"]["span_id"], span["name"]
            assert span["kind"] == "SpanKind.CLIENT"


@pytest.mark.parametrize(
    ("args", "peer", "answered"),
    [
        ((), "mcp1", "confirm: confirmed=True action=accept"),
        (("--generation", "2026-07-28"), "fastmcp4", "confirm_delete: deleted prod.db"),
    ],
    ids=["2025-11-25", "2026-07-28"],
)
def test_the_sync_script_needs_no_async_code(
    args: tuple[str, ...], peer: str, answered: str
) -> None:
    """examples/sync_script.py: a plain script; its question answered by a plain function in
    a worker thread, a watch as an iterator, two tasks waited on at once, the loop's thread
    gone at the end."""
    out = run_example("sync_script.py", *args, peer=peer)
    assert "(a worker thread) -> yes" in out
    assert "  status: completed" in out
    assert answered in out
    assert out.count("job ") == 2
    assert "event loop stopped: True" in out
