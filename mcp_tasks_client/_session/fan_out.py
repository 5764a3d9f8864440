"""The session's notification fan-out: each notification to the callbacks registered for it,
each progress notification tied to a task to the progress handlers.

Job: from the reader to the caller's callbacks, in the order messages arrived. It owns the
notification callbacks by method, the progress book (which token is whose request or task,
bounded by ``Limits.max_progress_tokens``) and the progress handlers.

May import: ``_session.terms``, ``_drivers``, ``_sansio``, ``models``, ``_exceptions``,
``_limits``, ``observability``.

Theory of operation. The session's reader calls :meth:`NotificationFanOut.dispatch` for each
notification (read in the current form of its generation's draft by the driver). A
``notifications/progress`` goes through the progress book first: the book says which task it
belongs to (the token a task call carried, bound to the created task when its answer is read:
:meth:`NotificationFanOut.open_progress`), and what is wrong with it (a soft violation, a
malformed one); each goes to the progress handlers. Then every callback registered for the
method runs, in the reader, so none may block. A terminal snapshot the client read ends its
task's token (:meth:`NotificationFanOut.saw`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import observability as _obs
from .._drivers import Driver
from .._exceptions import DecodeError, LimitExceeded, MCPTasksError
from .._limits import Limits
from ..models import JSONObject, JSONRPCNotification, RequestId, Task, TaskStatus
from .terms import NotificationHandler, subscribe

if TYPE_CHECKING:  # the progress book is made when a progress token is first used
    from .._sansio.progress import ProgressBook, ProgressStats, TaskProgress
    from .._sansio.task_machine import Violation
    from .terms import ProgressHandler

__all__ = ["NotificationFanOut"]

log = _obs.get_logger("client")


def _is_terminal(status: object) -> bool:
    """A wire status that is terminal, as ``TaskStatus.is_terminal`` says (the one place)."""
    try:
        return isinstance(status, str) and TaskStatus(status).is_terminal
    except ValueError:
        return False


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class NotificationFanOut:
    """Notifications and progress, from the reader to the caller's callbacks (see the module
    docstring). The session makes one and hands it every notification it reads."""

    def __init__(
        self,
        driver: Driver,
        limits: Limits,
        traces: _obs.TaskTraces,
        warn: Callable[[MCPTasksError], None],
    ) -> None:
        self._driver = driver
        self._limits = limits
        self._traces = traces
        self._warn = warn
        self._handlers: dict[str, list[NotificationHandler]] = {}
        self._book: ProgressBook | None = None
        """Which progress token is whose (:attr:`book`): made on first use, so a client
        whose calls carry no progress token (a status) never loads it."""
        self._progress_handlers: list[ProgressHandler] = []
        self.wall_clock: Callable[[], dt.datetime] = _utc_now

    @property
    def book(self) -> ProgressBook:
        """Which progress token is whose (the session checks a request's token here)."""
        if self._book is None:
            from .._sansio.progress import ProgressBook

            self._book = ProgressBook(
                self._limits.max_progress_tokens,
                tasks_keep_tokens=self._driver.progress_outlives_call,
            )
        return self._book

    def close_request(self, request_id: RequestId) -> None:
        """The request is answered or abandoned: its token, if it had one, stops now (no
        book yet: no token was ever held)."""
        if self._book is not None:
            self._book.close_request(request_id)

    def on_notification(self, method: str, handler: NotificationHandler) -> Callable[[], None]:
        """Call ``handler`` for every ``method`` notification; returns its unsubscriber."""
        return subscribe(self._handlers.setdefault(method, []), handler)

    def on_progress(self, handler: ProgressHandler) -> Callable[[], None]:
        """Call ``handler`` with each :class:`TaskProgress` (a ``notifications/progress``
        for a task whose call carried a progress token, or that names the task in its
        related-task ``_meta``) and with each problem such a notification has (a soft
        :class:`Violation`: V-24, E C43; a DecodeError). A Poller relays them to its
        watchers, waits and ``warnings``. Runs in the reader: must not block. Returns the
        unsubscriber. ``on_notification("notifications/progress", ...)`` still sees them raw."""
        return subscribe(self._progress_handlers, handler)

    def progress(self, task_id: str) -> TaskProgress | None:
        """The last progress delivered for the task, if its token is still held (no
        request)."""
        return None if self._book is None else self._book.latest(task_id)

    @property
    def progress_stats(self) -> ProgressStats:
        """What the progress book holds and has counted (bounded by
        ``Limits.max_progress_tokens``)."""
        return self.book.stats

    def dispatch(self, notification: JSONRPCNotification) -> None:
        read = self._driver.read_notification(notification)
        if read is not notification:
            log.debug("read %s in its current form (an earlier draft's)", notification.method)
            notification = read
        if notification.method == "notifications/progress":
            self._on_progress(notification)
        handlers = self._handlers.get(notification.method)
        if not handlers:
            log.debug("no handler for notification %s", notification.method)
            return
        for handler in handlers:
            handler(notification)

    def open_progress(
        self,
        token: str | int,
        request_id: RequestId,
        task_call: bool,
        on_result: Callable[[JSONObject], None] | None,
    ) -> Callable[[JSONObject], None] | None:
        """Hold ``token`` for the request; for a task call, the answer's hook that binds it
        to the created task (from the reader, before the next message is dispatched)."""
        if self.book.open(token, request_id, task_call=task_call):
            limit = self._limits.max_progress_tokens
            self._warn(LimitExceeded("max_progress_tokens", limit, "the progress tokens held"))
        if not task_call:
            return on_result

        def bind(raw: JSONObject) -> None:
            task_id = self._driver.created_task_id(raw)
            if task_id is not None:
                earlier = self.book.bind(request_id, task_id, now=self.wall_clock())
                task = raw.get("task")
                if isinstance(task, dict) and _is_terminal(task.get("status")):
                    self.book.task_ended(task_id)  # created already terminal
                if earlier is not None:
                    self._emit(earlier)
            if on_result is not None:
                on_result(raw)

        return bind

    def _on_progress(self, notification: JSONRPCNotification) -> None:
        progress, problems = self.book.receive(notification.params, now=self.wall_clock())
        for problem in problems:
            self._emit(problem)
        if progress is not None:
            self._emit(progress)

    def _emit(self, item: TaskProgress | Violation | DecodeError) -> None:
        for handler in list(self._progress_handlers):
            try:
                handler(item)
            except Exception:  # the caller's handler: logged, it stops nothing
                log.exception("an on_progress handler raised")

    def saw(self, task: Task) -> Task:
        """A snapshot the client read: a terminal one ends its task's progress token."""
        if task.status.is_terminal:
            if self._book is not None:  # (no book: no token was ever held)
                self._book.task_ended(task.task_id)
            # A task no Poller follows: its span ends with the terminal status read.
            status = task.status.value
            self._traces.terminal(
                task.task_id, {"mcp_tasks.outcome": status, "mcp_tasks.task.status": status}
            )
        return task
