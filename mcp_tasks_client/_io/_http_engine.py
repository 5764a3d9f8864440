"""The seam under :class:`~mcp_tasks_client.HttpTransport`: one HTTP exchange, by either engine.

Job: what ``HttpTransport`` asks of the HTTP client beneath it, and nothing about MCP. An
engine opens one exchange (``stream``: an ``async with`` that sends the request and yields the
response once its head is in, in the held pool or the request pool), hands out the body's
bytes (``chunks``, ``read_body``), builds a POST's header dict once per session (``prepare``,
``extend``) and closes its connections (``aclose``). Two engines implement it: ``lean``
(``_h1_engine.py``: HTTP/1.1 of our own, the default) and ``httpx`` (``_httpx_engine.py``: an
``httpx.AsyncClient``, the caller's or one the transport makes). An exchange's failure is one of
the engine's ``errors``: this module's :class:`HTTPError` tree (named as httpx names its own:
``ReadError``, ``WriteTimeout``...), which the lean engine raises, and for the httpx engine
httpx's own tree too; the transport maps them to this library's in one place. So the lean
engine, the default, never imports httpx: a program that never asks for it does not load it.

May import: ``_exceptions``, ``_limits``; anyio. Not httpx, not the transport itself.

Theory of operation: data travels in arguments. What an engine may need of the caller's
exchange, the inline exchange's cancel scope (so the write timeout is that scope's deadline
for the length of the send, not a second scope) or, for an exchange run without one, the wait
to wake when it is ended (``wake``), is an :class:`InlineExchange` passed down with the
request; nothing is kept in a ContextVar.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.lowlevel

from .._exceptions import LimitExceeded

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "ExchangeInterrupted",
    "HTTPError",
    "HttpEngine",
    "InlineExchange",
    "LocalProtocolError",
    "ReadError",
    "RemoteProtocolError",
    "WriteError",
    "WriteTimeout",
]


class HTTPError(Exception):
    """An HTTP exchange failed on the lean engine (the transport maps it to this library's
    errors: it never reaches a caller). The names below are httpx's, so a mapped error reads
    the same whichever engine ran the exchange."""


class ConnectError(HTTPError):
    """No connection to the server (refused, unreachable, a TLS handshake that failed)."""


class ConnectTimeout(HTTPError):
    """No connection within the connect timeout."""


class ReadError(HTTPError):
    """The connection failed while the answer was read."""


class WriteError(HTTPError):
    """The connection failed while the request was written."""


class WriteTimeout(HTTPError):
    """The request was not written within the write timeout."""


class RemoteProtocolError(HTTPError):
    """The server broke HTTP/1.1 (a head h11 refuses, a body cut short...)."""


class LocalProtocolError(HTTPError):
    """A request HTTP/1.1 cannot carry (a header h11 refuses)."""


class ExchangeInterrupted(HTTPError):
    """An inline exchange's wait was ended by :meth:`InlineExchange.cancel` (its deadline, the
    transport's close): raised where the exchange waited, never past the transport (which
    reads the exchange's own state, not this, to say what ended it)."""


class InlineExchange:
    """The exchange a caller runs in its own task (``HttpTransport.exchange``): its cancel
    scope when it has one, the request's deadline, the loop's ``checkpoint_if_cancelled``
    (the transport's, found once when it opened), whether the engine's write timeout fired on
    it, and how to end it (:meth:`cancel`).

    An exchange runs without a cancel scope as long as its only wait is for the answer's
    bytes on a connection that can be woken (``wake``, set by the engine: the lean engine's
    quick POST); anything else runs in ``scope``. :meth:`cancel` (the deadline watcher, the
    transport's close) cancels the scope when there is one, else marks the exchange
    ``cancelled`` and wakes its wait, which raises :class:`ExchangeInterrupted` (or the connection's
    own error): the engine closes that connection."""

    __slots__ = ("cancelled", "checkpoint", "deadline", "scope", "wake", "write_timed_out")

    def __init__(
        self,
        scope: anyio.CancelScope | None,
        deadline: float,
        checkpoint: Callable[[], Awaitable[None]] = anyio.lowlevel.checkpoint_if_cancelled,
    ) -> None:
        self.scope = scope
        self.deadline = deadline
        self.checkpoint = checkpoint
        self.write_timed_out = False
        self.cancelled = False
        self.wake: Callable[[], None] | None = None

    def cancel(self) -> None:
        """End the exchange: its scope cancelled, or its wait woken (see the class)."""
        self.cancelled = True
        scope = self.scope
        if scope is not None:
            scope.cancel()
        elif self.wake is not None:
            self.wake()


