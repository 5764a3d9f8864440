"""The input router's share of a journal many workers use: each input answered once.

Job: the coordination between workers, and only that. Before a handler runs on an input
request of a task in the shared journal, the request is taken there (``claim_input``: once
per key across every process); one this worker has no handler for is queued there instead of
refused; a worker with a handler answers what others queued (:meth:`SharedInputs.
answer_queued`).

May import: ``_routing.events``, ``_routing.handlers``, ``_client`` (types only), ``journal``,
``_exceptions``, ``models``, ``observability``.

Theory of operation. The router asks :meth:`SharedInputs.ours` before it runs a handler: True
when no journal is shared (this process alone decides) or the key was taken here; False when
another worker took it (DUPLICATE), when it was queued (QUEUED) or when the journal failed
(HANDLER_FAILED with the JournalError: never answered twice). Events go out through the
router's ``emit``; a queued request's handler runs through the router's ``dispatch`` (its
span and its tracked tasks), so a request is answered the same way whoever took it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import observability as _obs
from .._exceptions import MCPTasksError, RPCError, UsageError
from ..journal import QueuedInput, SharedJournal
from ..models import JSONObject, RequestId
from .events import InputEvent, InputEventKind, event_for
from .handlers import InputHandlers

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["SharedInputs"]

log = _obs.get_logger("inputs")

Dispatch = Callable[[str | None, RequestId, str, JSONObject], Awaitable[Any]]
"""The router's way to run a request's handler: ``(task_id, request_id, method, params)``."""


class SharedInputs:
    """A router's dealings with a shared journal (see the module docstring)."""

    def __init__(
        self,
        journal: SharedJournal | None,
        worker: str | None,
        handlers: InputHandlers,
        emit: Callable[[InputEvent], None],
        dispatch: Dispatch,
    ) -> None:
        self.journal = journal
        """A journal shared by many workers: each input request of a task is taken there
        before its handler runs (answered once across workers), and one this router has no
        handler for is queued there (None: this process alone decides)."""
        self.worker = worker or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """The name this router takes input requests under in the journal."""
        self._handlers = handlers
        self._emit = emit
        self._dispatch = dispatch

    async def ours(
        self,
        client: Client,
        task_id: str,
        key: str,
        method: str,
        params: JSONObject,
        request_id: RequestId | None,
    ) -> bool:
        """With a shared journal: whether this router answers ``key`` of ``task_id``. With a
        handler, it takes the key in the journal (False: another worker took it, DUPLICATE);
        without one, it queues the request there (QUEUED) and leaves it. A journal that fails
        leaves the request unanswered (HANDLER_FAILED with the JournalError): never answered
        twice. Without a journal: True."""
        journal = self.journal
        if journal is None:
            return True
        said: RequestId = key if request_id is None else request_id  # as the other events say
        try:
            if not self._handlers.has_handler(task_id, method):
                queued = QueuedInput(
                    server=client.transport.identity,
                    task_id=task_id,
                    key=key,
                    method=method,
                    params=params,
                    request_id=request_id,
                    session_id=client.transport.session,
                    queued_by=self.worker,
                )
                await journal.queue_input(queued)
                self._emit(InputEvent(InputEventKind.QUEUED, task_id, said, method))
                return False
            if await journal.claim_input(client.transport.identity, task_id, key, self.worker):
                return True
        except MCPTasksError as exc:
            log.warning(
                "input %s of task %s: the journal failed: %s",
                key,
                task_id,
                exc,
                extra=client.redaction.log_extra,
            )
            self._emit(InputEvent(InputEventKind.HANDLER_FAILED, task_id, said, method, exc))
            return False
        self._emit(InputEvent(InputEventKind.DUPLICATE, task_id, said, method))
        return False

    async def answer_queued(self, client: Client, *, timeout: float | None = None) -> int:
        """:meth:`InputRouter.answer_queued` for ``client``: each queued request this router
        has a handler for, taken in the journal first, answered once. Deadline: the handlers'
        own time, then ``timeout`` for each answer sent. Cancelled: the running handler is
        cancelled and its request stays taken, unanswered."""
        journal = self.journal
        if journal is None:
            raise UsageError("answer_queued needs InputRouter(journal=...): a shared journal")
        answered = 0
        for queued in await journal.queued_inputs(client.transport.identity):
            if queued.session_id != client.transport.session:
                continue  # asked on another session: only that session can answer it
            if not self._handlers.has_handler(queued.task_id, queued.method):
                continue
            server, task_id, key = queued.server, queued.task_id, queued.key
            said: RequestId = key if queued.request_id is None else queued.request_id
            if not await journal.claim_input(server, task_id, key, self.worker):
                continue  # another worker took it meanwhile
            self._emit(InputEvent(InputEventKind.ARRIVED, task_id, said, queued.method))
            try:
                result = await self._dispatch(task_id, said, queued.method, queued.params)
            except RPCError as exc:
                kind = event_for(exc)
                self._emit(InputEvent(kind, task_id, said, queued.method, exc))
                continue
            except Exception as exc:
                log.exception(
                    "input handler for %s of task %s raised",
                    queued.method,
                    task_id,
                    extra=client.redaction.log_extra,
                )
                error = RPCError(-32603, f"client input handler failed: {type(exc).__name__}")
                self._emit(
                    InputEvent(InputEventKind.HANDLER_FAILED, task_id, said, queued.method, error)
                )
                continue
            await client.send_input_answer(
                task_id, key, result, request_id=queued.request_id, timeout=timeout
            )
            answered += 1
            self._emit(InputEvent(InputEventKind.ANSWERED, task_id, said, queued.method))
        return answered
