"""``bench.py --only sustained`` (issue 25, item 4): the highest poll rate one process sustains.

For each generation (2025-11-25 against ``server.py``, 2026-07-28 against ``server2026.py``),
each transport (HttpTransport, LeanHttpTransport) and 1,000, 10,000 and 100,000 tracked tasks:
the highest rate N / I (N tasks, each polled every I: the server's pollInterval, no backoff,
no jitter) at which a Poller in one process keeps

- lateness (a poll's start minus its due time) p99 under 10 % of I, and
- the polls started in the window at 95 % of N / I or more.

Each probe is one row process (``rows.py lib-sustained``, ``rows2026.py lib sustained``)
against a bench server of its own (a fresh one per probe: the seeded tasks of one probe do
not pile up in the next one's server). With 2 cores or more, the row is pinned to one CPU and
the server to another (``os.sched_setaffinity``); with one, neither is.

The search, per cell: a probe at a start rate (1,000 polls/s for the first N of a transport,
the previous N's result for the next ones), then doubling (or halving) until a probe passes
and one fails, then ``steps`` geometric bisections between the two: the result is within a
factor 2 ** (1 / 2 ** steps) of the true limit (2 steps: 19 %). A probe that fails or does
not finish within its time limit counts as failed, and the table says why.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench import _server  # noqa: E402 - beside this script

COUNTS = (1_000, 10_000, 100_000)
START_RATE = 1000.0
"""The first probe's polls per second, for the first N of a transport."""
LATE_SHARE = 0.1
"""Lateness p99 must stay under this share of the interval."""
RATE_SHARE = 0.95
"""The polls started in the window must reach this share of N / I."""
GENERATIONS = {
    "2025-11-25": ("server.py", [str(HERE / "rows.py"), "lib-sustained"]),
    "2026-07-28": ("server2026.py", [str(HERE / "rows2026.py"), "lib", "sustained"]),
}

Probe = Callable[[float], tuple[bool, dict[str, Any]]]


def verdict(result: dict[str, Any]) -> str:
    """Why a probe failed ("" when it passed): lateness, rate, or what stopped it."""
    if "error" in result:
        return str(result["error"])
    why = []
    if result.get("overran"):
        why.append("setup overran the lead")
    p99 = result.get("p99_ms")
    if p99 is None or p99 >= LATE_SHARE * result["interval_ms"]:
        why.append("lateness")
    if result["polls_per_s"] < RATE_SHARE * result["target_per_s"]:
        why.append("rate")
    return " and ".join(why)


def search(
    probe: Probe, start: float, *, steps: int, lowest: float, highest: float, budget: int
) -> dict[str, Any]:
    """The highest rate that passes: doubling (or halving) from ``start`` within
    [``lowest``, ``highest``] until a pass and a fail bracket it, then ``steps`` geometric
    bisections; at most ``budget`` probes. ``passed`` / ``failed``: the bracket's probes
    (rate, result; None when the search never found one), ``probes`` how many ran,
    ``stopped``: why no rate above ``passed`` was tried when none failed (the budget, or
    ``highest``)."""
    tried: list[tuple[float, bool, dict[str, Any]]] = []

    def run(rate: float) -> bool:
        ok, result = probe(rate)
        tried.append((rate, ok, result))
        return ok

    passed: float | None = None
    failed: float | None = None
    rate = min(max(start, lowest), highest)
    if run(rate):
        passed = rate
        while len(tried) < budget and rate * 2 <= highest:
            rate *= 2
            if not run(rate):
                failed = rate
                break
            passed = rate
    else:
        failed = rate
        while len(tried) < budget and rate / 2 >= lowest:
            rate /= 2
            if run(rate):
                passed = rate
                break
            failed = rate
    for _ in range(steps):
        if passed is None or failed is None or len(tried) >= budget:
            break
        middle = math.sqrt(passed * failed)
        if run(middle):
            passed = middle
        else:
            failed = middle
    results = {rate: result for rate, _, result in tried}
    return {
        "passed": None if passed is None else (passed, results[passed]),
        "failed": None if failed is None else (failed, results[failed]),
        "probes": len(tried),
        "stopped": "budget" if len(tried) >= budget else "highest",
    }


