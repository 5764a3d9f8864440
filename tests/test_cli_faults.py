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


def _busy_first(method: str, retry_after: str) -> Any:
    """A FaultServer hook: the first request of ``method`` is answered 429 with Retry-After."""
    from mcp_tasks_client.testing import Busy

    left = [Busy(429, retry_after)]

    async def hook(message: dict[str, Any]) -> Any:
        return left.pop() if message.get("method") == method and left else None

    return hook


@pytest.mark.parametrize("anyio_backend", ["trio"])  # the command runs in its own process
@pytest.mark.parametrize("on_busy", ["fail", "back-off"])
async def test_on_busy_a_429_to_a_poll_fails_or_is_waited_out(on_busy: str) -> None:
    """``--on-busy``: ``fail`` (the default's behaviour) ends the wait with ServerBusy, exit 6;
    ``back-off`` polls again no sooner than ``Retry-After: 1`` (the server's record), says so
    on stderr, and the task completes."""
    from mcp_tasks_client import Generation
    from mcp_tasks_client.testing import FaultServer

    server = FaultServer(Generation.V2025_11_25, on_message=_busy_first("tasks/get", "1"))
    async with server.http() as http:
        code, lines, stderr = await mcp_tasks(
            "--url", http.url, "--on-busy", on_busy, "--interval", "0.05",
            "call", "echo", "--args", '{"text": "hi"}', "--task", "--wait",
        )  # fmt: skip
    gets = [r for r in http.received if r.rpc_method == "tasks/get"]
    if on_busy == "fail":
        assert code == ExitCode.CONNECTION, stderr
        assert lines[-1]["error"]["type"] == "ServerBusy"
        assert len(gets) == 1
        return
    assert code == ExitCode.COMPLETED, stderr
    assert gets[1].at - gets[0].at >= 1.0
    assert "HTTP 429 to tasks/get (Retry-After: 1 s" in stderr


@pytest.mark.parametrize("anyio_backend", ["trio"])  # the command runs in its own process
async def test_on_busy_back_off_never_sends_a_busy_tools_call_again() -> None:
    from mcp_tasks_client import Generation
    from mcp_tasks_client.testing import FaultServer

    server = FaultServer(Generation.V2026_07_28, on_message=_busy_first("tools/call", "0"))
    async with server.http() as http:
        code, lines, stderr = await mcp_tasks(
            "--url", http.url, "--generation", "2026-07-28", "--on-busy", "back-off",
            "call", "echo", "--args", '{"text": "hi"}', "--task", "--wait",
        )  # fmt: skip
    assert code == ExitCode.CONNECTION, stderr
    assert lines[-1]["error"]["type"] == "ServerBusy"
    assert [r.rpc_method for r in http.received].count("tools/call") == 1


@pytest.mark.parametrize("anyio_backend", ["trio"])  # the command runs in its own process
async def test_call_related_sends_journaled_ids_and_refuses_others(tmp_path: Any) -> None:
    """``call --related ID ...`` (a draft's ``_meta`` relatedTaskIds): an id the journal holds
    for this server is sent; without the journal the same id is refused before anything is
    sent (exit 2, UnknownRelatedTask); ``--related-from-elsewhere`` vouches for it."""
    from mcp_tasks_client import Generation
    from mcp_tasks_client.builders import RELATED_TASK_IDS
    from mcp_tasks_client.testing import FaultServer

    server = FaultServer(Generation.V2026_07_28)
    journal = str(tmp_path / "j.db")
    base = ("--generation", "2026-07-28", "call", "echo", "--args", '{"text": "hi"}')
    async with server.http() as http:
        code, lines, stderr = await mcp_tasks(
            "--url", http.url, "--journal", journal, *base, "--task"
        )
        assert code == ExitCode.COMPLETED, stderr
        task_id = lines[0]["task_id"]
        code, _, stderr = await mcp_tasks(
            "--url", http.url, "--journal", journal, *base, "--related", task_id
        )
        assert code == ExitCode.COMPLETED, stderr
        sent = [m for m in server.received if m.get("method") == "tools/call"]
        assert sent[-1]["params"]["_meta"][RELATED_TASK_IDS] == [task_id]
        code, lines, stderr = await mcp_tasks("--url", http.url, *base, "--related", task_id)
        assert code == ExitCode.USAGE, stderr
        assert lines[-1]["error"]["type"] == "UnknownRelatedTask"
        assert len([m for m in server.received if m.get("method") == "tools/call"]) == len(sent)
        code, _, stderr = await mcp_tasks(
            "--url", http.url, *base, "--related", task_id, "other", "--related-from-elsewhere"
        )
        assert code == ExitCode.COMPLETED, stderr
    sent = [m for m in server.received if m.get("method") == "tools/call"]
    assert sent[-1]["params"]["_meta"][RELATED_TASK_IDS] == [task_id, "other"]
