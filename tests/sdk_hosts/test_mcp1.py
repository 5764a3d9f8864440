"""Tasks over a host's mcp 1.x ClientSession (2025-11-25) against the real mcp 1.30 server.

Runs in venv-sdk1 (mcp 1.30, fastmcp 3.4.11): see README.md here. Each test opens the host's
connection the way a host does (the SDK's streamable HTTP client, its own ClientSession with
its own elicitation callback, ``initialize``), then this library's Client over it, and checks
on the server's own request log what went over the wire.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tracing_kit import assert_one_trace
from tracing_kit import spans as spans  # the fixture

from mcp_tasks_client import (
    Generation,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    SQLiteJournal,
    TaskReceiver,
    ToolCall,
    resume,
)
from mcp_tasks_client.errors import DeadlineExceeded
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
from mcp_tasks_client.sdk import SdkUnsupported, open_client
from sdk_hosts.shared import RequestLogView, lines, text_of

pytestmark = pytest.mark.anyio

FAST = PollPolicy(floor=0.05, jitter=0.0)
EXAMPLES = Path(__file__).parents[2] / "examples"
RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture
def logged(logged_mcp1: tuple[str, RequestLogView]) -> tuple[str, RequestLogView]:
    """The run's real mcp 1.30 server (conftest.py here), logging the requests it receives."""
    return logged_mcp1


class Host:
    """What an agent host holds: an SDK session with its own elicitation callback."""

    def __init__(self) -> None:
        self.asked: list[tuple[str | None, str]] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        meta = params.meta.model_dump(by_alias=True) if params.meta is not None else {}
        related = (meta.get(RELATED) or {}).get("taskId")
        self.asked.append((related, params.message))
        return types.ElicitResult(action="accept", content={"ok": False})

    @asynccontextmanager
    async def session(
        self, url: str
    ) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
        async with (
            streamablehttp_client(url) as (read, write, _),
            ClientSession(read, write, elicitation_callback=self.elicit) as session,
        ):
            agreed = await session.initialize()
            yield session, agreed


