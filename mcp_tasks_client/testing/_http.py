"""A fault-injecting MCP server over real HTTP/1.1 on 127.0.0.1, scripted per test.

A polite server tests nothing of what a client does with an impolite one. This one listens on a
free loopback port (plain or TLS), parses each request with h11, answers ``initialize`` /
notifications / responses / ``DELETE`` politely unless the test says otherwise, and hands every
other request to the test's ``on_request`` coroutine, which writes whatever bytes it likes: a
body that never ends, an SSE line without a newline, a stall, a redirect, a 429. Every response
closes its connection (``Connection: close``), so a body without a length ends when the handler
returns.

``bytes_sent`` counts what the server wrote: a test bounds what the client could have
buffered by it, without timing anything.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import attrs
import h11
from anyio.streams.tls import TLSListener

__all__ = [
    "HOSTILE_INIT_RESULT",
    "Conn",
    "Handler",
    "HostileHTTPServer",
    "Received",
    "sse_event",
]

HOSTILE_INIT_RESULT: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {
        "tools": {},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    },
    "serverInfo": {"name": "hostile", "version": "0"},
}


@attrs.frozen
class Received:
    """One HTTP request as the server read it."""

    http_method: str
    target: str
    headers: dict[str, str]
    body: bytes
    at: float = attrs.field(default=0.0, eq=False)
    """When the server had read it whole (``anyio.current_time()``, the test's own clock): a
    test checks the pace of a client's requests on this record, never on its own timers."""

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def rpc_method(self) -> str | None:
        body = self.json
        return body.get("method") if isinstance(body, dict) else None

    @property
    def rpc_id(self) -> Any:
        body = self.json
        return body.get("id") if isinstance(body, dict) else None

    @property
    def params(self) -> dict[str, Any]:
        body = self.json
        params = body.get("params") if isinstance(body, dict) else None
        return params if isinstance(params, dict) else {}


def sse_event(data: Any = None, *, event_id: str | None = None, retry: str | None = None) -> bytes:
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    if data is not None:
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
    return ("\n".join(lines) + "\n\n").encode()


class Conn:
    """The raw socket of one request: write a status line, headers, and any bytes at all."""

    def __init__(self, stream: anyio.abc.ByteStream, server: HostileHTTPServer) -> None:
        self._stream = stream
        self._server = server

    async def write(self, data: bytes) -> None:
        """Send raw bytes to the client. Deadline: none (a test's own scope bounds it). Cancelled:
        a part of ``data`` may have been sent."""
        self._server.bytes_sent += len(data)
        await self._stream.send(data)

    async def head(self, status: int, headers: dict[str, str] | None = None) -> None:
        """Send a status line and headers. Deadline: none (the test's scope). Cancelled: a part may
        have been sent."""
        lines = [f"HTTP/1.1 {status} X"]
        for name, value in {"Connection": "close", **(headers or {})}.items():
            lines.append(f"{name}: {value}")
        await self.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def json(
        self, payload: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        """Send a JSON body with its head. Deadline: none (the test's scope). Cancelled: a part may
        have been sent."""
        body = json.dumps(payload).encode()
        length = str(len(body))
        await self.head(
            status,
            {"Content-Type": "application/json", "Content-Length": length, **(headers or {})},
        )
        await self.write(body)

    async def result(self, request: Received, result: Any) -> None:
        """Answer ``request`` with a JSON-RPC result. Deadline: none (the test's scope). Cancelled:
        a part may have been sent."""
        await self.json({"jsonrpc": "2.0", "id": request.rpc_id, "result": result})

    async def error(self, request: Received, code: int, message: str) -> None:
        """Answer ``request`` with a JSON-RPC error. Deadline: none (the test's scope). Cancelled:
        a part may have been sent."""
        payload = {
            "jsonrpc": "2.0",
            "id": request.rpc_id,
            "error": {"code": code, "message": message},
        }
        await self.json(payload)

    async def start_sse(self) -> None:
        """Start an SSE response. Deadline: none (the test's scope). Cancelled: a part may have
        been sent."""
        await self.head(200, {"Content-Type": "text/event-stream"})

    async def client_closed(self) -> None:
        """Return once the client closed its end (after its request it sends nothing more).
        Deadline: none (the test's scope). Cancelled: stops waiting.
        """
        try:
            while True:
                await self._stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return

    async def endless(self, chunk: bytes, *, limit: int = 256 * 1024 * 1024) -> None:
        """Write ``chunk`` again and again (the client's limit should stop it first).
        Deadline: none but ``limit`` bytes (the test's scope). Cancelled: stops writing.
        """
        sent = 0
        while sent < limit:
            await self.write(chunk)
            sent += len(chunk)


Handler = Callable[[Received, Conn], Awaitable[None]]


async def _accept(request: Received, conn: Conn) -> None:
    await conn.head(202, {"Content-Length": "0"})


class HostileHTTPServer:
    """``async with HostileHTTPServer(on_request) as server: server.url``.

    ``on_initialize``, ``on_notification``, ``on_response``, ``on_get``, ``on_delete`` override
    the polite defaults. ``received`` lists every request, in arrival order.
    """

    def __init__(
        self,
        on_request: Handler | None = None,
        *,
        on_initialize: Handler | None = None,
        on_notification: Handler | None = None,
        on_response: Handler | None = None,
        on_get: Handler | None = None,
        on_delete: Handler | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.on_request = on_request
        self.on_initialize = on_initialize
        self.on_notification = on_notification or _accept
        self.on_response = on_response or _accept
        self.on_get = on_get
        self.on_delete = on_delete
        self.tls = tls
        self.received: list[Received] = []
        self.bytes_sent = 0
        self.port = 0
        self._group: anyio.abc.TaskGroup | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}/mcp"

    def rpc_methods(self) -> list[str | None]:
        return [r.rpc_method for r in self.received if r.http_method == "POST"]

    async def __aenter__(self) -> HostileHTTPServer:
        """Listen on 127.0.0.1 (a free port). Deadline: none. Cancelled: nothing is listening."""
        listener: anyio.abc.Listener[Any] = await anyio.create_tcp_listener(
            local_host="127.0.0.1", local_port=0
        )
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        if self.tls is not None:
            listener = TLSListener(listener, self.tls, standard_compatible=False)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._serve, listener)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop listening and end every connection. Deadline: none (nothing waits on the
        client). Cancelled: closed all the same."""
        assert self._group is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)

    async def _serve(self, listener: anyio.abc.Listener[Any]) -> None:
        async with listener:
            await listener.serve(self._connection)

    async def _connection(self, stream: anyio.abc.ByteStream) -> None:
        async with stream:
            try:
                request = await _read_request(stream)
            except (anyio.EndOfStream, anyio.BrokenResourceError, h11.RemoteProtocolError):
                return
            except Exception:  # a TLS handshake the client refused, a reset connection
                return
            self.received.append(request)
            conn = Conn(stream, self)
            try:
                await self._dispatch(request, conn)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the client went away: that is what a limit or a deadline does

    async def _dispatch(self, request: Received, conn: Conn) -> None:
        if request.http_method == "DELETE":
            if self.on_delete is None:
                await conn.head(200, {"Content-Length": "0"})
            else:
                await self.on_delete(request, conn)
            return
        if request.http_method == "GET":
            if self.on_get is None:
                await conn.head(405, {"Content-Length": "0"})
            else:
                await self.on_get(request, conn)
            return
        body = request.json
        if isinstance(body, dict) and body.get("method") == "initialize":
            if self.on_initialize is not None:
                await self.on_initialize(request, conn)
                return
            payload = {"jsonrpc": "2.0", "id": body["id"], "result": HOSTILE_INIT_RESULT}
            await conn.json(payload, headers={"Mcp-Session-Id": "hostile-1"})
            return
        if isinstance(body, dict) and "method" in body and "id" not in body:
            await self.on_notification(request, conn)
            return
        if isinstance(body, dict) and "method" not in body:
            await self.on_response(request, conn)
            return
        if self.on_request is None:
            await conn.error(request, -32601, "not scripted")
            return
        await self.on_request(request, conn)


async def _read_request(stream: anyio.abc.ByteStream) -> Received:
    parser = h11.Connection(h11.SERVER)
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = parser.next_event()
        if event is h11.NEED_DATA:
            parser.receive_data(await stream.receive())
            continue
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            headers = {k.decode().lower(): v.decode("latin-1") for k, v in head.headers}
            return Received(
                head.method.decode(),
                head.target.decode(),
                headers,
                bytes(body),
                at=anyio.current_time(),
            )
        elif isinstance(event, h11.ConnectionClosed):
            raise anyio.EndOfStream
