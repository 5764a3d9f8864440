"""Tasks for a host on mcp 2.x (2026-07-28) against the real fastmcp 4 tasks server.

Runs in venv-sdk2 (mcp 2.3, fastmcp 4.1.4): see README.md here. Two entry points: the
extension way (``mcp.Client(url, extensions=[TasksExtension(...)])``, the host calls its own
``call_tool``) and this library's Client over the host's ``mcp.Client``. The server's request
log shows what went over the wire.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tracing_kit import assert_one_trace
from tracing_kit import spans as spans  # the fixture

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    SQLiteJournal,
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
from mcp_tasks_client.sdk import SdkUnsupported, TasksExtension, open_client
from mcp_tasks_client.testing import FaultServer
from sdk_hosts.shared import lines, logged_peer, text_of

pytestmark = pytest.mark.anyio

FAST = PollPolicy(floor=0.01, jitter=0.0)


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A real fastmcp 4 tasks server of this test's own, logging the requests it receives."""
    with logged_peer("fastmcp4", tmp_path, monkeypatch) as served:
        yield served


def confirming(answers: list[str]) -> Any:
    """The input router a TasksExtension makes for each task's client: it answers the
    ``confirm`` key of any task it is bound to, once."""

    def make(client: Client) -> InputRouter:
        router = InputRouter(elicitation=ElicitationCapability(form={}))

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert ctx.task_id is not None
            answers.append(ctx.task_id)
            return ElicitResult(ElicitAction.ACCEPT, {"confirm": True})

        router.default_elicitation(accept)
        return router

    return make


async def test_the_extension_drives_a_claimed_task_to_the_hosts_call_tool_result(
    logged: tuple[str, Path],
) -> None:
    """E C16-C18, E C24, E C58: the host's own call_tool returns the task's result; every
    tasks/get names the task in Mcp-Name, none sooner than pollIntervalMs after the last; no
    initialize on the stateless wire."""
    url, log = logged
    extension = TasksExtension(policy=FAST)
    async with mcp.Client(url, extensions=[extension]) as host:
        result = await host.call_tool("slow_compute", {"label": "a", "seconds": 1.0})
    assert not result.is_error
    assert [b.text for b in result.content] == ["computed a in 1.0s"]
    assert extension.resolved == 1
    wire = lines(log)
    gets = [e for e in wire if e["method"] == "tasks/get"]
    assert len(gets) >= 2
    assert all(e["mcp_name"] == e["task"] for e in gets)
    times = [e["t"] for e in gets]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.1 - 0.01, gaps  # the server's pollIntervalMs: 100
    assert not [e for e in wire if e["method"] == "initialize"]


async def test_the_extension_answers_a_tasks_input_once_through_the_router(
    logged: tuple[str, Path],
) -> None:
    """E C28-C33: the task's inputRequests key is answered once, by the handler the host gave,
    with tasks/update naming the task in Mcp-Name."""
    url, log = logged
    answers: list[str] = []
    extension = TasksExtension(policy=FAST, inputs=confirming(answers))

    async def host_elicits(context: Any, params: Any) -> Any:  # the host's own (plain calls)
        raise AssertionError("a task's question reached the host's callback")

    async with mcp.Client(url, extensions=[extension], elicitation_callback=host_elicits) as host:
        with anyio.fail_after(30):
            result = await host.call_tool("confirm_delete", {"filename": "a.txt"})
    assert not result.is_error, result
    assert len(answers) == 1
    updates = [e for e in lines(log) if e["method"] == "tasks/update"]
    assert [(e["task"], len(e["keys"])) for e in updates] == [(answers[0], 1)]
    assert updates[0]["mcp_name"] == answers[0]


async def test_a_claimed_task_becomes_our_handle_and_a_deadline_cancels_it(
    logged: tuple[str, Path],
) -> None:
    """allow_claimed=True hands the host the claimed task; read_created makes it this
    library's handle; a wait past its deadline with cancel_on_abandon sends one tasks/cancel."""
    url, log = logged
    async with mcp.Client(url, extensions=[TasksExtension(policy=FAST)]) as host:
        claimed = await host.session.call_tool(
            "slow_compute", {"label": "b", "seconds": 30}, allow_claimed=True
        )
        async with open_client(host, generation=Generation.V2026_07_28) as client:
            created = client.read_created(claimed.model_dump(by_alias=True, mode="json"))
            policy = PollPolicy(floor=0.05, jitter=0.0, cancel_on_abandon=True)
            async with Poller(client, policy) as poller:
                with pytest.raises(DeadlineExceeded):
                    await poller.wait(created, deadline=0.5)
    cancels = [e for e in lines(log) if e["method"] == "tasks/cancel"]
    assert [(e["task"], e["mcp_name"]) for e in cancels] == [(created.task.task_id,) * 2]


