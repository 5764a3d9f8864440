"""CPU per ``tasks/get`` for a host on the official SDK (issue 38): this library over the host's
SDK session, against the SDK's own bare request loop and against this library's HttpTransport.

Run with the Python of an SDK-host venv (``tests/peers/install.py`` makes ``venv-sdk1``: mcp
1.30, and ``venv-sdk2``: mcp 2.3), from the checkout (``PYTHONPATH=.``)::

    .peers/venv-sdk1/bin/python benchmarks/sdk_hosts.py          # mcp 1.x, 2025-11-25
    .peers/venv-sdk2/bin/python benchmarks/sdk_hosts.py          # mcp 2.x, 2026-07-28

It starts the real peer server of the generation (mcp 1.30 / fastmcp 4) on 127.0.0.1, creates
one long task, and polls it ``--polls`` times in a row with each client, ``--rounds`` times,
in turn (A B C A B C ...). Each figure is this process's CPU time (user + system) over the
round divided by the polls: the server runs in its own process and is not counted. It prints
one Markdown row per client: the median over the rounds, min and max, and the ratio to the
SDK's bare loop and to HttpTransport. ``nox -s bench`` runs it for both venvs (``--only sdk``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from peers.harness import PEERS, running_http_peer  # noqa: E402

from mcp_tasks_client import Client, Generation, HttpTransport, ToolCall  # noqa: E402
from mcp_tasks_client.models import CreateTaskResult, Implementation  # noqa: E402
from mcp_tasks_client.sdk import open_client  # noqa: E402

INFO = Implementation("sdk-hosts-bench", "0")
Poll = Callable[[], Awaitable[Any]]


class _Raw:
    """A result type that keeps the raw result (the SDK's loop with no parsing of ours)."""

    @classmethod
    def model_validate(cls, obj: Any, **_: Any) -> Any:
        return obj


def _major() -> int:
    return int(importlib.metadata.version("mcp").split(".")[0])


async def _rounds(polls: int, loop: Poll) -> float:
    """CPU µs per poll of ``polls`` calls of ``loop`` in a row."""
    await loop()  # warm
    start = time.process_time()
    for _ in range(polls):
        await loop()
    return (time.process_time() - start) / polls * 1e6


async def _v1(url: str, polls: int, rounds: int) -> dict[str, list[float]]:
    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamablehttp_client

    generation = Generation.V2025_11_25
    figures: dict[str, list[float]] = {"sdk": [], "bridge": [], "http": []}
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        agreed = await session.initialize()
        async with (
            open_client(session, generation=generation, initialize_result=agreed) as bridged,
            Client(HttpTransport(url), generation=generation, client_info=INFO) as own,
        ):
            created = await bridged.start(
                ToolCall("slow_echo", {"text": "b", "seconds": 600}).as_task()
            )
            assert isinstance(created, CreateTaskResult)
            task_id = created.task.task_id
            request = types.ClientRequest(
                types.GetTaskRequest(params=types.GetTaskRequestParams(taskId=task_id))
            )

            async def sdk() -> Any:
                # The raw result: mcp 1.30's own GetTaskResult refuses its own server's
                # answer (no ttl), and parsing is not what this row compares.
                return await session.send_request(request, _Raw)

            # A 2025-11-25 task belongs to its session: HttpTransport's client polls its own.
            mine = await own.start(ToolCall("slow_echo", {"text": "h", "seconds": 600}).as_task())
            assert isinstance(mine, CreateTaskResult)
            loops: dict[str, Poll] = {
                "sdk": sdk,
                "bridge": lambda: bridged.get_task(task_id),
                "http": lambda: own.get_task(mine.task.task_id),
            }
            for _ in range(rounds):
                for name, loop in loops.items():
                    figures[name].append(await _rounds(polls, loop))
            await bridged.cancel_task(task_id)
            await own.cancel_task(mine.task.task_id)
    return figures


async def _v2(url: str, polls: int, rounds: int) -> dict[str, list[float]]:
    import mcp
    from mcp.client.extension import advertise

    generation = Generation.V2026_07_28
    figures: dict[str, list[float]] = {"sdk": [], "bridge": [], "http": []}
    tasks_ad = advertise("io.modelcontextprotocol/tasks")
    async with (
        mcp.Client(url, extensions=[tasks_ad]) as host,
        open_client(host, generation=generation) as bridged,
        Client(HttpTransport(url), generation=generation, client_info=INFO) as own,
    ):
        created = await bridged.start(
            ToolCall("slow_compute", {"label": "b", "seconds": 600}).as_task()
        )
        assert isinstance(created, CreateTaskResult)
        task_id = created.task.task_id

        class GetTask:
            """The SDK's public path for a method it has no model of: a request object with
            ``name_param`` (Mcp-Name) and a result type that keeps the raw result."""

            name_param = "taskId"

            def model_dump(self, **_: Any) -> dict[str, Any]:
                return {"method": "tasks/get", "params": {"taskId": task_id}}

        async def sdk() -> Any:
            return await host.session.send_request(GetTask(), _Raw)

        loops: dict[str, Poll] = {
            "sdk": sdk,
            "bridge": lambda: bridged.get_task(task_id),
            "http": lambda: own.get_task(task_id),
        }
        for _ in range(rounds):
            for name, loop in loops.items():
                figures[name].append(await _rounds(polls, loop))
        await bridged.cancel_task(task_id)
    return figures


NAMES = {
    "sdk": "the SDK's bare `send_request` loop",
    "bridge": "this library over the SDK session (`open_client`)",
    "http": "this library's own `HttpTransport`",
}


def table(major: int, figures: dict[str, list[float]], polls: int) -> str:
    generation = "2025-11-25" if major == 1 else "2026-07-28"
    version = importlib.metadata.version("mcp")
    sdk = statistics.median(figures["sdk"])
    http = statistics.median(figures["http"])
    lines = [
        f"mcp {version} ({generation}), {len(figures['sdk'])} rounds of {polls} polls, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores:",
        "",
        "| client | CPU µs per tasks/get (median) | min-max | / SDK bare | / HttpTransport |",
        "|---|---|---|---|---|",
    ]
    for key, name in NAMES.items():
        values = figures[key]
        median = statistics.median(values)
        lines.append(
            f"| {name} | {median:,.0f} | {min(values):,.0f}-{max(values):,.0f} "
            f"| {median / sdk:.2f}x | {median / http:.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    major = _major()
    peer = PEERS["mcp1" if major == 1 else "fastmcp4"]
    run = _v1 if major == 1 else _v2
    with running_http_peer(peer) as url:
        figures = anyio.run(run, url, args.polls, args.rounds)
    print(table(major, figures, args.polls))


if __name__ == "__main__":
    main()
