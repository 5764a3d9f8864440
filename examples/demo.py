"""Demo: start a task on a real, local, task-capable MCP server, watch it, print its outcome.

    python3 -m nox -s demo                     # starts the bundled peer server itself
    python3 -m nox -s demo -- --url URL        # or talk to a server you started

The bundled server is the official Python SDK (mcp==1.30.0) with 2025-11-25 tasks, installed
into .peers/ by `python tests/peers/install.py` and started on a free 127.0.0.1 port.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path

import trio

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    ContentBlock,
    CreateTaskResult,
    Expired,
    Failed,
    Generation,
    HttpTransport,
    Implementation,
    InputEvent,
    MCPTasksError,
    Poller,
    PollPolicy,
    TextContent,
    ToolCall,
)

REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def bundled_server() -> Iterator[str]:
    sys.path.insert(0, str(REPO / "tests"))
    from peers.harness import PEERS, peer_available, running_http_peer

    peer = PEERS["mcp1"]
    if not peer_available(peer):
        raise SystemExit("the demo server is not installed: run `python3 tests/peers/install.py`")
    with running_http_peer(peer) as url:
        yield url


async def main(url: str) -> None:
    transport = HttpTransport(url)
    async with Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=Implementation("mcp-tasks-demo", "0.1"),
    ) as client:
        info, caps = client.server_info, client.server_capabilities
        print(f"connected to {info.name} {info.version}, protocol {client.protocol_version}")
        tasks = caps.tasks
        print(
            "server tasks capability:",
            "none"
            if tasks is None
            else f"list={tasks.list} cancel={tasks.cancel} tools/call={tasks.tools_call}",
        )
        print("tools:")
        async for tool in client.list_tools():
            print(f"  {tool.name:<12} taskSupport={tool.task_support.value}")
        result = await client.call_tool(ToolCall("plain_echo", {"text": "hello from the demo"}))
        print("plain call: plain_echo ->", _texts(result.content))

        # A task, explicitly: the call is augmented only because we said .as_task().
        call = ToolCall("need_task", {"text": "rendered scene 3", "seconds": 2})
        created = await client.start(call.as_task(ttl=dt.timedelta(minutes=5)))
        if not isinstance(created, CreateTaskResult):  # 2026-07-28 servers may answer inline
            print("answered inline:", _texts(created.content))
            return
        print(f"task started: {created.task.task_id} ({created.task.status.value})")
        policy = PollPolicy(floor=0.2)  # everything else: the printed defaults
        print(f"polling with {policy}")
        started = trio.current_time()
        async with Poller(client, policy) as poller:
            async for snapshot in poller.watch(created, deadline=dt.timedelta(minutes=1)):
                if isinstance(snapshot, InputEvent):
                    continue  # this tool asks for no input
                elapsed = trio.current_time() - started
                message = f" - {snapshot.status_message}" if snapshot.status_message else ""
                print(f"  [{elapsed:5.2f}s] {snapshot.status.value}{message}")
            outcome = await poller.wait(created)
        match outcome:
            case Completed(result=done):
                print("outcome: completed ->", _texts(done.content))
            case Failed(task=task):
                print("outcome: failed ->", task.status_message)
            case Cancelled():
                print("outcome: cancelled")
            case Expired(expired_at=when):
                print("outcome: expired at", when)


def _texts(content: tuple[ContentBlock, ...]) -> list[str]:
    return [block.text if isinstance(block, TextContent) else repr(block) for block in content]


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an MCP endpoint; default: start the bundled server")
    args = parser.parse_args()
    try:
        if args.url:
            trio.run(main, args.url)
        else:
            with bundled_server() as url:
                trio.run(main, url)
    except MCPTasksError as exc:
        raise SystemExit(f"demo failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