async def test_our_start_over_the_hosts_client_and_many_tasks_at_once(
    logged: tuple[str, Path],
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
    logged: tuple[str, Path],
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


@pytest.fixture
def logged_mcp1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A real mcp 1.30 (2025-11-25) server of this test's own, logging its requests."""
    with logged_peer("mcp1", tmp_path, monkeypatch) as served:
        yield served


async def test_mcp2_on_the_legacy_wire_routes_our_tasks_question_to_our_router(
    logged_mcp1: tuple[str, Path],
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
async def test_a_fastmcp4_clients_session_carries_our_tasks(logged: tuple[str, Path]) -> None:
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


async def test_a_journaled_claimed_task_survives_kill_9_and_is_resumed_over_another_host(
    logged: tuple[str, Path], tmp_path: Path
) -> None:
    """A host process whose TasksExtension journals its task is killed with SIGKILL while the
    task runs; a new host (this process, its own mcp.Client) resumes it from the journal over
    its SDK connection and gets the result; the journal records the outcome."""
    url, log = logged
    path = tmp_path / "tasks.db"
    child = subprocess.Popen(  # noqa: ASYNC220 - killed by its pid, waited below
        [sys.executable, str(Path(__file__).with_name("host_child.py")), url, str(path), "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        with anyio.fail_after(30):
            assert child.stdout is not None
            said = await anyio.to_thread.run_sync(child.stdout.readline)
            assert said == b"calling\n", child.communicate()
            while True:  # the journal exists now: wait until the task is in it
                with SQLiteJournal(path) as journal:
                    if await journal.entries(open_only=True):
                        break
                assert child.poll() is None, child.communicate()
                await anyio.sleep(0.1)
    finally:
        child.kill()  # SIGKILL: nothing of the host's runs after this
        child.wait()
    with SQLiteJournal(path) as journal:
        (entry,) = await journal.entries(open_only=True)
        assert entry.server == url
        async with mcp.Client(url) as host:
            with anyio.fail_after(30):
                resumed = await resume(
                    journal,
                    lambda e: open_client(host, generation=e.generation, identity=url),
                    policy=FAST,
                )
        assert not await journal.entries(open_only=True)
    (only,) = resumed
    assert only.entry.task_id == entry.task_id
    assert text_of(only.ended) == "computed journaled in 4.0s"
    assert {e["task"] for e in lines(log) if e["method"] == "tasks/get"} == {entry.task_id}


async def test_one_trace_per_task_over_the_hosts_client(
    logged: tuple[str, Path], spans: InMemorySpanExporter
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


def test_the_docs_example_for_the_extension_runs(logged: tuple[str, Path]) -> None:
    """examples/sdk_extension.py (docs/sdk-hosts.md) against the real fastmcp 4 server."""
    url, _ = logged
    run = subprocess.run(
        [sys.executable, str(Path(__file__).parents[2] / "examples" / "sdk_extension.py"), url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "slow_compute: ['computed report in 1.0s']" in run.stdout
    assert "asks: " in run.stdout
    assert "tasks driven by this library: 2" in run.stdout


async def test_a_listen_over_the_sdk_is_refused_and_the_task_is_polled(
    logged: tuple[str, Path],
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


async def test_the_suites_spec_faithful_server_through_the_extension() -> None:
    """The suite's own 2026-07-28 server (FaultServer, no rule broken, over HTTP on 127.0.0.1)
    through the extension: a task-only tool's result, a task's two questions each answered
    once by tasks/update, and a task that never ends cut at the extension's deadline with one
    tasks/cancel."""
    server = FaultServer(Generation.V2026_07_28)
    answers: list[str] = []
    async with server.http() as http:
        extension = TasksExtension(policy=FAST, inputs=confirming(answers))

        async def host_elicits(context: Any, params: Any) -> Any:
            raise AssertionError("a task's question reached the host's callback")

        async with mcp.Client(
            http.url, extensions=[extension], elicitation_callback=host_elicits
        ) as host:
            done = await host.call_tool("need_task", {"text": "faithful"})
            asked = await host.call_tool("ask", {"text": "two questions"})
            stuck = TasksExtension(
                policy=FAST, deadline=dt.timedelta(seconds=0.5), cancel_on_abandon=True
            )
        async with mcp.Client(http.url, extensions=[stuck]) as other:
            with pytest.raises(DeadlineExceeded):
                await other.call_tool("slow", {"text": "never"})
    assert [b.text for b in done.content] == ["faithful"]
    assert not asked.is_error, asked
    assert len(answers) == 2  # q1, then q2: each key once
    updates = [m for m in server.received if m.get("method") == "tasks/update"]
    assert [sorted(m["params"]["inputResponses"]) for m in updates] == [["q1"], ["q2"]]
    cancels = [m for m in server.received if m.get("method") == "tasks/cancel"]
    assert len(cancels) == 1
