"""The session's orphan watch: a task call whose caller stopped waiting is read to its end.

Job: no lost task ids. After a task call (``start``) timed out or was cancelled once its
request was sent, its answer is still read for ``Timeouts.orphan_watch`` seconds; the task it
created is reported as an :class:`~mcp_tasks_client._session.terms.OrphanedTask` (to the
``on_orphaned_task`` handlers, and as a WARNING), and an answer that never came is a WARNING
saying a task may exist that no one knows the id of.

May import: ``_session.terms``, ``_drivers``, ``_sansio``, ``models``, ``_exceptions``,
``observability``.

Theory of operation. The session decides that a request is to be watched (a task call, sent,
the session open) and starts :meth:`OrphanWatch.watch` in its task group with the request's
:class:`~mcp_tasks_client._session.terms.AwaitedAnswer`, which stays in the session's table of
awaited answers until the watch ends, so the reader still delivers the answer to it. The
watch ends when the answer comes, when ``Timeouts.orphan_watch`` passes (the request is then
given up, without ``notifications/cancelled``: its caller already stopped) or when the
session closes; it always takes the answer out of the table and closes the request's
progress token.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from .. import observability as _obs
from .._drivers import Driver
from .._exceptions import ClientClosed, RPCError
from ..models import RequestId
from .terms import AwaitedAnswer, OrphanedTask, Timeouts, subscribe

__all__ = ["OrphanWatch"]

log = _obs.get_logger("client")

_UNANSWERED = (
    "the answer to the abandoned task call of %r (request %r) did not come %s: a task may "
    "exist on the server that no one knows the id of"
)


class OrphanWatch:
    """Reads a task call's answer after its caller stopped waiting (see the module
    docstring); reports the task it created."""

    def __init__(
        self,
        driver: Driver,
        timeouts: Timeouts,
        redaction: _obs.Redaction,
        awaited: dict[RequestId, AwaitedAnswer],
        close_request: Callable[[RequestId], None],
        give_up: Callable[[RequestId], None],
    ) -> None:
        self._driver = driver
        self._timeouts = timeouts
        self._redaction = redaction
        self._waiters = awaited
        """The session's table of awaited answers (this watch takes its own out of it)."""
        self._close_request = close_request
        """The progress book's: the request's token, if it had one, stops."""
        self._give_up = give_up
        """Stop waiting for a request (no ``notifications/cancelled``)."""
        self._handlers: list[Callable[[OrphanedTask], None]] = []

    def on_orphaned_task(self, handler: Callable[[OrphanedTask], None]) -> Callable[[], None]:
        """Call ``handler`` with each task created by a ``start()`` its caller stopped waiting
        for (see :class:`OrphanedTask`); returns its unsubscriber. Runs in the reader: must
        not block (start a task of your own to cancel or poll it)."""
        return subscribe(self._handlers, handler)

    async def watch(
        self, request_id: RequestId, waiter: AwaitedAnswer, tool: str, reason: str
    ) -> None:
        try:
            with anyio.move_on_after(self._timeouts.orphan_watch):
                await waiter.wait()
        except BaseException:  # cancelled: the client is closing
            self._end(request_id, waiter, tool, reason)
            raise
        finally:
            self._waiters.pop(request_id, None)
            self._close_request(request_id)
        if not waiter.answered:
            self._give_up(request_id)
            within = f"within {self._timeouts.orphan_watch:g} s"
            log.warning(_UNANSWERED, tool, request_id, within)
            return
        self._end(request_id, waiter, tool, reason)

    def _end(self, request_id: RequestId, waiter: AwaitedAnswer, tool: str, reason: str) -> None:
        """Report the task the watched answer created, or warn that no answer came: the close
        (or the connection's end) marks the waiter done with ClientClosed or what broke it,
        and a request's own fault ends it too. An error answer from the server created no
        task: nothing to say."""
        if waiter.result is not None:
            self.report(waiter, tool, reason)
        elif isinstance(waiter.error, RPCError):
            return
        elif isinstance(waiter.error, ClientClosed) or waiter.error is None:
            log.warning(_UNANSWERED, tool, request_id, "before the client closed")
        else:
            log.warning(
                _UNANSWERED, tool, request_id, f"before its request failed ({waiter.error})"
            )

    def report(self, waiter: AwaitedAnswer, tool: str, reason: str) -> None:
        task_id = self._driver.created_task_id(waiter.result)
        if task_id is None or waiter.result is None:
            return  # an error, or no task: nothing runs on the server
        orphan = OrphanedTask(task_id, tool, reason, waiter.result)
        self._redaction.remember(task_id)
        log.warning(
            "task %r of tool %r was created after its caller stopped waiting (%s); it runs "
            "on the server until it ends or is cancelled",
            _obs.TaskId(task_id, self._redaction),
            tool,
            reason,
            extra=self._redaction.log_extra,
        )
        for handler in list(self._handlers):
            try:
                handler(orphan)
            except Exception:
                log.exception("on_orphaned_task handler raised")
