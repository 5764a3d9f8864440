"""Demo: start a task on a real, local, task-capable MCP server, watch it, print its outcome.

The task reports progress: the call carries a progress token (asked for explicitly, with
``with_progress_token``), and each ``notifications/progress`` for it reaches ``watch()`` as a
``TaskProgress`` (2025-11-25; in 2026-07-28 progress is not sent for tasks, the server puts it
in the status message instead). Each status message is shown with the time it was set, and a
terminal snapshot that only carries over a message from while the task was working says so.

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
import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import trio

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Expired,
    Failed,
    Generation,
    HttpTransport,
    InputEvent,
    MCPTasksError,
    Poller,
    PollPolicy,
    StatusMessage,
    TaskProgress,
    ToolCall,
)
from mcp_tasks_client.errors import GetStreamUnavailable
from mcp_tasks_client.models import (
    ContentBlock,
    CreateTaskResult,
    Implementation,
    Task,
    TextContent,
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
        ToolCall("progress_steps", {"steps": 4, "delay": 0.5}),
    ),
    Generation.V2026_07_28: Setup(
        "fastmcp4",
        ToolCall("greet", {"name": "demo"}),
        ToolCall("progress_steps", {"steps": 4, "delay": 0.5}),
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

        if generation is Generation.V2025_11_25:
            # Over HTTP the server sends a task's progress and status on the standalone GET
            # stream, which is opened only when asked for.
            try:
                await client.open_listen_stream()
            except GetStreamUnavailable:
                print("no standalone stream: progress sent after the task started is lost")
        # A task, explicitly: the call asks for one only because we said .as_task(), and for
        # progress only because we gave it a token.
        call = setup.task.as_task().with_progress_token("demo-1")
        created = await client.start(call)
        if not isinstance(created, CreateTaskResult):  # a 2026-07-28 server may answer inline
            print("answered inline:", _texts(created.content))
            return
        print(f"task started: {created.task.task_id} ({created.task.status.value})")
        print(f"progress token: {call.progress_token!r}")
        policy = PollPolicy(floor=0.2)  # everything else: the printed defaults
        print(f"polling with {policy}")
        started = trio.current_time()
        async with Poller(client, policy) as poller:
            async for item in poller.watch(created, deadline=60):
                elapsed = f"  [{trio.current_time() - started:5.2f}s]"
                if isinstance(item, InputEvent):
                    continue  # this tool asks for no input
                if isinstance(item, TaskProgress):
                    print(f"{elapsed} progress {_progress(item)}")
                    continue
                print(f"{elapsed} {_snapshot(item, poller.status_message(item.task_id))}")
            outcome = await poller.wait(created)
            for warning in poller.warnings:
                print("warning:", warning)
        match outcome:
            case Completed(result=done):
                print("outcome: completed ->", _texts(done.content))
            case Failed(task=task, error=error):
                print("outcome: failed ->", task.status_message, error)
            case Cancelled():
                print("outcome: cancelled")
            case Expired(expired_at=when):
                print("outcome: expired at", when)


def _clock(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%H:%M:%S.%f")[:-3] + "Z"


def _progress(progress: TaskProgress) -> str:
    done = f"{progress.progress:g}"
    if progress.total is not None:
        done += f"/{progress.total:g}"
    said = f": {progress.message}" if progress.message else ""
    return f"{done}{said} (received {_clock(progress.received_at)})"


def _snapshot(task: Task, message: StatusMessage | None) -> str:
    """A snapshot, its status message with the time it was set; a message the snapshot
    only carries over from an earlier status is shown as such, never as news."""
    line = task.status.value
    if message is None:
        return line
    if message.is_current_for(task):
        return f'{line}: "{message.text}" (set {_clock(message.since)})'
    return (
        f'{line} (its message "{message.text}" is from {_clock(message.since)}, '
        f"while {message.status.value})"
    )


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
