"""Logging and tracing: the logger names, the task-id redaction switch, optional spans.

Logging. Every area logs to its own child of ``mcp_tasks_client`` (:data:`LOGGERS` lists them
with what each says and at which level). Nothing is configured here: the host attaches
handlers and levels as usual (``logging.getLogger("mcp_tasks_client.client").setLevel(...)``).
Records are built with ``%``-style arguments, so a disabled level costs one ``isEnabledFor``.

Redaction. Task ids (and session ids) are bearer capabilities: whoever reads one can poll,
answer or cancel the task. After :func:`redact_task_ids` no record this library logs and no
span attribute it sets carries a raw task id: each is replaced by a stable short hash
(``task-1a2b3c4d5e6f``, the same for the same id, so the records of one task still
correlate). It is a setting of each Client (:class:`Redaction`; ``redact_task_ids`` sets the
process default a Client copies when it is made), not a ``logging.Filter`` the host
installs, because a filter on the ``mcp_tasks_client`` logger does not see the records of its
child loggers, a filter on a handler misses every other handler, and neither reaches span
attributes; the switch covers all three. Besides the ids the library formats itself, every
record's text (message, traceback) is scrubbed of each task id the library has met (the
newest :data:`MAX_REMEMBERED` of them), so an id inside an error message is hidden too.
Session ids are never logged at all.

Tracing. With ``opentelemetry-api`` installed (the ``otel`` extra), requests, task
lifecycles and handler calls are spans on the tracer ``mcp_tasks_client``; ``import
mcp_tasks_client`` never imports opentelemetry: it is looked up once, at the first span site.
:func:`tracing` turns spans off (no span work at all), or on with a tracer provider of the
host's; that is the process default, which each Client copies when it is made, and a
Client given its own :class:`Tracing` (``Client(tracing=...)``) uses that instead: no request
reads process-wide state. Span and attribute names follow the OpenTelemetry semantic
conventions for MCP (status: development) where they exist: a request span is
``{mcp.method.name}`` (``tools/call {gen_ai.tool.name}`` for a tool call), kind CLIENT, with
``mcp.method.name``,
``jsonrpc.request.id``, ``mcp.protocol.version``, ``gen_ai.tool.name``, and on failure
``rpc.response.status_code`` (the JSON-RPC error code) and ``error.type``. What the
conventions do not cover is under ``mcp_tasks.``: ``mcp_tasks.generation``,
``mcp_tasks.task.id`` (redactable), ``mcp_tasks.task.status`` and ``mcp_tasks.outcome``. A
result served from the caller's ``ResultCache`` sends no request: it gets a span of its own,
``{mcp.method.name}``, with ``mcp_tasks.cache.hit`` true; a cacheable request the cache
missed carries ``mcp_tasks.cache.hit`` false on its request span (without a cache, or on a
multi-round-trip retry, the attribute is absent).

One trace per task. A task's span (``mcp_tasks.task``, a :class:`TaskTrace`) is begun when the
task is started (or first tracked) and kept in its session's :class:`TaskTraces` by task id;
the requests about the task, its input handlers and the server's requests about it take it as
their parent explicitly (never through a context variable), so waiting on many tasks at once
never folds one into another. Every request carries its trace context in ``params._meta``
(SEP-414: :func:`carrier`, :func:`with_carrier`); a request the server sends is read with
:func:`extract`. A journal keeps the task span's context and ``resume`` continues it
(:func:`remote_context`). Metrics (:func:`meters`) follow the spans' switch.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = [
    "LOGGERS",
    "MAX_REMEMBERED",
    "POLLS",
    "ROOT_LOGGER",
    "Redaction",
    "Tracing",
    "redact_task_ids",
    "task_id_label",
    "task_ids_redacted",
    "tracing",
]

ROOT_LOGGER = "mcp_tasks_client"

LOGGERS: Mapping[str, str] = {
    "mcp_tasks_client.client": "DEBUG: one record per request (method, request id, elapsed, "
    "outcome), one per result served from the ResultCache; WARNING: every Client.warnings "
    "entry, orphaned tasks; ERROR: a caller's handler or hook that raised",
    "mcp_tasks_client.poller": "DEBUG: a task tracked, each status change; INFO: a task's "
    "outcome (or the error that ended its tracking), each InFlightResized; WARNING: every "
    "other Poller.warnings entry (FallingBehind among them)",
    "mcp_tasks_client.inputs": "ERROR: an input handler that raised; WARNING: the tasks/cancel "
    "after it failed",
    "mcp_tasks_client.receiver": "DEBUG: a received task created, a status notification not "
    "sent; ERROR: a received task's body that raised",
    "mcp_tasks_client.transport.http": "DEBUG: a session opened, and ended by DELETE (never "
    "its id)",
    "mcp_tasks_client.transport.stdio": "DEBUG: the child process started and exited",
    "mcp_tasks_client.journal": "DEBUG: an entry recorded, a task finished in the journal; "
    "WARNING: each fault of the journal's database (JournalUnavailable, JournalTimeout, "
    "JournalBusy), each try again (Reconnect), an outcome the lease's fence refused",
    "mcp_tasks_client.resume": "INFO: a task let go because its lease is no longer surely "
    "this worker's (why)",
}
"""Every logger the library uses, with its levels. The root ``mcp_tasks_client`` itself logs
nothing: set its level or handlers to cover them all."""

MAX_REMEMBERED = 4096
"""How many task ids the redaction scrub remembers (the newest): an id older than that is
still hashed where the library formats it, but no longer scrubbed out of free text."""


class Redaction:
    """One client's task-id redaction: whether ids are hidden, the key of their hashes, and
    the ids met so far (the newest :data:`MAX_REMEMBERED`), which the scrub hides in free
    text. Each Client holds its own (``Client(redaction=...)``; by default a copy of the
    process default that :func:`redact_task_ids` sets), so two clients in one process may
    choose differently and never share the ids they met."""

    __slots__ = ("enabled", "key", "labels")

    def __init__(self, enabled: bool = False, *, key: bytes | None = None) -> None:
        self.enabled = enabled
        self.key = key
        self.labels: dict[str, str] = {}
        """Raw id -> label, for the ids met (the scrub's memory)."""

    def __repr__(self) -> str:
        return f"Redaction(enabled={self.enabled!r}, key={'<set>' if self.key else None})"

    def copy(self) -> Redaction:
        """The same settings, with a memory of its own (what a Client takes at construction)."""
        return Redaction(self.enabled, key=self.key)

    def label(self, task_id: str) -> str:
        """How ``task_id`` is shown in logs and spans: itself, or its hash when enabled."""
        if not self.enabled:
            return task_id
        labels = self.labels
        label = labels.get(task_id)
        if label is None:
            label = labels[task_id] = _hash(task_id, self.key)
            while len(labels) > MAX_REMEMBERED:
                del labels[next(iter(labels))]
        return label

    def remember(self, task_id: object) -> None:
        """Note a task id met, so the scrub hides it in any later text (one attribute read
        when disabled)."""
        if self.enabled and isinstance(task_id, str):
            self.label(task_id)

    def scrub(self, text: str) -> str:
        """``text`` with every remembered id replaced by its label."""
        labels = self.labels
        found = [task_id for task_id in labels if task_id and task_id in text]
        if not found:
            return text
        found.sort(key=len, reverse=True)  # the longest first: one id inside another
        pattern = re.compile("|".join(re.escape(task_id) for task_id in found))
        return pattern.sub(lambda match: labels[match.group()], text)

    def text_attr(self, text: str) -> str:
        """Free text as a span attribute: scrubbed of known ids when enabled."""
        return self.scrub(text) if self.enabled else text

    @property
    def log_extra(self) -> dict[str, Any]:
        """``extra=`` for a log record about this client: the filter scrubs its text with
        this redaction's memory instead of the process default's."""
        return {RECORD_REDACTION: self}


RECORD_REDACTION = "mcp_tasks_redaction"
"""The LogRecord attribute naming the :class:`Redaction` a record is scrubbed with."""

_Redaction = Redaction()
"""The process default (:func:`redact_task_ids`): what a Client copies when given none, and
what records about no client (a journal's) are scrubbed with."""

REDACTION = _Redaction
"""The process default's state."""


def redact_task_ids(enabled: bool = True, *, key: bytes | None = None) -> None:
    """Hide task ids in every log record and span attribute from now on (``False``: show
    them again), for every Client made after this call (one made before keeps what it
    copied; ``Client(redaction=Redaction(...))`` chooses for one client). Each id becomes
    ``task-`` and 12 hex digits of its BLAKE2b hash, keyed with ``key`` when given (a secret
    of the host's: the hashes then cannot be checked against a guessed id, and differ between
    hosts with different keys)."""
    _Redaction.enabled = enabled
    _Redaction.key = key
    _Redaction.labels = {}


def default_redaction() -> Redaction:
    """A copy of the process default, for a new Client."""
    return _Redaction.copy()


def task_ids_redacted() -> bool:
    """Whether :func:`redact_task_ids` is on (the process default)."""
    return _Redaction.enabled


def _hash(task_id: str, key: bytes | None) -> str:
    import hashlib  # (with OpenSSL's set-up: only a redacted id needs it)

    digest = hashlib.blake2b(
        task_id.encode("utf-8", "surrogatepass"), digest_size=6, key=key or b""
    )
    return "task-" + digest.hexdigest()


def task_id_label(task_id: str) -> str:
    """How the library shows ``task_id`` in logs and spans by the process default: the id
    itself, or its hash when redaction is on (for a host that wants to correlate its own
    records with the library's)."""
    return _Redaction.label(task_id)


def remember(task_id: object) -> None:
    """Note a task id in the process default's memory (see :meth:`Redaction.remember`)."""
    _Redaction.remember(task_id)


class TaskId:
    """A task id as a log argument: formatted (redacted or not, by ``redaction``, else the
    process default) only if the record is."""

    __slots__ = ("raw", "redaction")

    def __init__(self, raw: str, redaction: Redaction | None = None) -> None:
        self.raw = raw
        self.redaction = redaction

    def __str__(self) -> str:
        return (self.redaction or _Redaction).label(self.raw)

    def __repr__(self) -> str:
        redaction = self.redaction or _Redaction
        return redaction.label(self.raw) if redaction.enabled else repr(self.raw)


def _scrub(text: str) -> str:
    return _Redaction.scrub(text)


class _RedactingFilter(logging.Filter):
    """On every library logger: with redaction on (the record's own :class:`Redaction`, a
    client's, else the process default), the record's text (message, traceback,
    stack) is formatted now and scrubbed of known task ids; the exception object is dropped
    from the record so no later formatter reads the raw text from it."""

    def filter(self, record: logging.LogRecord) -> bool:
        redaction: Redaction = getattr(record, RECORD_REDACTION, None) or _Redaction
        if not redaction.enabled:
            return True
        _scrub = redaction.scrub
        record.msg = _scrub(record.getMessage())
        record.args = None
        if record.exc_info:
            if record.exc_info[0] is not None and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = _scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = _scrub(record.stack_info)
        return True


_FILTER = _RedactingFilter()

# A library configures no output: without a handler of the host's, Python's last-resort handler
# would print every WARNING to stderr. The host's logging configuration decides what is shown.
logging.getLogger(ROOT_LOGGER).addHandler(logging.NullHandler())


def get_logger(area: str) -> logging.Logger:
    """The library's logger for ``area`` (a key of :data:`LOGGERS` without the root)."""
    logger = logging.getLogger(f"{ROOT_LOGGER}.{area}")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


# -- tracing ---------------------------------------------------------------------------------

POLLS = ("every", "changes")
"""The poll settings of :func:`tracing`: ``"every"`` (a CLIENT span per ``tasks/get``, the MCP
semantic conventions) or ``"changes"`` (only the polls that saw a change)."""


class _Tracing:
    decided = False
    tracer: Any = None
    polls = "every"
    propagate = True
    meters: Any = None
    """The metric instruments (:class:`_Meters`), None when metrics are off."""


def tracing(
    enabled: bool = True,
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    polls: str = "every",
    propagate: bool = True,
    metrics: bool = True,
) -> None:
    """Spans on or off for this process. ``tracing(False)``: none at all (no span work on
    any path, no trace context on the wire, no metrics). ``tracing(True)``: spans on the tracer
    ``mcp_tasks_client`` of ``tracer_provider`` (an ``opentelemetry.trace.TracerProvider``), or
    of the global provider when None; ImportError if opentelemetry-api is not installed.
    Without a call, spans are on exactly when opentelemetry-api can be imported (looked up
    once, when the first Client is made or at the first span site), with the defaults below.
    A Client copies this default when it is made: a later call reaches only the Clients made
    after it (``Client(tracing=Tracing.on(...))`` chooses for one client).

    ``polls``: ``"every"`` (default) records a CLIENT span for each ``tasks/get``;
    ``"changes"`` records only the polls that saw a change (of status or status message) or
    failed, and counts every poll on the task span (``mcp_tasks.task.polls``).
    ``propagate``: put the current trace context (``traceparent``, ``tracestate``,
    ``baggage``; SEP-414) into ``params._meta`` of every request (default), never over a key
    the caller set. ``metrics``: record the MCP client metrics on ``meter_provider`` (or the
    global one) while spans are on."""
    if polls not in POLLS:
        raise ValueError(f"polls must be one of {POLLS}, not {polls!r}")
    _Tracing.decided = True
    _Tracing.polls = polls
    _Tracing.propagate = propagate
    if not enabled:
        _Tracing.tracer = None
        _Tracing.meters = None
        return
    _Tracing.tracer = _make_tracer(tracer_provider)
    _Tracing.meters = _Meters(meter_provider) if metrics else None


def _make_tracer(provider: Any) -> Any:
    from opentelemetry import trace

    from . import __version__

    if provider is None:
        return trace.get_tracer(ROOT_LOGGER, __version__)
    return provider.get_tracer(ROOT_LOGGER, __version__)


def tracer() -> Any:
    """The process default's tracer, or None when spans are off: decided once, then one
    attribute read."""
    if _Tracing.decided:
        return _Tracing.tracer
    _Tracing.decided = True
    try:
        _Tracing.tracer = _make_tracer(None)
        _Tracing.meters = _Meters(None)
    except ImportError:
        _Tracing.tracer = None
    return _Tracing.tracer


def quiet_polls() -> bool:
    """Whether the process default records polls only when they saw a change
    (``tracing(polls="changes")``)."""
    return _Tracing.polls == "changes"


class Tracing:
    """One client's span settings, fixed at construction: its tracer (None: no spans, no
    metrics, no trace context on the wire), its metric instruments, which polls are spans and
    whether trace context goes into ``_meta``. Each Client holds its own
    (``Client(tracing=...)``; by default a copy of the process default that :func:`tracing`
    sets), so two clients in one process may send their spans to different providers, or one
    none at all. Make one with :meth:`on` or :data:`Tracing.OFF`."""

    __slots__ = ("meters", "polls", "propagate", "tracer")

    OFF: Tracing
    """No spans at all (no span work on any path, nothing on the wire, no metrics)."""

    def __init__(
        self,
        tracer: Any = None,
        *,
        meters: Any = None,
        polls: str = "every",
        propagate: bool = True,
    ) -> None:
        if polls not in POLLS:
            raise ValueError(f"polls must be one of {POLLS}, not {polls!r}")
        self.tracer = tracer
        self.meters = meters if tracer is not None else None
        self.polls = polls
        self.propagate = propagate

    def __repr__(self) -> str:
        state = "off" if self.tracer is None else "on"
        return f"Tracing({state}, polls={self.polls!r}, propagate={self.propagate!r})"

    @classmethod
    def on(
        cls,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        polls: str = "every",
        propagate: bool = True,
        metrics: bool = True,
    ) -> Tracing:
        """Spans on the tracer ``mcp_tasks_client`` of ``tracer_provider`` (None: the global
        provider), as :func:`tracing` describes; ImportError without opentelemetry-api."""
        if polls not in POLLS:
            raise ValueError(f"polls must be one of {POLLS}, not {polls!r}")
        made = _make_tracer(tracer_provider)
        meters = _Meters(meter_provider) if metrics else None
        return cls(made, meters=meters, polls=polls, propagate=propagate)

    @property
    def enabled(self) -> bool:
        return self.tracer is not None

    @property
    def quiet_polls(self) -> bool:
        """Only the polls that saw a change are spans (``polls="changes"``)."""
        return self.polls == "changes"

    def carrier(self, context: Any = None) -> dict[str, str]:
        """:func:`carrier`, by this client's ``propagate``."""
        return _carrier(context) if self.propagate else {}

    def start_span(self, name: str, attributes: dict[str, Any]) -> Any:
        """:func:`start_span` on this client's tracer."""
        return _start_span(self.tracer, name, attributes)

    def span(
        self,
        name: str,
        attributes: dict[str, Any],
        *,
        client: bool = False,
        server: bool = False,
        parent: Any = None,
        links: Any = None,
    ) -> Any:
        """:func:`span` on this client's tracer."""
        return _span(
            self.tracer, name, attributes, client=client, server=server, parent=parent, links=links
        )

    def record_span(
        self,
        name: str,
        attributes: dict[str, Any],
        parent: Any,
        start_ns: int,
        error: BaseException | None = None,
    ) -> None:
        """:func:`record_span` on this client's tracer."""
        _record_span(self.tracer, name, attributes, parent, start_ns, error)


Tracing.OFF = Tracing()


def default_tracing() -> Tracing:
    """The process default (:func:`tracing`, or the lazy decision), as a Tracing a new
    Client holds."""
    made = tracer()
    if made is None:
        return Tracing(None, polls=_Tracing.polls, propagate=_Tracing.propagate)
    return Tracing(made, meters=_Tracing.meters, polls=_Tracing.polls, propagate=_Tracing.propagate)


# -- metrics -----------------------------------------------------------------------------------


class _Meters:
    """The instruments, on the meter ``mcp_tasks_client`` (names from the MCP semantic
    conventions where they exist; the task ones under ``mcp_tasks.``)."""

    def __init__(self, provider: Any) -> None:
        from opentelemetry import metrics

        from . import __version__

        meter = (
            metrics.get_meter(ROOT_LOGGER, __version__)
            if provider is None
            else provider.get_meter(ROOT_LOGGER, __version__)
        )
        self.operation = meter.create_histogram(
            "mcp.client.operation.duration", unit="s", description="one request, sent to answered"
        )
        self.session = meter.create_histogram(
            "mcp.client.session.duration", unit="s", description="one session, open to closed"
        )
        self.task = meter.create_histogram(
            "mcp_tasks.task.duration",
            unit="s",
            description="a task, started (or first tracked) to its end",
        )
        self.polls = meter.create_histogram(
            "mcp_tasks.task.polls", unit="{poll}", description="tasks/get requests per task"
        )
        self.in_flight = meter.create_up_down_counter(
            "mcp_tasks.tasks.in_flight", unit="{task}", description="tasks with an open span"
        )


def meters() -> Any:
    """The metric instruments, or None when metrics are off."""
    return _Tracing.meters if tracer() is not None else None


# -- trace context on the wire (SEP-414) ------------------------------------------------------

CARRIER_KEYS = ("traceparent", "tracestate", "baggage")
"""The ``params._meta`` keys SEP-414 reserves for trace context."""


def carrier(context: Any = None) -> dict[str, str]:
    """The trace context of ``context`` (the current one when None) as ``_meta`` entries:
    empty when the process default's propagation is off or there is no valid span."""
    if not _Tracing.propagate:
        return {}
    return _carrier(context)


def _carrier(context: Any) -> dict[str, str]:
    from opentelemetry import propagate

    found: dict[str, str] = {}
    propagate.inject(found, context=context)
    return {key: value for key, value in found.items() if key in CARRIER_KEYS}


def with_carrier(params: Any, entries: Mapping[str, str]) -> Any:
    """``params`` with ``entries`` added to its ``_meta`` (a copy; a key already there is the
    caller's and stays)."""
    if not entries:
        return params
    base = dict(params) if isinstance(params, dict) else {}
    meta = base.get("_meta")
    merged = dict(meta) if isinstance(meta, dict) else {}
    for key, value in entries.items():
        merged.setdefault(key, value)
    base["_meta"] = merged
    return base


def extract(meta: Any) -> tuple[Any, Any] | None:
    """The remote span in a request's ``_meta``: (a Context with it as parent, its
    SpanContext), or None when it carries none (or a malformed one)."""
    if not isinstance(meta, dict) or not isinstance(meta.get("traceparent"), str):
        return None
    from opentelemetry import propagate, trace

    found = {k: v for k, v in meta.items() if k in CARRIER_KEYS and isinstance(v, str)}
    context = propagate.extract(found)
    remote = trace.get_current_span(context).get_span_context()
    return (context, remote) if remote.is_valid else None


def root_context() -> Any:
    """An empty OpenTelemetry Context: a span begun under it is the root of a new trace."""
    from opentelemetry.context import Context

    return Context()


def remote_context(traceparent: str | None, tracestate: str | None) -> Any:
    """An OpenTelemetry Context whose parent is the recorded remote span (from a journal),
    or None when there is none (or it is malformed)."""
    if not traceparent:
        return None
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    found = {"traceparent": traceparent}
    if tracestate:
        found["tracestate"] = tracestate
    context = TraceContextTextMapPropagator().extract(found)
    return context if trace.get_current_span(context).get_span_context().is_valid else None


# -- one trace per task ------------------------------------------------------------------------


class TaskTrace:
    """A task's span and what its children hang under: made when the task is started (or
    first tracked), ended when its tracking ends, its terminal status is seen, or the client
    closes. Carried explicitly: on the session's :class:`TaskTraces`, the tracked task and the
    request options; never in a context variable."""

    __slots__ = (
        "context",
        "ended_at",
        "last",
        "owned",
        "polls",
        "span",
        "started",
        "table",
        "task_id",
    )

    def __init__(self, span: Any, context: Any) -> None:
        self.span = span
        self.context = context
        """An OpenTelemetry Context with the task span current: the parent of its children."""
        self.task_id: str | None = None
        self.polls = 0
        self.last: tuple[Any, ...] | None = None
        """What the last poll saw (status, message): a change is news."""
        self.owned = False
        """A Poller tracks the task: it ends the span with the task's outcome."""
        self.started = time.monotonic()
        self.table: TaskTraces | None = None
        self.ended_at: tuple[int, float, dict[str, Any]] | None = None
        """When no Poller follows it: the terminal status read (its time, and the outcome),
        the span's end when it is ended later (a Poller may still adopt it)."""

    def end(self, attributes: Mapping[str, Any], error: BaseException | None = None) -> None:
        """End the span (once) with the task's outcome, and leave the session's table."""
        if self.table is not None:
            self.table.finish(self, attributes, error)

    def carrier(self) -> dict[str, str]:
        """The task span's trace context (``traceparent``/``tracestate``) for a journal."""
        return _task_carrier(self.context)

    def saw(self, key: tuple[Any, ...]) -> bool:
        """A poll read ``key``: whether it is news (the first read, or a change)."""
        changed = key != self.last
        self.last = key
        return changed


def _task_carrier(context: Any) -> dict[str, str]:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    found: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(found, context=context)
    return found


MAX_OPEN_TASK_TRACES = 100_000
"""How many task spans a client keeps open at once; past that the oldest is ended
(``mcp_tasks.outcome`` ``"untraced"``): a caller that starts tasks it never follows cannot
grow the table without bound."""


class TaskTraces:
    """The open task spans of one session, by task id (the session owns it), on its client's
    :class:`Tracing` and labelled by its :class:`Redaction`."""

    def __init__(self, tracing: Tracing | None = None, redaction: Redaction | None = None) -> None:
        self._open: dict[str, TaskTrace] = {}
        self.tracing = tracing if tracing is not None else default_tracing()
        """The spans' settings (None given: a copy of the process default's)."""
        self.redaction = redaction if redaction is not None else default_redaction()

    def begin(self, attributes: dict[str, Any], parent: Any = None) -> TaskTrace | None:
        """A new task span under ``parent`` (a Context; None: the current one, so the caller's
        span), or None when spans are off."""
        current = self.tracing.tracer
        if current is None:
            return None
        from opentelemetry import trace

        span = current.start_span("mcp_tasks.task", context=parent, attributes=attributes)
        found = self.tracing.meters
        if found is not None:
            found.in_flight.add(1)
        return TaskTrace(span, trace.set_span_in_context(span, parent))

    def bind(self, task_id: str, trace: TaskTrace) -> None:
        """``trace`` is ``task_id``'s from now on."""
        trace.task_id = task_id
        trace.table = self
        trace.span.set_attribute("mcp_tasks.task.id", self.redaction.label(task_id))
        earlier = self._open.get(task_id)
        if earlier is not None and earlier is not trace:
            self._finish(earlier, {"mcp_tasks.outcome": "replaced"}, None)
        self._open[task_id] = trace
        while len(self._open) > MAX_OPEN_TASK_TRACES:
            oldest = next(iter(self._open))
            self.end(oldest, {"mcp_tasks.outcome": "untraced"})

    def get(self, task_id: object) -> TaskTrace | None:
        if not isinstance(task_id, str) or not self._open:
            return None
        return self._open.get(task_id)

    def track(
        self, task_id: str, attributes: dict[str, Any], parent: Any = None
    ) -> TaskTrace | None:
        """The task's span, begun now (under ``parent``) if it has none yet, owned by the
        caller (a Poller) from now on. Its ``mcp_tasks.task.id`` is the table's to write (by
        its client's redaction), whatever ``attributes`` says."""
        attributes = {**attributes, "mcp_tasks.task.id": self.redaction.label(task_id)}
        found = self._open.get(task_id)
        if found is None:
            found = self.begin(attributes, parent)
            if found is None:
                return None
            self.bind(task_id, found)
        else:
            found.span.set_attributes(attributes)
        found.owned = True
        found.ended_at = None
        return found

    def end(self, task_id: str, attributes: Mapping[str, Any]) -> None:
        """End ``task_id``'s span."""
        trace = self._open.pop(task_id, None)
        if trace is not None:
            self._finish(trace, attributes, None)

    def terminal(self, task_id: str, attributes: Mapping[str, Any]) -> None:
        """A terminal status of ``task_id`` was read: a span no Poller follows ends there (its
        end time and outcome are kept; it is ended when the client closes, unless a Poller
        adopts it first and ends it with the outcome)."""
        trace = self._open.get(task_id)
        if trace is not None and not trace.owned and trace.ended_at is None:
            trace.ended_at = (time.time_ns(), time.monotonic(), dict(attributes))

    def finish(
        self, trace: TaskTrace, attributes: Mapping[str, Any], error: BaseException | None
    ) -> None:
        """End ``trace`` (bound to a task or not: a call that made no task), once."""
        if trace.task_id is not None and self._open.get(trace.task_id) is trace:
            del self._open[trace.task_id]
        if trace.span is None:
            return
        self._finish(trace, attributes, error)

    def close(self) -> None:
        """The client closed: every open task span ends."""
        opened, self._open = self._open, {}
        for trace in opened.values():
            self._finish(trace, {"mcp_tasks.outcome": "client closed"}, None)

    def _finish(
        self, trace: TaskTrace, attributes: Mapping[str, Any], error: BaseException | None
    ) -> None:
        if trace.span is None:
            return
        end_ns: int | None = None
        end_mono = time.monotonic()
        ended = dict(attributes)
        if trace.ended_at is not None:  # its terminal status was read back then
            end_ns, end_mono, ended = trace.ended_at
        ended["mcp_tasks.task.polls"] = trace.polls
        span, trace.span = trace.span, None
        span.set_attributes(ended)
        if error is not None:
            _set_error(span, error)
        span.end(end_time=end_ns)
        found = self.tracing.meters
        if found is not None:
            outcome = {"mcp_tasks.outcome": str(ended.get("mcp_tasks.outcome", ""))}
            found.in_flight.add(-1)
            found.task.record(end_mono - trace.started, outcome)
            found.polls.record(trace.polls, outcome)


class ReceivedTraces:
    """The trace of each task this client runs for the server (a receiver's task), by task id:
    the context of the request that created it. The server's later ``tasks/*`` about it join
    that trace (and link the server's own context), so a received task is one trace however
    many times the server polls. Bounded (the oldest forgotten first); the session owns it."""

    def __init__(self, limit: int = MAX_OPEN_TASK_TRACES, tracing: Tracing | None = None) -> None:
        self._contexts: dict[str, Any] = {}
        self._limit = limit
        self.tracing = tracing if tracing is not None else default_tracing()

    def note(self, task_id: str) -> None:
        """``task_id``'s trace is the current context's (the creating request's span); nothing
        when spans are off."""
        if self.tracing.tracer is None:
            return
        from opentelemetry import context

        self._contexts.pop(task_id, None)
        self._contexts[task_id] = context.get_current()
        while len(self._contexts) > self._limit:
            del self._contexts[next(iter(self._contexts))]

    def get(self, task_id: object) -> Any:
        """The context of ``task_id``'s trace, or None."""
        if not isinstance(task_id, str) or not self._contexts:
            return None
        return self._contexts.get(task_id)

    def forget(self, task_id: str) -> None:
        self._contexts.pop(task_id, None)


def text_attr(text: str) -> str:
    """Free text as a span attribute: scrubbed of known task ids when the process default's
    redaction is on (a server's request id may spell the task's id inside it)."""
    return _Redaction.text_attr(text)


def task_attr(task_id: str) -> str:
    """A task id as a span attribute value (redacted when the switch is on)."""
    return task_id_label(task_id)


def start_span(name: str, attributes: dict[str, Any]) -> Any:
    """A span that is not made current (a task lifecycle outlives the code that starts it),
    or None when spans are off (the process default's tracer; a client's:
    :meth:`Tracing.start_span`). End it with :func:`end_span`."""
    return _start_span(tracer(), name, attributes)


def _start_span(current: Any, name: str, attributes: dict[str, Any]) -> Any:
    if current is None:
        return None
    return current.start_span(name, attributes=attributes)


def end_span(span: Any, attributes: Mapping[str, Any], error: BaseException | None) -> None:
    if span is None:
        return
    span.set_attributes(dict(attributes))
    if error is not None:
        _set_error(span, error)
    span.end()


def _set_error(span: Any, error: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    code = getattr(error, "code", None)
    if isinstance(code, int):
        span.set_attribute("rpc.response.status_code", str(code))
        span.set_attribute("error.type", str(code))
    else:
        span.set_attribute("error.type", type(error).__name__)
    span.set_status(Status(StatusCode.ERROR, type(error).__name__))


def span(
    name: str,
    attributes: dict[str, Any],
    *,
    client: bool = False,
    server: bool = False,
    parent: Any = None,
    links: Any = None,
) -> Any:
    """:func:`_span` on the process default's tracer (a client's: :meth:`Tracing.span`)."""
    return _span(
        tracer(), name, attributes, client=client, server=server, parent=parent, links=links
    )


@contextmanager
def _span(
    current: Any,
    name: str,
    attributes: dict[str, Any],
    *,
    client: bool = False,
    server: bool = False,
    parent: Any = None,
    links: Any = None,
) -> Iterator[Any]:
    """A current span around a block (a request, a handler call); None when spans are off.
    ``parent``: a Context to hang it under instead of the current one (a task's). ``links``:
    span contexts it links to (the server's, for a request the server sent). An exception the
    block raises marks it an error (type and JSON-RPC code only: an error's text may carry a
    task id)."""
    if current is None:
        yield None
        return
    from opentelemetry.trace import Link, SpanKind

    kind = SpanKind.CLIENT if client else SpanKind.SERVER if server else SpanKind.INTERNAL
    with current.start_as_current_span(
        name,
        context=parent,
        kind=kind,
        attributes=attributes,
        links=[Link(link) for link in links] if links else None,
        record_exception=False,
        set_status_on_exception=False,
    ) as opened:
        try:
            yield opened
        except BaseException as exc:
            _set_error(opened, exc)
            raise


def record_span(
    name: str,
    attributes: dict[str, Any],
    parent: Any,
    start_ns: int,
    error: BaseException | None = None,
) -> None:
    """A CLIENT span recorded after the fact (a quiet poll that turned out to be news), from
    ``start_ns`` (``time.time_ns()``) to now, under ``parent`` (a Context), on the process
    default's tracer (a client's: :meth:`Tracing.record_span`)."""
    _record_span(tracer(), name, attributes, parent, start_ns, error)


def _record_span(
    current: Any,
    name: str,
    attributes: dict[str, Any],
    parent: Any,
    start_ns: int,
    error: BaseException | None,
) -> None:
    if current is None:
        return
    from opentelemetry.trace import SpanKind

    made = current.start_span(
        name, context=parent, kind=SpanKind.CLIENT, attributes=attributes, start_time=start_ns
    )
    if error is not None:
        _set_error(made, error)
    made.end()
