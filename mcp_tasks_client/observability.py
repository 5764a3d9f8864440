"""Logging and tracing: the logger names, the task-id redaction switch, optional spans.

Logging. Every area logs to its own child of ``mcp_tasks_client`` (:data:`LOGGERS` lists them
with what each says and at which level). Nothing is configured here: the host attaches
handlers and levels as usual (``logging.getLogger("mcp_tasks_client.client").setLevel(...)``).
Records are built with ``%``-style arguments, so a disabled level costs one ``isEnabledFor``.

Redaction. Task ids (and session ids) are bearer capabilities: whoever reads one can poll,
answer or cancel the task. After :func:`redact_task_ids` no record this library logs and no
span attribute it sets carries a raw task id: each is replaced by a stable short hash
(``task-1a2b3c4d5e6f``, the same for the same id, so the records of one task still
correlate). It is one process-wide switch in the library, not a ``logging.Filter`` the host
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
host's. Span and attribute names follow the OpenTelemetry semantic conventions for MCP
(status: development) where they exist: a request span is ``{mcp.method.name}`` (``tools/call
{gen_ai.tool.name}`` for a tool call), kind CLIENT, with ``mcp.method.name``,
``jsonrpc.request.id``, ``mcp.protocol.version``, ``gen_ai.tool.name``, and on failure
``rpc.response.status_code`` (the JSON-RPC error code) and ``error.type``. What the
conventions do not cover is under ``mcp_tasks.``: ``mcp_tasks.generation``,
``mcp_tasks.task.id`` (redactable), ``mcp_tasks.task.status`` and ``mcp_tasks.outcome``. A
result served from the caller's ``ResultCache`` sends no request: it gets a span of its own,
``{mcp.method.name}``, with ``mcp_tasks.cache.hit`` true.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = [
    "LOGGERS",
    "MAX_REMEMBERED",
    "ROOT_LOGGER",
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
    "outcome (or the error that ended its tracking); WARNING: every Poller.warnings entry",
    "mcp_tasks_client.inputs": "ERROR: an input handler that raised; WARNING: the tasks/cancel "
    "after it failed",
    "mcp_tasks_client.receiver": "DEBUG: a received task created, a status notification not "
    "sent; ERROR: a received task's body that raised",
    "mcp_tasks_client.transport.http": "DEBUG: a session opened, and ended by DELETE (never "
    "its id)",
    "mcp_tasks_client.transport.stdio": "DEBUG: the child process started and exited",
    "mcp_tasks_client.journal": "DEBUG: an entry recorded, a task finished in the journal",
}
"""Every logger the library uses, with its levels. The root ``mcp_tasks_client`` itself logs
nothing: set its level or handlers to cover them all."""

MAX_REMEMBERED = 4096
"""How many task ids the redaction scrub remembers (the newest): an id older than that is
still hashed where the library formats it, but no longer scrubbed out of free text."""


class _Redaction:
    enabled = False
    key: bytes | None = None
    labels: dict[str, str] = {}  # noqa: RUF012 - the process-wide memo of raw -> label


REDACTION = _Redaction
"""The switch's state, read on the hot path (one attribute read)."""


def redact_task_ids(enabled: bool = True, *, key: bytes | None = None) -> None:
    """Hide task ids in every log record and span attribute from now on (``False``: show
    them again). Each id becomes ``task-`` and 12 hex digits of its BLAKE2b hash, keyed with
    ``key`` when given (a secret of the host's: the hashes then cannot be checked against a
    guessed id, and differ between hosts with different keys)."""
    _Redaction.enabled = enabled
    _Redaction.key = key
    _Redaction.labels = {}


def task_ids_redacted() -> bool:
    """Whether :func:`redact_task_ids` is on."""
    return _Redaction.enabled


def _hash(task_id: str) -> str:
    key = _Redaction.key or b""
    digest = hashlib.blake2b(task_id.encode("utf-8", "surrogatepass"), digest_size=6, key=key)
    return "task-" + digest.hexdigest()


