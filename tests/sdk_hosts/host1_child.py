"""A host process for the 2025-11-25 SDK-host journal test: an mcp 1.x ClientSession, this
library's client over it with a journal; starts one task, says so, waits until it is killed.
``python host1_child.py URL JOURNAL SECONDS`` (in venv-sdk1)."""

from __future__ import annotations

import datetime as dt
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from mcp_tasks_client import Generation, Poller, PollPolicy, SQLiteJournal, ToolCall
from mcp_tasks_client.models import CreateTaskResult
from mcp_tasks_client.sdk import open_client


async def main(url: str, path: str, seconds: float) -> None:
    with SQLiteJournal(path) as journal:
        async with (
            streamablehttp_client(url, terminate_on_close=False) as (read, write, session_id),
            ClientSession(read, write) as session,
        ):
            agreed = await session.initialize()
            async with open_client(
                session,
                generation=Generation.V2025_11_25,
                initialize_result=agreed,
                identity=url,
                session_id=session_id(),
            ) as client:
                call = ToolCall("slow_echo", {"text": "journaled", "seconds": seconds})
                started = await client.start(
                    call.as_task(ttl=dt.timedelta(minutes=5)), journal=journal
                )
                assert isinstance(started, CreateTaskResult)
                async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), journal=journal) as p:
                    print(f"waiting {started.task.task_id}", flush=True)
                    await p.wait(started)
                    print("finished before it was killed", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]))
