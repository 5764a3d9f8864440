"""The client as a task receiver (2025-11-25): the server's requests, run as tasks.

A server may send ``elicitation/create`` or ``sampling/createMessage`` with a ``task`` param,
to a client that declared ``tasks.requests.elicitation.create`` (or ``.sampling.createMessage``):
the client answers at once with a ``CreateTaskResult`` and runs the request in the background;
the server then polls the client with ``tasks/get``, fetches the answer with the blocking
``tasks/result``, and may ``tasks/list`` and ``tasks/cancel`` (T:392-497, C-31..C-45). A host
whose user takes minutes to answer a form needs this; the Python, TypeScript and C# SDKs do it.

Nothing of this happens unasked: a :class:`TaskReceiver` is what the caller hands its
:class:`~mcp_tasks_client.InputRouter` (``InputRouter(..., receiver=TaskReceiver())``); only then
does ``router.capabilities()`` declare the task capabilities, and only for the kinds of request
the router serves. A request with ``task`` whose kind was not declared so is answered normally,
its ``task`` ignored (C-32).

The handler the caller registered for the request is the task's body: its answer is the
task's result (``completed``); an RPCError it raises, or any other exception, ends the task
``failed`` with that error (a -32603 naming the exception for the latter); the server's
``tasks/cancel`` cancels it. A handler that needs its own user meanwhile can say so:
``async with ctx.receiving.needs_input(): ...`` shows ``input_required`` while it waits.

A held ``tasks/result`` waits apart from everything else: it counts against
``Limits.max_held_server_requests``, not ``Limits.max_server_requests``, so however many the
server holds open, its ``tasks/get``, ``tasks/cancel`` and new requests are still answered.

The tasks live in memory, bounded (``max_tasks``), and each past ``createdAt + ttl`` is dropped
(its body cancelled): the server then gets -32602 for it. Each task belongs to the connection
that created it. Use ``async with TaskReceiver(...)`` inside ``async with Client``: the bodies
run in its task group and end with it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import attrs

from . import observability as _obs
from ._client import Client
from ._exceptions import MCPTasksError, RPCError, UsageError
from ._sansio.receiver_book import (
    NotCancellable,
    ReceiverBook,
    ReceiverFull,
    ReceiverStore,
    UnknownTask,
)
from .models import (
    RELATED_TASK_META,
    ClientTasksCapability,
    ErrorObject,
    JSONObject,
    JSONRPCRequest,
    Task,
    TaskMetadata,
    TaskStatus,
)

__all__ = ["ReceivedTask", "TaskReceiver"]

log = _obs.get_logger("receiver")


def _ms(value: dt.timedelta | None) -> int | None:
    return None if value is None else max(1, round(value.total_seconds() * 1000))


@attrs.define(eq=False)
class ReceivedTask:
    """The task a handler runs as (``InputContext.receiving``): its id, and a way to show
    ``input_required`` while the handler waits for its own user."""

    task_id: str
    _receiver: TaskReceiver = attrs.field(alias="receiver", repr=False)

    @contextlib.asynccontextmanager
    async def needs_input(self, message: str | None = None) -> AsyncIterator[None]:
        """``input_required`` inside the block, ``working`` again after it (C-35).
        Deadline: none of its own (the body's). Cancelled: the task goes back to working as the
        block exits.
        """
        await self._receiver._move(self.task_id, TaskStatus.INPUT_REQUIRED, message)
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled body still says so, bounded
                await self._receiver._move(self.task_id, TaskStatus.WORKING, None)


@attrs.define(eq=False)
class _Running:
    done: anyio.Event = attrs.field(factory=anyio.Event)
    scope: anyio.CancelScope = attrs.field(factory=anyio.CancelScope)
    client: Client | None = None


Body = Callable[[ReceivedTask], Awaitable[JSONObject]]
"""Runs the request (the registered handler) and returns its result as wire JSON."""


class TaskReceiver:
    """Runs a server's task-augmented requests as tasks; see the module docstring.

    ``default_ttl`` applies when the server asks for none, ``max_ttl`` caps what it asks for
    (None: no cap); ``poll_interval`` is the ``pollInterval`` told to the server;
    ``notify_status`` sends ``notifications/tasks/status`` on every change (C-44, off by
    default); ``max_tasks`` bounds what is held (beyond it a request is refused with -32603);
    ``page_size`` is the ``tasks/list`` page.
    """

    def __init__(
        self,
        *,
        default_ttl: dt.timedelta | None = dt.timedelta(minutes=10),
        max_ttl: dt.timedelta | None = dt.timedelta(hours=1),
        poll_interval: dt.timedelta | None = dt.timedelta(milliseconds=500),
        notify_status: bool = False,
        max_tasks: int = 1000,
        page_size: int = 50,
        wall_clock: Callable[[], dt.datetime] | None = None,
        store: ReceiverStore | None = None,
    ) -> None:
        if max_tasks < 1 or page_size < 1:
            raise UsageError("max_tasks and page_size must be at least 1")
        self.notify_status = notify_status
        self.page_size = page_size
        self.book: ReceiverStore = (
            store  # not ``or``: an empty store has length 0
            if store is not None
            else ReceiverBook(
                default_ttl_ms=_ms(default_ttl),
                max_ttl_ms=_ms(max_ttl),
                poll_interval_ms=_ms(poll_interval),
                capacity=max_tasks,
            )
        )
        """The tasks; ``store=`` replaces the in-memory default (which the ttl, interval and
        ``max_tasks`` options configure)."""
        self._wall = wall_clock or (lambda: dt.datetime.now(dt.timezone.utc))
        self._running: dict[str, _Running] = {}
        self._traced: dict[str, Client] = {}  # tasks whose trace a connection keeps (spans on)
        self._group: anyio.abc.TaskGroup | None = None
        self._expiry_changed = anyio.Event()

    def capabilities(self, *, elicitation: bool, sampling: bool) -> ClientTasksCapability:
        """What the client declares when it receives tasks for these kinds (C-31)."""
        return ClientTasksCapability(
            list=True,
            cancel=True,
            elicitation_create=elicitation,
            sampling_create_message=sampling,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> TaskReceiver:
        """Deadline: none. Cancelled: nothing was started."""
        if self._group is not None:
            raise UsageError("this TaskReceiver is running already")
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._expire_loop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Deadline: each running task's failure notice is bounded by the client's
        Timeouts.request. Cancelled: every running task body is cancelled all the same."""
        assert self._group is not None
        self._group.cancel_scope.cancel()
        try:
            await self._group.__aexit__(None, None, None)
        finally:
            self._group = None  # an accept() after this is refused, typed
            for running in self._running.values():
                running.done.set()
            for task_id, client in self._traced.items():
                client.received_traces.forget(task_id)
            self._traced.clear()

    def serve(self, client: Client) -> None:
        """Answer ``client``'s ``tasks/get``, ``tasks/result``, ``tasks/list`` and
        ``tasks/cancel`` from the server (the InputRouter calls it when it is attached)."""
        client.on_request("tasks/get", lambda request: self._get(client, request))
        client.on_request(  # held: it waits for the task, apart from the other requests
            "tasks/result", lambda request: self._result(client, request), held=True
        )
        client.on_request("tasks/list", lambda request: self._list(client, request))
        client.on_request("tasks/cancel", lambda request: self._cancel(client, request))

    # -- accepting a request -----------------------------------------------------------------

    async def accept(
        self, client: Client, request: JSONRPCRequest, metadata: TaskMetadata, body: Body
    ) -> JSONObject:
        """Create the task for ``request`` and start ``body`` as it; the CreateTaskResult.
        Deadline: none of its own (it only books the task and starts its body). Cancelled: the
        task is not created.
        """
        group = self._group
        if group is None:
            raise RPCError(-32603, "the client's task receiver is not running")
        try:
            task = self.book.create(
                client,
                request.method,
                metadata.ttl,
                now=anyio.current_time(),
                wall=self._wall(),
            )
        except ReceiverFull as exc:
            raise RPCError(-32603, f"the client holds too many tasks: {exc}") from None
        finally:
            self._reap()
        running = _Running(client=client)
        self._running[task.task_id] = running
        self._expiry_changed.set()
        client.redaction.remember(task.task_id)
        if client.tracing.enabled:  # its trace: this request's (one trace per task)
            client.received_traces.note(task.task_id)
            self._traced[task.task_id] = client
        log.debug(
            "received task %s created for %s",
            _obs.TaskId(task.task_id, client.redaction),
            request.method,
            extra=client.redaction.log_extra,
        )
        group.start_soon(self._run, client, task.task_id, body, running)
        return {"task": client.encode(task)}

    async def _run(self, client: Client, task_id: str, body: Body, running: _Running) -> None:
        control = ReceivedTask(task_id, receiver=self)
        with running.scope:
            result: JSONObject | None = None
            error: ErrorObject | None = None
            message: str | None = None
            try:
                result = await self._body(client, task_id, body, control)
            except RPCError as exc:
                error, message = ErrorObject(exc.code, exc.message, exc.data), exc.message
            except Exception as exc:
                log.exception("the handler of received task %s raised", task_id)
                message = f"client handler failed: {type(exc).__name__}: {exc}"
                error = ErrorObject(-32603, message)
            task = self.book.finish(
                task_id, wall=self._wall(), result=result, error=error, message=message
            )
            if task is not None:
                await self._notify(client, task)
        running.done.set()
        if self._running.get(task_id) is running:  # its outcome is in the book now
            del self._running[task_id]

    @staticmethod
    async def _body(client: Client, task_id: str, body: Body, control: ReceivedTask) -> JSONObject:
        """The task's body, in a span ``mcp_tasks.received_task`` when spans are on."""
        tracing = client.tracing
        if tracing.tracer is None:
            return await body(control)
        attributes = {
            "mcp_tasks.task.id": client.redaction.label(task_id),
            "mcp_tasks.generation": client.generation.value,
        }
        with tracing.span("mcp_tasks.received_task", attributes):
            return await body(control)

    async def _move(self, task_id: str, status: TaskStatus, message: str | None) -> None:
        task = self.book.move(task_id, status, message, self._wall())
        running = self._running.get(task_id)
        client = running.client if running is not None else None
        if task is not None and client is not None:
            await self._notify(client, task)

    async def _notify(self, client: Client, task: Task) -> None:
        if not self.notify_status:
            return
        try:
            with anyio.fail_after(client.timeouts.request):
                await client.notify("notifications/tasks/status", client.encode(task))
        except TimeoutError:
            log.debug("notifications/tasks/status for %s timed out", _obs.TaskId(task.task_id))
        except MCPTasksError as exc:
            log.debug(
                "notifications/tasks/status for %s not sent: %s", _obs.TaskId(task.task_id), exc
            )

    async def _expire_loop(self) -> None:
        """Drop tasks past their ttl and cancel their bodies (T:459: then unknown)."""
        while True:
            due = self.book.next_expiry()
            self._expiry_changed = anyio.Event()
            delay = math.inf if due is None else max(0.0, due - anyio.current_time())
            with anyio.move_on_after(delay):
                await self._expiry_changed.wait()
            self.book.sweep(anyio.current_time())
            self._reap()

    def _reap(self) -> None:
        """Stop the bodies of the tasks any sweep dropped (their ttl ran out)."""
        for task_id in self.book.reap():
            running = self._running.pop(task_id, None)
            traced = self._traced.pop(task_id, None)
            if traced is not None:
                traced.received_traces.forget(task_id)
            if running is not None:
                running.scope.cancel()
                running.done.set()

    # -- the server's task requests ----------------------------------------------------------

    def _task_id(self, request: JSONRPCRequest) -> str:
        task_id = (request.params or {}).get("taskId")
        if not isinstance(task_id, str):
            raise RPCError(-32602, "taskId must be a string")
        return task_id

    def _lookup(self, client: Client, task_id: str) -> Task:
        try:
            return self.book.get(client, task_id, now=anyio.current_time())
        except UnknownTask:
            raise RPCError(-32602, f"task not found: {task_id}") from None
        finally:
            self._reap()

    async def _get(self, client: Client, request: JSONRPCRequest) -> JSONObject:
        task: JSONObject = client.encode(self._lookup(client, self._task_id(request)))
        return task

    async def _result(self, client: Client, request: JSONRPCRequest) -> JSONObject:
        """C-38: blocks until the task is terminal, then exactly its result or error."""
        task_id = self._task_id(request)
        self._lookup(client, task_id)
        running = self._running.get(task_id)
        if running is not None:
            await running.done.wait()
        try:
            found = self.book.outcome(client, task_id, now=anyio.current_time())
        except UnknownTask:
            raise RPCError(-32602, f"task not found (expired): {task_id}") from None
        finally:
            self._reap()
        if found is None:  # the receiver closed under it
            raise RPCError(-32603, f"task {task_id} did not finish")
        task, result, error = found
        if error is not None:
            raise RPCError(error.code, error.message, error.data)
        if result is None:  # cancelled (A-13: no result is defined)
            raise RPCError(-32602, f"task {task_id} was {task.status.value}: it has no result")
        meta = dict(result.get("_meta") or {})
        meta[RELATED_TASK_META] = {"taskId": task_id}
        return {**result, "_meta": meta}

    async def _list(self, client: Client, request: JSONRPCRequest) -> JSONObject:
        cursor = (request.params or {}).get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise RPCError(-32602, "cursor must be a string")
        try:
            tasks, next_cursor = self.book.page(
                client, cursor, self.page_size, now=anyio.current_time()
            )
        except ValueError as exc:
            raise RPCError(-32602, str(exc)) from None
        finally:
            self._reap()
        body: dict[str, Any] = {"tasks": [client.encode(task) for task in tasks]}
        if next_cursor is not None:
            body["nextCursor"] = next_cursor
        return body

    async def _cancel(self, client: Client, request: JSONRPCRequest) -> JSONObject:
        """C-41: ``cancelled`` before the answer; its body is stopped; -32602 if terminal."""
        task_id = self._task_id(request)
        try:
            task = self.book.cancel(client, task_id, now=anyio.current_time(), wall=self._wall())
        except UnknownTask:
            raise RPCError(-32602, f"task not found: {task_id}") from None
        except NotCancellable as exc:
            raise RPCError(-32602, f"cannot cancel: {exc}") from None
        finally:
            self._reap()
        running = self._running.pop(task_id, None)
        if running is not None:
            running.scope.cancel()
            running.done.set()
        await self._notify(client, task)
        encoded: JSONObject = client.encode(task)
        return encoded
