"""Benchmarks for issue 3: client CPU per ``tasks/get`` and memory per tracked task.

    python3 -m nox -s bench            # all of it (a few minutes)
    python3 -m nox -s bench -- --quick # smaller counts, for a smoke run

Runs against the real mcp==1.30.0 peer (tests/peers) started on 127.0.0.1, over HTTP and
stdio. CPU is this process's ``time.process_time()``: the server's CPU is not counted.
Memory is ``tracemalloc``'s traced size of the client process while a Poller tracks N tasks
(polling held off by a long floor, so only bookkeeping is measured). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from peers.harness import PEERS, running_http_peer, stdio_command  # noqa: E402

from mcp_tasks_client import (  # noqa: E402
    Client,
    CreateTaskResult,
    Generation,
    HttpTransport,
    Implementation,
    Poller,
    PollPolicy,
    StdioTransport,
    ToolCall,
    Transport,
)

INFO = Implementation("bench", "0")


async def cpu_per_get(transport: Transport, calls: int) -> tuple[float, float]:
    """(CPU µs, wall µs) per tasks/get, sequential, after a warm-up."""
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        created = await client.start(ToolCall("slow_echo", {"seconds": 600}).as_task())
        assert isinstance(created, CreateTaskResult)
        task_id = created.task.task_id
        for _ in range(50):
            await client.get_task(task_id)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await client.get_task(task_id)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        await client.cancel_task(task_id)
    return cpu / calls * 1e6, wall / calls * 1e6


async def memory_per_task(url: str, count: int) -> tuple[float, float]:
    """(bytes per tracked task, seconds to create them) with a Poller tracking ``count``."""
    transport = HttpTransport(url)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        created: list[CreateTaskResult] = []
        limiter = anyio.Semaphore(32)

        async def start_one() -> None:
            async with limiter:
                started = await client.start(ToolCall("slow_echo", {"seconds": 900}).as_task())
                assert isinstance(started, CreateTaskResult)
                created.append(started)

        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(start_one)
        create_s = time.perf_counter() - t0
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        policy = PollPolicy(floor=3600, initial=3600)
        async with Poller(client, policy) as poller, anyio.create_task_group() as tg:

            async def hold() -> None:
                async for _ in poller.as_completed(created):
                    pass  # pragma: no cover

            tg.start_soon(hold)
            while len(poller._tracked) < count:  # noqa: ASYNC110 - a measurement loop
                await anyio.sleep(0.01)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            tg.cancel_scope.cancel()
        tracemalloc.stop()
    return held / count, create_s


async def main(quick: bool) -> None:
    peer = PEERS["mcp1"]
    calls = 300 if quick else 2000
    counts = [200, 1000] if quick else [1000, 10000]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"python {platform.python_version()}, backend trio; peer mcp=={peer.version}\n")
    print("| measurement | value |")
    print("|---|---|")
    with running_http_peer(peer) as url:
        cpu, wall = await cpu_per_get(HttpTransport(url), calls)
        print(
            f"| HTTP: client CPU per tasks/get ({calls} calls) | {cpu:.0f} µs "
            f"(wall {wall:.0f} µs) |"
        )
        cpu, wall = await cpu_per_get(StdioTransport(stdio_command(peer)), calls)
        print(
            f"| stdio: client CPU per tasks/get ({calls} calls) | {cpu:.0f} µs "
            f"(wall {wall:.0f} µs) |"
        )
        for count in counts:
            with running_http_peer(peer) as fresh:
                per_task, create_s = await memory_per_task(fresh, count)
            print(
                f"| memory per tracked task at {count} tasks | {per_task / 1024:.2f} KiB "
                f"(creating them took {create_s:.1f} s) |"
            )
    del url


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    anyio.run(main, args.quick, backend="trio")
