"""News the server sends on its own, relayed to the tracked tasks: push and progress.

Job: (1) with ``PollPolicy.listen`` (2026-07-28), keep one ``subscriptions/listen`` open for
the tasks being polled, reopened when that set changes, and know which ids the server agreed
to push (E C40, C41): those are then polled only as a slow safety net (A-25). (2) Hand each
TaskProgress the client read to the task's watchers and progress callbacks; a problem with a
progress notification becomes a warning. (3) Hand each InputEvent of the router to the task's
watchers; one nobody handled ends the wait, by ``PollPolicy.on_unhandled_input``.

May import: ``registry``, ``inputs`` (its events), ``models``, ``_exceptions``, ``_sansio``,
``observability``, anyio. The
client is reached only through ``listen`` (its ``listen_tasks``), passed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .. import observability as _obs
from .._exceptions import DecodeError, InputNotHandled, MCPTasksError
from .._sansio.progress import TaskProgress
from .._sansio.scheduler import PollPolicy, UnhandledInputPolicy
from .._sansio.task_machine import Violation
from ..inputs import InputEvent, InputEventKind
from ..models import JSONRPCNotification
from .registry import Registry

__all__ = ["SUBSCRIPTION_ID_META", "Listener", "call_progress", "relay_input", "relay_progress"]

log = _obs.get_logger("poller")

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"
"""``_meta`` key naming the listen a notification belongs to (2026-07-28, E C41)."""

ListenCall = Callable[..., Awaitable[Any]]
"""``Client.listen_tasks``: ``(task_ids, *, on_open)``, returning when the listen ends."""


class Listener:
    """The one open listen of a Poller (E C39-C42), and what the server acknowledged."""

    def __init__(
        self,
        registry: Registry,
        listen: ListenCall,
        policy: PollPolicy,
        warn: Callable[[MCPTasksError], None],
    ) -> None:
        self._registry = registry
        self._listen = listen
        self._enabled = policy.listen
        self._floor = policy.floor
        self._warn = warn
        self.listening: frozenset[str] = frozenset()
        """The ids the open listen asked for."""
        self.acknowledged: frozenset[str] = frozenset()
        """Those the server acknowledged: polled only as a safety net."""
        self._listen_id: object = None  # the open listen's request id: its subscriptionId
        self._changed = anyio.Event()
        self.opened = 0

    def changed(self) -> None:
        """The set of polled tasks may have changed: reopen the listen if it did (only with
        ``PollPolicy.listen``)."""
        if self._enabled and self._registry.polled() != self.listening:
            self._changed.set()

    async def run(self) -> None:
        """One listen at a time for the tasks waited on, reopened when that set changes; a
        listen that ends or fails falls back to polling (a warning), until the set changes."""
        scope: anyio.CancelScope | None = None
        async with anyio.create_task_group() as group:
            while True:
                await self._changed.wait()
                self._changed = anyio.Event()
                await anyio.sleep(self._floor)  # a burst of new waits: one reopen
                wanted = self._registry.polled()
                if wanted == self.listening:
                    continue
                if scope is not None:
                    scope.cancel()
                self.listening, self.acknowledged = wanted, frozenset()
                if wanted:
                    scope = anyio.CancelScope()
                    group.start_soon(self._listen_once, wanted, scope)

    async def _listen_once(self, task_ids: frozenset[str], scope: anyio.CancelScope) -> None:
        with scope:
            self.opened += 1

            def opened(request_id: object) -> None:
                self._listen_id = request_id

            try:
                await self._listen(sorted(task_ids), on_open=opened)
            except MCPTasksError as exc:
                self._warn(exc)
            if self.listening == task_ids:
                # Ended or refused by the server: poll as usual again. ``listening`` keeps
                # this set, so the listen is reopened only when the set of waited tasks
                # changes, never in a loop against a server that will not listen.
                self.acknowledged = frozenset()

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
        self.acknowledged = frozenset(i for i in ids if isinstance(i, str)) & self.listening


def relay_input(
    registry: Registry, policy: PollPolicy, end: Callable[..., None], event: InputEvent
) -> None:
    """An InputEvent of a tracked task goes to its watchers; one nobody handled ends its
    wait with InputNotHandled under ``UnhandledInputPolicy.FAIL`` (``end(tracked, error=)``)."""
    if event.task_id is None:
        return
    tracked = registry.live.get(event.task_id)
    if tracked is None or tracked.done:
        return
    tracked.push(event)
    if (
        event.kind is InputEventKind.UNHANDLED
        and policy.on_unhandled_input is UnhandledInputPolicy.FAIL
    ):
        end(tracked, error=InputNotHandled(event.task_id, event.method, event.request_id))


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
