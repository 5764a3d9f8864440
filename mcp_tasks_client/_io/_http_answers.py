"""What an HTTP answer means when it is not a plain JSON-RPC message: HttpTransport's statuses,
error bodies and failures.

Job: turn a response's status, headers and a bounded prefix of its body into this library's
errors (a redirect refused, a session expired, a busy server with its ``Retry-After``, a
JSON-RPC error carried by a 4xx/5xx, an HTTP status error) and map every exception of the HTTP
stack to one (``_error``: the one place, STYLE: httpx); read the facts of an exchange for an
observer. :class:`HttpTransport` and its SSE side (``_http_sse.SseStreams``) both stand on
:class:`HttpAnswers`.

May import: ``_http_engine``, ``base``, ``_codec``, ``models``, ``_exceptions``, ``_limits``;
attrs, the standard library (``email.utils`` only for an HTTP-date ``Retry-After``).

Theory of operation: an error body is read only up to ``Limits.max_error_body_bytes``; the rest
is never read (the connection is closed instead of drained). Only identity encoding is asked
for, so an encoded answer is a ProtocolError before any byte of it is inflated.
"""

from __future__ import annotations

import datetime as dt
import ssl
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from .._codec.messages import parse_message
from .._exceptions import (
    DecodeError,
    HTTPStatusError,
    ProtocolError,
    RedirectRefused,
    ServerBusy,
    SessionExpired,
    TLSError,
    TransportError,
)
from .._limits import Limits
from ..models import JSONRPCError, JSONRPCMessage, JSONRPCRequest
from ._http_engine import HttpEngine
from .base import HttpExchange, Incoming

if TYPE_CHECKING:
    import httpx

__all__ = [
    "HttpAnswers",
    "accepted_facts",
    "body_text",
    "exchange_facts",
    "for_request",
    "media_type",
    "retry_after",
]


class HttpAnswers:
    """Statuses, error bodies and failures, for :class:`HttpTransport` (see the module header).
    What it uses of the transport is declared here; the transport defines each."""

    url: str
    session_id: str | None
    limits: Limits
    _engine: HttpEngine

    def _error(self, exc: BaseException, what: str) -> TransportError:
        """The one mapping from the HTTP stack's exceptions to this library's (STYLE: httpx)."""
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, ssl.SSLError):
                reason = getattr(cause, "verify_message", None) or cause.reason or str(cause)
                return TLSError(self.url, str(reason))
            cause = cause.__cause__ or cause.__context__
        detail = str(exc) or type(exc).__name__
        return TransportError(f"{what} to {self.url} failed: {type(exc).__name__}: {detail}")

    async def _check_status(self, response: httpx.Response, what: str) -> None:
        """Raise for a status that carries no MCP message; a JSON-RPC error body in a 4xx/5xx
        is the caller's to read (``_error_body``)."""
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            # Only identity was asked for: a compressed body could inflate a thousandfold
            # inside the HTTP stack before Limits sees it.
            raise ProtocolError(f"answer to {what} is {encoding}-encoded; identity was asked for")
        status = response.status_code
        if 300 <= status < 400:
            raise RedirectRefused(status, response.headers.get("location"), method=what)
        if status == 404 and self.session_id is not None and what != "initialize":
            raise SessionExpired(self.session_id)
        if status in (429, 503):
            body = await self._read_prefix(response)
            wait = retry_after(response.headers.get("retry-after"))
            raise ServerBusy(status, body_text(body), retry_after=wait, method=what)

    async def _read_prefix(self, response: httpx.Response) -> bytes:
        """At most ``max_error_body_bytes`` of a body kept for an error message; the rest is
        not read (the connection is closed instead of drained)."""
        limit = self.limits.max_error_body_bytes
        kept = bytearray()
        async for chunk in self._engine.chunks(response):
            kept += chunk[: limit - len(kept)]
            if len(kept) >= limit:
                break
        return bytes(kept)

    async def _error_body(self, message: JSONRPCRequest, response: httpx.Response) -> Incoming:
        """An HTTP error: the JSON-RPC error it carries, or an HTTPStatusError."""
        body = await self._read_prefix(response)
        try:
            incoming = parse_message(body)
        except DecodeError:
            incoming = None
        if isinstance(incoming, JSONRPCError) and incoming.id in (None, message.id):
            answer: Incoming = for_request(message, incoming)
            return answer
        raise HTTPStatusError(response.status_code, body_text(body), method=message.method)


def media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";")[0].strip().lower()


def exchange_facts(
    kind: str, response: httpx.Response, method: str | None = None, request_id: Any = None
) -> HttpExchange:
    return HttpExchange(
        kind,
        response.status_code,
        media_type(response),
        response.headers.get("mcp-session-id"),
        method,
        request_id,
    )


def for_request(message: JSONRPCRequest, incoming: Any) -> Any:
    """An error with a null id on a request's own stream is that request's answer."""
    if isinstance(incoming, JSONRPCError) and incoming.id is None:
        return JSONRPCError(message.id, incoming.error)
    return incoming


def body_text(body: bytes) -> str:
    return body.decode("utf-8", "replace")


async def accepted_facts(
    message: JSONRPCMessage,
    response: httpx.Response,
    read_prefix: Callable[[httpx.Response], Awaitable[bytes]],
) -> HttpExchange:
    """The exchange of a POSTed notification or response, with whether a 2xx answer had a
    body: by its Content-Length, an SSE stream is one, else the body is read (``read_prefix``:
    bounded by ``max_error_body_bytes``). Only with an observer: nothing is read otherwise."""
    body: bool | None = None
    if 200 <= response.status_code < 300:
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit():
            body = int(declared) > 0
        elif media_type(response) == "text/event-stream":
            body = True
        else:
            body = bool(await read_prefix(response))
    kind = "notification" if getattr(message, "method", None) is not None else "response"
    exchange = exchange_facts(kind, response, getattr(message, "method", None))
    return attrs.evolve(exchange, body=body)


def retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date; None if unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(min(int(value[:12]), 10**11))
    import email.utils  # here: only an HTTP-date Retry-After (a busy server's) needs it

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())
