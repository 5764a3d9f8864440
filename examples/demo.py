"""Demo: start a task on a real, local, task-capable MCP server, watch it, print its outcome.

    python3 -m nox -s demo                                  # 2025-11-25, the bundled server
    python3 -m nox -s demo -- --generation 2026-07-28       # 2026-07-28, the bundled server
    python3 -m nox -s demo -- --url URL [--generation ...]  # or a server you started

The bundled servers are the official Python SDK (mcp==1.30.0, 2025-11-25 tasks) and fastmcp
4.1.4 (the 2026-07-28 tasks extension), installed into .peers/ by
`python tests/peers/install.py` and started on a free 127.0.0.1 port. Only the generation
and the tools' names differ; the code that starts, watches and waits is the same.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
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


@attrs.frozen
class Setup:
    """What differs between the bundled servers: the generation and the tools."""

    peer: str
    plain: ToolCall
    task: ToolCall


SETUPS = {
    Generation.V2025_11_25: Setup(
        "mcp1",
        ToolCall("plain_echo", {"text": "hello from the demo"}),
        ToolCall("need_task", {"text": "rendered scene 3", "seconds": 2}),
    ),
    Generation.V2026_07_28: Setup(
        "fastmcp4",
        ToolCall("greet", {"name": "demo"}),
        ToolCall("slow_compute", {"seconds": 2, "label": "scene 3"}),
    ),
}


@contextlib.contextmanager
def bundled_server(peer_name: str) -> Iterator[str]:
    sys.path.insert(0, str(REPO / "tests"))
    from peers.harness import PEERS, peer_available, running_http_peer

    peer = PEERS[peer_name]
    if not peer_available(peer):
        raise SystemExit("the demo server is not installed: run `python3 tests/peers/install.py`")
    with running_http_peer(peer) as url:
        yield url


async def main(url: str, generation: Generation) -> None:
    setup = SETUPS[generation]
    async with Client(
        HttpTransport(url),
        generation=generation,  # chosen here, never guessed
        client_info=Implementation("mcp-tasks-demo", "0.1"),
    ) as client:
        if generation is Generation.V2025_11_25:
            info = client.server_info
            print(f"connected to {info.name} {info.version}, protocol {client.protocol_version}")
            tasks = client.server_capabilities.tasks
            print(
                "server tasks capability:",
                "none"
                if tasks is None
                else f"list={tasks.list} cancel={tasks.cancel} tools/call={tasks.tools_call}",
            )
        else:  # stateless: nothing is known until asked
            found = await client.discover()
            name = (found.server_info or {}).get("name")
            print(f"discovered {name}, versions {list(found.supported_versions)}")
            print("server tasks extension:", found.capabilities.tasks_extension)
        print("tools:")
        async for tool in client.list_tools():
            print(f"  {tool.name}")
        result = await client.call_tool(setup.plain)
        print(f"plain call: {setup.plain.name} ->", _texts(result.content))

        # A task, explicitly: the call asks for one only because we said .as_task().
        created = await client.start(setup.task.as_task())
        if not isinstance(created, CreateTaskResult):  # a 2026-07-28 server may answer inline
            print("answered inline:", _texts(created.content))
            return
        print(f"task started: {created.task.task_id} ({created.task.status.value})")
        policy = PollPolicy(floor=0.2)  # everything else: the printed defaults
        print(f"polling with {policy}")
        started = trio.current_time()
        async with Poller(client, policy) as poller:
            async for snapshot in poller.watch(created, deadline=60):
                if isinstance(snapshot, InputEvent):
                    continue  # this tool asks for no input
                elapsed = trio.current_time() - started
                message = f" - {snapshot.status_message}" if snapshot.status_message else ""
                print(f"  [{elapsed:5.2f}s] {snapshot.status.value}{message}")
            outcome = await poller.wait(created)
        match outcome:
            case Completed(result=done):
                print("outcome: completed ->", _texts(done.content))
            case Failed(task=task, error=error):
                print("outcome: failed ->", task.status_message, error)
            case Cancelled():
                print("outcome: cancelled")
            case Expired(expired_at=when):
                print("outcome: expired at", when)


def _texts(content: tuple[ContentBlock, ...]) -> list[str]:
    return [block.text if isinstance(block, TextContent) else repr(block) for block in content]


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
            trio.run(main, args.url, generation)
        else:
            with bundled_server(SETUPS[generation].peer) as url:
                trio.run(main, url, generation)
    except MCPTasksError as exc:
        raise SystemExit(f"demo failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
