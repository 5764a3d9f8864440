"""The bench server's 2026-07-28 sibling: the ``io.modelcontextprotocol/tasks`` extension.

    python benchmarks/server2026.py [PORT]     # prints "port N" once listening on 127.0.0.1

Standard library only, one asyncio process of its own (issue 25), like ``server.py`` for
2025-11-25: JSON-RPC over HTTP/1.1, one ``application/json`` body per answer on a kept-alive
connection, except ``subscriptions/listen`` (a chunked SSE stream). Stateless, as the
generation is: no ``initialize``, no session. It checks every request's wire, so a row that
does not speak it exactly fails instead of being measured: ``_meta`` protocolVersion and
clientCapabilities (else 400, -32602), the ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` headers equal to the body (else 400, -32020; a header left out is counted in
``missing_headers``, not refused, so a peer that omits one is still measured and the gap
reported), the tasks extension declared on ``tools/call``, ``tasks/*`` and
``subscriptions/listen`` (else 400, -32021).

- ``server/discover``: 2026-07-28 with the tasks extension; ``tools/list``: ``work``, ``ask``.
- ``tools/call`` ``work`` ``{"polls": K, "interval": ms}``: answered ``resultType: "task"``
  (a flat CreateTaskResult); the task is ``completed`` from its K-th ``tasks/get`` on
  (K 0: never), its result inline; ``pollIntervalMs`` is ``interval``. With ``"after": ms``
  (issue 39, the timed burst) it completes that long after it was made instead, by this
  process's ``time.monotonic()`` read at each ``tasks/get`` (exact however busy the server
  is; that instant is its entry in ``GET /completions``).
- ``tools/call`` ``ask`` ``{"rounds": R, "keys": N, "interval": ms}``: a task that asks R
  rounds of N ``elicitation/create`` inputRequests (keys ``r<round>-k<n>``), one round at a
  time: a snapshot shows the round's keys not yet answered; ``tasks/update`` with
  ``inputResponses`` answers them (an unknown key: -32602); the task completes once the
  last round is answered (its result names every answer's ``content``).
- ``tasks/cancel``: the empty ack; the task ends ``cancelled``.
- ``subscriptions/listen`` with ``notifications.taskIds``: an SSE stream that first sends
  ``notifications/subscriptions/acknowledged`` (those ids), then ``notifications/tasks`` with
  the full snapshot of each of them that completes, ``_meta`` subscriptionId the listen's id;
  held open until the client closes it.
- A ``tasks/get`` of an id ``seeded-<interval ms>-<n>`` it never created answers a working
  task (the memory rows seed their tasks locally).

The bench's endpoints as on ``server.py``: ``GET /stats`` answers ``{"connections",
"requests", "methods": {method: count}, "missing_headers": {"<method> <header>": count},
"cpu_s"}`` (every HTTP request; the JSON-RPC ones by method; the routing headers left out;
this process's CPU seconds so far); ``POST /reset`` zeroes the counts; ``POST /schedule``
``{task id: D}`` completes each task D ms on by the server's ``time.monotonic()`` (one clock
for every process of a Linux machine); ``GET /completions`` answers ``{task id: that instant}``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from typing import Any

VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
CREATED = "2026-08-01T00:00:00Z"
ASK = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}
_NAMED = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId"}
_NAMED["tasks/cancel"] = "taskId"
_TASKED = frozenset({"tools/call", "tasks/get", "tasks/update", "tasks/cancel"})
TOOLS = [
    {"name": "work", "inputSchema": {"type": "object"}},
    {"name": "ask", "inputSchema": {"type": "object"}},
]

_ids = itertools.count(1)
_stats: dict[str, Any] = {"connections": 0, "requests": 0, "methods": {}, "missing_headers": {}}
_completed_at: dict[str, float] = {}
_listens: set[_Listen] = set()


class _Task:
    __slots__ = (
        "answers", "asked", "ends", "interval", "keys", "polls", "rounds", "seen", "status"
    )  # fmt: skip

    def __init__(self, polls: int, interval: int, rounds: int = 0, keys: int = 0) -> None:
        self.seen = 0  # tasks/get answered
        self.polls = polls  # completed from this many polls on (0: never)
        self.ends = 0.0  # completed from this time.monotonic() on (0: not a timed task)
        self.interval = interval
        self.rounds, self.keys = rounds, keys
        self.asked = 0  # the round being asked (an ask task)
        self.answers: dict[str, Any] = {}
        self.status = "input_required" if rounds else "working"

    def outstanding(self) -> dict[str, Any]:
        names = (f"r{self.asked}-k{n}" for n in range(self.keys))
        return {name: ASK for name in names if name not in self.answers}


class _Listen:
    __slots__ = ("subscription", "task_ids", "writer")

    def __init__(self, writer: asyncio.StreamWriter, subscription: object, ids: set[str]):
        self.writer, self.subscription, self.task_ids = writer, subscription, ids


_tasks: dict[str, _Task] = {}


def _snapshot(task_id: str, task: _Task) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": task_id,
        "status": task.status,
        "createdAt": CREATED,
        "lastUpdatedAt": CREATED,
        "ttlMs": 3_600_000,
        "pollIntervalMs": task.interval,
    }
    if task.status == "completed":
        text = json.dumps(task.answers) if task.rounds else "done"
        content = [{"type": "text", "text": text}]
        out["result"] = {"resultType": "complete", "content": content, "isError": False}
    elif task.status == "input_required":
        out["inputRequests"] = task.outstanding()
    return out


def _event(message: dict[str, Any]) -> bytes:
    event = b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"
    return f"{len(event):x}\r\n".encode() + event + b"\r\n"


def _complete(task_id: str) -> None:
    """The task completes now: recorded, and pushed on every listen that asked for it."""
    task = _tasks[task_id]
    if task.status in ("completed", "cancelled"):
        return
    task.status = "completed"
    _completed_at[task_id] = time.monotonic()
    for listen in list(_listens):
        if task_id not in listen.task_ids:
            continue
        if listen.writer.is_closing():
            _listens.discard(listen)
            continue
        params = {**_snapshot(task_id, task), "_meta": {META_SUBSCRIPTION: listen.subscription}}
        listen.writer.write(_event({"jsonrpc": "2.0", "method": "notifications/tasks",
                                    "params": params}))  # fmt: skip


class _Refused(Exception):
    def __init__(self, code: int, message: str, data: object = None, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status


def _check_wire(message: dict[str, Any], headers: dict[str, str]) -> None:
    """C1, C3, C57, C58: a request that does not carry the generation's wire is refused."""
    method = message.get("method")
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str):
        raise _Refused(-32602, "params._meta lacks io.modelcontextprotocol/protocolVersion")
    capabilities = meta.get(META_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise _Refused(-32602, "params._meta lacks io.modelcontextprotocol/clientCapabilities")
    expected = {"mcp-protocol-version": meta[META_VERSION], "mcp-method": method}
    key = _NAMED.get(str(method))
    if key is not None:
        expected["mcp-name"] = params.get(key)  # type: ignore[union-attr]
    for header, value in expected.items():
        sent = headers.get(header)
        if sent is None:  # counted, not refused: a peer's gap is reported, not measured away
            missing = _stats["missing_headers"]
            label = f"{method} {header}"
            missing[label] = missing.get(label, 0) + 1
        elif sent != value:
            raise _Refused(-32020, f"{method}: the {header} header does not match the body")
    if method in _TASKED or method == "subscriptions/listen":
        extensions = capabilities.get("extensions")
        if not isinstance(extensions, dict) or EXTENSION not in extensions:
            data = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
            raise _Refused(-32021, "Missing required client capability", data)


def _known(params: dict[str, Any]) -> tuple[str, _Task]:
    task_id = str(params.get("taskId"))
    task = _tasks.get(task_id)
    if task is None and task_id.startswith("seeded-"):
        task = _tasks[task_id] = _Task(0, int(task_id.split("-")[1]))
    if task is None:
        raise _Refused(-32602, "Failed to retrieve task: Task not found", status=200)
    return task_id, task


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        return {
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "0"}},
        }
    if method == "tools/list":
        return {"tools": TOOLS, "ttlMs": 0, "cacheScope": "public"}
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        interval = int(arguments.get("interval", 1000))
        if params.get("name") == "ask":
            rounds = int(arguments.get("rounds", 2))
            task = _Task(0, interval, rounds, int(arguments.get("keys", 1)))
        else:
            task = _Task(int(arguments.get("polls", 0)), interval)
            if "after" in arguments:
                task.ends = time.monotonic() + float(arguments["after"]) / 1000
        task_id = f"task-{next(_ids)}"
        _tasks[task_id] = task
        base = _snapshot(task_id, task)
        base.pop("inputRequests", None)  # a CreateTaskResult is a base Task (E 3.3)
        return {**base, "resultType": "task"}
    if method == "tasks/get":
        task_id, task = _known(params)
        task.seen += 1
        if task.polls and task.seen >= task.polls:
            _complete(task_id)
        elif task.ends and task.status == "working" and time.monotonic() >= task.ends:
            _complete(task_id)
            _completed_at[task_id] = task.ends  # when it ended, not when it was first seen
        return _snapshot(task_id, task)
    if method == "tasks/update":
        task_id, task = _known(params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise _Refused(-32602, "tasks/update needs inputResponses", status=200)
        outstanding = task.outstanding()
        for key, value in responses.items():
            if key not in outstanding:
                raise _Refused(-32602, f"no outstanding inputRequest {key!r}", status=200)
            task.answers[key] = value
        if task.status == "input_required" and not task.outstanding():
            task.asked += 1
            if task.asked >= task.rounds:
                _complete(task_id)
        return {}
    if method == "tasks/cancel":
        _, task = _known(params)
        if task.status not in ("completed", "cancelled"):
            task.status = "cancelled"
        return {}
    raise _Refused(-32601, f"Method not found: {method}", status=404)


def _response(status: str, body: bytes, kind: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def _listen(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, message: dict[str, Any]
) -> None:
    """``subscriptions/listen``: the acknowledgement, then pushes until the client closes."""
    wanted = ((message.get("params") or {}).get("notifications") or {}).get("taskIds") or []
    ids = {str(i) for i in wanted if str(i) in _tasks}
    listen = _Listen(writer, message["id"], ids)
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {META_SUBSCRIPTION: message["id"]}, "notifications": {
            "taskIds": sorted(ids)}},
    }  # fmt: skip
    writer.write(_event(ack))
    _listens.add(listen)
    try:
        for task_id in ids:  # already ended: pushed at once
            if _tasks[task_id].status == "completed":
                params = {**_snapshot(task_id, _tasks[task_id])}
                params["_meta"] = {META_SUBSCRIPTION: message["id"]}
                writer.write(_event({"jsonrpc": "2.0", "method": "notifications/tasks",
                                     "params": params}))  # fmt: skip
        await writer.drain()
        await reader.read()  # held open until the client closes it
    finally:
        _listens.discard(listen)


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    _stats["connections"] += 1
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            verb, target, _ = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", 0))
            body = await reader.readexactly(length) if length else b""
            _stats["requests"] += 1
            if verb == "GET" and target == "/stats":
                stats = {**_stats, "cpu_s": time.process_time()}  # the server's own CPU so far
                writer.write(_response("200 OK", json.dumps(stats).encode()))
            elif verb == "POST" and target == "/reset":
                _stats.update(connections=0, requests=0, methods={}, missing_headers={})
                _completed_at.clear()
                writer.write(_response("200 OK", b"{}"))
            elif verb == "POST" and target == "/schedule":
                loop = asyncio.get_running_loop()
                for task_id, delay_ms in json.loads(body).items():
                    loop.call_later(delay_ms / 1000, _complete, task_id)
                writer.write(_response("200 OK", b"{}"))
            elif verb == "GET" and target == "/completions":
                writer.write(_response("200 OK", json.dumps(_completed_at).encode()))
            elif verb != "POST":
                writer.write(_response("405 Method Not Allowed", b""))  # E C56: no GET stream
            else:
                message = json.loads(body)
                method = str(message.get("method"))
                methods = _stats["methods"]
                methods[method] = methods.get(method, 0) + 1
                if "id" not in message:
                    writer.write(_response("202 Accepted", b""))
                    await writer.drain()
                    continue
                try:
                    _check_wire(message, headers)
                    if method == "subscriptions/listen":
                        await _listen(reader, writer, message)
                        return
                    result = _answer(method, message.get("params") or {})
                    result.setdefault("resultType", "complete")
                    answer: dict[str, Any] = {"result": result}
                    status = "200 OK"
                except _Refused as refused:
                    error: dict[str, Any] = {"code": refused.code, "message": refused.message}
                    if refused.data is not None:
                        error["data"] = refused.data
                    answer = {"error": error}
                    status = {200: "200 OK", 400: "400 Bad Request", 404: "404 Not Found"}[
                        refused.status
                    ]
                out = {"jsonrpc": "2.0", "id": message["id"], **answer}
                writer.write(_response(status, json.dumps(out).encode()))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


if __name__ == "__main__":
    from server import main  # beside this script: the 2025-11-25 bench server's loop

    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0, _serve))