def task_id_label(task_id: str) -> str:
    """How the library shows ``task_id`` in logs and spans: the id itself, or its hash when
    redaction is on (for a host that wants to correlate its own records with the library's)."""
    if not _Redaction.enabled:
        return task_id
    labels = _Redaction.labels
    label = labels.get(task_id)
    if label is None:
        label = labels[task_id] = _hash(task_id)
        while len(labels) > MAX_REMEMBERED:
            del labels[next(iter(labels))]
    return label


def remember(task_id: object) -> None:
    """Note a task id the library met, so the scrub hides it in any later text (cheap: one
    attribute read when redaction is off)."""
    if _Redaction.enabled and isinstance(task_id, str):
        task_id_label(task_id)


class TaskId:
    """A task id as a log argument: formatted (redacted or not) only if the record is."""

    __slots__ = ("raw",)

    def __init__(self, raw: str) -> None:
        self.raw = raw

    def __str__(self) -> str:
        return task_id_label(self.raw)

    def __repr__(self) -> str:
        return task_id_label(self.raw) if _Redaction.enabled else repr(self.raw)


def _scrub(text: str) -> str:
    labels = _Redaction.labels
    found = [task_id for task_id in labels if task_id and task_id in text]
    if not found:
        return text
    found.sort(key=len, reverse=True)  # the longest first: one id inside another
    pattern = re.compile("|".join(re.escape(task_id) for task_id in found))
    return pattern.sub(lambda match: labels[match.group()], text)


class _RedactingFilter(logging.Filter):
    """On every library logger: with redaction on, the record's text (message, traceback,
    stack) is formatted now and scrubbed of known task ids; the exception object is dropped
    from the record so no later formatter reads the raw text from it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _Redaction.enabled:
            return True
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


class _Tracing:
    decided = False
    tracer: Any = None


def tracing(enabled: bool = True, *, tracer_provider: Any = None) -> None:
    """Spans on or off for this process. ``tracing(False)``: none at all (no span work on
    any path). ``tracing(True)``: spans on the tracer ``mcp_tasks_client`` of
    ``tracer_provider`` (an ``opentelemetry.trace.TracerProvider``), or of the global provider
    when None; ImportError if opentelemetry-api is not installed. Without a call, spans are on
    exactly when opentelemetry-api can be imported (looked up once, at the first span site)."""
    _Tracing.decided = True
    if not enabled:
        _Tracing.tracer = None
        return
    _Tracing.tracer = _make_tracer(tracer_provider)


def _make_tracer(provider: Any) -> Any:
    from opentelemetry import trace

    from . import __version__

    if provider is None:
        return trace.get_tracer(ROOT_LOGGER, __version__)
    return provider.get_tracer(ROOT_LOGGER, __version__)


def tracer() -> Any:
    """The tracer, or None when spans are off: decided once, then one attribute read."""
    if _Tracing.decided:
        return _Tracing.tracer
    _Tracing.decided = True
    try:
        _Tracing.tracer = _make_tracer(None)
    except ImportError:
        _Tracing.tracer = None
    return _Tracing.tracer


def text_attr(text: str) -> str:
    """Free text as a span attribute: scrubbed of known task ids when redaction is on (a
    server's request id may spell the task's id inside it)."""
    return _scrub(text) if _Redaction.enabled else text


def task_attr(task_id: str) -> str:
    """A task id as a span attribute value (redacted when the switch is on)."""
    return task_id_label(task_id)


def start_span(name: str, attributes: dict[str, Any]) -> Any:
    """A span that is not made current (a task lifecycle outlives the code that starts it),
    or None when spans are off. End it with :func:`end_span`."""
    current = tracer()
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


@contextmanager
def span(name: str, attributes: dict[str, Any], *, client: bool = False) -> Iterator[Any]:
    """A current span around a block (a request, a handler call); None when spans are off.
    An exception the block raises marks it an error (type and JSON-RPC code only: an error's
    text may carry a task id)."""
    current = tracer()
    if current is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
    with current.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as opened:
        try:
            yield opened
        except BaseException as exc:
            _set_error(opened, exc)
            raise
