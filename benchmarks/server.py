"""A minimal, fast MCP task server for the benchmarks: JSON-RPC over HTTP/1.1, JSON answers.

    python benchmarks/server.py [PORT [GET_LATENCY_MS]]   # prints "port N" once listening
    python benchmarks/server.py stdio [GET_LATENCY_MS]    # the same answers over stdio

Standard library only, one asyncio process of its own (so the server is not the client's
bottleneck and its CPU is not counted). It speaks just enough of 2025-11-25 for the
benchmarks: ``initialize`` (with an ``Mcp-Session-Id``), notifications (202),
``tools/call`` with ``task`` (creates a task), ``tasks/get``, ``tasks/result``,
``tasks/cancel``, ``DELETE``; a ``tasks/get`` of an id ``seeded-<interval ms>-<n>`` it never
created answers a working task (the memory and lateness rows seed their tasks locally).
Every response is one ``application/json`` body on a kept-alive connection.
``GET_LATENCY_MS`` (issue 39 item 5, the slow-server rows): each ``tasks/get`` is answered
that long after it arrived (the connection is busy meanwhile, as a slow server's would be:
one request at a time per connection, so the client's pool bounds what is in flight).

``stdio`` (issue 39 item 5, the slow-server case over stdio): newline-delimited JSON-RPC on
stdin and stdout, the same answers (no session id, no bench endpoints); each request is
answered by a coroutine of its own, so a late ``tasks/get`` holds no other one up: with no
connections, the client's in-flight bound is the only bound, as over an SDK server's stdio.

A task created with arguments ``{"polls": K}`` answers ``completed`` from its K-th
``tasks/get`` on (``polls`` 0: it never completes); ``{"interval": ms}`` is its
``pollInterval``; ``{"after": ms}`` (issue 39, the timed burst) completes it that long after it
was made, by this process's ``time.monotonic()`` (read at each ``tasks/get``, so the instant is
exact however busy the server is; it is the task's entry in ``GET /completions``).
``GET /stats`` answers ``{"connections": accepted TCP connections, "requests": ...,
"cpu_s": this process's CPU seconds so far}``; ``POST /reset`` zeroes the counts.

Completion latency (issue 12): ``POST /schedule`` with ``{task id: D}`` completes each
task D ms later, by the server's clock (``time.monotonic()``: on Linux one
``CLOCK_MONOTONIC`` for every process of the machine, so a client process can compare its own
readings); ``GET /completions`` answers ``{task id: that instant in seconds}``. Push: a
``GET /mcp-push`` (any path ending ``-push``) with ``accept: text/event-stream`` opens the
standalone GET stream (chunked SSE), on which the server sends ``notifications/tasks/status``
with the completed task the moment it completes; every other GET answers 405 as before, so the
rows of clients that open a GET stream by themselves are unchanged.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections.abc import Awaitable, Callable

CREATED = "2026-01-01T00:00:00Z"
_ids = itertools.count(1)
_tasks: dict[str, list[int]] = {}  # task id -> [polls seen, polls to completion, interval]
_stats = {"connections": 0, "requests": 0}
_completed_at: dict[str, float] = {}  # task id -> time.monotonic() of its completion
_ends: dict[str, float] = {}  # task id -> the instant an "after" task completes
_push: set[asyncio.StreamWriter] = set()  # the open GET streams
_get_latency = 0.0  # seconds each tasks/get waits before its answer (GET_LATENCY_MS)


def _complete(task_id: str, interval: int) -> None:
    """The task completes now: recorded, and pushed on every open GET stream."""
    _completed_at[task_id] = time.monotonic()
    note = {"jsonrpc": "2.0", "method": "notifications/tasks/status"}
    note["params"] = _task(task_id, "completed", interval)  # type: ignore[assignment]
    event = b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
    chunk = f"{len(event):x}\r\n".encode() + event + b"\r\n"
    for writer in list(_push):
        if writer.is_closing():
            _push.discard(writer)
        else:
            writer.write(chunk)


def _task(task_id: str, status: str, interval: int) -> dict[str, object]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": CREATED,
        "lastUpdatedAt": CREATED,
        "ttl": 3_600_000,
        "pollInterval": interval,
    }


def _answer(message: dict[str, object]) -> dict[str, object] | None:
    method = message.get("method")
    params = message.get("params") or {}
    assert isinstance(params, dict)
    if "id" not in message:
        return None
    result: object
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {
                "tools": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "bench-server", "version": "0"},
        }
    elif method == "tools/call":
        arguments = params.get("arguments") or {}
        task_id = f"task-{next(_ids)}"
        interval = int(arguments.get("interval", 1000))
        _tasks[task_id] = [0, int(arguments.get("polls", 0)), interval]
        if "after" in arguments:
            _ends[task_id] = time.monotonic() + float(arguments["after"]) / 1000
        result = {"task": _task(task_id, "working", interval)}
    elif method in ("tasks/get", "tasks/cancel", "tasks/result"):
        task_id = str(params.get("taskId"))
        entry = _tasks.get(task_id)
        if entry is None and task_id.startswith("seeded-"):
            # a task the client seeded itself ("seeded-<interval ms>-<n>"): never completes
            entry = _tasks[task_id] = [0, 0, int(task_id.split("-")[1])]
        if entry is None:
            error = {"code": -32602, "message": "no task"}
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        if method == "tasks/get":
            entry[0] += 1
            ends = _ends.get(task_id)
            if ends is not None and task_id not in _completed_at and time.monotonic() >= ends:
                _completed_at[task_id] = ends  # when it ended, not when it was first seen
            done = (entry[1] and entry[0] >= entry[1]) or task_id in _completed_at
            result = _task(task_id, "completed" if done else "working", entry[2])
        elif method == "tasks/cancel":
            entry[1] = -1
            result = _task(task_id, "cancelled", entry[2])
        else:
            result = {"content": [{"type": "text", "text": "done"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _response(status: str, body: bytes, extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    _stats["connections"] += 1
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            verb, target, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            _stats["requests"] += 1
            if verb == "GET" and target == "/stats":
                stats = {**_stats, "cpu_s": time.process_time()}  # the server's own CPU so far
                writer.write(_response("200 OK", json.dumps(stats).encode()))
            elif verb == "POST" and target == "/reset":
                _stats["connections"] = _stats["requests"] = 0
                _completed_at.clear()
                writer.write(_response("200 OK", b"{}"))
            elif verb == "POST" and target == "/schedule":
                loop = asyncio.get_running_loop()
                for task_id, delay_ms in json.loads(body).items():
                    entry = _tasks[task_id]
                    loop.call_later(delay_ms / 1000, _complete, task_id, entry[2])
                writer.write(_response("200 OK", b"{}"))
            elif verb == "GET" and target == "/completions":
                writer.write(_response("200 OK", json.dumps(_completed_at).encode()))
            elif (
                verb == "GET"
                and target.endswith("-push")
                and "text/event-stream" in head.decode("latin-1")
            ):
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
                )
                _push.add(writer)
                try:
                    await reader.read()  # held open until the client closes it
                finally:
                    _push.discard(writer)
                return
            elif verb == "DELETE":
                writer.write(_response("200 OK", b""))
            elif verb == "GET":
                writer.write(_response("405 Method Not Allowed", b""))
            else:
                message = json.loads(body)
                if _get_latency and message.get("method") == "tasks/get":
                    await asyncio.sleep(_get_latency)
                answer = _answer(message)
                if answer is None:
                    writer.write(_response("202 Accepted", b""))
                else:
                    extra = "mcp-session-id: bench-session\r\n"
                    writer.write(_response("200 OK", json.dumps(answer).encode(), extra))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int, serve: Callable[..., Awaitable[None]] = _serve) -> None:
    """Serve ``serve`` (a connection handler) on 127.0.0.1:``port``; print the port."""
    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


async def stdio_main() -> None:
    """Serve newline-delimited JSON-RPC on stdin and stdout until stdin ends."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    running: set[asyncio.Task[None]] = set()

    async def one(message: dict[str, object]) -> None:
        if _get_latency and message.get("method") == "tasks/get":
            await asyncio.sleep(_get_latency)
        answer = _answer(message)
        if answer is not None:
            out.write(json.dumps(answer).encode() + b"\n")
            out.flush()

    while line := await reader.readline():
        message = json.loads(line)
        if "method" not in message:
            continue  # an answer from the client: this server asks nothing
        task = asyncio.create_task(one(message))
        running.add(task)
        task.add_done_callback(running.discard)


if __name__ == "__main__":
    stdio = len(sys.argv) > 1 and sys.argv[1] == "stdio"
    if len(sys.argv) > 2:
        _get_latency = float(sys.argv[2]) / 1000
    if stdio:
        asyncio.run(stdio_main())
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
