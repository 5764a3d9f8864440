"""The timed burst (issue 39): 200 tasks at once judged by the wall time a host feels.

``bench.py --only timed`` (also part of ``--only burst`` and of the default run): printed
right after the count-based burst table. The two bursts read different things:

- **the count-based burst** (``rows.py *-burst``, ``rows2026.py * burst``): each task
  completes at its 20th ``tasks/get``, polled back to back. The client is the bottleneck by
  construction, so its wall time is its CPU time: that row judges **CPU per task**;
- **the timed burst** (this one; ``rows.py *-timed``, ``rows2026.py * timed``): each task
  ends ``TIMED_AFTER_MS`` (2 s) after it was made, by the server's clock, and the server asks
  for a pollInterval of 2 ms, so a client polls as fast as it can (or as its policy lets it).
  The wall time is then how soon the host learns of every outcome: this row judges **wall
  time** (issue 39's target: the default within 1.25x the wire floor's), with CPU and
  ``tasks/get`` per task beside it. It is the scenario of the independent benchmark the issue
  cites (there against the official SDK's server).

Rows, both generations (``server.py`` and ``server2026.py``, one process each), rounds
interleaved across every row of both (row A, B, C, A, B, C...):

- the wire floor (HTTP/1.1 by hand on asyncio streams, at most 100 connections), a coroutine
  per task sleeping the interval the server gave between its polls;
- the bare httpx loop (the same, on one ``httpx.AsyncClient``, pool 100), both loops;
- this library's default, ``HttpTransport(url)`` and one ``Poller(client).wait_all`` with
  the default PollPolicy, both loops. The policy's ``floor`` (50 ms) is above the server's
  2 ms, so each task is polled every 50-55 ms (the floor, and the jitter's +10 %, held above
  the floor): the default polls about 1/25 as often as the floor and learns each outcome up
  to ~55 ms (plus a round trip) after it happened;
- the same with ``PollPolicy(floor=0)``: the server's 2 ms honoured as it is (the jitter
  kept), so the library polls as fast as the floors do: what the default's floor is worth;
- the same on the httpx engine (``HttpTransport(url, engine="httpx")``), both loops.

The tasks are made one after another (``tools/call``), then followed; wall time runs from
the first ``tools/call`` to the moment every outcome is known (2025-11-25: each result
fetched with ``tasks/result``; 2026-07-28: the result is inline), CPU over the same span.
``lag``: from the instant the last task ended (the server reports it; one monotonic clock for
both processes) to that moment.
"""

from __future__ import annotations

import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench2026  # noqa: E402 - beside this script
from bench import _peer_python, _row, _server  # noqa: E402

TASKS = 200
AFTER_MS = 2000
INTERVAL_MS = 2
FLOOR = "HTTP/1.1 by hand on asyncio streams (the wire floor)"
LOOPS = ("asyncio", "trio")
GENERATIONS = ("2025-11-25", "2026-07-28")
SDK = "2025-11-25, against the official Python SDK's server (mcp==1.30.0)"


