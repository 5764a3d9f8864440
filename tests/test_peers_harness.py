"""The real peer servers start and speak 2025-11-25 tasks (raw JSON-RPC, no library)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import require_peer
from peers.harness import Peer, run_in_group, stop_group, stop_process

PROTOCOL = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream"}


def _initialize(req_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": req_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "peer-harness-test", "version": "0"},
        },
    }


def _json_body(resp: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a plain JSON or a (single-message) SSE response."""
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        for line in resp.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                msg: dict[str, Any] = json.loads(line[5:])
                if "id" in msg:
                    return msg
        raise AssertionError(f"no JSON-RPC response in SSE body: {resp.text!r}")
    body: dict[str, Any] = resp.json()
    return body


def _check_initialize_result(peer: Peer, msg: dict[str, Any]) -> None:
    result = msg["result"]
    assert result["protocolVersion"] == PROTOCOL
    assert "call" in result["capabilities"]["tasks"]["requests"]["tools"], peer.name
    assert result["serverInfo"]["name"] == f"{peer.name}-tasks-peer"


def test_http_initialize_and_plain_call(peer_http: tuple[Peer, str]) -> None:
    peer, url = peer_http
    with httpx.Client(headers=HEADERS, timeout=10) as client:
        resp = client.post(url, json=_initialize())
        assert resp.status_code == 200, resp.text
        session_id = resp.headers.get("mcp-session-id")
        assert session_id
        _check_initialize_result(peer, _json_body(resp))

        session = {"mcp-session-id": session_id, "mcp-protocol-version": PROTOCOL}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(url, json=note, headers=session).status_code == 202

        tools = _json_body(
            client.post(
                url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers=session,
            )
        )["result"]["tools"]
        support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in tools}
        assert support == {
            "slow_echo": "optional",
            "need_task": "required",
            "confirm": "required",
            "fail": "required",
            "summarize": "required",
            "plain_echo": None,
            "ask_as_task": None,
            "sample_as_task": None,
            "list_then_cancel": None,
            "ask_short_ttl": None,
            "immediate_ask": "required",
            "progress_steps": "required",
        }

        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "plain_echo", "arguments": {"text": "hi"}},
        }
        result = _json_body(client.post(url, json=call, headers=session))["result"]
        assert result["content"] == [{"type": "text", "text": "echo: hi"}]
        assert not result.get("isError")


def _read_line(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> bytes:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no line from the server within {timeout} s: {buf!r}")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise AssertionError(f"server closed stdout (rc={proc.poll()}): {buf!r}")
        buf += chunk
    return buf.split(b"\n", 1)[0]


def test_stdio_initialize(peer_stdio: tuple[Peer, list[str]]) -> None:
    peer, argv = peer_stdio
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(_initialize()).encode() + b"\n")
        proc.stdin.flush()
        msg = json.loads(_read_line(proc))
        assert msg["id"] == 1
        _check_initialize_result(peer, msg)
        proc.stdin.close()
    finally:
        stop_process(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def _open_session(client: httpx.Client, url: str) -> dict[str, str]:
    resp = client.post(url, json=_initialize())
    assert resp.status_code == 200, resp.text
    session = {"mcp-session-id": resp.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=note, headers=session).status_code == 202
    return session


def test_a_session_ending_leaves_the_others_task_calls_working(
    peer_http: tuple[Peer, str],
) -> None:
    """Two sessions; the second one ends (DELETE); the first can still start a task. mcp 1.30
    alone would answer "TaskSupport not running" here (its one TaskSupport is cleared by any
    session's end); the peer script keeps it per running session, so tests that share a peer
    do not fail at random when another test's session ends."""
    peer, url = peer_http
    with httpx.Client(headers=HEADERS, timeout=10) as client:
        first = _open_session(client, url)
        second = _open_session(client, url)
        assert client.delete(url, headers=second).status_code in (200, 202, 204)
        time.sleep(0.2)  # the server ends the session's run after its answer to the DELETE
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "slow_echo", "arguments": {"text": "hi"}, "task": {}},
        }
        answer = _json_body(client.post(url, json=call, headers=first))
        assert "task" in answer.get("result", {}), (peer.name, answer)
        assert answer["result"]["task"]["status"] == "working"
        client.delete(url, headers=first)


# -- issue 21, item 11: nothing a test started outlives it ---------------------------------------


def _alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` is gone within ``seconds`` (a bound on a wait, not a measurement)."""
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _kill_leftover(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_run_in_group_stops_a_background_job_the_command_left(tmp_path: Path) -> None:
    """``subprocess.run`` returns when its process ends and leaves what that started running;
    ``run_in_group`` stops the whole group."""
    pidfile = tmp_path / "pid"
    done = run_in_group(
        ["bash", "-c", f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}"], timeout=60
    )
    assert done.returncode == 0
    pid = int(pidfile.read_text())
    try:
        assert _gone_within(pid, 10)
    finally:
        _kill_leftover(pid)


def test_run_in_group_stops_the_whole_group_on_timeout(tmp_path: Path) -> None:
    """A timed-out command is stopped with everything it started (test_newcomer left an mcp1
    server running 49 minutes after its timeout: only bash was killed)."""
    pidfile = tmp_path / "pid"
    script = f"sleep 300 & echo $! > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}; wait"
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_group(["bash", "-c", script], timeout=5)
    assert pidfile.exists(), "bash did not start its job within the timeout"
    pid = int(pidfile.read_text())
    try:
        assert _gone_within(pid, 10)
    finally:
        _kill_leftover(pid)


def test_a_peer_server_dies_with_the_process_that_started_it() -> None:
    """A process that started a server and is then killed outright (a timeout's group kill)
    runs no cleanup; the server must not outlive it."""
    require_peer("mcp1")
    code = (
        "import sys, time\n"
        "from peers.harness import PEERS, running_http_peer\n"
        "with running_http_peer(PEERS['mcp1']) as url:\n"
        "    print(url, flush=True)\n"
        "    time.sleep(300)\n"
    )
    tests = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    starter = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, start_new_session=True
    )
    servers: list[int] = []
    try:
        assert starter.stdout is not None
        assert starter.stdout.readline().startswith(b"http://127.0.0.1:")
        for task in Path(f"/proc/{starter.pid}/task").iterdir():
            servers += [int(c) for c in (task / "children").read_text().split()]
        assert servers
        os.kill(starter.pid, signal.SIGKILL)  # no cleanup runs
        starter.wait()
        assert all(_gone_within(pid, 30) for pid in servers)
    finally:
        stop_group(starter)
        for pid in servers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if starter.stdout is not None:
            starter.stdout.close()
