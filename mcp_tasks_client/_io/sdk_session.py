"""A transport over a session of the official MCP Python SDK (mcp 1.x or 2.x) a host already holds.

Its one job: to carry this library's JSON-RPC messages over a connection someone else opened,
the host's ``mcp.ClientSession`` (or the one inside an ``mcp.Client`` or a fastmcp client), so
that the host keeps its auth, transport, callbacks and tool listing, and this library sends no
``initialize`` of its own and opens no second connection.

May import: ``_io.base``, ``models``, ``_exceptions``, ``_limits``. The SDK itself only inside
functions, by duck typing: importing this module never imports ``mcp``.

Theory of operation. The SDK session owns the wire: the connection, its auth, the reader, the
server's requests. This transport hands each request of ours to the session as this library
wrote it: on mcp 2.x through the session's dispatcher (``send_raw_request``, with our own
request id, our ``_meta`` and the headers our driver computed, so the SDK neither re-stamps
the request nor judges the answer by its own tables); on mcp 1.x through the public
``send_request``, as a raw request object (its ``model_dump`` is our method and params) with a
result type that keeps the raw result. The answer (or the SDK's ``McpError`` / ``MCPError``)
becomes a JSON-RPC message with our own id again. A request whose answer only its caller
needs runs in the caller's task (``inline_requests``); the others (a task call whose answer is
read after its caller stopped waiting, a held ``tasks/result``) run in the transport's own
task group and answer through :meth:`SdkSessionTransport.receive`.

Server->client requests arrive at the SDK session, which calls the host's callbacks. With
``route=True`` (what :func:`mcp_tasks_client.sdk.open_client` asks for on a 2025-11-25
connection) the transport puts a router in front of the session's sampling and elicitation
callbacks and its message handler, by one rule: **a request whose ``_meta`` names, in
``io.modelcontextprotocol/related-task``, a task this client follows goes to this client (its
InputRouter); every other request goes to the host's own callback, unchanged.** A task this
client follows is one a task call it sent created, or one it named in a ``tasks/*`` request (a
resumed or adopted task). Task status and progress notifications are handed to this client
and to the host's message handler both (observing is harmless twice; answering is not). The
router is taken out again when the transport closes. One transport routes one SDK session at a
time (a second raises UsageError). What the transports over one SDK session share (which one
routes, their id numbering, which take pushes) is that session's :class:`SdkSessionBridge`,
kept on the session itself: no module state.

Differences between the SDK majors are kept in :class:`_Major`: what a read timeout is (a
``timedelta`` in 1.x, seconds in 2.x), and who sends ``notifications/cancelled`` for a request
this client abandons (mcp 2.x does, itself; for mcp 1.x this transport translates ours to the
SDK's request id).
"""

from __future__ import annotations

