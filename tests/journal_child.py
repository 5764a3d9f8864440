"""A client process for the resume tests: starts one task with a journal, says so on stdout,
then waits on it until it is killed. ``python journal_child.py URL GENERATION JOURNAL SECONDS``."""

from __future__ import annotations

import datetime as dt
import sys

import anyio

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    SQLiteJournal,
    ToolCall,
)
from mcp_tasks_client.models import CreateTaskResult, Implementation


async def main(url: str, generation: Generation, path: str, seconds: float) -> None:
    tool, args = ("slow_echo", {"text": "journaled", "seconds": seconds})
    if generation is Generation.V2026_07_28:
        tool, args = ("slow_compute", {"seconds": seconds, "label": "journaled"})
    with SQLiteJournal(path) as journal:
        transport = HttpTransport(url, delete_session_on_close=False)
        info = Implementation("journal-child", "0")
        async with Client(transport, generation=generation, client_info=info) as client:
            ttl = dt.timedelta(minutes=5) if generation is Generation.V2025_11_25 else None
            call = ToolCall(tool, args).as_task(ttl=ttl)
            started = await client.start(call, journal=journal)
            assert isinstance(started, CreateTaskResult)
            async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), journal=journal) as p:
                print(f"waiting {started.task.task_id}", flush=True)
                await p.wait(started)
                print("finished before it was killed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], Generation(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
