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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require_peer
from pg import postgres_url

__all__ = ["postgres_url"]  # the session fixture of the journal rows

REPO = Path(__file__).resolve().parent.parent
ROWS = REPO / "benchmarks" / "rows.py"
LIMIT = 120  # seconds: a bound on a row's process, not a measurement


@pytest.fixture(scope="module")
def bench_url() -> Iterator[str]:
    server = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / "server.py"), "0"],
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


def row(url: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "TS1_WARMUP": "5"}  # the TypeScript rows' warm-up: 1,000 calls
    done = subprocess.run(
        [sys.executable, str(ROWS), *args, "--url", url],
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
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
