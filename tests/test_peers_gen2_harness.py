"""The 2026-07-28 peers start and answer server/discover (raw JSON-RPC, no library).

fastmcp4 (fastmcp[tasks]==4.1.4) offers the io.modelcontextprotocol/tasks extension;
mcp2 (mcp==2.3.0) offers no tasks at all.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from typing import Any

import httpx
from conftest import require_peer
from peers.harness import stdio_command, stdio_env, stop_process

PROTOCOL = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXT: {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "peer-gen2-harness-test", "version": "0"},
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL,
    "Mcp-Method": "server/discover",
}


def _discover(req_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "method": "server/discover", "params": {"_meta": META}}


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


def _http_discover(url: str) -> dict[str, Any]:
    resp = httpx.post(url, json=_discover(), headers=HEADERS, timeout=10)
    assert resp.status_code == 200, resp.text
    msg = _json_body(resp)
    assert msg["id"] == 1
    result: dict[str, Any] = msg["result"]
    return result


def test_fastmcp4_http_discover_lists_tasks_extension(fastmcp4_http_url: str) -> None:
    result = _http_discover(fastmcp4_http_url)
    assert PROTOCOL in result["supportedVersions"]
    assert TASKS_EXT in result["capabilities"]["extensions"]
    info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert info["name"] == "fastmcp-tasks-peer"


def test_mcp2_http_discover_has_no_tasks(mcp2_http_url: str) -> None:
    result = _http_discover(mcp2_http_url)
    assert PROTOCOL in result["supportedVersions"]
    assert TASKS_EXT not in result["capabilities"].get("extensions", {})
    assert "tasks" not in result["capabilities"]
    info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert info["name"] == "mcp2-plain"


def _read_line(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> bytes:
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


def test_fastmcp4_stdio_discover() -> None:
    peer = require_peer("fastmcp4")
    env = stdio_env(peer)
    assert env is not None
    assert env["FASTMCP_SHOW_SERVER_BANNER"] == "false"
    assert env["FASTMCP_CHECK_FOR_UPDATES"] == "off"
    proc = subprocess.Popen(
        stdio_command(peer),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(_discover()).encode() + b"\n")
        proc.stdin.flush()
        msg = json.loads(_read_line(proc))  # the first stdout line: no banner before it
        assert msg["id"] == 1
        assert PROTOCOL in msg["result"]["supportedVersions"]
        assert TASKS_EXT in msg["result"]["capabilities"]["extensions"]
        proc.stdin.close()
    finally:
        stop_process(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def test_stdio_env_is_none_without_peer_env() -> None:
    assert stdio_env(require_peer("mcp2")) is None