@contextmanager
def mcp1_server(python: Path) -> Iterator[str]:
    """``mcp1_server.py`` (the SDK's server) run by ``python`` (the mcp 1.30 venv's) on a free
    port of 127.0.0.1, stopped by its pid at the end; its base URL once it accepts
    connections (within 30 s, or a RuntimeError)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [str(python), str(HERE / "mcp1_server.py"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > until:
                    raise RuntimeError(
                        f"mcp1_server.py did not listen (exit code {process.poll()})"
                    ) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def rows(loops: tuple[str, ...], tiny: bool = False) -> dict[str, dict[str, list[str]]]:
    """Per generation, each row's name and its arguments (the script's row or client and
    scenario, before the sizes). ``tiny`` leaves out the ``PollPolicy(floor=0)`` rows (the
    tests run that row on its own)."""
    out: dict[str, dict[str, list[str]]] = {g: {} for g in GENERATIONS}
    old, new = out["2025-11-25"], out["2026-07-28"]
    old[FLOOR] = ["floor-timed"]
    new[FLOOR] = ["floor", "timed"]
    for backend in loops:
        b = ["--backend", backend]
        old[f"bare httpx loop ({backend})"] = ["httpx-timed", *b]
        new[f"bare httpx loop ({backend})"] = ["httpx", "timed", *b]
    for backend in loops:
        b = ["--backend", backend]
        name = f"this library, `HttpTransport(url)`, `Poller.wait_all`, defaults ({backend})"
        old[name] = ["lib-timed", *b]
        new[name] = ["lib", "timed", *b]
    for backend in loops[:0] if tiny else loops:  # what the default's 50 ms floor is worth
        b = ["--backend", backend, "--floor", "0"]
        name = f"this library, `HttpTransport(url)`, `PollPolicy(floor=0)` ({backend})"
        old[name] = ["lib-timed", *b]
        new[name] = ["lib", "timed", *b]
    for backend in loops:
        b = ["--backend", backend, "--transport", "httpx"]
        name = f"this library, httpx engine, `Poller.wait_all`, defaults ({backend})"
        old[name] = ["lib-timed", *b]
        new[name] = ["lib", "timed", *b]
    return out


def run(rounds: int, tiny: bool, say: Any) -> None:
    """Both generations' timed-burst tables, printed through ``say``. ``tiny`` (the test's):
    3 tasks ending after 200 ms, asyncio rows only, to check the rows and the tables run."""
    me = sys.executable
    tasks, after, loops = (3, 200, LOOPS[:1]) if tiny else (TASKS, AFTER_MS, LOOPS)
    sizes = ["--tasks", str(tasks), "--after", str(after), "--interval", str(INTERVAL_MS)]
    plan = rows(loops, tiny)
    # The SDK's server (asyncio rows, as the independent benchmark ran): left out with --tiny
    # (its rows have a test of their own) or when the mcp 1.30 venv is not installed.
    peer = None if tiny else _peer_python()
    if peer is not None:
        plan[SDK] = {n: a for n, a in plan["2025-11-25"].items() if "(trio)" not in n}
    results: dict[str, dict[str, list[dict[str, Any]]]] = {
        g: {name: [] for name in plan[g]} for g in plan
    }
    with contextlib.ExitStack() as servers:
        old = servers.enter_context(_server())
        new = servers.enter_context(bench2026.server())
        sdk = servers.enter_context(mcp1_server(peer)) if peer is not None else ""
        for _ in range(rounds):
            for name, args in plan["2025-11-25"].items():
                results["2025-11-25"][name].append(_row(me, old, [*args, *sizes]))
            for name, args in plan["2026-07-28"].items():
                results["2026-07-28"][name].append(bench2026.row(me, new, [*args, *sizes]))
            for name, args in plan.get(SDK, {}).items():
                results[SDK][name].append(_row(me, sdk, [*args, *sizes]))
    say(
        f"**The timed burst** (issue 39: what a host feels): {tasks} tasks made one after "
        f"another, each ending {after / 1000:g} s after it was made (by the server's clock), the "
        f"server asking for a pollInterval of {INTERVAL_MS} ms, so a client polls as fast as it "
        "can; the floors and the bare httpx loops sleep the interval the server gave, this "
        "library waits them all with `Poller.wait_all` and the default PollPolicy (its 50 ms "
        "floor is above the server's 2 ms: each task polled every 50-55 ms; the "
        "`PollPolicy(floor=0)` rows honour the 2 ms as the floors do). Wall: from the "
        "first `tools/call` to every outcome known (2025-11-25 with its `tasks/result`; "
        "2026-07-28 inline); CPU over the same span. Lag: from the instant the last task ended "
        "to that moment. This table judges wall time (the target: the default <= 1.25x the "
        "floor's); the count-based burst above judges CPU per task. Median of "
        f"{rounds} rounds, rows interleaved across both generations"
        + (
            "; then the 2025-11-25 asyncio rows against the official Python SDK's server "
            "(`mcp1_server.py`: mcp==1.30.0's lowlevel `Server` and in-memory task store, JSON "
            "answers, each task's pollInterval set to 2 ms), interleaved with them, as the "
            "independent benchmark ran"
            if peer is not None
            else ("" if tiny else "; the SDK server's rows not run: the mcp 1.30 venv is missing")
        )
        + ":"
    )
    say("")
    for generation in results:
        table = results[generation]
        floor_wall = _median(table[FLOOR], "wall_s")
        floor_cpu = _median(table[FLOOR], "cpu_ms_per_task")
        say(f"{generation}:")
        say("")
        say(
            "| client | CPU ms per task | `tasks/get` per task | wall s | wall vs the floor "
            "| CPU per task vs the floor | lag after the last end ms | made in s "
            "| `FallingBehind` | rounds (wall s) |"
        )
        say("|---|---|---|---|---|---|---|---|---|---|")
        for name, samples in table.items():
            wall = _median(samples, "wall_s")
            cpu = _median(samples, "cpu_ms_per_task")
            gets = statistics.median(s["polls"] / s["tasks"] for s in samples)
            behind = "/".join(str(s["falling_behind"]) for s in samples if "falling_behind" in s)
            spread = " / ".join(f"{s['wall_s']:.2f}" for s in samples)
            say(
                f"| {name} | {cpu:.2f} | {gets:.1f} | {wall:.2f} | {wall / floor_wall:.2f}x "
                f"| {cpu / floor_cpu:.2f}x | {_median(samples, 'lag_ms'):.0f} "
                f"| {_median(samples, 'make_s'):.2f} | {behind or '-'} | {spread} |"
            )
        say("")


def _median(samples: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(s[key]) for s in samples)
