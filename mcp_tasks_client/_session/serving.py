"""The session's answers to the server's requests, within their bounds.

Job: serving server->client requests. It holds the handler registered for each method (one
per method; ``held`` ones apart), starts one task per request within its bound, answers a
request no handler serves with a JSON-RPC error (``ping`` excepted: every party answers it),
refuses a request past its bound or with an oversized id at once, and sends every answer
bounded by ``Timeouts.request``.

May import: ``_session.terms``, ``_session.request_spans``, ``_io.base``, ``_sansio``,
``models``, ``_exceptions``, ``_limits``, ``observability``.

Theory of operation. The session's reader hands each request it reads to
:meth:`ServerRequests.serve` with the session's task group. A request whose handler was
registered ``held`` (it waits by design: the receiver's blocking ``tasks/result``) counts
against ``Limits.max_held_server_requests``, any other against ``Limits.max_server_requests``:
held requests never starve the others. Past its bound a request is refused from the reader,
which reads nothing more until the refusal is sent (back-pressure). A handler's answer, its
RPCError or its bug (-32603) always goes back to the server; a failure to send it is a
warning, never raised (it runs in the client's own tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from .. import observability as _obs
from .._exceptions import (
    LimitExceeded,
    MCPTasksError,
    RequestTimeout,
    RPCError,
    TransportError,
    UsageError,
)
from .._io.base import Transport
from .._limits import Limits
from .._sansio.connection import RPCConnection
from ..models import ErrorObject, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from .request_spans import RequestObserver
from .terms import RequestHandler, Timeouts

__all__ = ["ServerRequests"]

log = _obs.get_logger("client")


class ServerRequests:
    """The handlers of the server's requests and their bounds (see the module docstring)."""

    def __init__(
        self,
        connection: RPCConnection,
        transport: Transport,
        limits: Limits,
        timeouts: Timeouts,
        warn: Callable[[MCPTasksError], None],
        observer: RequestObserver,
    ) -> None:
        self._connection = connection
        self._transport = transport
        self._limits = limits
        self._timeouts = timeouts
        self._warn = warn
        self._observer = observer
        self._handlers: dict[str, RequestHandler] = {}
        self._held_methods: set[str] = set()
        self._serving = 0
        self._holding = 0

    def on_request(self, method: str, handler: RequestHandler, *, held: bool = False) -> None:
        """Answer server->client ``method`` requests with ``handler`` (one per method).
        ``held``: the handler may wait by design (a blocking ``tasks/result``); such requests
        count against ``Limits.max_held_server_requests``, never ``max_server_requests``, so
        however many are held the server's other requests are still answered."""
        if method in self._handlers:
            raise UsageError(f"a handler for {method!r} is already registered")
        self._transport.check_serves(method)
        self._handlers[method] = handler
        if held:
            self._held_methods.add(method)

    async def serve(self, request: JSONRPCRequest, group: anyio.abc.TaskGroup) -> None:
        """Start the handler for one server->client request, within its bound: a request whose
        handler was registered ``held`` within ``Limits.max_held_server_requests``, any other
        within ``Limits.max_server_requests`` (the two never share: held requests cannot starve
        the others); beyond its bound the request is refused at once, from the reader (which
        reads nothing more until the refusal is sent: back-pressure)."""
        held = request.method in self._held_methods
        if held:
            busy, name, limit = (
                self._holding,
                "max_held_server_requests",
                self._limits.max_held_server_requests,
            )
        else:
            busy, name, limit = (
                self._serving,
                "max_server_requests",
                self._limits.max_server_requests,
            )
        if busy >= limit:
            what = "held" if held else "concurrent"
            reply = self._connection.respond_error(
                request.id, -32000, f"too many {what} requests (Limits.{name}={limit})"
            )
            await self._send_reply(reply)
            return
        if held:
            self._holding += 1
        else:
            self._serving += 1
        group.start_soon(self._answer, request, held)

    def id_too_long(self, request_id: RequestId) -> bool:
        return isinstance(request_id, str) and len(request_id) > self._limits.max_request_id_chars

    async def refuse_id(self, request: JSONRPCRequest) -> None:
        """A server->client request whose string id is past ``Limits.max_request_id_chars``:
        answered -32600 Invalid Request with ``id: null`` (JSON-RPC 2.0, 5: an id that could
        not be taken is answered as null), from the reader; the id is never stored."""
        limit = self._limits.max_request_id_chars
        self._warn(
            LimitExceeded(
                "max_request_id_chars", limit, f"the id of a {request.method[:100]} request"
            )
        )
        reply = JSONRPCError(
            None,
            ErrorObject(
                -32600,
                f"request id longer than {limit} characters (Limits.max_request_id_chars={limit})",
            ),
        )
        await self._send_reply(reply)

    async def reply(self, reply: JSONRPCResponse, *, timeout: float | None = None) -> None:
        """Send the answer to a server request this session did not serve itself (one queued
        in a shared journal by another process, for the same session). Raises RequestTimeout
        after ``timeout`` (default ``Timeouts.request``) and the transport's errors."""
        bound = self._timeouts.request if timeout is None else timeout
        try:
            with anyio.fail_after(bound):
                await self._transport.send(reply)
        except TimeoutError:
            raise RequestTimeout("an answer to the server", bound) from None

    async def _send_reply(self, reply: JSONRPCResponse | JSONRPCError) -> None:
        """Send an answer to the server, bounded; a failure is a warning, never raised (it runs
        in the client's own tasks: a foreign exception would escape ``async with Client``)."""
        try:
            with anyio.fail_after(self._timeouts.request):
                await self._transport.send(reply)
        except TimeoutError:
            self._warn(RequestTimeout("an answer to the server", self._timeouts.request))
        except MCPTasksError as exc:
            self._warn(exc)
        except Exception as exc:  # a result the wire cannot carry (a lone surrogate ...)
            log.exception("the answer to server request %r could not be sent", reply.id)
            error = TransportError(
                f"the answer to server request {reply.id!r} could not be sent: "
                f"{type(exc).__name__}: {exc}"
            )
            error.__cause__ = exc
            self._warn(error)

    async def _answer(self, request: JSONRPCRequest, held: bool) -> None:
        try:
            await self._answer_one(request)
        finally:
            if held:
                self._holding -= 1
            else:
                self._serving -= 1

    async def _answer_one(self, request: JSONRPCRequest) -> None:
        handler = self._handlers.get(request.method)
        if request.method == "ping" and handler is None:
            reply: Any = self._connection.respond(request.id, {})  # every party answers ping
        elif handler is None:
            reply = self._connection.respond_error(
                request.id, -32601, f"no handler registered for {request.method}"
            )
        else:
            try:
                result = await self._observer.handled(handler, request)
                if result is None:
                    self._connection.drop(request.id)
                    return
                reply = self._connection.respond(request.id, result)
            except RPCError as exc:
                reply = self._connection.respond_error(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:  # a handler bug must still answer the server
                log.exception("handler for %s raised", request.method)
                reply = self._connection.respond_error(
                    request.id, -32603, f"client handler failed: {type(exc).__name__}"
                )
        await self._send_reply(reply)
