"""Streamable HTTP (X:56-219) on one of two HTTP engines: lean (the default) or httpx.

The engine is the HTTP client beneath (``_http_engine.py``: ``lean``, HTTP/1.1 of our own,
or ``httpx``, an ``httpx.AsyncClient``); this module is everything above one exchange, the
same on both; the SSE streams are read by its base ``SseStreams`` (``_http_sse.py``).

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
is :class:`~mcp_tasks_client.SessionExpired`; there is no automatic re-initialise. A session
kept by an earlier process is resumed only when the caller says so: ``session_id=`` here and
``Client(resume=...)`` (the initialize result that session agreed on), so no ``initialize`` is
sent; a server that forgot the session answers 404 and that is SessionExpired, never a silent
new session.

What a hostile server cannot do (SECURITY.md): make the client buffer more than
``Limits.max_message_bytes`` for one body, SSE line or event (``LimitExceeded``); replace bad
UTF-8 silently (``DecodeError``); redirect the session id or the caller's headers to another URL
(``RedirectRefused``: no redirect is ever followed); hide a 429/503's ``Retry-After``
(``ServerBusy``); or change the transport's timeouts through an injected client. Every
exception of the HTTP stack is mapped in one place (``_error``, in ``_http_answers.py``, the
base that reads statuses and error bodies) to this library's tree; a TLS failure names its
cause (``TLSError``).
"""

from __future__ import annotations

import math
import os
import ssl
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .. import observability as _obs
from .._codec.messages import parse_answer, serialize_message
from .._exceptions import (
    HTTPStatusError,
    MCPTasksError,
    ProtocolError,
    TransportClosed,
    TransportError,
    UsageError,
)
from .._limits import Limits
from ..models import (
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    RequestId,
)
from . import _url
from ._deadlines import Cancellable, InlineDeadlines, loop_checkpoint
from ._h1_engine import LeanEngine
from ._http_answers import accepted_facts, body_text, exchange_facts
from ._http_engine import HttpEngine, InlineExchange, WriteTimeout
from ._http_sse import ListenOpening, SseStreams, StreamResumption, StreamState
from .base import (
    HeadersFor,
    HttpObserver,
    Incoming,
    Transport,
    TransportFault,
)

if TYPE_CHECKING:
    import httpx

log = _obs.get_logger("transport.http")

__all__ = ["HttpTransport", "StreamResumption"]

_JSON = "application/json"
_SSE = "text/event-stream"
_INCOMING_BUFFER = 4  # messages waiting for the client's reader: a full buffer holds streams


_Prepared = tuple[dict[str, str], bytes, Any]
"""An inline POST begun without a scope: its headers, body, and what the engine's quick POST
returned (None: nothing done; else the response, or connection, to go on with)."""


