"""The 2026-07-28 rows (issue 25), each in a process of its own; prints one JSON line.

    python benchmarks/rows2026.py CLIENT SCENARIO --url URL [--backend asyncio|trio] [...]

Against ``server2026.py`` (the ``io.modelcontextprotocol/tasks`` extension, stateless; the
server refuses a request whose ``_meta`` or routing headers are not the generation's, so every
row below speaks the same wire). CPU is ``time.process_time()`` of this process only.

Clients:

- ``floor``: HTTP/1.1 by hand on asyncio streams (one kept-alive connection per request in
  flight, at most ``--pool``), the same bytes as the bare loop;
- ``httpx``: a bare httpx JSON-RPC loop (``--pool`` connections), every request with the
  generation's ``_meta`` (protocolVersion, clientCapabilities with the tasks extension,
  clientInfo) and headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``);
- ``lib``: this library, ``Client(generation=V2026_07_28)`` on HttpTransport or (``--transport
  lean``) LeanHttpTransport, on either loop;
- ``fastmcp``: the fastmcp 4 client (``fastmcp_tasks``: ``call_tool_task``, ``ToolTask``), run
  with the python of its own venv (asyncio only);
- ``ext-tasks``: ``@modelcontextprotocol/ext-tasks`` 0.2.2 on node (``ext_tasks_client.mjs``).

Scenarios (not every client has every one; ``bench.py`` lists which):

- ``seq``: back-to-back ``tasks/get`` of one working task, ``--calls`` after 50 warm-up;
  figures per call;
- ``burst``: ``--tasks`` tasks at once, each completing at its ``--polls``-th poll, polled
  back to back; figures per poll and per task (the server counts the TCP connections). The
  client is the bottleneck by construction: this row judges CPU per task;
- ``timed`` (issue 39; floors and ``lib``): ``--tasks`` tasks made one after another, each
  ending ``--after`` ms after it was made, its pollIntervalMs ``--interval`` (the bench: 2 s
  and 2 ms); the floors sleep the interval the server gave between a task's polls, ``lib``
  waits them all with ``Poller.wait_all`` and the default PollPolicy. This row judges wall
  time: how soon a host learns every outcome (``rows.py``'s ``timed_figures``: CPU per task,
  ``tasks/get`` sent, wall time from the first ``tools/call``, and the lag after the last
  task ended);
- ``short``: ``--tasks`` tasks one after another, each started and followed to its result
  (it completes at its 2nd ``tasks/get``); figures per task;
- ``input``: ``--tasks`` tasks one after another, each asking 2 rounds of ``--keys``
  ``inputRequests``, answered with ``tasks/update`` until the task completes; figures per
  answered key (the bench adds the round trips the server counted);
- ``latency`` / ``latency-push`` (``lib`` only): completion latency by polling and by
  ``subscriptions/listen`` push (``PollPolicy(listen=True)``), as ``rows.py lib-latency``;
- ``mem-wait`` / ``mem-track`` (``lib`` only): heap per waited and per tracked task;
- ``sustained`` (``lib`` only): ``--count`` tasks polled every ``--interval`` ms, lateness and
  rate over a window of ``--seconds`` (issue 25 item 4; ``rows.py lib-sustained``'s
  measurement, ``sustained.py`` searches the highest rate).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's package first (as rows.py)

VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES = {"elicitation": {"form": {}}, "extensions": {EXTENSION: {}}}
CLIENT_INFO = {"name": "bench", "version": "0"}
WARMUP = 50
IDLE_TRIPS = 20
ROUNDS = 2  # the input scenario's rounds of inputRequests
_NAMED = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId"}
_NAMED["tasks/cancel"] = "taskId"

Rpc = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _clock() -> tuple[float, float, float]:
    return time.process_time(), time.perf_counter(), os.times().user


def _per(start: tuple[float, float, float], count: int, prefix: str = "") -> dict[str, float]:
    cpu0, wall0, user0 = start
    cpu, wall, user = time.process_time() - cpu0, time.perf_counter() - wall0, os.times().user
    return {
        f"{prefix}cpu_us": cpu / count * 1e6,
        f"{prefix}user_us": (user - user0) / count * 1e6,
        f"{prefix}wall_us": wall / count * 1e6,
    }


# -- the wire both floors speak -----------------------------------------------------------------


def wire(method: str, params: dict[str, Any], request_id: int) -> tuple[bytes, dict[str, str]]:
    """One 2026-07-28 request: its body and its headers (E C1-C3, C57, C58)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    message["params"] = {**params, "_meta": meta}  # type: ignore[assignment]
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    key = _NAMED.get(method)
    if key is not None:
        headers["mcp-name"] = params[key]  # the bench's names and ids are plain ASCII
    return json.dumps(message).encode(), headers


