"""The ``mcp-tasks`` command against a scripted HTTP server on 127.0.0.1
(``mcp_tasks_client.testing.HostileHTTPServer``): what it sends (the caller's headers), and
what it does with answers no polite peer gives."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from typing import Any

import anyio
import pytest
from test_cli import CLI, REPO, env

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

pytestmark = pytest.mark.anyio

NOW = dt.datetime.now(dt.timezone.utc).isoformat()


def task(status: str) -> dict[str, Any]:
    return {
        "taskId": "t-1",
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttl": 60000,
        "pollInterval": 50,
    }


async def mcp_tasks(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    """Run the command while this test's server serves; its exit code, JSON lines, stderr."""
    with anyio.fail_after(60):
        run = await anyio.run_process(
            [*CLI, *args], env=env(), cwd=REPO, check=False, stderr=subprocess.PIPE
        )
    lines = [json.loads(line) for line in run.stdout.decode().splitlines()]
    return run.returncode, lines, run.stderr.decode()


async def test_headers_are_sent_and_a_garbage_answer_exits_7() -> None:
    async def garbage(request: Received, conn: Conn) -> None:
        await conn.result(request, {"tools": "not a list"})

    async with HostileHTTPServer(garbage) as server:
        code, lines, stderr = await mcp_tasks(
            "--url", server.url, "--header", "X-Api-Key: k1", "tools", "--header", "X-Trace:t-9"
        )
    assert code == ExitCode.PROTOCOL, stderr
    assert lines[-1]["event"] == "error"
    assert lines[-1]["error"]["type"] == "DecodeError"
    assert lines[-1]["error"]["path"] == "$.result.tools"
    posts = [r for r in server.received if r.http_method == "POST"]
    assert [r.rpc_method for r in posts][:1] == ["initialize"]
    for request in posts:  # every request carries both, wherever they were given
        assert request.headers["x-api-key"] == "k1"
        assert request.headers["x-trace"] == "t-9"


async def test_an_unreadable_result_at_the_end_of_a_wait_exits_7_as_its_outcome() -> None:
    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"task": task("working")})
        elif request.rpc_method == "tasks/get":
            await conn.result(request, task("completed"))
        else:  # tasks/result: not a CallToolResult
            await conn.result(request, {"content": "garbage"})

    async with HostileHTTPServer(serve) as server:
        code, lines, stderr = await mcp_tasks(
            "--url", server.url, "call", "job", "--task", "--wait", "--interval", "0.05"
        )
    assert code == ExitCode.PROTOCOL, stderr
    assert lines[0]["event"] == "created"
    assert lines[-1]["event"] == "outcome"
    assert lines[-1]["task_id"] == "t-1"
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["error"]["type"] == "DecodeError"
