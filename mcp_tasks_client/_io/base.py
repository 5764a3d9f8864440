"""The one interface every transport offers the client.

A transport is an async context manager: entering it starts whatever it runs in the
background (a reader, a child process, HTTP streams) inside its own task group, and leaving
it stops all of that. While open it accepts messages with :meth:`Transport.send` and hands
out what arrives with :meth:`Transport.receive`: decoded JSON-RPC messages, or a
:class:`TransportFault` when something broke. A fault names the request it ruins when the
transport knows it (an HTTP POST answered 404, a response stream that broke), or ``None``
when it ruins the whole connection (the child process exited).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from types import TracebackType

import attrs

from .._exceptions import MCPTasksError
from .._limits import Limits
from ..models import (
    InitializeResult,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    RequestId,
)

__all__ = [
    "HeadersFor",
    "HttpExchange",
    "HttpObserver",
    "Incoming",
    "Transport",
    "TransportFault",
    "TransportWrapper",
]

HeadersFor = Callable[[JSONRPCMessage], Mapping[str, str]]
"""What a message's HTTP headers must say besides the transport's own (the dialect's)."""


@attrs.frozen
class TransportFault:
    """Something the transport could not deliver.

    ``request_id`` is the request it ruins. Without one, ``fatal`` says whether the whole
    connection is ruined (the child exited, stdout carried a line that is not JSON-RPC) or only
    a side stream ended (the standalone GET stream).
    """

    request_id: RequestId | None
    error: MCPTasksError
    fatal: bool = True


Incoming = JSONRPCMessage | TransportFault


@attrs.frozen
class HttpExchange:
    """The HTTP facts of one exchange, as an HTTP transport saw them (sans-I/O: no socket).

    An HTTP transport hands one to its observer (``observe_http``) once a response's status
    and headers are in, before any message of its body is delivered: what the strict
    validator needs of the rules below JSON-RPC (V-27a-d, E C7, E S24).
    """

    kind: str
    """What was sent: ``"request"``, ``"notification"``, ``"response"`` (all POSTed) or
    ``"get"`` (the standalone GET stream, or a resumption)."""
    status: int
    """The HTTP status code."""
    content_type: str
    """The response's media type, lower case, without parameters (``""`` when absent)."""
    session_id: str | None = None
    """The response's ``Mcp-Session-Id`` header, exactly as it came (None when absent)."""
    method: str | None = None
    """The JSON-RPC method of what was sent (None for a response or a GET)."""
    request_id: RequestId | None = None
    """The JSON-RPC id of the request it answers (``kind == "request"``)."""
    body: bool | None = None
    """For a POSTed notification or response answered 2xx: whether the answer had a body
    (None: not looked at)."""

    def to_json(self) -> dict[str, object]:
        """A plain dict (what ``Validator.feed`` takes as an ``("http", ...)`` item)."""
        return attrs.asdict(self)


HttpObserver = Callable[[HttpExchange], None]
"""Called by an HTTP transport with each :class:`HttpExchange` (synchronously, in the task
that made the exchange)."""


class Transport(abc.ABC):
    """Moves JSON-RPC messages between this client and one server."""

    @abc.abstractmethod
    async def __aenter__(self) -> Transport:
        """Open the transport (start the child process, make the HTTP pools). Deadline: none
        of its own; a caller who wants one wraps the ``async with`` in its own scope.
        Cancelled: whatever was started is closed again."""

    @abc.abstractmethod
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the transport and everything it started. Deadline: the transport's own
        bounded shutdown (StdioShutdown; an HTTP session's DELETE waits at most 5 s).
        Cancelled: the close still runs to its end."""

    @abc.abstractmethod
    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """Send one message; for a request, its answer arrives through :meth:`receive`.

        ``held`` (requests only): the server may keep the request open by design (a blocking
        ``tasks/result``, a listen); a transport with connection pools sends it on one of its
        held pool, so it never keeps a poll or an answer from a connection. The sender
        decides: the transport never guesses from the method.
        Deadline: the caller's scope (the Client bounds every send by a request's deadline or
        Timeouts.request). Cancelled before any byte is written: nothing was sent.
        """

    @abc.abstractmethod
    async def receive(self) -> Incoming:
        """The next incoming message or fault; raises TransportClosed when there is no more.
        Deadline: none (it waits for the next message as long as the transport is open).
        Cancelled: stops waiting; no message is lost (the next receive gets it).
        """

    def apply_limits(self, limits: Limits) -> None:  # noqa: B027 - optional hook
        """Called by the Client before it enters the transport: the caller's limits."""

    def negotiated(self, protocol_version: str) -> None:  # noqa: B027 - optional hook
        """Called once the handshake agreed on ``protocol_version`` (HTTP sends it as a header)."""

    def use_message_headers(self, headers_for: HeadersFor) -> None:  # noqa: B027 - optional hook
        """Called instead of :meth:`negotiated` for a stateless generation (2026-07-28): no
        session; every message carries the headers ``headers_for`` gives it (HTTP)."""

    @property
    def identity(self) -> str:
        """Which server this is, for a journal: its URL, or ``stdio:`` and the command line."""
        return f"{type(self).__name__}:{id(self):x}"

    @property
    def session(self) -> str | None:
        """The session id this transport carries (Streamable HTTP), or None."""
        return None

    def check_serves(self, method: str) -> None:  # noqa: B027 - optional hook
        """Called when the client registers a handler for server->client ``method``: a
        transport that cannot deliver such requests to it (one over a connection whose
        server requests another library answers) raises a typed error naming why, so nothing
        waits for requests that never come."""

    @property
    def agreed(self) -> InitializeResult | None:
        """What the connection under this transport already agreed in its own handshake (a
        2025-11-25 session the official SDK opened and initialized), or None. The Client then
        sends no ``initialize``: it takes this as the session it resumes."""
        return None

    @property
    def cancels_by_closing(self) -> bool:
        """Whether abandoning a request is its cancellation (a stateless HTTP request's
        stream closed, E C38), so no ``notifications/cancelled`` is sent for it."""
        return False

    async def abandon(self, request_id: RequestId) -> None:  # noqa: B027 - optional hook
        """The caller gave up on ``request_id``: stop reading anything that only serves it.
        Deadline: the caller's scope (the Client gives it Timeouts.request). Cancelled: the
        request may stay open on the server.
        """

    def take_notifications(  # noqa: B027 - optional hook
        self, take: Callable[[JSONRPCNotification], bool] | None
    ) -> None:
        """Called by the Client once entered (None when it stops reading). A transport may
        hand an incoming notification to ``take`` where it arrived instead of through
        :meth:`receive`, and only when nothing it delivered earlier is still unread (so the
        order of messages holds); ``take`` returns False when it cannot dispatch now (the
        reader is busy), and the notification then goes through :meth:`receive` as usual.
        HTTP does (a pushed status notification reaches the Poller without a hop through the
        reader task); a :class:`TransportWrapper` does not, so its :meth:`receive` sees every
        message."""

    #: Whether :meth:`exchange` runs a request in the caller's task (HTTP: its own POST).
    inline_requests: bool = False

    async def exchange(
        self, message: JSONRPCRequest, *, held: bool = False, deadline: float = math.inf
    ) -> Incoming | None:
        """Only when ``inline_requests``: send ``message`` and read its answer in the caller's
        task. Returns the answer (or the fault that ended the request) for the caller to
        dispatch, or None when the answer went through :meth:`receive` like any other (a
        stream that carried other messages). Cancelling the caller abandons the request.
        Deadline: ``deadline`` (``anyio.current_time()``'s clock), carried by the exchange's
        own cancel scope (the one scope of a request: the caller needs none around it);
        TimeoutError once it passed, as ``anyio.fail_after`` raises.
        """
        raise NotImplementedError  # pragma: no cover - guarded by inline_requests


class TransportWrapper(Transport):
    """A transport that is ``inner`` in every respect: subclass it to observe or alter what
    passes (override :meth:`send` / :meth:`receive`), as the conformance kit's
    ValidatingTransport does. Attributes of the inner transport that are not part of this
    interface (HttpTransport's ``session_id``, ``open_listen_stream``, ...) stay reachable.
    A wrapper never runs requests in the caller's task (``inline_requests`` is False), so
    every answer passes through its :meth:`receive`."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner

    async def __aenter__(self) -> TransportWrapper:
        """Deadline and cancellation: those of the inner transport's ``__aenter__``."""
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Deadline and cancellation: those of the inner transport's ``__aexit__``."""
        await self.inner.__aexit__(exc_type, exc, tb)

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """Deadline and cancellation: those of the inner transport's :meth:`Transport.send`."""
        await self.inner.send(message, held=held)

    async def receive(self) -> Incoming:
        """Deadline and cancellation: those of the inner transport's :meth:`Transport.receive`."""
        return await self.inner.receive()

    def apply_limits(self, limits: Limits) -> None:
        self.inner.apply_limits(limits)

    def negotiated(self, protocol_version: str) -> None:
        self.inner.negotiated(protocol_version)

    def use_message_headers(self, headers_for: HeadersFor) -> None:
        self.inner.use_message_headers(headers_for)

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def session(self) -> str | None:
        return self.inner.session

    def check_serves(self, method: str) -> None:
        self.inner.check_serves(method)

    @property
    def agreed(self) -> InitializeResult | None:
        return self.inner.agreed

    @property
    def cancels_by_closing(self) -> bool:
        return self.inner.cancels_by_closing

    async def abandon(self, request_id: RequestId) -> None:
        """Deadline and cancellation: those of the inner transport's :meth:`Transport.abandon`."""
        await self.inner.abandon(request_id)

    def take_notifications(self, take: Callable[[JSONRPCNotification], bool] | None) -> None:
        """Not passed on: every message the inner transport delivers goes through this
        wrapper's :meth:`receive`."""

    def __getattr__(self, name: str) -> object:
        if name == "inner":  # not set yet (a half-made wrapper): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)
