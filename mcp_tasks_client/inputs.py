"""Input a task asks for mid-flight, routed by related-task id (T:431-450, C-21, C-25).

When a task needs the user or a model, it goes ``input_required``. In 2025-11-25 the server
sends ``elicitation/create`` / ``sampling/createMessage`` (or ``roots/list``) requests tagged
with ``_meta["io.modelcontextprotocol/related-task"] = {"taskId": ...}``, on the stream of the
``tasks/result`` the client opened or on any other stream. An :class:`InputRouter` sends each
request to the handler registered for *its* task, so an agent host with ten tasks in flight
routes every question to the conversation that started it. In 2026-07-28 the requests come
inside the task's snapshot instead (``inputRequests``, by key, E C28): the Poller hands each key
it has not seen to :meth:`InputRouter.answer_input`, which calls the same handler, and sends
the answer with ``tasks/update``. A key is taken once: shown to a handler once and answered
once, however often eventually consistent snapshots repeat it (E C30-C33).

Nothing is answered on the caller's behalf: a request whose task has no handler (and for which
no default was registered) is answered with a JSON-RPC error saying so, and an
:class:`InputEvent` tells the Poller (which fails that task's wait with InputNotHandled, or
keeps waiting, by its policy). The client declares ``elicitation`` / ``sampling`` / ``roots``
only for what the router enables (pass ``router.capabilities()`` to the Client). URL-mode
elicitations reach the handler as they are; the library never opens a URL (C-51).

Many workers, one journal: a router given a shared journal (``InputRouter(journal=...)``) takes
each input request of a task in the journal before its handler runs (``claim_input``: once per
key across every process), so a key one worker answers is never answered by another; a request
of a task this router has no handler for is queued in the journal instead of refused (QUEUED),
for a worker that registers one to answer with :meth:`InputRouter.answer_queued`.

The router is a front over parts with one job each (``_routing/``; each module's header says
more): the handler table (``handlers.py``: which handler answers which task, the declared
kinds, the grace for a task not registered yet), the shared journal's coordination
(``shared_journal.py``), the batching of 2026-07-28 answers into one ``tasks/update``
(``batching.py``) and the values they share (``events.py``: the context, the events and the
one error-to-event table, :data:`ERROR_EVENTS`). The router itself keeps the listeners, the
record of keys taken and answered (its :class:`InputBook`), and the two ways a request comes
in: a server's request (2025-11-25) and a key of a snapshot (2026-07-28).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import attrs

from ._client import Client
from ._exceptions import (
    DecodeError,
    LimitExceeded,
    MCPTasksError,
    RPCError,
    UsageError,
)
from ._limits import Limits
from ._routing.batching import BusyRetry, TaskUpdates
from ._routing.events import (
    ELICIT,
    ERROR_EVENTS,
    ROOTS,
    SAMPLE,
    UNTAGGED,
    ElicitationHandler,
    HandlerErrorPolicy,
    InputContext,
    InputEvent,
    InputEventKind,
    RootsHandler,
    SamplingHandler,
    Subscribed,
    TrackedTasks,
    Untagged,
    event_for,
)
from ._routing.handlers import InputHandlers
from ._routing.shared_journal import SharedInputs
from ._sansio.answer_book import InputBook, related_task_id
from .journal import SharedJournal
from .models import (
    RELATED_TASK_META,
    ClientCapabilities,
    CreateMessageResult,
    ElicitationCapability,
    ElicitResult,
    InputRequest,
    JSONObject,
    JSONRPCRequest,
    ListRootsResult,
    RequestId,
    RootsCapability,
    SamplingCapability,
    TaskMetadata,
)
from .observability import get_logger
from .receiver import ReceivedTask, TaskReceiver

__all__ = [
    "ELICIT",
    "ERROR_EVENTS",
    "ROOTS",
    "SAMPLE",
    "UNTAGGED",
    "BusyRetry",
    "ElicitationHandler",
    "HandlerErrorPolicy",
    "InputContext",
    "InputEvent",
    "InputEventKind",
    "InputRouter",
    "RootsHandler",
    "SamplingHandler",
    "TrackedTasks",
    "Untagged",
    "event_for",
]

log = get_logger("inputs")


def _as_task(
    receiver: TaskReceiver | None, client: Client, request: JSONRPCRequest
) -> TaskMetadata | None:
    """The request's ``task`` when it is to run as a task: a receiver is there and the
    client declared tasks for this kind; else None (C-32: ``task`` ignored)."""
    raw = (request.params or {}).get("task")
    declared = client.capabilities.tasks
    if raw is None or receiver is None or declared is None:
        return None
    kinds = {ELICIT: declared.elicitation_create, SAMPLE: declared.sampling_create_message}
    if not kinds.get(request.method, False):
        return None
    try:
        return client.decode(raw, TaskMetadata)
    except DecodeError as exc:
        raise RPCError(-32602, f"malformed task param: {exc.under('$.params.task')}") from exc


class InputRouter:
    """Handlers for server->client requests, keyed by the related task."""

    def __init__(
        self,
        *,
        elicitation: ElicitationCapability | None = None,
        sampling: SamplingCapability | None = None,
        roots: RootsCapability | None = None,
        on_handler_error: HandlerErrorPolicy = HandlerErrorPolicy.ANSWER_ERROR,
        receiver: TaskReceiver | None = None,
        unknown_task_grace: float | None = None,
        journal: SharedJournal | None = None,
        worker: str | None = None,
    ) -> None:
        self.on_handler_error = on_handler_error
        self.receiver = receiver
        """With a TaskReceiver, the server's task-augmented elicitation and sampling requests
        run as tasks (2025-11-25, C-31): their handlers are the tasks' bodies."""
        self._handlers = InputHandlers(elicitation, sampling, roots, unknown_task_grace)
        defaults = Limits()
        self._book = InputBook(defaults.max_answered_inputs, defaults.max_inputs_per_task)
        self._listeners: list[Callable[[InputEvent], None]] = []
        self._client: Client | None = None
        self._batches = TaskUpdates()
        """Per task, the answers gathering for its next ``tasks/update`` (2026-07-28)."""
        # The tracked tasks of the subscribers that passed theirs, the newest last.
        self._tasks: list[TrackedTasks] = []
        self._shared = SharedInputs(journal, worker, self._handlers, self._emit, self._dispatch)

    # -- what the router was made with (each read from, and written to, the part that uses it)

    @property
    def elicitation(self) -> ElicitationCapability | None:
        """The elicitation this router serves (None: none)."""
        return self._handlers.elicitation

    @elicitation.setter
    def elicitation(self, value: ElicitationCapability | None) -> None:
        self._handlers.elicitation = value

    @property
    def sampling(self) -> SamplingCapability | None:
        """The sampling this router serves (None: none)."""
        return self._handlers.sampling

    @sampling.setter
    def sampling(self, value: SamplingCapability | None) -> None:
        self._handlers.sampling = value

    @property
    def roots(self) -> RootsCapability | None:
        """The roots this router serves (None: none)."""
        return self._handlers.roots

    @roots.setter
    def roots(self, value: RootsCapability | None) -> None:
        self._handlers.roots = value

    @property
    def unknown_task_grace(self) -> float | None:
        """Seconds a request naming a task no handler (and no default) serves yet is held
        for one to be registered, instead of -32601 at once (None: not held)."""
        return self._handlers.unknown_task_grace

    @unknown_task_grace.setter
    def unknown_task_grace(self, value: float | None) -> None:
        self._handlers.unknown_task_grace = value

    @property
    def journal(self) -> SharedJournal | None:
        """A journal shared by many workers: each input request of a task is taken there
        before its handler runs (answered once across workers), and one this router has no
        handler for is queued there (None: this process alone decides). Read-only: a router
        that took keys under one journal cannot move to another."""
        return self._shared.journal

    @property
    def worker(self) -> str:
        """The name this router takes input requests under in the journal (read-only: the
        keys it took are taken under this name)."""
        return self._shared.worker

    @property
    def handlers(self) -> InputHandlers:
        """The handler table (read it, e.g. in tests: ``handlers.keys(method)``,
        ``handlers.held_for``); register through the router's ``on_*`` methods."""
        return self._handlers

    @property
    def book(self) -> InputBook:
        """The record of input requests taken and answered, by task (read it, e.g. in tests;
        it is the router's own and cannot be replaced)."""
        return self._book

    # -- configuration ---------------------------------------------------------------------

    def capabilities(
        self,
        base: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
    ) -> ClientCapabilities:
        """``base`` plus exactly the kinds this router serves (C-49, C-52); with a receiver,
        the task capabilities for those kinds (C-31)."""
        tasks = base.tasks
        if self.receiver is not None:
            tasks = self.receiver.capabilities(
                elicitation=self.elicitation is not None, sampling=self.sampling is not None
            )
        return attrs.evolve(
            base,
            elicitation=self.elicitation or base.elicitation,
            sampling=self.sampling or base.sampling,
            roots=self.roots or base.roots,
            tasks=tasks,
        )

    def on_elicitation(self, task_id: str | Untagged, handler: ElicitationHandler) -> InputRouter:
        """Answer ``task_id``'s elicitations with ``handler``."""
        self._handlers.set_elicitation(task_id, handler)
        return self

    def on_sampling(self, task_id: str | Untagged, handler: SamplingHandler) -> InputRouter:
        self._handlers.set_sampling(task_id, handler)
        return self

    def on_roots(self, task_id: str | Untagged, handler: RootsHandler) -> InputRouter:
        self._handlers.set_roots(task_id, handler)
        return self

    def default_elicitation(self, handler: ElicitationHandler) -> InputRouter:
        """For elicitations of tasks with no handler of their own, and untagged ones."""
        self._handlers.set_elicitation(None, handler)
        return self

    def default_sampling(self, handler: SamplingHandler) -> InputRouter:
        self._handlers.set_sampling(None, handler)
        return self

    def default_roots(self, handler: RootsHandler) -> InputRouter:
        self._handlers.set_roots(None, handler)
        return self

    def binding(
        self,
        *,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
    ) -> Callable[[str], None]:
        """Handlers for a task that does not exist yet: pass the result to
        ``client.start(call, on_created=...)`` and they are bound to the task's id the moment
        its create answer is read, before any later message is dispatched."""

        def bind(task_id: str) -> None:
            if elicitation is not None:
                self.on_elicitation(task_id, elicitation)
            if sampling is not None:
                self.on_sampling(task_id, sampling)
            if roots is not None:
                self.on_roots(task_id, roots)

        return bind

    def forget(self, task_id: str) -> None:
        """Drop every handler and every record of ``task_id`` (call it when the task ended)."""
        self._handlers.forget(task_id)
        self._book.forget(task_id)

    def hold(self, task_id: str) -> None:
        """``task_id`` is tracked: none of its input keys is forgotten (each is refused if
        delivered again) until :meth:`release`; ``Limits.max_inputs_per_task`` bounds them."""
        self._book.hold(task_id)

    def release(self, task_id: str) -> None:
        """``task_id``'s tracking ended: its answered keys join the bounded memory of answered
        requests (``Limits.max_answered_inputs``, the oldest forgotten first); its handlers
        stay (see :meth:`forget`)."""
        self._book.release(task_id)

    def subscribe(
        self, listener: Callable[[InputEvent], None], *, tasks: TrackedTasks | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with every InputEvent until the returned function is called. A
        Poller passes its ``tasks``: the handlers of requests the server sends by itself
        (2025-11-25) read them in ``ctx.latest()`` (the task's snapshot in the Poller that
        tracks it) and ``ctx.candidates`` (those of every subscribed Poller), while it is
        subscribed."""
        self._listeners.append(listener)
        if tasks is not None:
            self._tasks.append(tasks)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
            if tasks is not None and tasks in self._tasks:
                self._tasks.remove(tasks)

        return unsubscribe

    def attach(self, client: Client) -> None:
        """Serve this client's server->client requests of every kind the router enables.

        A router serves one client: attaching it again to that client changes nothing; to
        another, UsageError (make a router per client: ``resume(..., inputs=factory)`` takes
        a function of the client that makes one)."""
        if self._client is client:
            return
        if self._client is not None:
            raise UsageError(
                "an InputRouter serves one client, and this one is attached to another: "
                "make one router per client"
            )
        declared = client.capabilities
        receives = declared.tasks is not None and (
            declared.tasks.elicitation_create or declared.tasks.sampling_create_message
        )
        if receives and self.receiver is None:
            raise UsageError(
                "the client declares task-augmented elicitation or sampling but nothing would "
                "run them as tasks: pass InputRouter(..., receiver=TaskReceiver())"
            )
        self._client = client
        self._book.capacity = client.limits.max_answered_inputs
        self._book.per_task = client.limits.max_inputs_per_task
        if self.receiver is not None:
            self.receiver.serve(client)
        for method, capability, mine in (
            (ELICIT, declared.elicitation, self.elicitation),
            (SAMPLE, declared.sampling, self.sampling),
            (ROOTS, declared.roots, self.roots),
        ):
            if mine is None:
                continue
            if capability is None:
                raise UsageError(
                    f"the client did not declare what the router serves for {method} (a "
                    "client declares only what it is given): make the InputRouter first, then "
                    "the client with Client(transport, ..., capabilities=router.capabilities())"
                )
            client.on_request(method, self._handle)

    # -- serving -----------------------------------------------------------------------------

    def _emit(self, event: InputEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    async def _handle(self, request: JSONRPCRequest) -> JSONObject | None:
        client = self._client
        assert client is not None
        params = request.params or {}
        task_id = related_task_id(params)
        try:
            fresh = self._book.arrived(task_id, request.id, request.method)
        except LimitExceeded as exc:  # a tracked task asked more than it may: refused
            self._emit(
                InputEvent(InputEventKind.REJECTED, task_id, request.id, request.method, exc)
            )
            raise RPCError(-32000, str(exc)) from exc
        if not fresh:
            self._emit(InputEvent(InputEventKind.DUPLICATE, task_id, request.id, request.method))
            return None  # taken already: the first delivery is (or was) answered, once
        self._emit(InputEvent(InputEventKind.ARRIVED, task_id, request.id, request.method))
        if task_id is not None and not await self._shared.ours(
            client, task_id, str(request.id), request.method, params, request.id
        ):
            self._book.answered(task_id, request.id)
            return None  # another worker answers it (or will): no answer from here
        try:
            as_task = _as_task(self.receiver, client, request)
        except RPCError as exc:
            self._book.answered(task_id, request.id)
            self._emit(
                InputEvent(InputEventKind.REJECTED, task_id, request.id, request.method, exc)
            )
            raise
        if as_task is not None:
            return await self._accept_as_task(client, task_id, request, as_task)
        try:
            result = await self._dispatch(task_id, request.id, request.method, params)
        except RPCError as exc:
            kind = event_for(exc)
            self._book.answered(task_id, request.id)
            self._emit(InputEvent(kind, task_id, request.id, request.method, exc))
            raise
        except Exception as exc:  # the handler failed: answer with an error, by policy
            log.exception(
                "input handler for %s of task %s raised",
                request.method,
                task_id,
                extra=client.redaction.log_extra,
            )
            error = RPCError(-32603, f"client input handler failed: {type(exc).__name__}: {exc}")
            if self.on_handler_error is HandlerErrorPolicy.ANSWER_ERROR_AND_CANCEL and task_id:
                try:
                    await client.cancel_task(task_id)
                except MCPTasksError as cancel_error:
                    log.warning(
                        "tasks/cancel after a failed handler: %s",
                        cancel_error,
                        extra=client.redaction.log_extra,
                    )
            self._book.answered(task_id, request.id)
            self._emit(
                InputEvent(
                    InputEventKind.HANDLER_FAILED, task_id, request.id, request.method, error
                )
            )
            raise error from exc
        body: dict[str, Any] = dict(client.encode(result))
        if task_id is not None:  # C-25: responses related to a task carry related-task
            meta = dict(body.get("_meta") or {})
            meta[RELATED_TASK_META] = {"taskId": task_id}
            body["_meta"] = meta
        self._book.answered(task_id, request.id)
        self._emit(InputEvent(InputEventKind.ANSWERED, task_id, request.id, request.method))
        return body

    # -- 2025-11-25: the server's request as a task of this client ---------------------------

    async def _accept_as_task(
        self,
        client: Client,
        task_id: str | None,
        request: JSONRPCRequest,
        metadata: TaskMetadata,
    ) -> JSONObject:
        """Answer the CreateTaskResult now; the handler runs as the task's body."""
        assert self.receiver is not None
        params = {k: v for k, v in (request.params or {}).items() if k != "task"}

        def ended(kind: InputEventKind, error: MCPTasksError | None = None) -> None:
            self._emit(InputEvent(kind, task_id, request.id, request.method, error))

        async def body(receiving: ReceivedTask) -> JSONObject:
            try:
                result = await self._dispatch(
                    task_id, request.id, request.method, params, receiving=receiving
                )
            except RPCError as exc:
                ended(event_for(exc), exc)
                raise
            except Exception as exc:  # the receiver fails the task with -32603
                ended(
                    InputEventKind.HANDLER_FAILED,
                    RPCError(-32603, f"client handler failed: {type(exc).__name__}: {exc}"),
                )
                raise
            encoded: JSONObject = client.encode(result)
            ended(InputEventKind.ANSWERED)
            return encoded

        try:
            created = await self.receiver.accept(client, request, metadata, body)
        finally:
            self._book.answered(task_id, request.id)
        ended(InputEventKind.ACCEPTED_AS_TASK)
        return created

    # -- 2026-07-28: inputRequests in a snapshot ------------------------------------------

    def take_inputs(
        self, task_id: str, requests: Mapping[str, InputRequest]
    ) -> list[tuple[str, InputRequest]]:
        """The keys of ``requests`` not taken before, now taken (E C30-C31): a snapshot that
        repeats a key (eventually consistent, C33) yields nothing for it. ``task_id`` is held
        (:meth:`hold`): its keys are never forgotten while it is tracked. LimitExceeded, with
        nothing taken, for a key longer than ``Limits.max_request_id_chars`` or when the
        task's keys would go past ``Limits.max_inputs_per_task`` (the caller fails the task)."""
        longest = self._client.limits.max_request_id_chars if self._client else None
        if longest is not None:
            for key in requests:
                if len(key) > longest:
                    where = f"an inputRequests key of task {task_id[:100]!r}"
                    raise LimitExceeded("max_request_id_chars", longest, where)
        taken = self._book.take(task_id, {key: request.method for key, request in requests.items()})
        return [(str(key), requests[str(key)]) for key in taken]

    async def answer_input(
        self,
        task_id: str,
        key: str,
        request: InputRequest,
        *,
        tasks: TrackedTasks | None = None,
    ) -> JSONObject | None:
        """Run the handler registered for ``task_id`` on one taken input request; its answer
        as wire JSON for ``tasks/update``, or None when there is none to send (no handler:
        UNHANDLED; a handler that failed: HANDLER_FAILED; a bad request: REJECTED; each
        emitted as an InputEvent). An input request cannot be answered with an error in
        2026-07-28, so nothing is sent for those: the task stays ``input_required`` until the
        caller decides (cancel it, or answer through ``client.update_task``). ``tasks``: what
        the handler's ``ctx.latest()`` reads (the Poller passes the tasks it tracks).
        Deadline: the handler's own (none is imposed on it). Cancelled: the handler is
        cancelled; the key stays taken.
        """
        return await self._answer_keyed(task_id, key, request, tasks=tasks)

    async def serve_task_input(
        self,
        task_id: str,
        key: str,
        request: InputRequest,
        *,
        tasks: TrackedTasks | None = None,
        still_wanted: Callable[[], bool] = lambda: True,
        timeout: float | None = None,
        busy: BusyRetry | None = None,
    ) -> bool:
        """Answer one taken 2026-07-28 input request of ``task_id`` end to end: its handler
        (:meth:`answer_input`), then ``tasks/update`` with its answer (E C28-C33), unless
        ``still_wanted()`` says the task's wait ended meanwhile. True when an answer was
        sent. The router is the one owner of answering input: here for 2026-07-28 keys, as
        it answers 2025-11-25 requests.

        Answers of one task that are ready at the same moment go in one ``tasks/update``
        (handlers that answer at once: a snapshot's keys, one round trip); an answer never
        waits for a handler still running (partial answers are allowed, E A-10). A batch the
        server refuses (-32602) is sent again key by key, so one refused key costs no other.

        A ``tasks/update`` answered busy (HTTP 429/503) raises the ServerBusy, unless ``busy``
        (the Poller's ``PollPolicy.on_busy``) gives a wait: then it is sent again after it,
        as often as ``busy`` says (``busy(error, in_row)``: seconds, or None to give up).

        Deadline: the handler's own time, then ``timeout`` for the ``tasks/update`` (default
        ``Timeouts.request``; twice when a refused batch is sent again; each send again after a
        busy answer has its own, after the wait ``busy`` gave). Cancelled: the handler is
        cancelled (or the wait before a send again), nothing more is sent, and the key stays
        taken (it is never shown to a handler twice)."""
        if self._client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        response = await self.answer_input(task_id, key, request, tasks=tasks)
        if response is None or not still_wanted():
            return False
        return await self.send_task_answer(task_id, key, response, timeout=timeout, busy=busy)

    async def send_task_answer(
        self,
        task_id: str,
        key: str,
        answer: JSONObject,
        *,
        timeout: float | None = None,
        busy: BusyRetry | None = None,
    ) -> bool:
        """Send one 2026-07-28 input answer (:meth:`answer_input`'s) with ``tasks/update``,
        in one request with the answers of ``task_id`` ready at the same moment; True when it
        went out. A batch the server refuses (-32602) is sent again key by key (the refusal
        of this key raised as InvalidParams); a busy answer raises the ServerBusy unless
        ``busy`` gives a wait (as :meth:`serve_task_input`). The Poller sends each answer the
        Tracker says to send (its ``SendUpdate``) through here.

        Deadline: ``timeout`` for the ``tasks/update`` (default ``Timeouts.request``; twice
        when a refused batch is sent again; each send again after a busy answer has its own,
        after the wait ``busy`` gave). Cancelled: nothing more is sent for this caller."""
        client = self._client
        if client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        return await self._batches.send(client, task_id, key, answer, timeout, busy)

    async def answer_call_input(self, key: str, request: InputRequest) -> JSONObject | None:
        """MRTR (E C45): one input request of a call that has no task yet, answered by this
        router's default handler for its kind (``default_elicitation`` ...): pass the router to
        ``call_tool(..., inputs=router)`` for exactly that call. None when unanswered.
        Deadline: the handler's own. Cancelled: the handler is cancelled and nothing is
        answered.
        """
        return await self._answer_keyed(None, key, request, mrtr=True)

    async def _answer_keyed(
        self,
        task_id: str | None,
        key: str,
        request: InputRequest,
        *,
        mrtr: bool = False,
        tasks: TrackedTasks | None = None,
    ) -> JSONObject | None:
        client = self._client
        if client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        self._emit(InputEvent(InputEventKind.ARRIVED, task_id, key, request.method))
        kind = InputEventKind.ANSWERED
        error: MCPTasksError | None = None
        result: ElicitResult | CreateMessageResult | ListRootsResult | None = None
        try:
            self._handlers.check_declared(request.method)
            if task_id is not None and not mrtr:
                params = request.params or {}
                if not await self._shared.ours(client, task_id, key, request.method, params, None):
                    self._book.answered(task_id, key)
                    return None  # another worker answers it (or will)
            # Asked in a snapshot (no server request to hang under): the task's span is the
            # handler's parent, whoever polled.
            trace = client.task_traces.get(task_id)
            result = await self._dispatch(
                task_id,
                key,
                request.method,
                request.params or {},
                mrtr=mrtr,
                tasks=tasks,
                parent=None if trace is None else trace.context,
            )
        except RPCError as exc:
            kind = event_for(exc)
            error = exc
        except Exception as exc:
            log.exception(
                "input handler for %s of task %s raised",
                request.method,
                task_id,
                extra=client.redaction.log_extra,
            )
            kind = InputEventKind.HANDLER_FAILED
            error = RPCError(-32603, f"client input handler failed: {type(exc).__name__}: {exc}")
            cancel = self.on_handler_error is HandlerErrorPolicy.ANSWER_ERROR_AND_CANCEL
            if cancel and task_id is not None:
                try:
                    await client.cancel_task(task_id)
                except MCPTasksError as cancel_error:
                    log.warning(
                        "tasks/cancel after a failed handler: %s",
                        cancel_error,
                        extra=client.redaction.log_extra,
                    )
        if task_id is not None:
            self._book.answered(task_id, key)
        self._emit(InputEvent(kind, task_id, key, request.method, error))
        if result is None:
            return None
        body: JSONObject = client.encode(result)
        return body

    # -- many workers, one journal -----------------------------------------------------------

    async def answer_queued(self, *, timeout: float | None = None) -> int:
        """Answer the input requests other workers queued in the router's journal for this
        client's server that this router has handlers for (2025-11-25: only those of this
        client's session, the one they arrived on); how many were answered. Each is taken in
        the journal first (``claim_input``), so no other worker answers it too; its handler
        runs, and the answer goes out with :meth:`Client.send_input_answer`. A handler that
        fails (or refuses, with an RPCError) sends nothing: the request stays taken and
        unanswered, for the caller to decide (cancel the task), as in 2026-07-28.

        Deadline: the handlers' own time, then ``timeout`` for each answer sent (default
        ``Timeouts.request``); the journal's own bounds on its statements. Cancelled: the
        running handler is cancelled and its request stays taken, unanswered.
        """
        client = self._client
        if client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        return await self._shared.answer_queued(client, timeout=timeout)

    async def serve_queued(self, *, every: float = 1.0, timeout: float | None = None) -> None:
        """:meth:`answer_queued` every ``every`` seconds, until cancelled (run it in a task
        group of yours beside the worker). Deadline: none; it runs until cancelled.
        Cancelled: the running handler is cancelled and its request stays taken, unanswered.
        """
        if every <= 0:
            raise UsageError("every must be positive (seconds)")
        while True:
            await self.answer_queued(timeout=timeout)
            await anyio.sleep(every)

    # -- both generations ------------------------------------------------------------------

    async def _dispatch(
        self,
        task_id: str | None,
        request_id: RequestId,
        method: str,
        params: JSONObject,
        *,
        receiving: ReceivedTask | None = None,
        mrtr: bool = False,
        tasks: TrackedTasks | None = None,
        parent: Any = None,
    ) -> ElicitResult | CreateMessageResult | ListRootsResult:
        """The handler (:meth:`InputHandlers.answer`, in its span when spans are on, under
        ``parent`` when given). ``tasks``: the tracked tasks the caller passed, else those of
        every subscribed Poller: a handler reads its task in the Poller that tracks it, never
        in whichever subscribed last."""
        if tasks is None and self._tasks:
            tasks = Subscribed(tuple(self._tasks))
        client = self._client
        assert client is not None
        return await self._handlers.answer(
            client,
            task_id,
            request_id,
            method,
            params,
            receiving=receiving,
            mrtr=mrtr,
            tasks=tasks,
            parent=parent,
        )
