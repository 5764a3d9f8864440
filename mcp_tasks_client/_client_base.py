"""What every part of the Client's API stands on: the caller's choices, read-only; the raw
request and notification; the generation's codec; the MRTR loop a call that may need input
first goes through.

May import what ``_client.py`` may. Subclassed by ``_features.py`` and ``_task_api.py``, which
``Client`` (``_client.py``) combines; callers never see this class by name.

Deadlines and cancellation, for every ``async`` method of the Client unless its docstring says
more: each request waits at most its ``timeout=`` (default ``Timeouts.request``) and then
raises RequestTimeout; a caller cancelled while it waits stops waiting at once, the answer is
ignored when it comes (C-47), and ``notifications/cancelled`` is sent for it in the background
when ``Timeouts.notify_cancelled`` (C-13). A task is never cancelled by a timeout or by the
caller's cancellation: that takes ``Client.cancel_task``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import observability as _obs
from ._drivers import Driver
from ._exceptions import (
    DecodeError,
    InputRequired,
    LimitExceeded,
    MCPTasksError,
    UnknownRelatedTask,
)
from ._generation import Generation
from ._io.base import Transport
from ._limits import Limits
from ._session import Session, Timeouts
from .models import (
    ClientCapabilities,
    Implementation,
    InputRequest,
    JSONObject,
    JSONRPCNotification,
    Task,
)

if TYPE_CHECKING:  # the tool models are imported where a program uses them; the result
    # cache when a caller passed one; the builders where a call is made
    from ._cache import CacheContext, ResultCache
    from .builders import ToolCall
    from .models import InputRequiredResult, Tool

__all__ = ["CallInputs", "ClientBase"]

T = TypeVar("T")

log = _obs.get_logger("client")


def _observe_hit(method: str, tracing: _obs.Tracing) -> None:
    """A result served from the ResultCache: a DEBUG record, and a span of its own (no
    request was sent, so no request span) with ``mcp_tasks.cache.hit`` true."""
    log.debug("%s served from the result cache (no request sent)", method)
    if tracing.tracer is not None:
        attributes = {"mcp.method.name": method, "mcp_tasks.cache.hit": True}
        with tracing.span(method, attributes, client=True):
            pass


class _Answerable(Protocol):
    """A request MRTR can answer and repeat (ToolCall, TaskToolCall, GetPrompt, ...)."""

    def answering(self: A, answer: InputRequiredResult, responses: Mapping[str, Any]) -> A: ...


A = TypeVar("A", bound=_Answerable)


class CallInputs(Protocol):
    """What answers a call's MRTR input requests (an InputRouter)."""

    async def answer_call_input(self, key: str, request: InputRequest) -> JSONObject | None:
        """The answer to one input request of a call that has no task yet (MRTR), or None.
        Deadline: the implementer's own. Cancelled: nothing is answered, the call's round
        ends."""