class HttpTransport(SseStreams, Transport):
    """Streamable HTTP to one MCP endpoint URL, on one of two HTTP engines.

    **Engines.** ``lean`` (the default) is HTTP/1.1 of this library's own: a few times less
    CPU per request than httpx's pool (benchmarks/RESULTS.md), plain HTTP and HTTPS (TLS
    verified by ``ssl_context``, the system's trust store when None). ``httpx`` runs every
    exchange through an ``httpx.AsyncClient``: yours (``http_client=``: its auth flow, proxies
    and mounts, HTTP/2, event hooks, TLS settings all apply), or one the transport makes
    (``engine="httpx"``: httpx's defaults, the environment's proxy settings honoured). With
    neither asked for, the default is lean except where lean would not do what httpx did
    before: a URL with credentials in it (httpx sends them as Basic auth) and a URL the
    environment's ``HTTP(S)_PROXY``/``ALL_PROXY`` covers (``NO_PROXY`` aside) go through httpx.
    ``engine="lean"`` is lean whatever the environment says. The engine in use is
    ``transport.engine`` (``"lean"`` or ``"httpx"``), shown by ``repr`` with why it was chosen,
    and logged (INFO, logger ``mcp_tasks_client.transport.http``) when the transport opens.

    ``headers`` are sent with every request, to this URL only: redirects are never followed
    (a 3xx is :class:`~mcp_tasks_client.RedirectRefused`), on either engine, whatever
    ``http_client`` the caller injects. The transport's own timeouts (``connect_timeout``,
    ``write_timeout``; no read timeout, because SSE streams and a blocking ``tasks/result``
    stay open legitimately and request deadlines belong to the Client) are set on every
    request, so an injected client's defaults do not change them. Sizes are bounded by the
    Client's ``Limits``.

    Requests that wait on the server by design (a 2025-11-25 ``tasks/result``, which blocks
    until the task ends and carries the task's questions; ``subscriptions/listen``; the GET
    stream and a stream's resumption) go through a pool of their own of
    ``max_held_connections``: however many of them are open, a poll, a cancel or the answer to
    a question never waits behind them for a connection. Past that many, the next held
    request waits for one of them to end (its questions arrive then). An injected
    ``http_client`` serves both: size its pool for the held requests and the others.

    **Throughput follows latency.** Polls per second are at most ``min(max_connections,
    PollPolicy.max_in_flight) / round trip``: size both to ``tasks / interval * latency``
    (docs/transports.md).

    Args:
        url: The MCP endpoint, ``http://`` or ``https://`` (anything else is a UsageError).
        headers: Sent with every request, to this URL only (an ``Authorization`` header...).
        engine: ``"lean"``, ``"httpx"``, or None (above: lean unless httpx is needed to
            keep what httpx did by default).
        http_client: An ``httpx.AsyncClient`` of your own (auth, proxies, mounts, HTTP/2,
            event hooks, TLS settings): the httpx engine; the transport does not close it.
            Redirects stay refused and the transport's timeouts are still set on each request.
        ssl_context: For ``https://`` without ``http_client``: the context to verify the
            server with (None: the system's default verification).
        connect_timeout: Seconds to establish a connection.
        write_timeout: Seconds to send a request body.
        max_connections: The most requests on the wire at once (ignored with
            ``http_client``); the default is ``PollPolicy.max_in_flight``'s (64): size it to
            yours.
        max_held_connections: The most held requests open at once (above; ignored with
            ``http_client``): one per 2025-11-25 task waiting for input, plus the GET stream.
        resumption: Opt-in resumption of a broken SSE stream (:class:`StreamResumption`);
            ``None``: a broken stream is StreamInterrupted.
        delete_session_on_close: Send ``DELETE`` for the session when the transport closes
            (2025-11-25). ``False`` keeps the session, to resume it later.
        session_id: A kept session to carry from the first request on (visible ASCII), with
            ``Client(..., resume=initialize_result)``; ``None``: the server assigns one.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        engine: Literal["lean", "httpx"] | None = None,
        http_client: httpx.AsyncClient | None = None,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 10.0,
        write_timeout: float = 30.0,
        max_connections: int = 64,
        max_held_connections: int = 64,
        resumption: StreamResumption | None = None,
        delete_session_on_close: bool = True,
        session_id: str | None = None,
    ) -> None:
        parsed = _checked(url, session_id, max_connections, max_held_connections)
        self.url = url
        self._shown = parsed.shown  # the URL without credentials or query (repr)
        self.headers = dict(headers or {})
        self.resumption: StreamResumption | None = resumption
        self.delete_session_on_close = delete_session_on_close
        self.session_id: str | None = session_id
        """The session in use: the one to resume, then the one the server assigned."""
        self.protocol_version: str | None = None
        self.limits = Limits()
        self._write_timeout = write_timeout
        self._engine: HttpEngine = _make_engine(
            url,
            parsed,
            engine,
            http_client,
            ssl_context,
            (connect_timeout, write_timeout, max_connections, max_held_connections),
        )
        self._task_group: anyio.abc.TaskGroup | None = None
        # What ends each running request: a background one's scope, an inline exchange's
        # InlineExchange (its scope, or its wait woken).
        self._scopes: dict[RequestId, Cancellable] = {}
        self._deadlines = InlineDeadlines(self._scopes)  # the inline exchanges' deadlines
        self._scope_type: Callable[[], anyio.CancelScope] = anyio.CancelScope
        self._checkpoint: Callable[[], Awaitable[None]] = anyio.lowlevel.checkpoint_if_cancelled
        self._incoming_send: MemoryObjectSendStream[Incoming]
        self._incoming_receive: MemoryObjectReceiveStream[Incoming]
        self._incoming_send, self._incoming_receive = anyio.create_memory_object_stream[Incoming](
            _INCOMING_BUFFER
        )
        self._closed = False
        # The client's direct path for notifications (take_notifications), and how many
        # delivered items the reader has not taken yet: a notification skips the memory
        # stream only when nothing is queued ahead of it.
        self._take: Callable[[JSONRPCNotification], bool] | None = None
        self._queued = 0
        self._sending = 0  # _deliver calls inside their send
        self._headers_for: HeadersFor | None = None
        self._http_observer: HttpObserver | None = None
        # A POST's headers, built once per (session id, protocol version, caller's headers):
        self._post_key: tuple[str | None, str | None] | None = None
        self._post_seen: dict[str, str] = {}
        self._post_headers: dict[str, str] = {}

    @property
    def engine(self) -> str:
        """The HTTP engine in use: ``"lean"`` or ``"httpx"`` (read-only; chosen at
        construction)."""
        return self._engine.name

    @property
    def connections_opened(self) -> int | None:
        """TCP connections opened so far (a reused one is not counted again) on the lean
        engine; None on httpx's, which does not count them."""
        return self._engine.connections_opened

    def __repr__(self) -> str:
        # The URL without credentials or query (either may hold a secret); never the headers.
        shown = self._shown
        return f"{type(self).__name__}({shown!r}, engine={self.engine!r}: {self._engine.why})"

    # -- lifecycle ---------------------------------------------------------------------------

    def apply_limits(self, limits: Limits) -> None:
        self.limits = limits

    async def __aenter__(self) -> HttpTransport:
        """Deadline: none (nothing is sent until the first request). Cancelled: the pools made are
        closed again. Logs the engine in use and why (INFO)."""
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._deadlines.watch)
        # The running loop's own CancelScope class: made directly, a request's scope skips
        # anyio.CancelScope's look-up of the loop (get_async_backend, sniffio) and its second
        # __init__. The same class anyio.CancelScope() returns, for this transport's loop.
        self._scope_type = type(anyio.CancelScope())
        self._checkpoint = loop_checkpoint()  # the same look-up skipped, for the write's check
        log.info("HTTP engine %s (%s)", self._engine.name, self._engine.why)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close every stream and pool, and end the session with DELETE when
        ``delete_session_on_close``. Deadline: the DELETE waits at most 5 s. Cancelled: the
        close still runs to its end, shielded."""
        assert self._task_group is not None
        self._closed = True
        self._engine.closing()
        self._task_group.cancel_scope.cancel()
        for scope in list(self._scopes.values()):  # requests running in their callers' tasks
            scope.cancel()
        try:
            await self._task_group.__aexit__(None, None, None)  # never wrap the caller's error
        finally:
            with anyio.CancelScope(shield=True):
                if self.delete_session_on_close and self.session_id is not None:
                    log.debug("ending the session (DELETE)")
                    with anyio.move_on_after(5):
                        try:
                            async with self._stream("DELETE", self._headers(None), held=False):
                                pass
                        except self._engine.errors:
                            pass  # the server may be gone already; nothing to tell anyone
                await self._engine.aclose()
            self._incoming_send.close()
            self._incoming_receive.close()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    @property
    def identity(self) -> str:
        return self.url

    @property
    def session(self) -> str | None:
        return self.session_id

    def use_message_headers(self, headers_for: HeadersFor) -> None:
        self._headers_for = headers_for

    @property
    def cancels_by_closing(self) -> bool:
        return self._headers_for is not None

    def observe_http(self, observer: HttpObserver | None) -> None:
        """Show ``observer`` the HTTP facts of every exchange from now on (one observer; None
        stops it): an :class:`~mcp_tasks_client.conformance.HttpExchange` per response, once
        its status and headers are in, before any message in it is delivered. The
        conformance kit's ValidatingTransport installs one. Without an observer the
        transport does no more than before (one ``is not None`` test per exchange)."""
        self._http_observer = observer

    # -- sending -----------------------------------------------------------------------------

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """A request's POST runs in the background (its answer arrives through ``receive``);
        a notification's or response's POST is awaited: the caller's deadline bounds it.
        ``held``: a request the server may keep open by design goes to the held pool.
        Deadline: the caller's scope bounds an awaited POST (a notification's or a response's).
        Cancelled: a notification's POST is abandoned where it is.
        """
        if self._task_group is None or self._closed:
            raise TransportClosed("the HTTP transport is not open")
        if isinstance(message, JSONRPCRequest):
            scope = anyio.CancelScope()
            self._scopes[message.id] = scope
            self._task_group.start_soon(self._run_request, message, scope, held)
        else:
            await self._post_accepted(message)

    inline_requests = True

    async def exchange(
        self, message: JSONRPCRequest, *, held: bool = False, deadline: float = math.inf
    ) -> Incoming | None:
        """The request's POST in the caller's task: a JSON answer (or the fault that ended the
        request) is returned to the caller instead of going through :meth:`receive`, which
        saves a task, a cancel scope's worth of bookkeeping and a hop through the reader per
        request. An SSE answer is read here too, its messages delivered through
        :meth:`receive` in order (None is returned); reading the rest of the stream after the
        answer (at most ``_DRAIN_SECONDS``) is handed to a background task. Closing the
        transport ends the request with TransportClosed.
        Deadline: ``deadline``: the transport's one deadline watcher (``_deadlines``, no timer
        per request) ends the exchange once it passed (TimeoutError), as the transport's close
        does (a TransportClosed fault): it cancels the exchange's one cancel scope, or, on the
        lean engine's quick POST, which runs without one (its only wait is for the answer's
        bytes on an idle connection), wakes that wait; the connection is closed either way.
        Cancelled: the POST is abandoned (its stream closed).
        """
        if self._task_group is None or self._closed:
            raise TransportClosed("the HTTP transport is not open")
        inline = InlineExchange(None, deadline, self._checkpoint)
        self._scopes[message.id] = inline  # what ends it: its close, abandon, the watcher
        if deadline != math.inf:
            self._deadlines.add(message.id, deadline)
        engine = self._engine
        item: Incoming | None = None
        try:
            prepared: _Prepared | None = None
            if (
                engine.quick_post
                and self._http_observer is None
                and message.method != "initialize"  # its session id is read off the head
            ):
                # The common exchange without a cancel scope: its one wait, for the answer's
                # bytes, is woken by inline.cancel() (the engine's; no scope to enter and
                # leave per request). Anything else (a wait for a connection, an answer that
                # is not the common one) goes on below, in a scope.
                try:
                    headers = self._message_headers(message)
                    body = serialize_message(message)
                    got = await self._post_json(headers, body, held, inline, quick=True)
                    if type(got) is bytes:
                        answer: Incoming = parse_answer(got, message.id)
                        return answer
                except Exception as exc:
                    if inline.cancelled or inline.write_timed_out:
                        return self._cut_short(message, inline)
                    return self._inline_fault(message, exc)
                prepared = (headers, body, got)
            scope = inline.scope = self._scope_type()  # deadline watched: no timer of its own
            if inline.cancelled:
                scope.cancel()
            with scope:
                try:
                    item = await self._post_request(message, held, inline, prepared)
                except Exception as exc:
                    item = self._inline_fault(message, exc)
        finally:
            self._scopes.pop(message.id, None)
            self._deadlines.drop(message.id)
        if scope.cancelled_caught:
            return self._cut_short(message, inline)
        return item

    def _cut_short(self, message: JSONRPCRequest, inline: InlineExchange) -> TransportFault:
        """An inline exchange ended by what may end it: its write timeout (a fault), the
        transport's close (a fault) or its deadline (TimeoutError, raised)."""
        if inline.write_timed_out and not self._closed:  # a close is a close, not a timeout
            error = WriteTimeout(f"request not sent within {self._write_timeout} s")
            return TransportFault(message.id, self._error(error, message.method))
        return self._ended(message, inline.deadline)

    def _ended(self, message: JSONRPCRequest, deadline: float) -> TransportFault:
        """Why an inline exchange's scope ended it: the transport's close (a fault), else its
        deadline (TimeoutError, raised)."""
        if not self._closed and anyio.current_time() >= deadline:
            raise TimeoutError
        return TransportFault(message.id, TransportClosed("the HTTP transport closed"))

    def _inline_fault(self, message: JSONRPCRequest, exc: Exception) -> TransportFault:
        """What ended an inline exchange, as the fault the caller dispatches (never a foreign
        exception to the caller)."""
        if isinstance(exc, self._engine.errors):
            return TransportFault(message.id, self._error(exc, message.method))
        if isinstance(exc, MCPTasksError):
            return TransportFault(message.id, exc)
        error = TransportError(f"{message.method}: unexpected {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return TransportFault(message.id, error)

    async def receive(self) -> Incoming:
        """Deadline: none (see :meth:`Transport.receive`). Cancelled: stops waiting; nothing is
        lost."""
        try:
            item = await self._incoming_receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the HTTP transport is closed") from None
        self._queued -= 1
        if (
            self._queued
            and not self._sending
            and not self._incoming_receive.statistics().current_buffer_used
        ):
            # Nothing unread is left (no send under way, none buffered; the reader, running
            # here, holds no item handed to it): a failed send's count is dropped.
            self._queued = 0
        return item

    def take_notifications(self, take: Callable[[JSONRPCNotification], bool] | None) -> None:
        # A subclass that overrides receive() sees every message there: no direct path.
        overridden = type(self).receive is not HttpTransport.receive
        self._take = None if overridden else take

    async def abandon(self, request_id: RequestId) -> None:
        """Stop reading the request's stream (closing it cancels a 2026-07-28 request, E C38).
        Deadline: the caller's scope. Cancelled: the stream closes later, with the transport."""
        scope = self._scopes.pop(request_id, None)
        if scope is not None:
            scope.cancel()

    async def open_listen_stream(self) -> None:
        """Open the standalone GET stream (X:133); raises GetStreamUnavailable on HTTP 405.

        Server requests and notifications that arrive there come out of :meth:`receive` like any
        other. The stream lives until the transport closes. A caller that stops waiting (its
        deadline, a cancellation) abandons the attempt: no stream opens behind its back.
        """
        if self._task_group is None or self._closed:
            raise TransportClosed("the HTTP transport is not open")
        if self._headers_for is not None:
            raise UsageError("2026-07-28 has no GET stream (E C56); use subscriptions/listen")
        if self.session_id is None and self.protocol_version is None:
            raise UsageError("open the GET stream after the handshake")
        opening = ListenOpening()
        self._task_group.start_soon(self._run_listen_stream, opening)
        try:
            await opening.done.wait()  # set by the stream task, whatever happens to it
        except BaseException:
            opening.scope.cancel()  # even a stream that started in this very instant
            raise
        if opening.error is not None:
            raise opening.error

    # -- one place for HTTP: requests, statuses, bodies, exceptions ---------------------------

    def _headers(self, accept: str | None) -> dict[str, str]:
        headers = dict(self.headers)
        # Bodies are counted against Limits as they arrive; a compressed body could inflate a
        # thousandfold between two counts, so none is asked for.
        headers["Accept-Encoding"] = "identity"
        if accept is not None:
            headers["Accept"] = accept
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version  # X:263, not on initialize
        return headers

    def _stream(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None = None,
        *,
        held: bool,
        inline: InlineExchange | None = None,
    ) -> AbstractAsyncContextManager[Any]:
        """One HTTP exchange on the engine, with this transport's timeouts and never a redirect
        followed; ``held`` ones (a request that waits on the server by design) in the held
        pool. A response whose drain was handed to a background task
        (``_consume_sse(hand_off=True)``) is closed by it."""
        return self._engine.stream(method, headers, content, held=held, inline=inline)

    # -- internals ---------------------------------------------------------------------------

    async def _deliver(self, item: Incoming) -> None:
        # A notification with nothing queued ahead of it goes to the client at once when its
        # reader is idle (the same order, one task hop fewer: issue 12). The checkpoint then
        # lets whoever it woke (a watcher, a wait) run before this stream reads on.
        take = self._take
        if (
            take is not None
            and self._queued == 0
            and isinstance(item, JSONRPCNotification)
            and take(item)
        ):
            await anyio.lowlevel.checkpoint()
            return
        # Counted until the reader takes it, even when the send raises: a send cancelled just
        # after the reader moved its item into the buffer raises too, with the item unread.
        # (One that was not taken stays counted until receive() finds nothing unread.)
        self._queued += 1
        self._sending += 1
        try:
            await self._incoming_send.send(item)
        finally:
            self._sending -= 1

    async def _fault(self, request_id: RequestId | None, error: MCPTasksError) -> None:
        await self._deliver(TransportFault(request_id, error))

    async def _post_accepted(self, message: JSONRPCMessage) -> None:
        """POST a notification or a response: the server answers 202 (X:95)."""
        what = getattr(message, "method", None) or "a response"
        headers = self._message_headers(message)
        try:
            posted = serialize_message(message)
            async with self._stream("POST", headers, posted, held=False) as response:
                if self._http_observer is not None:
                    facts = await accepted_facts(message, response, self._read_prefix)
                    self._http_observer(facts)
                await self._check_status(response, what)
                if response.status_code >= 400:
                    body = await self._read_prefix(response)
                    raise HTTPStatusError(response.status_code, body_text(body), method=what)
        except self._engine.errors as exc:
            raise self._error(exc, f"POST of {what}") from exc

    async def _run_request(
        self, message: JSONRPCRequest, scope: anyio.CancelScope, held: bool
    ) -> None:
        with scope:
            try:
                await self._post_request(message, held)
            except self._engine.errors as exc:
                await self._fault(message.id, self._error(exc, message.method))
            except MCPTasksError as exc:
                await self._fault(message.id, exc)
            except Exception as exc:  # the promise: never a foreign exception to the caller
                error = TransportError(f"{message.method}: unexpected {type(exc).__name__}: {exc}")
                error.__cause__ = exc
                await self._fault(message.id, error)
        self._scopes.pop(message.id, None)

    def _message_headers(self, message: JSONRPCMessage) -> dict[str, str]:
        """A POST's headers. Without a dialect's per-message headers (2025-11-25) this is one
        dict, rebuilt only when the session, the protocol version or ``self.headers`` change:
        nothing downstream may change it."""
        key = (self.session_id, self.protocol_version)
        if key != self._post_key or self.headers != self._post_seen:
            headers = self._headers(f"{_JSON}, {_SSE}")  # X:92 MUST
            headers["Content-Type"] = _JSON
            self._post_headers, self._post_key = self._engine.prepare(headers), key
            self._post_seen = dict(self.headers)
        base = self._post_headers
        if self._headers_for is None:
            return base
        extra = self._headers_for(message)
        if not extra:
            return base
        return self._engine.extend(base, extra)

    def _post_json(
        self,
        headers: dict[str, str],
        body: bytes,
        held: bool,
        inline: InlineExchange,
        *,
        quick: bool,
    ) -> Awaitable[Any]:
        """The engine's common POST of a request whose answer is a JSON body (``quick``:
        without a cancel scope, see :meth:`exchange`), to await: the body's bytes, or what
        the engine got under way (its head, a connection for h11), or None (it did nothing).
        A plain function handing on the engine's coroutine: no frame of its own per request
        on the lean path."""
        return self._engine.post(
            headers,
            body,
            held=held,
            inline=inline,
            media=_JSON,
            limit=self.limits.max_message_bytes,
            quick=quick,
        )

    async def _post_request(
        self,
        message: JSONRPCRequest,
        held: bool,
        inline: InlineExchange | None = None,
        prepared: _Prepared | None = None,
    ) -> Incoming | None:
        """One request's POST. ``inline`` (:meth:`exchange`): a single answer (a JSON body, an
        error body) is returned instead of delivered, and an SSE stream's drain is handed off.
        ``prepared``: the headers, body and what the engine's quick POST returned (None: it
        did nothing) of an inline exchange that began without a scope."""
        state: StreamState | None = None  # an SSE answer's (its resumption's)
        engine = self._engine
        exchange: AbstractAsyncContextManager[Any]
        if prepared is not None:  # exchange(): begun without a scope, or not at all
            headers, body, got = prepared
        else:
            headers = self._message_headers(message)
            body = serialize_message(message)
            got = None
        if prepared is not None and got is None and inline is not None:
            # exchange() found the common way open but its quick POST did nothing (it would
            # have waited for more than the answer): the common answer in one coroutine, now
            # in the scope (a whole JSON body, the connection back in the pool); anything
            # else goes on below, from its head, as the general way's.
            got = await self._post_json(headers, body, held, inline, quick=False)
            if type(got) is bytes:
                answer: Incoming | None = parse_answer(got, message.id)
                return answer
        if got is not None:  # under way: its head in, or h11's to read
            exchange = engine.opened(got)
        else:
            exchange = self._stream("POST", headers, body, held=held, inline=inline)
        async with exchange as response:
            if self._http_observer is not None:
                self._http_observer(exchange_facts("request", response, message.method, message.id))
            if message.method == "initialize":
                self._capture_session(response)
            status = response.status_code
            if not 200 <= status < 300 or "content-encoding" in response.headers:
                await self._check_status(response, message.method)  # nothing to check else
            if status >= 400:
                answer = await self._error_body(message, response)
            elif status == 202:
                raise ProtocolError(f"server answered the request {message.method} with 202")
            else:
                content_type = response.headers.get("content-type", "")
                content_type = content_type.split(";")[0].strip().lower()
                if content_type == _SSE:
                    state = StreamState()
                    await self._consume_sse(message, response, state, hand_off=inline is not None)
                    answer = None
                elif content_type == _JSON:
                    raw = await self._engine.read_body(
                        response, self.limits.max_message_bytes, message.method
                    )
                    answer = parse_answer(raw, message.id)
                else:
                    raise ProtocolError(
                        f"answer to {message.method} has content type {content_type!r} (X:101)"
                    )
            if answer is not None and inline is not None:
                return answer
        if answer is not None:
            # Delivered once the exchange is over: its connection is back in the pool before
            # the caller, woken by the answer, sends its next request.
            await self._deliver(answer)
            return None
        if state is not None and not state.answered:
            await self._resume(message, state)
        return None

    def _capture_session(self, response: httpx.Response) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id is None:
            return
        if not session_id or any(not 0x21 <= ord(ch) <= 0x7E for ch in session_id):
            raise ProtocolError(f"session id {session_id!r} is not visible ASCII (X:200)")
        if self.session_id is None:
            log.debug("session opened (its id is never logged)")
        self.session_id = session_id


def _checked(url: str, session_id: str | None, connections: int, held: int) -> _url.Url:
    """HttpTransport's arguments checked (a UsageError for each mistake), the URL parsed as
    httpx reads it (httpx itself only when the URL is not plain)."""
    if session_id is not None and (
        not isinstance(session_id, str)
        or not session_id
        or any(not 0x21 <= ord(ch) <= 0x7E for ch in session_id)
    ):
        raise UsageError(f"session id {session_id!r} is not visible ASCII (X:200)")
    try:
        parsed = _url.parse(url)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"not a usable URL: {url!r} ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise UsageError(f"HttpTransport needs an http:// or https:// URL, got {url!r}")
    if connections < 1:
        raise UsageError(f"max_connections must be >= 1, got {connections}")
    if held < 1:
        raise UsageError(f"max_held_connections must be >= 1, got {held}")
    return parsed


def _make_engine(
    url: str,
    parsed: _url.Url,
    engine: str | None,
    http_client: httpx.AsyncClient | None,
    ssl_context: ssl.SSLContext | None,
    sizes: tuple[float, float, int, int],
) -> HttpEngine:
    """The engine that serves ``url`` (``sizes``: the connect and write timeouts, the most
    connections and held connections)."""
    kind, why = _engine_for(parsed, engine, http_client, ssl_context)
    connect, write, connections, held = sizes
    if kind == "lean":
        return LeanEngine(
            parsed,
            ssl_context=ssl_context,
            connect_timeout=connect,
            write_timeout=write,
            max_connections=connections,
            max_held=held,
            why=why,
        )
    from ._httpx_engine import HttpxEngine  # httpx is imported where it is asked for

    return HttpxEngine(
        url,
        client=http_client,
        ssl_context=ssl_context,
        connect_timeout=connect,
        write_timeout=write,
        max_connections=connections,
        max_held=held,
        why=why,
    )


def _engine_for(
    url: _url.Url,
    engine: str | None,
    http_client: httpx.AsyncClient | None,
    ssl_context: ssl.SSLContext | None,
) -> tuple[str, str]:
    """Which engine serves ``url``, and why (what ``repr`` and the log line at open say)."""
    if engine not in (None, "lean", "httpx"):
        raise UsageError(f"engine must be 'lean', 'httpx' or None, got {engine!r}")
    if http_client is not None:
        if engine == "lean":
            raise UsageError("an http_client is served by the httpx engine, not engine='lean'")
        if ssl_context is not None:
            raise UsageError("ssl_context is for the transport's own client: set TLS on yours")
        return "httpx", "an injected httpx.AsyncClient"
    if engine is not None:
        return engine, f"engine={engine!r} asked for"
    if url.userinfo:
        return "httpx", "the URL carries credentials, which httpx sends as Basic auth"
    proxy = _environment_proxy(url)
    if proxy is not None:
        return "httpx", f"the environment names a proxy for this URL ({proxy})"
    return "lean", "the default"


def _environment_proxy(url: _url.Url) -> str | None:
    """The environment variable that names a proxy for ``url`` (as httpx's ``trust_env``
    reads it: ``<scheme>_proxy``, then ``all_proxy``, unless ``no_proxy`` covers the host);
    None when there is none. (urllib.request, which reads them, is imported only when some
    variable could name one: it costs a process that makes a transport about 10 ms, issue 34.)"""
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return None  # what getproxies_environment reads: no such variable, no proxy
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    scheme = url.scheme
    name = scheme if proxies.get(scheme) else "all" if proxies.get("all") else None
    if name is None:
        return None
    if urllib.request.proxy_bypass_environment(url.host, proxies):  # type: ignore[attr-defined]
        return None
    return f"{name.upper()}_PROXY"
