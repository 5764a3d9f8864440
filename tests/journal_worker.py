"""A worker or a waiter process sharing one PostgreSQL journal, for the acceptance test.

``python journal_worker.py work URL SCHEMA OWNER WORKERS LEASE [RECONNECT [TIMEOUT]]``:
``resume(workers=WORKERS)`` as OWNER (sent as the ``X-Worker`` header, for the server's request
log), on trio, once a line on stdin says go (after its ``{"ready": OWNER}`` line); one JSON line
per task it reports. RECONNECT: seconds its journal rides out a lost database (``Reconnect``;
0, the default: none); TIMEOUT: the journal's ``statement_timeout`` (default 10).
``python journal_worker.py wait URL SCHEMA SERVER IDS.json``: waits
for the outcome of every task in IDS.json through the journal (LISTEN/NOTIFY, never asking the
MCP server), on asyncio; one JSON line per outcome.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from pathlib import Path

import anyio

from mcp_tasks_client import PollPolicy, client_for, resume
from mcp_tasks_client.journal import RecordedOutcome
from mcp_tasks_client.journal_postgres import PostgresJournal, Reconnect
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.resume import Resumed

INFO = Implementation("journal-worker", "0")


def _show(item: Resumed) -> None:
    status = getattr(getattr(item.ended, "task", None), "status", None)
    line = {"task": item.entry.task_id, "ended": type(item.ended).__name__}
    if isinstance(item.ended, Exception):
        line["error"] = str(item.ended)[:300]
    print(json.dumps({**line, "status": str(status.value) if status else None}), flush=True)


async def work(
    url: str,
    schema: str,
    owner: str,
    workers: int,
    lease: float,
    reconnect: float = 0.0,
    statement_timeout: float = 10.0,
) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(created).3f %(message)s")
    print(json.dumps({"ready": owner}), flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)  # the test's go: the tasks exist now
    again = Reconnect(within=reconnect, first=0.1, longest=1.0) if reconnect > 0 else None
    async with PostgresJournal(
        url, schema=schema, reconnect=again, statement_timeout=statement_timeout
    ) as journal:
        opener = functools.partial(client_for, client_info=INFO, headers={"X-Worker": owner})
        await resume(
            journal,
            opener,
            policy=PollPolicy(floor=0.2, jitter=0.0),
            owner=owner,
            workers=workers,
            lease=lease,
            idle=0.2,
            on_resumed=_show,
        )


async def wait(url: str, schema: str, server: str, ids: list[str]) -> None:

    def show(_server: str, task_id: str, outcome: RecordedOutcome) -> None:
        print(json.dumps({"task": task_id, "status": outcome.status}), flush=True)

    async with PostgresJournal(url, schema=schema) as journal:
        await journal.wait_outcomes([(server, i) for i in ids], timeout=600, on_outcome=show)


if __name__ == "__main__":
    mode, url, schema = sys.argv[1:4]
    if mode == "work":
        owner, workers, lease = sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
        given = sys.argv[7:9]
        reconnect, timeout = [float(word) for word in [*given, *["0", "10"][len(given) :]]]
        job = functools.partial(work, url, schema, owner, workers, lease, reconnect, timeout)
        anyio.run(job, backend="trio")
    else:
        ids = json.loads(Path(sys.argv[5]).read_text())
        anyio.run(wait, url, schema, sys.argv[4], ids, backend="asyncio")
