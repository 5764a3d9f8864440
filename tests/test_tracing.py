"""One trace per task, end to end (issue 27), against the real peers: mcp 1.30 (2025-11-25) and
fastmcp 4.1.4 (2026-07-28), over HTTP and stdio, on both event loops, with the OpenTelemetry
SDK's in-memory exporter and the wire recorded by a wrapper around the real transport.

- Every request carries the trace context (SEP-414: ``params._meta.traceparent``), and a
  request of a task carries the task's trace; a ``_meta`` key the caller set is kept.
- A task's spans (``mcp_tasks.task``, its ``tools/call``, every ``tasks/*`` request, its input
  handler, its outcome) are one trace, with or without a caller span; with one, the task span
  sits under it. Waiting on many tasks does not fold them into one trace.
- ``tracing(polls="changes")`` records only the polls that saw a change, and counts them all.
- The journal keeps the task's trace context: after ``kill -9``, ``resume`` in this process
  continues the same trace (a remote parent).
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from peers.harness import PEERS, stdio_command, stdio_env
from pg import postgres_url
from recording import RecordingTransport
from test_journal_protocol import Store, make_store
from tracing_kit import assert_one_trace, of_task, task_span
from tracing_kit import spans as spans  # the fixture, for this module's tests

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Failed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    LeanHttpTransport,
    Poller,
    PollPolicy,
    SQLiteJournal,
    StdioTransport,
    TaskReceiver,
    ToolCall,
    client_for,
    observability,
    resume,
)
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCRequest,
)
from mcp_tasks_client.observability import _Tracing
from mcp_tasks_client.testing import TASK_CALLS, scripted_client
from mcp_tasks_client.transports import MemoryServerEnd, Transport

__all__ = ["postgres_url"]

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
HERE = Path(__file__).parent
GEN = {"mcp1": Generation.V2025_11_25, "fastmcp4": Generation.V2026_07_28}
SLOW = {
    "mcp1": ("slow_echo", {"text": "traced", "seconds": 0.4}),
    "fastmcp4": ("slow_compute", {"seconds": 0.4, "label": "traced"}),
}
LONG = {
    "mcp1": ("slow_echo", {"text": "long", "seconds": 30}),
    "fastmcp4": ("slow_compute", {"seconds": 30, "label": "long"}),
}
ASKS = {"mcp1": ("confirm", {"text": "go"}), "fastmcp4": ("confirm_delete", {"filename": "a"})}
FAILS: dict[str, tuple[str, dict[str, Any]]] = {
    "mcp1": ("fail", {}),
    "fastmcp4": ("protocol_error_job", {}),
}
TASK_SNAPSHOT = {
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:00Z",
    "ttl": None,
    "pollInterval": 600_000,
}
ANSWER = {"mcp1": {"ok": True, "confirm": True}, "fastmcp4": {"confirm": True}}


@pytest.fixture(params=["mcp1-http", "mcp1-stdio", "fastmcp4-http", "fastmcp4-stdio"])
def peer(request: pytest.FixtureRequest) -> tuple[str, Transport]:
    """(peer name, a fresh transport to it), each generation over HTTP and stdio."""
    name, kind = str(request.param).split("-")
    url: str = request.getfixturevalue(f"{name}_http_url")  # skips when not installed
    if kind == "http":
        return name, HttpTransport(url)
    peer = PEERS[name]
    env = stdio_env(peer) if name == "fastmcp4" else None
    return name, StdioTransport(stdio_command(peer), env=env)


def router_for(name: str) -> InputRouter:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, ANSWER[name])

    router.default_elicitation(accept)
    return router


def connect(name: str, transport: Transport, router: InputRouter) -> Client:
    return Client(
        transport, generation=GEN[name], client_info=INFO, capabilities=router.capabilities()
    )


def ttl_for(name: str) -> dt.timedelta | None:
    return dt.timedelta(minutes=2) if name == "mcp1" else None


async def run_tasks(
    name: str,
    transport: Transport,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    caller_span: bool = False,
    cancel: bool = False,
) -> tuple[list[str], list[object], RecordingTransport, int | None]:
    """Start each call as a task (in a caller span of the test's own when asked), wait on all
    of them with one ``as_completed``; the task ids, outcomes, the recorder and the caller
    span's id."""
    router = router_for(name)
    recorder = RecordingTransport(transport)
    client = connect(name, recorder, router)
    caller_id: int | None = None
    outcomes: dict[str, object] = {}
    with anyio.fail_after(60):
        async with client:
            router.attach(client)
            async with Poller(client, FAST, inputs=router) as poller:
                started: list[CreateTaskResult] = []
                for tool, args in calls:
                    call = ToolCall(tool, args).as_task(ttl=ttl_for(name))
                    if caller_span:
                        provider = _Tracing.tracer  # the test provider's tracer
                        with provider.start_as_current_span("caller") as span:
                            caller_id = span.get_span_context().span_id
                            created = await client.start(call, inputs=router)
                    else:
                        created = await client.start(call, inputs=router)
                    assert isinstance(created, CreateTaskResult), created
                    started.append(created)
                if cancel:
                    for created in started:
                        await client.cancel_task(created.task.task_id)
                async for task_id, ended in poller.as_completed(started):
                    outcomes[task_id] = ended
    ids = [created.task.task_id for created in started]
    return ids, [outcomes[i] for i in ids], recorder, caller_id


def trace_id_of(traceparent: str) -> int:
    return int(traceparent.split("-")[1], 16)


def requests(recorder: RecordingTransport) -> list[JSONRPCRequest]:
    return [m for m in recorder.sent if isinstance(m, JSONRPCRequest)]


# -- one trace per task -----------------------------------------------------------------------


async def test_one_trace_per_task_without_a_caller_span(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    """No caller span: the task span is a root, and its call and polls hang under it (was: each
    the root of its own trace)."""
    name, transport = peer
    [task_id], [outcome], recorder, _ = await run_tasks(name, transport, [SLOW[name]])
    assert isinstance(outcome, Completed)
    life = assert_one_trace(spans, task_id)
    assert life.parent is None
    attrs = dict(life.attributes or {})
    assert attrs["mcp_tasks.outcome"] == "Completed"

    # SEP-414 on the wire: every request carries a traceparent; the task's carry its trace.
    sent = requests(recorder)
    assert sent
    for message in sent:
        meta = (message.params or {}).get("_meta") or {}
        assert isinstance(meta.get("traceparent"), str), message.method
        params = message.params or {}
        if message.method == "tools/call" or params.get("taskId") == task_id:
            assert trace_id_of(meta["traceparent"]) == life.context.trace_id, message.method
    polls = [m for m in sent if m.method == "tasks/get"]
    assert dict(life.attributes or {})["mcp_tasks.task.polls"] == len(polls)


async def test_one_trace_per_task_under_the_callers_span(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    """A caller span: the task span is its child (the caller's trace), everything of the task
    under the task span, not flat under the caller's."""
    name, transport = peer
    [task_id], [outcome], _, caller_id = await run_tasks(
        name, transport, [SLOW[name]], caller_span=True
    )
    assert isinstance(outcome, Completed)
    life = assert_one_trace(spans, task_id)
    assert life.parent is not None
    assert life.parent.span_id == caller_id
    (caller,) = [s for s in spans.get_finished_spans() if s.name == "caller"]
    assert caller.context is not None
    assert life.context is not None
    assert caller.context.trace_id == life.context.trace_id


async def test_waiting_on_many_tasks_keeps_one_trace_each(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    """``as_completed`` over three tasks: three traces, each poll in its own task's."""
    name, transport = peer
    ids, outcomes, _, _ = await run_tasks(name, transport, [SLOW[name]] * 3)
    assert all(isinstance(o, Completed) for o in outcomes)
    traces = {assert_one_trace(spans, task_id).context.trace_id for task_id in ids}
    assert len(traces) == 3


# -- the tree's shape -------------------------------------------------------------------------


async def test_the_input_handler_hangs_under_its_task(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    """A task that asks a question: the handler span (``mcp_tasks.input``) is in the task's
    trace, under the task span (2026-07-28: asked in a snapshot) or under the SERVER span of
    the server's request, itself under the task span (2025-11-25: ``elicitation/create``)."""
    name, transport = peer
    [task_id], [outcome], recorder, _ = await run_tasks(name, transport, [ASKS[name]])
    assert isinstance(outcome, Completed)
    life = assert_one_trace(spans, task_id)
    (asked,) = [s for s in of_task(spans, task_id) if s.name == "mcp_tasks.input"]
    assert asked.parent is not None
    by_id = {s.context.span_id: s for s in spans.get_finished_spans() if s.context}
    parent = by_id[asked.parent.span_id]
    if name == "mcp1":
        assert parent.name == "elicitation/create"
        assert parent.kind is SpanKind.SERVER
        assert parent.parent is not None
        assert parent.parent.span_id == life.context.span_id
    else:
        assert parent is not None
        assert parent.context.span_id == life.context.span_id
        updates = [m for m in requests(recorder) if m.method == "tasks/update"]
        assert updates
        (update,) = [s for s in of_task(spans, task_id) if s.name == "tasks/update"]
        assert update.parent is not None
        assert update.parent.span_id == life.context.span_id


async def test_a_failed_task_and_its_outcome(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    name, transport = peer
    [task_id], [outcome], _, _ = await run_tasks(name, transport, [FAILS[name]])
    assert isinstance(outcome, Failed), outcome
    life = assert_one_trace(spans, task_id)
    attrs = dict(life.attributes or {})
    assert attrs["mcp_tasks.outcome"] == "Failed"
    assert attrs["mcp_tasks.task.status"] == "failed"


async def test_a_cancelled_task_and_its_cancel(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    name, transport = peer
    [task_id], [outcome], _, _ = await run_tasks(name, transport, [LONG[name]], cancel=True)
    assert isinstance(outcome, Cancelled), outcome
    life = task_span(spans, task_id)
    (cancel,) = [s for s in of_task(spans, task_id) if s.name == "tasks/cancel"]
    assert cancel.parent is not None
    assert cancel.parent.span_id == life.context.span_id
    assert cancel.context is not None
    assert cancel.context.trace_id == life.context.trace_id
    assert dict(life.attributes or {})["mcp_tasks.outcome"] == "Cancelled"


# -- the wire ---------------------------------------------------------------------------------


async def test_a_callers_meta_is_kept(mcp1_http_url: str, spans: InMemorySpanExporter) -> None:
    """A ``_meta`` key the caller set is never overwritten; the others are added."""
    recorder = RecordingTransport(HttpTransport(mcp1_http_url))
    mine = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    async with Client(recorder, generation=Generation.V2025_11_25, client_info=INFO) as client:
        await client.request("tools/list", {"_meta": {"traceparent": mine, "mine": "kept"}})
    (listed,) = [m for m in requests(recorder) if m.method == "tools/list"]
    meta = (listed.params or {})["_meta"]
    assert meta["traceparent"] == mine
    assert meta["mine"] == "kept"
    (span,) = [s for s in spans.get_finished_spans() if s.name == "tools/list"]
    assert span.context is not None
    # Without the caller's key, this request's own context goes out.
    (init,) = [m for m in requests(recorder) if m.method == "initialize"]
    init_meta = (init.params or {})["_meta"]
    assert trace_id_of(init_meta["traceparent"]) != trace_id_of(mine)


async def test_tracing_off_puts_nothing_on_the_wire(mcp1_http_url: str) -> None:
    saved = dict(vars(_Tracing))
    observability.tracing(False)
    try:
        recorder = RecordingTransport(HttpTransport(mcp1_http_url))
        async with Client(recorder, generation=Generation.V2025_11_25, client_info=INFO) as c:
            await c.request("tools/list")
    finally:
        for name in ("decided", "tracer", "polls", "propagate", "meters"):
            setattr(_Tracing, name, saved[name])
    for message in requests(recorder):
        assert (
            "_meta" not in (message.params or {})
            or "traceparent" not in ((message.params or {})["_meta"])
        )


# -- poll noise -------------------------------------------------------------------------------


async def test_polls_changes_records_only_news_and_counts_every_poll(
    peer: tuple[str, Transport], spans: InMemorySpanExporter
) -> None:
    name, transport = peer
    observability.tracing(True, tracer_provider=_provider_of(spans), polls="changes")
    tool, args = SLOW[name]
    args = {**args, "seconds": 2.5}
    [task_id], [outcome], recorder, _ = await run_tasks(name, transport, [(tool, args)])
    assert isinstance(outcome, Completed)
    sent = [m for m in requests(recorder) if m.method == "tasks/get"]
    life = task_span(spans, task_id)
    assert dict(life.attributes or {})["mcp_tasks.task.polls"] == len(sent)
    recorded = [s for s in of_task(spans, task_id) if s.name == "tasks/get"]
    assert 1 <= len(recorded) < len(sent), (len(recorded), len(sent))
    for s in recorded:
        assert s.parent is not None
        assert s.parent.span_id == life.context.span_id
    # A quiet poll still carries the task's trace on the wire.
    for message in sent:
        meta = (message.params or {})["_meta"]
        assert trace_id_of(meta["traceparent"]) == life.context.trace_id


_PROVIDERS: dict[int, TracerProvider] = {}


def _provider_of(exporter: InMemorySpanExporter) -> TracerProvider:
    """A provider exporting to ``exporter`` (a second one: the fixture's is not reachable)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _PROVIDERS[id(exporter)] = provider
    return provider


# -- metrics ----------------------------------------------------------------------------------


async def test_metrics_of_one_task(mcp1_http_url: str, spans: InMemorySpanExporter) -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    observability.tracing(True, tracer_provider=_provider_of(spans), meter_provider=meters)
    [_], [outcome], _, _ = await run_tasks("mcp1", HttpTransport(mcp1_http_url), [SLOW["mcp1"]])
    assert isinstance(outcome, Completed)
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, Any] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found[metric.name] = metric
    assert {
        "mcp.client.operation.duration",
        "mcp.client.session.duration",
        "mcp_tasks.task.duration",
        "mcp_tasks.task.polls",
        "mcp_tasks.tasks.in_flight",
    } <= set(found)
    methods = {
        dict(point.attributes)["mcp.method.name"]
        for point in found["mcp.client.operation.duration"].data.data_points
    }
    assert {"initialize", "tools/call", "tasks/get"} <= methods
    (in_flight,) = found["mcp_tasks.tasks.in_flight"].data.data_points
    assert in_flight.value == 0  # begun and ended
    (polls,) = found["mcp_tasks.task.polls"].data.data_points
    assert polls.count == 1
    assert polls.sum >= 1
    meters.shutdown()


# -- across processes -------------------------------------------------------------------------


@pytest.fixture(params=["mcp1", "fastmcp4"])
def server(request: pytest.FixtureRequest) -> tuple[str, Generation]:
    url: str = request.getfixturevalue(f"{request.param}_http_url")
    return url, GEN[request.param]


async def test_resume_after_kill_continues_the_trace(
    server: tuple[str, Generation], spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    """A process with tracing on starts a task with a journal and is SIGKILLed while it waits;
    ``resume`` here follows the task in the same trace: its span's parent is the killed
    process's task span (a remote parent), and its polls hang under it."""
    url, generation = server
    path = tmp_path / "journal.db"
    command = [sys.executable, str(HERE / "tracing_child.py"), url, generation.value, str(path)]
    async with await anyio.open_process(command) as child:
        assert child.stdout is not None
        try:
            with anyio.fail_after(30):
                line = await BufferedByteReceiveStream(child.stdout).receive_until(b"\n", 4096)
            assert line.startswith(b"waiting "), line
            _, task_id, traceparent = line.decode().split()
        finally:
            child.send_signal(signal.SIGKILL)  # this process, by its own pid
            with anyio.fail_after(10):
                assert await child.wait() == -signal.SIGKILL
    _, trace_hex, span_hex, _ = traceparent.split("-")
    with SQLiteJournal(path) as journal:
        [entry] = await journal.entries(open_only=True)
        assert entry.traceparent == traceparent
        opener = functools.partial(client_for, client_info=INFO)
        with anyio.fail_after(30):
            [resumed] = await resume(journal, opener, policy=FAST)
    assert isinstance(resumed.ended, Completed), resumed.ended
    life = task_span(spans, task_id)
    assert life.context is not None
    assert life.parent is not None
    assert life.context.trace_id == int(trace_hex, 16)
    assert life.parent.span_id == int(span_hex, 16)
    assert life.parent.is_remote
    assert dict(life.attributes or {})["mcp_tasks.resumed"] is True
    polls = [s for s in of_task(spans, task_id) if s.name == "tasks/get"]
    assert polls
    for poll in polls:
        assert poll.parent is not None
        assert poll.parent.span_id == life.context.span_id


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return make_store(request.param, request, tmp_path)


async def test_a_worker_taking_over_continues_each_tasks_trace(
    store: Store, fastmcp4_http_url: str, spans: InMemorySpanExporter
) -> None:
    """Worker mode, on both journals: a dead worker's tasks, taken over when its leases run
    out, are followed in the traces their starts recorded (remote parents, same trace ids)."""
    recorded: dict[str, str] = {}
    with store.open() as journal:
        transport = HttpTransport(fastmcp4_http_url)
        async with Client(transport, generation=GEN["fastmcp4"], client_info=INFO) as client:
            for n in range(3):
                call = ToolCall("slow_compute", {"seconds": 0.3, "label": f"n{n}"}).as_task()
                created = await client.start(call, journal=journal)
                assert isinstance(created, CreateTaskResult)
                entry = await journal.get(transport.identity, created.task.task_id)
                assert entry is not None
                assert entry.traceparent is not None
                recorded[created.task.task_id] = entry.traceparent
        dead = await journal.claim_due("dead-worker", 1.5, 10)
        assert sorted(entry.task_id for entry in dead) == sorted(recorded)
        opener = functools.partial(client_for, client_info=INFO)
        with anyio.fail_after(60):
            done = await resume(journal, opener, policy=FAST, workers=2, lease=10, idle=0.1)
        assert all(isinstance(item.ended, Completed) for item in done), done
    for task_id, traceparent in recorded.items():
        _, trace_hex, span_hex, _ = traceparent.split("-")
        (life,) = [
            s
            for s in of_task(spans, task_id)
            if s.name == "mcp_tasks.task" and (s.attributes or {}).get("mcp_tasks.resumed")
        ]
        assert life.context is not None
        assert life.parent is not None
        assert life.context.trace_id == int(trace_hex, 16)
        assert life.parent.span_id == int(span_hex, 16)
        assert dict(life.attributes or {})["mcp_tasks.outcome"] == "Completed"


# -- the server's spans in the client's trace -------------------------------------------------

_PEER_TRACING = """
import os
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class _File(SpanExporter):
    def export(self, spans):
        with open(os.environ["PEER_SPANS_OUT"], "a", encoding="utf-8") as out:
            for span in spans:
                out.write(span.to_json(indent=None) + "\\n")
        return SpanExportResult.SUCCESS


_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(_File()))
trace.set_tracer_provider(_provider)
"""


def _peer_with_an_sdk(tmp_path: Path) -> tuple[list[str], dict[str, str], Path]:
    """fastmcp 4.1.4 over stdio with the OpenTelemetry SDK of this venv lent to it (its venv
    has the API only, of the same version): a ``sitecustomize`` on its PYTHONPATH exports
    every span it makes, one JSON line each, to a file of the test's."""
    import opentelemetry.sdk
    import opentelemetry.semconv
    from opentelemetry.version import __version__ as ours

    peer = PEERS["fastmcp4"]
    argv = stdio_command(peer)
    site = Path(argv[0]).parent.parent / "lib"  # the venv (its python is a symlink)
    theirs = sorted(site.glob("python3*/site-packages/opentelemetry_api-*.dist-info"))
    if not theirs or not theirs[0].name.startswith(f"opentelemetry_api-{ours}."):
        pytest.skip(f"the peer's opentelemetry-api is not this venv's {ours}: no SDK to lend it")
    overlay = tmp_path / "overlay"
    (overlay / "opentelemetry").mkdir(parents=True)
    for module in (opentelemetry.sdk, opentelemetry.semconv):
        source = Path(next(iter(module.__path__)))
        (overlay / "opentelemetry" / source.name).symlink_to(source)
    (overlay / "sitecustomize.py").write_text(_PEER_TRACING, encoding="utf-8")
    out = tmp_path / "peer_spans.jsonl"
    env = {**(stdio_env(peer) or dict(os.environ)), "PYTHONPATH": str(overlay)}
    env["PEER_SPANS_OUT"] = str(out)
    return argv, env, out


async def test_fastmcp_records_its_spans_in_the_tasks_trace(
    fastmcp4_http_url: str, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    """fastmcp 4.1.4 opens its SERVER spans from ``_meta.traceparent``: its ``tools/call`` and
    ``tasks/get`` spans are in the task's trace, each the child of the client's request."""
    argv, env, out = _peer_with_an_sdk(tmp_path)
    transport = StdioTransport(argv, env=env)
    [task_id], [outcome], _, _ = await run_tasks("fastmcp4", transport, [SLOW["fastmcp4"]])
    assert isinstance(outcome, Completed)
    life = task_span(spans, task_id)
    ours = {s.context.span_id: s.name for s in of_task(spans, task_id) if s.context is not None}
    theirs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    served = [s for s in theirs if s["kind"] == "SpanKind.SERVER"]
    assert {s["name"] for s in served} >= {"tools/call", "tasks/get"}
    for span in served:
        if span["name"] not in ("tools/call", "tasks/get"):
            continue
        assert int(span["context"]["trace_id"], 16) == life.context.trace_id
        parent = int(span["parent_id"], 16)
        assert ours[parent].split()[0] == span["name"]  # the client's span of that request


# -- the server's requests ----------------------------------------------------------------------

SERVER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SERVER_SPAN = "00f067aa0ba902b7"


def _elicit(request_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    params = {"message": "ok?", "requestedSchema": {}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


async def test_a_servers_request_joins_its_tasks_trace_and_links_the_servers(
    spans: InMemorySpanExporter,
) -> None:
    """A scripted 2025-11-25 server sends three ``elicitation/create``: one about the task (with
    its own ``traceparent``), one about no task with a ``traceparent``, one with neither. The
    first's SERVER span is under the task span and links the server's span; the second
    continues the server's trace; the third is a root (not under the span that was open when
    the client was entered)."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(accept)
    remote = {"traceparent": f"00-{SERVER_TRACE}-{SERVER_SPAN}-01"}
    related = {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}
    asks: list[tuple[str, dict[str, Any]]] = [
        ("about-task", {**related, **remote}),
        ("no-task", remote),
        ("nothing", {}),
    ]
    done = anyio.Event()

    async def serve(server: MemoryServerEnd) -> None:
        call = await server.receive()  # the start's tools/call
        task = {**TASK_SNAPSHOT, "taskId": "t-1"}
        await server.send({"jsonrpc": "2.0", "id": call["id"], "result": {"task": task}})
        for request_id, meta in asks:
            await server.send(_elicit(request_id, meta))
            while (await server.receive()).get("id") != request_id:
                pass
        done.set()
        await anyio.sleep_forever()

    with _Tracing.tracer.start_as_current_span("entered"):
        async with scripted_client(router, serve, capabilities=TASK_CALLS) as client:
            created = await client.start(ToolCall("job", {}).as_task())
            assert isinstance(created, CreateTaskResult)
            await done.wait()
    life = task_span(spans, "t-1")
    handled = {
        str(dict(s.attributes or {})["jsonrpc.request.id"]): s
        for s in spans.get_finished_spans()
        if s.name == "elicitation/create"
    }
    assert sorted(handled) == sorted(request_id for request_id, _ in asks)
    for span in handled.values():
        assert span.kind is SpanKind.SERVER
    about = handled["about-task"]
    assert about.parent is not None
    assert about.parent.span_id == life.context.span_id
    (link,) = about.links
    assert link.context.trace_id == int(SERVER_TRACE, 16)
    assert link.context.span_id == int(SERVER_SPAN, 16)
    elsewhere = handled["no-task"]
    assert elsewhere.context is not None
    assert elsewhere.parent is not None
    assert elsewhere.context.trace_id == int(SERVER_TRACE, 16)
    assert elsewhere.parent.span_id == int(SERVER_SPAN, 16)
    assert not elsewhere.links
    assert handled["nothing"].parent is None


@pytest.mark.parametrize("server_traced", [True, False], ids=["server-traced", "untraced"])
async def test_a_received_task_is_one_trace_through_the_servers_tasks_requests(
    spans: InMemorySpanExporter, server_traced: bool
) -> None:
    """The client as a task receiver (2025-11-25): the server asks ``elicitation/create`` as a
    task, then polls it (``tasks/get``), fetches it (``tasks/result``) and lists tasks, each
    request with a ``traceparent`` of its own or with none. The received task's body and
    every ``tasks/*`` about it are one trace, the creating request's; each ``tasks/*`` links
    the server's context of that request (when it sent one). Without this, an untraced
    server's every poll was a trace of its own."""
    router = InputRouter(elicitation=ElicitationCapability(form={}), receiver=TaskReceiver())

    async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(accept)
    polls = [f"{n:016x}" for n in range(1, 4)]  # the server's span of each later request

    def meta(span_id: str) -> dict[str, Any]:
        if not server_traced:
            return {}
        return {"_meta": {"traceparent": f"00-{SERVER_TRACE}-{span_id}-01"}}

    async def serve(server: MemoryServerEnd) -> None:
        params = {"message": "ok?", "requestedSchema": {}, "task": {"ttl": 60_000}}
        params.update(meta(SERVER_SPAN))
        await server.send({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                           "params": params})  # fmt: skip
        created = await server.receive()
        task_id = created["result"]["task"]["taskId"]
        for request_id, method, span_id in zip(
            ("g1", "r1", "g2"), ("tasks/get", "tasks/result", "tasks/get"), polls, strict=True
        ):
            await server.send({"jsonrpc": "2.0", "id": request_id, "method": method,
                               "params": {"taskId": task_id, **meta(span_id)}})  # fmt: skip
            while (await server.receive()).get("id") != request_id:
                pass
        await anyio.sleep_forever()

    async with scripted_client(router, serve) as client, router.receiver:  # type: ignore[union-attr]
        with anyio.fail_after(10):
            while len([s for s in spans.get_finished_spans() if s.name.startswith("tasks/")]) < 3:
                await anyio.sleep(0.01)
        assert client.generation is Generation.V2025_11_25
    finished = spans.get_finished_spans()
    (created,) = [s for s in finished if s.name == "elicitation/create"]
    (body,) = [s for s in finished if s.name == "mcp_tasks.received_task"]
    asked = sorted(
        (s for s in finished if s.name.startswith("tasks/")),
        key=lambda s: str(dict(s.attributes or {})["jsonrpc.request.id"]),
    )
    assert [s.name for s in asked] == ["tasks/get", "tasks/get", "tasks/result"]
    assert created.context is not None
    trace_id = created.context.trace_id
    if server_traced:  # the creating request continues the server's trace
        assert trace_id == int(SERVER_TRACE, 16)
    else:
        assert created.parent is None  # a root: the received task's own trace
    assert body.context is not None
    assert body.context.trace_id == trace_id
    assert body.parent is not None
    assert body.parent.span_id == created.context.span_id
    for span in asked:
        assert span.kind is SpanKind.SERVER
        assert span.context is not None
        assert span.context.trace_id == trace_id
        assert span.parent is not None
        assert span.parent.span_id == created.context.span_id
        request_id = str(dict(span.attributes or {})["jsonrpc.request.id"])
        expected = polls[["g1", "r1", "g2"].index(request_id)]
        if server_traced:
            (link,) = span.links
            assert link.context.span_id == int(expected, 16)
        else:
            assert not span.links


async def test_a_task_tracked_by_its_id_has_every_poll_in_its_trace(
    fastmcp4_http_url: str, spans: InMemorySpanExporter
) -> None:
    """A task another client started, waited on here by its bare id: its span is begun before
    the first poll, so every poll (the first too) is in its trace."""
    generation = GEN["fastmcp4"]
    async with Client(
        HttpTransport(fastmcp4_http_url), generation=generation, client_info=INFO
    ) as other:
        created = await other.start(ToolCall(*SLOW["fastmcp4"]).as_task())
        assert isinstance(created, CreateTaskResult)
    task_id = created.task.task_id
    recorder = RecordingTransport(HttpTransport(fastmcp4_http_url))
    client = Client(recorder, generation=generation, client_info=INFO)
    with anyio.fail_after(30):
        async with client, Poller(client, FAST) as poller:
            assert isinstance(await poller.wait(task_id), Completed)
    (life,) = [
        s
        for s in of_task(spans, task_id)
        if s.name == "mcp_tasks.task"
        and dict(s.attributes or {})["mcp_tasks.outcome"] == "Completed"
    ]
    assert life.context is not None
    polls = [s for s in of_task(spans, task_id) if s.name == "tasks/get"]
    sent = [m for m in requests(recorder) if m.method == "tasks/get"]
    assert len(polls) == len(sent) >= 1
    for poll in polls:
        assert poll.parent is not None
        assert poll.parent.span_id == life.context.span_id
    for message in sent:
        meta = (message.params or {})["_meta"]
        assert trace_id_of(meta["traceparent"]) == life.context.trace_id


@pytest.mark.parametrize("name", ["mcp1", "fastmcp4"])
async def test_the_lean_transport_carries_the_trace_too(
    name: str, spans: InMemorySpanExporter, request: pytest.FixtureRequest
) -> None:
    """The context is put in ``_meta`` once, on the session's request path: the opt-in
    LeanHttpTransport carries it as HttpTransport does."""
    url: str = request.getfixturevalue(f"{name}_http_url")
    [task_id], [outcome], recorder, _ = await run_tasks(name, LeanHttpTransport(url), [SLOW[name]])
    assert isinstance(outcome, Completed)
    life = assert_one_trace(spans, task_id)
    for message in requests(recorder):
        meta = (message.params or {})["_meta"]
        params = message.params or {}
        if message.method == "tools/call" or params.get("taskId") == task_id:
            assert trace_id_of(meta["traceparent"]) == life.context.trace_id, message.method


async def test_tracestate_and_baggage_go_out_with_the_traceparent(
    mcp1_http_url: str, spans: InMemorySpanExporter
) -> None:
    """The caller's context carries a ``tracestate`` (from an upstream parent) and baggage:
    both go out in ``_meta`` beside the request's own ``traceparent``."""
    from opentelemetry import baggage, propagate
    from opentelemetry import context as otel_context

    upstream = propagate.extract(
        {
            "traceparent": f"00-{SERVER_TRACE}-{SERVER_SPAN}-01",
            "tracestate": "vendor=abc",
        }
    )
    token = otel_context.attach(baggage.set_baggage("tenant", "acme", upstream))
    try:
        recorder = RecordingTransport(HttpTransport(mcp1_http_url))
        async with Client(recorder, generation=Generation.V2025_11_25, client_info=INFO) as c:
            await c.request("tools/list")
    finally:
        otel_context.detach(token)
    (listed,) = [m for m in requests(recorder) if m.method == "tools/list"]
    meta = (listed.params or {})["_meta"]
    assert trace_id_of(meta["traceparent"]) == int(SERVER_TRACE, 16)
    assert meta["tracestate"] == "vendor=abc"
    assert meta["baggage"] == "tenant=acme"
    (span,) = [s for s in spans.get_finished_spans() if s.name == "tools/list"]
    assert span.context is not None
    assert meta["traceparent"].split("-")[2] == format(span.context.span_id, "016x")


# -- the merge, as a property -------------------------------------------------------------------

_KEYS = st.sampled_from(["traceparent", "tracestate", "baggage", "mine", "io.x/y"])
_TEXT = st.text(max_size=8)


@settings(max_examples=examples(200), deadline=None)
@given(
    params=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["name", "taskId", "_meta"]),
            st.one_of(_TEXT, st.dictionaries(_KEYS, _TEXT, max_size=4), st.none()),
            max_size=3,
        ),
    ),
    entries=st.dictionaries(st.sampled_from(["traceparent", "tracestate", "baggage"]), _TEXT),
)
def test_the_context_never_overwrites_the_callers_meta(
    params: dict[str, Any] | None, entries: dict[str, str]
) -> None:
    """``with_carrier``: every key the caller put in ``_meta`` keeps its value, every other
    entry is added, the rest of the params is untouched, and the caller's dicts are not
    modified (a copy goes on the wire)."""
    before = copy.deepcopy(params)
    merged = observability.with_carrier(params, entries)
    assert params == before  # not modified
    if not entries:
        assert merged is params
        return
    meta = (params or {}).get("_meta")
    theirs = meta if isinstance(meta, dict) else {}
    assert merged["_meta"] == {**entries, **theirs}
    rest = {k: v for k, v in (params or {}).items() if k != "_meta"}
    assert {k: v for k, v in merged.items() if k != "_meta"} == rest


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["start", "track", "terminal", "outcome", "release", "no-task"]),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=30,
)


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # cleared per example
)
@given(ops=_OPS)
def test_every_task_span_ends_once_and_the_table_empties(
    ops: list[tuple[str, str]], spans: InMemorySpanExporter
) -> None:
    """The table of open task spans under any order of what may happen to tasks (a start,
    a Poller tracking, a terminal status read, an outcome, a release, a call that made no
    task), then the client's close: every span begun is ended exactly once, the table is
    empty, and a task has at most one open span at a time."""
    spans.clear()
    traces = observability.TaskTraces()
    begun = 0
    tracked: dict[str, observability.TaskTrace] = {}
    for op, task_id in ops:
        if op == "start":
            trace = traces.begin({})
            assert trace is not None
            begun += 1
            traces.bind(task_id, trace)
        elif op == "no-task":
            trace = traces.begin({})
            assert trace is not None
            begun += 1
            traces.finish(trace, {"mcp_tasks.outcome": "inline"}, None)
        elif op == "track":
            had = traces.get(task_id)
            tracked[task_id] = traces.track(task_id, {})  # type: ignore[assignment]
            begun += had is None
            if had is not None:
                assert tracked[task_id] is had  # adopted, not a second span
        elif op == "terminal":
            traces.terminal(task_id, {"mcp_tasks.outcome": "completed"})
        elif op in ("outcome", "release") and task_id in tracked:
            trace = tracked.pop(task_id)
            if op == "release":
                trace.owned = False
            else:
                trace.end({"mcp_tasks.outcome": "Completed"})
    traces.close()
    assert traces.get("a") is None
    assert traces.get("b") is None
    assert traces.get("c") is None
    ended = [s for s in spans.get_finished_spans() if s.name == "mcp_tasks.task"]
    assert len(ended) == begun
    for span in ended:
        assert "mcp_tasks.outcome" in (span.attributes or {})
