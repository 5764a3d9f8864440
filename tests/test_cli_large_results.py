"""A large result: the terminal shows its first 256 KiB and a note of what was left out;
``--output FILE`` writes all of it (the CallToolResult as JSON, what ``--json`` puts in
"result"). A scripted server on 127.0.0.1; the command on a pseudo-terminal or on pipes.
(How long it takes is measured, not asserted: see the CHANGELOG.)"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from test_cli import CLI, REPO, RUN_TIMEOUT, env
from test_cli_hostile_text import on_terminal

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.cli._tty import SHOWN_CHARS
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

LINE = "lorem ipsum dolor sit amet " * 10 + "\n"
BIG = LINE * (3 * SHOWN_CHARS // len(LINE)) + "THE END"
RESULT: dict[str, Any] = {
    "content": [{"type": "text", "text": BIG}],
    "structuredContent": {"lines": 3},
}


async def serve(request: Received, conn: Conn) -> None:
    if request.rpc_method == "tools/call":
        await conn.result(request, RESULT)
    else:
        await conn.error(request, -32601, "not here")


@pytest.fixture(scope="module")
def server() -> Iterator[HostileHTTPServer]:
    with (
        anyio.from_thread.start_blocking_portal("trio") as portal,
        portal.wrap_async_context_manager(HostileHTTPServer(serve)) as server,
    ):
        yield server


def test_the_terminal_shows_a_head_and_says_what_was_left_out(server: HostileHTTPServer) -> None:
    code, screen = on_terminal(["--url", server.url, "call", "big"])
    assert code == ExitCode.COMPLETED, screen[-2000:]
    assert "completed" in screen
    assert LINE.strip() in screen
    assert "THE END" not in screen
    left = len(BIG) - SHOWN_CHARS
    assert f"... {left:,} more characters not shown" in screen
    assert f"the first {SHOWN_CHARS:,} of {len(BIG):,}" in screen
    assert "--output FILE writes the whole result" in screen
    assert len(screen) < SHOWN_CHARS + 10_000


def test_output_writes_the_whole_result(server: HostileHTTPServer, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    code, screen = on_terminal(["--url", server.url, "call", "big", "--output", str(path)])
    assert code == ExitCode.COMPLETED, screen[-2000:]
    written = path.read_text(encoding="utf-8")
    assert json.loads(written) == RESULT
    assert f"result written to {path} ({len(written.encode()):,} bytes)" in screen
    assert LINE.strip() not in screen  # the file has it; the terminal is not flooded

    path.unlink()
    run = subprocess.run(
        [*CLI, "--url", server.url, "call", "big", "--output", str(path)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=REPO,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert run.returncode == ExitCode.COMPLETED, run.stderr
    [outcome] = [json.loads(line) for line in run.stdout.splitlines()]
    assert outcome["output"] == str(path)
    assert outcome["result"] == RESULT  # JSON lines stay whole
    assert json.loads(path.read_text(encoding="utf-8")) == RESULT


def test_an_output_path_that_cannot_be_written_fails_before_anything_is_sent(
    server: HostileHTTPServer, tmp_path: Path
) -> None:
    before = len(server.received)
    bad = tmp_path / "no such dir" / "r.json"
    run = subprocess.run(
        [*CLI, "--url", server.url, "call", "big", "--output", str(bad)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=REPO,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert run.returncode == ExitCode.USAGE
    assert f"--output: cannot write {bad}" in run.stderr
    assert len(server.received) == before
