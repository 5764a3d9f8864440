"""``mcp-tasks`` against a server whose every string carries terminal escape sequences: an OSC
52 clipboard write, a window title, a cursor-position query (the terminal answers it as if
typed), the 8-bit CSI U+009B, a carriage return, DEL. Nothing of it may reach a terminal raw,
on stdout or stderr, in any command (tool names, task ids, status messages, results, error
lines, the live line), with or without ``--json``; JSON lines stay lossless.

Every command is a subprocess on a pseudo-terminal (the terminal view) or on pipes (JSON
lines), against a scripted server on 127.0.0.1 (``HostileHTTPServer``) run in a thread.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator, Sequence
from typing import Any

import anyio.from_thread
import pytest
from peers.harness import stop_process
from test_cli import CLI, REPO, RUN_TIMEOUT, env

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

EVIL = "A\x1b]52;c;cHduZWQ=\x07B\x1b]0;pwned\x07C\x1b[6nD\u009b6nE\rF\x7fG"
"""One string carrying every kind: clipboard write, title, status query, 8-bit CSI, CR, DEL."""
RAW = ["\x1b]52", "\x1b]0;pwned", "\x1b[6n", "\u009b", "E\rF", "\x7f"]
"""What must never reach the terminal as it is (rich's own styling is ESC [ ... m, and its
live line redraws with carriage returns of its own)."""
SHOWN = ["\\x1b]52;c;", "\\x1b]0;pwned", "\\x1b[6n", "\\x9b6n", "\\x0dF", "\\x7fG"]
"""How the terminal shows them instead."""
TASK_ID = "t-\x1b]0;id\x07-1"
NOW = dt.datetime.now(dt.timezone.utc).isoformat()


def task(status: str) -> dict[str, Any]:
    return {
        "taskId": TASK_ID,
        "status": status,
        "statusMessage": f"{status} {EVIL}",
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttl": 60000,
        "pollInterval": 50,
    }


RESULT = {
    "content": [
        {"type": "text", "text": f"text {EVIL}"},
        {"type": "resource_link", "uri": "file:///x", "name": f"link {EVIL}"},
    ]
}


async def serve(request: Received, conn: Conn) -> None:
    method = request.rpc_method
    params = request.params
    if method == "tools/list":
        tool = {
            "name": f"tool{EVIL}",
            "description": f"does {EVIL}",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"},
        }
        await conn.result(request, {"tools": [tool]})
    elif method == "tools/call" and "task" in params:
        await conn.result(request, {"task": task("working")})
    elif method == "tools/call":
        await conn.result(request, RESULT)
    elif method == "tasks/get" and params.get("taskId") == TASK_ID:
        await conn.result(request, task("completed"))
    elif method == "tasks/result":
        await conn.result(request, RESULT)
    elif method == "tasks/cancel":
        await conn.result(request, task("cancelled"))
    elif method == "tasks/list":
        await conn.result(request, {"tasks": [task("working")]})
    else:
        await conn.error(request, -32602, f"no such task {EVIL}")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with (
        anyio.from_thread.start_blocking_portal("trio") as portal,
        portal.wrap_async_context_manager(HostileHTTPServer(serve)) as server,
    ):
        yield server.url


def commands(url: str) -> list[list[str]]:
    server = ["--url", url, "--interval", "0.05"]
    return [
        [*server, "tools"],
        [*server, "call", "x"],
        [*server, "call", "x", "--task", "--wait"],
        [*server, "status", f"--id={TASK_ID}"],
        [*server, "cancel", f"--id={TASK_ID}"],
        [*server, "list"],
        [*server, "status", "unknown"],  # an error line, with the server's message
    ]


def on_terminal(args: Sequence[str]) -> tuple[int, str]:
    """Run on a pseudo-terminal (stdout and stderr both): the exit code, every byte written
    (decoded, nothing stripped)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    proc = subprocess.Popen(
        [*CLI, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env(TERM="xterm-256color", COLUMNS="200", LINES="40"),
        cwd=REPO,
        close_fds=True,
    )
    os.close(slave)
    raw = b""
    deadline = time.monotonic() + RUN_TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            raw += chunk
        proc.wait(timeout=10)
    finally:
        os.close(master)
        stop_process(proc)
    # The pty turns "\n" into "\r\n": those carriage returns are the terminal's own.
    return proc.returncode, raw.decode("utf-8", "replace").replace("\r\n", "\n")


def test_no_server_escape_sequence_reaches_the_terminal(url: str) -> None:
    seen: dict[str, list[str]] = {}
    for args in commands(url):
        code, screen = on_terminal(args)
        name = " ".join(args[4:])
        assert code in (ExitCode.COMPLETED, ExitCode.LOST), (name, code, screen)
        for raw in RAW:
            assert raw not in screen, (name, raw, screen)
        seen[name] = [shown for shown in SHOWN if shown in screen]
    # Each command showed the server's text, escaped (not dropped).
    assert all(seen.values()), seen
    assert set(seen["call x --task --wait"]) == set(SHOWN), seen  # status, result, task id


def test_json_lines_escape_every_control_and_keep_the_text_exactly(url: str) -> None:
    for args in commands(url):
        run = subprocess.run(
            [*CLI, *args, "--json"],
            capture_output=True,
            env=env(),
            cwd=REPO,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        out = run.stdout.decode("utf-8")
        err = run.stderr.decode("utf-8")
        name = " ".join(args[4:])
        for char in map(chr, [*range(0x20), *range(0x7F, 0xA0)]):
            if char != "\n":
                assert char not in out, (name, hex(ord(char)))
        for raw in RAW:  # stderr is the terminal in `mcp-tasks ... | jq`
            assert raw not in err, (name, raw, err)
        events = [json.loads(line) for line in out.splitlines()]
        assert EVIL in json.dumps(events, ensure_ascii=False) or any(
            EVIL in str(v) for e in events for v in _strings(e)
        ), (name, out)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_json_mode_error_line_on_stderr_is_escaped(url: str) -> None:
    run = subprocess.run(
        [*CLI, "--url", url, "--json", "status", "unknown"],
        capture_output=True,
        env=env(),
        cwd=REPO,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert run.returncode == ExitCode.LOST
    err = run.stderr.decode("utf-8")
    assert "no such task A\\x1b]52;c;" in err
    [line] = run.stdout.decode().splitlines()
    assert json.loads(line)["error"]["message"] == f"no such task {EVIL}"
