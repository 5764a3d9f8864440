"""Not writing async code? A plain script: start a task that asks a question, answer it from a
plain function, watch the task, wait for its outcome, and wait for two tasks at once; no
``async``, no ``await`` (``mcp_tasks_client.sync``).

    python3 examples/sync_script.py                           # 2025-11-25, bundled server
    python3 examples/sync_script.py --generation 2026-07-28   # 2026-07-28, bundled server
    python3 examples/sync_script.py --url URL [--generation ...]

The SyncClient runs the library's event loop in a thread of its own; leaving the ``with``
stops it. The question's handler is a plain function made a handler with ``threaded()``: it
runs in a worker thread (the script's own thread is blocked in the wait meanwhile), so it may
block, as ``input()`` would. Ctrl-C in a wait raises KeyboardInterrupt and leaves the task
running on the server.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from mcp_tasks_client import (
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    MCPTasksError,
    Outcome,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.models import (
    CallToolResult,
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    Task,
    TextContent,
)
from mcp_tasks_client.sync import SyncClient, SyncPoller, threaded

REPO = Path(__file__).resolve().parent.parent

CALLS = {  # a task that asks a yes/no question, and two that just take a moment
    Generation.V2025_11_25: (
        ToolCall("confirm", {"text": "deploy to prod"}),
        [ToolCall("slow_echo", {"text": f"job {i}", "seconds": 0.3}) for i in (1, 2)],
    ),
    Generation.V2026_07_28: (
        ToolCall("confirm_delete", {"filename": "prod.db"}),
        [ToolCall("slow_compute", {"seconds": 0.3, "label": f"job {i}"}) for i in (1, 2)],
    ),
}
PEER = {Generation.V2025_11_25: "mcp1", Generation.V2026_07_28: "fastmcp4"}


def ask(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    """A plain function answering the task's question (a real script might call input())."""
    mine = threading.current_thread() is threading.main_thread()
    # one write per line: this thread prints while the script's thread prints too
    print(f"  asked {params.message!r} ({'main' if mine else 'a worker'} thread) -> yes\n", end="")
    fields = getattr(params, "requested_schema", {}).get("properties", {})
    return ElicitResult(ElicitAction.ACCEPT, dict.fromkeys(fields, True))


def started(answer: CreateTaskResult | CallToolResult) -> CreateTaskResult:
    """This example needs tasks (a 2026-07-28 server may answer a call inline instead)."""
    if not isinstance(answer, CreateTaskResult):
        raise SystemExit("the server answered inline; this example needs a task")
    return answer


def text(ended: Outcome | MCPTasksError) -> str:
    if isinstance(ended, Completed):
        return " ".join(b.text for b in ended.result.content if isinstance(b, TextContent))
    return repr(ended)


def main(url: str, generation: Generation) -> None:
    asking, quick = CALLS[generation]
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    with SyncClient(
        HttpTransport(url),
        generation=generation,
        client_info=Implementation("sync-script-example", "0.1"),
        capabilities=router.capabilities(),  # elicitation, and nothing else
    ) as client:
        client.attach(router)
        # The handler is bound the moment the server names the task (in the loop's thread).
        bind = router.binding(elicitation=threaded(ask))
        created = started(client.start(asking.as_task(), on_created=bind))
        print(f"task started: {asking.name}")
        with SyncPoller(client, PollPolicy(floor=0.1), inputs=router) as poller:
            for item in poller.watch(created, deadline=60):  # a plain iterator
                if isinstance(item, Task):
                    print(f"  status: {item.status.value}\n", end="")
            print(f"{asking.name}: {text(poller.wait(created))}")  # answered at once
            others = [started(client.start(call.as_task())) for call in quick]
            ended = poller.wait_all(others, deadline=60)
            for outcome in ended.values():
                print(f"{quick[0].name}: {text(outcome)}")
    stopped = not any(t.name.startswith("mcp-tasks-") for t in threading.enumerate())
    print(f"event loop stopped: {stopped}")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an MCP endpoint; default: start the bundled server")
    parser.add_argument(
        "--generation",
        choices=[g.value for g in Generation],
        default=Generation.V2025_11_25.value,
        help="the protocol generation to speak (default: %(default)s)",
    )
    args = parser.parse_args()
    generation = Generation(args.generation)
    try:
        if args.url:
            main(args.url, generation)
            return
        sys.path.insert(0, str(REPO / "tests"))
        from peers.harness import PEERS, peer_available, running_http_peer

        peer = PEERS[PEER[generation]]
        if not peer_available(peer):
            raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
        with running_http_peer(peer) as url:
            main(url, generation)
    except MCPTasksError as exc:
        raise SystemExit(f"example failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