import collections
import datetime as dt
import importlib
import itertools
import math
from collections.abc import Awaitable, Callable, Mapping, MutableSet
from types import TracebackType
from typing import Any, Protocol

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._exceptions import (
    DecodeError,
    SdkUnsupported,
    TransportClosed,
    TransportError,
    UsageError,
)
from ..models import (
    ErrorObject,
    InitializeResult,
    JSONObject,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from .base import HeadersFor, Incoming, Transport, TransportFault

__all__ = ["RELATED_TASK", "PushOwner", "SdkSessionBridge", "SdkSessionTransport", "deliver_pushed"]

RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key that ties a server's request or notification to a task (C-25)."""

FOLLOWED_CAP = 10_000
"""How many task ids a transport remembers as followed (the oldest forgotten first)."""

_NO_LISTEN = (
    "subscriptions/listen is not carried over this official SDK session: the SDK drops the "
    "notifications/tasks no binding takes, so nothing would arrive (a TasksExtension on the "
    "SDK client binds them); the tasks are polled"
)
_CONNECTION_CLOSED = -32000
_ROUTED = ("_sampling_callback", "_elicitation_callback", "_message_handler")
_ROUTED_METHODS = {
    "_sampling_callback": "sampling/createMessage",
    "_elicitation_callback": "elicitation/create",
}
_NOTIFIED = frozenset({"notifications/tasks/status", "notifications/progress"})
_BRIDGE = "_mcp_tasks_client_bridge"
"""The attribute of a host's SDK session that holds this library's :class:`SdkSessionBridge`."""
_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_PUSHED = frozenset({"notifications/tasks", "notifications/subscriptions/acknowledged"})


class PushOwner(Protocol):
    """What hands pushed notifications to this library's transports (a TasksExtension, whose
    notification binding the SDK calls): it keeps the bridges of the SDK sessions bound to
    it, and hands each push to them (:func:`deliver_pushed`)."""

    bridges: MutableSet[SdkSessionBridge]


class SdkSessionBridge:
    """What this library keeps for one host SDK session, held by that session itself (its
    ``_mcp_tasks_client_bridge`` attribute), never in module state: several clients of this
    library (a TasksExtension's, one per call) may share one SDK session, and what they share
    lives and dies with it.

    It keeps: the transport that routes the session's server requests (one at a time); the
    numbering of the transports over the session (each prefixes its request ids with its own
    number, so two never send the same id); and the transports that take pushed task
    notifications, with the host's message handler it stands in front of while any is open
    (``notifications/subscriptions/acknowledged`` reaches the SDK's message handler; the
    SDK hands ``notifications/tasks`` to a binding, the TasksExtension's, which calls
    :func:`deliver_pushed`)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.router: SdkSessionTransport | None = None
        """The transport routing this session's server requests, if one is open."""
        self.numbers = itertools.count(1)
        """The numbers of the transports made over this session (their request-id prefixes)."""
        self.pushing: list[SdkSessionTransport] = []
        """The open transports that take pushed task notifications."""
        self._host: Any = None
        self._owner: PushOwner | None = None

    @classmethod
    def of(cls, session: Any) -> SdkSessionBridge:
        """The session's bridge, made on first use."""
        bridge = getattr(session, _BRIDGE, None)
        if not isinstance(bridge, cls):
            bridge = cls(session)
            setattr(session, _BRIDGE, bridge)
        return bridge

    def take_pushes(self, transport: SdkSessionTransport) -> None:
        """``transport`` takes pushed notifications from now on (until :meth:`drop_pushes`)."""
        if not self.pushing:
            self._host = self.session._message_handler
            self.session._message_handler = self.route
            self._owner = _push_owner(self.session)
            if self._owner is not None:
                self._owner.bridges.add(self)
        self.pushing.append(transport)

    def drop_pushes(self, transport: SdkSessionTransport) -> None:
        if transport not in self.pushing:
            return
        self.pushing.remove(transport)
        if not self.pushing:
            self.session._message_handler = self._host
            self._host = None
            if self._owner is not None:
                self._owner.bridges.discard(self)
                self._owner = None

    async def route(self, message: Any) -> None:
        """In front of the host's message handler: an acknowledged listen (or a push the SDK
        hands the message handler) to every transport that takes pushes, then to the host."""
        method = getattr(message, "method", None)
        if method in _PUSHED and hasattr(message, "model_dump"):
            raw = message.model_dump(by_alias=True, mode="json", exclude_none=True)
            params = raw.get("params")
            self.deliver(method, params if isinstance(params, dict) else None)
        await self._host(message)

    def deliver(self, method: str, params: JSONObject | None) -> None:
        for transport in list(self.pushing):
            transport.pushed(method, params)


def _push_owner(session: Any) -> PushOwner | None:
    """Whoever the SDK session hands ``notifications/tasks`` to, if it keeps bridges (mcp 2.x
    with a TasksExtension); None otherwise (nothing would hand a push over)."""
    bindings = getattr(session, "_notification_bindings", None) or {}
    binding = bindings.get("notifications/tasks")
    owner = getattr(getattr(binding, "handler", None), "__self__", None)
    return owner if isinstance(getattr(owner, "bridges", None), MutableSet) else None


def deliver_pushed(owner: PushOwner, method: str, params: JSONObject | None) -> None:
    """A pushed notification the SDK handed ``owner``'s binding (a TasksExtension's): to every
    transport of this library that takes pushes over an SDK session bound to ``owner`` (a
    transport reads the subscription ids it knows as its own)."""
    for bridge in list(owner.bridges):
        bridge.deliver(method, params)


class _RawRequest:
    """A request object mcp 1.x's ``send_request`` sends as it is (duck-typed as its models)."""

    def __init__(self, method: str, params: JSONObject | None) -> None:
        self.method = method
        self.params = params

    def model_dump(self, **_: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method}
        if self.params is not None:
            out["params"] = dict(self.params)
        return out


class _RawResult:
    """A result type that keeps the raw result (``model_validate`` is the identity)."""

    @classmethod
    def model_validate(cls, obj: Any, **_: Any) -> Any:
        return obj


class _Major:
    """What differs between mcp 1.x and 2.x for this transport."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.v2 = hasattr(session, "_dispatcher")
        if not callable(getattr(session, "send_request", None)):
            raise SdkUnsupported(
                f"{type(session).__name__} is not an official SDK ClientSession (it has no "
                "send_request); give the mcp ClientSession itself (mcp.Client: its .session; a "
                "fastmcp Client: its .session, once connected)"
            )
        types_module = "mcp_types" if self.v2 else "mcp.types"
        try:
            self.types = importlib.import_module(types_module)
        except ImportError:  # pragma: no cover - an SDK session without its types module
            raise SdkUnsupported(
                f"the SDK session's types ({types_module}) cannot be imported"
            ) from None

    def timeout(self, seconds: float) -> Any:
        seconds = min(seconds, 86_400.0)
        return seconds if self.v2 else dt.timedelta(seconds=seconds)

    @property
    def cancels_itself(self) -> bool:
        """mcp 2.x sends ``notifications/cancelled`` itself for a request whose caller stopped
        waiting (and aborts the POST on the stateless wire)."""
        return self.v2

    async def send_raw(
        self, message: JSONRPCRequest, headers: Mapping[str, str], timeout: float, prefix: str
    ) -> Any:
        """mcp 2.x: the request as this library wrote it (its ``_meta``, its headers, an id
        of its own), through the session's dispatcher: the host's transport and auth carry it,
        and the SDK neither re-stamps it nor judges the answer by its own tables (it would read
        a 2025-11-25 task call's CreateTaskResult as a plain CallToolResult). ``prefix`` makes
        the id this transport's alone: several clients of this library (a TasksExtension's,
        one per call) may share one SDK session, each numbering its requests from 1."""
        opts: dict[str, Any] = {"timeout": timeout, "request_id": f"{prefix}{message.id}"}
        if headers:
            opts["headers"] = dict(headers)
        return await self.session._dispatcher.send_raw_request(message.method, message.params, opts)

    def next_id(self) -> Any:
        """mcp 1.x: the id the session gives the next request (read just before it is sent)."""
        return getattr(self.session, "_request_id", None)

    def error_of(self, exc: BaseException) -> tuple[int, str, Any] | None:
        error = getattr(exc, "error", None)
        code = getattr(error, "code", None)
        message = getattr(error, "message", None)
        if isinstance(code, int) and isinstance(message, str):
            return code, message, getattr(error, "data", None)
        return None

    def notification(self, method: str, params: JSONObject | None) -> Any:
        return _RawRequest(method, params)

    def answer(self, method: str, result: JSONObject | None, error: ErrorObject | None) -> Any:
        """Our answer to a routed server request, as the type the SDK's callback returns."""
        if error is not None:
            return self.types.ErrorData(code=error.code, message=error.message, data=error.data)
        name = "ElicitResult" if method == "elicitation/create" else "CreateMessageResult"
        return getattr(self.types, name).model_validate(result or {})


class _OneWriteAtATime:
    """mcp 1.x's streamable HTTP client starts each request's POST in a task that reads the
    message from a variable of its writer loop when it first runs (a late-bound closure): two
    messages written within one scheduler pass make it POST the second twice and lose the
    first, so one of two concurrent requests never gets an answer (seen with a poll and a
    cancel sent at once). This stands in for the session's write stream while the transport
    is open: writes go one at a time, each followed by two scheduler passes, so the writer
    loop's task for one message has read it before the next is offered. It serves every writer
    of the session (the host's requests too); the stream itself is untouched."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._lock = anyio.Lock()

    async def send(self, item: Any) -> None:
        async with self._lock:
            await self.inner.send(item)
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SdkSessionTransport(Transport):
    """This library's transport over an official SDK ``ClientSession`` the host opened.

    Use :func:`mcp_tasks_client.sdk.open_client` rather than this class directly: it reads what
    the SDK session agreed and declared. The transport neither opens nor closes the SDK session:
    the host's ``async with`` does, before and after this one.

    Args:
        session: The SDK's ``ClientSession`` (mcp 1.x or 2.x), already initialized.
        identity: Which server this is, for a journal (its URL): a task journaled through this
            transport is resumed by a transport with the same identity. Default: this
            session's own (it cannot be resumed from another process).
        route: Put the router of server requests in front of the session's callbacks (see the
            module's documentation). A 2025-11-25 connection needs it for the input a task asks
            for; 2026-07-28 asks for input inside ``tasks/get`` and needs none.
        agreed: What the SDK's ``initialize`` returned (2025-11-25), for the Client.
        session_id: The connection's ``Mcp-Session-Id`` (2025-11-25 over HTTP), for a journal.
        push: Take pushed task notifications (2026-07-28, mcp 2.x with the TasksExtension, whose
            binding hands them over): ``subscriptions/listen`` is carried; without it a listen
            is refused with SdkUnsupported (the SDK drops what no binding takes).
    """

    inline_requests = True

    def __init__(
        self,
        session: Any,
        *,
        identity: str | None = None,
        route: bool = False,
        agreed: InitializeResult | None = None,
        session_id: str | None = None,
        push: bool = False,
    ) -> None:
        self._major = _Major(session)
        self._push = push
        self._sdk = session
        self._identity = identity or f"sdk:{type(session).__name__}:{id(session):x}"
        self._route = route
        self._agreed = agreed
        self._session_id = session_id
        self._bridge = SdkSessionBridge.of(session)
        self._id_prefix = f"mcp-tasks-{next(self._bridge.numbers)}-"
        self._headers_for: HeadersFor | None = None
        self._followed: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._send: MemoryObjectSendStream[Incoming] | None = None
        self._recv: MemoryObjectReceiveStream[Incoming] | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._background: dict[RequestId, anyio.CancelScope] = {}
        self._sdk_ids: dict[RequestId, Any] = {}
        self._server_ids = itertools.count(1)
        self._answers: dict[str, _Pending] = {}
        self._saved: dict[str, Any] = {}
        self._saved_stream: Any = None
        self._protocol_version: str | None = None
        self._closed = False

    # -- life --------------------------------------------------------------------------------

    async def __aenter__(self) -> SdkSessionTransport:
        """Deadline: none (nothing is sent). Cancelled: nothing is left installed."""
        self._send, self._recv = anyio.create_memory_object_stream[Incoming](math.inf)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        if not self._major.v2 and hasattr(self._sdk, "_write_stream"):
            self._saved_stream = self._sdk._write_stream
            self._sdk._write_stream = _OneWriteAtATime(self._saved_stream)
        if self._push:
            self._bridge.take_pushes(self)
        if self._route:
            try:
                self._install_router()
            except BaseException:
                self._group.cancel_scope.cancel()
                await self._group.__aexit__(None, None, None)
                raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Deadline: none of its own (background requests are cancelled, not awaited).
        Cancelled: the close still completes; the host's callbacks are restored either way."""
        self._closed = True
        self._remove_router()
        self._bridge.drop_pushes(self)
        if self._saved_stream is not None:
            self._sdk._write_stream = self._saved_stream
            self._saved_stream = None
        for pending in self._answers.values():
            pending.fail(TransportClosed("the client over this SDK session closed"))
        if self._group is not None:
            self._group.cancel_scope.cancel()
            await self._group.__aexit__(None, None, None)
        if self._send is not None:
            self._send.close()

    # -- Transport ---------------------------------------------------------------------------

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def session(self) -> str | None:
        """The SDK connection's ``Mcp-Session-Id``, as the host gave it (the SDK session does
        not expose it): a journal keeps it, so a task is resumed on its session later."""
        return self._session_id

    @property
    def cancels_by_closing(self) -> bool:
        return self._major.cancels_itself

    @property
    def agreed(self) -> InitializeResult | None:
        """What the SDK's handshake agreed (2025-11-25): the Client sends no initialize."""
        return self._agreed

    @property
    def sdk_session(self) -> Any:
        """The SDK session this transport carries messages over."""
        return self._sdk

    def use_message_headers(self, headers_for: HeadersFor) -> None:
        self._headers_for = headers_for

    def check_serves(self, method: str) -> None:
        """A task's questions (elicitation, sampling) are routed here (2025-11-25; on
        2026-07-28 they come inside ``tasks/get`` and no such request arrives). The SDK answers
        every other server request itself: ``tasks/*`` (the client as a task receiver) with
        its own task handlers, ``roots/list`` with the host's callback."""
        if method in _ROUTED_METHODS.values():
            return
        raise SdkUnsupported(
            f"server->client {method} requests on an official SDK session are answered by the "
            "SDK (its callbacks, its task handlers), never by this library: only a task's "
            "elicitation/create and sampling/createMessage are routed here"
        )

    def pushed(self, method: str, params: JSONObject | None) -> None:
        """A pushed notification: delivered as it came, its subscription id (the listen's
        request id, E C41) read back as this client's own id when it names one of ours."""
        meta = params.get("_meta") if params is not None else None
        if params is not None and isinstance(meta, dict):
            subscription = meta.get(_SUBSCRIPTION_ID)
            if isinstance(subscription, str) and subscription.startswith(self._id_prefix):
                ours = subscription[len(self._id_prefix) :]
                params = {**params, "_meta": {**meta, _SUBSCRIPTION_ID: ours}}
        self._deliver(JSONRPCNotification(method, params))

    def follows(self, task_id: str) -> bool:
        """Whether a server request tied to ``task_id`` is routed to this client."""
        return task_id in self._followed

    def follow(self, task_id: str) -> None:
        """Route server requests tied to ``task_id`` to this client from now on."""
        self._followed[task_id] = None
        self._followed.move_to_end(task_id)
        while len(self._followed) > FOLLOWED_CAP:
            self._followed.popitem(last=False)

    async def exchange(
        self, message: JSONRPCRequest, *, held: bool = False, deadline: float = math.inf
    ) -> Incoming | None:
        """Deadline: ``deadline``, carried by the request's own cancel scope (TimeoutError past
        it). Cancelled: the SDK stops waiting for the answer (mcp 2.x tells the server)."""
        with anyio.CancelScope(deadline=deadline) as scope:
            answer = await self._request(message, deadline)
        if scope.cancelled_caught:
            raise TimeoutError
        return answer

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """Deadline: the caller's scope (a notification is one SDK send; a request starts in the
        background at once). Cancelled: a notification may not have been sent."""
        group = self._group
        if group is None or self._closed:
            raise TransportClosed("the transport over the SDK session is not open")
        if isinstance(message, JSONRPCRequest):
            scope = anyio.CancelScope()
            self._background[message.id] = scope
            group.start_soon(self._in_background, message, scope)
        elif isinstance(message, JSONRPCNotification):
            await self._notify(message)
        elif isinstance(message, (JSONRPCResponse, JSONRPCError)):
            self._answer_routed(message)

    async def receive(self) -> Incoming:
        """Deadline: none. Cancelled: stops waiting; nothing is lost."""
        if self._recv is None:
            raise TransportClosed("the transport over the SDK session is not open")
        try:
            return await self._recv.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the transport over the SDK session closed") from None

    async def abandon(self, request_id: RequestId) -> None:
        """Deadline: none (a cancel scope is cancelled; nothing is awaited)."""
        scope = self._background.pop(request_id, None)
        if scope is not None:
            scope.cancel()

    # -- requests ----------------------------------------------------------------------------

    async def _in_background(self, message: JSONRPCRequest, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                answer = await self._request(message, math.inf)
                self._deliver(answer)
        finally:
            self._background.pop(message.id, None)

    async def _request(self, message: JSONRPCRequest, deadline: float) -> Incoming:
        if message.method == "subscriptions/listen" and not self._push:
            return TransportFault(message.id, SdkUnsupported(_NO_LISTEN), fatal=False)
        params = message.params
        remaining = deadline - anyio.current_time() if deadline < math.inf else 86_400.0
        self._note_followed(message.method, params)
        timeout = max(remaining, 0.001) + 1.0
        try:
            if self._major.v2:
                raw = await self._major.send_raw(
                    message, self._headers(message), timeout, self._id_prefix
                )
            else:
                raw = await self._detached_v1(message, timeout)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # the SDK's own error types: mapped, never passed through raw
            return self._fault_of(message, exc)
        if not isinstance(raw, dict):
            error = DecodeError("$.result", "the result is not a JSON object", raw)
            return TransportFault(message.id, error)
        self._note_created(message, raw)
        return JSONRPCResponse(message.id, raw)

    async def _detached_v1(self, message: JSONRPCRequest, timeout: float) -> Any:
        """mcp 1.x: the SDK's ``send_request`` run to its end in this transport's task group,
        never cancelled with its caller. The 1.x session's reader hands a response to its
        request's stream after taking that stream out of its table; a caller cancelled in that
        instant closes the stream first, the reader fails on it, swallows the error as "read
        stream closed" and stops: the host's whole session is dead (seen as a deadline cutting a
        poll whose answer was arriving). Detached, the request lives until its answer (or the
        SDK's read timeout, ``timeout``: the caller's deadline and a second); the caller stops
        waiting at once, and its ``notifications/cancelled`` still finds the SDK's id."""
        group = self._group
        if group is None or self._closed:
            raise TransportClosed("the transport over the SDK session is not open")
        done = anyio.Event()
        box: list[Any] = []

        async def run() -> None:
            sdk_id = self._major.next_id()  # the id send_request takes next (no await between)
            if sdk_id is not None:
                self._sdk_ids[message.id] = sdk_id
            try:
                box.append(
                    await self._sdk.send_request(
                        _RawRequest(message.method, message.params),
                        _RawResult,
                        request_read_timeout_seconds=self._major.timeout(timeout),
                    )
                )
            except Exception as exc:  # handed to the caller, mapped there
                box.append(exc)
            finally:
                self._sdk_ids.pop(message.id, None)
                done.set()

        group.start_soon(run)
        await done.wait()
        if isinstance(box[0], Exception):
            raise box[0]
        return box[0]

    def _fault_of(self, message: JSONRPCRequest, exc: Exception) -> Incoming:
        said = self._major.error_of(exc)
        if said is not None:
            code, text, data = said
            if code == _CONNECTION_CLOSED and text.lower().startswith("connection closed"):
                return TransportFault(message.id, TransportClosed(f"the SDK session: {text}"))
            return JSONRPCError(message.id, ErrorObject(code, text, data))
        name = type(exc).__name__
        if name == "ValidationError":  # pydantic: the SDK judged the server's answer
            error: TransportError | DecodeError = DecodeError(
                "$.result", f"the SDK refused the server's answer: {exc}", None
            )
        else:
            error = TransportError(f"the SDK session failed the request ({name}: {exc})")
        return TransportFault(message.id, error)

    def negotiated(self, protocol_version: str) -> None:
        self._protocol_version = protocol_version

    def _headers(self, message: JSONRPCRequest) -> dict[str, str]:
        """The HTTP headers our driver gives the message (2026-07-28: Mcp-Method, Mcp-Name,
        Mcp-Param-*, the protocol version), or the agreed version's header (2025-11-25)."""
        if self._headers_for is not None:  # lower case, as the SDK's transport writes its own
            return {k.lower(): v for k, v in self._headers_for(message).items()}
        if self._protocol_version is not None:
            return {"mcp-protocol-version": self._protocol_version}
        return {}

    def _note_followed(self, method: str, params: JSONObject | None) -> None:
        if method.startswith("tasks/") and params is not None:
            task_id = params.get("taskId")
            if isinstance(task_id, str):
                self.follow(task_id)

    def _note_created(self, message: JSONRPCRequest, raw: JSONObject) -> None:
        if message.method != "tools/call":
            return
        task = raw.get("task")
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            self.follow(task["taskId"])

    def _deliver(self, item: Incoming) -> None:
        if self._send is not None and not self._closed:
            try:
                self._send.send_nowait(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def _notify(self, message: JSONRPCNotification) -> None:
        params = message.params
        if message.method == "notifications/cancelled" and params is not None:
            # Ours names our request id; the server knows the SDK's (mcp 1.x).
            sdk_id = self._sdk_ids.get(params.get("requestId"))  # type: ignore[arg-type]
            if sdk_id is None:
                return  # nothing in flight under that id: nothing to cancel
            params = {**params, "requestId": sdk_id}
        await self._sdk.send_notification(self._major.notification(message.method, params))

    # -- routing the server's requests -------------------------------------------------------

    def _install_router(self) -> None:
        other = self._bridge.router
        if other is not None and other is not self and not other._closed:
            raise UsageError(
                "another client already routes this SDK session's server requests: share "
                "that client (one per SDK session)"
            )
        missing = [name for name in _ROUTED if not hasattr(self._sdk, name)]
        if missing:
            raise SdkUnsupported(
                f"this SDK session has no {', '.join(missing)}: its server requests cannot be "
                "routed (tested: mcp 1.30 and 2.3)"
            )
        for name in _ROUTED:
            self._saved[name] = getattr(self._sdk, name)
        for name, method in _ROUTED_METHODS.items():
            setattr(self._sdk, name, self._router(method, self._saved[name]))
        self._sdk._message_handler = self._notification_router(self._saved[_ROUTED[2]])
        self._bridge.router = self

    def _remove_router(self) -> None:
        if not self._saved:
            return
        for name, callback in self._saved.items():
            setattr(self._sdk, name, callback)
        self._saved.clear()
        if self._bridge.router is self:
            self._bridge.router = None

    def _router(
        self, method: str, host: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def route(context: Any, params: Any, *rest: Any) -> Any:
            raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            if not self._ours(raw):
                return await host(context, params, *rest)
            return await self._ask(method, raw)

        return route

    def _notification_router(
        self, host: Callable[[Any], Awaitable[None]]
    ) -> Callable[[Any], Awaitable[None]]:
        async def route(message: Any) -> None:
            notification = getattr(message, "root", message)
            method = getattr(notification, "method", None)
            if method in _NOTIFIED and hasattr(notification, "model_dump"):
                raw = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
                params = raw.get("params")
                self._deliver(
                    JSONRPCNotification(method, params if isinstance(params, dict) else None)
                )
            await host(message)

        return route

    def _ours(self, raw: Mapping[str, Any]) -> bool:
        meta = raw.get("_meta")
        related = meta.get(RELATED_TASK) if isinstance(meta, Mapping) else None
        task_id = related.get("taskId") if isinstance(related, Mapping) else None
        return isinstance(task_id, str) and self.follows(task_id)

    async def _ask(self, method: str, params: JSONObject) -> Any:
        """Hand a routed server request to this client and wait for its answer (as long as the
        SDK lets the request live: the host's session bounds it, not this transport)."""
        if self._closed:
            return self._major.answer(method, None, ErrorObject(-32603, "client closed"))
        request_id = f"sdk-{next(self._server_ids)}"
        pending = _Pending()
        self._answers[request_id] = pending
        try:
            self._deliver(JSONRPCRequest(request_id, method, params))
            result, error = await pending.wait()
        finally:
            self._answers.pop(request_id, None)
        return self._major.answer(method, result, error)

    def _answer_routed(self, message: JSONRPCResponse | JSONRPCError) -> None:
        pending = self._answers.get(str(message.id)) if message.id is not None else None
        if pending is None:
            return  # an answer to a request no longer waited for (the SDK gave up on it)
        if isinstance(message, JSONRPCResponse):
            pending.set(message.result, None)
        else:
            pending.set(None, message.error)


class _Pending:
    """One routed server request waiting for this client's answer."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._result: JSONObject | None = None
        self._error: ErrorObject | None = None

    def set(self, result: JSONObject | None, error: ErrorObject | None) -> None:
        self._result, self._error = result, error
        self._event.set()

    def fail(self, exc: Exception) -> None:
        self.set(None, ErrorObject(-32603, str(exc)))

    async def wait(self) -> tuple[JSONObject | None, ErrorObject | None]:
        await self._event.wait()
        return self._result, self._error
