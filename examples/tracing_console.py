"""One task's trace, printed to the console: OpenTelemetry spans, one JSON line each.

    python3 examples/tracing_console.py                             # the bundled server
    python3 examples/tracing_console.py --generation 2026-07-28     # the 2026 bundled server
    python3 examples/tracing_console.py --url URL [--generation ...] # a server you started

Needs the OpenTelemetry SDK (``pip install opentelemetry-sdk``). The agent opens a span of its
own (``agent.turn``) and starts a task in it; a Poller waits for the outcome. Every span of
the task (its ``mcp_tasks.task`` span, the ``tools/call``, each poll, the outcome) is in the
agent's trace, under the task span, and every request carried that trace to the server in
``params._meta.traceparent``. The last line sums it up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from mcp_tasks_client import Client, Generation, HttpTransport, Poller, ToolCall, observability
from mcp_tasks_client.models import CreateTaskResult, Implementation

REPO = Path(__file__).resolve().parent.parent
INFO = Implementation("mcp-tasks-tracing-example", "0.1")
CALLS = {
    Generation.V2025_11_25: ToolCall("slow_echo", {"text": "traced", "seconds": 1}),
    Generation.V2026_07_28: ToolCall("slow_compute", {"seconds": 1, "label": "traced"}),
}
PEERS = {Generation.V2025_11_25: "mcp1", Generation.V2026_07_28: "fastmcp4"}


@contextlib.contextmanager
def bundled_server(generation: Generation) -> Iterator[str]:
    sys.path.insert(0, str(REPO / "tests"))
    from peers.harness import PEERS as INSTALLED
    from peers.harness import peer_available, running_http_peer

    peer = INSTALLED[PEERS[generation]]
    if not peer_available(peer):
        raise SystemExit(
            "the bundled server is not installed: run `python3 tests/peers/install.py`"
        )
    with running_http_peer(peer) as url:
        yield url


def one_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"


async def run(url: str, generation: Generation) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(formatter=one_line)))
    # Spans on this provider; polls="changes" would print only the polls that saw news.
    observability.tracing(True, tracer_provider=provider)
    tracer = provider.get_tracer("my-agent")
    client = Client(HttpTransport(url), generation=generation, client_info=INFO)
    async with client, Poller(client) as poller:
        with tracer.start_as_current_span("agent.turn") as turn:
            created = await client.start(CALLS[generation].as_task())
            assert isinstance(created, CreateTaskResult)
            outcome = await poller.wait(created)
        trace_id = format(turn.get_span_context().trace_id, "032x")
    provider.shutdown()
    summary = {"outcome": type(outcome).__name__, "trace_id": trace_id}
    print(json.dumps(summary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--generation", default=Generation.V2025_11_25.value)
    args = parser.parse_args()
    generation = Generation(args.generation)
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(bundled_server(generation))
        anyio.run(run, url, generation)


if __name__ == "__main__":
    main()
