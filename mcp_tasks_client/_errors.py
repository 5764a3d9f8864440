"""One exception tree for the whole library.

Every error the library raises derives from :class:`MCPTasksError`. The tree is grouped by
layer, in the manner of httpx: what the *caller* got wrong (:class:`UsageError`), what the
*server* sent that breaks the protocol (:class:`ProtocolError` and its decode errors), what
the server *answered* with a JSON-RPC error (:class:`RPCError`), what went wrong moving bytes
(:class:`TransportError`), and deadlines the caller set (:class:`RequestTimeout`).

Nothing here is ever raised with the server's detail stringified away: codes, messages and
``data`` are kept as attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "DecodeError",
    "GetStreamUnavailable",
    "HTTPStatusError",
    "InvalidParams",
    "MCPTasksError",
    "MethodNotFound",
    "ProcessExited",
    "ProtocolError",
    "RPCError",
    "RequestTimeout",
    "SessionExpired",
    "StreamInterrupted",
    "TransportClosed",
    "TransportError",
    "UnexpectedResponse",
    "UnsupportedProtocolVersion",
    "UsageError",
]


class MCPTasksError(Exception):
    """Base of every exception this library raises."""


# --- the caller -----------------------------------------------------------------------------


class UsageError(MCPTasksError):
    """The caller asked for something the library cannot do as asked (wrong state, bad argument)."""


# --- the server broke the protocol -------------------------------------------------------


class ProtocolError(MCPTasksError):
    """The peer sent something the protocol does not allow."""


class DecodeError(ProtocolError):
    """Server input could not be decoded: not JSON, a missing field, a wrong type, an unknown value.

    ``path`` is a JSON path into the message (``$.result.task.status``), ``problem`` says what is
    wrong there, and ``value`` is the offending value when there is one.
    """

    def __init__(self, path: str, problem: str, value: Any = None) -> None:
        self.path = path
        self.problem = problem
        self.value = value
        super().__init__(f"{path}: {problem}")

    def under(self, prefix: str) -> DecodeError:
        """The same error with its path moved under ``prefix`` (``$.result`` + ``$.task`` ...)."""
        rest = self.path.removeprefix("$")
        return DecodeError(prefix + rest, self.problem, self.value)


class UnexpectedResponse(ProtocolError):
    """A JSON-RPC response arrived whose id matches no request this client sent."""

    def __init__(self, message_id: Any) -> None:
        self.message_id = message_id
        super().__init__(f"response with id {message_id!r} matches no request this client sent")


class UnsupportedProtocolVersion(ProtocolError):
    """The server negotiated a protocol version this client does not speak (C-08, A-20)."""

    def __init__(self, requested: str, offered: Sequence[str]) -> None:
        self.requested = requested
        self.offered = tuple(offered)
        super().__init__(
            f"asked for protocol version {requested!r}, server offered {list(self.offered)!r}"
        )


# --- the server answered with a JSON-RPC error --------------------------------------------


class RPCError(MCPTasksError):
    """The server answered a request with a JSON-RPC error object; code, message, data kept."""

    code: int
    message: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None):
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"JSON-RPC error {code}{where}: {message}")

    @staticmethod
    def from_error(
        code: int, message: str, data: Any = None, *, method: str | None = None
    ) -> RPCError:
        """The most specific subclass for ``code``."""
        cls = _RPC_ERROR_CLASSES.get(code, RPCError)
        return cls(code, message, data, method=method)


class MethodNotFound(RPCError):
    """JSON-RPC -32601: the server does not serve this method (or a capability is missing)."""


class InvalidParams(RPCError):
    """JSON-RPC -32602: bad params, an unknown task id, an invalid cursor."""


_RPC_ERROR_CLASSES: dict[int, type[RPCError]] = {-32601: MethodNotFound, -32602: InvalidParams}


# --- moving bytes ------------------------------------------------------------------------------


class TransportError(MCPTasksError):
    """Bytes could not be moved to or from the server."""


class TransportClosed(TransportError):
    """The transport is closed (by the caller, or the peer went away)."""


class SessionExpired(TransportError):
    """HTTP 404 on a request carrying a session id: the server ended the session (X:214).

    The library does not re-initialise on its own; open a new client if that is what you want.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"the server no longer knows session {session_id!r} (HTTP 404)")


class HTTPStatusError(TransportError):
    """The server answered with an HTTP status the protocol gives no meaning to here."""

    def __init__(self, status_code: int, body: str, *, method: str | None = None) -> None:
        self.status_code = status_code
        self.body = body
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"HTTP {status_code}{where}: {body[:500]}")


class GetStreamUnavailable(TransportError):
    """The server does not offer the standalone GET stream (HTTP 405, X:141)."""


class StreamInterrupted(TransportError):
    """An SSE response stream ended before its JSON-RPC response arrived.

    ``last_event_id`` is the last event id seen (``None`` when the stream cannot be resumed).
    """

    def __init__(self, last_event_id: str | None, *, method: str | None = None) -> None:
        self.last_event_id = last_event_id
        self.method = method
        where = f" of {method}" if method else ""
        super().__init__(
            f"the response stream{where} ended early (last event id {last_event_id!r})"
        )


class ProcessExited(TransportError):
    """The server child process exited; its return code and the tail of its stderr are kept."""

    def __init__(self, returncode: int | None, stderr_tail: str) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        super().__init__(
            f"server process exited with code {returncode}; stderr: {stderr_tail[-500:]!r}"
        )


# --- deadlines -----------------------------------------------------------------------------------


class RequestTimeout(MCPTasksError):
    """A request did not get its response within the timeout the caller set."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} got no response within {timeout:g} s")
