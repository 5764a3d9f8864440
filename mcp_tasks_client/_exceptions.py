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

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "BackedOff",
    "CapabilityNotNegotiated",
    "ClientClosed",
    "CreatedTaskUnreadable",
    "DeadlineExceeded",
    "DecodeError",
    "FallingBehind",
    "GetStreamUnavailable",
    "HTTPStatusError",
    "HeaderMismatch",
    "IllegalTransition",
    "InFlightResized",
    "InputNotHandled",
    "InputRequired",
    "InputStuck",
    "InvalidParams",
    "InvalidToolAnnotation",
    "LenientCacheHint",
    "LimitExceeded",
    "MCPTasksError",
    "MethodNotFound",
    "MissingClientCapability",
    "PollIntervalCapped",
    "ProcessExited",
    "ProtocolError",
    "ProtocolVersionRefused",
    "RPCError",
    "RedirectRefused",
    "RequestTimeout",
    "SdkUnsupported",
    "ServerBusy",
    "SessionExpired",
    "StreamInterrupted",
    "TLSError",
    "TaskAugmentationNotAllowed",
    "TaskAugmentationRequired",
    "TaskNotCancellable",
    "TaskNotCompleted",
    "TaskNotFound",
    "TransportClosed",
    "TransportError",
    "UnexpectedPlainResult",
    "UnexpectedResponse",
    "UnknownExtensionRevision",
    "UnknownRelatedTask",
    "UnknownValue",
    "UnsupportedInGeneration",
    "UnsupportedProtocolVersion",
    "UsageError",
]


class MCPTasksError(Exception):
    """Base of every exception this library raises."""


# --- the caller -----------------------------------------------------------------------------


class UsageError(MCPTasksError):
    """The caller asked for something the library cannot do as asked (wrong state, bad argument)."""


class UnsupportedInGeneration(UsageError):
    """The operation has no meaning in the client's protocol generation (``tasks/list`` and
    ``tasks/result`` in 2026-07-28, ``tasks/update`` in 2025-11-25 ...)."""

    def __init__(self, operation: str, generation: str, instead: str | None = None) -> None:
        self.operation = operation
        self.generation = generation
        hint = f"; {instead}" if instead else ""
        super().__init__(f"{operation} does not exist in protocol generation {generation}{hint}")


class CapabilityNotNegotiated(UsageError):
    """The request needs a server capability the handshake did not agree on (C-11, C-16, C-28)."""

    def __init__(self, capability: str, *, rule: str) -> None:
        self.capability = capability
        self.rule = rule
        super().__init__(f"the server did not declare {capability} ({rule})")


class UnknownExtensionRevision(CapabilityNotNegotiated):
    """The server's settings for an extension carry a ``revision`` this client does not
    implement (``revision``: as the server sent it; ``known``: the revisions it implements,
    None for "no revision string"). A peer that receives a revision it does not know SHOULD
    NOT enable the extension (SEP-3392, a draft): the client does not use it, never guesses.
    Raised before a request that would declare the extension is sent."""

    def __init__(
        self, extension: str, revision: object, known: Sequence[str | None], *, where: str
    ) -> None:
        self.extension = extension
        self.revision = revision
        self.known = list(known)
        self.where = where
        self.capability = f"extensions[{extension!r}]"
        self.rule = "SEP-3392"
        names = ", ".join("none" if k is None else repr(k) for k in self.known)
        UsageError.__init__(
            self,
            f"{where} gives the extension {extension!r} revision {revision!r}, which this "
            f"client does not implement (it implements: {names}): the extension is not used. "
            "Use a client version that implements it, or call without tasks",
        )


