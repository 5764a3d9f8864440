"""What the session's requests and the server's look like to an observer: log records,
spans, trace context on the wire, metrics.

Job: the tracing glue, and only that. Each request the session sends while someone listens
(a tracer, redaction, a DEBUG logger) gets its DEBUG record (method, id, elapsed, outcome), its
CLIENT span under its task's span, the span's context in ``_meta`` (SEP-414) and its duration
metric; each server request the session serves gets its SERVER span, joined to its task's
trace. Everything is read from the client's own :class:`~mcp_tasks_client.observability.
Tracing` and :class:`~mcp_tasks_client.observability.Redaction`, never from process state.

May import: ``_session.terms``, ``_drivers``, ``_sansio``, ``models``, ``_exceptions``,
``observability``.

Theory of operation. :class:`RequestObserver` wraps the session's exchange (the one function
that sends a request and waits for its answer, given at construction) without changing it:
``observed`` calls it with an ``on_id`` that notes the request id, and, when spans are on,
within the span and with the span's context for ``_meta``. A poll under
``Tracing(polls="changes")`` opens no span: it carries its task span's context and is recorded
afterwards only if it saw a change (or failed). The session decides per request whether anyone
listens (:meth:`Session.call`); when no one does, this module is not on the request's path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import observability as _obs
from .._drivers import Driver
from .._exceptions import DecodeError, MCPTasksError, RequestTimeout, RPCError, TransportError
from ..models import JSONObject, JSONRPCRequest, RequestId
from .terms import RequestHandler, RequestOptions

__all__ = ["Exchange", "RequestObserver"]

log = _obs.get_logger("client")

Exchange = Callable[
    [str, JSONObject | None, RequestOptions, "dict[str, str] | None"], Awaitable[JSONObject]
]
"""The session's exchange: ``(method, params, options, meta)`` -> the result (its deadline and
cancellation are the exchange's own)."""


