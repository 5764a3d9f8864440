"""Issue 22, item 14: what the official TypeScript tasks library (ext-tasks 0.2.2) gives its
users, checked here. Headers the caller set reach every follow-up request of a task (polls,
resume included); the client's request deadline bounds the Poller's follow-ups when the caller
asks (``PollPolicy.request_timeout_from_client``); and a journaled task is bound to the
endpoint it was created on: resuming it against another server fails closed, before its id is
sent. Scripted servers on 127.0.0.1 (2026-07-28: no handshake, so every request a server
received is visible)."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    Timeouts,
    ToolCall,
)
from mcp_tasks_client.errors import RequestTimeout, UsageError
from mcp_tasks_client.journal import JournalEntry, SQLiteJournal
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.resume import client_for, resume
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
NOW = "2026-08-01T00:00:00Z"
SECRET = {"Authorization": "Bearer s3cret"}
DONE = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


def _task(task_id: str, status: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttlMs": 60000,
        "pollIntervalMs": 10,
    }
    if status == "completed":
        out["result"] = DONE
    return out


def _server() -> Any:
    """A task per call, completed at its third poll."""
    polls: dict[str, int] = {}

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"resultType": "task", **_task("t-1", "working")})
        elif request.rpc_method == "tasks/get":
            task_id = request.params["taskId"]
            polls[task_id] = polls.get(task_id, 0) + 1
            status = "completed" if polls[task_id] >= 3 else "working"
            await conn.result(request, {"resultType": "complete", **_task(task_id, status)})

    return serve


def _entry(server: str) -> JournalEntry:
    return JournalEntry(
        server=server,
        task_id="t-1",
        generation=Generation.V2026_07_28,
        protocol_version="2026-07-28",
        tool="work",
        created_at=dt.datetime(2026, 8, 1, tzinfo=dt.timezone.utc),
    )


async def test_the_clients_headers_reach_every_follow_up_of_a_started_task() -> None:
    async with HostileHTTPServer(_server()) as server:
        async with Client(
            HttpTransport(server.url, headers=SECRET),
            generation=Generation.V2026_07_28,
            client_info=INFO,
        ) as client:
            created = task_created(await client.start(ToolCall("work").as_task()))
            async with Poller(client, PollPolicy(floor=0.01, jitter=0.0)) as poller:
                outcome = await poller.wait(created)
        posts = [r for r in server.received if r.http_method == "POST"]
    assert isinstance(outcome, Completed)
    assert [r.rpc_method for r in posts].count("tasks/get") >= 3
    assert all(r.headers.get("authorization") == SECRET["Authorization"] for r in posts)


async def test_resume_sends_the_callers_headers_to_the_tasks_own_server(tmp_path: Path) -> None:
    async with HostileHTTPServer(_server()) as server:
        with SQLiteJournal(tmp_path / "j.db") as journal:
            await journal.record(_entry(server.url))

            def opener(entry: JournalEntry) -> Client:
                return client_for(entry, client_info=INFO, headers=SECRET)

            policy = PollPolicy(floor=0.01, jitter=0.0)
            (resumed,) = await resume(journal, opener, policy=policy, deadline=30)
            left = await journal.entries(open_only=True)
        posts = [r for r in server.received if r.http_method == "POST"]
    assert isinstance(resumed.ended, Completed)
    assert left == []
    assert posts
    assert all(r.headers.get("authorization") == SECRET["Authorization"] for r in posts)


async def test_resuming_against_another_endpoint_fails_closed(tmp_path: Path) -> None:
    """The opener points the client at another server: the task is reported with a
    UsageError naming both endpoints, that server receives nothing (no task id, no header),
    and the task stays open in the journal for a resume that opens the right client."""
    async with (
        HostileHTTPServer(_server()) as origin,
        HostileHTTPServer(_server()) as other,
    ):
        with SQLiteJournal(tmp_path / "j.db") as journal:
            await journal.record(_entry(origin.url))

            @contextlib.asynccontextmanager
            async def elsewhere(entry: JournalEntry) -> AsyncIterator[Client]:
                async with Client(
                    HttpTransport(other.url, headers=SECRET),
                    generation=entry.generation,
                    client_info=INFO,
                ) as client:
                    yield client

            (resumed,) = await resume(journal, elsewhere, deadline=30)
            left = await journal.entries(open_only=True)
        received = list(other.received)
    assert isinstance(resumed.ended, UsageError)
    assert origin.url in str(resumed.ended)
    assert other.url in str(resumed.ended)
    assert received == []
    assert [e.task_id for e in left] == ["t-1"]


def _slow_server(hold: dict[str, float]) -> Any:
    """A task per call; each ``tasks/get`` answered (completed) after ``hold["seconds"]``."""

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"resultType": "task", **_task("t-1", "working")})
        elif request.rpc_method == "tasks/get":
            await anyio.sleep(hold["seconds"])
            task_id = request.params["taskId"]
            await conn.result(request, {"resultType": "complete", **_task(task_id, "completed")})

    return serve


async def test_the_clients_request_deadline_bounds_the_pollers_follow_ups_when_asked() -> None:
    """Off (the default), a poll is bounded by the Poller's own ``request_timeout`` whatever
    the client's ``Timeouts.request``: a server that never answers ends the wait with
    RequestTimeout. With ``request_timeout_from_client``, the client's 60 s holds for the
    Poller's polls too: an answer that comes after the Poller's own 0.2 s ends the wait."""
    hold = {"seconds": math.inf}
    quick = PollPolicy(floor=0.01, jitter=0.0, request_timeout=0.2)
    async with (
        HostileHTTPServer(_slow_server(hold)) as server,
        Client(
            HttpTransport(server.url),
            generation=Generation.V2026_07_28,
            client_info=INFO,
            timeouts=Timeouts(request=60.0),
        ) as client,
    ):
        created = task_created(await client.start(ToolCall("work").as_task()))
        async with Poller(client, quick) as poller:
            assert poller.policy.request_timeout == 0.2
            with pytest.raises(RequestTimeout):
                await poller.wait(created)
        hold["seconds"] = 0.5
        carried = attrs.evolve(quick, request_timeout_from_client=True)
        async with Poller(client, carried) as poller:
            assert poller.policy.request_timeout == 60.0
            outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
