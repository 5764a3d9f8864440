"""The benchmark's rows of issue 12 part 2 run and say what they measured (no figure checked).

Against ``benchmarks/server.py`` in its own process (127.0.0.1), each row as ``nox -s bench``
runs it, in a process of its own, with small counts: the completion-latency rows (polling,
and push on the GET stream), the codec row over both payload kinds, and the TypeScript SDK
client's rows (skipped when that peer is not installed, failed under CI). What is checked is
the rows' shape and the events they count, never a duration: a push row whose tasks are polled
hourly can only end because the server pushed their completion.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from budget import examples
from conftest import require_peer
from hypothesis import given, settings
from hypothesis import strategies as st
from pg import postgres_url

__all__ = ["postgres_url"]  # the session fixture of the journal rows

REPO = Path(__file__).resolve().parent.parent
ROWS = REPO / "benchmarks" / "rows.py"
LIMIT = 120  # seconds: a bound on a row's process, not a measurement


def _bench_server(script: str, *args: str) -> Iterator[str]:
    """``benchmarks/SCRIPT`` in its own process (``args`` after its port); its MCP endpoint,
    until the fixture ends."""
    server = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / script), "0", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture(scope="module")
def bench_url() -> Iterator[str]:
    yield from _bench_server("server.py")


def _run_row(python: str, script: Path, url: str, args: tuple[str, ...], **env: str) -> Any:
    """One row's process (``script ARGS --url URL``, ``env`` added); its JSON line."""
    done = subprocess.run(
        [python, str(script), *args, "--url", url],
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
        cwd=REPO,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(url: str, *args: str) -> dict[str, Any]:
    # TS1_WARMUP: the TypeScript rows' warm-up (1,000 calls by default)
    result: dict[str, Any] = _run_row(sys.executable, ROWS, url, args, TS1_WARMUP="5")
    return result


QUANTILES = [f"{w}_{q}_ms" for w in ("seen", "returned") for q in ("p50", "p99", "max")]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_polling_latency_row_sees_every_completion_after_it_happened(
    bench_url: str, backend: str
) -> None:
    got = row(bench_url, "lib-latency", "--backend", backend, "--tasks", "4", "--interval", "100")
    assert got["tasks"] == 4
    assert got["polls"] >= 4  # each task was polled at least once to see its completion
    # The server's completion instant and the client's readings are one clock: a completion is
    # never seen before it happened, and wait() returns after it was seen.
    for key in QUANTILES:
        assert got[key] >= 0
    assert got["returned_max_ms"] >= got["seen_max_ms"]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_push_latency_row_ends_by_push_alone(bench_url: str, backend: str) -> None:
    # pollInterval one hour: no poll is due before the row's process limit, so the waits can
    # only end through the notifications/tasks/status the server sends on the GET stream.
    got = row(
        bench_url,
        "lib-latency-push",
        "--backend",
        backend,
        "--tasks",
        "4",
        "--interval",
        "3600000",
    )
    assert got["tasks"] == 4
    assert got["polls"] == 0
    for key in QUANTILES:
        assert got[key] >= 0


def test_codec_row_measures_repeated_and_fresh_payloads(bench_url: str) -> None:
    got = row(bench_url, "lib-codec-both", "--calls", "50")
    assert set(got) >= {"cpu_us", "user_us", "wall_us", "fresh_cpu_us"}


def test_sse_row_measures_both_decoders(bench_url: str) -> None:
    """Issue 22, item 15: both decoders over the same bytes (each checks it read every
    event); no figure is checked."""
    got = row(bench_url, "sse-decoders", "--calls", "20")
    for name in ("hand", "httpx_sse"):
        assert got[f"{name}_small_cpu_us"] >= 0
        assert got[f"{name}_large_cpu_ms"] >= 0


def test_fresh_payloads_all_decode_through_the_fast_path() -> None:
    spec = importlib.util.spec_from_file_location("bench_rows", ROWS)
    assert spec is not None
    assert spec.loader is not None
    rows: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rows)
    from mcp_tasks_client._codec._fast_task import fast_task_2025

    payloads = rows.fresh_payloads(30)
    texts = [p[k] for p in payloads for k in ("createdAt", "lastUpdatedAt")]
    assert len(set(texts)) == len(texts)  # every timestamp its own
    assert all(fast_task_2025(p) is not None for p in payloads)  # none declined


