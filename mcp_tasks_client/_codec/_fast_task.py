"""A fast path for decoding the common, valid Task snapshot of either generation.

Theory of operation: a poller decodes one Task per ``tasks/get`` answer, and nearly every one
has the same plain shape: string ``taskId``, a known ``status``, two UTC timestamps written
``YYYY-MM-DDTHH:MM:SS[.fff|.ffffff]Z``, integer or float durations in range, an optional
string ``statusMessage`` and an optional ``_meta`` object. For that shape
:func:`fast_task_2025` and :func:`fast_task_2026` build the :class:`~mcp_tasks_client.Task`
directly, without the generic converter hooks.

Each returns ``None`` (declines) on anything else: another JSON kind anywhere, a missing key,
an unknown status, a timestamp in any other spelling (an offset, a lower-case ``t``/``z``, a
fraction of other than 3 or 6 digits, a leap second), a number out of range or a boolean, the
keys a generation keeps in ``extra`` with a reordering (2025-11-25: ``result``, ``error``,
``inputRequests``; 2026-07-28: the legacy ``ttl``, ``pollInterval``), an inlined ``error`` or
``inputRequests`` (2026-07-28). The caller then runs the strict path, so every error
(DecodeError with its JSON path, UnknownValue) is exactly the strict path's. When the fast
path does answer, its Task equals the strict path's (``tests/test_codec_fast_path.py``
checks that property, with the same ``repr``: timezones, int against float, ``extra`` order).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from ..models import MAX_DURATION_MS, UNSET, Task, TaskStatus

__all__ = [
    "fast_task_2025",
    "fast_task_2026",
    "fast_timestamp",
    "task_decoder_2025",
    "task_decoder_2026",
]

_R = TypeVar("_R")

_FROM_ISO = dt.datetime.fromisoformat
_READS_Z = sys.version_info >= (3, 11)
"""``fromisoformat`` reads a trailing ``Z`` as UTC from Python 3.11 on (3.10: ``+00:00``)."""
_STATUS = {status.value: status for status in TaskStatus}
_MAX = MAX_DURATION_MS

_KNOWN_2025 = frozenset(
    {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "statusMessage", "pollInterval"}
    | {"_meta"}
)
_REORDERED_2025 = ("result", "error", "inputRequests")
"""Keys the strict 2025-11-25 hook moves to the end of ``extra``: the fast path declines."""

_KNOWN_2026 = frozenset(
    {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "statusMessage"}
    | {"pollIntervalMs", "result", "error", "inputRequests", "_meta"}
)
_REORDERED_2026 = ("ttl", "pollInterval")
"""The legacy keys the strict 2026-07-28 hook moves to the end of ``extra``: declined."""


_SEEN_LIMIT = 1024
"""The most timestamps a decoder keeps (:func:`task_decoder_2025` / ``_2026`` with ``cached``):
a poller reads the same ``createdAt`` (and mostly the same ``lastUpdatedAt``) on every poll of
a task, so each decoder keeps those it read, by their text, in a dict of its own (a driver
makes one decoder per client: nothing shared across the process). A datetime is immutable;
the dict is emptied when it reaches this size, so it stays small."""


def fast_timestamp(text: Any) -> dt.datetime | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (optionally ``.fff`` or ``.ffffff`` before the ``Z``) as an
    aware UTC datetime, or ``None`` for anything else (the strict parser decides those).

    The separators and the length are checked here, the digits and field ranges by
    ``datetime.fromisoformat`` (ASCII digits only; month 13, 30 February ... raise). On
    Python 3.10 ``fromisoformat`` does not read ``Z``: ``+00:00`` is what it is given.
    """
    if type(text) is not str:
        return None
    return _fresh_timestamp(text)


def _fresh_timestamp(text: str) -> dt.datetime | None:
    """:func:`fast_timestamp` of a ``str`` (a decoder looked in its cache first)."""
    size = len(text)
    if size != 20 and not ((size == 24 or size == 27) and text[19] == "."):
        return None
    # One slice for the five separators: text[4], [7], [10], [13], [16] are "-", "-", "T",
    # ":", ":".
    if text[-1] != "Z" or text[4:17:3] != "--T::" or not text.isascii():
        return None
    try:
        value = _FROM_ISO(text) if _READS_Z else _FROM_ISO(text[:-1] + "+00:00")
    except ValueError:
        return None
    return value


