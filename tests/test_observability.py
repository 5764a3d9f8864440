"""Logging and tracing against a real peer (mcp 1.30 over HTTP): the records and spans of one
task's life (start, poll, input, outcome); the redaction switch hides every task id in both;
without opentelemetry the library imports nothing of it and works as before."""

from __future__ import annotations

import ast
import datetime as dt
import logging
import pathlib
import sys
from collections.abc import Iterator

import anyio
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
    observability,
)
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.observability import _scrub, _Tracing

pytestmark = pytest.mark.anyio

ROOT = pathlib.Path(__file__).resolve().parent.parent
INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Spans on, to an in-memory exporter of a provider of the test's own (the global one is
    left alone); the process's tracing and redaction state restored after."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = (_Tracing.decided, _Tracing.tracer)
    observability.tracing(True, tracer_provider=provider)
    try:
        yield exporter
    finally:
        _Tracing.decided, _Tracing.tracer = saved
        observability.redact_task_ids(False)
        provider.shutdown()


async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})


async def one_task_life(url: str, router: InputRouter) -> tuple[str, object]:
    """Start mcp 1.30's ``confirm`` (it elicits inside the task), poll it to its outcome."""
    client = Client(
        HttpTransport(url),
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    with anyio.fail_after(30):
        async with client:
            router.attach(client)
            async with Poller(client, FAST, inputs=router) as poller:
                created = task_created(
                    await client.start(
                        ToolCall("confirm", {"text": "go"}).as_task(ttl=dt.timedelta(minutes=1))
                    )
                )
                outcome = await poller.wait(created, deadline=dt.timedelta(seconds=20))
    return created.task.task_id, outcome


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        named.setdefault(span.name, []).append(span)
    return named


def records(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


async def test_the_spans_and_records_of_one_task(
    mcp1_http_url: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_tasks_client")
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.default_elicitation(accept)
    task_id, outcome = await one_task_life(mcp1_http_url, router)
    assert isinstance(outcome, Completed)
    named = by_name(spans)

    # Requests: CLIENT spans named by method (a tool call by its tool), MCP semconv names.
    (start,) = named["tools/call confirm"]
    assert start.kind is SpanKind.CLIENT
    attrs = dict(start.attributes or {})
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.tool.name"] == "confirm"
    assert attrs["mcp.protocol.version"] == "2025-11-25"
    assert attrs["mcp_tasks.generation"] == Generation.V2025_11_25.value
    assert attrs["mcp_tasks.task.id"] == task_id  # the task the call created
    assert "jsonrpc.request.id" in attrs
    for method in ("initialize", "tasks/get", "tasks/result"):
        assert named[method], method
    for poll in named["tasks/get"]:
        assert dict(poll.attributes or {})["mcp_tasks.task.id"] == task_id

    # The task's lifecycle: one span from tracking to outcome.
    (life,) = named["mcp_tasks.task"]
    life_attrs = dict(life.attributes or {})
    assert life_attrs["mcp_tasks.task.id"] == task_id
    assert life_attrs["mcp_tasks.outcome"] == "Completed"
    assert life_attrs["mcp_tasks.task.status"] == "completed"
    assert life.start_time is not None
    assert start.end_time is not None
    assert start.start_time is not None
    assert life.start_time <= start.start_time  # begun at start(), the call under it
    assert start.parent is not None
    assert start.parent.span_id == life.context.span_id

    # The input handler's call, tied to its task.
    (asked,) = named["mcp_tasks.input"]
    asked_attrs = dict(asked.attributes or {})
    assert asked_attrs["mcp.method.name"] == "elicitation/create"
    assert asked_attrs["mcp_tasks.task.id"] == task_id

    # Records: one per request (method, id, elapsed, outcome), the task's life.
    requests = records(caplog, "mcp_tasks_client.client")
    assert any(m.startswith("tools/call (id ") and m.endswith(": result") for m in requests)
    assert any(m.startswith("tasks/get (id ") and f"task {task_id}" in m for m in requests)
    life_records = records(caplog, "mcp_tasks_client.poller")
    assert f"tracking task {task_id} (working)" in life_records
    assert f"task {task_id}: working -> input_required" in life_records
    assert f"task {task_id}: Completed (completed)" in life_records
    (ended,) = [
        r
        for r in caplog.records
        if r.name == "mcp_tasks_client.poller" and "Completed" in r.getMessage()
    ]
    assert ended.levelno == logging.INFO


async def test_redaction_hides_every_task_id(
    mcp1_http_url: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    """With the switch on, no record (message or traceback) and no span carries the raw id;
    its stable hash does, so the records of one task still correlate. The input handler here
    raises with the task id in its message: the traceback is scrubbed too."""
    observability.redact_task_ids(True)
    caplog.set_level(logging.DEBUG, logger="mcp_tasks_client")

    async def leaky(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        raise RuntimeError(f"cannot confirm task {ctx.task_id}")

    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.default_elicitation(leaky)
    task_id, _ = await one_task_life(mcp1_http_url, router)

    label = observability.task_id_label(task_id)
    assert label != task_id
    assert label.startswith("task-")
    assert label == observability.task_id_label(task_id)  # stable
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "cannot confirm task" in text  # the traceback was logged, scrubbed
    assert task_id not in text
    assert label in text
    seen_label = False
    for span in spans.get_finished_spans():
        assert task_id not in span.name
        for value in (span.attributes or {}).values():
            assert task_id not in str(value), (span.name, span.attributes)
            seen_label = seen_label or value == label
        for event in span.events:
            assert task_id not in str(event.attributes)
        assert span.status.description is None or task_id not in span.status.description
    assert seen_label


async def test_without_opentelemetry_the_library_works(mcp1_http_url: str) -> None:
    """opentelemetry blocked (``sys.modules[...] = None``): spans are off, a task runs to its
    outcome with DEBUG logging on; and even installed, ``import mcp_tasks_client`` imports
    none of it."""
    blocked = """
import sys
for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.context"):
    sys.modules[name] = None
import logging, datetime as dt, anyio
from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
    observability,
)
from mcp_tasks_client.models import Implementation
logging.basicConfig(level=logging.DEBUG)

async def main():
    client = Client(HttpTransport(sys.argv[1]), generation=Generation.V2025_11_25,
        client_info=Implementation("t", "0"))
    with anyio.fail_after(30):
        async with client:
            assert observability.tracer() is None
            created = await client.start(
                ToolCall("slow_echo", {"text": "hi", "seconds": 0.1}).as_task())
            async with Poller(client, PollPolicy(floor=0.05, jitter=0.0)) as poller:
                assert isinstance(await poller.wait(created), Completed)
    print("ok")

anyio.run(main)
"""
    lazy = """
import sys, mcp_tasks_client
assert not [m for m in sys.modules if m.startswith("opentelemetry")], "imported at import"
mcp_tasks_client.observability.tracer()
assert "opentelemetry.trace" in sys.modules
print("ok")
"""
    with anyio.fail_after(60):
        ran = await anyio.run_process(
            [sys.executable, "-c", blocked, mcp1_http_url], cwd=ROOT, check=False
        )
        assert ran.returncode == 0, ran.stderr.decode()
        assert ran.stdout.decode().strip() == "ok"
        assert b"tools/call (id " in ran.stderr  # the DEBUG record of the request
        ran = await anyio.run_process([sys.executable, "-c", lazy], cwd=ROOT, check=False)
        assert ran.returncode == 0, ran.stderr.decode()


def test_every_kept_warning_goes_through_the_logging_helper() -> None:
    """``Client.warnings`` and ``Poller.warnings`` are appended to only inside ``_warn``
    (which logs each at WARNING): a new append site elsewhere fails here (the Poller's
    pieces in ``_poller/`` and the session's parts in ``_session/`` included: they warn
    through the ``_warn`` / ``warn`` they are given)."""
    pieces = sorted(p.name for p in (ROOT / "mcp_tasks_client" / "_poller").glob("*.py"))
    assert "following.py" in pieces
    parts = sorted(p.name for p in (ROOT / "mcp_tasks_client" / "_session").glob("*.py"))
    assert "conversation.py" in parts
    session = [f"_session/{name}" for name in parts]
    for module in (*session, "engine.py", *(f"_poller/{name}" for name in pieces)):
        tree = ast.parse((ROOT / "mcp_tasks_client" / module).read_text())
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "append"
                    and isinstance(node.func.value, ast.Attribute)
                    and node.func.value.attr == "warnings"
                ):
                    helper = "warn" if module in session else "_warn"
                    assert func.name == helper, f"{module}: {func.name} appends a warning"


ids = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(ids, min_size=1, max_size=8, unique=True), st.text(max_size=30))
def test_the_scrub_hides_every_remembered_id(task_ids: list[str], filler: str) -> None:
    """Whatever the ids (one inside another, regex characters), a text naming them all
    keeps none of them once scrubbed, and each label is stable."""
    observability.redact_task_ids(True, key=b"host secret")
    try:
        for task_id in task_ids:
            observability.remember(task_id)
        text = filler.join(task_ids)
        scrubbed = _scrub(text)
        labels = [observability.task_id_label(t) for t in task_ids]
        residue = scrubbed
        for label in labels:  # what is left outside the labels names no id
            residue = residue.replace(label, "\x00")
        for task_id in task_ids:
            assert task_id not in residue
        assert labels == [observability.task_id_label(t) for t in task_ids]
    finally:
        observability.redact_task_ids(False)


def test_a_disabled_switch_shows_ids_as_they_are() -> None:
    observability.redact_task_ids(False)
    assert observability.task_id_label("abc") == "abc"
    assert repr(observability.TaskId("abc")) == "'abc'"
    observability.redact_task_ids(True)
    try:
        assert repr(observability.TaskId("abc")) == observability.task_id_label("abc")
        assert observability.task_id_label("abc") != observability.task_id_label("abd")
    finally:
        observability.redact_task_ids(False)