def test_typescript_sdk_rows(bench_url: str) -> None:
    require_peer("ts1")
    seq = row(bench_url, "ts1", "--calls", "5")
    assert set(seq) == {"cpu_us", "user_us", "wall_us"}
    burst = row(bench_url, "ts1-burst", "--tasks", "3", "--polls", "2")
    assert burst["polls"] == 6  # 3 tasks, each completing at its 2nd poll


@pytest.mark.parametrize("journal", ["sqlite", "postgres"])
def test_journal_rows_follow_every_task_with_two_workers(
    bench_url: str, journal: str, request: pytest.FixtureRequest
) -> None:
    """Issue 24's rows (``journal_rows.py``), tiny: two worker processes share a new journal
    of 6 tasks; every task ends recorded, the server answered its polls, and the claims that
    took tasks were timed (what the row reports, not how long they took)."""
    extra = []
    if journal == "postgres":
        extra = ["--pg-url", request.getfixturevalue("postgres_url")]
    sizes = ["--workers", "2", "--tasks", "6", "--polls", "3", "--capacity", "4"]
    script = str(REPO / "benchmarks" / "journal_rows.py")
    done = subprocess.run(
        [sys.executable, script, "row", "--url", bench_url, "--journal", journal, *sizes, *extra],
        capture_output=True,
        text=True,
        timeout=LIMIT * 2,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["journal"] == journal
    assert result["workers"] == 2
    assert result["outcomes"] == 6
    # 3 polls and one tasks/result per task at least (a task taken over is polled again).
    assert result["server_requests"] >= 6 * 4
    assert result["polls_per_s"] > 0
    assert 1 <= result["claims"] <= 6  # each claim that took a task took at least one
    assert 0 < result["claim_ms_p50"] <= result["claim_ms_p99"]


# -- issue 25: the 2026-07-28 bench server and rows ----------------------------------------------

ROWS_2026 = REPO / "benchmarks" / "rows2026.py"


@pytest.fixture(scope="module")
def bench2026_url() -> Iterator[str]:
    yield from _bench_server("server2026.py")


def _server_stats(url: str, reset: bool = False) -> dict[str, Any]:
    base = url.rsplit("/", 1)[0]
    request = urllib.request.Request(f"{base}/{'reset' if reset else 'stats'}")
    if reset:
        request.method = "POST"
    with urllib.request.urlopen(request, timeout=10) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


def row2026(url: str, *args: str, python: str = sys.executable) -> dict[str, Any]:
    """One rows2026.py process; its JSON line, with what the server counted during it."""
    _server_stats(url, reset=True)
    quiet = {"EXT_WARMUP": "5", "FASTMCP_SHOW_SERVER_BANNER": "false"}
    result: dict[str, Any] = _run_row(python, ROWS_2026, url, tuple(args), **quiet)
    result["server"] = _server_stats(url)
    return result


def _post(url: str, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(message).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def _load(name: str) -> Any:
    """A module of benchmarks/ (a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / name)
    assert spec is not None
    assert spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wire() -> Any:
    return _load("rows2026.py").wire


def test_2026_server_refuses_what_is_not_the_generations_wire(bench2026_url: str) -> None:
    """The rows are measured speaking the whole 2026-07-28 wire because the server refuses
    anything else: E C57 (a header that disagrees with the body: -32020), C1 (no _meta
    protocolVersion: -32602), C3 (no tasks extension on a task request: -32021)."""
    wire = _wire()
    body, headers = wire("tools/call", {"name": "work", "arguments": {"polls": 1}}, 1)
    status, answer = _post(bench2026_url, json.loads(body), headers)
    assert status == 200
    assert answer["result"]["resultType"] == "task"
    task_id = answer["result"]["taskId"]

    body, headers = wire("tasks/get", {"taskId": task_id}, 2)
    status, answer = _post(bench2026_url, json.loads(body), {**headers, "mcp-name": "other"})
    assert (status, answer["error"]["code"]) == (400, -32020)  # E C58

    message = json.loads(body)
    del message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
    status, answer = _post(bench2026_url, message, headers)
    assert (status, answer["error"]["code"]) == (400, -32602)  # E C1

    message = json.loads(body)
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {}
    status, answer = _post(bench2026_url, message, headers)
    assert (status, answer["error"]["code"]) == (400, -32021)  # E C3, C52

    status, answer = _post(bench2026_url, json.loads(body), headers)
    assert status == 200
    assert answer["result"]["status"] == "completed"  # its 1st poll; the result inline (E C27)
    assert answer["result"]["result"]["content"][0]["text"] == "done"


FLOORS_AND_LIB = [
    ("floor",),
    ("httpx", "--backend", "asyncio"),
    ("httpx", "--backend", "trio"),
    ("lib", "--backend", "asyncio"),
    ("lib", "--backend", "trio"),
    ("lib", "--backend", "asyncio", "--transport", "lean"),
    ("lib", "--backend", "trio", "--transport", "lean"),
]


def _check_scenarios(url: str, client: str, *extra: str, python: str = sys.executable) -> None:
    """Each scenario of a row at tiny sizes: what it counted, and what the server saw."""
    seq = row2026(url, client, "seq", *extra, "--calls", "5", python=python)
    assert seq["cpu_us"] > 0
    assert seq["server"]["methods"]["tasks/get"] >= 5

    burst = row2026(url, client, "burst", *extra, "--tasks", "3", "--polls", "2", python=python)
    # 3 tasks, each completing at its 2nd poll (ext-tasks starts following a task as soon as
    # it is created, so a poll can fall before the row's window: the server's count is whole)
    assert burst["server"]["methods"]["tasks/get"] >= 6
    assert 1 <= burst["polls"] <= burst["server"]["methods"]["tasks/get"]
    assert burst["task_cpu_us"] > 0
    assert burst["server"]["methods"]["tools/call"] == 3
    assert burst["server"]["connections"] >= 1

    short = row2026(url, client, "short", *extra, "--tasks", "2", python=python)
    assert short["cpu_us"] > 0
    assert short["server"]["methods"]["tools/call"] == 2
    assert short["server"]["methods"]["tasks/get"] >= 4

    asked = row2026(url, client, "input", *extra, "--tasks", "1", "--keys", "2", python=python)
    assert asked["keys"] == 4  # 2 rounds of 2 keys
    # every key reached the server (it completes a task only when each round is answered)
    assert asked["server"]["methods"]["tasks/update"] >= 2


@pytest.mark.parametrize("args", FLOORS_AND_LIB, ids=lambda a: "-".join(a))
def test_2026_floor_and_library_rows_speak_the_whole_wire(
    bench2026_url: str, args: tuple[str, ...]
) -> None:
    """Issue 25: the floors and this library run every scenario at tiny sizes, each request
    with every routing header (the server counts one left out; E C57, C58)."""
    _check_scenarios(bench2026_url, *args)
    assert _server_stats(bench2026_url)["missing_headers"] == {}


def _round_trips(row: dict[str, Any]) -> int:
    """What the server answered for the tasks: tools/call, tasks/get, tasks/update."""
    methods = row["server"]["methods"]
    return sum(int(methods.get(m, 0)) for m in ("tools/call", "tasks/get", "tasks/update"))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_2026_input_rounds_cost_the_floors_tasks_get(bench2026_url: str, backend: str) -> None:
    """Issue 39 item 3 (E C28-C33): no ``tasks/get`` while a round's answers are in flight.
    Two tasks, each asking two rounds of five keys, the Poller polling back to back: the
    library sends the wire floor's ``tasks/get`` exactly (one a round, one for the end; before
    the Tracker held the poll back, one more a round) and at most 0.65 round trips a key
    (issue 39's target; the floor's is 0.60). Counted by the server, never timed."""
    sizes = ("--tasks", "2", "--keys", "5")
    floor = row2026(bench2026_url, "floor", "input", *sizes)
    ours = row2026(bench2026_url, "lib", "input", "--backend", backend, *sizes)
    keys = 2 * 2 * 5
    assert floor["keys"] == ours["keys"] == keys
    assert ours["server"]["methods"]["tasks/get"] == floor["server"]["methods"]["tasks/get"] == 6
    assert _round_trips(floor) / keys == 0.6
    assert _round_trips(ours) / keys <= 0.65


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_2026_latency_rows_by_polling_and_by_listen_push(bench2026_url: str, backend: str) -> None:
    """Polling sees each completion after it happened; push with pollIntervalMs an hour can
    only end through the notifications/tasks the server pushed on subscriptions/listen."""
    polled = row2026(
        bench2026_url, "lib", "latency", "--backend", backend, "--tasks", "4", "--interval", "100"
    )
    assert polled["tasks"] == 4
    assert polled["polls"] >= 4
    assert polled["listens"] == 0
    pushed = row2026(
        bench2026_url,
        "lib",
        "latency-push",
        "--backend",
        backend,
        "--tasks",
        "4",
        "--interval",
        "3600000",
    )
    assert pushed["tasks"] == 4
    assert pushed["polls"] == 0
    assert pushed["listens"] >= 1
    assert pushed["server"]["methods"]["subscriptions/listen"] >= 1
    for got in (polled, pushed):
        for key in QUANTILES:
            assert got[key] >= 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_2026_memory_rows(bench2026_url: str, backend: str) -> None:
    for scenario in ("mem-wait", "mem-track"):
        got = row2026(bench2026_url, "lib", scenario, "--backend", backend, "--count", "50")
        assert got["bytes_per_task"] > 0
        assert got["server"]["methods"].get("tasks/get", 0) == 0  # held off by the floor


def test_2026_fastmcp4_rows(bench2026_url: str) -> None:
    require_peer("fastmcp4")
    python = _load("bench2026.py").fastmcp_python()
    assert python is not None
    _check_scenarios(bench2026_url, "fastmcp", python=str(python))


def test_2026_ext_tasks_rows(bench2026_url: str) -> None:
    """ext-tasks 0.2.2 on node, over the host rawDispatch ``ext_tasks_client.mjs`` writes;
    it sends every routing header (Mcp-Name from ext-tasks' own context headers)."""
    if not _load("bench2026.py").has_ext_tasks():
        message = "ext-tasks 0.2.2 (npm-ext-tasks) or node is not installed"
        if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    _check_scenarios(bench2026_url, "ext-tasks")
    assert _server_stats(bench2026_url)["missing_headers"] == {}


def _bench_tiny(section: str, *args: str, timeout: float) -> str:
    """``bench.py --only SECTION --tiny ARGS``: what it printed (it exited 0)."""
    bench = str(REPO / "benchmarks" / "bench.py")
    done = subprocess.run(
        [sys.executable, bench, "--only", section, "--tiny", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_bench_prints_the_2026_tables_for_every_row() -> None:
    """``bench.py --only gen2 --tiny``: the section runs end to end, one table per scenario,
    a line for each row it ran (no figure checked). ``--tiny`` runs the rows on asyncio
    alone: each row's own test above runs it on both loops."""
    text = _bench_tiny("gen2", "--rounds", "1", timeout=LIMIT * 4)
    for heading in (
        "**Per `tasks/get` round trip** (2026-07-28)",
        "tasks at once** (2026-07-28)",
        "**A sequence of short tasks** (2026-07-28)",
        "**inputRequests** (2026-07-28)",
        "**Completion latency** (2026-07-28",
        "**Memory** (2026-07-28",
    ):
        assert heading in text
    for name in (
        "HTTP/1.1 by hand on asyncio streams (the wire floor)",
        "bare httpx loop (asyncio)",
        "this library, HttpTransport (asyncio)",
        "this library, LeanHttpTransport (asyncio)",
    ):
        assert text.count(f"| {name} |") == 4  # polls, burst, short tasks, inputRequests
    assert "(trio)" not in text
    assert "| push, `subscriptions/listen` (asyncio) |" in text


def test_bench_prints_the_startup_table() -> None:
    """``bench.py --only startup --tiny`` (issue 34): every row of the start-up table ran, with
    its ratio to the baseline its target names (no figure checked: the time is measured on a
    quiet machine, the modules loaded are pinned by tests/test_startup.py). No server starts."""
    text = _bench_tiny("startup", timeout=LIMIT)
    assert "**Start-up** (issue 34): median of 1 rounds" in text
    for row, target in (
        ("`import mcp_tasks_client`", "<= 1.3"),
        ("`mcp-tasks --version`", "<= 1.5"),
        ("`mcp-tasks status` (connection refused: the server's answer excluded)", "<= 1.5"),
    ):
        (line,) = [line for line in text.splitlines() if line.startswith(f"| {row} |")]
        assert line.endswith(f" | {target} |"), line
    assert text.count("1 (baseline)") == 2
    assert "| a first program's names" in text


def test_the_paired_startup_script_prints_a_row_per_checkout() -> None:
    """``benchmarks/startup_ab.py NAME=DIR --rounds 1`` (issue 34): the baseline and each
    checkout's ``mcp-tasks status`` ran (the script stops on any exit code but the refused
    connection's), each with its ratios. No figure checked."""
    ran = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "startup_ab.py"), f"this={REPO}", "--rounds",
         "1"], capture_output=True, text=True, check=True, timeout=LIMIT,
    )  # fmt: skip
    rows = [line for line in ran.stdout.splitlines() if line.startswith("| ")]
    assert rows[0] == "| row | CPU ms | CPU ratio | wall ms | wall ratio |"
    assert rows[1].startswith("| a Python that imports httpx and rich | ")
    assert rows[1].split(" | ")[2] == "1.00"
    assert rows[2].startswith("| `mcp-tasks status`, this | ")
    assert len(rows) == 3


# -- issue 25 item 4: sustained throughput -------------------------------------------------------


@settings(max_examples=examples(50), deadline=None)
@given(
    limit=st.floats(min_value=10.0, max_value=50_000.0),
    start=st.floats(min_value=10.0, max_value=50_000.0),
    steps=st.integers(min_value=0, max_value=3),
)
def test_sustained_search_brackets_the_highest_passing_rate(
    limit: float, start: float, steps: int
) -> None:
    """The search of ``bench.py --only sustained`` against a monotone pass/fail (a rate
    passes when it is at most ``limit``: what a probe models, no process run): it ends with
    a passing rate under the limit and a failing one over it, within 2 ** (1 / 2 ** steps) of
    each other once bracketed, and runs no more probes than its budget."""
    search = _load("sustained.py").search
    budget = 20 + steps
    rates: list[float] = []

    def probe(rate: float) -> tuple[bool, dict[str, Any]]:
        rates.append(rate)
        return rate <= limit, {"rate": rate}

    found = search(probe, start, steps=steps, lowest=1.0, highest=1e6, budget=budget)
    assert found["probes"] == len(rates) <= budget
    assert found["passed"] is not None
    assert found["failed"] is not None
    passed, failed = found["passed"][0], found["failed"][0]
    assert passed <= limit < failed
    assert found["passed"][1] == {"rate": passed}  # each bracket end keeps its own result
    assert failed / passed <= 2 ** (1 / 2**steps) * (1 + 1e-9)


def test_sustained_row_counts_the_polls_of_its_window(bench2026_url: str) -> None:
    """The sustained row (2026-07-28; 2025-11-25 shares its measurement, ``rows.py``) at a
    tiny size: every window poll reached the server, the target is N / I, the lateness
    quantiles are ordered (no figure checked)."""
    got = row2026(
        bench2026_url,
        "lib",
        "sustained",
        "--transport",
        "lean",
        "--count",
        "20",
        "--interval",
        "100",
        "--seconds",
        "0.2",
        "--ramp",
        "0.1",
    )
    assert got["tasks"] == 20
    assert got["target_per_s"] == 200.0
    assert 0 < got["polls"] <= got["server"]["methods"]["tasks/get"]
    assert 0 <= got["pending"] <= got["due"]  # the lateness counts polls still waiting too
    assert got["p50_ms"] <= got["p99_ms"] <= got["max_ms"]
    assert got["cpu_share"] >= 0
    assert got["server_cpu_share"] >= 0
    assert got["server"]["missing_headers"] == {}


def test_bench_prints_the_sustained_tables_for_every_cell() -> None:
    """``bench.py --only sustained --tiny``: both generations' tables, a line per transport
    (one probe each, 100 tasks), every probe's row ran (none failed or timed out)."""
    text = _bench_tiny("sustained", timeout=LIMIT * 2)
    assert "**Sustained throughput** (issue 25, item 4)" in text
    for generation in ("2025-11-25:", "2026-07-28:"):
        assert generation in text
    for transport in ("HttpTransport", "LeanHttpTransport"):
        assert text.count(f"| {transport} | asyncio | 100 |") == 2
    assert "failed:" not in text
    assert "timed out" not in text


def test_floor_burst_row_polls_every_task_to_its_end(bench_url: str) -> None:
    """Issue 39 item 6: the 2025-11-25 burst table's wire floor (``rows.py floor-burst``), so
    the default's CPU per task and wall time are judged against it on both generations: every
    task polled to completion at its ``--polls``-th ``tasks/get``, over at most ``--pool``
    connections (no figure checked)."""
    got = row(bench_url, "floor-burst", "--tasks", "6", "--polls", "3", "--pool", "2")
    assert got["polls"] == 18
    assert got["cpu_us"] > 0
    assert got["wall_us"] > 0


# -- issue 39 item 5: a slow server --------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    """``server.py`` answering each ``tasks/get`` 100 ms late."""
    yield from _bench_server("server.py", "100")


def test_slow_row_reports_falling_behind_and_a_bound_that_follows(slow_url: str) -> None:
    """``rows.py lib-slow`` over real HTTP (the default transport) against a server 100 ms
    late per ``tasks/get``: 60 tasks every 200 ms ask for 200 polls/s, 20 in flight. A fixed
    bound of 2 (8 polls/s at most) falls behind and the Poller's FallingBehind says so; under
    ``FollowLatency(cap=64)`` the bound grows past 2 and an InFlightResized says so (no figure
    checked: the rates depend on the machine)."""
    common = ("lib-slow", "--count", "60", "--interval", "200", "--seconds", "1")
    fixed = row(slow_url, *common, "--ramp", "2", "--in-flight", "2")
    assert fixed["falling_behind"] >= 1
    assert fixed["limit"] == 2
    assert fixed["resizes"] == []
    assert "polls are falling behind" in fixed["first_warning"]
    assert fixed["late_p50_ms"] <= fixed["late_p99_ms"]
    assert fixed["latency_ms"] >= 100
    follow = row(slow_url, *common, "--ramp", "3", "--in-flight", "2", "--cap", "64")
    assert follow["resizes"]
    assert follow["resizes"][0][0] == 2
    assert 2 < follow["limit"] <= 64
    assert follow["limit"] == follow["resizes"][-1][1]


def test_slow_row_over_stdio_falls_behind_and_says_so() -> None:
    """``rows.py lib-slow --transport stdio:100``: the same measurement over stdio
    (``server.py stdio 100``, a child of the row's StdioTransport: no pool, the Poller's bound
    alone). A fixed bound of 2 against 60 tasks every 200 ms falls behind and the Poller's
    FallingBehind says so; every poll was answered 100 ms late or later (no figure checked)."""
    got = row(
        "",
        *("lib-slow", "--transport", "stdio:100", "--count", "60", "--interval", "200"),
        *("--seconds", "1", "--ramp", "2", "--in-flight", "2"),
    )
    assert got["falling_behind"] >= 1
    assert got["limit"] == 2
    assert "2 in flight of 2" in got["first_warning"]
    assert got["latency_ms"] >= 100


def test_bench_prints_the_slow_server_table() -> None:
    """``bench.py --only slow --tiny``: the table, one line per bound (the stdio rows are
    left out with --tiny: their row has its test above)."""
    text = _bench_tiny("slow", timeout=LIMIT)
    assert "**A slow server** (issue 39 item 5)" in text
    for name in ("fixed `max_in_flight=64`", "fixed `max_in_flight=512`", "`FollowLatency("):
        assert sum(line.startswith(f"| {name}") for line in text.splitlines()) == 1
    assert "| stdio:" not in text


# -- issue 39: the timed burst (what a host feels) -----------------------------------------------

TIMED = ("--tasks", "3", "--after", "200", "--interval", "2")


@pytest.mark.parametrize(
    "args",
    [("httpx-timed", "--backend", "trio"), ("lib-timed", "--backend", "trio", "--floor", "0")],
    ids=lambda a: "-".join(a),
)  # fmt: skip
def test_timed_rows_learn_every_outcome_after_it_ended(
    bench_url: str, args: tuple[str, ...]
) -> None:
    """The 2025-11-25 timed burst's rows on trio (``bench.py --only timed --tiny`` runs the
    others on asyncio; ``--floor 0``: ``PollPolicy(floor=0)``, the bench's row that honours the
    server's 2 ms): 3 tasks ending 200 ms after they were made, pollInterval 2 ms. Causality
    only, no figure: the row reports each task the server says ended (a task it never saw end
    is a KeyError), the last outcome is known after the last task ended (lag >= 0, one
    monotonic clock for both processes), and not before 200 ms from the first tools/call."""
    got = row(bench_url, *args, *TIMED)
    assert got["tasks"] == 3
    assert got["polls"] >= 3  # each task polled until it was seen completed
    assert got["lag_ms"] >= 0
    assert got["wall_s"] >= 0.2
    assert 0 <= got["make_s"] <= got["wall_s"]


@pytest.mark.parametrize(
    "args",
    [("httpx", "timed", "--backend", "trio"),
     ("lib", "timed", "--backend", "trio", "--floor", "0"),
     ("lib", "timed", "--backend", "trio", "--transport", "httpx")],
    ids=lambda a: "-".join(a),
)  # fmt: skip
def test_2026_timed_rows_learn_every_outcome_after_it_ended(
    bench2026_url: str, args: tuple[str, ...]
) -> None:
    """The same on 2026-07-28 (``rows2026.py CLIENT timed``): the server counted exactly the
    ``tasks/get`` the row says it sent, one ``tools/call`` a task, every routing header."""
    got = row2026(bench2026_url, *args, *TIMED)
    assert got["tasks"] == 3
    assert got["server"]["methods"]["tools/call"] == 3
    assert got["polls"] == got["server"]["methods"]["tasks/get"] >= 3
    assert got["lag_ms"] >= 0
    assert got["wall_s"] >= 0.2
    assert got["server"]["missing_headers"] == {}


def test_bench_prints_the_timed_burst_tables() -> None:
    """``bench.py --only timed --tiny``: both generations' tables, every row on asyncio, each
    with its ratio to the floor (the floor's own 1.00x); no figure checked."""
    text = _bench_tiny("timed", timeout=LIMIT)
    assert "**The timed burst** (issue 39: what a host feels)" in text
    for generation in ("2025-11-25:", "2026-07-28:"):
        assert f"\n{generation}\n" in text
    for name in (
        "HTTP/1.1 by hand on asyncio streams (the wire floor)",
        "bare httpx loop (asyncio)",
        "this library, `HttpTransport(url)`, `Poller.wait_all`, defaults (asyncio)",
        "this library, httpx engine, `Poller.wait_all`, defaults (asyncio)",
    ):
        lines = [line for line in text.splitlines() if line.startswith(f"| {name} |")]
        assert len(lines) == 2, name  # one a generation
    floors = [line for line in text.splitlines() if line.startswith("| HTTP/1.1 by hand")]
    assert all("| 1.00x | 1.00x |" in line for line in floors)
    assert "(trio)" not in text


@pytest.mark.parametrize(
    "args", [("floor-timed",), ("lib-timed", "--backend", "asyncio")], ids=lambda a: a[0]
)
def test_timed_rows_against_the_official_sdk_server(args: tuple[str, ...]) -> None:
    """The timed burst against mcp==1.30.0's own server (``mcp1_server.py``, run with the
    peer's venv, as ``bench.py --only timed`` runs it): the wire floor reads its JSON answers
    and the library waits its tasks; every task ended as the SDK's store says (its work's end
    is in ``/completions``), learned after it ended. Causality only, no figure."""
    require_peer("mcp1")
    timed = _load("timed.py")
    python = _load("bench.py")._peer_python()
    with timed.mcp1_server(python) as base:
        got = row(f"{base}/mcp", *args, *TIMED)
    assert got["tasks"] == 3
    assert got["polls"] >= 3
    assert got["lag_ms"] >= 0
    assert got["wall_s"] >= 0.2