def _none(text: Any) -> None:
    return None


class _Building(Task):
    """A Task while the fast path fills it in: the same slots (no new ones), with plain
    attribute stores allowed, then made a Task by ``__class__`` assignment. A plain store to
    a slot is about ten times cheaper than calling the slot's ``__set__`` (~5 ns against
    ~55 ns; 12 fields a Task) and than the generated ``__init__``'s bound
    ``object.__setattr__``. Both ``__setattr__`` and ``__delattr__`` must be object's: either
    one in Python (attrs' frozen guards) would route every store through it."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


def _plain_task() -> bool:
    """Whether the fast path may fill a Task in by :class:`_Building`: Task has exactly the
    twelve fields in this order, no validators, converters, ``on_setattr`` hooks or
    post-init, and a Task built so equals (and reprs as) the constructor's. Otherwise the
    fast path calls the constructor (the same object, slower)."""
    fields = attrs.fields(Task)
    plain = all(
        f.validator is None and f.converter is None and f.on_setattr is None for f in fields
    ) and not hasattr(Task, "__attrs_post_init__")
    if not plain or tuple(f.name for f in fields) != _FIELDS:  # pragma: no cover
        return False
    values: tuple[Any, ...] = (
        "t",
        TaskStatus.WORKING,
        None,
        None,
        1,
        "m",
        2,
        {"r": 1},
        None,
        None,
        {},
        {},
    )
    built: Any = object.__new__(_Building)
    for name, value in zip(_FIELDS, values, strict=True):
        setattr(built, name, value)
    built.__class__ = Task
    made = Task(**dict(zip(_FIELDS, values, strict=True)))
    return type(built) is Task and built == made and repr(built) == repr(made)


_FIELDS = (
    "task_id",
    "status",
    "created_at",
    "last_updated_at",
    "ttl",
    "status_message",
    "poll_interval",
    "result",
    "error",
    "input_requests",
    "meta",
    "extra",
)


def _fast_path(
    ttl_key: str,
    interval_key: str,
    known: frozenset[str],
    reordered: tuple[str, ...],
    inlines: bool,
    fallback: Callable[[Any], _R],
    cached: bool,
) -> Callable[[Any], Task | _R]:
    """The fast path of one generation: its duration keys, the keys its Task reads, the keys
    its strict hook reorders; ``inlines``: 2026-07-28 reads ``result`` (and declines an
    inlined ``error`` or ``inputRequests``). Declining is ``return fallback(value)``: the
    strict hook (a decoder) or ``None`` (the bare fast path, which the tests compare). A
    closure, so nothing is passed per call but the value.

    ``cached``: the decoder keeps the timestamps it read (at most ``_SEEN_LIMIT``) in a dict
    of its own. A timestamp not in it is read by :func:`_fresh_timestamp` (writing its checks
    out here measured no gain: paired 1.01), and the Task is filled in here by plain stores
    (:class:`_Building`, issue 12, part 3)."""

    kept: dict[str, dt.datetime] = {}
    seen = kept.get if cached else _none  # ``kept`` is only ever cleared, never replaced

    def fresh(text: str) -> dt.datetime | None:
        value = _fresh_timestamp(text)
        if value is not None and cached:
            if len(kept) >= _SEEN_LIMIT:
                kept.clear()
            kept[text] = value
        return value

    status_of = _STATUS  # str keys only: no other JSON kind equals one
    new = object.__new__
    building = _Building
    task_class = Task
    plain = _plain_task()

    def fast(value: Any) -> Task | _R:
        if type(value) is not dict:
            return fallback(value)
        try:  # a missing key (KeyError), an unhashable status or timestamp (TypeError)
            task_id = value["taskId"]
            status = status_of[value["status"]]
            # The cache is looked up here first: nothing more per timestamp on a repeated poll.
            created_text = value["createdAt"]
            created_at = seen(created_text)
            updated_text = value["lastUpdatedAt"]
            last_updated_at = seen(updated_text)
        except (KeyError, TypeError):
            return fallback(value)
        if type(task_id) is not str:
            return fallback(value)
        if created_at is None:
            if type(created_text) is not str:
                return fallback(value)
            created_at = fresh(created_text)
            if created_at is None:
                return fallback(value)
        if last_updated_at is None:
            if type(updated_text) is not str:
                return fallback(value)
            last_updated_at = fresh(updated_text)
            if last_updated_at is None:
                return fallback(value)
        get = value.get
        # ttl and pollInterval: a JSON number (never a boolean) in 0..MAX_DURATION_MS, or null;
        # a missing ttl is UNSET, a missing pollInterval None.
        ttl = get(ttl_key, UNSET)
        if ttl is not None and ttl is not UNSET:
            kind = type(ttl)
            if (kind is not int and kind is not float) or not 0 <= ttl <= _MAX:
                return fallback(value)
        poll_interval = get(interval_key)
        if poll_interval is not None:
            kind = type(poll_interval)
            if (kind is not int and kind is not float) or not 0 <= poll_interval <= _MAX:
                return fallback(value)
        status_message = get("statusMessage")
        if status_message is not None and type(status_message) is not str:
            return fallback(value)
        meta = get("_meta")
        if meta is not None and type(meta) is not dict:
            return fallback(value)
        # The keys read that are surely there (a value not None, a ttl not UNSET): when
        # they are all the keys, none is unknown, without iterating the keys (the common
        # case); a key present with null is not counted, so then the set decides.
        unread = (
            len(value)
            - 4
            - (ttl is not UNSET)
            - (poll_interval is not None)
            - (status_message is not None)
            - (meta is not None)
        )
        result = None
        if inlines:
            result = get("result")
            if result is not None:
                if type(result) is not dict:
                    return fallback(value)
                unread -= 1
            if get("error") is not None or get("inputRequests") is not None:
                return fallback(value)
        if unread == 0 or known.issuperset(value):  # the common case
            extra: dict[str, Any] = {}
        else:
            for key in reordered:
                if key in value:
                    return fallback(value)
            # The keys the Task does not read, in the order received (as the strict hook).
            extra = {k: v for k, v in value.items() if k not in known}
        if not plain:  # pragma: no cover - a Task that changed shape
            return Task(
                task_id,
                status,
                created_at,
                last_updated_at,
                ttl,
                status_message,
                poll_interval,
                result,
                None,
                None,
                meta,
                extra,
            )
        task: Any = new(building)  # Any: the stores are on a frozen type (by design)
        task.task_id = task_id
        task.status = status
        task.created_at = created_at
        task.last_updated_at = last_updated_at
        task.ttl = ttl
        task.status_message = status_message
        task.poll_interval = poll_interval
        task.result = result
        task.error = None
        task.input_requests = None
        task.meta = meta
        task.extra = extra
        task.__class__ = task_class
        filled: Task = task
        return filled

    return fast


def _decline(value: Any) -> None:
    return None


def task_decoder_2025(
    fallback: Callable[[Any], _R], *, cached: bool = False
) -> Callable[[Any], Task | _R]:
    """The 2025-11-25 fast path, declining to ``fallback``; ``cached``: with a timestamp cache
    of its own (a per-client decoder's; the module's shared decoders keep none)."""
    return _fast_path("ttl", "pollInterval", _KNOWN_2025, _REORDERED_2025, False, fallback, cached)


def task_decoder_2026(
    fallback: Callable[[Any], _R], *, cached: bool = False
) -> Callable[[Any], Task | _R]:
    """The 2026-07-28 fast path (``ttlMs``, ``pollIntervalMs``; ``result`` inlined; an inlined
    ``error`` or ``inputRequests`` declined), declining to ``fallback``; ``cached`` as for
    :func:`task_decoder_2025`."""
    return _fast_path(
        "ttlMs", "pollIntervalMs", _KNOWN_2026, _REORDERED_2026, True, fallback, cached
    )


fast_task_2025 = task_decoder_2025(_decline)
"""A 2025-11-25 Task from a value, or None when the strict path must decide (no cache)."""

fast_task_2026 = task_decoder_2026(_decline)
"""A 2026-07-28 Task from a value, or None when the strict path must decide (no cache)."""
