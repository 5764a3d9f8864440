"""``benchmarks/calls_per_poll.py`` runs and counts what it says (issue 25, items 2-3).

The script, in a process of its own with a few polls per case against ``benchmarks/server.py``
(which it starts on 127.0.0.1 and stops): every case prints its calls per poll, split by
layer, and the anyio cancel scopes made per poll. Counts, never durations. One count is a
promise of the change it measures: a ``tasks/get`` on the lean transport makes one cancel
scope (the exchange's, carrying the request's deadline), not two, on both loops.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "benchmarks" / "calls_per_poll.py"
POLLS = 30


def run(*args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--polls", str(POLLS), "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,  # a bound on the process, not a measurement
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_every_case_counts_its_polls_by_layer() -> None:
    cases = run(
        *("--transport", "floor", "--transport", "lean"),
        *("--backend", "asyncio", "--backend", "trio"),
        *("--mode", "get", "--mode", "poller"),
    )
    seen = {(c["transport"], c["backend"], c["mode"]) for c in cases}
    lean = {("lean", b, m) for b in ("asyncio", "trio") for m in ("get", "poller")}
    assert seen == {("floor", "asyncio", "get")} | lean
    for case in cases:
        assert case["polls"] == POLLS  # the poller's task completes at its POLLS-th poll
        # Every call is counted for one layer or split among its callers' (nothing lost).
        assert abs(sum(case["layers"].values()) - case["calls_per_poll"]) < 0.01
        if case["transport"] == "floor":
            assert case["cancel_scopes_per_poll"] == 0
            continue
        assert {"session", "transport", "codec"} <= set(case["layers"])
        if case["mode"] == "poller":
            assert "poller" in case["layers"]
        if case["mode"] == "get":
            # No cancel scope per request: the lean engine's common inline POST waits without
            # one, woken by its deadline or the transport's close (issue 39; it was one since
            # issue 25, two before).
            assert case["cancel_scopes_per_poll"] == 0
