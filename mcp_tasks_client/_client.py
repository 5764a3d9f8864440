"""The async facade: one connection to one server, driven by the caller.

Theory of operation. Entering :class:`Client` enters its transport, starts one reader task in a
task group the client owns, and performs the handshake the caller configured (L:40-147). The
reader feeds every incoming message to the sans-I/O :class:`RPCConnection` and acts on the event
it returns: a response wakes the one caller waiting for it; a server->client request goes to the
handler the caller registered for its method (or is answered with a JSON-RPC error saying no
handler was registered: the library never answers on the caller's behalf, except ``ping``, which
the spec requires every party to answer); a notification goes to the registered callbacks.

If the connection breaks (the child process exits, the server sends a response for an id never
used, stdout carries something that is not JSON-RPC), every waiting request fails with that
error, and so does every later one: nothing hangs, nothing reconnects on its own.

Leaving the ``async with`` cancels everything the client started and closes the transport.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.abc
import attrs

from ._errors import (
    DecodeError,
    InvalidParams,
    MCPTasksError,
    ProtocolError,
    RequestTimeout,
    TransportClosed,
    UnsupportedProtocolVersion,
    UsageError,
)
from ._generation import Dialect, Generation, dialect_for
from ._protocol.connection import (
    ErrorReceived,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResultReceived,
    RPCConnection,
    UncorrelatedError,
)
from ._transports.base import Transport, TransportFault
from .builders import ToolCall
from .models import (
    CallToolResult,
    ClientCapabilities,
    Implementation,
    InitializeResult,
    JSONObject,
    JSONRPCNotification,
    JSONRPCRequest,
    ListToolsResult,
    RequestId,
    ServerCapabilities,
    Tool,
)

__all__ = ["Client", "NotificationHandler", "RequestHandler", "Timeouts"]

log = logging.getLogger("mcp_tasks_client")

T = TypeVar("T")

RequestHandler = Callable[[JSONRPCRequest], Awaitable[JSONObject]]
"""Answers one server->client request with a result object (raise RPCError to answer an error)."""

NotificationHandler = Callable[[JSONRPCNotification], None]
"""Receives one notification; runs in the reader, so it must not block."""


@attrs.frozen
class Timeouts:
    """Deadlines for requests, in seconds (C-13). Printing it shows every default.

    ``request`` applies to every request that is not given its own ``timeout=``;
    ``initialize`` to the handshake. When a request times out the client stops waiting, ignores
    a late answer (C-47) and, if ``notify_cancelled``, sends ``notifications/cancelled`` for it
    (C-13 SHOULD). A task is never cancelled by a timeout: that takes ``tasks/cancel``.
    """

    request: float = 30.0
    initialize: float = 30.0
    notify_cancelled: bool = True


@attrs.define
class _Waiter:
    method: str
    done: anyio.Event = attrs.field(factory=anyio.Event)
    result: JSONObject | None = None
    error: MCPTasksError | None = None


class Client:
    """An MCP client connection, opened with ``async with``.

    Nothing is declared, sent, polled or answered unless the caller configured it: the client
    capabilities are exactly ``capabilities``; the protocol version is the ``generation``'s.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        generation: Generation,
        client_info: Implementation,
        capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
        timeouts: Timeouts = Timeouts(),
    ) -> None:
        self.transport = transport
        self.generation = generation
        self.client_info = client_info
        self.capabilities = capabilities
        self.timeouts = timeouts
        self._dialect: Dialect = dialect_for(generation)
        self._connection = RPCConnection()
        self._waiters: dict[RequestId, _Waiter] = {}
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, list[NotificationHandler]] = {}
        self._initialize_result: InitializeResult | None = None
        self._broken: MCPTasksError | None = None
        self._entered = False
        self._task_group: anyio.abc.TaskGroup | None = None
        self.warnings: list[MCPTasksError] = []
        """Problems that ruined no request (an uncorrelated error, a side stream that ended)."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        if self._entered:
            raise UsageError("a Client can be entered only once")
        self._entered = True
        await self.transport.__aenter__()
        task_group = anyio.create_task_group()
        try:
            await task_group.__aenter__()
        except BaseException:
            await self.transport.__aexit__(None, None, None)
            raise
        self._task_group = task_group
        task_group.start_soon(self._read_loop)
        try:
            await self._handshake()
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        # The caller's exception is not passed into the task group: it would come back wrapped
        # in an ExceptionGroup. Only a failure of the client's own tasks surfaces from here.
        task_group = self._task_group
        assert task_group is not None
        task_group.cancel_scope.cancel()
        try:
            await task_group.__aexit__(None, None, None)
        finally:
            await self.transport.__aexit__(None, None, None)

    async def _handshake(self) -> None:
        requested = self._dialect.generation.protocol_version
        params = {
            "protocolVersion": requested,
            "capabilities": self._encode(self.capabilities),
            "clientInfo": self._encode(self.client_info),
        }
        try:
            raw = await self.request("initialize", params, timeout=self.timeouts.initialize)
        except InvalidParams as exc:  # some servers refuse with -32602 {supported}
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if isinstance(supported, list):
                raise UnsupportedProtocolVersion(requested, [str(v) for v in supported]) from exc
            raise
        result = self._decode(raw, InitializeResult)
        if result.protocol_version not in self._dialect.supported_versions:  # C-08
            raise UnsupportedProtocolVersion(requested, [result.protocol_version])
        self._initialize_result = result
        self.transport.negotiated(result.protocol_version)
        await self.notify("notifications/initialized")  # C-09

    # -- what the handshake agreed -----------------------------------------------------------

    @property
    def initialize_result(self) -> InitializeResult:
        if self._initialize_result is None:
            raise UsageError("the client is not connected; use `async with Client(...)`")
        return self._initialize_result

    @property
    def protocol_version(self) -> str:
        return self.initialize_result.protocol_version

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self.initialize_result.capabilities

    @property
    def server_info(self) -> Implementation:
        return self.initialize_result.server_info

    # -- registration ------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer server->client ``method`` requests with ``handler`` (one per method)."""
        if method in self._request_handlers:
            raise UsageError(f"a handler for {method!r} is already registered")
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Call ``handler`` for every ``method`` notification."""
        self._notification_handlers.setdefault(method, []).append(handler)

    # -- requests ----------------------------------------------------------------------------

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        """Send a request and wait for its raw result object.

        Raises RPCError (or a subclass) for a JSON-RPC error answer, RequestTimeout after
        ``timeout`` seconds (default: ``Timeouts.request``), a TransportError when the
        connection breaks.
        """
        if self._broken is not None:
            raise self._broken
        if self._task_group is None:
            raise UsageError("the client is not connected; use `async with Client(...)`")
        limit = self.timeouts.request if timeout is None else timeout
        message = self._connection.request(method, params)
        waiter = _Waiter(method)
        self._waiters[message.id] = waiter
        try:
            with anyio.fail_after(limit):
                await self.transport.send(message)
                await waiter.done.wait()
        except TimeoutError:
            await self._give_up(message.id, notify=self.timeouts.notify_cancelled)
            raise RequestTimeout(method, limit) from None
        except BaseException:
            if not waiter.done.is_set():
                with anyio.CancelScope(shield=True):
                    await self._give_up(message.id, notify=False)
            raise
        finally:
            self._waiters.pop(message.id, None)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

    async def _give_up(self, request_id: RequestId, *, notify: bool) -> None:
        self._connection.abandon(request_id)
        await self.transport.abandon(request_id)
        if notify and self._broken is None:
            try:
                await self.notify(
                    "notifications/cancelled",
                    {"requestId": request_id, "reason": "client timeout"},
                )
            except MCPTasksError as exc:
                self.warnings.append(exc)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification."""
        if self._broken is not None:
            raise self._broken
        await self.transport.send(self._connection.notify(method, params))

    async def list_tools_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListToolsResult:
        """One page of ``tools/list``; the cursor is opaque (C-23)."""
        params = {"cursor": cursor} if cursor is not None else None
        return self._decode(
            await self.request("tools/list", params, timeout=timeout), ListToolsResult
        )

    async def list_tools(self, *, timeout: float | None = None) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` page by page (``timeout`` applies per page)."""
        cursor: str | None = None
        while True:
            page = await self.list_tools_page(cursor, timeout=timeout)
            for tool in page.tools:
                yield tool
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def call_tool(self, call: ToolCall, *, timeout: float | None = None) -> CallToolResult:
        """A plain ``tools/call`` (never task-augmented); the tool's own errors are in
        ``is_error``, protocol errors raise RPCError."""
        raw = await self.request("tools/call", call.params(), timeout=timeout)
        return self._decode(raw, CallToolResult)

    async def open_listen_stream(self) -> None:
        """Open the transport's standalone server stream (HTTP GET, X:133), if it has one."""
        opener = getattr(self.transport, "open_listen_stream", None)
        if opener is None:
            raise UsageError(f"{type(self.transport).__name__} has no listen stream")
        await opener()

    # -- codec -------------------------------------------------------------------------------

    def _decode(self, raw: Any, cls: type[T]) -> T:
        try:
            return self._dialect.converter.decode(raw, cls)
        except DecodeError as exc:
            raise exc.under("$.result") from None

    def _encode(self, value: Any) -> Any:
        return self._dialect.converter.encode(value)

    # -- the reader --------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while True:
            try:
                item = await self.transport.receive()
            except TransportClosed as exc:
                self._break(exc)
                return
            if isinstance(item, TransportFault):
                self._on_fault(item)
                if item.request_id is None and item.fatal:
                    return
                continue
            try:
                event = self._connection.receive(item)
            except ProtocolError as exc:
                self._break(exc)
                return
            if isinstance(event, (ResultReceived, ErrorReceived)):
                waiter = self._waiters.get(event.request_id)
                if waiter is not None:
                    if isinstance(event, ResultReceived):
                        waiter.result = event.result
                    else:
                        waiter.error = event.error
                    waiter.done.set()
            elif isinstance(event, RequestReceived):
                assert self._task_group is not None
                self._task_group.start_soon(self._answer, event.request)
            elif isinstance(event, NotificationReceived):
                self._dispatch_notification(event.notification)
            elif isinstance(event, UncorrelatedError):
                self.warnings.append(event.error)
            elif isinstance(event, LateResponse):
                log.debug("ignored late answer to %s (id %r)", event.method, event.request_id)

    def _on_fault(self, fault: TransportFault) -> None:
        if fault.request_id is None:
            if fault.fatal:
                self._break(fault.error)
            else:
                self.warnings.append(fault.error)
            return
        self._connection.abandon(fault.request_id)
        waiter = self._waiters.get(fault.request_id)
        if waiter is not None and not waiter.done.is_set():
            waiter.error = fault.error
            waiter.done.set()

    def _break(self, error: MCPTasksError) -> None:
        if self._broken is None:
            self._broken = error
        self._connection.fail_pending()
        for waiter in self._waiters.values():
            if not waiter.done.is_set():
                waiter.error = error
                waiter.done.set()

    def _dispatch_notification(self, notification: JSONRPCNotification) -> None:
        handlers = self._notification_handlers.get(notification.method)
        if not handlers:
            log.debug("no handler for notification %s", notification.method)
            return
        for handler in handlers:
            handler(notification)

    async def _answer(self, request: JSONRPCRequest) -> None:
        from ._errors import RPCError

        handler = self._request_handlers.get(request.method)
        if request.method == "ping" and handler is None:
            reply: Any = self._connection.respond(request.id, {})  # every party answers ping
        elif handler is None:
            reply = self._connection.respond_error(
                request.id, -32601, f"no handler registered for {request.method}"
            )
        else:
            try:
                reply = self._connection.respond(request.id, await handler(request))
            except RPCError as exc:
                reply = self._connection.respond_error(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:  # a handler bug must still answer the server
                log.exception("handler for %s raised", request.method)
                reply = self._connection.respond_error(
                    request.id, -32603, f"client handler failed: {type(exc).__name__}"
                )
        try:
            await self.transport.send(reply)
        except MCPTasksError as exc:
            self.warnings.append(exc)
