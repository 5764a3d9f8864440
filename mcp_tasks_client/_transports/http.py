"""Streamable HTTP for 2025-11-25 (X:56-219), on httpx and httpx-sse.

Every client message is its own POST (X:88). A request's answer comes back as one JSON body or
as an SSE stream that may carry server->client requests and notifications before the response
(X:101-131); whatever arrives is handed to the client in arrival order, and the client routes it
by id and method, never by the stream it came on (X:158, A-23).

What this transport does only when the caller asked:

- resume a broken response stream with ``GET`` + ``Last-Event-ID`` after the server's ``retry``
  (X:167-189): pass ``resumption=StreamResumption(...)``; without it a broken stream fails its
  request with :class:`~mcp_tasks_client.StreamInterrupted` naming the last event id;
- open the standalone GET stream (X:133-154): call :meth:`HttpTransport.open_listen_stream`.

What it always does, because the spec makes it part of talking at all: capture
``Mcp-Session-Id`` from the initialize response and echo it (X:194-210), send
``MCP-Protocol-Version`` after the handshake (X:263, A-19), and DELETE the session on close
(X:216; ``delete_session_on_close=False`` to keep it). A 404 on a request carrying a session id
is :class:`~mcp_tasks_client.SessionExpired`; there is no automatic re-initialise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import attrs
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from httpx_sse import EventSource

from .._errors import (
    DecodeError,
    GetStreamUnavailable,
    HTTPStatusError,
    MCPTasksError,
    ProtocolError,
    SessionExpired,
    StreamInterrupted,
    TransportClosed,
    TransportError,
    UsageError,
)
from .._wire.jsonrpc import parse_message, serialize_message
from ..models import JSONRPCError, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse, RequestId
from .base import Incoming, Transport, TransportFault

__all__ = ["HttpTransport", "StreamResumption"]

_JSON = "application/json"
_DRAIN_SECONDS = 1.0
_SSE = "text/event-stream"


@attrs.frozen
class StreamResumption:
    """Opt-in: how to resume a broken SSE stream (X:167-189).

    ``max_attempts`` reconnects per stream; the wait before each is the server's last ``retry``
    (which the client MUST honour, X:3.1) or ``default_retry`` seconds when it sent none.
    """

    max_attempts: int = 3
    default_retry: float = 1.0


@attrs.define
class _StreamState:
    last_event_id: str | None = None
    retry: float | None = None
    answered: bool = False


class HttpTransport(Transport):
    """Streamable HTTP to one MCP endpoint URL."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        max_connections: int = 100,
        resumption: StreamResumption | None = None,
        delete_session_on_close: bool = True,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.resumption = resumption
        self.delete_session_on_close = delete_session_on_close
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._owns_client = http_client is None
        # Pool sized to the concurrency (DESIGN.md: the default 20 idle connections churned
        # ~1,100 TCP connections for 100 in flight). Reads have no timeout: SSE streams and a
        # blocking tasks/result legitimately stay open; request deadlines belong to the client.
        self._client = http_client or httpx.AsyncClient(
            timeout=httpx.Timeout(connect=connect_timeout, read=None, write=30.0, pool=None),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
        )
        self._task_group: anyio.abc.TaskGroup | None = None
        self._scopes: dict[RequestId, anyio.CancelScope] = {}
        self._incoming_send: MemoryObjectSendStream[Incoming]
        self._incoming_receive: MemoryObjectReceiveStream[Incoming]
        self._incoming_send, self._incoming_receive = anyio.create_memory_object_stream[Incoming](
            math.inf
        )
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> HttpTransport:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        self._closed = True
        self._task_group.cancel_scope.cancel()
        try:
            await self._task_group.__aexit__(None, None, None)  # never wrap the caller's error
        finally:
            with anyio.CancelScope(shield=True):
                if self.delete_session_on_close and self.session_id is not None:
                    with anyio.move_on_after(5):
                        try:
                            await self._client.delete(self.url, headers=self._headers(None))
                        except httpx.HTTPError:
                            pass  # the server may be gone already; nothing to tell anyone
                if self._owns_client:
                    await self._client.aclose()
            self._incoming_send.close()
            self._incoming_receive.close()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    # -- sending -----------------------------------------------------------------------------

    async def send(self, message: JSONRPCMessage) -> None:
        if self._task_group is None or self._closed:
            raise TransportClosed("the HTTP transport is not open")
        if isinstance(message, JSONRPCRequest):
            scope = anyio.CancelScope()
            self._scopes[message.id] = scope
            self._task_group.start_soon(self._run_request, message, scope)
        else:
            await self._post_accepted(message)

    async def receive(self) -> Incoming:
        try:
            return await self._incoming_receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the HTTP transport is closed") from None

    async def abandon(self, request_id: RequestId) -> None:
        scope = self._scopes.pop(request_id, None)
        if scope is not None:
            scope.cancel()

    async def open_listen_stream(self) -> None:
        """Open the standalone GET stream (X:133); raises GetStreamUnavailable on HTTP 405.

        Server requests and notifications that arrive there come out of :meth:`receive` like any
        other. The stream lives until the transport closes.
        """
        if self._task_group is None or self._closed:
            raise TransportClosed("the HTTP transport is not open")
        if self.session_id is None and self.protocol_version is None:
            raise UsageError("open the GET stream after the handshake")
        await self._task_group.start(self._run_listen_stream)

    # -- internals ---------------------------------------------------------------------------

    def _headers(self, accept: str | None) -> dict[str, str]:
        headers = dict(self.headers)
        if accept is not None:
            headers["Accept"] = accept
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version  # X:263, not on initialize
        return headers

    async def _deliver(self, item: Incoming) -> None:
        await self._incoming_send.send(item)

    async def _fault(self, request_id: RequestId | None, error: MCPTasksError) -> None:
        await self._deliver(TransportFault(request_id, error))

    async def _post_accepted(self, message: JSONRPCMessage) -> None:
        """POST a notification or a response: the server answers 202 (X:95)."""
        headers = self._headers(f"{_JSON}, {_SSE}")
        headers["Content-Type"] = _JSON
        try:
            response = await self._client.post(
                self.url, content=serialize_message(message), headers=headers
            )
        except httpx.HTTPError as exc:
            raise TransportError(f"POST failed: {exc!r}") from exc
        if response.status_code == 404 and self.session_id is not None:
            raise SessionExpired(self.session_id)
        if response.status_code >= 400:
            raise HTTPStatusError(response.status_code, response.text)

    async def _run_request(self, message: JSONRPCRequest, scope: anyio.CancelScope) -> None:
        with scope:
            try:
                await self._post_request(message)
            except httpx.HTTPError as exc:
                await self._fault(message.id, TransportError(f"{message.method} failed: {exc!r}"))
            except MCPTasksError as exc:
                await self._fault(message.id, exc)
        self._scopes.pop(message.id, None)

    async def _post_request(self, message: JSONRPCRequest) -> None:
        headers = self._headers(f"{_JSON}, {_SSE}")  # X:92 MUST
        headers["Content-Type"] = _JSON
        body = serialize_message(message)
        async with self._client.stream("POST", self.url, content=body, headers=headers) as response:
            if message.method == "initialize":
                self._capture_session(response)
            status = response.status_code
            if status == 404 and self.session_id is not None and message.method != "initialize":
                raise SessionExpired(self.session_id)
            if status >= 400:
                await self._deliver_error_body(message, response)
                return
            if status == 202:
                raise ProtocolError(f"server answered the request {message.method} with 202")
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type == _JSON:
                await self._deliver_json(message, await response.aread())
                return
            if content_type != _SSE:
                raise ProtocolError(
                    f"answer to {message.method} has content type {content_type!r} (X:101)"
                )
            state = _StreamState()
            await self._consume_sse(message, response, state)
        if not state.answered:
            await self._resume(message, state)

    def _capture_session(self, response: httpx.Response) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id is None:
            return
        if not session_id or any(not 0x21 <= ord(ch) <= 0x7E for ch in session_id):
            raise ProtocolError(f"session id {session_id!r} is not visible ASCII (X:200)")
        self.session_id = session_id

    async def _deliver_json(self, message: JSONRPCRequest, body: bytes) -> None:
        await self._deliver(_for_request(message, parse_message(body)))

    async def _deliver_error_body(self, message: JSONRPCRequest, response: httpx.Response) -> None:
        """An HTTP error: deliver the JSON-RPC error it carries, or an HTTPStatusError."""
        body = await response.aread()
        try:
            incoming = parse_message(body)
        except DecodeError:
            incoming = None
        if isinstance(incoming, JSONRPCError) and incoming.id in (None, message.id):
            await self._deliver(_for_request(message, incoming))
            return
        raise HTTPStatusError(
            response.status_code, body.decode("utf-8", "replace"), method=message.method
        )

    async def _consume_sse(
        self, message: JSONRPCRequest | None, response: httpx.Response, state: _StreamState
    ) -> None:
        """Read one SSE stream to its end, delivering every message in it.

        After the response arrives the stream SHOULD end (X:125): it is read to its end, for
        at most ``_DRAIN_SECONDS``, so the connection goes back to the pool instead of being
        closed half-read (a new TCP connection per request costs more than the request).
        """
        request_id = message.id if message is not None else None
        events = EventSource(response).aiter_sse()
        try:
            while True:
                if state.answered:
                    with anyio.move_on_after(_DRAIN_SECONDS):
                        async for _ in events:
                            pass  # anything after the response belongs to no one (X:125)
                    return
                try:
                    event = await events.__anext__()
                except StopAsyncIteration:
                    return
                if event.id:
                    state.last_event_id = event.id
                if event.retry is not None:
                    state.retry = event.retry / 1000
                if not event.data:
                    continue  # a priming event (X:106): an id, nothing to parse
                try:
                    incoming = parse_message(event.data)
                except DecodeError as exc:
                    await self._fault(request_id, exc)
                    continue
                if message is not None:
                    incoming = _for_request(message, incoming)
                    if isinstance(incoming, (JSONRPCResponse, JSONRPCError)) and (
                        incoming.id == message.id
                    ):
                        state.answered = True
                await self._deliver(incoming)
        except httpx.HTTPError:
            return  # a dropped connection; the caller decides about resuming
        finally:
            with anyio.CancelScope(shield=True):
                await events.aclose()

    async def _resume(self, message: JSONRPCRequest, state: _StreamState) -> None:
        policy = self.resumption
        attempts = 0
        while not state.answered:
            if policy is None or state.last_event_id is None or attempts >= policy.max_attempts:
                raise StreamInterrupted(state.last_event_id, method=message.method)
            attempts += 1
            await anyio.sleep(state.retry if state.retry is not None else policy.default_retry)
            headers = self._headers(_SSE)
            headers["Last-Event-ID"] = state.last_event_id
            try:
                async with self._client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 404 and self.session_id is not None:
                        raise SessionExpired(self.session_id)
                    if response.status_code >= 400:
                        continue  # this attempt failed; the next one may not
                    await self._consume_sse(message, response, state)
            except httpx.HTTPError:
                continue

    async def _run_listen_stream(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        state = _StreamState()
        started = False
        attempts = 0
        while True:
            headers = self._headers(_SSE)
            if state.last_event_id is not None:
                headers["Last-Event-ID"] = state.last_event_id
            try:
                async with self._client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code == 405:
                        raise GetStreamUnavailable("the server offers no GET stream (HTTP 405)")
                    if response.status_code == 404 and self.session_id is not None:
                        raise SessionExpired(self.session_id)
                    if response.status_code >= 400:
                        raise HTTPStatusError(
                            response.status_code,
                            (await response.aread()).decode("utf-8", "replace"),
                        )
                    if not started:
                        started = True
                        task_status.started()
                    await self._consume_sse(None, response, state)
            except httpx.HTTPError as exc:
                if not started:
                    raise TransportError(f"GET stream failed: {exc!r}") from exc
            except MCPTasksError as exc:
                if not started:
                    raise
                await self._deliver(TransportFault(None, exc, fatal=False))
                return
            # The stream ended. Reconnect only when the caller asked for resumption.
            policy = self.resumption
            if policy is None or attempts >= policy.max_attempts:
                ended = StreamInterrupted(state.last_event_id, method="GET")
                await self._deliver(TransportFault(None, ended, fatal=False))
                return
            attempts += 1
            await anyio.sleep(state.retry if state.retry is not None else policy.default_retry)


def _for_request(message: JSONRPCRequest, incoming: Any) -> Any:
    """An error with a null id on a request's own stream is that request's answer."""
    if isinstance(incoming, JSONRPCError) and incoming.id is None:
        return JSONRPCError(message.id, incoming.error)
    return incoming