class TaskAugmentationRequired(UsageError):
    """The tool must be called as a task (``taskSupport: "required"``, C-17): use ``.as_task()``.

    Raised before sending when the caller's tool metadata says so, and after, when the server
    refuses the plain call: 2025-11-25 with -32601, or an ``isError`` result saying so (as both
    SDK peers do); 2026-07-28 with -32021 naming the tasks extension (E S3, E C52).

    What the server answered is kept on the error itself (the same ``RPCError`` is also its
    ``__cause__``): ``server_said`` its message or error text, ``code`` its JSON-RPC code
    (``-32021``, ``-32601``; ``None`` when it refused with an ``isError`` result, or nothing was
    sent), ``data`` its error ``data``, and ``required_capabilities`` the ``-32021`` error's
    ``data.requiredCapabilities`` as sent (``{"extensions": {"io.modelcontextprotocol/tasks":
    {}}}``; ``{}`` otherwise).
    """

    def __init__(
        self, tool: str, *, server_said: str | None = None, refusal: RPCError | None = None
    ) -> None:
        self.tool = tool
        self.server_said = server_said
        self.code: int | None = refusal.code if refusal is not None else None
        self.data: Any = refusal.data if refusal is not None else None
        self.required_capabilities: Mapping[str, Any] = (
            refusal.required if isinstance(refusal, MissingClientCapability) else {}
        )
        said = f"; the server said: {server_said}" if server_said else ""
        super().__init__(f"tool {tool!r} must be called as a task: use ToolCall.as_task(){said}")


class TaskAugmentationNotAllowed(UsageError):
    """The tool may not be called as a task (``taskSupport`` absent or ``"forbidden"``, C-17)."""

    def __init__(self, tool: str, *, server_said: str | None = None) -> None:
        self.tool = tool
        self.server_said = server_said
        said = f"; the server said: {server_said}" if server_said else ""
        super().__init__(f"tool {tool!r} does not run as a task: call it plainly{said}")


class UnknownRelatedTask(UsageError):
    """A call names related task ids (``ToolCall.related_to``) this client cannot vouch came
    from its server: it never read them from it, and no journal entry recorded them for it.
    Nothing was sent. ``task_ids`` are those ids; ``server`` is this client's server identity.
    """

    def __init__(self, task_ids: Sequence[str], server: str, *, elsewhere: Sequence[str] = ()):
        self.task_ids = list(task_ids)
        self.server = server
        self.elsewhere = list(elsewhere)
        """Of ``task_ids``, those a journal entry recorded for another server."""
        recorded = f" (recorded for another server: {self.elsewhere!r})" if elsewhere else ""
        super().__init__(
            f"related task ids {self.task_ids!r} were not returned by this client's server "
            f"{server}{recorded}: relatedTaskIds should name only tasks the same server "
            "returned, never ids a language model wrote. Pass a CreateTaskResult, Task or "
            "JournalEntry this server gave, or related_to(..., from_elsewhere=True) when you "
            "know where the ids came from"
        )


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
        return type(self)(prefix + rest, self.problem, self.value)


class UnknownValue(DecodeError):
    """A string where the protocol has a closed set (a task status, a taskSupport value)."""


class CreatedTaskUnreadable(DecodeError):
    """The answer to a task call names a task but could not be decoded as a CreateTaskResult.

    The task exists on the server: ``task_id`` is kept so the caller can poll, cancel or log it
    (nothing the server returned is lost). ``raw`` is the result object as received.
    """

    def __init__(self, path: str, problem: str, value: Any = None, *, task_id: str, raw: Any):
        self.task_id = task_id
        self.raw = raw
        super().__init__(path, f"{problem} (task {task_id!r} was created)", value)

    def under(self, prefix: str) -> DecodeError:
        rest = self.path.removeprefix("$")
        return CreatedTaskUnreadable(
            prefix + rest, self.problem, self.value, task_id=self.task_id, raw=self.raw
        )


class LimitExceeded(ProtocolError):
    """The server sent more than a limit the caller set (or its documented default) allows.

    ``limit`` names the :class:`~mcp_tasks_client.Limits` field, ``maximum`` is its value, and
    ``where`` says what exceeded it (an HTTP body, an SSE line, a stdio line ...). Nothing beyond
    the limit was buffered.
    """

    def __init__(self, limit: str, maximum: int, where: str) -> None:
        self.limit = limit
        self.maximum = maximum
        self.where = where
        super().__init__(f"{where} exceeds Limits.{limit}={maximum}")