def _result(answer: dict[str, Any]) -> dict[str, Any]:
    if "error" in answer:
        raise RuntimeError(f"the server refused: {answer['error']}")
    result: dict[str, Any] = answer["result"]
    return result


def _work(polls: int, interval: int = 0) -> dict[str, Any]:
    return {"name": "work", "arguments": {"polls": polls, "interval": interval}}


def _ask(keys: int) -> dict[str, Any]:
    return {"name": "ask", "arguments": {"rounds": ROUNDS, "keys": keys, "interval": 0}}


async def _follow(rpc: Rpc, task_id: str, counts: dict[str, int]) -> dict[str, Any]:
    """Poll back to back until terminal; a snapshot's inputRequests are answered with one
    ``tasks/update`` naming every key it shows (each key once)."""
    answered: set[str] = set()
    while True:
        counts["polls"] += 1
        snapshot = await rpc("tasks/get", {"taskId": task_id})
        status = snapshot["status"]
        if status in ("completed", "failed", "cancelled"):
            return snapshot
        if status == "input_required":
            fresh = {k for k in snapshot.get("inputRequests") or {} if k not in answered}
            if fresh:
                answered |= fresh
                counts["keys"] += len(fresh)
                responses = {k: {"action": "accept", "content": {}} for k in fresh}
                await rpc("tasks/update", {"taskId": task_id, "inputResponses": responses})


async def scenario(rpc: Rpc, name: str, a: argparse.Namespace) -> dict[str, float]:
    """The four scenarios every floor runs, over ``rpc``."""
    counts = {"polls": 0, "keys": 0}
    if name == "seq":
        task_id = (await rpc("tools/call", _work(0, 1000)))["taskId"]
        for _ in range(WARMUP):
            await rpc("tasks/get", {"taskId": task_id})
        start = _clock()
        for _ in range(a.calls):
            await rpc("tasks/get", {"taskId": task_id})
        return _per(start, a.calls)
    if name == "burst":
        ids = [(await rpc("tools/call", _work(a.polls)))["taskId"] for _ in range(a.tasks)]
        start = _clock()
        async with anyio.create_task_group() as tg:
            for task_id in ids:
                tg.start_soon(_follow, rpc, task_id, counts)
        out = _per(start, counts["polls"])
        return {**out, **_per(start, a.tasks, "task_"), "polls": counts["polls"]}
    if name == "timed":
        return await _timed(rpc, a)
    if name == "short":
        start = _clock()
        for _ in range(a.tasks):
            created = await rpc("tools/call", _work(2))
            assert (await _follow(rpc, created["taskId"], counts))["status"] == "completed"
        return {**_per(start, a.tasks), "polls": counts["polls"]}
    if name == "input":
        start = _clock()
        for _ in range(a.tasks):
            created = await rpc("tools/call", _ask(a.keys))
            assert (await _follow(rpc, created["taskId"], counts))["status"] == "completed"
        assert counts["keys"] == a.tasks * ROUNDS * a.keys, counts
        return {**_per(start, counts["keys"]), "keys": counts["keys"], "polls": counts["polls"]}
    raise SystemExit(f"no scenario {name!r} for this client")


def _timed_work(a: argparse.Namespace) -> dict[str, Any]:
    return {"name": "work", "arguments": {"after": a.after, "interval": a.interval}}


