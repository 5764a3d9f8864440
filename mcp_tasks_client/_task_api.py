"""Tasks, typed: start a tool call as a task, read its snapshot and result, answer its input
(2026-07-28), listen for its status, cancel and list tasks, each as the generation's driver
says it is done.

May import what ``_client.py`` may. Part of ``Client`` (combined in ``_client.py``).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from . import models as _models
from . import observability as _obs
from ._client_base import CallInputs, ClientBase
from ._exceptions import (
    ClientClosed,
    CreatedTaskUnreadable,
    DecodeError,
    InputRequired,
    InvalidParams,
    MethodNotFound,
    RequestTimeout,
    TaskAugmentationNotAllowed,
    TaskNotCancellable,
    TaskNotFound,
    TransportClosed,
    UsageError,
)
from ._features import Pages, unmarked
from ._session import RequestOptions
from .models import (
    CreateTaskResult,
    JSONObject,
    ListTasksResult,
    RequestId,
    Task,
)

if TYPE_CHECKING:  # imported where a journal is used: a client without one never loads it
    # (and the builders where a task is started)
    from .builders import TaskToolCall
    from .journal import Journal, JournalEntry
    from .models import CallToolResult, Tool  # (read from models per use)

__all__ = ["TaskCalls"]

log = _obs.get_logger("client")


class TaskCalls(ClientBase):
    """The task operations (part of ``Client``)."""

    @property
    def protocol_version(self) -> str:
        return self._driver.agreed_version

    async def start(
        self,
        call: TaskToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
        on_created: Callable[[str], None] | None = None,
        journal: Journal | None = None,
    ) -> CreateTaskResult | CallToolResult:
        """Start a tool call as a task; returns the created task (T:463, E C18).

        2025-11-25: ``params.task``, and the answer is always a task (a plain answer raises
        UnexpectedPlainResult, or the typed refusal); checked before sending, from what the
        caller already has (never a hidden request): the server declared
        ``tasks.requests.tools.call`` (C-16), the tool's metadata does not forbid tasks (C-17).
        2026-07-28: the tasks extension is declared on this request only, and the server
        decides (E C20): a CreateTaskResult, or the call's own CallToolResult when it ran it
        inline; InputRequired when it needs input first (MRTR; with ``inputs`` answered as for
        :meth:`call_tool`, E S21). A Poller waits on either answer alike.

        Related task ids (``call.related_to(...)``) are checked first: one this client never
        read from its server (nor a journal entry recorded for it) raises UnknownRelatedTask
        unless the caller said ``from_elsewhere=True``; nothing is sent.

        ``on_created(task_id)`` is called by the reader the moment the answer naming the task
        arrives, before any later message is dispatched: bind the task's input handlers there
        (``InputRouter.binding``). It must not block; what it raises is logged. With
        ``journal``, the created task is recorded (:meth:`journal_entry`) before this returns,
        within ``timeout``; if the journal fails or takes longer, NotJournaled carries it.

        Deadline: ``timeout`` per round (default ``Timeouts.request``). A task call is never
        cancelled with ``notifications/cancelled`` (C-26): after a timeout or the caller's
        cancellation its answer is still read for ``Timeouts.orphan_watch`` seconds, and a
        task it created is reported (``on_orphaned_task``), never lost.
        """
        from .builders import TaskToolCall, ToolCall  # (loaded where a task is started)

        if isinstance(call, ToolCall):
            raise UsageError(
                f"start() runs a task; {call.name!r} is a plain ToolCall: pass "
                "call.as_task() (or call_tool() for a plain call)"
            )
        if not isinstance(call, TaskToolCall):
            raise UsageError(f"start() takes a TaskToolCall (ToolCall.as_task()), got {call!r}")
        self._driver.check_start(call.name, tool or self._known_tools.get(call.name))
        self._check_related(call.call)
        # One trace per task: its span first (under the caller's current span, if any), the
        # call and everything after it under that.
        trace = self.task_traces.begin(
            {"mcp_tasks.generation": self.generation.value, "gen_ai.tool.name": call.name}
        )
        once = functools.partial(
            self._start_once, timeout=timeout, on_created=on_created, trace=trace
        )
        try:
            started = await self._mrtr(call, once, inputs)
        except BaseException as exc:
            if trace is not None:
                self.task_traces.finish(trace, {"mcp_tasks.outcome": "not started"}, exc)
            raise
        if trace is not None and not isinstance(started, CreateTaskResult):
            self.task_traces.finish(trace, {"mcp_tasks.outcome": "inline"}, None)
        if journal is not None and isinstance(started, CreateTaskResult):
            await self._journal(journal, started, call.name, timeout)
        return started

    async def _start_once(
        self,
        call: TaskToolCall,
        *,
        timeout: float | None,
        on_created: Callable[[str], None] | None,
        trace: _obs.TaskTrace | None,
    ) -> CreateTaskResult | CallToolResult:
        params = self._driver.task_call_params(self._call_params(call.call.params()), call.ttl_ms)
        try:
            options = RequestOptions(
                timeout,
                notify=False,  # C-26, A-15: never notifications/cancelled for a task call
                orphan_tool=call.name,
                tasks=True,
                on_result=self._created_hook(on_created),
                trace=trace,
            )
            raw = await self._session.call("tools/call", params, options)
        except MethodNotFound as exc:
            raise TaskAugmentationNotAllowed(call.name, server_said=exc.message) from exc
        try:
            answer = self._driver.read_start(raw)
        except DecodeError as exc:
            task_id = self._driver.created_task_id(raw)
            if task_id is None:
                raise exc.under("$.result") from None
            self.redaction.remember(task_id)
            self._returned(task_id)
            log.warning(
                "task %r was created, but its answer is malformed: %s",
                _obs.TaskId(task_id, self.redaction),
                exc,
                extra=self.redaction.log_extra,
            )
            error = exc.under("$.result")
            raise CreatedTaskUnreadable(
                error.path, error.problem, error.value, task_id=task_id, raw=raw
            ) from None
        if isinstance(answer, CreateTaskResult):
            self._returned(answer.task.task_id)
            return answer
        if isinstance(answer, _models.InputRequiredResult):
            raise InputRequired("tools/call", call.name, answer)
        return self._driver.plain_start_answer(call.name, answer)

    def read_created(self, raw: JSONObject) -> CreateTaskResult:
        """A task-creating answer this client did not receive itself, as the CreateTaskResult
        a Poller waits on: the one the official SDK's ``call_tool(..., allow_claimed=True)``
        hands its caller (its ``model_dump(by_alias=True, mode="json")``). Read strictly as
        this generation reads a start (DecodeError naming the path); an answer that is not a
        task is a DecodeError too. No request is sent.
        """
        answer = self._driver.read_start(raw)
        if not isinstance(answer, CreateTaskResult):
            raise DecodeError("$", "the answer names no task", type(answer).__name__)
        return answer

    def _created_hook(
        self, on_created: Callable[[str], None] | None
    ) -> Callable[[JSONObject], None] | None:
        if on_created is None:
            return None

        def hook(raw: JSONObject) -> None:
            task_id = self._driver.created_task_id(raw)
            if task_id is not None:
                on_created(task_id)

        return hook

    async def _journal(
        self, journal: Journal, started: CreateTaskResult, tool: str, timeout: float | None
    ) -> None:
        from .journal import JournalError, NotJournaled  # (a run with a journal alone)

        limit = self.timeouts.request if timeout is None else timeout
        try:
            with anyio.fail_after(limit):  # a journal that hangs must not hold the task
                await journal.record(self.journal_entry(started.task, tool))
        except TimeoutError as exc:
            problem = f"the journal did not record the task within {limit:g} s"
            raise NotJournaled(type(journal).__name__, problem, started) from exc
        except JournalError as exc:
            raise NotJournaled(exc.path, exc.problem, started) from exc
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            raise NotJournaled(type(journal).__name__, problem, started) from exc

    def journal_entry(self, task: Task, tool: str) -> JournalEntry:
        """What a journal records for ``task`` (started on this client with ``tool``): this
        server's identity, the generation and protocol version, and the session the task is
        bound to with what it agreed, where the generation has one (to resume it later)."""
        from .journal import JournalEntry, RecordedSession

        session_id = self.transport.session
        kept = self._driver.session_to_keep(session_id)
        open_trace = self.task_traces.get(task.task_id)
        trace = {} if open_trace is None else open_trace.carrier()
        return JournalEntry(
            server=self.transport.identity,
            task_id=task.task_id,
            generation=self.generation,
            protocol_version=self.protocol_version,
            tool=tool,
            created_at=dt.datetime.now(dt.timezone.utc),
            session=None
            if kept is None or session_id is None
            else RecordedSession(session_id, kept),
            snapshot=task,
            traceparent=trace.get("traceparent"),
            tracestate=trace.get("tracestate") or None,
        )

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """``tasks/get``: the task's current snapshot (T:454-459; E: with its inline result,
        error or input requests). -32602 is TaskNotFound here: the task id is the only
        parameter (unknown, expired, or another session's task).
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting; the task is
        untouched.
        """
        # C-24 / A-26: the taskId param is the source of truth; no related-task _meta here.
        read: list[Task | DecodeError] = []

        def arrived(raw: JSONObject) -> None:
            # Decoded once, in the reader, as it arrives: a terminal snapshot ends the task's
            # progress token before the next message is read (progress after it is late, V-24).
            try:
                task = self._driver.read_task(raw)
            except DecodeError as exc:
                read.append(exc)
                return
            read.append(self._session.saw(task) if task.task_id == task_id else task)

        try:
            options = RequestOptions(
                timeout, self._session.timeouts.notify_cancelled, on_result=arrived
            )
            raw = await self._session.call("tasks/get", {"taskId": task_id}, options)
        except InvalidParams as exc:
            raise TaskNotFound(exc.code, exc.message, exc.data, method=exc.method) from exc
        if not read:  # the hook did not run to its end (it logged why): read it here
            read.append(self._session.saw(self._read(raw, self._driver.read_task)))
        if isinstance(read[0], DecodeError):
            raise read[0].under("$.result") from None
        task = read[0]
        if task.task_id != task_id:  # V-26: a snapshot of another task is no answer
            raise DecodeError(
                "$.result.taskId", f"asked for task {task_id!r}, got another (V-26)", task.task_id
            )
        if task_id not in self._returned_task_ids:  # usually known since its start
            self._returned(task_id)
        return task  # seen (saw) as it arrived

    async def task_result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """``tasks/result``: blocks until the task is terminal, then its CallToolResult (T:465;
        2025-11-25 only: UnsupportedInGeneration in 2026-07-28, where it is inline in
        ``get_task``). Give it a deadline of its own (A-12): a task may run for its whole ttl.
        A JSON-RPC error the call ended in is raised as RPCError (V-12), so a -32602 here is
        InvalidParams, not TaskNotFound. Cancelled: the request is abandoned; the task runs on."""
        raw = await self.task_result_raw(task_id, timeout=timeout)
        return self._decode(raw, _models.CallToolResult)

    async def task_result_raw(
        self, task_id: str, *, timeout: float | None = None, held: bool = True
    ) -> JSONObject:
        """``tasks/result`` as the raw result object (a failed task's may hold only ``_meta``).
        ``held=False`` for a task known terminal: answered at once, it takes no connection of
        the transport's held pool. Deadline and cancellation as :meth:`task_result`."""
        self._driver.require("tasks/result")
        options = self._session.options(timeout, held=held)
        return await self._session.call("tasks/result", {"taskId": task_id}, options)

    async def update_task(
        self, task_id: str, responses: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        """``tasks/update`` (2026-07-28, E C28-C33): answers to some or all of the task's
        outstanding ``inputRequests``, by key (ElicitResult, CreateMessageResult,
        ListRootsResult, or their JSON). The ack is eventually consistent: the next snapshot
        may still show an answered key (an InputRouter does not show it twice).
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting; the answers may
        still reach the server (the next snapshot tells).
        """
        self._driver.require("tasks/update")
        params = {
            "taskId": task_id,
            "inputResponses": {k: self.encode(v) for k, v in responses.items()},
        }
        try:
            raw = await self.request("tasks/update", params, timeout=timeout)
        except InvalidParams as exc:
            raise TaskNotFound(exc.code, exc.message, exc.data, method=exc.method) from exc
        self._read(raw, self._driver.read_ack)

    async def listen_tasks(
        self,
        task_ids: Sequence[str],
        *,
        timeout: float = math.inf,
        on_open: Callable[[RequestId], None] | None = None,
    ) -> None:
        """``subscriptions/listen`` for ``task_ids`` (2026-07-28, E C39-C44): the request stays
        open while the server pushes ``notifications/subscriptions/acknowledged`` (the ids it
        agreed to) and ``notifications/tasks`` (full snapshots) to the ``on_notification``
        handlers; it returns when the server closes it. No deadline unless ``timeout`` is
        given; cancel the caller's scope to end it (HTTP: the stream is closed; stdio:
        ``notifications/cancelled``, E C44). ``on_open`` gets the listen's request id before
        it is sent: the ``subscriptionId`` its notifications carry (E C41)."""
        self._driver.require("subscriptions/listen")
        params = {"notifications": {"taskIds": list(task_ids)}}
        options = RequestOptions(timeout, True, tasks=True, on_id=on_open, held=True)
        raw = await self._session.call("subscriptions/listen", params, options)
        self._read(raw, self._driver.read_ack)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task | None:
        """``tasks/cancel``. 2025-11-25: the task, now ``cancelled`` (T:494-497, C-26); needs
        the server's ``tasks.cancel`` capability (C-28). 2026-07-28: None, an empty and
        eventually consistent ack (E C36): the task may still end otherwise. -32602 raises
        TaskNotCancellable: a terminal (2025-11-25) or unknown task. Cancelled while waiting:
        the cancel may still reach the server.
        Deadline: timeout (default Timeouts.request).
        """
        self._driver.check_cancel()
        try:
            raw = await self.request("tasks/cancel", {"taskId": task_id}, timeout=timeout)
        except InvalidParams as exc:
            raise TaskNotCancellable(exc.code, exc.message, exc.data, method=exc.method) from exc
        cancelled = self._read(raw, self._driver.read_cancel)
        if cancelled is None:
            return None
        self._returned(cancelled.task_id)
        return self._session.saw(cancelled)

    async def list_tasks_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListTasksResult:
        """One page of ``tasks/list`` (T:487-490); needs ``tasks.list`` (C-28). 2025-11-25
        only: 2026-07-28 has no task listing (E S17, UnsupportedInGeneration).
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting.
        """
        self._driver.check_list()
        params = {"cursor": cursor} if cursor is not None else None
        page = self._decode(
            await self.request("tasks/list", params, timeout=timeout), ListTasksResult
        )
        for task in page.tasks:
            self._session.saw(task)
            self._returned(task.task_id)
        return page

    def list_tasks(self, *, timeout: float | None = None) -> Pages[Task]:
        """Every task the server lists, page by page (as :meth:`list_tools`; never cached)."""
        return Pages("tasks/list", unmarked(self.list_tasks_page), "tasks", timeout)

    async def open_listen_stream(self, *, timeout: float | None = None) -> None:
        """Open the transport's standalone server stream (HTTP GET, X:133), if it has one.

        Usable right after entering, before the first call: a server may send on it at any
        time (a question of a task it just created, a ``list_changed``), and sends nothing
        while no stream is open. Call it first, or pass ``Client(listen_stream=True)`` to
        have it open before the server is told ``initialized``; open it once (a second call
        opens a second stream).

        RequestTimeout if the server has not started the stream within ``timeout`` (default
        ``Timeouts.request``); the attempt is then abandoned, as it is when the caller is
        cancelled.
        """
        self._driver.require("the standalone GET stream")
        opener = getattr(self.transport, "open_listen_stream", None)
        if opener is None:
            raise UsageError(f"{type(self.transport).__name__} has no listen stream")
        limit = self.timeouts.request if timeout is None else timeout
        try:
            with anyio.fail_after(limit):
                await opener()
        except TimeoutError:
            raise RequestTimeout("GET (listen stream)", limit) from None
        except TransportClosed:
            if isinstance(self._session.broken, ClientClosed):
                raise self._session.broken from None
            raise
