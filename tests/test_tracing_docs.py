"""The span tree in ``docs/tracing.md`` is the one a real run makes: one task started in a
caller's span on mcp 1.30 over HTTP that asks a question (start, polls, input, outcome), and one
left open by its client and followed by ``resume`` (the resumed span under the recorded one).
Rendered with ``span_tree.mermaid`` from the in-memory exporter; the docs hold that text."""

from __future__ import annotations

import datetime as dt
import functools
import re
from pathlib import Path

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_tree import mermaid
from tracing_kit import spans as spans  # the fixture

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    SQLiteJournal,
    ToolCall,
    client_for,
    resume,
)
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.observability import _Tracing

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parent.parent / "docs" / "tracing.md"
INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one picture; the tracing tests cover both loops


async def one_task_with_a_question(url: str) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})

    router.default_elicitation(accept)
    client = Client(
        HttpTransport(url),
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    async with client:
        router.attach(client)
        async with Poller(client, FAST, inputs=router) as poller:
            with _Tracing.tracer.start_as_current_span("agent.turn"):
                call = ToolCall("confirm", {"text": "go"}).as_task(ttl=dt.timedelta(minutes=1))
                created = await client.start(call)
                assert isinstance(created, CreateTaskResult)
            assert isinstance(await poller.wait(created), Completed)


async def one_task_resumed(url: str, path: Path) -> None:
    with SQLiteJournal(path) as journal:
        transport = HttpTransport(url, delete_session_on_close=False)
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
            with _Tracing.tracer.start_as_current_span("agent.turn"):
                call = ToolCall("slow_echo", {"text": "later", "seconds": 0.5}).as_task()
                await c.start(call, journal=journal)
        # (here the process would end, or be killed)
        opener = functools.partial(client_for, client_info=INFO)
        [resumed] = await resume(journal, opener, policy=FAST)
        assert isinstance(resumed.ended, Completed)


def documented(title: str) -> str:
    """The mermaid block after ``title``'s heading in the docs."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(re.escape(title) + r".*?```mermaid\n(.*?)```", text, re.DOTALL)
    assert found is not None, title
    return found.group(1).strip()


async def test_the_docs_show_the_tree_a_task_makes(
    mcp1_http_url: str, spans: InMemorySpanExporter
) -> None:
    with anyio.fail_after(60):
        await one_task_with_a_question(mcp1_http_url)
    traces: dict[int, list[object]] = {}
    for span in spans.get_finished_spans():
        assert span.context is not None
        traces.setdefault(span.context.trace_id, []).append(span)
    (turn,) = [s for s in spans.get_finished_spans() if s.name == "agent.turn"]
    assert turn.context is not None
    drawn = mermaid(traces[turn.context.trace_id])  # type: ignore[arg-type]
    print(drawn)
    assert drawn == documented("### One task: start, polls, input, outcome")


async def test_the_docs_show_the_tree_a_resumed_task_makes(
    mcp1_http_url: str, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        await one_task_resumed(mcp1_http_url, tmp_path / "journal.db")
    (turn,) = [s for s in spans.get_finished_spans() if s.name == "agent.turn"]
    assert turn.context is not None
    trace_id = turn.context.trace_id
    mine = [s for s in spans.get_finished_spans() if s.context and s.context.trace_id == trace_id]
    drawn = mermaid(mine)
    print(drawn)
    assert drawn == documented("### Resumed")
