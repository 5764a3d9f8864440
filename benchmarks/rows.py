"""One benchmark row, in a process of its own; prints one JSON line. Run by ``bench.py``.

    python benchmarks/rows.py ROW --url URL [--backend asyncio|trio] [--calls N] [...]

Rows that import only the standard library, anyio and httpx (``floor``, ``httpx``,
``httpx-burst``) or ``mcp`` (``mcp1``, ``mcp1-codec``) run in the official SDK's venv too;
the ``lib-*`` rows need this package. CPU is ``time.process_time()`` of this process only.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import json
import math
import os
import random
import sys
import time
import tracemalloc
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import anyio

warnings.simplefilter("ignore", DeprecationWarning)
# This checkout's package first, whatever is installed (the A/B runs export a commit each).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}
IDLE_TRIPS = 20
WARMUP = 50


def bench_post(base: str, path: str, body: Any) -> Any:
    """POST ``body`` as JSON to the bench server's control ``path`` (``/schedule``)."""
    data = json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def bench_get(base: str, path: str) -> Any:
    """The bench server's control ``path`` (``/completions``), decoded."""
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as answer:
        return json.loads(answer.read())


def lateness(times: dict[str, float], completed: dict[str, float], name: str) -> dict[str, float]:
    """How late each task was ``times``, after the server ``completed`` it: p50, p99, max ms."""
    late = sorted((times[k] - completed[k]) * 1e3 for k in times)
    return {
        f"{name}_p50_ms": late[len(late) // 2],
        f"{name}_p99_ms": late[min(len(late) - 1, int(len(late) * 0.99))],
        f"{name}_max_ms": late[-1],
    }


def _call(polls: int, interval: int = 1000) -> dict[str, Any]:
    return {
        "name": "work",
        "arguments": {"polls": polls, "interval": interval},
        "task": {"ttl": 3_600_000},
    }


def _measure(run: Any, calls: int) -> dict[str, float]:
    cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
    run()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    user = os.times().user - user0
    return {
        "cpu_us": cpu / calls * 1e6,
        "user_us": user / calls * 1e6,
        "wall_us": wall / calls * 1e6,
    }


# -- the wire floor: HTTP/1.1 by hand on asyncio streams ---------------------------------------


async def floor_task(url: str) -> tuple[Any, str, asyncio.StreamWriter]:
    """The floor's connection, initialized, one task created and polled ``WARMUP`` times: its
    ``rpc(method, params, notify=False)``, the task id, and the writer to close."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    session: list[str] = []
    counter = iter(range(1, 10**9))

    async def rpc(method: str, params: dict[str, Any] | None, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            message["id"] = next(counter)
        body = json.dumps(message).encode()
        extra = f"mcp-session-id: {session[0]}\r\n" if session else ""
        writer.write(
            (
                f"POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
                f"accept: application/json, text/event-stream\r\n{extra}"
                f"content-length: {len(body)}\r\n\r\n"
            ).encode()
            + body
        )
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"mcp-session-id" and not session:
                session.append(value.strip().decode())
        data = await reader.readexactly(length) if length else b""
        return json.loads(data)["result"] if data else None

    await rpc("initialize", INIT)
    await rpc("notifications/initialized", None, notify=True)
    task_id = (await rpc("tools/call", _call(0)))["task"]["taskId"]
    for _ in range(WARMUP):
        await rpc("tasks/get", {"taskId": task_id})
    return rpc, task_id, writer


async def floor(url: str, calls: int) -> dict[str, float]:
    rpc, task_id, writer = await floor_task(url)
    cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
    for _ in range(calls):
        await rpc("tasks/get", {"taskId": task_id})
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    user = os.times().user - user0
    writer.close()
    return {
        "cpu_us": cpu / calls * 1e6,
        "user_us": user / calls * 1e6,
        "wall_us": wall / calls * 1e6,
    }


async def floor_burst(
    url: str, tasks: int, polls: int, pool: int, after: int | None = None, interval: int = 0
) -> dict[str, Any]:
    """The wire floor's burst (issue 39 item 6; 2025-11-25): ``tasks`` tasks at once, each
    polled back to back by a coroutine of its own until completed (at its ``polls``-th
    ``tasks/get``), over at most ``pool`` kept-alive connections opened as needed (the same
    bytes as ``floor``, the session's id on each): what ``rows2026.py floor burst`` does on
    2026-07-28. Per poll, with the polls sent (the burst table makes them per task).

    ``after`` (the timed burst, ``floor-timed``): each task instead ends ``after`` ms after it
    was made, its pollInterval ``interval`` ms; each coroutine sleeps the interval the server
    gave between its task's polls and fetches the result (``tasks/result``) once it sees the
    task completed; the figures are ``timed_figures``'.

    Its ``rpc`` repeats ``floor_task``'s on purpose: the floors are the measuring stick, and
    the same bytes through shared helper functions cost the sequential floor 2% (paired, 7
    rounds: 57.5 against 58.7 µs), which would flatter every ratio to it."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    slots = asyncio.Semaphore(pool)
    counter = iter(range(1, 10**9))
    session: list[str] = []

    async def rpc(method: str, params: dict[str, Any] | None, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            message["id"] = next(counter)
        body = json.dumps(message).encode()
        extra = f"mcp-session-id: {session[0]}\r\n" if session else ""
        async with slots:
            conn = idle.pop() if idle else await asyncio.open_connection(host, int(port))
            reader, writer = conn
            writer.write(
                (
                    f"POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
                    f"accept: application/json, text/event-stream\r\n"
                    f"{extra}content-length: {len(body)}\r\n\r\n"
                ).encode()
                + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"mcp-session-id" and not session:
                    session.append(value.strip().decode())
            data = await reader.readexactly(length) if length else b""
            idle.append(conn)
        return json.loads(data)["result"] if data else None

    await rpc("initialize", INIT)
    await rpc("notifications/initialized", None, notify=True)
    if after is not None:
        start = time.process_time(), time.monotonic()
        call = timed_call(after, interval)
        made = [(await rpc("tools/call", call))["task"]["taskId"] for _ in range(tasks)]
        made_at = time.monotonic()
        gets = 0

        async def follow(task_id: str) -> None:
            nonlocal gets
            while True:
                gets += 1
                task = await rpc("tasks/get", {"taskId": task_id})
                if task["status"] == "completed":
                    await rpc("tasks/result", {"taskId": task_id})
                    return
                await asyncio.sleep(task["pollInterval"] / 1000)

        await asyncio.gather(*(follow(task_id) for task_id in made))
        figures = timed_figures(url, made, start, made_at, gets)
        for _, writer in idle:
            writer.close()
        return figures
    ids = [(await rpc("tools/call", _call(polls, 0)))["task"]["taskId"] for _ in range(tasks)]
    sent = 0

    async def drive(task_id: str) -> None:
        nonlocal sent
        while True:
            sent += 1
            if (await rpc("tasks/get", {"taskId": task_id}))["status"] == "completed":
                return

    cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
    await asyncio.gather(*(drive(task_id) for task_id in ids))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    user = os.times().user - user0
    for _, writer in idle:
        writer.close()
    return {
        "cpu_us": cpu / sent * 1e6,
        "user_us": user / sent * 1e6,
        "wall_us": wall / sent * 1e6,
        "polls": sent,
    }


# -- the bare httpx JSON-RPC loop ----------------------------------------------------------------


class _Bare:
    def __init__(self, url: str, client: Any) -> None:
        self.url = url
        self.client = client
        self.headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        self.next_id = 0

    async def rpc(self, method: str, params: dict[str, Any] | None, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        response = await self.client.post(
            self.url, content=json.dumps(message).encode(), headers=self.headers
        )
        if "mcp-session-id" in response.headers and "mcp-session-id" not in self.headers:
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
            self.headers["mcp-protocol-version"] = "2025-11-25"
        return response.json()["result"] if response.status_code == 200 else None

    async def open(self) -> None:
        await self.rpc("initialize", INIT)
        await self.rpc("notifications/initialized", None, notify=True)


async def bare_httpx(url: str, calls: int) -> dict[str, float]:
    import httpx

    async with httpx.AsyncClient() as client:
        bare = _Bare(url, client)
        await bare.open()
        task_id = (await bare.rpc("tools/call", _call(0)))["task"]["taskId"]
        for _ in range(WARMUP):
            await bare.rpc("tasks/get", {"taskId": task_id})
        cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
        for _ in range(calls):
            await bare.rpc("tasks/get", {"taskId": task_id})
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        user = os.times().user - user0
    return {
        "cpu_us": cpu / calls * 1e6,
        "user_us": user / calls * 1e6,
        "wall_us": wall / calls * 1e6,
    }


async def bare_httpx_burst(
    url: str, tasks: int, polls: int, pool: int, after: int | None = None, interval: int = 0
) -> dict[str, Any]:
    """``tasks`` coroutines on one httpx client, each polling its own task until completed.
    ``after``: the timed burst, as ``floor_burst``'s (``httpx-timed``)."""
    import httpx

    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    async with httpx.AsyncClient(limits=limits) as client:
        bare = _Bare(url, client)
        await bare.open()
        if after is not None:
            start = time.process_time(), time.monotonic()
            call = timed_call(after, interval)
            made = [(await bare.rpc("tools/call", call))["task"]["taskId"] for _ in range(tasks)]
            made_at = time.monotonic()
            gets = 0

            async def follow(task_id: str) -> None:
                nonlocal gets
                while True:
                    gets += 1
                    task = await bare.rpc("tasks/get", {"taskId": task_id})
                    if task["status"] == "completed":
                        await bare.rpc("tasks/result", {"taskId": task_id})
                        return
                    await anyio.sleep(task["pollInterval"] / 1000)

            async with anyio.create_task_group() as tg:
                for task_id in made:
                    tg.start_soon(follow, task_id)
            return timed_figures(url, made, start, made_at, gets)
        ids = [
            (await bare.rpc("tools/call", _call(polls, 0)))["task"]["taskId"] for _ in range(tasks)
        ]
        sent = 0

        async def drive(task_id: str) -> None:
            nonlocal sent
            while True:
                sent += 1
                if (await bare.rpc("tasks/get", {"taskId": task_id}))["status"] == "completed":
                    return

        cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
        async with anyio.create_task_group() as tg:
            for task_id in ids:
                tg.start_soon(drive, task_id)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        user = os.times().user - user0
    return {
        "cpu_us": cpu / sent * 1e6,
        "user_us": user / sent * 1e6,
        "wall_us": wall / sent * 1e6,
        "polls": sent,
    }


# -- the timed burst (issue 39): what a host feels ---------------------------------------------

TIMED_AFTER_MS = 2000
"""The timed burst's tasks end this long after they were made (the independent benchmark's)."""
TIMED_INTERVAL_MS = 2
"""And the server asks for this pollInterval: a client polls as fast as it can (or will)."""


def timed_call(after: int, interval: int) -> dict[str, Any]:
    """A ``tools/call`` whose task ends ``after`` ms after it was made, its pollInterval
    ``interval`` ms (``server.py``'s ``after`` argument)."""
    arguments = {"after": after, "interval": interval}
    return {"name": "work", "arguments": arguments, "task": {"ttl": 3_600_000}}


def timed_figures(
    url: str, ids: list[str], start: tuple[float, float], made_at: float, gets: int
) -> dict[str, Any]:
    """The timed burst's figures (both generations; ``rows2026.py`` uses it too), taken the
    moment every outcome is known. ``start``: ``time.process_time()`` and ``time.monotonic()``
    before the first ``tools/call``; ``made_at``: after the last one; ``gets``: the
    ``tasks/get`` sent. ``lag_ms``: from the instant the last task ended (the server's
    ``GET /completions``; its ``time.monotonic()`` is this process's clock, one
    ``CLOCK_MONOTONIC`` on Linux) to this moment: how late the host learned the last outcome.
    A task the server never reported ended is a KeyError: the row did not see it end."""
    cpu = time.process_time() - start[0]
    done = time.monotonic()
    ended = bench_get(url.rsplit("/", 1)[0], "/completions")
    last = max(ended[task_id] for task_id in ids)
    return {
        "tasks": len(ids),
        "polls": gets,
        "cpu_ms_per_task": cpu / len(ids) * 1e3,
        "wall_s": done - start[1],
        "make_s": made_at - start[1],
        "lag_ms": (done - last) * 1e3,
    }


# -- this library ------------------------------------------------------------------------------


def _lib_client(
    url: str, transport: str = "http", pool: int | None = None, tracing: Any = None
) -> Any:
    from mcp_tasks_client import Client, Generation, HttpTransport, observability
    from mcp_tasks_client.models import Implementation

    # What a fresh `nox -s bench` measures (no opentelemetry installed): no spans.
    observability.tracing(False)

    kwargs: dict[str, Any] = {} if pool is None else {"max_connections": pool}
    if transport == "lean":
        from mcp_tasks_client import LeanHttpTransport

        made: Any = LeanHttpTransport(url, **kwargs)
    elif transport == "httpx":  # the httpx engine, its own client (yesterday's default)
        made = HttpTransport(url, engine="httpx", **kwargs)
    elif transport == "httpx-lean":  # issue 39's second candidate: our pool under httpx's client
        import httpx

        limits = httpx.Limits(max_connections=pool or 64, max_keepalive_connections=pool or 64)
        own = httpx.AsyncClient(transport=_lean_under_httpx(url, pool or 64), limits=limits)
        made = HttpTransport(url, http_client=own)
    elif transport == "httpx-lean-direct":  # the same, under the httpx engine's direct path
        made = HttpTransport(url, engine="httpx", **kwargs)
        made._engine.direct = _lean_under_httpx(url, pool or 64)  # what it sends to, skipping
        # the client layer (as the httpx engine does with a client of its own)
    elif transport.startswith("stdio"):  # "stdio:MS": server.py over stdio, MS ms late a get
        from mcp_tasks_client import StdioTransport

        server = Path(__file__).resolve().parent / "server.py"
        late = transport.partition(":")[2] or "0"
        made = StdioTransport([sys.executable, str(server), "stdio", late])
    else:  # "http": whatever HttpTransport(url) is (the lean engine since issue 39)
        made = HttpTransport(url, **kwargs)
    return Client(
        made,
        generation=Generation.V2025_11_25,
        client_info=Implementation("bench", "0"),
        tracing=tracing,  # a Client's own spans (None: the process default, off above)
    )


def _lean_under_httpx(url: str, size: int) -> Any:
    """Issue 39's second candidate, as a prototype: the lean engine's pool under httpx's
    transport interface (``httpx.AsyncClient(transport=...)``), so the client layer (auth flow,
    hooks, mounts) stays and the pool is ours. Only for measuring what that costs per poll."""
    import httpx

    from mcp_tasks_client._io import _url
    from mcp_tasks_client._io._h1_engine import LeanEngine

    skip = {b"host", b"content-length", b"transfer-encoding"}

    class Stream(httpx.AsyncByteStream):
        def __init__(self, exchange: Any, response: Any) -> None:
            self.exchange, self.response = exchange, response

        async def __aiter__(self) -> Any:
            async for chunk in self.response.aiter_bytes():
                yield chunk

        async def aclose(self) -> None:
            await self.exchange.__aexit__(None, None, None)

    class LeanUnderHttpx(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.engine = LeanEngine(
                _url.parse(url),
                ssl_context=None,
                connect_timeout=10.0,
                write_timeout=30.0,
                max_connections=size,
                max_held=size,
                why="a benchmark prototype",
            )

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            headers = {
                k.decode("latin-1"): v.decode("latin-1")
                for k, v in request.headers.raw
                if k.lower() not in skip
            }
            body = await request.aread()
            exchange = self.engine.stream(request.method, headers, body, held=False, inline=None)
            response = await exchange.__aenter__()
            return httpx.Response(
                response.status_code,
                headers=list(response.headers.items()),
                stream=Stream(exchange, response),
            )

        async def aclose(self) -> None:
            await self.engine.aclose()

    return LeanUnderHttpx()


async def _lib_start(client: Any, polls: int, interval: int = 1000) -> Any:
    from mcp_tasks_client import ToolCall
    from mcp_tasks_client.models import CreateTaskResult

    call = ToolCall("work", {"polls": polls, "interval": interval}).as_task(
        ttl=dt.timedelta(hours=1)
    )
    created = await client.start(call)
    assert isinstance(created, CreateTaskResult)
    return created


async def lib(url: str, calls: int, transport: str) -> dict[str, float]:
    async with _lib_client(url, transport) as client:
        task_id = (await _lib_start(client, 0)).task.task_id
        for _ in range(WARMUP):
            await client.get_task(task_id)
        cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
        for _ in range(calls):
            await client.get_task(task_id)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        user = os.times().user - user0
    return {
        "cpu_us": cpu / calls * 1e6,
        "user_us": user / calls * 1e6,
        "wall_us": wall / calls * 1e6,
    }


def _eager() -> Any:
    from mcp_tasks_client import PollPolicy

    return PollPolicy(floor=0, initial=0, backoff=1.0, jitter=0)


async def lib_poller(url: str, calls: int, transport: str) -> dict[str, float]:
    """One ``Poller.wait`` on a task that completes at its ``calls``-th poll, polled back to
    back (the server's pollInterval is 0 and so is the policy's floor)."""
    from mcp_tasks_client import Poller

    async with _lib_client(url, transport) as client:
        warm = await _lib_start(client, WARMUP, 0)
        created = await _lib_start(client, calls, 0)
        async with Poller(client, _eager()) as poller:
            await poller.wait(warm)
            sent0 = poller.polls_sent
            cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
            await poller.wait(created)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            user = os.times().user - user0
            sent = poller.polls_sent - sent0
    return {
        "cpu_us": cpu / sent * 1e6,
        "user_us": user / sent * 1e6,
        "wall_us": wall / sent * 1e6,
        "polls": sent,
    }


async def lib_trace(url: str, calls: int, mode: str, transport: str) -> dict[str, float]:
    """A long task (it completes at its ``calls``-th poll), waited with a Poller, tracing
    ``off``, on with ``every`` poll a span, or on with only the polls that saw a ``changes``:
    CPU per poll and spans per task (issue 27). Spans go to an in-memory exporter (what an
    exporter does with them is not the library's cost)."""
    from mcp_tasks_client import Poller, observability

    exporter: Any = None
    spans: Any = None
    if mode != "off":
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        spans = observability.Tracing.on(tracer_provider=provider, polls=mode, metrics=False)
    async with _lib_client(url, transport, tracing=spans) as client:
        if mode != "off":  # _lib_client turned the process default off: the Poller's gate
            observability.tracing(True, tracer_provider=provider, polls=mode, metrics=False)
        warm = await _lib_start(client, WARMUP, 0)
        async with Poller(client, _eager()) as poller:
            await poller.wait(warm)
            if exporter is not None:
                exporter.clear()
            created = await _lib_start(client, calls, 0)
            sent0 = poller.polls_sent
            cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
            await poller.wait(created)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            user = os.times().user - user0
            sent = poller.polls_sent - sent0
    spans = 0 if exporter is None else len(exporter.get_finished_spans())
    return {
        "cpu_us": cpu / sent * 1e6,
        "user_us": user / sent * 1e6,
        "wall_us": wall / sent * 1e6,
        "polls": sent,
        "spans": spans,
    }


async def lib_burst(
    url: str, tasks: int, polls: int, pool: int | None, in_flight: int | None, transport: str
) -> dict[str, float]:
    import attrs

    from mcp_tasks_client import Poller

    policy = _eager()
    if in_flight is not None:
        policy = attrs.evolve(policy, max_in_flight=in_flight)
    async with _lib_client(url, transport, pool) as client:
        created = [await _lib_start(client, polls, 0) for _ in range(tasks)]
        async with Poller(client, policy) as poller:
            cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
            await poller.wait_all(created)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            user = os.times().user - user0
            sent = poller.polls_sent
    return {
        "cpu_us": cpu / sent * 1e6,
        "user_us": user / sent * 1e6,
        "wall_us": wall / sent * 1e6,
        "polls": sent,
    }


async def lib_timed(
    url: str, tasks: int, after: int, interval: int, transport: str, floor: float | None = None
) -> Any:
    """The timed burst (issue 39): ``tasks`` tasks made one after another, each ending
    ``after`` ms after it was made, its pollInterval ``interval`` ms, all followed by one
    ``Poller.wait_all`` with the default PollPolicy (``Poller(client)``): its ``floor``
    (50 ms) is above a 2 ms interval, so each task is polled every 50-55 ms (the floor, and
    the jitter's +10 %, held above the floor); each outcome's ``tasks/result`` is part of the
    wait. ``floor``: ``PollPolicy(floor=floor)`` instead (0: the server's interval honoured
    as it is, as the floors do). Figures: ``timed_figures``', and the Poller's FallingBehind
    warnings."""
    from mcp_tasks_client import Poller, PollPolicy, ToolCall
    from mcp_tasks_client.errors import FallingBehind, MCPTasksError

    async with _lib_client(url, transport) as client:
        call = ToolCall("work", {"after": after, "interval": interval}).as_task(
            ttl=dt.timedelta(hours=1)
        )
        start = time.process_time(), time.monotonic()
        created = [await client.start(call) for _ in range(tasks)]
        made_at = time.monotonic()
        policy = PollPolicy() if floor is None else PollPolicy(floor=floor)
        async with Poller(client, policy) as poller:
            outcomes = await poller.wait_all(created)
            figures = timed_figures(
                url, [c.task.task_id for c in created], start, made_at, poller.polls_sent
            )
            behind = sum(isinstance(w, FallingBehind) for w in poller.warnings)
    failed = [o for o in outcomes.values() if isinstance(o, MCPTasksError)]
    if failed or len(outcomes) != tasks:
        raise SystemExit(f"{len(failed)} of {tasks} waits failed: {failed[:3]}")
    return {**figures, "falling_behind": behind}


def _seeded(client: Any, count: int, interval: int) -> list[Any]:
    from mcp_tasks_client.models import CreateTaskResult

    return [
        client.decode(
            {
                "task": {
                    "taskId": f"seeded-{interval}-{n}",
                    "status": "working",
                    "createdAt": "2026-01-01T00:00:00Z",
                    "lastUpdatedAt": "2026-01-01T00:00:00Z",
                    "ttl": 3_600_000,
                    "pollInterval": interval,
                }
            },
            CreateTaskResult,
        )
        for n in range(count)
    ]


async def lib_memory(url: str, count: int, waited: bool) -> dict[str, float]:
    """Heap per task while a Poller holds ``count`` tasks that are never polled (the floor is an
    hour): one ``wait()`` each (``waited``), or one ``as_completed`` over all of them."""
    from mcp_tasks_client import Poller, PollPolicy

    idle = PollPolicy(floor=3600, initial=3600)
    async with _lib_client(url) as client:
        created = _seeded(client, count, 3_600_000)
        _quiet_gc()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        async with Poller(client, idle) as poller, anyio.create_task_group() as tg:
            if waited:
                for one in created:
                    tg.start_soon(poller.wait, one)
            else:

                async def hold() -> None:
                    async for _ in poller.as_completed(created):
                        pass

                tg.start_soon(hold)
            while len(poller._registry.live) < count:  # noqa: ASYNC110 - a measurement loop
                await anyio.sleep(0.01)
            await anyio.sleep(0.05)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            _loud_gc()  # the teardown is not measured: without tracemalloc's cost
            tg.cancel_scope.cancel()
    if not waited:
        return {"bytes_per_task": held / count}
    # What the caller's own task costs: one task per wait is the caller's choice. It is
    # measured as a task started the same way (anyio's start_soon) parked the way
    # Poller.wait parks (the loop's own primitive: a future, trio's wait_task_rescheduled),
    # so the difference is the poller's. The floor: the loop's own task, parked so, without
    # anyio. And the earlier measure: an anyio task sleeping on an anyio.Event of its own.
    n = min(count, 20_000)
    caller = await _parked_tasks(n, raw=False)
    return {
        "bytes_per_task": held / count,
        "caller_task_bytes": caller,
        "poller_bytes_per_task": held / count - caller,
        "raw_task_bytes": await _parked_tasks(n, raw=True),
        "event_task_bytes": await _bare_tasks(n),
    }


async def lib_memory_polled(
    url: str, count: int, interval: int, transport: str
) -> dict[str, float]:
    """Heap held while a Poller waits on ``count`` tasks that are being polled (each
    ``interval`` ms; the server answers ``working`` for ever), one ``wait()`` each, measured
    once every task was polled twice on average. Issue 39 item 4: the slope between two counts
    is the memory per waited task, transport and polls in flight included."""
    from mcp_tasks_client import Poller, PollPolicy

    seconds = interval / 1000
    policy = PollPolicy(floor=seconds, initial=seconds, jitter=0.0, backoff=1.0)
    async with _lib_client(url, transport) as client:
        created = _seeded(client, count, interval)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        async with Poller(client, policy) as poller, anyio.create_task_group() as tg:
            for one in created:
                tg.start_soon(poller.wait, one)
            while poller.polls_sent < 2 * count:  # noqa: ASYNC110 - a measurement loop
                await anyio.sleep(0.01)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            tracemalloc.stop()
            tg.cancel_scope.cancel()
    return {"bytes": held, "bytes_per_task": held / count}


async def bare_httpx_memory_polled(url: str, count: int, interval: int) -> dict[str, float]:
    """The bare httpx loop's :func:`lib_memory_polled`: ``count`` coroutines on one client
    (a pool of 64, as the library's default), each polling its task every ``interval`` ms."""
    import httpx

    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    # No timeouts: a thousand polls wait in line for 64 connections (as the library's do).
    async with httpx.AsyncClient(limits=limits, timeout=None) as client:
        bare = _Bare(url, client)
        await bare.open()
        sent = 0

        async def drive(task_id: str) -> None:
            nonlocal sent
            while True:
                sent += 1
                await bare.rpc("tasks/get", {"taskId": task_id})
                await anyio.sleep(interval / 1000)

        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        async with anyio.create_task_group() as tg:
            for n in range(count):
                tg.start_soon(drive, f"seeded-{interval}-{n}")
            while sent < 2 * count:  # noqa: ASYNC110 - a measurement loop
                await anyio.sleep(0.01)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            tracemalloc.stop()
            tg.cancel_scope.cancel()
    return {"bytes": held, "bytes_per_task": held / count}


def _parker() -> Any:
    """A coroutine function that parks its task until cancelled, on the loop's own
    primitive (what ``Poller.wait`` parks on): a bare future, ``wait_task_rescheduled``."""
    import sniffio

    if sniffio.current_async_library() == "trio":
        import trio

        async def parked_trio() -> None:
            await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.SUCCEEDED)

        return parked_trio

    async def parked_asyncio() -> None:
        await asyncio.get_running_loop().create_future()

    return parked_asyncio


async def _parked_tasks(count: int, raw: bool) -> float:
    """Heap per task of ``count`` parked tasks (:func:`_parker`), started by anyio's
    ``start_soon`` or (``raw``) by the loop itself (``asyncio.create_task``, a trio
    nursery), measured as ``lib_memory`` does."""
    import sniffio

    parked = _parker()
    trio_loop = sniffio.current_async_library() == "trio"
    _quiet_gc()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    if raw and trio_loop:
        import trio

        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(parked)
            await trio.sleep(0.05)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            _loud_gc()
            nursery.cancel_scope.cancel()
    elif raw:
        tasks = [asyncio.create_task(parked()) for _ in range(count)]
        await asyncio.sleep(0.05)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        _loud_gc()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    else:
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                tg.start_soon(parked)
            await anyio.sleep(0.05)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            _loud_gc()
            tg.cancel_scope.cancel()
    return held / count


async def _bare_tasks(count: int) -> float:
    """Heap per task of ``count`` tasks each sleeping on an ``anyio.Event`` of its own (what
    ``Poller.wait`` parked on before issue 12 part 3), measured as ``lib_memory`` does."""

    async def sleeper() -> None:
        await anyio.Event().wait()

    _quiet_gc()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(sleeper)
        await anyio.sleep(0.05)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        _loud_gc()
        tg.cancel_scope.cancel()
    return held / count


def _quiet_gc() -> None:
    """Before a memory measurement: what exists now frozen out of the collector's passes,
    automatic collection off. The heap reading is the same (``gc.collect()`` still runs before
    it), the row at 100,000 waits about 40 % cheaper in CPU (``--full``)."""
    gc.collect()
    gc.freeze()
    gc.disable()


def _loud_gc() -> None:
    tracemalloc.stop()
    gc.enable()
    gc.unfreeze()


def scheduler_cost(count: int, polls: int) -> dict[str, float]:
    """CPU per poll of the sans-I/O scheduler alone with ``count`` tasks tracked."""
    from mcp_tasks_client import PollPolicy
    from mcp_tasks_client._sansio.scheduler import PollScheduler

    scheduler = PollScheduler(PollPolicy(jitter=0.5), random.Random(1))
    for n in range(count):
        scheduler.track(f"t{n}", 0.0, 10.0)
    now, done = 0.0, 0
    cpu0 = time.process_time()
    while done < polls:
        now += 0.001
        for task_id in scheduler.pop_due(now):
            scheduler.answered(task_id, now, 10.0)
            done += 1
        scheduler.next_due()
    cpu = time.process_time() - cpu0
    return {"cpu_us": cpu / done * 1e6, "polls": done}


def _poll_sender(poller: Any) -> Any:
    """What sends a Poller's tasks/get: its PollLoop (issue 33), its Driver (issue 20), or
    the Poller itself (older commits)."""
    return getattr(poller, "_loop", None) or getattr(poller, "_driver", poller)


def _scheduler_of(poller: Any) -> Any:
    """A Poller's poll scheduler: its Tracker's (issue 33), or its own (older commits)."""
    tracker = getattr(poller, "_tracker", None)
    return tracker.scheduler if tracker is not None else poller._scheduler


async def lib_lateness(
    url: str,
    idle: int,
    active: int,
    seconds: float,
    freeze: bool = False,
    transport: str = "http",
) -> dict[str, Any]:
    """How late polls start (start minus due time) while a Poller tracks ``idle`` tasks polled
    hourly and ``active`` ones polled every second (jitter 0.5). Beside the lateness: the
    garbage collector's passes during the polling (a full pass stops the loop for as long as
    it walks every container), the containers it tracks with every task held, and the CPU one
    full pass then costs (what a pause would be on a quiet machine). ``freeze``: the caller
    calls ``gc.freeze()`` once every task is held (what a host may do; the library never
    does), so full passes no longer walk what was set up."""
    from mcp_tasks_client import Poller, PollPolicy

    policy = PollPolicy(floor=0.01, initial=1.0, backoff=1.0, jitter=0.5)
    late: list[float] = []
    passes = [0, 0, 0]  # collections of each generation once the first poll started
    pauses: list[float] = []  # how long each full (generation 2) pass took, wall clock
    started: list[float] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if not late:
            return  # setting up: not polling yet
        if phase == "start":
            passes[info["generation"]] += 1
            started[:] = [time.perf_counter()]
        elif info["generation"] == 2 and started:
            pauses.append((time.perf_counter() - started[0]) * 1e3)

    full: dict[str, float] = {}
    async with _lib_client(url, transport) as client:
        seeds = _seeded(client, idle, 3_600_000)
        hot = _seeded(client, active, 1000)
        hot = [
            client.decode(
                {"task": {**client.encode(h.task), "taskId": f"seeded-1000-h{n}"}}, type(h)
            )
            for n, h in enumerate(hot)
        ]
        async with Poller(client, policy) as poller:
            # Where a poll's tasks/get is sent: PollLoop.get since issue 33, the scheduler's
            # Driver.get since the Poller was split (issue 20), Poller._get before (so the row
            # still runs on older commits).
            owner: Any = _poll_sender(poller)
            name = "_get" if owner is poller else "get"
            original = getattr(owner, name)
            scheduler = _scheduler_of(poller)

            async def timed(task_id: str, timeout: float | None = None) -> Any:
                due = scheduler.due(task_id)
                if due is not None:
                    late.append(anyio.current_time() - due)
                return await original(task_id, timeout)

            setattr(owner, name, timed)
            gc.callbacks.append(counted)
            async with anyio.create_task_group() as tg:

                async def hold(refs: list[Any]) -> None:
                    async for _ in poller.as_completed(refs):
                        pass

                tg.start_soon(hold, seeds)
                tg.start_soon(hold, hot)
                if freeze:
                    while len(poller._registry.live) < idle + active:  # noqa: ASYNC110
                        await anyio.sleep(0.001)
                    gc.collect()
                    gc.freeze()
                await anyio.sleep(seconds)
                gc.callbacks.remove(counted)
                measured = len(late)
                # After the window, every task still held: what one full pass costs.
                full["objects"] = len(gc.get_objects())
                cpu0 = time.process_time()
                gc.collect()
                full["cpu_ms"] = (time.process_time() - cpu0) * 1e3
                tg.cancel_scope.cancel()
    late = late[:measured]
    late.sort()
    if not late:
        return {"polls": 0}
    return {
        "polls": len(late),
        "p50_ms": late[len(late) // 2] * 1e3,
        "p99_ms": late[int(len(late) * 0.99)] * 1e3,
        "max_ms": late[-1] * 1e3,
        "gc_passes": passes,  # generation 0, 1, 2, during the polling (not the one forced)
        "full_gc_pauses_ms": pauses,
        "gc_objects": full.get("objects", 0),
        "full_gc_cpu_ms": full.get("cpu_ms", 0.0),
    }


# -- issue 25 item 4: sustained throughput ------------------------------------------------------


def sustained_lead(count: int) -> float:
    """Seconds from the start of the tracking to the first poll of the sustained row: every
    task is tracked (in one go: ``as_completed`` holds a CreateTaskResult without a
    checkpoint) before any poll is due, so the polls start evenly instead of as a backlog.
    Generous: 0.1 s and 50 µs a task (check runs on a busy machine tracked 100,000 in 1.7 and
    2.6 s, 17 and 26 µs a task; the row reports ``overran`` if the tracking ever took longer,
    and the search counts such a probe as failed, saying so)."""
    return 0.1 + count * 50e-6


def spread_seeds(client: Any, count: int, interval_ms: int, lead: float, payload: Any) -> list[Any]:
    """``count`` CreateTaskResults seeded locally (``payload(task id, pollInterval ms)``: the
    generation's encoding) for tasks the bench server answers as working with pollInterval
    ``interval_ms`` (its ``seeded-<interval ms>-<n>`` ids). Each result's own pollInterval,
    which sets only its first wait, is ``lead`` plus an even share of one interval: the first
    polls come evenly, ``count`` per ``interval_ms``, after ``lead``; every later one
    ``interval_ms`` after the task's previous answer (the server's interval), so they stay
    spread."""
    from mcp_tasks_client.models import CreateTaskResult

    lead_ms = lead * 1000
    return [
        client.decode(
            payload(f"seeded-{interval_ms}-s{n}", round(lead_ms + interval_ms * (n + 1) / count)),
            CreateTaskResult,
        )
        for n in range(count)
    ]


def _seed_2025(task_id: str, interval_ms: int) -> dict[str, Any]:
    return {
        "task": {
            "taskId": task_id,
            "status": "working",
            "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttl": 3_600_000,
            "pollInterval": interval_ms,
        }
    }


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))]


async def sustained(
    client: Any,
    base: str,
    refs: list[Any],
    interval_ms: int,
    seconds: float,
    lead: float,
    ramp: float,
) -> dict[str, Any]:
    """Issue 25 item 4, either generation: a Poller tracks ``refs`` (one ``as_completed``;
    tasks that never end), every task polled every ``interval_ms`` (the server's interval;
    ``PollPolicy(floor=0, backoff=1.0, jitter=0)``: no backoff, no jitter, the default
    ``max_in_flight``), the first polls spread evenly (:func:`spread_seeds`). First 50
    ``tasks/get`` one after another (the request path's first use: imports, compiles); then,
    after ``lead`` (the tracking) and ``ramp`` (the first polls: connections opened), a window
    of ``seconds``: the polls started in it and their rate against the target ``count /
    interval``; the lateness of the polls due in it, start minus due, read where
    ``lib-lateness`` reads it (the scheduler's due time of the task as its ``tasks/get``
    starts: a poll that waited for a slot is late by that wait too), a poll due in the window
    but not started by its end counted as late by the time from its due time to the end (at
    least that late: a backlog is not left out); their round trips (start to answer); this
    process's CPU
    over the window's wall time (its share of its one core when pinned), the server's
    likewise (``base``'s ``/stats`` ``cpu_s``); full collections and polls that waited for a
    slot in the window. A poll is due ``interval_ms`` after the previous answer (C-19), so the
    rate falls short of the target by about one round trip per interval."""
    from mcp_tasks_client import Poller, PollPolicy

    count = len(refs)
    policy = PollPolicy(floor=0, backoff=1.0, jitter=0)
    starts: list[float] = []  # every poll's start, in order
    dues: list[float] = []  # and its due time
    started_due: dict[str, float] = {}  # each task's last started poll's due time
    trips: list[tuple[float, float]] = []  # every answered poll's start and round trip
    now = anyio.current_time
    for _ in range(WARMUP):  # the request path's first-use costs (imports, compiles) first
        await client.get_task(refs[0].task.task_id)
    async with Poller(client, policy) as poller, anyio.create_task_group() as tg:
        driver, due = _poll_sender(poller), _scheduler_of(poller).due
        original = driver.get

        async def timed(task_id: str, timeout: float | None = None) -> Any:
            started = now()
            when = due(task_id)
            if when is not None:
                starts.append(started)
                dues.append(when)
                started_due[task_id] = when
            answer = await original(task_id, timeout)
            trips.append((started, now() - started))
            return answer

        driver.get = timed  # type: ignore[method-assign]

        async def hold() -> None:
            async for _ in poller.as_completed(refs):
                pass  # never: the seeded tasks never end

        start = now()
        tg.start_soon(hold)
        while len(poller._registry.live) < count:  # noqa: ASYNC110 - the tracking runs in one go
            await anyio.sleep(0.001)
        tracked = now() - start
        await anyio.sleep_until(start + lead + ramp)
        server0 = await anyio.to_thread.run_sync(bench_get, base, "/stats")
        full0, delayed0 = gc.get_stats()[2]["collections"], poller.polls_delayed
        cpu0, wall0 = time.process_time(), now()
        await anyio.sleep_until(wall0 + seconds)
        cpu1, wall1 = time.process_time(), now()
        full, delayed = gc.get_stats()[2]["collections"] - full0, poller.polls_delayed - delayed0
        pending = [  # due in the window, not started by its end (waiting for a slot or a pass)
            wall1 - when
            for when, _, task_id, _ in _scheduler_of(poller)._entries.values()
            if wall0 <= when < wall1 and started_due.get(task_id) != when
        ]
        server1 = await anyio.to_thread.run_sync(bench_get, base, "/stats")
        tg.cancel_scope.cancel()
    import bisect

    first, last = bisect.bisect_left(starts, wall0), bisect.bisect_left(starts, wall1)
    pairs = zip(starts, dues, strict=True)
    window = sorted([at - when for at, when in pairs if wall0 <= when < wall1] + pending)
    span = wall1 - wall0
    out: dict[str, Any] = {
        "tasks": count,
        "interval_ms": interval_ms,
        "target_per_s": count * 1000 / interval_ms,
        "polls": last - first,  # started in the window
        "polls_per_s": (last - first) / span,
        "due": len(window),  # due in the window: the lateness quantiles' polls
        "pending": len(pending),  # of which not started by its end
        "seconds": span,
        "cpu_share": (cpu1 - cpu0) / span,
        "delayed": delayed,
        "full_gc": full,
        "setup_s": tracked,
        "lead_s": lead,
        "overran": tracked > lead,  # polls were due before every task was tracked
    }
    if "cpu_s" in server0 and "cpu_s" in server1:
        out["server_cpu_share"] = (server1["cpu_s"] - server0["cpu_s"]) / span
    # TCP connections the server accepted up to the window's end (the bench starts a server
    # per probe: the row's pool at its largest, with the warm-up's and the stats' own)
    out["connections"] = server1.get("connections", 0)
    answered = sorted(trip for at, trip in trips if wall0 <= at < wall1)
    if answered:  # start to answer of the window's polls: the transport and the server
        out["rtt_p50_ms"] = _quantile(answered, 0.5) * 1e3
        out["rtt_p99_ms"] = _quantile(answered, 0.99) * 1e3
    if window:
        out["p50_ms"] = _quantile(window, 0.5) * 1e3
        out["p99_ms"] = _quantile(window, 0.99) * 1e3
        out["max_ms"] = window[-1] * 1e3
    try:
        import resource

        out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    except ImportError:  # not on this platform
        pass
    return out


async def lib_sustained(
    url: str,
    count: int,
    interval_ms: int,
    seconds: float,
    ramp: float,
    transport: str,
    pool: int | None = None,
) -> dict[str, Any]:
    """``sustained`` on 2025-11-25 (``server.py``); ``pool``: the transport's
    ``max_connections`` (None: its default)."""
    async with _lib_client(url, transport, pool) as client:
        lead = sustained_lead(count)
        seed0 = time.perf_counter()
        refs = spread_seeds(client, count, interval_ms, lead, _seed_2025)
        seeded = time.perf_counter() - seed0
        base = url.rsplit("/", 1)[0]
        measured = await sustained(client, base, refs, interval_ms, seconds, lead, ramp)
    return {**measured, "seed_s": seeded}


async def lib_slow(
    url: str,
    count: int,
    interval_ms: int,
    seconds: float,
    ramp: float,
    transport: str,
    pool: int | None,
    in_flight: int | None,
    cap: int | None,
) -> dict[str, Any]:
    """Issue 39 item 5: ``count`` tasks polled every ``interval_ms`` (the server's interval;
    no backoff, no jitter, the first polls spread over one interval) against a server that
    answers each ``tasks/get`` late (``server.py PORT GET_LATENCY_MS``). The Poller's bound is
    ``in_flight`` (``max_in_flight``; None: the default 64), fixed, or with ``cap`` following
    latency (``FollowLatency(cap=cap)``); ``pool``: the transport's ``max_connections``
    (``transport`` ``stdio:MS``: ``server.py stdio MS`` instead, a child process; no pool). After
    ``ramp`` s of polling (the bound's first resizes), a window of ``seconds``: the polls
    started in it (per second, against the target ``count / (interval + round trip)``: a poll
    is due one interval after the previous answer, C-19), their lateness (start minus due
    time, as ``lib-sustained`` reads it), each task's gap between successive poll starts, the
    round trips, and what the Poller said (its FallingBehind and InFlightResized warnings, the
    bound at the end, the round trip it measured)."""
    import attrs

    from mcp_tasks_client import FollowLatency, Poller, PollPolicy
    from mcp_tasks_client.errors import FallingBehind, InFlightResized

    policy = PollPolicy(floor=0, backoff=1.0, jitter=0)
    if in_flight is not None:
        policy = attrs.evolve(policy, max_in_flight=in_flight)
    if cap is not None:
        policy = attrs.evolve(policy, in_flight=FollowLatency(cap=cap))
    now = anyio.current_time
    starts: list[tuple[float, float]] = []  # each poll's start and its due time
    gaps: list[tuple[float, float]] = []  # a poll's start, and its task's gap since the last
    last: dict[str, float] = {}
    trips: list[tuple[float, float]] = []
    async with _lib_client(url, transport, pool) as client:
        lead = sustained_lead(count)
        refs = spread_seeds(client, count, interval_ms, lead, _seed_2025)
        # no warm-up: at the server's latency, 50 sequential calls would take 25 s; the window
        # comes after the ramp's polls anyway
        async with Poller(client, policy) as poller, anyio.create_task_group() as tg:
            driver, due = _poll_sender(poller), _scheduler_of(poller).due
            original = driver.get

            async def timed(task_id: str, timeout: float | None = None) -> Any:
                started = now()
                when = due(task_id)
                if when is not None:
                    starts.append((started, when))
                    previous = last.get(task_id)
                    if previous is not None:
                        gaps.append((started, started - previous))
                    last[task_id] = started
                answer = await original(task_id, timeout)
                trips.append((started, now() - started))
                return answer

            driver.get = timed

            async def hold() -> None:
                async for _ in poller.as_completed(refs):
                    pass  # never: the seeded tasks never end

            start = now()
            tg.start_soon(hold)
            await anyio.sleep_until(start + lead + ramp)
            cpu0, wall0 = time.process_time(), now()
            await anyio.sleep_until(wall0 + seconds)
            cpu1, wall1 = time.process_time(), now()
            warned = list(poller.warnings)
            limit, measured = poller.in_flight_limit, poller.poll_latency
            tg.cancel_scope.cancel()
    span = wall1 - wall0
    window = sorted(at - when for at, when in starts if wall0 <= at < wall1)
    gap = sorted(g for at, g in gaps if wall0 <= at < wall1)
    # the window's answered polls (a tiny window may have none answered: then every poll's)
    answered = sorted(trip for at, trip in trips if wall0 <= at < wall1) or sorted(
        trip for _, trip in trips
    )
    rtt = _quantile(answered, 0.5) if answered else math.nan
    behind = [w for w in warned if isinstance(w, FallingBehind)]
    resized = [w for w in warned if isinstance(w, InFlightResized)]
    out: dict[str, Any] = {
        "tasks": count,
        "interval_ms": interval_ms,
        "target_per_s": count / (interval_ms / 1000 + rtt) if answered else math.nan,
        "polls_per_s": len(window) / span,
        "cpu_share": (cpu1 - cpu0) / span,
        "limit": limit,
        "latency_ms": None if measured is None else measured * 1e3,
        "falling_behind": len(behind),
        "resizes": [(w.before, w.after) for w in resized],
    }
    if behind:
        out["first_warning"] = str(behind[0])
    if window:
        out["late_p50_ms"] = _quantile(window, 0.5) * 1e3
        out["late_p99_ms"] = _quantile(window, 0.99) * 1e3
    if gap:
        out["gap_p50_s"] = _quantile(gap, 0.5)
        out["gap_p99_s"] = _quantile(gap, 0.99)
    if answered:
        out["rtt_p50_ms"] = rtt * 1e3
    return out


def lib_codec(payload: dict[str, Any], rounds: int) -> dict[str, float]:
    from mcp_tasks_client import Generation
    from mcp_tasks_client._drivers import driver_for
    from mcp_tasks_client.models import (
        ClientCapabilities,  # type: ignore[attr-defined]
        Implementation,
    )

    dialect = driver_for(Generation.V2025_11_25, ClientCapabilities(), Implementation("b", "0"))
    read = dialect.read_task
    for _ in range(200):
        read(payload)
    return _measure(lambda: [read(payload) for _ in range(rounds)], rounds)


def sse_decoders(events: int) -> dict[str, float]:
    """Both SSE decoders over the same bytes, in one process, interleaved: ``events`` small
    events (a ``tasks/get`` answer each, as a poll over SSE reads them) cut in 4 KiB chunks,
    then one 1 MiB event (a large tool result) in 64 KiB chunks. CPU per small event (µs) and
    per large event (ms); ``hand`` is the hand-written decoder, ``httpx_sse`` httpx-sse under
    the library's bound (what HttpTransport uses)."""
    from mcp_tasks_client._io._sse import SSEDecoder
    from mcp_tasks_client._io._sse_httpx import HttpxSSEDecoder

    answer = {"jsonrpc": "2.0", "id": 7, "result": {**CODEC_PAYLOAD}}
    one = b"id: 1\nevent: message\ndata: " + json.dumps(answer).encode() + b"\n\n"
    small = one * events
    large_body = json.dumps({"text": "x" * (1 << 20)}).encode()
    large = b"data: " + large_body + b"\n\n"

    def chunks(body: bytes, size: int) -> list[bytes]:
        return [body[i : i + size] for i in range(0, len(body), size)]

    small_chunks, large_chunks = chunks(small, 4096), chunks(large, 65536)
    limit = 16 << 20
    out: dict[str, float] = {}
    for _ in range(2):  # the first pass warms both; the second is measured
        for name, cls in (("hand", SSEDecoder), ("httpx_sse", HttpxSSEDecoder)):

            def small_run(cls: Any = cls) -> None:
                decoder = cls(max_line_bytes=limit + 16, max_event_bytes=limit)
                got = sum(len(decoder.feed(c)) for c in small_chunks)
                assert got == events, (got, events)

            def large_run(cls: Any = cls) -> None:
                decoder = cls(max_line_bytes=limit + 16, max_event_bytes=limit)
                got = sum(len(decoder.feed(c)) for c in large_chunks)
                assert got == 1, got

            out[f"{name}_small_cpu_us"] = _measure(small_run, events)["cpu_us"]
            out[f"{name}_large_cpu_ms"] = _measure(large_run, 1)["cpu_us"] / 1000
    return out


async def lib_latency(
    url: str, tasks: int, interval: int, push: bool, transport: str = "http"
) -> dict[str, float]:
    """Completion latency: ``tasks`` tasks waited at once (the waits started evenly over
    one poll interval, at most 1 s, so their polls are not in step), each completing at a
    known server instant (``POST /schedule`` once every wait has started: 200 ms on, spread
    over 1 s; the server's ``time.monotonic()``, the same clock as this process's), waited
    with the default PollPolicy. Per task: when the
    Poller saw the terminal snapshot (``watch()`` yields it) and when ``wait()`` returned
    (after its ``tasks/result``), minus the completion instant. ``push``: the GET stream is
    open (``client.open_listen_stream()``) and the server sends ``notifications/tasks/status``
    at completion. ``rtt_ms``: the median wall time of one ``tasks/get`` on the idle client,
    measured first, back to back; ``rtt_idle_ms``: the same, each after 10 ms idle (as the
    completions find the client). ``transport``: ``lean`` for LeanHttpTransport. The
    collector runs once before the window
    (``full_gc_in_window`` counts the full collections within it)."""
    from mcp_tasks_client import Poller, PollPolicy
    from mcp_tasks_client.models import Task

    if push:
        url += "-push"  # the bench server offers its GET stream on this path only
    seen: dict[str, float] = {}
    returned: dict[str, float] = {}
    async with _lib_client(url, transport) as client:
        if push:
            await client.open_listen_stream()
        probe = (await _lib_start(client, 0)).task.task_id
        trips = []
        for _ in range(WARMUP):
            t0 = time.perf_counter()
            await client.get_task(probe)
            trips.append(time.perf_counter() - t0)
        trips.sort()
        # The same round trip from an idle client, as each completion finds it (one every
        # 10 ms in the row): what "within one round trip" compares against like for like.
        idle = []
        for _ in range(IDLE_TRIPS):
            await anyio.sleep(0.01)
            t0 = time.perf_counter()
            await client.get_task(probe)
            idle.append(time.perf_counter() - t0)
        idle.sort()
        created = [await _lib_start(client, 0, interval) for _ in range(tasks)]
        base = url.rsplit("/", 1)[0]
        plan = {c.task.task_id: 200 + n * 1000 // tasks for n, c in enumerate(created)}

        async with Poller(client, PollPolicy()) as poller, anyio.create_task_group() as tg:

            async def one(ref: Any, delay: float) -> None:
                task_id = ref.task.task_id
                await anyio.sleep(delay)
                async with anyio.create_task_group() as inner:

                    async def terminal() -> None:
                        async for item in poller.watch(ref):
                            if isinstance(item, Task) and item.status.is_terminal:
                                seen[task_id] = time.monotonic()

                    inner.start_soon(terminal)
                    await poller.wait(ref)
                    returned[task_id] = time.monotonic()

            for n, ref in enumerate(created):  # started over one interval, as if created so
                tg.start_soon(one, ref, n * min(interval, 1000) / 1000 / tasks)
            while len(poller._registry.live) < tasks:  # noqa: ASYNC110 - every wait holds its task
                await anyio.sleep(0.001)
            # Setup garbage is not the window's: a full collection that came due while the
            # waits were set up (the process's first, over every module's objects: 30-70 ms)
            # fell on the first completions of the asyncio row. Collections the window's own
            # work causes still fall in it, and are counted.
            gc.collect()
            full = gc.get_stats()[2]["collections"]
            cpu0, user0 = time.process_time(), os.times().user
            await anyio.to_thread.run_sync(bench_post, base, "/schedule", plan)
        cpu, user = time.process_time() - cpu0, os.times().user - user0
        full = gc.get_stats()[2]["collections"] - full
        polls = poller.polls_sent
    completed: dict[str, float] = await anyio.to_thread.run_sync(bench_get, base, "/completions")

    return {
        "tasks": len(returned),
        "polls": polls,
        "interval_ms": interval,
        "rtt_ms": trips[len(trips) // 2] * 1e3,
        "rtt_idle_ms": idle[len(idle) // 2] * 1e3,
        "full_gc_in_window": full,
        # the client's CPU from the schedule to the last wait's end, per task (its
        # notification or polls, its tasks/result, the wake-ups)
        "window_cpu_us": cpu / tasks * 1e6,
        "window_user_us": user / tasks * 1e6,
        **lateness(seen, completed, "seen"),
        **lateness(returned, completed, "returned"),
    }


def fresh_payloads(count: int) -> list[dict[str, Any]]:
    """``count`` copies of CODEC_PAYLOAD, each with two timestamps of its own (never seen
    before by the decoder: no cache helps), with 0, 3 or 6 fraction digits in turn."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    out = []
    for n in range(count):
        created = start + dt.timedelta(seconds=n, microseconds=n % 1000 * 1000)
        updated = created + dt.timedelta(seconds=5, microseconds=n % 997)
        spec = ("seconds", "milliseconds", "microseconds")[n % 3]
        out.append(
            {
                **CODEC_PAYLOAD,
                "createdAt": created.replace(tzinfo=None).isoformat(timespec=spec) + "Z",
                "lastUpdatedAt": updated.replace(tzinfo=None).isoformat(timespec=spec) + "Z",
            }
        )
    return out


def lib_codec_fresh(count: int) -> dict[str, float]:
    """``read_task`` over ``count`` payloads with fresh timestamps (warmed on others)."""
    from mcp_tasks_client import Generation
    from mcp_tasks_client._drivers import driver_for
    from mcp_tasks_client.models import (
        ClientCapabilities,  # type: ignore[attr-defined]
        Implementation,
    )

    dialect = driver_for(Generation.V2025_11_25, ClientCapabilities(), Implementation("b", "0"))
    read = dialect.read_task
    payloads = fresh_payloads(count + 200)
    for payload in payloads[count:]:
        read(payload)
    todo = payloads[:count]
    return _measure(lambda: [read(p) for p in todo], count)


def mcp1_codec_fresh(count: int) -> dict[str, float]:
    from mcp import types

    validate = types.GetTaskResult.model_validate
    payloads = fresh_payloads(count + 200)
    for payload in payloads[count:]:
        validate(payload)
    todo = payloads[:count]
    return _measure(lambda: [validate(p) for p in todo], count)


# -- the official Python SDK ---------------------------------------------------------------------


async def mcp1(url: str, calls: int) -> dict[str, float]:
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as s:
        await s.initialize()
        created = await s.experimental.call_tool_as_task("work", {"polls": 0, "interval": 1000})
        task_id = created.task.taskId
        for _ in range(WARMUP):
            await s.experimental.get_task(task_id)
        cpu0, wall0, user0 = time.process_time(), time.perf_counter(), os.times().user
        for _ in range(calls):
            await s.experimental.get_task(task_id)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        user = os.times().user - user0
        del types
    return {
        "cpu_us": cpu / calls * 1e6,
        "user_us": user / calls * 1e6,
        "wall_us": wall / calls * 1e6,
    }


def mcp1_codec(payload: dict[str, Any], rounds: int) -> dict[str, float]:
    from mcp import types

    validate = types.GetTaskResult.model_validate
    for _ in range(200):
        validate(payload)
    return _measure(lambda: [validate(payload) for _ in range(rounds)], rounds)


# -- the official TypeScript SDK (a node process of its own) ------------------------------------


def ts1_sdk_dir() -> Path:
    """The npm folder ``tests/peers/install.py --only ts1`` makes (the TypeScript SDK 1.32)."""
    root = os.environ.get("MCP_TASKS_PEERS_DIR")
    base = Path(root) if root else Path(__file__).resolve().parent.parent / ".peers"
    return base / "npm-sdk1"


def ts1(url: str, mode: str, *counts: int) -> dict[str, float]:
    """``benchmarks/ts1_client.mjs``: the SDK's Client over StreamableHTTPClientTransport, CPU
    measured by node's ``process.cpuUsage()`` of the node process only (this process only
    waits for it). ``--no-warnings``: the SDK adds an abort listener per request to one
    signal, and node warns past 1,500 of them."""
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    script = Path(__file__).resolve().parent / "ts1_client.mjs"
    done = subprocess.run(
        [node, "--no-warnings", str(script), str(ts1_sdk_dir()), url, mode, *map(str, counts)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ts1_client.mjs failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


CODEC_PAYLOAD = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "working",
    "statusMessage": "step 3 of 7",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:05Z",
    "ttl": 3_600_000,
    "pollInterval": 1000,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("row")
    parser.add_argument("--url", default="")
    parser.add_argument("--backend", default="asyncio")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--polls", type=int, default=20)
    parser.add_argument("--pool", type=int, default=None)
    parser.add_argument("--in-flight", type=int, default=None)
    parser.add_argument("--transport", default="http")
    parser.add_argument("--mode", default="off", help="lib-trace: off, every or changes")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--gc-freeze", action="store_true")
    parser.add_argument("--interval", type=int, default=200, help="pollInterval in ms")
    parser.add_argument(
        "--after", type=int, default=TIMED_AFTER_MS, help="*-timed: each task ends after (ms)"
    )
    parser.add_argument(
        "--floor", type=float, default=None, help="lib-timed: PollPolicy(floor=...) (s)"
    )
    parser.add_argument(
        "--ramp", type=float, default=0.5, help="lib-sustained: s of polling before the window"
    )
    parser.add_argument(
        "--core", type=int, default=None, help="pin this process to that CPU (lib-sustained)"
    )
    parser.add_argument(
        "--cap", type=int, default=None, help="lib-slow: FollowLatency(cap=...); none: fixed"
    )
    a = parser.parse_args()
    if a.core is not None:
        os.sched_setaffinity(0, {a.core})
    rows: dict[str, Any] = {
        "floor": lambda: asyncio.run(floor(a.url, a.calls)),
        "floor-burst": lambda: asyncio.run(floor_burst(a.url, a.tasks, a.polls, a.pool or 100)),
        "httpx": lambda: anyio.run(bare_httpx, a.url, a.calls, backend=a.backend),
        "httpx-burst": lambda: anyio.run(
            bare_httpx_burst, a.url, a.tasks, a.polls, a.pool or 100, backend=a.backend
        ),
        "lib": lambda: anyio.run(lib, a.url, a.calls, a.transport, backend=a.backend),
        "lib-poller": lambda: anyio.run(lib_poller, a.url, a.calls, a.transport, backend=a.backend),
        "lib-trace": lambda: anyio.run(
            lib_trace, a.url, a.calls, a.mode, a.transport, backend=a.backend
        ),
        "lib-burst": lambda: anyio.run(
            lib_burst,
            a.url,
            a.tasks,
            a.polls,
            a.pool,
            a.in_flight,
            a.transport,
            backend=a.backend,
        ),
        # the timed burst (issue 39): tasks ending --after ms after they were made, their
        # pollInterval --interval ms (the bench passes 2)
        "floor-timed": lambda: asyncio.run(
            floor_burst(a.url, a.tasks, 0, a.pool or 100, a.after, a.interval)
        ),
        "httpx-timed": lambda: anyio.run(
            bare_httpx_burst,
            a.url,
            a.tasks,
            0,
            a.pool or 100,
            a.after,
            a.interval,
            backend=a.backend,
        ),
        "lib-timed": lambda: anyio.run(
            lib_timed,
            a.url,
            a.tasks,
            a.after,
            a.interval,
            a.transport,
            a.floor,
            backend=a.backend,
        ),
        "lib-mem-wait": lambda: anyio.run(lib_memory, a.url, a.count, True, backend=a.backend),
        "lib-mem-track": lambda: anyio.run(lib_memory, a.url, a.count, False, backend=a.backend),
        "lib-mem-polled": lambda: anyio.run(
            lib_memory_polled, a.url, a.count, a.interval, a.transport, backend=a.backend
        ),
        "httpx-mem-polled": lambda: anyio.run(
            bare_httpx_memory_polled, a.url, a.count, a.interval, backend=a.backend
        ),
        "scheduler": lambda: scheduler_cost(a.count, a.calls),
        "lib-lateness": lambda: anyio.run(
            lib_lateness,
            a.url,
            a.count,
            a.tasks,
            a.seconds,
            a.gc_freeze,
            a.transport,
            backend=a.backend,
        ),
        "lib-sustained": lambda: anyio.run(
            lib_sustained,
            a.url,
            a.count,
            a.interval,
            a.seconds,
            a.ramp,
            a.transport,
            a.pool,
            backend=a.backend,
        ),
        "lib-slow": lambda: anyio.run(
            lib_slow,
            a.url,
            a.count,
            a.interval,
            a.seconds,
            a.ramp,
            a.transport,
            a.pool,
            a.in_flight,
            a.cap,
            backend=a.backend,
        ),
        "lib-latency": lambda: anyio.run(
            lib_latency, a.url, a.tasks, a.interval, False, a.transport, backend=a.backend
        ),
        "lib-latency-push": lambda: anyio.run(
            lib_latency, a.url, a.tasks, a.interval, True, a.transport, backend=a.backend
        ),
        "lib-codec": lambda: lib_codec(CODEC_PAYLOAD, a.calls),
        "sse-decoders": lambda: sse_decoders(a.calls),
        "mcp1": lambda: anyio.run(mcp1, a.url, a.calls, backend="asyncio"),
        "mcp1-codec": lambda: mcp1_codec(CODEC_PAYLOAD, a.calls),
        "lib-codec-fresh": lambda: lib_codec_fresh(a.calls),
        "mcp1-codec-fresh": lambda: mcp1_codec_fresh(a.calls),
        # both cases in one process (the bench's codec section: half the process starts)
        "lib-codec-both": lambda: {
            **lib_codec(CODEC_PAYLOAD, a.calls),
            "fresh_cpu_us": lib_codec_fresh(a.calls)["cpu_us"],
        },
        "mcp1-codec-both": lambda: {
            **mcp1_codec(CODEC_PAYLOAD, a.calls),
            "fresh_cpu_us": mcp1_codec_fresh(a.calls)["cpu_us"],
        },
        "ts1": lambda: ts1(a.url, "seq", a.calls),
        "ts1-burst": lambda: ts1(a.url, "burst", a.tasks, a.polls),
    }
    result = rows[a.row]()
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
