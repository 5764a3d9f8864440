"""What the tracing tests share (tests/test_tracing.py, and tests/sdk_hosts in the SDK-host
venvs): spans to an in-memory exporter, and the check that a task is one trace."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_tasks_client import observability
from mcp_tasks_client.observability import _Tracing

__all__ = ["assert_one_trace", "of_task", "spans", "task_span"]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Spans on, to an in-memory exporter of the test's own provider; the process's tracing
    state restored after."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = dict(vars(_Tracing))
    observability.tracing(True, tracer_provider=provider, metrics=False)
    try:
        yield exporter
    finally:
        for name in ("decided", "tracer", "polls", "propagate", "meters"):
            setattr(_Tracing, name, saved[name])
        provider.shutdown()


def of_task(exporter: InMemorySpanExporter, task_id: str) -> list[ReadableSpan]:
    return [
        s
        for s in exporter.get_finished_spans()
        if (s.attributes or {}).get("mcp_tasks.task.id") == task_id
    ]


def task_span(exporter: InMemorySpanExporter, task_id: str) -> ReadableSpan:
    (found,) = [s for s in of_task(exporter, task_id) if s.name == "mcp_tasks.task"]
    return found


def assert_one_trace(exporter: InMemorySpanExporter, task_id: str) -> ReadableSpan:
    """Every span of the task is in the task span's trace, and each request of the task hangs
    right under the task span."""
    life = task_span(exporter, task_id)
    ctx = life.context
    assert ctx is not None
    spans = of_task(exporter, task_id)
    assert {s.context.trace_id for s in spans if s.context} == {ctx.trace_id}
    under = [s for s in spans if s.name.startswith(("tools/call", "tasks/"))]
    assert any(s.name.startswith("tools/call") for s in under)
    # (over stdio mcp 1.30 pushes every status: a task may end with no poll at all)
    for s in under:
        assert s.parent is not None, s.name
        assert s.parent.span_id == ctx.span_id, s.name
        assert s.kind is SpanKind.CLIENT
    return life
