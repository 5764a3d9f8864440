"""``explore`` (issue 35, item 1): stateful, shrinking conformance testing of a live server.

- The model (sans-I/O) judges each answer against what came before (rule ids cited).
- A fast smoke run on both generations against the scripted server, which keeps every rule:
  nothing broken; the state machine runs under pytest's own hands too.
- A seeded bug in the scripted server is found and shrunk to its minimal sequence; that
  sequence is pinned, and its replay fails on the broken server only.
- ``mcp-tasks explore`` writes a replay script that pytest runs and fails.
The long run against the bundled peers is ``nox -s explore``.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from mcp_tasks_client import Generation
from mcp_tasks_client.conformance import (
    ExploreBudget,
    explore,
    replay,
    server_machine,
)
from mcp_tasks_client.conformance._explore_model import TaskModel
from mcp_tasks_client.testing import FaultServer

REPO = Path(__file__).resolve().parent.parent
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
SAFE = {"echo": {"text": "hi"}}
SMALL = ExploreBudget(examples=6, steps=6, wall_time=60, request_timeout=10)
CLI = [sys.executable, "-m", "mcp_tasks_client.cli"]
T0 = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)


def at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


# -- the model --------------------------------------------------------------------------------


def test_the_model_judges_answers_across_the_session() -> None:
    model = TaskModel(G1)
    model.created("t1", "working", at(0), at(0))
    assert model.snapshot("t1", "completed", at(0), at(2)) == []
    moved = model.snapshot("t1", "working", at(1), at(1))
    assert [b.rule for b in moved] == ["V-09", "V-26", "V-26"]  # status, createdAt, back
    assert [b.rule for b in model.cancel_answered("t1", True, "completed", None)] == ["V-14"]
    assert model.cancel_answered("t1", True, None, -32602) == []
    assert [b.rule for b in model.cancel_answered("nope", False, "cancelled", None)] == ["V-14"]
    model.created("t2", "working", at(3), at(3))
    assert [b.rule for b in model.cancel_answered("t2", True, "working", None)] == ["V-15"]
    assert model.unlisted(["t1"]) == ["t2"]
    assert [b.rule for b in model.left_out("t2")] == ["V-19"]
    assert model.unlisted(["t1", "t2"]) == []
    model.get_refused("t2", -32602)  # gone (expired, deleted): no longer owed in a list
    assert model.unlisted(["t1"]) == []


def test_the_model_cites_each_generations_rule_or_none() -> None:
    """A rule a generation lacks is not judged there (2026-07-28's cancel is an ack, E C36)."""
    model = TaskModel(G2)
    model.created("t1", "working", at(0), at(0))
    assert [b.rule for b in model.get_refused("t1", -32602)] == ["E S5"]
    model.created("t2", "working", at(0), at(0))
    assert model.cancel_answered("t2", True, None, None) == []
    assert model.snapshot("t2", "input_required", at(0), at(1), {"q1": {"m": 1}}) == []
    again = model.snapshot("t2", "input_required", at(0), at(2), {"q1": {"m": 2}})
    assert [b.rule for b in again] == ["E S14"]
    model.snapshot("t2", "failed", at(0), at(3))
    assert [b.rule for b in model.snapshot("t2", "working", at(0), at(4))] == ["E S22"]


# -- against the scripted server ----------------------------------------------------------------


@contextmanager
def serving(server: FaultServer) -> Iterator[str]:
    """``server`` over HTTP on 127.0.0.1 in a thread of its own (the explorer's portals and
    hypothesis run in the test's thread); its URL."""
    ready: list[str] = []
    started, stop = threading.Event(), threading.Event()

    async def main() -> None:
        async with server.http() as http:
            ready.append(http.url)
            started.set()
            while not stop.is_set():
                await anyio.sleep(0.05)

    thread = threading.Thread(target=anyio.run, args=(main,), kwargs={"backend": "trio"})
    thread.start()
    try:
        assert started.wait(30)
        yield ready[0]
    finally:
        stop.set()
        thread.join(30)


def run(fn: Callable[[], Any]) -> Any:
    return anyio.run(lambda: anyio.to_thread.run_sync(fn), backend="trio")


@pytest.mark.parametrize("generation", [G1, G2], ids=lambda g: g.value)
def test_a_server_that_keeps_the_rules_passes_a_smoke_run(generation: Generation) -> None:
    with serving(FaultServer(generation)) as url:
        report = anyio.run(
            lambda: explore(url, generation, safe_tools=SAFE, budget=SMALL), backend="trio"
        )
    assert report.ok, report.to_json()
    assert report.examples >= SMALL.examples
    assert report.steps == ()


def test_the_wall_time_stops_new_examples() -> None:
    """Past ``wall_time`` no new sequence starts: a budget of 1,000 examples and 1 s ends
    with far fewer, and nothing broken."""
    budget = ExploreBudget(examples=1000, steps=5, wall_time=1, request_timeout=10)
    with serving(FaultServer(G1)) as url:
        report = anyio.run(lambda: explore(url, G1, safe_tools=SAFE, budget=budget), backend="trio")
    assert report.ok
    assert 1 <= report.examples < 1000


def test_the_state_machine_runs_under_pytest() -> None:
    """``server_machine(url, generation).TestCase`` is what pytest collects; run here by
    hypothesis's own runner against a read-only session (no safe tool: nothing started)."""
    with serving(FaultServer(G1)) as url:
        machine = server_machine(url, G1, budget=SMALL)
        quick = settings(
            max_examples=3,
            stateful_step_count=4,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        run_state_machine_as_test(machine, settings=quick)
        assert hasattr(machine, "TestCase")


# The seeded bugs and the minimal sequences explore shrinks them to (pinned): a 2025-11-25
# server whose tasks/list leaves the newest task out (V-19), a 2026-07-28 one whose first
# tasks/get of a task answers -32602 (E S5).
START = ["start", {"tool": "echo", "arguments": {"text": "hi"}, "ttl_ms": None}]
SEEDED = [
    pytest.param(G1, "V-19", [START, ["list", {}]], id="V-19"),
    pytest.param(G2, "E S5", [START, ["poll", {"task": 0, "unknown": False}]], id="E S5"),
]


@pytest.mark.parametrize(("generation", "broken", "minimal"), SEEDED)
def test_a_seeded_bug_is_found_and_shrunk_to_its_minimal_sequence(
    generation: Generation, broken: str, minimal: list[Any]
) -> None:
    budget = ExploreBudget(examples=30, steps=6, wall_time=120, request_timeout=10)
    with serving(FaultServer(generation, breaks={broken})) as url:
        report = anyio.run(
            lambda: explore(url, generation, safe_tools=SAFE, budget=budget), backend="trio"
        )
    assert report.rule_ids == (broken,), report.to_json()
    assert [[n, a] for n, a in report.steps] == minimal


@pytest.mark.parametrize(("generation", "broken", "minimal"), SEEDED)
def test_the_pinned_sequence_replays_the_bug_and_only_the_bug(
    generation: Generation, broken: str, minimal: list[Any]
) -> None:
    """The shrunk sequence, pinned: its replay breaks the rule on the seeded server and
    nothing on the one that keeps the rules."""
    with serving(FaultServer(generation, breaks={broken})) as url:
        found = run(lambda: replay(url, generation, minimal, safe_tools=SAFE))
    assert [b.rule for b in found] == [broken]
    with serving(FaultServer(generation)) as url:
        assert run(lambda: replay(url, generation, minimal, safe_tools=SAFE)) == []


def test_the_command_writes_a_replay_script_pytest_fails(tmp_path: Path) -> None:
    script = tmp_path / "test_replay_v19.py"
    with serving(FaultServer(G1, breaks={"V-19"})) as url:
        args = ["--safe-tool", 'echo={"text": "hi"}', "--examples", "30", "--steps", "6"]
        ran = subprocess.run(
            [*CLI, "--url", url, "explore", *args, "--replay-file", str(script)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert ran.returncode == 1, ran.stderr
        line = json.loads(ran.stdout)
        assert line["event"] == "explore"
        assert [b["rule"] for b in line["broken"]] == ["V-19"]
        assert line["steps"] == [START, ["list", {}]]
        replayed = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            check=False,
        )
    assert replayed.returncode == 1, replayed.stdout
    assert "V-19" in replayed.stdout


def test_explore_needs_a_url() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "mcp_tasks_client.cli", "--stdio", "true", "explore"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 2
    assert "explore needs --url" in ran.stderr