async def test_our_tasks_question_reaches_our_router_and_the_hosts_reaches_its_callback(
    logged: tuple[str, RequestLogView],
) -> None:
    """One connection, two tasks that ask: the one this library follows is answered by its
    InputRouter, the host's own (started with the SDK's experimental API) by the host's
    callback; each answered once (C-25, T:470), and one initialize on the connection."""
    url, log = logged
    host = Host()
    ours: list[str] = []
    async with (
        host.session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        router = InputRouter(elicitation=ElicitationCapability(form={}))
        router.attach(client)
        created = await client.start(ToolCall("confirm", {"text": "ours"}).as_task())
        task_id = created.task.task_id  # type: ignore[union-attr]

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert ctx.task_id == task_id
            ours.append(params.message)
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

        router.on_elicitation(task_id, accept)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 1.30's experimental API
            theirs = await session.experimental.call_tool_as_task("confirm", {"text": "theirs"})
            their_id = theirs.task.taskId

            async def host_waits() -> types.CallToolResult:
                return await session.experimental.get_task_result(their_id, types.CallToolResult)

        async with anyio.create_task_group() as group:
            their_result: list[types.CallToolResult] = []

            async def run_host() -> None:
                their_result.append(await host_waits())

            group.start_soon(run_host)
            async with Poller(client, FAST, inputs=router) as poller:
                with anyio.fail_after(30):
                    outcome = await poller.wait(created)
    assert text_of(outcome).lower() == "confirmed=true action=accept"
    assert ours == ["Confirm: ours?"]
    assert host.asked == [(their_id, "Confirm: theirs?")]
    their_text = " ".join(b.text for b in their_result[0].content if b.type == "text")
    assert their_text.lower() == "confirmed=false action=accept"
    wire = lines(log)
    assert [e["method"] for e in wire].count("initialize") == 1
    answers = [e for e in wire if e["method"] == "response"]
    assert len(answers) == 2  # one answer each; ours echoes the related-task (C-25)
    assert [e["task"] for e in answers].count(task_id) == 1


async def test_polls_honour_the_tasks_poll_interval_on_the_wire(
    logged: tuple[str, RequestLogView],
) -> None:
    """T:480: no tasks/get sooner than the task's pollInterval after the last one (the
    server's arrival times; the Poller schedules from the answer, so a late arrival cannot
    make the next gap shorter)."""
    url, log = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        created = await client.start(ToolCall("slow_echo", {"text": "x", "seconds": 1.5}).as_task())
        interval = created.task.poll_interval  # type: ignore[union-attr]
        async with Poller(client, PollPolicy(floor=0.01, jitter=0.0)) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert text_of(outcome) == "echo (task): x"
    assert interval is not None
    gets = [e["t"] for e in lines(log) if e["method"] == "tasks/get"]
    assert len(gets) >= 2
    gaps = [b - a for a, b in itertools.pairwise(gets)]
    assert min(gaps) >= interval / 1000 - 0.01, (interval, gaps)


async def test_the_deadline_then_cancel(logged: tuple[str, RequestLogView]) -> None:
    """A wait that passes its deadline raises DeadlineExceeded and leaves the task running
    (nothing is cancelled unasked); an explicit cancel over the host's session sends one
    tasks/cancel and the task ends cancelled on the server (C-41)."""
    url, log = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        created = await client.start(ToolCall("slow_echo", {"text": "x", "seconds": 30}).as_task())
        task_id = created.task.task_id  # type: ignore[union-attr]
        async with Poller(client, FAST) as poller:
            with pytest.raises(DeadlineExceeded):
                await poller.wait(created, deadline=0.5)
        assert (await client.get_task(task_id)).status.value == "working"
        cancelled = await client.cancel_task(task_id)
        after = await client.get_task(task_id)
    assert cancelled is not None
    assert cancelled.status.value == "cancelled"
    assert after.status.value == "cancelled"
    cancels = [e for e in lines(log) if e["method"] == "tasks/cancel"]
    assert [e["task"] for e in cancels] == [task_id]


async def test_a_deadline_with_cancel_on_abandon_cancels_the_task_once(
    logged: tuple[str, RequestLogView],
) -> None:
    """With cancel_on_abandon the wait that passes its deadline sends one tasks/cancel, in the
    same instant as a poll (the poll interval and the deadline coincide): mcp 1.x's HTTP client
    loses one of two requests written at once unless the transport writes one at a time."""
    url, log = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        task_ids = []
        for _ in range(3):
            created = await client.start(
                ToolCall("slow_echo", {"text": "x", "seconds": 30}).as_task()
            )
            task_ids.append(created.task.task_id)  # type: ignore[union-attr]
            policy = PollPolicy(floor=0.05, jitter=0.0, cancel_on_abandon=True)
            async with Poller(client, policy) as poller:
                with pytest.raises(DeadlineExceeded):
                    await poller.wait(created, deadline=0.5)
            after = await client.get_task(task_ids[-1])
            assert after.status.value == "cancelled"
    cancels = [e["task"] for e in lines(log) if e["method"] == "tasks/cancel"]
    assert cancels == task_ids


async def test_many_tasks_at_once_on_the_hosts_one_connection(
    logged: tuple[str, RequestLogView],
) -> None:
    """Eight tasks waited at once: the Poller's concurrent polls over the host's session all
    get their answers, and every task its result."""
    url, log = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        started = [
            await client.start(ToolCall("slow_echo", {"text": str(i), "seconds": 1.0}).as_task())
            for i in range(8)
        ]
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(60):
                outcomes = await poller.wait_all(started)  # type: ignore[arg-type]
    assert sorted(text_of(o) for o in outcomes.values()) == sorted(
        f"echo (task): {i}" for i in range(8)
    )
    assert [e["method"] for e in lines(log)].count("initialize") == 1


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # fastmcp's client is asyncio-only
async def test_a_fastmcp3_clients_session_carries_our_tasks(
    logged: tuple[str, RequestLogView],
) -> None:
    """fastmcp 3 wraps an mcp 1.30 ClientSession: open_client over the fastmcp client (its
    session, its initialize result), our task's question to our router, the host's own
    question handler left in place, one initialize. (fastmcp's client starts its session with
    asyncio.create_task: it runs on asyncio only, whatever this library runs on.)"""
    from fastmcp import Client as FastMCPClient

    url, log = logged
    host_asked: list[str] = []

    async def host_elicits(message: str, response_type: Any, params: Any, context: Any) -> Any:
        host_asked.append(message)
        return {"ok": False}

    ours: list[str] = []
    async with FastMCPClient(url, elicitation_handler=host_elicits) as host:
        async with open_client(
            host, generation=Generation.V2025_11_25, initialize_result=host.initialize_result
        ) as client:
            router = InputRouter(elicitation=ElicitationCapability(form={}))
            router.attach(client)
            created = await client.start(ToolCall("confirm", {"text": "fast"}).as_task())
            task_id = created.task.task_id  # type: ignore[union-attr]

            async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
                ours.append(params.message)
                return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

            router.on_elicitation(task_id, accept)
            async with Poller(client, FAST, inputs=router) as poller:
                with anyio.fail_after(30):
                    outcome = await poller.wait(created)
        tools = await host.list_tools()  # the host's connection still serves the host
    assert text_of(outcome).lower() == "confirmed=true action=accept"
    assert ours == ["Confirm: fast?"]
    assert host_asked == []
    assert "confirm" in {t.name for t in tools}
    assert [e["method"] for e in lines(log)].count("initialize") == 1


async def test_one_trace_per_task_over_the_hosts_session(
    logged: tuple[str, RequestLogView], spans: InMemorySpanExporter
) -> None:
    """With tracing on, a task started and waited over the host's session is one trace: its
    call and every poll hang under the task's span."""
    url, _ = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        created = await client.start(ToolCall("slow_echo", {"text": "t", "seconds": 1.0}).as_task())
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert text_of(outcome) == "echo (task): t"
    life = assert_one_trace(spans, created.task.task_id)  # type: ignore[union-attr]
    assert dict(life.attributes or {})["mcp_tasks.outcome"] == "Completed"


def test_the_docs_example_for_an_mcp1_session_runs(logged: tuple[str, RequestLogView]) -> None:
    """examples/sdk_session.py (docs/sdk-hosts.md) against the real mcp 1.30 server."""
    url, log = logged
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "sdk_session.py"), url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "asks: Confirm: ship it? -> yes" in run.stdout
    assert "confirm: ['confirmed=True action=accept']" in run.stdout
    assert "the host's session lists" in run.stdout
    assert [e["method"] for e in lines(log)].count("initialize") == 1


