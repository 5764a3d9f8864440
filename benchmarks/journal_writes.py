"""What a worker's journal writes cost, one call at a time (issue 36: the monitor's history).

    python benchmarks/journal_writes.py --checkout DIR [--pg-url URL] [--writes N]

Imports the journal of the checkout at ``DIR`` (so two checkouts, before and after a change,
are measured by the same script under the same load), makes a new journal (an SQLite file in a
temporary folder; a new schema at ``--pg-url``), records 50 tasks, takes their leases, and
times, in this process, each call of:

- ``snapshot_leased`` (the write a worker makes for each poll): N calls, one status message in
  ten new (schema 4 adds a history row for those, by trigger);
- ``claim_due`` finding nothing due (an idle worker's look, 20 a second; schema 4 adds the
  heartbeat, written at most once a second);
- ``renew`` of the 50 leases (schema 4 adds the heartbeat).

It prints one JSON line per journal: the median and 90th percentile of each, in microseconds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio


def _quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_us": statistics.median(ordered) * 1e6,
        "p90_us": ordered[int(len(ordered) * 0.9)] * 1e6,
    }


async def measure(journal: Any, writes: int) -> dict[str, Any]:
    from mcp_tasks_client._generation import Generation
    from mcp_tasks_client.journal import JournalEntry
    from mcp_tasks_client.models import Task, TaskStatus

    now = dt.datetime.now(dt.timezone.utc)
    server = "http://127.0.0.1:1/mcp"

    def task(task_id: str, message: str) -> Task:
        return Task(
            task_id=task_id,
            status=TaskStatus.WORKING,
            created_at=now,
            last_updated_at=now,
            ttl=60_000,
            poll_interval=500,
            status_message=message,
        )

    for n in range(50):
        await journal.record(
            JournalEntry(
                server=server,
                task_id=f"t{n}",
                generation=Generation.V2026_07_28,
                protocol_version="2026-07-28",
                tool="work",
                created_at=now,
                snapshot=task(f"t{n}", "step 0"),
            )
        )
    taken = await journal.claim_due("bench", 600.0, 50)
    leases = {entry.task_id: entry.lease for entry in taken}
    snapshots = []
    for n in range(writes):
        task_id = f"t{n % 50}"
        message = f"step {n // 500}" if n % 10 else f"step {n}"  # one in ten new
        started = time.perf_counter()
        await journal.snapshot_leased(server, task_id, task(task_id, message), leases[task_id])
        snapshots.append(time.perf_counter() - started)
    looks = []
    for _ in range(writes // 10):
        started = time.perf_counter()
        await journal.claim_due("idle", 600.0, 10)
        looks.append(time.perf_counter() - started)
    renewals = []
    keys = [(server, f"t{n}") for n in range(50)]
    for _ in range(writes // 20):
        started = time.perf_counter()
        await journal.renew("bench", keys, 600.0)
        renewals.append(time.perf_counter() - started)
    return {
        "snapshot_leased": _quantiles(snapshots),
        "claim_due_idle": _quantiles(looks),
        "renew_50": _quantiles(renewals),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--pg-url", default="")
    parser.add_argument("--writes", type=int, default=2000)
    ns = parser.parse_args()
    sys.path.insert(0, str(Path(ns.checkout).resolve()))
    from mcp_tasks_client.journal import SQLiteJournal

    with tempfile.TemporaryDirectory() as folder:
        with SQLiteJournal(Path(folder) / "j.db") as journal:
            row = anyio.run(measure, journal, ns.writes, backend="trio")
        print(json.dumps({"journal": "sqlite", **row}), flush=True)
    if ns.pg_url:
        from mcp_tasks_client.journal_postgres import PostgresJournal

        schema = f"bench_{uuid.uuid4().hex[:12]}"
        with PostgresJournal(ns.pg_url, schema=schema, create=True) as journal:
            row = anyio.run(measure, journal, ns.writes, backend="trio")
        print(json.dumps({"journal": "postgres", **row}), flush=True)


if __name__ == "__main__":
    main()
