"""News the server sends on its own, relayed to the tracked tasks: push and progress.

Job: (1) with ``PollPolicy.listen`` (2026-07-28), keep one ``subscriptions/listen`` open for
the ids the Tracker asks for (its ``Relisten``: the tasks being polled), and tell the Tracker
which ids the server agreed to push (E C40, C41; those are then polled only as a slow safety
net, A-25) and when the listen ended or was refused (the Tracker falls back to polling).
(2) Hand each TaskProgress the client read to the task's watchers and progress callbacks; a
problem with a progress notification becomes a warning. (3) Hand each InputEvent of the router
to the task's watchers, and its news to the Tracker: a server's request arrived
(``QuestionAsked``), answered (``QuestionAnswered``), answered with an error
(``QuestionFailed``), or nobody handled it (``InputUnhandled``, which ends the wait by
``PollPolicy.on_unhandled_input``).

May import: ``registry``, ``inputs`` (its events), ``models``, ``_exceptions``, ``_sansio``
(the Tracker's events), ``observability``, anyio. The client is reached only through
the ``PollPort`` (its ``listen_tasks``), passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anyio

from .. import observability as _obs
from .._exceptions import DecodeError, MCPTasksError
from .._sansio.progress import TaskProgress
from .._sansio.scheduler import PollPolicy
from .._sansio.task_machine import Violation
from .._sansio.tracker import (
    Action,
    Event,
    InputUnhandled,
    ListenAcknowledged,
    ListenEnded,
    QuestionAnswered,
    QuestionAsked,
    QuestionFailed,
    Tracker,
)
from ..inputs import InputEvent, InputEventKind
from ..models import JSONRPCNotification
from .port import PollPort
from .registry import Registry

__all__ = [
    "SUBSCRIPTION_ID_META",
    "Listener",
    "call_progress",
    "relay_input",
    "relay_progress",
    "tracker_event",
]

log = _obs.get_logger("poller")

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"
"""``_meta`` key naming the listen a notification belongs to (2026-07-28, E C41)."""


class Listener:
    """The one open listen of a Poller (E C39-C42): opens what the Tracker asks for
    (``Relisten``), and tells it what the server acknowledged and when the listen ended."""

    def __init__(
        self,
        port: PollPort,
        policy: PollPolicy,
        feed: Callable[[Event], None],
        warn: Callable[[MCPTasksError], None],
    ) -> None:
        self._port = port
        self._floor = policy.floor
        self._feed = feed
        self._warn = warn
        self._wanted: frozenset[str] = frozenset()
        self._listening: frozenset[str] | None = None  # the ids of the listen open now
        self._listen_id: object = None  # the open listen's request id: its subscriptionId
        self._changed = anyio.Event()
        self.opened = 0

    def want(self, task_ids: frozenset[str]) -> None:
        """The Tracker's ``Relisten``: the listen should cover ``task_ids`` (none: closed)."""
        self._wanted = task_ids
        self._changed.set()

    async def run(self) -> None:
        """One listen at a time for the ids the Tracker last asked for, reopened when it asks
        again; a burst of changes within ``PollPolicy.floor`` is one reopen."""
        scope: anyio.CancelScope | None = None
        async with anyio.create_task_group() as group:
            while True:
                await self._changed.wait()
                self._changed = anyio.Event()
                await anyio.sleep(self._floor)  # a burst of new waits: one reopen
                wanted = self._wanted
                if wanted == self._listening:
                    continue
                if scope is not None:
                    scope.cancel()
                self._listening = wanted
                if wanted:
                    scope = anyio.CancelScope()
                    group.start_soon(self._listen_once, wanted, scope)

    async def _listen_once(self, task_ids: frozenset[str], scope: anyio.CancelScope) -> None:
        with scope:
            self.opened += 1

            def opened(request_id: object) -> None:
                self._listen_id = request_id

            error: MCPTasksError | None = None
            try:
                await self._port.listen_tasks(sorted(task_ids), on_open=opened)
            except MCPTasksError as exc:
                error = exc
            # Ended or refused by the server: the Tracker falls back to polling (and reopens
            # only when the set of polled tasks changes, never in a loop).
            self._feed(ListenEnded(task_ids, anyio.current_time(), error))

    def on_acknowledged(self, notification: JSONRPCNotification) -> None:
        """E C40: the ids the server agreed to push; the others keep their usual polling."""
        params = notification.params or {}
        meta = params.get("_meta")
        subscription = meta.get(SUBSCRIPTION_ID_META) if isinstance(meta, dict) else None
        if subscription is not None and str(subscription) != str(self._listen_id):
            return  # E C41: another (or an earlier) listen's acknowledgement
        filters = params.get("notifications")
        ids = filters.get("taskIds") if isinstance(filters, dict) else None
        if not isinstance(ids, list):
            self._warn(
                DecodeError("$.params.notifications.taskIds", "expected an array of ids", ids)
            )
            return
        self._feed(ListenAcknowledged(frozenset(i for i in ids if isinstance(i, str))))


def relay_input(
    registry: Registry,
    tracker: Tracker,
    perform: Callable[[Sequence[Action]], None],
    event: InputEvent,
) -> None:
    """An InputEvent of a tracked task goes to its watchers, and what it says of the task to
    the Tracker (:func:`tracker_event`), whose actions ``perform`` carries out (an unhandled
    request under ``UnhandledInputPolicy.FAIL`` ends the task's waits with InputNotHandled)."""
    if event.task_id is None:
        return
    tracked = registry.live.get(event.task_id)
    if tracked is None or tracked.done:
        return
    tracked.push(event)
    told = tracker_event(event)
    if told is not None:
        perform(tracker.handle(told))


def tracker_event(event: InputEvent) -> Event | None:
    """The Tracker's event for an InputEvent of a task (None: nothing it keeps). A 2026-07-28
    key's events name one of the task's keys, which the Tracker tells from a question."""
    task_id = event.task_id
    if task_id is None:
        return None
    kind = event.kind
    if kind is InputEventKind.ARRIVED:
        return QuestionAsked(task_id, event.request_id, event.method)
    if kind is InputEventKind.ANSWERED:
        return QuestionAnswered(task_id, event.request_id)
    if kind is InputEventKind.QUEUED:  # the shared journal's worker answers it
        return QuestionAnswered(task_id, event.request_id, here=False)
    if kind in (InputEventKind.REJECTED, InputEventKind.HANDLER_FAILED):
        return QuestionFailed(task_id, event.request_id, event.error)
    if kind is InputEventKind.UNHANDLED:
        return InputUnhandled(task_id, event.method, event.request_id)
    return None  # DUPLICATE (taken already), ACCEPTED_AS_TASK (its end follows)


def relay_progress(
    registry: Registry,
    item: TaskProgress | Violation | DecodeError,
    *,
    warn: Callable[[Violation | MCPTasksError], None],
) -> None:
    """The client read a progress notification: a task's progress goes to its watchers and
    waits; a problem (V-24, E C43, a malformed one) to ``warn``."""
    if not isinstance(item, TaskProgress):
        warn(item)
        return
    tracked = registry.live.get(item.task_id)
    if tracked is None or not tracked.tracking:
        return
    tracked.push(item)
    for callback in list(tracked.progress_callbacks or ()):
        call_progress(callback, item)


def call_progress(callback: Callable[[TaskProgress], None], progress: TaskProgress) -> None:
    try:
        callback(progress)
    except Exception:  # the caller's callback: logged, it stops nothing
        log.exception("an on_progress callback raised")