async def test_what_the_sdk_answers_itself_is_refused_up_front(
    logged: tuple[str, RequestLogView],
) -> None:
    """The client as a task receiver (tasks/* from the server) and roots/list are answered by
    the SDK on its session: registering a handler for them raises SdkUnsupported at once,
    instead of waiting for requests that never come."""
    url, _ = logged
    async with (
        Host().session(url) as (session, agreed),
        open_client(session, generation=Generation.V2025_11_25, initialize_result=agreed) as client,
    ):
        receiving = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())
        with pytest.raises(SdkUnsupported, match="tasks/"):
            receiving.attach(client)
        with pytest.raises(SdkUnsupported, match="roots/list"):
            client.on_request("roots/list", lambda request: None)  # type: ignore[arg-type,return-value]


async def test_a_journaled_task_survives_kill_9_and_is_resumed_on_its_session_by_a_new_host(
    logged: tuple[str, RequestLogView], tmp_path: Path
) -> None:
    """T:3.1: a 2025-11-25 task is bound to its session. A host process journals its task (with
    the connection's Mcp-Session-Id) and is killed with SIGKILL; a new host opens its SDK
    connection with that session id and no initialize, and resume follows the task to its
    result over it. One initialize on the wire in all: the first host's."""
    url, log = logged
    path = tmp_path / "tasks.db"
    child = subprocess.Popen(  # noqa: ASYNC220 - killed by its pid, waited below
        [sys.executable, str(Path(__file__).with_name("host1_child.py")), url, str(path), "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with anyio.fail_after(30):
            assert child.stdout is not None
            said = await anyio.to_thread.run_sync(child.stdout.readline)
            assert said.startswith(b"waiting "), child.communicate()
    finally:
        child.kill()  # SIGKILL: nothing of the host's runs after this
        child.wait()
    with SQLiteJournal(path) as journal:
        (entry,) = await journal.entries(open_only=True)
        assert entry.session is not None
        headers = {"mcp-session-id": entry.session.session_id}
        async with (
            streamablehttp_client(url, headers=headers) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(30):
                resumed = await resume(
                    journal,
                    lambda e: open_client(
                        session,
                        generation=e.generation,
                        identity=url,
                        initialize_result=e.session.initialize if e.session else None,
                        session_id=e.session.session_id if e.session else None,
                    ),
                    policy=FAST,
                )
        assert not await journal.entries(open_only=True)
    (only,) = resumed
    assert only.entry.task_id == entry.task_id
    assert text_of(only.ended) == "echo (task): journaled"
    assert [e["method"] for e in lines(log)].count("initialize") == 1
