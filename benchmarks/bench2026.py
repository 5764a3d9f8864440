"""``nox -s bench``'s 2026-07-28 section (issue 25): ``bench.py --only gen2``, part of the
default run; its tables print after the 2025-11-25 ones.

The 2026-07-28 bench server (``server2026.py``) runs in its own process; every row is
``rows2026.py CLIENT SCENARIO`` in a process of its own, rounds interleaved as ``bench.py``
does (row A, B, C, A, B, C...); a figure is the median of its rounds. The fastmcp 4 rows run
with the python of ``<peers root>/venv-fastmcp4``, the ext-tasks rows with node and
``<peers root>/npm-ext-tasks``; a row whose peer is not installed is left out and the table
says so. ``tiny`` (``bench.py --tiny``, the test's) shrinks every count to check the rows
run, not to measure.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench.py, beside this script
from bench import _server, _stats  # the 2025-11-25 section's helpers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

Rows = dict[str, tuple[str, list[str]]]


def _peers() -> Path:
    return Path(os.environ.get("MCP_TASKS_PEERS_DIR", REPO / ".peers"))


def fastmcp_python() -> Path | None:
    """The fastmcp 4 venv's python (``tests/peers/install.py`` makes it), or None."""
    for candidate in ("bin/python", "Scripts/python.exe"):
        path = _peers() / "venv-fastmcp4" / candidate
        if path.exists():
            return path
    return None


def has_ext_tasks() -> bool:
    """node on PATH and ext-tasks 0.2.2's npm folder installed."""
    package = _peers() / "npm-ext-tasks" / "node_modules" / "@modelcontextprotocol" / "ext-tasks"
    return shutil.which("node") is not None and (package / "package.json").exists()


def server() -> Any:
    """The 2026-07-28 bench server (``server2026.py``) in its own process; its base URL."""
    return _server("server2026.py")