class RequestObserver:
    """Records, spans and metrics around the session's requests and the server's (see the
    module docstring), on the client's own tracing and redaction."""

    def __init__(
        self,
        driver: Driver,
        tracing: _obs.Tracing,
        redaction: _obs.Redaction,
        traces: _obs.TaskTraces,
        received_traces: _obs.ReceivedTraces,
        exchange: Exchange,
    ) -> None:
        self._driver = driver
        self.tracing = tracing
        self.redaction = redaction
        self.traces = traces
        self.received_traces = received_traces
        self._exchange = exchange

    async def observed(
        self, method: str, params: JSONObject | None, options: RequestOptions
    ) -> JSONObject:
        """One request with its DEBUG record (method, id, elapsed, outcome), its span (under
        its task's span when it has one), the trace context in its ``_meta`` and its
        duration metric."""
        ids: list[RequestId] = []
        on_id = options.on_id

        def seen(request_id: RequestId) -> None:
            ids.append(request_id)
            if on_id is not None:
                on_id(request_id)

        options = options._replace(on_id=seen)
        task_id = params.get("taskId") if isinstance(params, dict) else None
        task_id = task_id if isinstance(task_id, str) else None
        redaction = self.redaction
        redaction.remember(task_id)
        tracer = self.tracing.tracer
        outcome = "cancelled"
        started = time.perf_counter()
        try:
            if tracer is None:
                raw = await self._exchange(method, params, options, None)
            else:
                raw = await self._traced(method, params, options, task_id, ids)
            if options.tasks:
                redaction.remember(self._driver.created_task_id(raw))
            outcome = "result"
        except RPCError as exc:
            outcome = f"error {exc.code}"
            raise
        except RequestTimeout:
            outcome = "timeout"
            raise
        except TransportError as exc:
            outcome = f"transport error ({type(exc).__name__})"
            raise
        except MCPTasksError as exc:
            outcome = type(exc).__name__
            raise
        finally:
            elapsed = time.perf_counter() - started
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s (id %r%s) %.1f ms: %s",
                    method,
                    ids[0] if ids else None,
                    "" if task_id is None else f", task {redaction.label(task_id)}",
                    elapsed * 1000.0,
                    outcome,
                    extra=redaction.log_extra,
                )
            meters = self.tracing.meters
            if meters is not None:
                metric = {"mcp.method.name": method}
                if outcome != "result":
                    metric["error.type"] = outcome
                meters.operation.record(elapsed, metric)
        return raw

    async def _traced(
        self,
        method: str,
        params: JSONObject | None,
        options: RequestOptions,
        task_id: str | None,
        ids: list[RequestId],
    ) -> JSONObject:
        """The request in its CLIENT span, under its task's span when it has one (the
        options', or the one its ``taskId`` names), the span's context in ``_meta``. A poll
        under ``tracing(polls="changes")`` opens no span: it carries its task span's context,
        and is recorded afterwards only if it saw a change (or failed)."""
        trace = options.trace or self.traces.get(task_id)
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "mcp.protocol.version": self._driver.protocol_version,
            "mcp_tasks.generation": self._driver.generation.value,
        }
        tool = params.get("name") if method == "tools/call" and params is not None else None
        if isinstance(tool, str):
            attributes["gen_ai.tool.name"] = tool
        if task_id is not None:
            attributes["mcp_tasks.task.id"] = self.redaction.label(task_id)
        if options.cache_miss:
            attributes["mcp_tasks.cache.hit"] = False
        name = f"{method} {tool}" if isinstance(tool, str) else method
        if method == "tasks/get" and trace is not None:
            if self.tracing.quiet_polls:
                return await self._quiet_poll(params, options, trace, attributes, ids)
            trace.polls += 1
        parent = None if trace is None else trace.context
        with self.tracing.span(name, attributes, client=True, parent=parent) as span:
            try:
                raw = await self._exchange(method, params, options, self.tracing.carrier())
            finally:
                if ids:
                    span.set_attribute("jsonrpc.request.id", str(ids[0]))
            created = self._driver.created_task_id(raw) if options.tasks else None
            if created is not None:
                span.set_attribute("mcp_tasks.task.id", self.redaction.label(created))
                if options.trace is not None:
                    self.traces.bind(created, options.trace)
        return raw

    async def _quiet_poll(
        self,
        params: JSONObject | None,
        options: RequestOptions,
        trace: _obs.TaskTrace,
        attributes: dict[str, Any],
        ids: list[RequestId],
    ) -> JSONObject:
        start_ns = time.time_ns()
        trace.polls += 1
        try:
            carried = self.tracing.carrier(trace.context)
            raw = await self._exchange("tasks/get", params, options, carried)
        except MCPTasksError as exc:
            if ids:
                attributes["jsonrpc.request.id"] = str(ids[0])
            self.tracing.record_span("tasks/get", attributes, trace.context, start_ns, exc)
            raise
        try:
            task = self._driver.read_task(raw)
            # Status and message: lastUpdatedAt is no news (fastmcp 4.1.4 moves it per read).
            key: tuple[Any, ...] = (task.status, task.status_message)
        except DecodeError:
            key = ("undecodable",)
        if trace.saw(key):
            if ids:
                attributes["jsonrpc.request.id"] = str(ids[0])
            self.tracing.record_span("tasks/get", attributes, trace.context, start_ns)
        return raw

    async def handled(self, handler: RequestHandler, request: JSONRPCRequest) -> Any:
        """A handler's call; with spans on, in a SERVER span named by the method. A request
        about a task whose span is open (its related-task ``_meta``, or the ``taskId`` of a
        receiver-side ``tasks/*``) joins that task's trace and links the server's context
        (``_meta.traceparent``, SEP-414); any other continues the server's trace, or is a root
        when it carries none (the reader's context is the one the client was entered in: no
        parent of the server's requests)."""
        tracing = self.tracing
        if tracing.tracer is None:
            return await handler(request)
        from .._sansio.answer_book import related_task_id  # (with spans on only)

        params = request.params if isinstance(request.params, dict) else {}
        remote = _obs.extract(params.get("_meta"))
        task_id = related_task_id(params) or params.get("taskId")
        # A server's tasks/* is about a task this client runs for it (a receiver's): that
        # task's trace; any other request's related task is one of the client's own.
        if request.method.startswith("tasks/"):
            joined = self.received_traces.get(task_id)
        else:
            trace = self.traces.get(task_id)
            joined = None if trace is None else trace.context
        attributes: dict[str, Any] = {
            "mcp.method.name": request.method,
            "jsonrpc.request.id": self.redaction.text_attr(str(request.id)),
            "mcp_tasks.generation": self._driver.generation.value,
        }
        if isinstance(task_id, str):
            attributes["mcp_tasks.task.id"] = self.redaction.label(task_id)
        if joined is not None:
            parent, links = joined, None if remote is None else [remote[1]]
        else:  # the server's trace, or a root: never whatever span was open at open()
            parent, links = _obs.root_context() if remote is None else remote[0], None
        with tracing.span(request.method, attributes, server=True, parent=parent, links=links):
            return await handler(request)
