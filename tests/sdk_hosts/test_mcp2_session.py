"""This library's Client over a host's mcp 2.x connection (``open_client``), both generations,
against the real fastmcp 4 and mcp 1.30 servers.

Runs in venv-sdk2 (mcp 2.3, fastmcp 4.1.4): see README.md here. The host's ``mcp.Client`` (or a
fastmcp 4 client) stays the host's; this library starts, polls and answers over it.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_gen2_faults import _listen_server
from tracing_kit import assert_one_trace
from tracing_kit import spans as spans  # the fixture

from mcp_tasks_client import (
    Completed,
    Generation,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client._io.sdk_session import SdkSessionBridge
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
)
from mcp_tasks_client.sdk import SdkUnsupported, TasksExtension, open_client, sdk_session_of
from mcp_tasks_client.testing import HostileHTTPServer
from sdk_hosts.shared import RequestLogView, confirming, lines, text_of

pytestmark = pytest.mark.anyio

FAST = PollPolicy(floor=0.01, jitter=0.0)


@pytest.fixture
def logged(logged_fastmcp4: tuple[str, RequestLogView]) -> tuple[str, RequestLogView]:
    """The run's real fastmcp 4 tasks server (conftest.py here) and its request log."""
    return logged_fastmcp4


async def test_our_start_over_the_hosts_client_and_many_tasks_at_once(
    logged: tuple[str, RequestLogView],
) -> None:
    """This library's start and Poller over the host's mcp.Client: three tasks waited at
    once on the host's one connection."""
    url, _ = logged
    async with (
        mcp.Client(url, extensions=[TasksExtension(policy=FAST)]) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        started = [
            await client.start(
                ToolCall("slow_compute", {"label": str(i), "seconds": 0.5}).as_task()
            )
            for i in range(3)
        ]
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcomes = await poller.wait_all(started)  # type: ignore[arg-type]
    assert sorted(text_of(o) for o in outcomes.values()) == [
        f"computed {i} in 0.5s" for i in range(3)
    ]


async def test_a_host_without_the_extension_keeps_the_per_call_choice(
    logged: tuple[str, RequestLogView],
) -> None:
    """An mcp.Client without the extension: its own call_tool of a task-optional tool runs
    inline (the SDK declared no tasks, so the server made none), while this library's start of
    the same tool over the same connection declares the extension on that request alone and
    gets a task (E C3, E C20): the per-call opt-in of the C# and Java SDKs."""
    url, log = logged
    async with (
        mcp.Client(url) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        plain = await host.call_tool("slow_compute", {"label": "p", "seconds": 0.1})
        assert not [e for e in lines(log) if e["method"].startswith("tasks/")]
        created = await client.start(
            ToolCall("slow_compute", {"label": "t", "seconds": 0.3}).as_task()
        )
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert [b.text for b in plain.content] == ["computed p in 0.1s"]
    assert text_of(outcome) == "computed t in 0.3s"
    assert outcome.task is not None  # a task, polled: not an inline answer
    assert [e["task"] for e in lines(log) if e["method"] == "tasks/get"]


def test_mcp1_cannot_speak_the_stateless_generation() -> None:
    """Asked of an object whose SDK has no dispatcher (mcp 1.x), 2026-07-28 is refused up
    front with SdkUnsupported."""

    class V1Like:
        async def send_request(self, *args: Any) -> None: ...

        _client_info = None

    with pytest.raises(SdkUnsupported, match=r"SDK 2\.x"):
        open_client(V1Like(), generation=Generation.V2026_07_28)


async def test_mcp2_on_the_legacy_wire_routes_our_tasks_question_to_our_router(
    logged_mcp1: tuple[str, RequestLogView],
) -> None:
    """mcp 2.x speaking 2025-11-25 (mode="legacy"): the Client sends no initialize of its own,
    our task's question (related-task: ours) reaches our InputRouter, once; a question about
    no task of ours would reach the host's callback (the host's callback stays in place)."""
    url, log = logged_mcp1
    host_asked: list[str] = []

    async def host_elicits(context: Any, params: Any) -> Any:
        host_asked.append(params.message)
        return mcp.types.ElicitResult(action="decline")

    ours: list[str] = []
    async with (
        mcp.Client(url, mode="legacy", elicitation_callback=host_elicits) as host,
        open_client(host, generation=Generation.V2025_11_25) as client,
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
        async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert text_of(outcome).lower() == "confirmed=true action=accept"
    assert ours == ["Confirm: ours?"]
    assert host_asked == []
    wire = lines(log)
    assert [e["method"] for e in wire].count("initialize") == 1
    assert [e["task"] for e in wire if e["method"] == "response"] == [task_id]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # fastmcp's client is asyncio-only
async def test_a_fastmcp4_clients_session_carries_our_tasks(
    logged: tuple[str, RequestLogView],
) -> None:
    """fastmcp 4 wraps an mcp 2.3 ClientSession: this library's start, input answer and wait
    over the fastmcp client's connection (2026-07-28), the input answered once."""
    from fastmcp import Client as FastMCPClient

    url, log = logged
    answers: list[str] = []

    async def host_elicits(message: str, response_type: Any, params: Any, context: Any) -> Any:
        raise AssertionError("a task's question reached the host's handler")

    async with (
        FastMCPClient(url, elicitation_handler=host_elicits) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        router = confirming(answers)(client)
        router.attach(client)
        created = await client.start(ToolCall("confirm_delete", {"filename": "b.txt"}).as_task())
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
        tools = await host.list_tools()
    assert isinstance(outcome, Completed), outcome
    assert outcome.task is not None
    assert len(answers) == 1
    updates = [e for e in lines(log) if e["method"] == "tasks/update"]
    assert [e["task"] for e in updates] == answers
    assert "slow_compute" in {t.name for t in tools}


async def test_one_trace_per_task_over_the_hosts_client(
    logged: tuple[str, RequestLogView], spans: InMemorySpanExporter
) -> None:
    """With tracing on, a task started and waited over the host's mcp.Client is one trace."""
    url, _ = logged
    async with (
        mcp.Client(url) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        created = await client.start(
            ToolCall("slow_compute", {"label": "t", "seconds": 0.5}).as_task()
        )
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
    assert text_of(outcome) == "computed t in 0.5s"
    life = assert_one_trace(spans, outcome.task.task_id)  # type: ignore[union-attr]
    assert dict(life.attributes or {})["mcp_tasks.outcome"] == "Completed"


async def test_a_listen_over_the_sdk_is_refused_and_the_task_is_polled(
    logged: tuple[str, RequestLogView],
) -> None:
    """PollPolicy(listen=True) over the host's session: the SDK would drop the pushed
    notifications, so the transport refuses the listen with SdkUnsupported (a warning, never
    silent) and the Poller polls the task to its end."""
    url, log = logged
    async with (
        mcp.Client(url) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        created = await client.start(
            ToolCall("slow_compute", {"label": "l", "seconds": 0.5}).as_task()
        )
        async with Poller(client, PollPolicy(floor=0.01, jitter=0.0, listen=True)) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(created)
            warnings = list(poller.warnings)
    assert text_of(outcome) == "computed l in 0.5s"
    assert any(isinstance(w, SdkUnsupported) for w in warnings), warnings
    assert [e for e in lines(log) if e["method"] == "tasks/get"]


async def test_with_the_extension_a_listen_is_carried_and_pushes_arrive() -> None:
    """E C39-C44 through the real SDK: with a TasksExtension on the SDK client (whose binding
    takes the notifications/tasks the SDK would drop, and whose acknowledgement reaches the
    Poller through the host's message handler), PollPolicy(listen=True) over the host's client
    opens a listen and the task's end arrives pushed, long before its next poll. No bundled
    peer serves subscriptions/listen (fastmcp 4.1.4 answers -32601), so the server is the
    scripted one of tests/test_gen2_faults.py: the SDK side is what is under test."""
    listens: list[list[str]] = []
    extension = TasksExtension(policy=FAST)
    async with (
        HostileHTTPServer(_listen_server(listens, acknowledge=True)) as server,
        mcp.Client(server.url, mode="2026-07-28", extensions=[extension]) as host,
        open_client(host, generation=Generation.V2026_07_28) as client,
    ):
        created = await client.start(ToolCall("t-1").as_task())
        # What the clients over this SDK session share is kept on the session (its bridge),
        # bound to the extension while a push-taking client is open: no module state.
        bridge = SdkSessionBridge.of(sdk_session_of(host))
        assert list(extension.bridges) == [bridge]
        assert len(bridge.pushing) == 1  # this client's transport
        async with Poller(client, PollPolicy(jitter=0.0, listen=True)) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created)
            warnings = list(poller.warnings)
        gets = [m for m in server.rpc_methods() if m == "tasks/get"]
    assert list(extension.bridges) == []  # let go once the client closed
    assert bridge.pushing == []
    assert isinstance(outcome, Completed), outcome
    assert listens == [["t-1"]]
    assert len(gets) <= 1, gets  # the first poll at most: the outcome came pushed
    assert not warnings, warnings
