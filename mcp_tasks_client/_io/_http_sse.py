"""The SSE side of HttpTransport: a request's answer stream, its resumption, the GET stream.

Job: read one Streamable HTTP SSE stream to its end under the library's bound, delivering every
message in it in arrival order (X:101-131); resume a broken one with ``GET`` +
``Last-Event-ID`` after the server's ``retry`` when the caller opted in (X:167-189); keep the
standalone GET stream (X:133-154) open until the transport closes. The rest of the transport
(the engine, delivery to the Client) is :class:`HttpTransport`'s, which this class is a base
of: it names what it uses of it below, and nothing else. Statuses and error bodies are its own
base's (``_http_answers.HttpAnswers``).

May import: ``_http_answers``, ``_sse_httpx`` (on the first SSE stream: it loads httpx-sse,
which loads httpx), ``_http_engine``, ``base``, ``_codec``, ``models``, ``_exceptions``,
``_limits``; anyio, attrs.
An exchange's failure is one of the engine's ``errors`` (``_http_engine``).

Theory of operation: after the response arrives a stream SHOULD end (X:125): it is read to its
end, for at most ``_DRAIN_SECONDS``, so the connection goes back to the pool instead of being
closed half-read; in a caller's inline exchange that drain runs in a background task which
owns the response (its id in the engine's ``handed_off``). 2026-07-28 has no resumption (E C61).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import attrs

from .._codec.messages import parse_message
from .._exceptions import (
    DecodeError,
    GetStreamUnavailable,
    HTTPStatusError,
    LimitExceeded,
    MCPTasksError,
    StreamInterrupted,
    TransportClosed,
    TransportError,
)
from .._limits import Limits
from ..models import JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from ._http_answers import HttpAnswers, body_text, exchange_facts, for_request, media_type
from ._http_engine import HttpEngine, InlineExchange
from .base import HeadersFor, HttpObserver, Incoming, TransportFault

if TYPE_CHECKING:
    import httpx

    from ._sse_httpx import HttpxSSEDecoder

__all__ = [
    "ListenOpening",
    "SseStreams",
    "StreamResumption",
    "StreamState",
    "body_text",
    "exchange_facts",
    "for_request",
    "media_type",
]

_DRAIN_SECONDS = 1.0
_SSE = "text/event-stream"
_MAX_RETRY_MS = 24 * 3600 * 1000  # an SSE ``retry`` beyond a day is no wait we take


@attrs.frozen
class StreamResumption:
    """Opt-in: how to resume a broken SSE stream (X:167-189).

    ``max_attempts`` reconnects per stream; the wait before each is the server's last ``retry``
    (which the client MUST honour, X:3.1) or ``default_retry`` seconds when it sent none.
    """

    max_attempts: int = 3
    default_retry: float = 1.0


class ListenOpening:
    """How the opening of the GET stream went: ``done`` once started, or failed (``error``).
    ``scope`` is the stream task's: cancelled when the opener stops waiting for the start.
    (This and :class:`StreamState` are plain classes: a transport's state, never compared,
    and an attrs class costs its generated methods' compilation on every start: issue 34.)"""

    __slots__ = ("done", "error", "scope")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.error: MCPTasksError | None = None
        self.scope = anyio.CancelScope()


class StreamState:
    """Where one request's SSE stream is: its last event id, the server's last ``retry``, and
    whether the request's answer came."""

    __slots__ = ("answered", "last_event_id", "retry_ms")

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self.answered = False


class SseStreams(HttpAnswers):
    """Reading SSE streams, for :class:`HttpTransport` (see the module header). What it uses of
    the transport is declared here; the transport defines each."""

    resumption: StreamResumption | None
    limits: Limits
    _engine: HttpEngine
    _task_group: anyio.abc.TaskGroup | None
    _closed: bool
    _headers_for: HeadersFor | None
    _http_observer: HttpObserver | None

    async def _deliver(self, item: Incoming) -> None:
        raise NotImplementedError

    async def _fault(self, request_id: RequestId | None, error: MCPTasksError) -> None:
        raise NotImplementedError

    def _headers(self, accept: str | None) -> dict[str, str]:
        raise NotImplementedError

    def _stream(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None = None,
        *,
        held: bool,
        inline: InlineExchange | None = None,
    ) -> AbstractAsyncContextManager[Any]:
        raise NotImplementedError

    def _sse_decoder(self) -> HttpxSSEDecoder:
        from ._sse_httpx import HttpxSSEDecoder  # on the first SSE stream (it loads httpx)

        limit = self.limits.max_message_bytes
        return HttpxSSEDecoder(max_line_bytes=limit + 16, max_event_bytes=limit)

    async def _consume_sse(
        self,
        message: JSONRPCRequest | None,
        response: httpx.Response,
        state: StreamState,
        *,
        hand_off: bool = False,
    ) -> None:
        """Read one SSE stream to its end, delivering every message in it.

        After the response arrives the stream SHOULD end (X:125): it is read to its end, for
        at most ``_DRAIN_SECONDS``, so the connection goes back to the pool instead of being
        closed half-read (a new TCP connection per request costs more than the request).
        A line or event past ``Limits.max_message_bytes``, or bytes that are not UTF-8, end
        the stream with a typed error (LimitExceeded, DecodeError) for its request.
        ``hand_off``: that drain runs in a background task, which closes the response.
        """
        request_id = message.id if message is not None else None
        decoder = self._sse_decoder()
        chunks = self._engine.chunks(response)
        try:
            while not state.answered:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                try:
                    events = decoder.feed(chunk)
                except (LimitExceeded, DecodeError) as exc:
                    await self._fault(request_id, exc)
                    state.answered = True  # nothing more is read for this request
                    return
                finally:
                    state.last_event_id = decoder.last_event_id
                    state.retry_ms = decoder.retry
                for event in events:
                    if not event.data:
                        continue  # a priming event (X:106): an id, nothing to parse
                    try:
                        incoming = parse_message(event.data)
                    except DecodeError as exc:
                        await self._fault(request_id, exc)
                        state.answered = True
                        return
                    if message is not None:
                        incoming = for_request(message, incoming)
                        if isinstance(incoming, (JSONRPCResponse, JSONRPCError)) and (
                            incoming.id == message.id
                        ):
                            state.answered = True
                    await self._deliver(incoming)
            if hand_off and self._task_group is not None and not self._closed:
                self._engine.handed_off.add(id(response))
                self._task_group.start_soon(self._drain, response, chunks)
                return
            await _drain(chunks)
        except self._engine.errors:
            return  # a dropped connection; the caller decides about resuming

    async def _drain(self, response: httpx.Response, chunks: AsyncIterator[bytes]) -> None:
        """The end of an answered SSE stream, read off the caller's task, then closed."""
        try:
            await _drain(chunks)
        except self._engine.errors:
            pass
        finally:
            await response.aclose()

    async def _resume(self, message: JSONRPCRequest, state: StreamState) -> None:
        policy = self.resumption
        attempts = 0
        if self._headers_for is not None:
            policy = None  # E C61: 2026-07-28 has no resumption; the caller re-issues
        while not state.answered:
            if policy is None or state.last_event_id is None or attempts >= policy.max_attempts:
                raise StreamInterrupted(state.last_event_id, method=message.method)
            attempts += 1
            await anyio.sleep(_retry_seconds(state.retry_ms, policy.default_retry))
            headers = self._headers(_SSE)
            headers["Last-Event-ID"] = _header_value(state.last_event_id)
            try:
                async with self._stream("GET", headers, held=True) as response:
                    if self._http_observer is not None:
                        self._http_observer(exchange_facts("get", response))
                    await self._check_status(response, message.method)
                    if response.status_code >= 400:
                        continue  # this attempt failed; the next one may not
                    await self._consume_sse(message, response, state)
            except self._engine.errors:
                continue

    async def _run_listen_stream(self, opening: ListenOpening) -> None:
        """The GET stream's task. It tells ``opening`` once the stream started or failed to;
        closing the transport first (a server that never sends headers) fails the opening
        with TransportClosed instead of holding the close up (``task_group.start`` would).
        The task runs in ``opening.scope``: an opener that stops waiting cancels it."""
        with opening.scope:
            try:
                await self._listen(opening)
            except Exception as exc:  # never a foreign exception out of the transport's tasks
                error = (
                    exc
                    if isinstance(exc, MCPTasksError)
                    else TransportError(f"GET stream: unexpected {type(exc).__name__}: {exc}")
                )
                if opening.done.is_set():
                    await self._deliver(TransportFault(None, error, fatal=False))
                else:
                    opening.error = error
            finally:
                if not opening.done.is_set():
                    opening.error = opening.error or TransportClosed(
                        "the transport closed before the GET stream started"
                    )
                    opening.done.set()

    async def _listen(self, opening: ListenOpening) -> None:
        state = StreamState()
        started = False
        attempts = 0
        while True:
            headers = self._headers(_SSE)
            try:
                if state.last_event_id is not None:
                    headers["Last-Event-ID"] = _header_value(state.last_event_id)
                async with self._stream("GET", headers, held=True) as response:
                    if self._http_observer is not None:
                        self._http_observer(exchange_facts("get", response))
                    if response.status_code == 405:
                        raise GetStreamUnavailable("the server offers no GET stream (HTTP 405)")
                    await self._check_status(response, "GET")
                    if response.status_code >= 400:
                        body = await self._read_prefix(response)
                        raise HTTPStatusError(response.status_code, body_text(body), method="GET")
                    if not started:
                        started = True
                        opening.done.set()
                    await self._consume_sse(None, response, state)
                    if state.answered:  # on this stream only a fault sets it: it was reported
                        return
            except self._engine.errors as exc:
                if not started:
                    raise self._error(exc, "GET stream") from exc
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
            try:
                await anyio.sleep(_retry_seconds(state.retry_ms, policy.default_retry))
            except DecodeError as exc:
                await self._deliver(TransportFault(None, exc, fatal=False))
                return


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    with anyio.move_on_after(_DRAIN_SECONDS):
        async for _ in chunks:
            pass  # anything after the response belongs to no one (X:125)


def _retry_seconds(retry_ms: int | None, default: float) -> float:
    """The server's SSE ``retry`` as a wait; one no caller could mean is a DecodeError."""
    if retry_ms is None:
        return default
    if retry_ms > _MAX_RETRY_MS:
        raise DecodeError("SSE retry", f"{retry_ms} ms is beyond {_MAX_RETRY_MS} ms", retry_ms)
    return retry_ms / 1000


def _header_value(event_id: str) -> str:
    """An SSE id to send back as Last-Event-ID: header values are printable ASCII here."""
    if not (event_id.isascii() and event_id.isprintable()):
        raise DecodeError(
            "SSE id", "cannot be sent back as Last-Event-ID (not printable ASCII)", event_id
        )
    return event_id
