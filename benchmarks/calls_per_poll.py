"""Python function calls per poll: a count that does not depend on the machine's load.

    python benchmarks/calls_per_poll.py [--polls 5000] [--url URL] [--detail N] [--time]
        [--transport floor|lean|http]... [--backend asyncio|trio]... [--mode get|poller|burst]...

For each transport (``lean``: LeanHttpTransport, ``http``: HttpTransport; ``floor``: the hand
written HTTP/1.1 loop of ``rows.py floor``), each event loop (asyncio, trio) and each way of
polling (``get``: ``client.get_task`` back to back; ``poller``: one ``Poller.wait`` on a task
polled back to back, as ``rows.py lib-poller``; ``burst``: 200 tasks at once in one
``Poller.wait_all``, as ``rows.py lib-burst``), ``--polls`` polls run under cProfile (``get``
and ``poller`` after 50 warm-up ones) against ``benchmarks/server.py`` (started in its own
process unless ``--url`` names one). Printed: cProfile's calls per poll (every Python call and
every C function called from Python), and how they split by layer: the module a function is
in (the session, the transport, the codec, the Poller, anyio, the loop, the HTTP stack); a C
function or a standard-library helper counts for the layers that called it.

Calls are not time: a C call costs less than a Python frame. But a call removed is work
removed on any machine, and the count is the same run after run, where CPU per poll on a
shared machine is not. Except in two places: the loop's share under trio moves by 10-20 calls
between runs (whether the answer is already there at the first receive, a race with the
server's process), and the burst's moves with how the polls interleave (httpcore's pool
scans its idle connections: more of them, more calls). ``--detail N`` adds each case's N
functions with the most calls per poll; ``--time`` the own time by layer under the profiler
(inflated by it: where, not how much). Issue 25 items 2-3; RESULTS.md has the figures.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # rows.py's helpers (it puts this checkout's package first)

import rows  # noqa: E402

_LAYERS = (
    # (a path fragment, the layer): first match wins
    ("mcp_tasks_client/_session/", "session"),
    ("mcp_tasks_client/_sansio/", "sans-I/O"),
    ("mcp_tasks_client/_io/", "transport"),
    ("mcp_tasks_client/_codec/", "codec"),
    ("mcp_tasks_client/_drivers/", "driver"),
    ("mcp_tasks_client/_poller/", "poller"),
    ("mcp_tasks_client/engine.py", "poller"),
    ("mcp_tasks_client/", "client"),
    ("/anyio/", "anyio"),
    ("/trio/", "loop"),
    ("/asyncio/", "loop"),
    ("selectors.py", "loop"),
    ("/httpx/", "http stack"),
    ("/httpcore/", "http stack"),
    ("/h11/", "http stack"),
    ("/json/", "json"),
)


def _own_layer(filename: str) -> str | None:
    for fragment, layer in _LAYERS:
        if fragment in filename:
            return layer
    return None


def _by_layer(raw: dict[Any, Any], field: int = 1) -> dict[str, float]:
    """Calls by layer. A C function or a standard-library helper (contextlib, weakref, enum,
    re...) counts for the layers that called it, in proportion to their calls, up the callers
    until a named layer (so ``dict.get`` in the session is the session's)."""
    memo: dict[Any, dict[str, float]] = {}

    def shares(func: Any, seen: frozenset[Any]) -> dict[str, float]:
        """How ``func``'s calls split by layer, as fractions."""
        if func in memo:
            return memo[func]
        own = _own_layer(func[0])
        if own is not None:
            got = {own: 1.0}
        else:
            callers = raw[func][4]
            total = sum(v[1] for v in callers.values())
            got = {}
            if total == 0 or func in seen:
                got = {"other": 1.0}
            else:
                for caller, value in callers.items():
                    if caller not in raw:
                        continue
                    for layer, part in shares(caller, seen | {func}).items():
                        got[layer] = got.get(layer, 0.0) + part * value[1] / total
                if not got:
                    got = {"other": 1.0}
        memo[func] = got
        return got

    out: dict[str, float] = defaultdict(float)
    for func, value in raw.items():
        for layer, part in shares(func, frozenset()).items():
            out[layer] += part * value[field]
    return out


def _scope_makers() -> set[tuple[str, int, str]]:
    """Where each event loop's anyio CancelScope class is made (cProfile's keys)."""
    import importlib

    found = set()
    for backend in ("asyncio", "trio"):
        try:
            module = importlib.import_module(f"anyio._backends._{backend}")
        except ImportError:
            continue
        code = module.CancelScope.__new__.__code__
        found.add((code.co_filename, code.co_firstlineno, "__new__"))
    return found


async def _get_polls(client: Any, polls: int, profile: cProfile.Profile) -> int:
    task_id = (await rows._lib_start(client, 0)).task.task_id
    for _ in range(rows.WARMUP):
        await client.get_task(task_id)
    profile.enable()
    for _ in range(polls):
        await client.get_task(task_id)
    profile.disable()
    return polls


async def _poller_polls(client: Any, polls: int, profile: cProfile.Profile) -> int:
    from mcp_tasks_client import Poller

    warm = await rows._lib_start(client, rows.WARMUP, 0)
    created = await rows._lib_start(client, polls, 0)
    async with Poller(client, rows._eager()) as poller:
        await poller.wait(warm)
        before = poller.polls_sent
        profile.enable()
        await poller.wait(created)
        profile.disable()
        return poller.polls_sent - before


async def _burst_polls(client: Any, polls: int, profile: cProfile.Profile) -> int:
    """``rows.py lib-burst``: BURST_TASKS tasks at once, each completing at its
    ``polls // BURST_TASKS``-th poll, waited with one ``Poller.wait_all`` (default policy's
    ``max_in_flight``, polled back to back)."""
    from mcp_tasks_client import Poller

    each = max(1, polls // BURST_TASKS)
    created = [await rows._lib_start(client, each, 0) for _ in range(BURST_TASKS)]
    async with Poller(client, rows._eager()) as poller:
        profile.enable()
        await poller.wait_all(created)
        profile.disable()
        return poller.polls_sent


BURST_TASKS = 200


async def _floor_polls(url: str, polls: int, profile: cProfile.Profile) -> int:
    """``rows.py floor``'s loop (HTTP/1.1 by hand on asyncio streams), profiled."""
    rpc, task_id, writer = await rows.floor_task(url)
    profile.enable()
    for _ in range(polls):
        await rpc("tasks/get", {"taskId": task_id})
    profile.disable()
    writer.close()
    return polls


async def _case(url: str, transport: str, mode: str, polls: int) -> tuple[int, pstats.Stats]:
    profile = cProfile.Profile()
    if transport == "floor":
        return await _floor_polls(url, polls, profile), pstats.Stats(profile)
    async with rows._lib_client(url, transport) as client:
        run = {"get": _get_polls, "poller": _poller_polls, "burst": _burst_polls}[mode]
        sent = await run(client, polls, profile)
    return sent, pstats.Stats(profile)


def measure(url: str, transport: str, backend: str, mode: str, polls: int) -> dict[str, Any]:
    """One case: calls per poll, by layer, and the functions called most."""
    sent, stats = anyio.run(_case, url, transport, mode, polls, backend=backend)
    functions: list[tuple[int, str]] = []
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    by_layer = _by_layer(raw)
    own_time = _by_layer(raw, 2)
    for (filename, line, name), (_cc, nc, _tt, _ct, _callers) in raw.items():
        where = name if filename == "~" else f"{Path(filename).name}:{line}({name})"
        functions.append((nc, where))
    functions.sort(reverse=True)
    total: int = stats.total_calls  # type: ignore[attr-defined]
    # anyio cancel scopes made: the loop's own CancelScope class's ``__new__`` (what
    # ``anyio.CancelScope(...)``, ``fail_after`` and ``move_on_after`` make through, and what
    # the HTTP transport makes directly since issue 39): issue 25 named them the lean poll's cost.
    scopes = sum(value[1] for where, value in raw.items() if where in _scope_makers())
    return {
        "transport": transport,
        "backend": backend,
        "mode": mode,
        "polls": sent,
        "calls_per_poll": total / sent,
        "cancel_scopes_per_poll": scopes / sent,
        "layers": {k: v / sent for k, v in sorted(by_layer.items(), key=lambda kv: -kv[1])},
        # Own time under the profiler (inflated by it, C calls most): where, not how much.
        "profiled_us": {
            k: v / sent * 1e6 for k, v in sorted(own_time.items(), key=lambda kv: -kv[1])
        },
        "top": [(n / sent, where) for n, where in functions],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=5000)
    parser.add_argument("--url", default=None)
    parser.add_argument("--transport", action="append", choices=["lean", "http", "floor"])
    parser.add_argument("--backend", action="append", choices=["asyncio", "trio"])
    parser.add_argument("--mode", action="append", choices=["get", "poller", "burst"])
    parser.add_argument("--detail", type=int, default=0, help="the N most called functions")
    parser.add_argument("--json", action="store_true", help="one JSON line per case")
    parser.add_argument("--time", action="store_true", help="own time by layer, profiled")
    a = parser.parse_args()
    cases = [
        (t, b, m)
        for t in a.transport or ["floor", "lean", "http"]
        for b in a.backend or ["asyncio", "trio"]
        for m in a.mode or ["get", "poller", "burst"]
        if t != "floor" or (b, m) == ("asyncio", "get")  # the floor: one loop, one way
    ]

    def run(url: str) -> None:
        if not a.json:
            print("| transport | loop | polling | calls per poll | cancel scopes | by layer |")
            print("|---|---|---|---|---|---|")
        for transport, backend, mode in cases:
            got = measure(url, transport, backend, mode, a.polls)
            if a.json:
                got["top"] = got["top"][: a.detail]
                print(json.dumps(got), flush=True)
                continue
            layers = ", ".join(f"{k} {v:.1f}" for k, v in got["layers"].items() if v >= 0.05)
            if a.time:
                layers += " / profiled µs: " + ", ".join(
                    f"{k} {v:.0f}" for k, v in got["profiled_us"].items() if v >= 0.5
                )
            calls, scopes = got["calls_per_poll"], got["cancel_scopes_per_poll"]
            print(
                f"| {transport} | {backend} | {mode} | {calls:.1f} | {scopes:.2f} | {layers} |",
                flush=True,
            )
            for n, where in got["top"][: a.detail]:
                print(f"|   | | | {n:.2f} | | {where} |")

    if a.url is not None:
        run(a.url)
        return
    from bench import _server

    with _server() as base:
        run(f"{base}/mcp")


if __name__ == "__main__":
    main()