class ClientBase:
    """The Client's foundation (see the module docstring); ``Client.__init__`` sets these."""

    _session: Session
    _driver: Driver
    _generation: Generation
    _client_info: Implementation
    _capabilities: ClientCapabilities
    _known_tools: dict[str, Tool]
    _cache: ResultCache | None
    _cache_context: CacheContext | None
    """The cache's key context: None without a cache (``Client(cache=...)``)."""
    _returned_task_ids: dict[str, None]
    """Task ids read from this server, oldest first (``Limits.max_known_task_ids``)."""

    # -- what the caller chose (read-only: each is woven into the session and driver) ----------

    @property
    def transport(self) -> Transport:
        return self._session.transport

    @property
    def generation(self) -> Generation:
        return self._generation

    @property
    def client_info(self) -> Implementation:
        return self._client_info

    @property
    def capabilities(self) -> ClientCapabilities:
        """Exactly what this client declares."""
        return self._capabilities

    @property
    def timeouts(self) -> Timeouts:
        return self._session.timeouts

    @property
    def limits(self) -> Limits:
        return self._session.limits

    @property
    def driver(self) -> Driver:
        """The generation's driver (for the Poller, the InputRouter and conformance tools)."""
        return self._driver

    @property
    def cache(self) -> ResultCache | None:
        """The ResultCache the caller passed (``Client(cache=...)``), or None: nothing cached."""
        return self._cache

    @property
    def tracing(self) -> _obs.Tracing:
        """This client's span settings (``Client(tracing=...)``, or the process default's
        copied when it was made)."""
        return self._session.tracing

    @property
    def redaction(self) -> _obs.Redaction:
        """This client's task-id redaction (``Client(redaction=...)``, or the process
        default's copied when it was made)."""
        return self._session.redaction

    @property
    def task_traces(self) -> _obs.TaskTraces:
        """The open task spans of this client, by task id (one trace per task): what the
        Poller, the InputRouter and ``resume`` hang their spans under."""
        return self._session.traces

    @property
    def received_traces(self) -> _obs.ReceivedTraces:
        """The traces of the tasks a TaskReceiver runs for this client's server, by task id:
        where the server's requests about each one hang their spans (``note`` when one
        begins, ``forget`` when it ends)."""
        return self._session.received_traces

    @property
    def warnings(self) -> Sequence[MCPTasksError]:
        """Problems that ruined no request (an uncorrelated error, a side stream that ended);
        the last ``Limits.max_warnings`` of them (``on_warning`` sees every one)."""
        return self._session.warnings

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | None = None,
        held: bool = False,
    ) -> JSONObject:
        """Send a request as this generation carries it and wait for its raw result object.

        RPCError (or a subclass) for a JSON-RPC error answer, RequestTimeout after ``timeout``
        (default ``Timeouts.request``), a TransportError when the connection breaks. ``held``:
        the server may keep this request open by design (a blocking ``tasks/result``): an HTTP
        transport sends it on its held pool, so it never keeps other requests from a
        connection. Cancelled: see the module docstring.
        """
        return await self._session.call(method, params, self._session.options(timeout, held=held))

    async def notify(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> None:
        """Send a notification; RequestTimeout if the send takes longer than ``timeout``
        (default ``Timeouts.request``). Cancelled: the send stops where it is."""
        await self._session.notify(method, params, timeout=timeout)

    def decode(self, raw: Any, cls: type[T]) -> T:
        """``raw`` (parsed JSON) as ``cls``, read the way this client's generation writes it
        (a DecodeError names the path)."""
        return self._driver.converter.decode(raw, cls)

    def encode(self, value: Any) -> Any:
        """``value`` (any model) as this generation's wire JSON."""
        return self._driver.converter.encode(value)

    def read_status_notification(self, notification: JSONRPCNotification) -> Task:
        """The task a status notification carries (``notifications/tasks/status`` in
        2025-11-25, ``notifications/tasks`` in 2026-07-28); DecodeError under ``$.params``."""
        try:
            task = self._driver.read_task(notification.params or {})
        except DecodeError as exc:
            raise exc.under("$.params") from None
        return self._session.saw(task)

    def _read(self, raw: JSONObject, reader: Callable[[JSONObject], T]) -> T:
        try:
            return reader(raw)
        except DecodeError as exc:
            raise exc.under("$.result") from None

    def _decode(self, raw: Any, cls: type[T]) -> T:
        return self._read(raw, functools.partial(self._driver.converter.decode, cls=cls))

    async def _fetch(
        self,
        method: str,
        params: JSONObject | None,
        reader: Callable[[JSONObject], T],
        timeout: float | None,
    ) -> T:
        """:meth:`_fetch_marked` without the mark."""
        return (await self._fetch_marked(method, params, reader, timeout))[0]

    async def _fetch_marked(
        self,
        method: str,
        params: JSONObject | None,
        reader: Callable[[JSONObject], T],
        timeout: float | None,
    ) -> tuple[T, bool]:
        """A request whose answer ``reader`` reads, through the caller's ResultCache when it
        passed one and the generation gives ``method`` caching hints (SEP-2549): a fresh entry
        is served without a request (visible: a DEBUG record, a span with
        ``mcp_tasks.cache.hit``); an answer with hints is kept as they allow. Returns the
        result, and whether it was served from the cache."""
        cache = self._cache if method in self._driver.cacheable_methods else None
        context = self._cache_context
        sent: JSONObject | None = None
        options = self._session.options(timeout)
        if cache is not None and context is not None:
            from ._cache import is_retry  # with a cache only

            sent = self._driver.params(method, params)  # the key: every param as sent
            hit = cache.get(context, method, sent)
            if hit is not None:
                _observe_hit(method, self._session.tracing)
                return hit, True
            if not is_retry(sent):  # a miss (a retry is no cacheable request): on its span
                options = options._replace(cache_miss=True)
        raw = await self._session.call(method, params, options)
        result = self._read(raw, reader)
        self._driver.check_hints(method, raw, self._session.warn)
        if cache is not None and context is not None:
            from ._cache import CacheHints

            cache.put(context, method, sent, result, CacheHints.of(result))
        return result, False

    def _returned(self, task_id: str) -> None:
        """``task_id`` came from this client's server (a created task, a snapshot, a listing):
        a call may name it as related (``ToolCall.related_to``)."""
        known = self._returned_task_ids
        known.pop(task_id, None)
        known[task_id] = None
        if len(known) > self.limits.max_known_task_ids:  # the oldest go first
            del known[next(iter(known))]

    def _check_related(self, call: ToolCall) -> None:
        """UnknownRelatedTask, before anything is sent, for a related id this client cannot
        vouch came from its server: it never read it, no journal entry recorded it for this
        server (the transport's identity), and the caller did not say ``from_elsewhere``."""
        if not call.related:
            return
        server = self.transport.identity
        unknown: list[str] = []
        elsewhere: list[str] = []
        for related in call.related:
            if related.from_elsewhere:
                continue
            if related.server is not None:
                if related.server != server:
                    unknown.append(related.task_id)
                    elsewhere.append(related.task_id)
            elif related.task_id not in self._returned_task_ids:
                unknown.append(related.task_id)
        if unknown:
            raise UnknownRelatedTask(unknown, server, elsewhere=elsewhere)

    def _call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """A call's params with its MRTR answers as wire JSON."""
        responses = params.get("inputResponses")
        if isinstance(responses, dict):
            params["inputResponses"] = {k: self.encode(v) for k, v in responses.items()}
        return params

    async def _mrtr(
        self, request: A, once: Callable[[A], Awaitable[T]], inputs: CallInputs | None
    ) -> T:
        """``once(request)``; with ``inputs``, each MRTR round answered and retried."""
        rounds = 0
        while True:
            try:
                return await once(request)
            except InputRequired as needed:
                if inputs is None:
                    raise
                if rounds >= self.limits.max_input_rounds:
                    limit = self.limits.max_input_rounds
                    what = f"the MRTR rounds of {needed.name!r}"
                    raise LimitExceeded("max_input_rounds", limit, what) from needed
                asking = needed.answer.input_requests or {}
                if len(asking) > self.limits.max_inputs_per_round:
                    limit = self.limits.max_inputs_per_round
                    what = f"the {len(asking)} input requests of one MRTR round of {needed.name!r}"
                    raise LimitExceeded("max_inputs_per_round", limit, what) from needed
                responses: dict[str, JSONObject] = {}
                for key, asked in asking.items():
                    response = await inputs.answer_call_input(key, asked)
                    if response is None:
                        raise
                    responses[key] = response
                request = request.answering(needed.answer, responses)
                rounds += 1
