"""Many tasks at once on trio: start them all, then take each outcome as it comes.

    python3 examples/trio_many.py                            # 2025-11-25, bundled server
    python3 examples/trio_many.py --generation 2026-07-28    # 2026-07-28, bundled server
    python3 examples/trio_many.py --tasks 40 --url URL [--generation ...]

Starts ``--tasks`` tasks (default 12) whose durations are shuffled, so they end in another
order than they started; one Poller waits on all of them with ``as_completed`` (one
scheduler, one deadline heap: no coroutine per task), and the host reacts to each outcome the
moment it arrives (in the order the polls find them ended: the server's ``pollInterval`` sets
the pace, never a loop of ours). At the end it prints how many ``tasks/get`` that took.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import trio

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    MCPTasksError,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.models import CreateTaskResult, Implementation, TextContent

REPO = Path(__file__).resolve().parent.parent
TOOL = {
    Generation.V2025_11_25: ("slow_echo", "text"),  # mcp 1.30: echoes `text` after `seconds`
    Generation.V2026_07_28: ("slow_compute", "label"),  # fastmcp 4.1.4: the same, `label`
}
PEER = {Generation.V2025_11_25: "mcp1", Generation.V2026_07_28: "fastmcp4"}


def call_for(generation: Generation, index: int, seconds: float) -> ToolCall:
    tool, field = TOOL[generation]
    return ToolCall(tool, {field: f"job {index}", "seconds": seconds})


async def main(url: str, generation: Generation, count: int, seed: int) -> None:
    durations = [round(0.2 + 0.15 * i, 2) for i in range(count)]
    random.Random(seed).shuffle(durations)
    async with Client(
        HttpTransport(url),
        generation=generation,
        client_info=Implementation("trio-many-example", "0.1"),
    ) as client:
        started: dict[str, int] = {}
        tasks: list[CreateTaskResult] = []
        for index, seconds in enumerate(durations):
            created = await client.start(call_for(generation, index, seconds).as_task())
            if not isinstance(created, CreateTaskResult):  # 2026-07-28: answered inline
                print(f"job {index}: answered inline")
                continue
            started[created.task.task_id] = index
            tasks.append(created)
        print(f"{len(tasks)} tasks started")
        begin = trio.current_time()
        order: list[int] = []
        async with Poller(client, PollPolicy(floor=0.1)) as poller:
            async for task_id, ended in poller.as_completed(tasks, deadline=120):
                index = started[task_id]
                order.append(index)
                took = trio.current_time() - begin
                if isinstance(ended, Completed):
                    text = " ".join(
                        b.text for b in ended.result.content if isinstance(b, TextContent)
                    )
                    print(f"[{took:5.2f}s] job {index} ({durations[index]:.2f}s): {text}")
                else:
                    print(f"[{took:5.2f}s] job {index}: {ended!r}")
            polls = poller.polls_sent
        print(f"all {len(order)} done; {polls} tasks/get for {len(order)} tasks")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an MCP endpoint; default: start the bundled server")
    parser.add_argument(
        "--generation",
        choices=[g.value for g in Generation],
        default=Generation.V2025_11_25.value,
        help="the protocol generation to speak (default: %(default)s)",
    )
    parser.add_argument("--tasks", type=int, default=12, help="how many (default: 12)")
    parser.add_argument("--seed", type=int, default=3, help="shuffles the durations")
    args = parser.parse_args()
    generation = Generation(args.generation)
    try:
        if args.url:
            trio.run(main, args.url, generation, args.tasks, args.seed)
            return
        sys.path.insert(0, str(REPO / "tests"))
        from peers.harness import PEERS, peer_available, running_http_peer

        peer = PEERS[PEER[generation]]
        if not peer_available(peer):
            raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
        with running_http_peer(peer) as url:
            trio.run(main, url, generation, args.tasks, args.seed)
    except MCPTasksError as exc:
        raise SystemExit(f"example failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