def row(python: str, base: str, args: list[str], warmup: int | None = None) -> dict[str, Any]:
    """One row's process; its JSON line, with what the server counted during it:
    ``connections``, ``methods`` (JSON-RPC requests by method), ``missing_headers``."""
    _stats(base, reset=True)
    env = dict(os.environ)
    if warmup is not None:
        env["EXT_WARMUP"] = str(warmup)
    done = subprocess.run(
        [python, str(HERE / "rows2026.py"), *args, "--url", f"{base}/mcp"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"row {args} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    stats = _stats(base)
    result["connections"] = stats["connections"]
    result["methods"] = stats["methods"]
    result["missing_headers"] = stats["missing_headers"]
    return result


def _rounds(
    base: str, rows: Rows, rounds: int, warmup: int | None
) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in rows}
    for _ in range(rounds):
        for name, (python, args) in rows.items():
            results[name].append(row(python, base, args, warmup))
    return results


def _median(samples: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(s[key]) for s in samples)


LOOPS = ("asyncio", "trio")


def _trips(sample: dict[str, Any]) -> int:
    """The task's round trips the server answered: tools/call, tasks/get, tasks/update."""
    methods = sample["methods"]
    return sum(int(methods.get(m, 0)) for m in ("tools/call", "tasks/get", "tasks/update"))


def _clients(
    me: str,
    scenario: str,
    extra: list[str],
    fastmcp: Path | None,
    ext: bool,
    loops: tuple[str, ...] = LOOPS,
) -> Rows:
    """The rows of one scenario: the floors, this library (both transports, on ``loops``),
    and the peers that are installed."""
    rows: Rows = {
        "HTTP/1.1 by hand on asyncio streams (the wire floor)": (me, ["floor", scenario, *extra]),
    }
    for backend in loops:
        b = ["--backend", backend]
        rows[f"bare httpx loop ({backend})"] = (me, ["httpx", scenario, *b, *extra])
    for backend in loops:
        b = ["--backend", backend]
        rows[f"this library, HttpTransport ({backend})"] = (me, ["lib", scenario, *b, *extra])
        rows[f"this library, LeanHttpTransport ({backend})"] = (
            me,
            ["lib", scenario, *b, "--transport", "lean", *extra],
        )
    if fastmcp is not None:
        rows["fastmcp 4.1.4 client, fastmcp_tasks (asyncio)"] = (
            str(fastmcp),
            ["fastmcp", scenario, *extra],
        )
    if ext:
        rows["ext-tasks 0.2.2 on @modelcontextprotocol/client 2.4.0 (node)"] = (
            me,
            ["ext-tasks", scenario, *extra],
        )
    return rows


def _missing(fastmcp: Path | None, ext: bool) -> str:
    gone = [
        name
        for name, there in (("the fastmcp 4 rows", fastmcp is not None), ("ext-tasks", ext))
        if not there
    ]
    return "" if not gone else f"; not run: {' and '.join(gone)} (peer not installed)"


def _loop(name: str) -> str:
    return "trio" if "(trio)" in name else "asyncio"


def run(rounds: int, calls: int, full: bool, tiny: bool, say: Any) -> None:
    """Every table of the 2026-07-28 section, printed through ``say``."""
    me = sys.executable
    # --tiny (the suite's check of the tables) leaves the peers' rows to their own tests:
    # their interpreters' start-up was most of its two minutes.
    fastmcp = None if tiny else fastmcp_python()
    ext = False if tiny else has_ext_tasks()
    gone = "; the peers' rows are left out with --tiny" if tiny else _missing(fastmcp, ext)
    # --tiny runs asyncio alone: the test of each row runs it on both loops; this one checks
    # that the tables are put together.
    loops = LOOPS[:1] if tiny else LOOPS
    if tiny:
        calls, burst_tasks, burst_polls, short_tasks, input_tasks, keys = 5, 3, 2, 2, 1, 2
        latency_tasks, counts, warmup = 4, [200], 5
    else:
        burst_tasks, burst_polls, short_tasks, input_tasks, keys = 200, 20, 100, 20, 5
        latency_tasks, counts, warmup = 100, ([10_000, 100_000] if full else [10_000]), None
    wire_notes: dict[str, set[str]] = {}

    def note(results: dict[str, list[dict[str, Any]]]) -> None:
        for name, samples in results.items():
            for sample in samples:
                wire_notes.setdefault(name, set()).update(sample["missing_headers"])

    say("### 2026-07-28 (the `io.modelcontextprotocol/tasks` extension)")
    say("")
    say(
        "Against `server2026.py` (stateless; it refuses a request whose `_meta` or routing "
        "headers disagree with its body, and counts a routing header left out). ext-tasks "
        "runs over the smallest host `rawDispatch`, written over `fetch` in "
        "`ext_tasks_client.mjs`" + gone + "."
    )
    say("")
    with server() as base:
        # -- back-to-back polls
        results = _rounds(
            base, _clients(me, "seq", ["--calls", str(calls)], fastmcp, ext, loops), rounds, warmup
        )
        note(results)
        ref = {b: _median(results[f"bare httpx loop ({b})"], "cpu_us") for b in loops}
        say(
            f"**Per `tasks/get` round trip** (2026-07-28), sequential, one task, {calls} calls "
            f"after 50 warm-up (node: 1,000), median of {rounds} rounds; fastmcp: "
            "`ToolTask.status()`, ext-tasks: `session.task(id).snapshot()`; ratios to the bare "
            "httpx loop on the same loop (node and fastmcp: asyncio's):"
        )
        say("")
        say("| client | CPU µs per call | user µs | wall µs | CPU vs bare httpx loop | rounds |")
        say("|---|---|---|---|---|---|")
        for name, samples in results.items():
            cpu = _median(samples, "cpu_us")
            spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
            say(
                f"| {name} | {cpu:.0f} | {_median(samples, 'user_us'):.0f} "
                f"| {_median(samples, 'wall_us'):.0f} | {cpu / ref[_loop(name)]:.2f}x | {spread} |"
            )
        say("")
        # -- a burst
        burst = ["--tasks", str(burst_tasks), "--polls", str(burst_polls)]
        results = _rounds(base, _clients(me, "burst", burst, fastmcp, ext, loops), rounds, warmup)
        note(results)
        say(
            f"**{burst_tasks} tasks at once** (2026-07-28), each completing at `tasks/get` "
            f"number {burst_polls} (result inline), polled back to back (fastmcp sleeps "
            "20 ms between polls, ext-tasks 10 ms: their floors); the floors keep at most 100 "
            "connections; this library its defaults. The client is the bottleneck by "
            "construction, so the wall time follows the CPU: this burst judges CPU per task "
            "(the target: the default <= 3x the wire floor's); the timed burst (`bench.py "
            "--only timed`) judges wall time. Per task, then per poll: CPU and `tasks/get` per "
            "task, the burst's wall time, each against the floor's; TCP connections the server "
            f"accepted during the row; median of {rounds} rounds:"
        )
        say("")
        say(
            "| client | CPU µs per task | `tasks/get` per task | wall s "
            "| CPU per task / wall vs the floor | CPU µs per poll "
            "| vs sequential bare httpx loop (same loop) | polls | TCP connects "
            "| rounds (CPU µs per poll) |"
        )
        say("|---|---|---|---|---|---|---|---|---|---|")
        floor_name = "HTTP/1.1 by hand on asyncio streams (the wire floor)"
        floor_cpu = _median(results[floor_name], "task_cpu_us")
        floor_wall = _median(results[floor_name], "task_wall_us")
        for name, samples in results.items():
            cpu = _median(samples, "cpu_us")
            spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
            conns = "/".join(str(s["connections"]) for s in samples)
            polls = _median(samples, "polls")
            task_cpu = _median(samples, "task_cpu_us")
            walled = [s for s in samples if "task_wall_us" in s]
            task_wall = _median(walled, "task_wall_us") if walled else None
            wall = "-" if task_wall is None else f"{task_wall * burst_tasks / 1e6:.2f}"
            vs_wall = "-" if task_wall is None else f"{task_wall / floor_wall:.2f}x"
            say(
                f"| {name} | {task_cpu:.0f} | {polls / burst_tasks:.1f} "
                f"| {wall} | {task_cpu / floor_cpu:.2f}x / {vs_wall} | {cpu:.0f} "
                f"| {cpu / ref[_loop(name)]:.2f}x | {polls:.0f} | {conns} | {spread} |"
            )
        say("")
        # -- short tasks in sequence
        results = _rounds(
            base,
            _clients(me, "short", ["--tasks", str(short_tasks)], fastmcp, ext, loops),
            rounds,
            warmup,
        )
        note(results)
        say(
            f"**A sequence of short tasks** (2026-07-28): {short_tasks} tasks one after "
            'another, each started (`tools/call`, `resultType: "task"`) and followed to its '
            "inline result (it completes at its 2nd `tasks/get`); per task; round trips are "
            f"what the server answered for the tasks; median of {rounds} rounds:"
        )
        say("")
        say("| client | CPU µs per task | wall µs per task | round trips per task | rounds |")
        say("|---|---|---|---|---|")
        for name, samples in results.items():
            trips = statistics.median(_trips(s) / short_tasks for s in samples)
            spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
            say(
                f"| {name} | {_median(samples, 'cpu_us'):.0f} "
                f"| {_median(samples, 'wall_us'):.0f} | {trips:.2f} | {spread} |"
            )
        say("")
        # -- inputRequests
        answered = input_tasks * 2 * keys
        args = ["--tasks", str(input_tasks), "--keys", str(keys)]
        results = _rounds(base, _clients(me, "input", args, fastmcp, ext, loops), rounds, warmup)
        note(results)
        say(
            f"**inputRequests** (2026-07-28): {input_tasks} tasks one after another, each asking "
            f"2 rounds of {keys} `elicitation/create` keys (a round shown until each of its keys "
            "is answered), answered with `tasks/update` (the floors: one update per snapshot "
            "naming its new keys; the clients: as they do), followed to the inline result; per "
            f"answered key ({answered} a round); median of {rounds} rounds:"
        )
        say("")
        say(
            "| client | CPU µs per key | wall µs per key | round trips per key "
            "| `tasks/update` per key | rounds |"
        )
        say("|---|---|---|---|---|---|")
        for name, samples in results.items():
            trips = statistics.median(_trips(s) / answered for s in samples)
            updates = statistics.median(
                int(s["methods"].get("tasks/update", 0)) / answered for s in samples
            )
            spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
            say(
                f"| {name} | {_median(samples, 'cpu_us'):.0f} | {_median(samples, 'wall_us'):.0f} "
                f"| {trips:.2f} | {updates:.2f} | {spread} |"
            )
        say("")
        # -- completion latency
        latency: Rows = {}
        for backend in loops:
            common = ["--backend", backend, "--tasks", str(latency_tasks)]
            latency[f"polling, pollIntervalMs 500 ({backend})"] = (
                me,
                ["lib", "latency", *common, "--interval", "500"],
            )
            latency[f"push, `subscriptions/listen` ({backend})"] = (
                me,
                ["lib", "latency-push", *common, "--interval", "5000"],
            )
        results = _rounds(base, latency, rounds, warmup)
        say(
            f"**Completion latency** (2026-07-28, this library, HttpTransport): {latency_tasks} "
            "tasks waited at once, each completing at an instant the server chose and reported "
            "(as on 2025-11-25); seen: the Poller's terminal snapshot (`watch()`), returned: "
            "`wait()` (the result is inline: no `tasks/result`). Push: `PollPolicy(listen=True)`, "
            "one `subscriptions/listen` for the waited tasks (the server's pollIntervalMs 5 s, "
            "so no poll comes in time); relative: polling rows to the poll interval, push rows to "
            "one back-to-back `tasks/get` round trip on the idle client. "
            f"Median over {rounds} rounds of each quantile, the largest maximum:"
        )
        say("")
        say(
            "| how | seen p50 ms | seen p99 ms | seen max ms | `wait()` p50 / p99 / max ms "
            "| relative (seen p50) | polls | listens |"
        )
        say("|---|---|---|---|---|---|---|---|")
        for name, samples in results.items():
            q = {k: _median(samples, k) for k in samples[0] if k.endswith("_ms")}
            worst = max(s["seen_max_ms"] for s in samples)
            if "push" in name:  # to one back-to-back round trip
                relative = f"{q['seen_p50_ms'] / q['rtt_ms']:.2f}x a round trip"
            else:  # to the poll interval
                relative = f"{q['seen_p50_ms'] / q['interval_ms']:.2f} of the interval"
            say(
                f"| {name} | {q['seen_p50_ms']:.1f} | {q['seen_p99_ms']:.1f} | {worst:.1f} "
                f"| {q['returned_p50_ms']:.1f} / {q['returned_p99_ms']:.1f} / "
                f"{max(s['returned_max_ms'] for s in samples):.1f} "
                f"| {relative} | {_median(samples, 'polls'):.0f} "
                f"| {_median(samples, 'listens'):.0f} |"
            )
        say("")
        # -- memory
        say(
            "**Memory** (2026-07-28, this library, tracemalloc, Poller held off by an hour's "
            "floor, tasks seeded from decoded CreateTaskResults; one round):"
        )
        say("")
        say("| loop | tasks | per waited task (one `wait()` each) | per tracked task |")
        say("|---|---|---|---|")
        for loop in loops:
            for count in counts:
                c = ["--count", str(count), "--backend", loop]
                waited = row(me, base, ["lib", "mem-wait", *c])["bytes_per_task"]
                tracked = row(me, base, ["lib", "mem-track", *c])["bytes_per_task"]
                say(f"| {loop} | {count:,} | {waited / 1024:.2f} KiB | {tracked / 1024:.2f} KiB |")
        say("")
    gaps = {name: sorted(labels) for name, labels in wire_notes.items() if labels}
    if gaps:
        say(
            "**Routing headers left out** (the server counted them; the rows still ran): "
            + "; ".join(f"{name}: {', '.join(labels)}" for name, labels in gaps.items())
            + "."
        )
    else:
        say(
            "Every row sent every routing header "
            "(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`)."
        )
    say("")