class HttpEngine:
    """One HTTP client under the transport (see the module header). ``name`` is what
    ``repr`` and the log line at open show; ``why`` says how it was chosen."""

    name = "?"

    errors: tuple[type[Exception], ...] = (HTTPError,)
    """What an exchange on this engine raises when it fails (the transport maps each)."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.handed_off: set[int] = set()
        """Responses whose drain a background task owns: their exchange does not close them."""

    def stream(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        held: bool,
        inline: InlineExchange | None,
    ) -> AbstractAsyncContextManager[Any]:
        """One exchange: the response (``status_code``, ``headers``) once its head is in;
        closed (its connection back to the pool when read to its end) on leaving, unless its id
        was put in ``handed_off``. Deadline: the connect and write timeouts given at
        construction (``inline``: the write timeout as that scope's deadline); no read
        timeout. Cancelled: the exchange is abandoned, its connection closed."""
        raise NotImplementedError

    quick_post = False
    """Whether :meth:`post` serves an inline POST in one coroutine (the lean engine)."""

    async def post(
        self,
        headers: dict[str, str],
        content: bytes,
        *,
        held: bool,
        inline: InlineExchange,
        media: str,
        limit: int,
        quick: bool = False,
    ) -> Any:
        """Only when ``quick_post``: an inline POST, the common answer's whole body (bytes)
        or what to go on with through :meth:`opened`. ``quick``: the exchange has no cancel
        scope; None when it would wait for anything but the answer's bytes (nothing done)."""
        raise NotImplementedError  # pragma: no cover - guarded by quick_post

    def opened(self, response: Any) -> AbstractAsyncContextManager[Any]:
        """Only when ``quick_post``: the exchange of a response :meth:`post` returned."""
        raise NotImplementedError  # pragma: no cover - guarded by quick_post

    def chunks(self, response: Any) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (identity encoding only is ever asked for)."""
        raise NotImplementedError

    async def read_body(self, response: Any, limit: int, what: str) -> bytes:
        """A whole body, refused (LimitExceeded) past ``limit`` without buffering more.
        Deadline: none of its own (the exchange's). Cancelled: the rest stays unread."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise LimitExceeded("max_message_bytes", limit, f"the JSON body of {what}")
        parts: list[bytes] = []
        size = 0
        async for chunk in self.chunks(response):
            size += len(chunk)
            if size > limit:
                raise LimitExceeded("max_message_bytes", limit, f"the JSON body of {what}")
            parts.append(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def prepare(self, headers: dict[str, str]) -> dict[str, str]:
        """A POST's header dict, built once per session: the engine may keep what it derives
        from it (its header lines) on it or beside it; nothing changes it afterwards."""
        return headers

    def extend(self, base: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
        """``base`` (from ``prepare``) with a message's own headers added."""
        merged = dict(base)
        merged.update(extra)
        return merged

    def closing(self) -> None:
        """The transport is closing: no connection goes back to a pool from now on (the
        session's DELETE is the last exchange)."""

    async def aclose(self) -> None:
        """Close every connection this engine opened (an injected client stays open).
        Deadline: none. Cancelled: connections not closed yet stay open."""

    @property
    def connections_opened(self) -> int | None:
        """TCP connections opened so far, when the engine counts them (lean); else None."""
        return None
