"""stdio fault injection with tiny child processes: what a broken server process does.

Interoperability over stdio is proven against the real peers (test_client_peers.py); these
children exist only to misbehave.
"""

from __future__ import annotations

import sys

import anyio
import pytest

from mcp_tasks_client import (
    Client,
    DecodeError,
    Generation,
    Implementation,
    ProcessExited,
    StdioShutdown,
    StdioTransport,
)

pytestmark = pytest.mark.anyio

INFO = Implementation("stdio-faults", "0")


def child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def connect(transport: StdioTransport) -> None:
    with anyio.fail_after(10):
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO):
            pass  # pragma: no cover - the handshake fails first


async def test_child_exiting_before_answering_names_its_code_and_stderr() -> None:
    """The handshake fails with ProcessExited carrying the return code and stderr tail."""
    transport = StdioTransport(
        child(
            "import sys; sys.stdin.readline(); sys.stderr.write('cannot start: no db'); sys.exit(3)"
        )
    )
    with pytest.raises(ProcessExited) as caught:
        await connect(transport)
    assert caught.value.returncode == 3
    assert "cannot start: no db" in caught.value.stderr_tail


async def test_non_json_on_stdout_is_a_decode_error() -> None:
    """X:3.3: stdout carries only MCP messages; anything else is a typed error, not a hang."""
    transport = StdioTransport(
        child(
            "import sys, time; sys.stdin.readline(); "
            "print('Starting server...', flush=True); time.sleep(30)"
        ),
        shutdown=StdioShutdown(after_stdin_close=0.2, after_terminate=2.0),
    )
    with pytest.raises(DecodeError) as caught:
        await connect(transport)
    assert "not valid JSON" in caught.value.problem
    assert transport.returncode is not None  # the child was stopped on the way out (C-14)


async def test_a_child_that_ignores_stdin_close_and_sigterm_is_killed() -> None:
    """C-14: close stdin, wait, SIGTERM, wait, SIGKILL; each wait bounded."""
    code = (
        "import signal, sys, time, json\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "line = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': line['id'], 'result': {"
        "'protocolVersion': '2025-11-25', 'capabilities': {},"
        "'serverInfo': {'name': 'stubborn', 'version': '0'}}}), flush=True)\n"
        "while True: time.sleep(1)\n"
    )
    transport = StdioTransport(
        child(code), shutdown=StdioShutdown(after_stdin_close=0.2, after_terminate=0.2)
    )
    with anyio.fail_after(10):
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
            assert c.server_info.name == "stubborn"
    assert transport.returncode == -9  # SIGKILL
