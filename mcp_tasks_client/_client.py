"""The Client: one conversation with one server, typed, driven by the caller.

Its one job: what a caller may ask of a server, typed. ``Client`` combines the task operations
(``_task_api.py``) and the server's features (``_features.py``), both standing on
``_client_base.py``; it owns the conversation's life: a :class:`~._session.Session` (correlation,
deadlines, the reader, dispatch, serving the server's requests, the orphan watch) and the
driver of the generation the caller chose (``_drivers``: what every request carries and every
answer means, the handshake, the checks made before a call is sent). It never branches on a
generation: it asks its driver.

May import: ``_session``, ``_drivers``, ``_sansio``, ``_io.base``, ``builders``, ``_cache``,
``journal``, ``models``, ``_exceptions``, ``_limits``, ``observability`` (and the Client's own
parts). Never the Poller or the InputRouter (they are built on it).

Deadlines and cancellation: see ``_client_base.py`` (and each method's docstring).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Hashable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._client_base import CallInputs
from ._drivers import Driver, driver_for
from ._exceptions import (
    GetStreamUnavailable,
    MCPTasksError,
    UnsupportedProtocolVersion,
    UsageError,
)
from ._features import FeatureCalls
from ._generation import Generation
from ._io.base import Transport, TransportWrapper
from ._limits import Limits
from ._session import (
    NotificationHandler,
    OrphanedTask,
    RequestHandler,
    Session,
    Timeouts,
)
from ._task_api import TaskCalls
from .models import (
    ClientCapabilities,
    DiscoverResult,
    Implementation,
    InitializeResult,
    JSONObject,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCResponse,
    RequestId,
    ServerCapabilities,
)
from .observability import Redaction, Tracing

if TYPE_CHECKING:  # the tool models are imported where a program uses them, the result
    # cache when a caller passes one
    from ._cache import ResultCache
    from ._sansio.progress import ProgressStats, TaskProgress
    from ._session import ProgressHandler
    from .models import Tool

__all__ = [
    "CallInputs",
    "Client",
    "NotificationHandler",
    "OrphanedTask",
    "ProgressHandler",
    "RequestHandler",
    "Timeouts",
]

if not TYPE_CHECKING:  # a type checker sees the import above

    def __getattr__(name: str) -> object:
        if name != "ProgressHandler":  # (built on first use: see _session/terms.py)
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from ._session import terms

        return terms.ProgressHandler


class Client(TaskCalls, FeatureCalls):
    """An MCP client connection, opened with ``async with``.

    Nothing is declared, sent, polled or answered unless the caller configured it: the client
    capabilities are exactly ``capabilities``; the protocol version is the ``generation``'s.

    Args:
        transport: How to reach the server (HttpTransport, StdioTransport, MemoryTransport);
            the client opens and closes it.
        generation: The protocol generation to speak, chosen by you (``probe_server`` tells
            what a server speaks); never guessed, never switched.
        client_info: Your name and version, sent in ``initialize`` (2025-11-25) or in every
            request's ``_meta`` (2026-07-28).
        capabilities: Exactly what the client declares (``{}`` by default);
            ``InputRouter.capabilities()`` builds it from the handlers you serve.
        timeouts: Request deadlines (:class:`Timeouts`); a call's own ``timeout=`` wins.
        limits: Bounds on what a server can make the client hold (:class:`Limits`).
        on_warning: Called with each problem that ruined no request (also kept in
            ``warnings``); it must not block.
        resume: The InitializeResult of a kept 2025-11-25 session the transport carries
            (``HttpTransport(url, session_id=...)``): the session is resumed without
            ``initialize``.
        listen_stream: Open the transport's standalone server stream (HTTP GET, 2025-11-25)
            while entering, after the server's ``initialize`` answer and before
            ``notifications/initialized``, so whatever the server sends unasked from then on
            (a question of a task it just created, ``notifications/tools/list_changed``) has
            a stream to arrive on: the spec says clients SHOULD expect messages there. A
            server without one (HTTP 405) leaves a ``GetStreamUnavailable`` warning (it has
            nowhere to send them, so nothing is lost); any other failure to open it within
            ``Timeouts.initialize`` fails the entering. A transport that reads every server
            message anyway (stdio, memory) needs nothing: it is then a no-op. A generation
            without the stream (2026-07-28) raises ``UnsupportedInGeneration`` here. Without
            it, :meth:`open_listen_stream` opens the stream when you call it.
        cache: A :class:`ResultCache` to serve cacheable results from while their server's
            caching hints say they are fresh (2026-07-28, SEP-2549: ``server/discover``, the
            lists, ``resources/read``). None (the default): nothing is cached. 2025-11-25
            results carry no hints and are never cached.
        auth_context: Who this client's requests are authorized as, for the cache (a user id,
            a token's subject: any hashable value): a ``"private"`` result is served only to
            clients of the same server with an equal ``auth_context``. None: this client
            alone. ``"public"`` results are shared by every client of the cache that talks to
            the same server (the transport's URL; a transport without one is this client's
            alone).
        tracing: This client's spans (:class:`~mcp_tasks_client.observability.Tracing`: its
            tracer provider, which polls are spans, trace context on the wire). None: a copy
            of the process default (``observability.tracing(...)``) taken now; a later
            change of the default does not reach this client.
        redaction: This client's task-id redaction
            (:class:`~mcp_tasks_client.observability.Redaction`). None: a copy of the process
            default (``observability.redact_task_ids(...)``) taken now.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        generation: Generation,
        client_info: Implementation,
        capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen value
        limits: Limits = Limits(),  # noqa: B008 - frozen value
        on_warning: Callable[[MCPTasksError], None] | None = None,
        resume: InitializeResult | None = None,
        listen_stream: bool = False,
        cache: ResultCache | None = None,
        auth_context: Hashable | None = None,
        tracing: Tracing | None = None,
        redaction: Redaction | None = None,
    ) -> None:
        if cache is not None:
            from ._cache import ResultCache  # (only a caller's cache needs it)

            if not isinstance(cache, ResultCache):
                raise UsageError(f"cache= takes a ResultCache, got {type(cache).__name__}")
        try:
            hash(auth_context)
        except TypeError:
            raise UsageError(
                f"auth_context= must be hashable (a str, an id), got {type(auth_context).__name__}"
            ) from None
        if tracing is not None and not isinstance(tracing, Tracing):
            raise UsageError(
                f"tracing= takes an observability.Tracing, got {type(tracing).__name__}"
            )
        if redaction is not None and not isinstance(redaction, Redaction):
            raise UsageError(
                f"redaction= takes an observability.Redaction, got {type(redaction).__name__}"
            )
        self._driver: Driver = driver_for(generation, capabilities, client_info)
        if listen_stream:
            self._driver.require("the standalone GET stream")
        self._listen_stream = listen_stream
        if resume is not None:
            self._driver.check_resume(resume, transport.session)
        elif transport.agreed is not None:
            resume = transport.agreed  # the connection's own handshake (an SDK session)
        self._generation = self._driver.generation
        self._client_info = client_info
        self._capabilities = capabilities
        self._resume = resume
        self._session = Session(
            transport,
            self._driver,
            timeouts=timeouts,
            limits=limits,
            on_warning=on_warning,
            first_id=_resumed_first_id() if resume is not None else 1,
            tracing=tracing,
            redaction=redaction,
        )
        self._known_tools: dict[str, Tool] = {}
        self._returned_task_ids: dict[str, None] = {}
        self._discovered: DiscoverResult | None = None
        self._cache = cache
        self._cache_context = None
        if cache is not None:
            from ._cache import INVALIDATING, CacheContext

            url = getattr(_innermost(transport), "url", None)
            self._cache_context = CacheContext(
                origin=url if isinstance(url, str) else object(),
                auth=object() if auth_context is None else ("auth", auth_context),
            )
            for method in INVALIDATING:  # SEP-2549: list_changed still applies
                self._session.on_notification(method, self._invalidate_cached)

    def _invalidate_cached(self, notification: JSONRPCNotification) -> None:
        if self._cache is not None and self._cache_context is not None:
            self._cache.invalidate(
                self._cache_context.origin, notification.method, notification.params
            )

    async def __aenter__(self) -> Client:
        """Open the transport, start the reader and perform the generation's handshake
        (``initialize`` in 2025-11-25, bounded by ``Timeouts.initialize``; nothing is sent in
        2026-07-28); with ``listen_stream=True`` the GET stream opens within it (bounded by
        ``Timeouts.initialize`` too). Cancelled or failed: everything started is closed
        again."""
        await self._session.open()
        try:
            on_agreed = self._listen_on_agreed if self._listen_stream else None
            await self._driver.handshake(
                _Link(self._session, on_agreed),
                resume=self._resume,
                timeout=self.timeouts.initialize,
            )
        except BaseException:
            await self._session.close()
            raise
        return self

    async def _listen_on_agreed(self) -> None:
        """``listen_stream=True``: the GET stream, opened during the handshake (see
        ``Client``); a server that offers none leaves a warning."""
        if getattr(self.transport, "open_listen_stream", None) is None:
            return  # it reads every server message already (stdio, memory)
        try:
            await self.open_listen_stream(timeout=self.timeouts.initialize)
        except GetStreamUnavailable as exc:
            self._session.warn(exc)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Cancel everything the client started, end every pending request (and every Poller
        wait on this client) with ClientClosed, and close the transport.
        Deadline: the transport's own close (an HTTP session's DELETE is bounded by
        Timeouts.request). Cancelled: the close still completes (the task group is cancelled
        first; nothing is left running).
        """
        await self._session.close()

    @property
    def initialize_result(self) -> InitializeResult:
        return self._driver.initialize_result

    @property
    def discover_result(self) -> DiscoverResult | None:
        """What the last :meth:`discover` returned (2026-07-28), or None before one."""
        return self._driver.discover_result

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """2025-11-25: what ``initialize`` returned. 2026-07-28: what :meth:`discover` returned
        (UsageError before a discover: a stateless client learns nothing unasked, E C11)."""
        return self._driver.server_capabilities

    @property
    def server_info(self) -> Implementation:
        return self.initialize_result.server_info

    async def discover(self, *, timeout: float | None = None) -> DiscoverResult:
        """``server/discover`` (2026-07-28, E C9-C11): the server's versions and capabilities.

        Sent only when called. UnsupportedProtocolVersion when the server does not list this
        client's version; ProtocolVersionRefused (-32022) carries what it supports.
        Deadline: timeout (default Timeouts.request), then RequestTimeout. Cancelled: stops
        waiting; nothing is kept from a discover that did not complete.
        """
        self._driver.require("server/discover")
        reader = functools.partial(self._driver.converter.decode, cls=DiscoverResult)
        result = await self._fetch("server/discover", None, reader, timeout)
        if not any(self._driver.supports(v) for v in result.supported_versions):
            raise UnsupportedProtocolVersion(
                self._driver.protocol_version, result.supported_versions
            )
        self._driver.discovered(result)
        return result

    async def send_input_answer(
        self,
        task_id: str,
        key: str,
        answer: Any,
        *,
        request_id: RequestId | None = None,
        timeout: float | None = None,
    ) -> None:
        """Answer one input request of ``task_id`` that another process received (queued in a
        shared journal; :meth:`InputRouter.answer_queued` calls this): 2026-07-28
        ``tasks/update`` with ``{key: answer}`` (E C28-C33); 2025-11-25 the JSON-RPC response
        to ``request_id`` on this client's session, with the related-task meta (C-25): the
        session must be the one the request came on. ``answer``: an ElicitResult,
        CreateMessageResult, ListRootsResult, or its JSON.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting; the answer may
        still reach the server.
        """
        await self._driver.send_input_answer(
            _Link(self._session),
            task_id,
            key,
            request_id,
            self.encode(answer),
            timeout=timeout,
        )

    def on_request(self, method: str, handler: RequestHandler, *, held: bool = False) -> None:
        """Answer server->client ``method`` requests with ``handler`` (one per method).
        ``held=True`` for a handler that waits by design (a blocking result): those count
        against ``Limits.max_held_server_requests``, apart from every other request's
        ``Limits.max_server_requests``, so they never stop the client answering the rest."""
        self._session.on_request(method, handler, held=held)

    def on_orphaned_task(self, handler: Callable[[OrphanedTask], None]) -> Callable[[], None]:
        """Call ``handler`` with each task created by a ``start()`` its caller stopped waiting
        for (see :class:`OrphanedTask`). Runs in the reader: must not block."""
        return self._session.on_orphaned_task(handler)

    def on_connection_end(self, listener: Callable[[MCPTasksError], None]) -> Callable[[], None]:
        """Call ``listener`` with the error that ended the connection: ClientClosed when the
        caller closed it, or what broke it (ProcessExited, a fatal ProtocolError ...)."""
        return self._session.on_connection_end(listener)

    def on_notification(self, method: str, handler: NotificationHandler) -> Callable[[], None]:
        """Call ``handler`` for every ``method`` notification (in the reader: must not block)."""
        return self._session.on_notification(method, handler)

    def on_progress(self, handler: ProgressHandler) -> Callable[[], None]:
        """Call ``handler`` with each :class:`TaskProgress` (a ``notifications/progress`` for a
        task whose call carried a progress token, or that names the task in its related-task
        ``_meta``) and with each problem such a notification has (a soft Violation: V-24,
        E C43; a DecodeError). Runs in the reader: must not block."""
        return self._session.on_progress(handler)

    def progress(self, task_id: str) -> TaskProgress | None:
        """The last progress delivered for the task, if its token is still held (no request)."""
        return self._session.progress(task_id)

    @property
    def progress_stats(self) -> ProgressStats:
        """What the progress book holds and has counted (``Limits.max_progress_tokens``)."""
        return self._session.progress_stats


def _innermost(transport: Transport) -> Transport:
    """The transport a chain of TransportWrappers wraps (whose URL names the server)."""
    seen = 0
    while isinstance(transport, TransportWrapper) and seen < 100:
        transport, seen = transport.inner, seen + 1
    return transport


def _resumed_first_id() -> int:
    """Where a client resuming a session starts its request ids: at random in [2**32, 2**52)
    (exact in every JSON parser). The session's earlier requestors numbered theirs from 1,
    an id MUST NOT be used twice within one session, and concurrent clients of one session
    (workers sharing a journal) must not collide either: the server routes responses by id."""
    import secrets  # (with hmac, random, base64: only a resumed session draws one)

    return 2**32 + secrets.randbelow(2**52 - 2**32)


class _Link:
    """What the driver's handshake sends through: the session, and the transport's hooks.
    (A plain class: one is made per handshake, and an attrs class costs its generated
    methods' compilation at import, on every command line's start.)"""

    __slots__ = ("on_agreed", "session")

    def __init__(
        self, session: Session, on_agreed: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.session = session
        self.on_agreed = on_agreed

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject:
        return await self.session.request(method, params, timeout=timeout)

    async def notify(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> None:
        await self.session.notify(method, params, timeout=timeout)

    async def reply(self, response: JSONRPCResponse, *, timeout: float | None = None) -> None:
        await self.session.reply(response, timeout=timeout)

    def negotiated(self, protocol_version: str) -> None:
        self.session.transport.negotiated(protocol_version)

    def use_message_headers(self, headers: Callable[[JSONRPCMessage], dict[str, str]]) -> None:
        self.session.transport.use_message_headers(headers)

    async def agreed(self) -> None:
        if self.on_agreed is not None:
            await self.on_agreed()