class UnexpectedResponse(ProtocolError):
    """A JSON-RPC response arrived whose id matches no request this client sent."""

    def __init__(self, message_id: Any) -> None:
        self.message_id = message_id
        super().__init__(f"response with id {message_id!r} matches no request this client sent")


class IllegalTransition(ProtocolError):
    """A task's status changed after it was terminal (T:404-407, V-09)."""

    def __init__(self, task_id: str, previous: str, observed: str) -> None:
        self.task_id = task_id
        self.previous = previous
        self.observed = observed
        super().__init__(f"task {task_id!r} went from terminal {previous!r} to {observed!r}")


class InvalidToolAnnotation(ProtocolError):
    """A 2026-07-28 tool's ``x-mcp-header`` annotations are invalid (E C60): the tool is left
    out of ``list_tools`` and no ``Mcp-Param-*`` header is derived from it. Reported as a
    warning (``Client.warnings``, ``on_warning``) and a WARNING log record."""

    def __init__(self, tool: str, reason: str) -> None:
        self.tool = tool
        self.reason = reason
        super().__init__(f"tool {tool!r} left out: {reason}")


class UnexpectedPlainResult(ProtocolError):
    """A task-augmented call was answered with a plain result although the server declared
    ``tasks.requests.tools.call``; the result is kept in ``result``.

    When that result is an error (``isError``: a misspelt tool, arguments the tool refuses),
    ``server_said`` is its text and the message ends with it: the server refused the call
    before making a task, and its reason is what the caller needs."""

    def __init__(self, tool: str, result: object, *, server_said: str | None = None) -> None:
        self.tool = tool
        self.result = result
        self.server_said = server_said
        if server_said is not None:
            said = server_said or "(an isError result with no text)"
            message = f"the server refused the task-augmented call of {tool!r}: {said}"
        else:
            message = f"the task-augmented call of {tool!r} got a plain result, not a task"
        super().__init__(message)

    @property
    def refused(self) -> bool:
        """The plain result is an error (``isError``): the server refused the call."""
        return self.server_said is not None


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


class TaskNotFound(InvalidParams):
    """-32602 to a ``tasks/*`` request naming a task: unknown, expired, or another session's
    (T:768-770, A-21)."""


class TaskNotCancellable(InvalidParams):
    """-32602 to ``tasks/cancel``: the task is already terminal, or unknown (T:494, V-14)."""


class HeaderMismatch(RPCError):
    """-32020 (2026-07-28): an HTTP header disagreed with the body, or a required one was
    missing or malformed (E C51)."""


class MissingClientCapability(RPCError):
    """-32021 (2026-07-28): the request lacked a client capability the server needs; the
    ones it named are in :attr:`required` (E C52)."""

    @property
    def required(self) -> Mapping[str, Any]:
        """``data.requiredCapabilities`` as sent (``{"extensions": {...}}``), or ``{}``."""
        data = self.data if isinstance(self.data, dict) else {}
        required = data.get("requiredCapabilities")
        return required if isinstance(required, dict) else {}

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extension identifiers the server named as required."""
        extensions = self.required.get("extensions")
        return tuple(extensions) if isinstance(extensions, dict) else ()


class ProtocolVersionRefused(RPCError):
    """-32022 (2026-07-28): the server does not speak the requested protocol version; the
    ones it does are in :attr:`supported` (E C53). The client does not retry on its own."""

    @property
    def supported(self) -> tuple[str, ...]:
        data = self.data if isinstance(self.data, dict) else {}
        listed = data.get("supported")
        return tuple(v for v in listed if isinstance(v, str)) if isinstance(listed, list) else ()

    @property
    def requested(self) -> str | None:
        data = self.data if isinstance(self.data, dict) else {}
        requested = data.get("requested")
        return requested if isinstance(requested, str) else None


_RPC_ERROR_CLASSES: dict[int, type[RPCError]] = {
    -32601: MethodNotFound,
    -32602: InvalidParams,
    -32020: HeaderMismatch,
    -32021: MissingClientCapability,
    -32022: ProtocolVersionRefused,
}


# --- moving bytes ------------------------------------------------------------------------------


class TransportError(MCPTasksError):
    """Bytes could not be moved to or from the server."""


class TransportClosed(TransportError):
    """The transport is closed (by the caller, or the peer went away)."""


class ClientClosed(TransportClosed):
    """The caller closed the Client: every request and wait still pending ends with this."""

    def __init__(self, detail: str = "the client was closed") -> None:
        super().__init__(detail)


class SessionExpired(TransportError):
    """HTTP 404 on a request carrying a session id: the server ended the session (X:214).

    The library does not re-initialise on its own; open a new client if that is what you want.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"the server no longer knows session {session_id!r} (HTTP 404)")


