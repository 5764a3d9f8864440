"""What the monitor's history triggers cost a worker (issue 36), paired in one process.

    python benchmarks/journal_triggers.py [--pg-url URL] [--changing 0.1] [--batches 20]

Two journals of the same code side by side: one as made (schema 4, with the triggers that
write each task's history), one with those triggers dropped. Batches of 100
``snapshot_leased`` calls (the write a worker makes for each poll; ``--changing`` of them
bring a new status message, which adds a history row) and 5 ``renew`` calls of 50 leases
alternate between the two, so both see the same machine. Prints, per journal, the median and
mean microseconds of each call. Without ``--pg-url``, SQLite only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_tasks_client._generation import Generation
from mcp_tasks_client.journal import JournalEntry, SQLiteJournal
from mcp_tasks_client.models import Task, TaskStatus

SERVER = "http://127.0.0.1:1/mcp"
NOW = dt.datetime.now(dt.timezone.utc)


def _task(task_id: str, message: str) -> Task:
    return Task(
        task_id=task_id,
        status=TaskStatus.WORKING,
        created_at=NOW,
        last_updated_at=NOW,
        ttl=60_000,
        poll_interval=500,
        status_message=message,
    )


async def _leases(journal: Any) -> dict[str, Any]:
    for n in range(50):
        entry = JournalEntry(
            server=SERVER,
            task_id=f"t{n}",
            generation=Generation.V2026_07_28,
            protocol_version="2026-07-28",
            tool="work",
            created_at=NOW,
            snapshot=_task(f"t{n}", "same"),
        )
        await journal.record(entry)
    return {e.task_id: e.lease for e in await journal.claim_due("bench", 600.0, 50)}


async def compare(journals: dict[str, Any], changing: float, batches: int) -> None:
    leases = {name: await _leases(journal) for name, journal in journals.items()}
    polls: dict[str, list[float]] = {name: [] for name in journals}
    renewals: dict[str, list[float]] = {name: [] for name in journals}
    keys = [(SERVER, f"t{n}") for n in range(50)]
    every = round(1 / changing) if changing > 0 else 0
    for batch in range(batches):
        order = list(journals) if batch % 2 else list(journals)[::-1]
        for name in order:
            journal = journals[name]
            for n in range(100):
                task_id = f"t{n % 50}"
                message = f"step {batch}.{n}" if every and n % every == 0 else "same"
                started = time.perf_counter()
                await journal.snapshot_leased(
                    SERVER, task_id, _task(task_id, message), leases[name][task_id]
                )
                polls[name].append(time.perf_counter() - started)
            for _ in range(5):
                started = time.perf_counter()
                await journal.renew("bench", keys, 600.0)
                renewals[name].append(time.perf_counter() - started)
    for name in journals:
        print(
            f"{name}: snapshot_leased median {statistics.median(polls[name]) * 1e6:,.0f} µs, "
            f"mean {statistics.mean(polls[name]) * 1e6:,.0f}; renew of 50 median "
            f"{statistics.median(renewals[name]) * 1e6:,.0f} µs",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-url", default="")
    parser.add_argument("--changing", type=float, default=0.1)
    parser.add_argument("--batches", type=int, default=20)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        journals: dict[str, Any] = {}
        for name in ("sqlite with triggers", "sqlite without"):
            path = Path(folder) / f"{uuid.uuid4().hex}.db"
            SQLiteJournal(path).close()
            if name.endswith("without"):
                db = sqlite3.connect(path)
                names = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
                for (trigger,) in names.fetchall():
                    db.execute(f"DROP TRIGGER {trigger}")
                db.commit()
                db.close()
            journals[name] = SQLiteJournal(path)
        anyio.run(compare, journals, ns.changing, ns.batches, backend="trio")
        for journal in journals.values():
            journal.close()
    if ns.pg_url:
        import psycopg

        from mcp_tasks_client.journal_postgres import PostgresJournal

        journals = {}
        for name in ("postgres with triggers", "postgres without"):
            schema = f"bench_{uuid.uuid4().hex[:12]}"
            journals[name] = PostgresJournal(ns.pg_url, schema=schema, create=True)
            journals[name].open()
            if name.endswith("without"):
                with psycopg.connect(ns.pg_url, autocommit=True) as conn:
                    for kind in ("created", "lease", "status", "answered", "outcome"):
                        conn.execute(f"DROP TRIGGER task_{kind} ON {schema}.tasks")
                    conn.execute(f"DROP TRIGGER input_events ON {schema}.inputs")
        anyio.run(compare, journals, ns.changing, ns.batches, backend="trio")
        for journal in journals.values():
            journal.close()


if __name__ == "__main__":
    main()
