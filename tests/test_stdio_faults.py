"""stdio fault injection with tiny child processes: what a broken server process does.

Interoperability over stdio is proven against the real peers (test_client_peers.py); these
children exist only to misbehave.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from mcp_tasks_client import Client, Generation, Limits, StdioShutdown, StdioTransport, ToolCall
from mcp_tasks_client.errors import (
    DecodeError,
    LimitExceeded,
    ProcessExited,
    RequestTimeout,
    TransportClosed,
    TransportError,
)
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.transports import TransportFault

pytestmark = pytest.mark.anyio

INFO = Implementation("stdio-faults", "0")


def child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


# A server that answers the handshake and waits for notifications/initialized, then misbehaves.
PRELUDE = (
    "import json, os, subprocess, sys, time\n"
    "def answer_initialize():\n"
    "    request = json.loads(sys.stdin.readline())\n"
    "    print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': {"
    "'protocolVersion': '2025-11-25', 'capabilities': {},"
    " 'serverInfo': {'name': 'hostile', 'version': '0'}}}), flush=True)\n"
    "    sys.stdin.readline()  # notifications/initialized\n"
    "SLEEPER = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
    "def write_number(path, number):  # whole or not at all: the test reads it at any moment\n"
    "    with open(path + '.tmp', 'w') as f:\n"
    "        f.write(str(number))\n"
    "    os.replace(path + '.tmp', path)\n"
)

QUICK = StdioShutdown(after_stdin_close=0.2, after_terminate=2.0, after_kill=2.0)


def hostile(code: str) -> list[str]:
    return child(PRELUDE + code)


def client(transport: StdioTransport) -> Client:
    return Client(transport, generation=Generation.V2025_11_25, client_info=INFO)


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a dead orphan its new parent has not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_leftover(pidfile: Path) -> None:
    """The test never leaks the grandchild, whatever the transport did."""
    try:
        pid = int(pidfile.read_text())
    except (FileNotFoundError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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


async def test_close_terminates_the_childs_whole_process_group(tmp_path: Path) -> None:
    """C-14 signals the child's own process group: a helper it started does not outlive it,
    even when the child itself exits at stdin EOF and leaves the helper behind."""
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "helper = subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"write_number({str(pidfile)!r}, helper.pid)\n"
        "answer_initialize()\n"
        "for _ in sys.stdin: pass\n"
    )
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    try:
        with anyio.fail_after(15):
            async with client(transport):
                grandchild = int(pidfile.read_text())
                assert alive(grandchild)
                assert os.getpgid(grandchild) == transport.pid  # the child leads its group
            with anyio.move_on_after(5):
                while alive(grandchild):
                    await anyio.sleep(0.05)
            assert not alive(grandchild)
            assert transport.returncode is not None
    finally:
        kill_leftover(pidfile)


async def test_child_exit_is_noticed_while_a_grandchild_holds_stdout(tmp_path: Path) -> None:
    """The child's exit is seen from the process, not only from stdout's end: a call fails with
    ProcessExited (its code) instead of waiting out its timeout."""
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "answer_initialize()\n"
        "helper = subprocess.Popen(SLEEPER)  # inherits stdin, stdout and stderr\n"
        f"write_number({str(pidfile)!r}, helper.pid)\n"
        "sys.exit(7)\n"
    )
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    try:
        with anyio.fail_after(15):
            async with client(transport) as c:
                with pytest.raises(ProcessExited) as caught:
                    await c.call_tool(ToolCall("anything"), timeout=30)
        assert caught.value.returncode == 7
    finally:
        kill_leftover(pidfile)


@pytest.mark.parametrize("grandchild_holds_stdout", [False, True])
async def test_exactly_one_process_exited_after_what_was_written(
    tmp_path: Path, grandchild_holds_stdout: bool
) -> None:
    """Whether the exit is noticed at stdout's end or by the process watcher, the messages the
    child wrote come first, then one ProcessExited, then the end of the stream."""
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "import json, subprocess, sys\n"
        "if sys.argv[1] == 'hold':\n"
        "    helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "    with open(sys.argv[2], 'w') as f: f.write(str(helper.pid))\n"
        "print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/last_words'}), flush=True)\n"
        "sys.stderr.write('bye')\n"
        "sys.exit(5)\n"
    )
    mode = "hold" if grandchild_holds_stdout else "alone"
    transport = StdioTransport([*child(code), mode, str(pidfile)], shutdown=QUICK)
    received: list[object] = []
    try:
        with anyio.fail_after(15):
            async with transport:
                with pytest.raises(TransportClosed):
                    while True:
                        received.append(await transport.receive())
    finally:
        kill_leftover(pidfile)
    assert len(received) == 2
    assert getattr(received[0], "method", None) == "notifications/last_words"
    fault = received[1]
    assert isinstance(fault, TransportFault)
    assert fault.fatal
    assert fault.request_id is None
    assert isinstance(fault.error, ProcessExited)
    assert fault.error.returncode == 5
    assert "bye" in fault.error.stderr_tail


async def test_nothing_more_is_read_after_a_line_that_is_not_json(tmp_path: Path) -> None:
    """After a fatal fault stdout is no longer read: a child that keeps flooding fills its own
    pipe, not this process's memory (the incoming buffer is small and bounded too)."""
    progress = tmp_path / "written"
    code = (
        "answer_initialize()\n"
        "print('Starting server...', flush=True)\n"
        "note = json.dumps({'jsonrpc': '2.0', 'method': 'notifications/message',"
        " 'params': {'level': 'info', 'data': 'x' * 1000}}) + '\\n'\n"
        "written = 0\n"
        "while True:\n"
        "    sys.stdout.write(note)\n"
        "    sys.stdout.flush()\n"
        "    written += 1\n"
        f"    write_number({str(progress)!r}, written)  # how much it wrote so far\n"
    )
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    with anyio.fail_after(15):
        async with client(transport) as c:
            with pytest.raises(DecodeError):
                await c.call_tool(ToolCall("anything"), timeout=10)

            # The child writes until its pipe is full, then blocks: wait until its count
            # stands still (on a loaded machine that takes a while), bounded by fail_after.
            def count() -> str:  # "" until the child wrote its first count
                return progress.read_text() if progress.exists() else ""

            written: str | None = None
            while not written or written != count():
                written = count()
                await anyio.sleep(0.3)
            read = transport.bytes_read
            await anyio.sleep(0.3)
            assert progress.read_text() == written  # nobody drains the pipe any more
            assert transport.bytes_read == read
            assert read < 1024 * 1024  # the line that broke it, and at most a chunk around it
            assert transport.buffered_messages <= 16