class HTTPStatusError(TransportError):
    """The server answered with an HTTP status the protocol gives no meaning to here.

    ``body`` is the start of the answer's body (at most ``Limits.max_error_body_bytes``).
    """

    def __init__(self, status_code: int, body: str, *, method: str | None = None) -> None:
        self.status_code = status_code
        self.body = body
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"HTTP {status_code}{where}: {body[:500]}")


class PollIntervalCapped(ProtocolError):
    """A task's ``pollInterval`` was past ``PollPolicy.max_server_interval``: the task is
    polled at that bound instead, and by its ttl's end or the waits' latest deadline. Kept in
    ``Poller.warnings`` (once per task), never raised."""

    def __init__(self, task_id: str, interval: float, cap: float) -> None:
        self.task_id = task_id
        self.interval = interval
        self.cap = cap
        super().__init__(
            f"task {task_id!r}: pollInterval {interval:g} s is past "
            f"PollPolicy.max_server_interval ({cap:g} s): polled at least that often, and by "
            "the task's ttl or the caller's deadline"
        )


class LenientCacheHint(ProtocolError):
    """A cacheable result's ``ttlMs`` or ``cacheScope`` (2026-07-28, SEP-2549) was malformed
    and read the safe way: ``ttlMs`` as 0 (stale at once), ``cacheScope`` as ``"private"``.
    The result itself is returned; kept in ``Client.warnings``, never raised."""

    def __init__(self, method: str, problem: str) -> None:
        self.method = method
        self.problem = problem
        super().__init__(f"{method}: {problem}")