async def _timed(rpc: Rpc, a: argparse.Namespace) -> dict[str, Any]:
    """The floors' timed burst: the tasks made one after another, then a coroutine per task
    polling it, sleeping the pollIntervalMs the server gave between polls, until it is
    completed (its result is inline: the outcome is known)."""
    from rows import timed_figures  # beside this script (imported here: rows.py's warnings
    # filter stays out of the other rows' processes)

    start = time.process_time(), time.monotonic()
    made = [(await rpc("tools/call", _timed_work(a)))["taskId"] for _ in range(a.tasks)]
    made_at = time.monotonic()
    gets = 0

    async def follow(task_id: str) -> None:
        nonlocal gets
        while True:
            gets += 1
            snapshot = await rpc("tasks/get", {"taskId": task_id})
            if snapshot["status"] == "completed":
                return
            await anyio.sleep(snapshot["pollIntervalMs"] / 1000)

    async with anyio.create_task_group() as tg:
        for task_id in made:
            tg.start_soon(follow, task_id)
    return timed_figures(a.url, made, start, made_at, gets)


# -- HTTP/1.1 by hand on asyncio streams ------------------------------------------------------


async def floor(url: str, name: str, a: argparse.Namespace) -> dict[str, float]:
    host, port = url.split("//")[1].split("/")[0].split(":")
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    slots = asyncio.Semaphore(a.pool or 100)
    counter = iter(range(1, 10**9))

    async def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
        body, headers = wire(method, params, next(counter))
        async with slots:
            conn = idle.pop() if idle else await asyncio.open_connection(host, int(port))
            reader, writer = conn
            lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            writer.write(
                f"POST /mcp HTTP/1.1\r\nhost: {host}\r\n{lines}content-length: {len(body)}"
                f"\r\n\r\n".encode()
                + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                key, _, value = line.partition(b":")
                if key.lower() == b"content-length":
                    length = int(value)
            data = await reader.readexactly(length)
            idle.append(conn)
        return _result(json.loads(data))

    try:
        return await scenario(rpc, name, a)
    finally:
        for _, writer in idle:
            writer.close()


# -- the bare httpx loop ------------------------------------------------------------------------


async def bare_httpx(url: str, name: str, a: argparse.Namespace) -> dict[str, float]:
    import httpx

    pool = a.pool or 100
    limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
    counter = iter(range(1, 10**9))
    async with httpx.AsyncClient(limits=limits) as client:

        async def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
            body, headers = wire(method, params, next(counter))
            response = await client.post(url, content=body, headers=headers)
            return _result(response.json())

        return await scenario(rpc, name, a)


# -- this library -------------------------------------------------------------------------------


def _lib_client(url: str, transport: str, router: Any = None, pool: int | None = None) -> Any:
    from mcp_tasks_client import Client, Generation, HttpTransport, observability
    from mcp_tasks_client.models import Implementation

    observability.tracing(False)  # what a fresh `nox -s bench` measures: no spans
    kwargs: dict[str, Any] = {} if pool is None else {"max_connections": pool}
    if transport == "lean":
        from mcp_tasks_client import LeanHttpTransport

        made: Any = LeanHttpTransport(url, **kwargs)
    elif transport == "httpx":  # the httpx engine (yesterday's default)
        made = HttpTransport(url, engine="httpx", **kwargs)
    else:  # "http": whatever HttpTransport(url) is (the lean engine since issue 39)
        made = HttpTransport(url, **kwargs)
    extra = {} if router is None else {"capabilities": router.capabilities()}
    return Client(
        made, generation=Generation.V2026_07_28, client_info=Implementation("bench", "0"), **extra
    )


async def _lib_start(client: Any, name: str, arguments: dict[str, Any]) -> Any:
    from mcp_tasks_client import ToolCall
    from mcp_tasks_client.models import CreateTaskResult

    created = await client.start(ToolCall(name, arguments).as_task())
    assert isinstance(created, CreateTaskResult)
    return created


def _eager() -> Any:
    from mcp_tasks_client import PollPolicy

    return PollPolicy(floor=0, initial=0, backoff=1.0, jitter=0)


async def lib(url: str, name: str, a: argparse.Namespace) -> dict[str, Any]:
    from mcp_tasks_client import InputRouter, Poller
    from mcp_tasks_client.models import ElicitAction, ElicitationCapability, ElicitResult

    if name in ("latency", "latency-push"):
        return await lib_latency(url, a, push=name == "latency-push")
    if name in ("mem-wait", "mem-track"):
        return await lib_memory(url, a, waited=name == "mem-wait")
    if name == "sustained":
        return await lib_sustained(url, a)
    if name == "timed":
        return await lib_timed(url, a)
    router = None
    if name == "input":
        router = InputRouter(elicitation=ElicitationCapability(form={}))

        async def yes(ctx: Any, params: Any) -> Any:
            return ElicitResult(ElicitAction.ACCEPT, {})

        router.default_elicitation(yes)
    async with _lib_client(url, a.transport, router, a.pool) as client:
        if router is not None:
            router.attach(client)
        if name == "seq":
            task_id = (
                await _lib_start(client, "work", {"polls": 0, "interval": 1000})
            ).task.task_id
            for _ in range(WARMUP):
                await client.get_task(task_id)
            start = _clock()
            for _ in range(a.calls):
                await client.get_task(task_id)
            return _per(start, a.calls)
        async with Poller(client, _eager(), inputs=router) as poller:
            if name == "burst":
                work = {"polls": a.polls, "interval": 0}
                created = [await _lib_start(client, "work", work) for _ in range(a.tasks)]
                start = _clock()
                await poller.wait_all(created)
                sent = poller.polls_sent
                return {**_per(start, sent), **_per(start, a.tasks, "task_"), "polls": sent}
            if name == "short":
                start = _clock()
                for _ in range(a.tasks):
                    await poller.wait(await _lib_start(client, "work", {"polls": 2, "interval": 0}))
                return {**_per(start, a.tasks), "polls": poller.polls_sent}
            if name == "input":
                ask = {"rounds": ROUNDS, "keys": a.keys, "interval": 0}
                start = _clock()
                for _ in range(a.tasks):
                    await poller.wait(await _lib_start(client, "ask", ask))
                keys = a.tasks * ROUNDS * a.keys
                return {**_per(start, keys), "keys": keys, "polls": poller.polls_sent}
    raise SystemExit(f"no scenario {name!r} for this library")


async def lib_timed(url: str, a: argparse.Namespace) -> dict[str, Any]:
    """The timed burst on this library (``rows.py lib_timed``'s, on 2026-07-28): the tasks
    made one after another, then one ``Poller.wait_all`` with the default PollPolicy
    (``Poller(client)``: its 50 ms floor is above the server's 2 ms, so each task is polled
    every 50-55 ms); the result is inline, so the wait's last ``tasks/get`` is its outcome.
    ``--floor``: ``PollPolicy(floor=...)`` instead (0: the server's 2 ms honoured as it is)."""
    from rows import timed_figures  # beside this script

    from mcp_tasks_client import Poller, PollPolicy
    from mcp_tasks_client.errors import FallingBehind, MCPTasksError

    policy = PollPolicy() if a.floor is None else PollPolicy(floor=a.floor)
    async with _lib_client(url, a.transport, pool=a.pool) as client:
        start = time.process_time(), time.monotonic()
        created = [await _lib_start(client, "work", _timed_work(a)["arguments"])
                   for _ in range(a.tasks)]  # fmt: skip
        made_at = time.monotonic()
        async with Poller(client, policy) as poller:
            outcomes = await poller.wait_all(created)
            figures = timed_figures(
                url, [c.task.task_id for c in created], start, made_at, poller.polls_sent
            )
            behind = sum(isinstance(w, FallingBehind) for w in poller.warnings)
    failed = [o for o in outcomes.values() if isinstance(o, MCPTasksError)]
    if failed or len(outcomes) != a.tasks:
        raise SystemExit(f"{len(failed)} of {a.tasks} waits failed: {failed[:3]}")
    return {**figures, "falling_behind": behind}


def _seeded(client: Any, count: int, interval: int) -> list[Any]:
    from mcp_tasks_client.models import CreateTaskResult

    return [
        client.decode(
            {
                "resultType": "task",
                "taskId": f"seeded-{interval}-{n}",
                "status": "working",
                "createdAt": "2026-08-01T00:00:00Z",
                "lastUpdatedAt": "2026-08-01T00:00:00Z",
                "ttlMs": 3_600_000,
                "pollIntervalMs": interval,
            },
            CreateTaskResult,
        )
        for n in range(count)
    ]


def _seed(task_id: str, interval_ms: int) -> dict[str, Any]:
    return {
        "resultType": "task",
        "taskId": task_id,
        "status": "working",
        "createdAt": "2026-08-01T00:00:00Z",
        "lastUpdatedAt": "2026-08-01T00:00:00Z",
        "ttlMs": 3_600_000,
        "pollIntervalMs": interval_ms,
    }


async def lib_sustained(url: str, a: argparse.Namespace) -> dict[str, Any]:
    """Issue 25 item 4 on 2026-07-28: ``rows.py``'s ``sustained`` (the same measurement) over
    ``--count`` seeded tasks polled every ``--interval`` ms, a window of ``--seconds``."""
    import rows  # the 2025-11-25 rows: the measurement itself

    async with _lib_client(url, a.transport, pool=a.pool) as client:
        lead = rows.sustained_lead(a.count)
        seed0 = time.perf_counter()
        refs = rows.spread_seeds(client, a.count, a.interval, lead, _seed)
        seeded = time.perf_counter() - seed0
        base = url.rsplit("/", 1)[0]
        measured = await rows.sustained(client, base, refs, a.interval, a.seconds, lead, a.ramp)
    return {**measured, "seed_s": seeded}


async def lib_memory(url: str, a: argparse.Namespace, waited: bool) -> dict[str, float]:
    """Heap per task while a Poller holds ``--count`` 2026-07-28 tasks never polled (the
    floor is an hour): one ``wait()`` each, or one ``as_completed`` over them all (as
    ``rows.py lib-mem-*``, whose collector handling this reuses)."""
    import rows  # the 2025-11-25 rows: the same measurement's helpers

    from mcp_tasks_client import Poller, PollPolicy

    idle = PollPolicy(floor=3600, initial=3600)
    async with _lib_client(url, a.transport) as client:
        created = _seeded(client, a.count, 3_600_000)
        rows._quiet_gc()
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
            while len(poller._registry.live) < a.count:  # noqa: ASYNC110 - a measurement loop
                await anyio.sleep(0.01)
            await anyio.sleep(0.05)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            rows._loud_gc()
            tg.cancel_scope.cancel()
    return {"bytes_per_task": held / a.count}


async def lib_latency(url: str, a: argparse.Namespace, push: bool) -> dict[str, float]:
    """Completion latency, as ``rows.py lib-latency`` on 2026-07-28: ``--tasks`` tasks waited
    at once (started evenly over one interval, at most 1 s), completed by the server at
    instants it reports (``POST /schedule``: 200 ms on, spread over 1 s). Polling: the default
    PollPolicy. Push: ``PollPolicy(listen=True)``, one ``subscriptions/listen`` for the waited
    tasks (reopened as the set changes; the server pushes a task that ended before a listen
    naming it opened at once, so a reopen loses no completion); the server's
    ``pollIntervalMs`` is ``--interval``, an hour in the bench, so no poll comes in time."""
    import rows  # the 2025-11-25 rows: the same measurement's helpers

    from mcp_tasks_client import Poller, PollPolicy
    from mcp_tasks_client.models import Task

    seen: dict[str, float] = {}
    returned: dict[str, float] = {}
    policy = PollPolicy(listen=True) if push else PollPolicy()
    async with _lib_client(url, a.transport) as client:
        probe = (await _lib_start(client, "work", {"polls": 0, "interval": 1000})).task.task_id
        trips, idle = [], []
        for _ in range(WARMUP):
            t0 = time.perf_counter()
            await client.get_task(probe)
            trips.append(time.perf_counter() - t0)
        for _ in range(IDLE_TRIPS):
            await anyio.sleep(0.01)
            t0 = time.perf_counter()
            await client.get_task(probe)
            idle.append(time.perf_counter() - t0)
        trips.sort()
        idle.sort()
        work = {"polls": 0, "interval": a.interval}
        created = [await _lib_start(client, "work", work) for _ in range(a.tasks)]
        base = url.rsplit("/", 1)[0]
        plan = {c.task.task_id: 200 + n * 1000 // a.tasks for n, c in enumerate(created)}

        async with Poller(client, policy) as poller, anyio.create_task_group() as tg:

            async def one(ref: Any, delay: float) -> None:
                await anyio.sleep(delay)
                async with anyio.create_task_group() as inner:

                    async def terminal() -> None:
                        async for item in poller.watch(ref):
                            if isinstance(item, Task) and item.status.is_terminal:
                                seen[ref.task.task_id] = time.monotonic()

                    inner.start_soon(terminal)
                    await poller.wait(ref)
                    returned[ref.task.task_id] = time.monotonic()

            for n, ref in enumerate(created):
                tg.start_soon(one, ref, n * min(a.interval, 1000) / 1000 / a.tasks)
            while len(poller._registry.live) < a.tasks:  # noqa: ASYNC110 - every wait holds its task
                await anyio.sleep(0.001)
            if push:  # the listen names every waited task before the window opens
                while len(poller._tracker.acknowledged) < a.tasks:  # noqa: ASYNC110 - as above
                    await anyio.sleep(0.001)
            gc.collect()
            full = gc.get_stats()[2]["collections"]
            cpu0, user0 = time.process_time(), os.times().user
            await anyio.to_thread.run_sync(rows.bench_post, base, "/schedule", plan)
        cpu, user = time.process_time() - cpu0, os.times().user - user0
        full = gc.get_stats()[2]["collections"] - full
        polls, listens = poller.polls_sent, poller.listens_opened
    completed: dict[str, float] = await anyio.to_thread.run_sync(
        rows.bench_get, base, "/completions"
    )

    return {
        "tasks": len(returned),
        "polls": polls,
        "listens": listens,
        "interval_ms": a.interval,
        "rtt_ms": trips[len(trips) // 2] * 1e3,
        "rtt_idle_ms": idle[len(idle) // 2] * 1e3,
        "full_gc_in_window": full,
        "window_cpu_us": cpu / a.tasks * 1e6,
        "window_user_us": user / a.tasks * 1e6,
        **rows.lateness(seen, completed, "seen"),
        **rows.lateness(returned, completed, "returned"),
    }


# -- the fastmcp 4 client (its own venv) ------------------------------------------------------


async def fastmcp(url: str, name: str, a: argparse.Namespace) -> dict[str, Any]:
    """``fastmcp.Client`` with ``fastmcp_tasks``: ``call_tool_task`` starts a task and gives
    a ``ToolTask``; ``status()`` is one ``tasks/get``, ``result()`` follows the task to its
    result (answering inputRequests with the client's ``elicitation_handler`` and
    ``tasks/update``). Its poll loop sleeps at least 20 ms between polls
    (``MIN_POLL_INTERVAL``), whatever the server's ``pollIntervalMs``: the burst, short and
    input rows' wall time is that floor's, their CPU per poll is comparable."""
    from fastmcp import Client  # type: ignore[import-not-found, unused-ignore]
    from fastmcp_tasks.client import call_tool_task  # type: ignore[import-not-found, unused-ignore]

    async def elicit(message: str, response_type: Any, params: Any, ctx: Any) -> Any:
        return {}

    import fastmcp_tasks.client as tasks_client  # type: ignore[import-not-found, unused-ignore]

    sent = [0]
    send_get = tasks_client._send_get

    async def counted(*args: Any, **kwargs: Any) -> Any:  # its polls, counted in-process
        sent[0] += 1
        return await send_get(*args, **kwargs)

    tasks_client._send_get = counted

    async with Client(url, elicitation_handler=elicit) as client:
        if name == "seq":
            task = await call_tool_task(client, "work", {"polls": 0, "interval": 1000})
            for _ in range(WARMUP):
                await task.status()
            start = _clock()
            for _ in range(a.calls):
                await task.status()
            return _per(start, a.calls)
        if name == "burst":
            work = {"polls": a.polls, "interval": 0}
            tasks = [await call_tool_task(client, "work", work) for _ in range(a.tasks)]
            sent[0] = 0
            start = _clock()
            await asyncio.gather(*(task.result() for task in tasks))
            out = _per(start, 1)
            per_poll = {k: v / sent[0] for k, v in out.items()}
            per_task = {f"task_{k}": v / a.tasks for k, v in out.items()}
            return {**per_poll, **per_task, "polls": sent[0]}
        if name == "short":
            start = _clock()
            for _ in range(a.tasks):
                task = await call_tool_task(client, "work", {"polls": 2, "interval": 0})
                await task.result()
            return _per(start, a.tasks)
        if name == "input":
            ask = {"rounds": ROUNDS, "keys": a.keys, "interval": 0}
            start = _clock()
            for _ in range(a.tasks):
                await (await call_tool_task(client, "ask", ask)).result()
            keys = a.tasks * ROUNDS * a.keys
            return {**_per(start, keys), "keys": keys}
    raise SystemExit(f"no scenario {name!r} for fastmcp")


# -- ext-tasks on node --------------------------------------------------------------------------


def ext_tasks_dir() -> Path:
    """The npm folder ``tests/peers/install.py`` makes for ext-tasks 0.2.2."""
    root = os.environ.get("MCP_TASKS_PEERS_DIR")
    return (Path(root) if root else HERE.parent / ".peers") / "npm-ext-tasks"


def ext_tasks(url: str, name: str, a: argparse.Namespace) -> dict[str, float]:
    """``ext_tasks_client.mjs`` (a node process; its CPU is node's ``process.cpuUsage()``)."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    counts = [str(a.calls), str(a.tasks), str(a.polls), str(a.keys)]
    done = subprocess.run(
        [node, "--no-warnings", str(HERE / "ext_tasks_client.mjs"), str(ext_tasks_dir()), url,
         name, *counts],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"ext_tasks_client.mjs failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=["floor", "httpx", "lib", "fastmcp", "ext-tasks"])
    parser.add_argument("scenario")
    parser.add_argument("--url", required=True)
    parser.add_argument("--backend", default="asyncio")
    parser.add_argument("--transport", default="http")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--polls", type=int, default=20)
    parser.add_argument("--keys", type=int, default=5, help="inputRequests per round")
    parser.add_argument(
        "--pool", type=int, default=None, help="connections (floors: 100; this library: its own)"
    )
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument(
        "--interval", type=int, default=500, help="pollIntervalMs (latency, sustained)"
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="sustained: the window")
    parser.add_argument("--after", type=int, default=2000, help="timed: each task ends after (ms)")
    parser.add_argument("--floor", type=float, default=None, help="lib timed: PollPolicy(floor=)")
    parser.add_argument("--ramp", type=float, default=0.5, help="sustained: s before the window")
    parser.add_argument("--core", type=int, default=None, help="pin this process to that CPU")
    a = parser.parse_args()
    if a.core is not None:
        os.sched_setaffinity(0, {a.core})
    if a.client == "ext-tasks":
        result: dict[str, Any] = ext_tasks(a.url, a.scenario, a)
    else:
        run = {"floor": floor, "httpx": bare_httpx, "lib": lib, "fastmcp": fastmcp}[a.client]
        backend = "asyncio" if a.client in ("floor", "fastmcp") else a.backend
        result = anyio.run(run, a.url, a.scenario, a, backend=backend)
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
