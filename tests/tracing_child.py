"""A client process for the tracing resume test: tracing on (an SDK provider, nothing
exported), starts one task with a journal, prints its id and the trace context of its span,
then waits on it until it is killed. ``python tracing_child.py URL GENERATION JOURNAL``."""

from __future__ import annotations

import datetime as dt
import sys

import anyio
from opentelemetry.sdk.trace import TracerProvider

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    SQLiteJournal,
    ToolCall,
    observability,
)
from mcp_tasks_client.models import CreateTaskResult, Implementation


async def main(url: str, generation: Generation, path: str) -> None:
    observability.tracing(True, tracer_provider=TracerProvider())
    tool, args = ("slow_echo", {"text": "traced", "seconds": 2})
    if generation is Generation.V2026_07_28:
        tool, args = ("slow_compute", {"seconds": 2, "label": "traced"})
    with SQLiteJournal(path) as journal:
        transport = HttpTransport(url, delete_session_on_close=False)
        info = Implementation("tracing-child", "0")
        async with Client(transport, generation=generation, client_info=info) as client:
            ttl = dt.timedelta(minutes=5) if generation is Generation.V2025_11_25 else None
            started = await client.start(ToolCall(tool, args).as_task(ttl=ttl), journal=journal)
            assert isinstance(started, CreateTaskResult)
            task_id = started.task.task_id
            async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), journal=journal) as p:
                entry = await journal.get(transport.identity, task_id)
                assert entry is not None
                print(f"waiting {task_id} {entry.traceparent}", flush=True)
                await p.wait(started)
                print("finished before it was killed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], Generation(sys.argv[2]), sys.argv[3])