class ServerBusy(HTTPStatusError):
    """HTTP 429 or 503: the server asks the client to come back later.

    ``retry_after`` is the server's ``Retry-After`` in seconds (``None`` when absent or
    unreadable). The library does not retry on its own: the caller decides.
    """

    def __init__(
        self,
        status_code: int,
        body: str,
        *,
        retry_after: float | None,
        method: str | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(status_code, body, method=method)


class BackedOff(ServerBusy):
    """Under ``PollPolicy(on_busy=BusyPolicy.BACK_OFF)``: the server answered the Poller's
    ``method`` (``tasks/get`` or ``tasks/update``) for ``task_id`` busy, and it is sent again
    after ``wait`` seconds (never sooner than ``retry_after``). One in ``Poller.warnings`` per
    backoff, never raised: a wait that cannot back off ends with the ServerBusy itself."""

    def __init__(self, busy: ServerBusy, task_id: str, wait: float, in_row: int) -> None:
        self.task_id = task_id
        self.wait = wait
        self.in_row = in_row
        method = busy.method or "request"
        super().__init__(
            busy.status_code, busy.body, retry_after=busy.retry_after, method=busy.method
        )
        after = "none" if busy.retry_after is None else f"{busy.retry_after:g} s"
        self.args = (
            f"task {task_id!r}: HTTP {busy.status_code} to {method} (Retry-After: {after}; "
            f"{in_row} in a row): sent again in {wait:.3g} s (PollPolicy.on_busy=BACK_OFF)",
        )


class FallingBehind(MCPTasksError):
    """The Poller sends polls later than they were due, by more than
    ``PollPolicy.lateness_tolerance``: the in-flight bound, at the server's round trip, holds
    the poll rate under what the tasks' intervals ask for (at most ``limit / latency`` polls a
    second). Kept in ``Poller.warnings``, at most one every 10 s, never raised: nothing is
    changed by it.

    ``late``: how late the poll that tripped it was sent (s); ``worst`` and ``late_polls``: the
    latest poll and how many polls were late by more than the tolerance since the previous
    warning (this one included); ``waiting``: due polls waiting in line for a slot;
    ``in_flight``: polls in flight then; ``limit``: the in-flight bound then; ``latency``: the
    mean round trip of a ``tasks/get`` measured lately (None before any answered); ``cap``: the
    ``FollowLatency`` cap when the bound follows latency (None: fixed).
    """

    def __init__(
        self,
        *,
        late: float,
        worst: float,
        late_polls: int,
        waiting: int,
        in_flight: int,
        limit: int,
        latency: float | None,
        tolerance: float,
        cap: int | None = None,
    ) -> None:
        self.late, self.worst, self.late_polls = late, worst, late_polls
        self.waiting, self.in_flight, self.limit = waiting, in_flight, limit
        self.latency, self.tolerance, self.cap = latency, tolerance, cap
        if latency is None or latency <= 0:
            rate = "no round trip measured yet"
        else:
            rate = f"round trip {latency:.3g} s: at most {limit / latency:,.0f} polls/s"
        if cap is None:
            advice = (
                "raise PollPolicy.max_in_flight (over HTTP, the transport's pool too), or "
                "opt in to PollPolicy(in_flight=FollowLatency(cap=...))"
            )
        elif limit >= cap:
            advice = f"the bound follows latency and is at its cap ({cap}): raise the cap"
        else:
            advice = f"the bound follows latency (cap {cap}) and is being resized"
        super().__init__(
            f"polls are falling behind: one sent {late:.3g} s after it was due (tolerance "
            f"{tolerance:g} s; {late_polls} late since the last warning, the latest "
            f"{worst:.3g} s); {waiting} due polls waiting for a slot, {in_flight} in flight of "
            f"{limit}; {rate}: {advice}"
        )

    @property
    def max_rate(self) -> float | None:
        """The most polls a second the bound allows at the measured round trip
        (``limit / latency``), or None before any round trip was measured."""
        if self.latency is None or self.latency <= 0:
            return None
        return self.limit / self.latency


class InFlightResized(MCPTasksError):
    """Under ``PollPolicy(in_flight=FollowLatency(cap=...))``: the Poller changed its in-flight
    bound from ``before`` to ``after`` (never over ``cap``, never under
    ``PollPolicy.max_in_flight``), sized to the measured round trip (``latency``, s) and the
    poll rate the ``tracked`` tasks need (``needed_rate``, polls a second; ``needed``: the
    bound that rate asks for, with the headroom, before the cap). Kept in ``Poller.warnings``
    (an INFO log record), never raised: the caller opted in, and sees each resize."""

    def __init__(
        self,
        *,
        before: int,
        after: int,
        latency: float,
        needed_rate: float,
        needed: int,
        tracked: int,
        cap: int,
    ) -> None:
        self.before, self.after, self.cap = before, after, cap
        self.latency, self.needed_rate, self.needed, self.tracked = (
            latency,
            needed_rate,
            needed,
            tracked,
        )
        capped = f" (capped at {cap}: {needed} needed)" if needed > after else ""
        super().__init__(
            f"in-flight bound {before} -> {after}{capped}: {tracked} tasks need "
            f"{needed_rate:,.0f} polls/s at a round trip of {latency:.3g} s "
            "(PollPolicy.in_flight=FollowLatency)"
        )


class RedirectRefused(TransportError):
    """The server answered with a redirect (3xx). The library never follows one: the session id
    and the caller's headers must not reach another URL. Point the transport at ``location``
    yourself if you trust it."""

    def __init__(self, status_code: int, location: str | None, *, method: str | None = None):
        self.status_code = status_code
        self.location = location
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"HTTP {status_code}{where}: redirect to {location!r} not followed")