@pytest.mark.parametrize("size", [10_000, 100_000])  # within one pipe read, or across several
async def test_an_over_long_line_exceeds_limits_max_message_bytes(size: int) -> None:
    """One stdio line is bounded by Limits.max_message_bytes: a longer (valid) message is a
    fatal, typed LimitExceeded naming the limit, not a DecodeError, and is not buffered whole.

    The transport is used without a Client, whose own ``limits=`` would replace these.
    """
    code = (
        "import json, sys, time\n"
        "print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/message',"
        f" 'params': {{'level': 'info', 'data': 'x' * {size}}}}}), flush=True)\n"
        "time.sleep(60)\n"
    )
    transport = StdioTransport(child(code), shutdown=QUICK)
    transport.apply_limits(Limits(max_message_bytes=4096))
    with anyio.fail_after(15):
        async with transport:
            fault = await transport.receive()
            read = transport.bytes_read
    assert isinstance(fault, TransportFault)
    assert fault.fatal
    assert fault.request_id is None
    assert isinstance(fault.error, LimitExceeded)
    assert fault.error.limit == "max_message_bytes"
    assert fault.error.maximum == 4096
    assert read < 4096 + 2 * 65536  # the limit, and at most the chunk that crossed it


async def test_a_child_that_stops_reading_stdin_breaks_sends_instead_of_blocking() -> None:
    """A write cut short by the caller's deadline leaves the framing unknown: that call times
    out, and every later send fails at once with a TransportError instead of blocking."""
    code = "answer_initialize()\ntime.sleep(60)\n"
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    blob = "a" * 1_000_000  # far more than a pipe holds
    timeouts = 0
    with anyio.fail_after(20):
        async with client(transport) as c:
            with pytest.raises(TransportError) as caught:
                for _ in range(5):
                    try:
                        await c.call_tool(ToolCall("x", {"blob": blob}), timeout=2)
                    except RequestTimeout:
                        timeouts += 1
    assert timeouts >= 1
    assert not isinstance(caught.value, ProcessExited)
    assert "stopped reading its stdin" in str(caught.value)


async def test_a_dying_server_ends_poller_waits_at_once_with_process_exited() -> None:
    """Issue 7 (found by an independent probe): a child that died left `poller.wait` running
    until its deadline (or its next poll, minutes away). The connection's end now ends every
    wait with what ended it."""
    from mcp_tasks_client import Poller, PollPolicy
    from mcp_tasks_client.models import Task

    code = (
        "import json, sys, time\n"
        "line = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': line['id'], 'result': {"
        "'protocolVersion': '2025-11-25', 'capabilities': {'tasks': {}},"
        "'serverInfo': {'name': 'dying', 'version': '0'}}}), flush=True)\n"
        "sys.stdin.readline()\n"  # notifications/initialized
        "time.sleep(0.5)\n"
        "sys.exit(9)\n"
    )
    snapshot = {
        "taskId": "t-1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": None,
        "pollInterval": 600_000,
    }
    client = Client(
        StdioTransport(child(code)), generation=Generation.V2025_11_25, client_info=INFO
    )
    with anyio.fail_after(15):
        async with client, Poller(client, PollPolicy(jitter=0.0)) as poller:
            with pytest.raises(ProcessExited) as caught:
                await poller.wait(client.decode(snapshot, Task), deadline=600)
    assert caught.value.returncode == 9


