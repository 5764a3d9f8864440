"""JSON-RPC correlation, sans-I/O (B:27-108, C-02, C-03, C-47).

Everything that decides what a message *means* for the conversation lives here: which ids
are in flight, which response belongs to which request, which incoming requests still owe an
answer. The I/O shell feeds every decoded message to :meth:`RPCConnection.receive` and gets
one event back; it asks :meth:`request`, :meth:`notify`, :meth:`respond` for the messages to
send. No sockets, no clocks, no awaits: the tests drive it with plain event sequences.

Rules kept here:

- ids are integers from 1 upwards, never reused on one connection (C-02);
- a response or error for an id still pending resolves it exactly once;
- a response for an id the caller abandoned (a timeout) is reported as late, not as an error
  (C-47: "SHOULD ignore any response that arrives after cancelling"); the abandoned ids are
  remembered in a bounded window (``ABANDONED_KEPT``), and an answer to one older than the
  window is still a late answer: our ids only grow, so any id below the window was ours;
- a response for an id this client never sent is a :class:`~mcp_tasks_client.UnexpectedResponse`;
- every incoming request is answered exactly once: answering an unknown id, or twice, is the
  caller's :class:`~mcp_tasks_client.UsageError`; a request arriving again under an id still
  unanswered is a :class:`DuplicateRequest`, never answered a second time (a server re-sends a
  task's input request on a re-issued ``tasks/result``; its first arrival gets the answer).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from .._exceptions import RPCError, UnexpectedResponse, UsageError
from ..models import (
    ErrorObject,
    JSONObject,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

__all__ = [
    "DuplicateRequest",
    "ErrorReceived",
    "Event",
    "LateResponse",
    "NotificationReceived",
    "RPCConnection",
    "RequestReceived",
    "ResultReceived",
    "UncorrelatedError",
]


@attrs.frozen
class ResultReceived:
    """The response to one of our requests."""

    request_id: RequestId
    method: str
    result: JSONObject


@attrs.frozen
class ErrorReceived:
    """A JSON-RPC error answering one of our requests."""

    request_id: RequestId
    method: str
    error: RPCError


@attrs.frozen
class LateResponse:
    """A response (or error) for a request the caller already gave up on (C-47)."""

    request_id: RequestId
    method: str
    message: JSONRPCResponse | JSONRPCError


@attrs.frozen
class UncorrelatedError:
    """A JSON-RPC error with a null id: the server could not read some message of ours."""

    error: RPCError


@attrs.frozen
class RequestReceived:
    """A server->client request; it must be answered exactly once."""

    request: JSONRPCRequest


@attrs.frozen
class DuplicateRequest:
    """A request whose id is still unanswered arrived again; the first arrival is answered."""

    request: JSONRPCRequest


@attrs.frozen
class NotificationReceived:
    notification: JSONRPCNotification


Event: TypeAlias = (
    ResultReceived
    | ErrorReceived
    | LateResponse
    | UncorrelatedError
    | RequestReceived
    | DuplicateRequest
    | NotificationReceived
)


ABANDONED_KEPT = 1024
"""How many abandoned request ids keep their method name for the LateResponse report."""


class RPCConnection:
    """One JSON-RPC conversation seen from the client's side."""

    def __init__(self, first_id: int = 1) -> None:
        if first_id < 1:
            raise ValueError("request ids start at 1 or above")
        self._next_id = first_id
        self._pending: dict[RequestId, str] = {}
        self._abandoned: dict[RequestId, str] = {}
        self._forgotten_below = 0  # every abandoned id <= this one was dropped from the window
        self._unanswered: set[RequestId] = set()

    # -- what we send ------------------------------------------------------------------------

    def request(self, method: str, params: JSONObject | None = None) -> JSONRPCRequest:
        """A new request with a fresh id, now pending."""
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = method
        return JSONRPCRequest(request_id, method, params)

    def notify(self, method: str, params: JSONObject | None = None) -> JSONRPCNotification:
        return JSONRPCNotification(method, params)

    def respond(self, request_id: RequestId, result: JSONObject) -> JSONRPCResponse:
        """The answer to an incoming request (C-03: same id)."""
        self._consume_unanswered(request_id)
        return JSONRPCResponse(request_id, result)

    def respond_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> JSONRPCError:
        self._consume_unanswered(request_id)
        return JSONRPCError(request_id, ErrorObject(code, message, data))

    def drop(self, request_id: RequestId) -> None:
        """Forget an incoming request without answering it (a duplicate delivery, answered once
        already under its first arrival)."""
        self._consume_unanswered(request_id)

    def abandon(self, request_id: RequestId) -> None:
        """The caller stopped waiting for ``request_id``; its late answer will be ignored."""
        method = self._pending.pop(request_id, None)
        if method is not None:
            self._abandoned[request_id] = method
            if len(self._abandoned) > ABANDONED_KEPT:  # oldest first: dicts keep order
                oldest = next(iter(self._abandoned))
                del self._abandoned[oldest]
                if isinstance(oldest, int):
                    self._forgotten_below = max(self._forgotten_below, oldest)

    def settle(self, request_id: RequestId) -> bool:
        """A result whose id is ``request_id`` came back on that request's own exchange (an
        inline HTTP answer): True if the request was pending, and it is resolved now, once,
        as :meth:`receive` resolves it with a :class:`ResultReceived` (the caller, who matched
        the id, keeps the result). False if it was not pending (abandoned, failed, never
        ours): nothing changes, and the message goes to :meth:`receive` to learn what it
        is."""
        return self._pending.pop(request_id, None) is not None

    def fail_pending(self) -> list[tuple[RequestId, str]]:
        """Forget every pending request (the connection broke); returns what was pending."""
        pending = list(self._pending.items())
        self._pending.clear()
        return pending

    # -- what we receive ---------------------------------------------------------------------

    def receive(self, message: JSONRPCMessage) -> Event:
        """The meaning of one incoming message; raises ProtocolError for what cannot be."""
        if isinstance(message, JSONRPCRequest):
            if message.id in self._unanswered:
                return DuplicateRequest(message)
            self._unanswered.add(message.id)
            return RequestReceived(message)
        if isinstance(message, JSONRPCNotification):
            return NotificationReceived(message)
        if isinstance(message, JSONRPCError) and message.id is None:
            error = message.error
            return UncorrelatedError(RPCError.from_error(error.code, error.message, error.data))
        request_id = message.id
        assert request_id is not None
        method = self._pending.pop(request_id, None)
        if method is None:
            abandoned = self._abandoned.pop(request_id, None)
            if abandoned is not None:
                return LateResponse(request_id, abandoned, message)
            if (
                isinstance(request_id, int)
                and not isinstance(request_id, bool)
                and 0 < request_id <= self._forgotten_below
            ):
                return LateResponse(request_id, "(abandoned long ago)", message)
            raise UnexpectedResponse(request_id)
        if isinstance(message, JSONRPCResponse):
            return ResultReceived(request_id, method, message.result)
        error = message.error
        return ErrorReceived(
            request_id,
            method,
            RPCError.from_error(error.code, error.message, error.data, method=method),
        )

    # -- state -------------------------------------------------------------------------------

    @property
    def pending(self) -> dict[RequestId, str]:
        """Requests awaiting an answer: id -> method (a copy)."""
        return dict(self._pending)

    @property
    def abandoned_count(self) -> int:
        """Abandoned ids still remembered (bounded by ``ABANDONED_KEPT``)."""
        return len(self._abandoned)

    @property
    def unanswered(self) -> frozenset[RequestId]:
        """Incoming requests we still owe an answer."""
        return frozenset(self._unanswered)

    def _consume_unanswered(self, request_id: RequestId) -> None:
        if request_id not in self._unanswered:
            raise UsageError(f"no unanswered incoming request has id {request_id!r}")
        self._unanswered.discard(request_id)
