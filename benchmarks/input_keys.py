"""Issue 21, item 2: one 2026-07-28 task whose snapshots show 40,000 input keys until each is
answered, waited on with a 20 s deadline. Prints one JSON line: how the wait ended, when it
returned, how long closing the Poller took, the process's peak RSS (client and the scripted
server on 127.0.0.1 share the process), the handler calls and the ``tasks/update`` sent.

    python benchmarks/input_keys.py [asyncio|trio] [KEYS] [MAX_INPUTS_PER_TASK]
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import Any

import anyio

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Limits,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import MCPTasksError
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
KEYS = int(sys.argv[2]) if len(sys.argv) > 2 else 40_000
LIMITS = Limits(max_inputs_per_task=int(sys.argv[3])) if len(sys.argv) > 3 else Limits()
NOW = "2026-08-01T00:00:00Z"
ASK = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}


def task(status: str) -> dict[str, Any]:
    return {
        "taskId": "t-1",
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttlMs": 600_000,
        "pollIntervalMs": 500,
    }


async def main() -> None:
    asking = {f"key-{i:06d}": ASK for i in range(KEYS)}
    answered: set[str] = set()
    updates = calls = 0

    async def serve(request: Received, conn: Conn) -> None:
        nonlocal updates
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("input_required")})
        elif method == "tasks/update":
            updates += 1
            answered.update(request.params.get("inputResponses", {}))
            await conn.result(request, {"resultType": "complete"})
        elif method == "tasks/get":
            left = {k: v for k, v in asking.items() if k not in answered}
            body = {**task("input_required"), "inputRequests": left}
            await conn.result(request, {"resultType": "complete", **body})

    async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        nonlocal calls
        calls += 1
        return ElicitResult(ElicitAction.ACCEPT, {})

    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.default_elicitation(yes)
    async with (
        HostileHTTPServer(serve) as server,
        Client(
            HttpTransport(server.url),
            generation=Generation.V2026_07_28,
            client_info=Implementation("input-keys", "0"),
            capabilities=router.capabilities(),
            limits=LIMITS,
        ) as client,
    ):
        router.attach(client)
        created = await client.start(ToolCall("x").as_task())
        started = time.monotonic()
        poller = Poller(client, PollPolicy(jitter=0.0), inputs=router)
        await poller.__aenter__()
        try:
            ended = type(await poller.wait(created, deadline=20)).__name__
        except MCPTasksError as exc:
            ended = f"{type(exc).__name__}: {str(exc)[:100]}"
        returned = time.monotonic()
        await poller.__aexit__(None, None, None)
        closed = time.monotonic()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = {
        "backend": BACKEND,
        "keys": KEYS,
        "max_inputs_per_task": LIMITS.max_inputs_per_task,
        "ended": ended,
        "wait_s": round(returned - started, 2),
        "close_s": round(closed - returned, 2),
        "peak_rss_mb": round(rss_mb, 1),
        "handler_calls": calls,
        "updates": updates,
    }
    print(json.dumps(row))


if __name__ == "__main__":
    anyio.run(main, backend=BACKEND)