async def test_a_request_id_with_a_lone_surrogate_is_a_typed_error() -> None:
    """A child printing a ping whose id is ``"\\ud800"`` (valid JSON, no UTF-8 can carry it):
    its answer raised UnicodeEncodeError in the client's task group. The line is now refused
    as a DecodeError naming the path (fatal over stdio, like any line that is not JSON-RPC)."""
    code = (
        "answer_initialize()\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': '\\ud800', 'method': 'ping'}), flush=True)\n"
        "time.sleep(60)\n"
    )
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    with anyio.fail_after(15):
        async with client(transport) as c:
            with pytest.raises(DecodeError) as caught:
                await c.call_tool(ToolCall("anything"), timeout=10)
    assert caught.value.path == "$.id"
    assert "surrogate" in caught.value.problem
    assert transport.returncode is not None


async def test_a_raising_end_listener_does_not_stop_the_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``on_connection_end`` listeners ran unguarded inside the close: one that raised skipped
    the rest of it (the task group's cancel, the transport's close), so the child was never
    stopped. It is now logged; every other listener still runs, and the child is reaped."""
    code = "answer_initialize()\nfor _ in sys.stdin: pass\n"
    transport = StdioTransport(hostile(code), shutdown=QUICK)
    seen: list[object] = []

    def boom(error: object) -> None:
        raise RuntimeError("a listener bug")

    with anyio.fail_after(15):
        async with client(transport) as c:
            c.on_connection_end(boom)
            c.on_connection_end(seen.append)
    assert transport.returncode is not None
    assert len(seen) == 1
    assert any(r.exc_info and isinstance(r.exc_info[1], RuntimeError) for r in caplog.records), (
        caplog.records
    )


# Answers each request line with its id; a line that is not JSON (a cut-short write spliced
# into the next) ends it with code 3, so a broken framing cannot pass unnoticed.
ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    try:\n"
    "        request = json.loads(line)\n"
    "    except ValueError:\n"
    "        sys.exit(3)\n"
    "    print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': {}}), flush=True)\n"
)


async def test_a_send_cancelled_before_its_first_byte_leaves_the_connection_usable() -> None:
    """Issue 21, item 4: a host whose loop stalls past a request's deadline cancels sends at
    every point, including before the first byte is written; such a send wrote nothing, and it
    used to break the connection ("stopped reading its stdin"). Here a sibling cancels each
    send after 0 to 5 checkpoints, so the cancellation lands at every await a send makes. Every
    send that returned is answered, none that was cancelled is, and the connection lives on."""
    from mcp_tasks_client.models import JSONRPCRequest, JSONRPCResponse

    transport = StdioTransport(child(ECHO), shutdown=QUICK)
    sent: list[int] = []
    cancelled = 0
    with anyio.fail_after(30):
        async with transport:
            for number in range(120):
                with anyio.CancelScope() as scope:

                    async def cancel_after(checkpoints: int, scope: anyio.CancelScope) -> None:
                        for _ in range(checkpoints):
                            await anyio.lowlevel.checkpoint()
                        scope.cancel()

                    async with anyio.create_task_group() as group:
                        group.start_soon(cancel_after, number % 6, scope)
                        await transport.send(JSONRPCRequest(number, "ping"))
                        sent.append(number)
                if scope.cancelled_caught:
                    cancelled += 1
            await transport.send(JSONRPCRequest("last", "ping"))
            answered: set[int | str] = set()
            while "last" not in answered:
                message = await transport.receive()
                assert isinstance(message, JSONRPCResponse), message
                answered.add(message.id)
    assert cancelled > 0  # the cancellations did land inside sends
    assert answered == {*sent, "last"}


async def test_a_child_that_closes_stdout_but_keeps_running_is_said_so() -> None:
    """Issue 21, item 10: a child that closed its stdout and lives on was reported as "exited
    with code None"; it is a TransportClosed that says it closed its stdout, and the child is
    still stopped when the transport closes."""
    code = "import os, sys, time\nos.close(1)\nsys.stderr.write('bye\\n')\ntime.sleep(60)\n"
    transport = StdioTransport(child(code), shutdown=QUICK)
    with anyio.fail_after(20):
        async with transport:
            fault = await transport.receive()
            running = transport.returncode is None
    assert running
    assert isinstance(fault, TransportFault)
    assert isinstance(fault.error, TransportClosed)
    assert not isinstance(fault.error, ProcessExited)
    assert "closed its stdout" in str(fault.error)
    assert "bye" in str(fault.error)
    assert transport.returncode is not None  # stopped by the transport's shutdown
