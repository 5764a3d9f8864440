"""Per-client tracing and redaction: each Client holds its own ``Tracing`` and ``Redaction``
(copied from the process default when it is made, or given), so two clients in one process
send their spans to their own providers and redact (or not) by their own choice.

The two clients run at once, in one process, against the real mcp 1.30 server (its
``confirm`` tool elicits inside the task: a request, a server request, an input handler and
a poll loop, all observed)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
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
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.observability import Redaction, Tracing, _Tracing

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


def _exporter() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider


@pytest.fixture
def default_spans() -> Iterator[InMemorySpanExporter]:
    """The process default on, to a provider of its own; the process state restored after."""
    exporter, provider = _exporter()
    saved = dict(vars(_Tracing))
    observability.tracing(True, tracer_provider=provider, metrics=False)
    try:
        yield exporter
    finally:
        for name in ("decided", "tracer", "polls", "propagate", "meters"):
            setattr(_Tracing, name, saved[name])
        observability.redact_task_ids(False)
        provider.shutdown()


async def _accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})


async def _one_task(client: Client, router: InputRouter, ids: dict[str, str], name: str) -> None:
    async with client:
        router.attach(client)
        async with Poller(client, FAST, inputs=router) as poller:
            created = task_created(
                await client.start(
                    ToolCall("confirm", {"text": name}).as_task(ttl=dt.timedelta(minutes=1))
                )
            )
            ids[name] = created.task.task_id
            outcome = await poller.wait(created, deadline=dt.timedelta(seconds=20))
            assert isinstance(outcome, Completed)


def _client(url: str, router: InputRouter, tracing: Tracing, redaction: Redaction) -> Client:
    return Client(
        HttpTransport(url),
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
        tracing=tracing,
        redaction=redaction,
    )


def _router() -> InputRouter:
    return InputRouter(elicitation=ElicitationCapability(form={})).default_elicitation(_accept)


async def test_two_clients_with_their_own_tracer_and_redaction_do_not_interfere(
    mcp1_http_url: str,
    default_spans: InMemorySpanExporter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Client A: spans to provider A, task ids redacted with its own key. Client B: spans to
    provider B, ids shown. Both run a task with an input at once. Each provider holds exactly
    its client's spans (its task, its requests, its input handler); the process default's
    provider holds none; A's ids appear nowhere raw in A's spans or in the client and input
    records about A, B's appear raw in B's."""
    caplog.set_level(logging.DEBUG, logger="mcp_tasks_client")
    spans_a, provider_a = _exporter()
    spans_b, provider_b = _exporter()
    redact_a = Redaction(True, key=b"host a")
    client_a = _client(
        mcp1_http_url, router_a := _router(), Tracing.on(tracer_provider=provider_a), redact_a
    )
    client_b = _client(
        mcp1_http_url, router_b := _router(), Tracing.on(tracer_provider=provider_b), Redaction()
    )
    assert client_a.tracing.tracer is not client_b.tracing.tracer
    ids: dict[str, str] = {}
    with anyio.fail_after(40):
        async with anyio.create_task_group() as group:
            group.start_soon(_one_task, client_a, router_a, ids, "a")
            group.start_soon(_one_task, client_b, router_b, ids, "b")
    id_a, id_b = ids["a"], ids["b"]
    label_a = redact_a.label(id_a)
    assert label_a != id_a
    assert label_a.startswith("task-")
    assert label_a != observability.task_id_label(id_a)  # its own key, not the default's

    assert default_spans.get_finished_spans() == ()  # nothing went to the process default
    for exporter, mine, other, shown in (
        (spans_a, id_a, id_b, label_a),
        (spans_b, id_b, id_a, id_b),
    ):
        found = exporter.get_finished_spans()
        names = {span.name for span in found}
        assert {"mcp_tasks.task", "tools/call confirm", "tasks/get", "elicitation/create"} <= names
        assert "mcp_tasks.input" in names
        values = [str(v) for span in found for v in (span.attributes or {}).values()]
        assert shown in values  # its task, as this client shows it
        text = "\n".join(values)
        assert other not in text  # never the other client's task
        if mine != shown:
            assert mine not in text  # redacted: never the raw id
        (task_span,) = [s for s in found if s.name == "mcp_tasks.task"]
        assert (task_span.attributes or {})["mcp_tasks.task.id"] == shown
        # One trace per task: everything but the handshake (a root of its own) is in it.
        trace_ids = {s.context.trace_id for s in found if s.context and s.name != "initialize"}
        assert task_span.context is not None
        assert trace_ids == {task_span.context.trace_id}

    # The records the client and its input router write for A carry A's label, never its
    # raw id; B's show B's id as it is. (The Poller's own records follow the process
    # default until it is given its client's redaction.)
    ours = [
        r.getMessage()
        for r in caplog.records
        if r.name in ("mcp_tasks_client.client", "mcp_tasks_client.inputs")
    ]
    text = "\n".join(ours)
    assert id_a not in text
    assert label_a in text
    assert id_b in text
    provider_a.shutdown()
    provider_b.shutdown()


def test_a_client_copies_the_process_default_when_made() -> None:
    """The default is a convenience a Client copies at construction: a later change reaches
    the clients made after it, never one made before; each copy has its own memory of ids."""
    before = Client(
        HttpTransport("http://127.0.0.1:9/mcp"), generation=Generation.V2025_11_25, client_info=INFO
    )
    observability.redact_task_ids(True, key=b"k")
    try:
        after = Client(
            HttpTransport("http://127.0.0.1:9/mcp"),
            generation=Generation.V2025_11_25,
            client_info=INFO,
        )
        assert before.redaction.enabled is False
        assert after.redaction.enabled is True
        assert after.redaction.key == b"k"
        assert after.redaction is not observability.REDACTION
        after.redaction.remember("task-one")
        assert "task-one" not in observability.REDACTION.labels
        assert after.redaction.label("x") == observability.task_id_label("x")  # same key
    finally:
        observability.redact_task_ids(False)


def test_tracing_off_is_a_client_choice() -> None:
    client = Client(
        HttpTransport("http://127.0.0.1:9/mcp"),
        generation=Generation.V2025_11_25,
        client_info=INFO,
        tracing=Tracing.OFF,
    )
    assert client.tracing.enabled is False
    assert client.task_traces.begin({}) is None  # no span work at all
    assert repr(Tracing.OFF) == "Tracing(off, polls='every', propagate=True)"


def test_a_wrong_setting_is_a_typed_error() -> None:
    transport = HttpTransport("http://127.0.0.1:9/mcp")
    with pytest.raises(UsageError, match=r"tracing= takes an observability\.Tracing"):
        Client(transport, generation=Generation.V2025_11_25, client_info=INFO, tracing=True)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"redaction= takes an observability\.Redaction"):
        Client(transport, generation=Generation.V2025_11_25, client_info=INFO, redaction=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="polls must be one of"):
        Tracing(polls="some")