def cores() -> tuple[int, int] | None:
    """(the rows' CPU, the server's CPU), or None when fewer than 2 are ours to pin."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return None
    mine = sorted(getter(0))
    return (mine[0], mine[1]) if len(mine) >= 2 else None


def _probe(
    generation: str,
    transport: str,
    backend: str,
    count: int,
    seconds: float,
    ramp: float,
    pinned: tuple[int, int] | None,
) -> Probe:
    script, row = GENERATIONS[generation]

    def probe(rate: float) -> tuple[bool, dict[str, Any]]:
        interval = max(1, round(count * 1000 / rate))
        args = [*row, "--count", str(count), "--interval", str(interval)]
        args += ["--seconds", str(seconds), "--ramp", str(ramp)]
        args += ["--transport", transport, "--backend", backend]
        if pinned is not None:
            args += ["--core", str(pinned[0])]
        # A bound on the probe, not a measurement: start-up, seeding, the lead (50 µs a task),
        # the window, the teardown, ten times over.
        limit = 60 + 10 * (count * 60e-6 + ramp + seconds)
        with _server(script, core=None if pinned is None else pinned[1]) as base:
            try:
                done = subprocess.run(
                    [sys.executable, *args, "--url", f"{base}/mcp"],
                    capture_output=True,
                    text=True,
                    timeout=limit,
                    cwd=REPO,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return False, {"error": f"timed out after {limit:.0f} s", "interval_ms": interval}
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            return False, {"error": f"failed: {tail[0][:200]}", "interval_ms": interval}
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return not verdict(result), result

    return probe


def run(
    say: Any,
    *,
    tiny: bool = False,
    seconds: float = 3.0,
    steps: int = 2,
    loops: tuple[str, ...] = ("asyncio",),
    transports: tuple[str, ...] = ("http", "lean"),
) -> None:
    """The section's tables, one per generation, printed through ``say``. ``tiny`` (the
    test's): 100 tasks, a 0.2 s window, one probe a cell: checks that every cell runs,
    measures nothing. ``transports``: ``http`` (``HttpTransport(url)``, the default) and
    ``lean`` (``LeanHttpTransport``), or one of them."""
    counts: tuple[int, ...] = (100,) if tiny else COUNTS
    budget, ramp = (1, 0.1) if tiny else (4 + steps + 1, 0.5)
    first = 200.0 if tiny else START_RATE
    if tiny:
        seconds, steps = 0.2, 0
    pinned = cores()
    where = (
        f"the rows pinned to CPU {pinned[0]}, the server to CPU {pinned[1]}"
        if pinned is not None
        else "not pinned (fewer than 2 CPUs to pin to)"
    )
    started = time.perf_counter()
    say(
        "**Sustained throughput** (issue 25, item 4): the highest poll rate N / I one process "
        "sustains, N tasks tracked by one Poller (one `as_completed`), each polled every I (the "
        "server's pollInterval; `PollPolicy(floor=0, backoff=1.0, jitter=0)`, the default "
        "`max_in_flight`), the tasks never ending, their first polls spread evenly over one "
        f"interval; {where}. A probe passes when, over a {seconds:g} s window (after the "
        f"tracking and {ramp:g} s of polling), the lateness of the polls due in it (a poll's "
        "start minus its due time; one not started by the window's end: late until the end) "
        f"has p99 < {LATE_SHARE:.0%} of I and the polls started reach {RATE_SHARE:.0%} of N / I. "
        f"Search per row: from {first:,.0f} polls/s (the next N: the previous N's result), "
        f"doubling or halving to a pass and a fail, then {steps} geometric bisections (within "
        f"{2 ** (1 / 2**steps) - 1:.0%} of the limit), at most {budget} probes; each probe its "
        f"own row process and bench server; {', '.join(loops)}. CPU: share of the window's wall "
        "time (100 %: the core is full). Limited by: why the next rate tried failed, and what "
        "that probe saw."
    )
    say("")
    for generation in GENERATIONS:
        say(f"{generation}:")
        say("")
        say(
            "| transport | loop | tasks | highest sustained polls/s | interval "
            "| lateness p50 / p99 ms | round trip p50 ms | client CPU | server CPU "
            "| limited by (the next rate tried) | probes |"
        )
        say("|---|---|---|---|---|---|---|---|---|---|---|")
        for transport in transports:
            name = "HttpTransport" if transport == "http" else "LeanHttpTransport"
            for loop in loops:
                start = first
                for count in counts:
                    probe = _probe(generation, transport, loop, count, seconds, ramp, pinned)
                    found = search(
                        probe,
                        start,
                        steps=steps,
                        # an interval of at most 3,000 s (the policy caps one past
                        # max_server_interval, an hour), at least 1 ms
                        lowest=max(10.0, count / 3000),
                        highest=count * 1000.0,
                        budget=budget,
                    )
                    say(_line(name, loop, count, found))
                    if found["passed"] is not None:
                        start = found["passed"][0]
        say("")
    say(f"The sustained section took {time.perf_counter() - started:.0f} s.")
    say("")


def _line(transport: str, loop: str, count: int, found: dict[str, Any]) -> str:
    head = f"| {transport} | {loop} | {count:,} "
    if found["failed"] is None and found["stopped"] == "budget":
        probes = found["probes"]
        limit = f"not reached in {probes} probe{'' if probes == 1 else 's'}"
    elif found["failed"] is None:
        limit = "not reached at an interval of 1 ms (the search's highest rate)"
    else:
        rate, result = found["failed"]
        limit = f"{verdict(result)} at {rate:,.0f}/s"
        if "error" not in result:  # what that probe saw: was the core full, the trips long?
            seen = f"achieved {result['polls_per_s']:,.0f}, CPU {result['cpu_share']:.0%}"
            if "p99_ms" in result:
                seen += f", lateness p99 {result['p99_ms']:.1f} ms"
            if "rtt_p50_ms" in result:
                seen += f", round trip p50 {result['rtt_p50_ms']:.1f} ms"
            if result.get("connections"):
                seen += f", {result['connections']} TCP connections"
            if result.get("full_gc"):
                seen += f", {result['full_gc']} full collections"
            limit += f" ({seen})"
    if found["passed"] is None:
        return f"{head}| none passed | - | - | - | - | - | {limit} | {found['probes']} |"
    _, r = found["passed"]
    server = f"{r['server_cpu_share']:.0%}" if "server_cpu_share" in r else "-"
    trip = f"{r['rtt_p50_ms']:.1f}" if "rtt_p50_ms" in r else "-"
    return (
        f"{head}| {r['target_per_s']:,.0f} (achieved {r['polls_per_s']:,.0f}) "
        f"| {r['interval_ms']:,} ms | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} | {trip} "
        f"| {r['cpu_share']:.0%} | {server} | {limit} | {found['probes']} |"
    )