class TLSError(TransportError):
    """The TLS handshake failed; ``reason`` is what the TLS layer said (an unknown issuer, an
    expired or self-signed certificate, a host name mismatch)."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"TLS with {url} failed: {reason}")


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


class DeadlineExceeded(MCPTasksError, TimeoutError):
    """A wait reached the caller's deadline before every task it waited on had an outcome.

    The tasks may still run. ``task_ids`` are those without an outcome, ``snapshots`` the last
    status seen of each, ``cancel_sent`` those the policy sent ``tasks/cancel`` for.
    """

    def __init__(
        self,
        task_ids: Sequence[str],
        snapshots: Mapping[str, object],
        *,
        cancel_sent: Sequence[str] = (),
    ) -> None:
        self.task_ids = tuple(task_ids)
        self.snapshots = dict(snapshots)
        self.cancel_sent = tuple(cancel_sent)
        super().__init__(f"no outcome before the deadline for {list(self.task_ids)!r}")


class InputNotHandled(MCPTasksError):
    """A task asked for input no handler was registered for; the server got a JSON-RPC error.

    Raised from the task's wait when the policy says so (UnhandledInputPolicy.FAIL).
    """

    def __init__(self, task_id: str, method: str, request_id: object) -> None:
        self.task_id = task_id
        self.method = method
        self.request_id = request_id
        super().__init__(
            f"task {task_id!r} asked for {method} (request {request_id!r}) and no handler "
            "was registered: register one with InputRouter, or a default"
        )


class InputRequired(MCPTasksError):
    """A 2026-07-28 request was answered ``input_required`` (MRTR, E C45-C48) and no handler
    was given for it: the decision is the caller's. ``answer`` holds the input requests and the
    request state; build the retry with ``ToolCall.answering(answer, responses)``."""

    def __init__(self, method: str, name: str | None, answer: Any) -> None:
        self.method = method
        self.name = name
        self.answer = answer
        keys = sorted((getattr(answer, "input_requests", None) or {}).keys())
        super().__init__(
            f"{method} {name or ''} needs input first (keys {keys!r}): answer them and retry "
            "(ToolCall.answering), or pass handlers for the call"
        )


class InputStuck(MCPTasksError):
    """A 2026-07-28 task kept showing ``input_required`` for ``polls`` snapshots in a row
    after every question it asked was answered (``PollPolicy.stuck_input_polls``). ``keys``
    are the ones it still shows. The task is not cancelled: that is the caller's decision."""

    def __init__(self, task_id: str, keys: Sequence[str], polls: int) -> None:
        self.task_id = task_id
        self.keys = tuple(keys)
        self.polls = polls
        super().__init__(
            f"task {task_id!r} still asks for {list(self.keys)!r} after {polls} snapshots "
            "with every question answered"
        )


class RequestTimeout(MCPTasksError, TimeoutError):
    """A request did not get its response within the timeout the caller set."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} got no response within {timeout:g} s")


# The public path: ``mcp_tasks_client.errors`` re-exports every class of this module and sets
# their ``__module__`` to itself, but the package imports its modules lazily now, so a program
# may raise one before anything imported ``errors``: set here too, so a traceback always names
# the import that works (``journal`` does the same for its two).
for _value in list(globals().values()):
    if (
        isinstance(_value, type)
        and issubclass(_value, BaseException)
        and (_value.__module__ == __name__)
    ):
        _value.__module__ = "mcp_tasks_client.errors"
del _value


class SdkUnsupported(UsageError):
    """The official SDK object given cannot carry what was asked, said before anything is sent
    (``mcp_tasks_client.sdk``): it is not an SDK ``ClientSession`` of a tested major, or it
    lacks what the asked behaviour needs (the message names which, and what to do instead)."""


class TaskNotCompleted(MCPTasksError):
    """A task the SDK's ``call_tool`` handed to ``mcp_tasks_client.sdk.TasksExtension`` ended
    without a result (failed without one, cancelled, expired, lost): ``outcome`` says how,
    ``task_id`` which."""

    def __init__(self, task_id: str, outcome: Any) -> None:
        self.task_id = task_id
        self.outcome = outcome
        super().__init__(f"task {task_id!r} ended {type(outcome).__name__.lower()}: {outcome!r}")
