"""The suite's own selection (tests/conftest.py): a peer test over stdio runs on one loop,
chosen per test, every other test on both; ``MCP_TASKS_FULL_MATRIX=1`` runs them all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
MODULE = "tests/test_tasks_peers.py"  # peer tests over http, lean and stdio, on both loops


def collected(full: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_TASKS_FULL_MATRIX"}
    if full:
        env["MCP_TASKS_FULL_MATRIX"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
         "-p", "no:xdist", MODULE],
        capture_output=True, text=True, cwd=HERE.parent, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if line.startswith(MODULE)]


def loops_by_case(ids: list[str]) -> dict[str, set[str]]:
    """Each test id without its loop -> the loops it runs on."""
    loops: dict[str, set[str]] = defaultdict(set)
    for test_id in ids:
        found = re.search(r"\b(trio|asyncio)-?", test_id)
        assert found, test_id
        loops[test_id.replace(found.group(0), "", 1)].add(found.group(1))
    return loops


def over_stdio(case: str) -> bool:
    """A peer test over stdio, not a test of stdio itself (its name would say so)."""
    name, _, params = case.partition("[")
    return "stdio" in params and "stdio" not in name


def test_a_stdio_peer_test_runs_on_one_loop_and_each_loop_gets_some() -> None:
    default = loops_by_case(collected(full=False))
    stdio = {case: loops for case, loops in default.items() if over_stdio(case)}
    others = {case: loops for case, loops in default.items() if not over_stdio(case)}
    assert stdio
    assert others
    assert all(len(loops) == 1 for loops in stdio.values())
    assert all(loops == {"trio", "asyncio"} for loops in others.values())
    per_loop = [sum(loop in loops for loops in stdio.values()) for loop in ("trio", "asyncio")]
    assert min(per_loop) >= len(stdio) // 4, per_loop  # both loops run a share of them

    full = loops_by_case(collected(full=True))
    assert set(full) == set(default)
    assert all(loops == {"trio", "asyncio"} for loops in full.values())
