"""A host process for the SDK-host journal test: an mcp.Client holding TasksExtension with a
journal calls a slow tool (the extension journals the task and waits), until it is killed.
``python host_child.py URL JOURNAL SECONDS`` (in venv-sdk2)."""

from __future__ import annotations

import sys

import anyio
import mcp

from mcp_tasks_client import PollPolicy, SQLiteJournal
from mcp_tasks_client.sdk import TasksExtension


async def main(url: str, path: str, seconds: float) -> None:
    with SQLiteJournal(path) as journal:
        extension = TasksExtension(
            policy=PollPolicy(floor=0.05, jitter=0.0), journal=journal, identity=url
        )
        async with mcp.Client(url, extensions=[extension]) as host:
            print("calling", flush=True)
            await host.call_tool("slow_compute", {"label": "journaled", "seconds": seconds})
            print("finished before it was killed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]))
