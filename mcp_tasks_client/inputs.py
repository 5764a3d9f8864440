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
"""

from __future__ import annotations

import enum
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import anyio
import anyio.lowlevel
import attrs

from . import observability as _obs
from ._client import Client
from ._exceptions import (
    DecodeError,
    InvalidParams,
    LimitExceeded,
    MCPTasksError,
    RPCError,
    ServerBusy,
    UsageError,
)
from ._limits import Limits
from ._sansio.answer_book import InputBook, related_task_id
from .journal import QueuedInput, SharedJournal
from .models import (
    RELATED_TASK_META,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequest,
    JSONObject,
    JSONRPCRequest,
    ListRootsResult,
    RequestId,
    RootsCapability,
    SamplingCapability,
    Task,
    TaskMetadata,
)
from .receiver import ReceivedTask, TaskReceiver

__all__ = [
    "UNTAGGED",
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
]

log = _obs.get_logger("inputs")

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"


@attrs.frozen
class InputContext:
    """What a handler knows about the request it answers."""

    task_id: str | None
    """The related task (None for a request with no related-task meta, sent to a default)."""
    request_id: RequestId
    """The JSON-RPC id (2025-11-25), or the ``inputRequests`` key (2026-07-28)."""
    method: str
    _snapshot: Callable[[str], Task | None] = attrs.field(alias="snapshot", repr=False)
    candidates: tuple[Task, ...] = attrs.field(default=(), kw_only=True)
    """For a request naming no task: the tasks it may belong to (the Poller's, ``working``
    or ``input_required``), for the handler to decide; empty otherwise."""
    receiving: ReceivedTask | None = attrs.field(default=None, kw_only=True)
    """The task this handler runs as, when the server asked for the request as a task and a
    TaskReceiver runs it (2025-11-25); None otherwise."""

    @property
    def key(self) -> str:
        """The request's key: its ``inputRequests`` key (2026-07-28) or JSON-RPC id."""
        return str(self.request_id)

    def latest(self) -> Task | None:
        """The task's latest snapshot seen by the Poller (no request is sent)."""
        return None if self.task_id is None else self._snapshot(self.task_id)


ElicitationHandler = Callable[[InputContext, ElicitRequestParams], Awaitable[ElicitResult]]
SamplingHandler = Callable[
    [InputContext, CreateMessageRequestParams], Awaitable[CreateMessageResult]
]
RootsHandler = Callable[[InputContext], Awaitable[ListRootsResult]]
H = TypeVar("H")


class HandlerErrorPolicy(enum.Enum):
    """What happens when a handler raises something other than RPCError."""

    ANSWER_ERROR = "answer_error"
    """Answer the server with -32603 naming the failure; the task goes on (or fails) server-side."""
    ANSWER_ERROR_AND_CANCEL = "answer_error_and_cancel"
    """The same, after sending ``tasks/cancel`` for the task."""


class InputEventKind(enum.Enum):
    ARRIVED = "arrived"
    ANSWERED = "answered"
    UNHANDLED = "unhandled"
    """No handler for this task and no default: answered with -32601."""
    REJECTED = "rejected"
    """The request itself was bad (undeclared mode, malformed params): answered with -32602."""
    HANDLER_FAILED = "handler_failed"
    DUPLICATE = "duplicate"
    """Delivered again after it was already taken: not handled, not answered twice."""
    QUEUED = "queued"
    """No handler here for this task: queued in the router's shared journal for a worker that
    registers one (:meth:`InputRouter.answer_queued`); not answered here."""
    ACCEPTED_AS_TASK = "accepted_as_task"
    """Answered with a CreateTaskResult (the client's task receiver runs the handler as a task
    of this client, 2025-11-25); ANSWERED, UNHANDLED, REJECTED or HANDLER_FAILED follows when
    the handler is done."""


@attrs.frozen
class InputEvent:
    """Something that happened to an input request of a task; the Poller relays these."""

    kind: InputEventKind
    task_id: str | None
    request_id: RequestId
    method: str
    error: MCPTasksError | None = None


class Untagged(enum.Enum):
    """The key of handlers for requests that carry no related-task meta (``UNTAGGED``)."""

    UNTAGGED = "untagged"


UNTAGGED = Untagged.UNTAGGED
"""``router.on_elicitation(UNTAGGED, handler)``: for elicitations that name no task (a
server that forgets the related-task meta); the handler sees the candidate tasks in
``ctx.candidates`` and decides, the library never guesses."""

Key = str | None | Untagged


def _pick(table: dict[Key, H], task_id: str | None, method: str) -> H | None:
    if task_id is None:
        return table.get(UNTAGGED) or table.get(None)
    return table.get(task_id) or table.get(None)


def _unhandled(task_id: str | None, method: str) -> RPCError:
    which = f"task {task_id}" if task_id else "requests without a related task"
    return RPCError(-32601, f"no handler registered for {method} of {which}")


class TrackedTasks(Protocol):
    """What a handler's :class:`InputContext` reads of the tasks a Poller tracks: a Poller
    hands its own to the router with :meth:`InputRouter.subscribe` and
    :meth:`InputRouter.answer_input` (never a request: both read what the Poller holds)."""

    def snapshot(self, task_id: str) -> Task | None:
        """The latest snapshot of a tracked task, or None."""

    def candidates(self) -> Sequence[Task]:
        """The tracked tasks a request naming no task may belong to."""


def _no_snapshot(task_id: str) -> Task | None:
    return None


@attrs.frozen
class _Subscribed:
    """The tasks of every subscribed Poller, as one :class:`TrackedTasks`: a task's snapshot
    from the Poller that tracks it (the newest subscriber first, should two track it), the
    candidates of all of them."""

    pollers: tuple[TrackedTasks, ...]

    def snapshot(self, task_id: str) -> Task | None:
        for tasks in reversed(self.pollers):
            found = tasks.snapshot(task_id)
            if found is not None:
                return found
        return None

    def candidates(self) -> list[Task]:
        return [task for tasks in self.pollers for task in tasks.candidates()]


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
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.on_handler_error = on_handler_error
        self.receiver = receiver
        """With a TaskReceiver, the server's task-augmented elicitation and sampling requests
        run as tasks (2025-11-25, C-31): their handlers are the tasks' bodies."""
        self.unknown_task_grace = unknown_task_grace
        """Seconds a request naming a task no handler (and no default) serves yet is held
        for one to be registered, instead of -32601 at once (None: not held)."""
        self.journal = journal
        """A journal shared by many workers: each input request of a task is taken there
        before its handler runs (answered once across workers), and one this router has no
        handler for is queued there (None: this process alone decides)."""
        self.worker = worker or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """The name this router takes input requests under in the journal."""
        defaults = Limits()
        self._book = InputBook(defaults.max_answered_inputs, defaults.max_inputs_per_task)
        self._elicitation: dict[Key, ElicitationHandler] = {}
        self._sampling: dict[Key, SamplingHandler] = {}
        self._roots: dict[Key, RootsHandler] = {}
        self._registered: dict[str, anyio.Event] = {}
        self._waiting: dict[str, int] = {}
        self._listeners: list[Callable[[InputEvent], None]] = []
        self._client: Client | None = None
        self._outboxes: dict[str, _Outbox] = {}
        """Per task, the answers gathering for its next ``tasks/update`` (2026-07-28)."""
        # The tracked tasks of the subscribers that passed theirs, the newest last.
        self._tasks: list[TrackedTasks] = []

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
        self._require(ELICIT, self.elicitation)
        self._elicitation[task_id] = handler
        self._bound(task_id)
        return self

    def on_sampling(self, task_id: str | Untagged, handler: SamplingHandler) -> InputRouter:
        self._require(SAMPLE, self.sampling)
        self._sampling[task_id] = handler
        self._bound(task_id)
        return self

    def on_roots(self, task_id: str | Untagged, handler: RootsHandler) -> InputRouter:
        self._require(ROOTS, self.roots)
        self._roots[task_id] = handler
        self._bound(task_id)
        return self

    def default_elicitation(self, handler: ElicitationHandler) -> InputRouter:
        """For elicitations of tasks with no handler of their own, and untagged ones."""
        self._require(ELICIT, self.elicitation)
        self._elicitation[None] = handler
        return self

    def default_sampling(self, handler: SamplingHandler) -> InputRouter:
        self._require(SAMPLE, self.sampling)
        self._sampling[None] = handler
        return self

    def default_roots(self, handler: RootsHandler) -> InputRouter:
        self._require(ROOTS, self.roots)
        self._roots[None] = handler
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

    def _bound(self, task_id: str | Untagged) -> None:
        if isinstance(task_id, str):
            waiting = self._registered.pop(task_id, None)
            if waiting is not None:
                waiting.set()

    def forget(self, task_id: str) -> None:
        """Drop every handler and every record of ``task_id`` (call it when the task ended)."""
        for table in (self._elicitation, self._sampling, self._roots):
            table.pop(task_id, None)
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

    @staticmethod
    def _require(method: str, capability: object) -> None:
        if capability is None:
            raise UsageError(f"enable {method} in InputRouter(...) before registering a handler")

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
        if task_id is not None and not await self._ours(
            client, task_id, str(request.id), request.method, params, request.id
        ):
            self._book.answered(task_id, request.id)
            return None  # another worker answers it (or will): no answer from here
        try:
            as_task = self._as_task(client, request)
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
            kind = {-32601: InputEventKind.UNHANDLED, -32602: InputEventKind.REJECTED}.get(
                exc.code, InputEventKind.HANDLER_FAILED
            )
            self._book.answered(task_id, request.id)
            self._emit(InputEvent(kind, task_id, request.id, request.method, exc))
            raise
        except Exception as exc:  # the handler failed: answer with an error, by policy
            log.exception("input handler for %s of task %s raised", request.method, task_id)
            error = RPCError(-32603, f"client input handler failed: {type(exc).__name__}: {exc}")
            if self.on_handler_error is HandlerErrorPolicy.ANSWER_ERROR_AND_CANCEL and task_id:
                try:
                    await client.cancel_task(task_id)
                except MCPTasksError as cancel_error:
                    log.warning("tasks/cancel after a failed handler: %s", cancel_error)
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

    def _as_task(self, client: Client, request: JSONRPCRequest) -> TaskMetadata | None:
        """The request's ``task`` when it is to run as a task: a receiver is there and the
        client declared tasks for this kind; else None (C-32: ``task`` ignored)."""
        raw = (request.params or {}).get("task")
        declared = client.capabilities.tasks
        if raw is None or self.receiver is None or declared is None:
            return None
        kinds = {ELICIT: declared.elicitation_create, SAMPLE: declared.sampling_create_message}
        if not kinds.get(request.method, False):
            return None
        try:
            return client.decode(raw, TaskMetadata)
        except DecodeError as exc:
            raise RPCError(-32602, f"malformed task param: {exc.under('$.params.task')}") from exc

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
                kind = {-32601: InputEventKind.UNHANDLED, -32602: InputEventKind.REJECTED}
                ended(kind.get(exc.code, InputEventKind.HANDLER_FAILED), exc)
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
        client = self._client
        if client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        response = await self.answer_input(task_id, key, request, tasks=tasks)
        if response is None or not still_wanted():
            return False
        box = self._outboxes.get(task_id)
        if box is not None:  # another answer of this task is gathering: go with it
            box.answers[key] = response
            await box.sent.wait()
            return box.outcome(key)
        box = self._outboxes[task_id] = _Outbox({key: response})
        try:
            try:
                # Answers ready in the same moment join: their handlers finish before this
                # task runs again (one scheduling pass), none is waited for beyond it.
                await anyio.lowlevel.checkpoint()
            finally:
                del self._outboxes[task_id]  # a later answer gathers its own batch
            await box.send(client, task_id, timeout, busy)
        finally:
            box.sent.set()
        return box.outcome(key)

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
            self._check_declared(request.method)
            if task_id is not None and not mrtr:
                params = request.params or {}
                if not await self._ours(client, task_id, key, request.method, params, None):
                    self._book.answered(task_id, key)
                    return None  # another worker answers it (or will)
            # Asked in a snapshot (no server request to hang under): the task's span is the
            # handler's parent, whoever polled.
            trace = client._session.traces.get(task_id)
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
            kind = {-32601: InputEventKind.UNHANDLED, -32602: InputEventKind.REJECTED}.get(
                exc.code, InputEventKind.HANDLER_FAILED
            )
            error = exc
        except Exception as exc:
            log.exception("input handler for %s of task %s raised", request.method, task_id)
            kind = InputEventKind.HANDLER_FAILED
            error = RPCError(-32603, f"client input handler failed: {type(exc).__name__}: {exc}")
            cancel = self.on_handler_error is HandlerErrorPolicy.ANSWER_ERROR_AND_CANCEL
            if cancel and task_id is not None:
                try:
                    await client.cancel_task(task_id)
                except MCPTasksError as cancel_error:
                    log.warning("tasks/cancel after a failed handler: %s", cancel_error)
        if task_id is not None:
            self._book.answered(task_id, key)
        self._emit(InputEvent(kind, task_id, key, request.method, error))
        if result is None:
            return None
        body: JSONObject = client.encode(result)
        return body

    # -- many workers, one journal -----------------------------------------------------------

    def _has_handler(self, task_id: str, method: str) -> bool:
        tables: dict[str, dict[Key, Any]] = {
            ELICIT: self._elicitation,
            SAMPLE: self._sampling,
            ROOTS: self._roots,
        }
        table = tables.get(method)
        return table is not None and _pick(table, task_id, method) is not None

    async def _ours(
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
            if not self._has_handler(task_id, method):
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
            log.warning("input %s of task %s: the journal failed: %s", key, task_id, exc)
            self._emit(InputEvent(InputEventKind.HANDLER_FAILED, task_id, said, method, exc))
            return False
        self._emit(InputEvent(InputEventKind.DUPLICATE, task_id, said, method))
        return False

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
        journal = self.journal
        if client is None:
            raise UsageError("attach the InputRouter to its client first (router.attach)")
        if journal is None:
            raise UsageError("answer_queued needs InputRouter(journal=...): a shared journal")
        answered = 0
        for queued in await journal.queued_inputs(client.transport.identity):
            if queued.session_id != client.transport.session:
                continue  # asked on another session: only that session can answer it
            if not self._has_handler(queued.task_id, queued.method):
                continue
            server, task_id, key = queued.server, queued.task_id, queued.key
            said: RequestId = key if queued.request_id is None else queued.request_id
            if not await journal.claim_input(server, task_id, key, self.worker):
                continue  # another worker took it meanwhile
            self._emit(InputEvent(InputEventKind.ARRIVED, task_id, said, queued.method))
            try:
                result = await self._dispatch(task_id, said, queued.method, queued.params)
            except RPCError as exc:
                kind = {-32601: InputEventKind.UNHANDLED, -32602: InputEventKind.REJECTED}.get(
                    exc.code, InputEventKind.HANDLER_FAILED
                )
                self._emit(InputEvent(kind, task_id, said, queued.method, exc))
                continue
            except Exception as exc:
                log.exception("input handler for %s of task %s raised", queued.method, task_id)
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
        """:meth:`_dispatch_one`, in a span ``mcp_tasks.input`` when spans are on (under
        ``parent``, a Context, when given: the task's span; else the current one). ``tasks``:
        the tracked tasks the caller passed, else those of every subscribed Poller: a handler
        reads its task in the Poller that tracks it, never in whichever subscribed last."""
        if tasks is None and self._tasks:
            tasks = _Subscribed(tuple(self._tasks))
        _obs.remember(task_id)
        if _obs.tracer() is None:
            return await self._dispatch_one(
                task_id, request_id, method, params, receiving=receiving, mrtr=mrtr, tasks=tasks
            )
        client = self._client
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "jsonrpc.request.id": _obs.text_attr(str(request_id)),
        }
        if client is not None:
            attributes["mcp_tasks.generation"] = client.generation.value
        if task_id is not None:
            attributes["mcp_tasks.task.id"] = _obs.task_attr(task_id)
        with _obs.span("mcp_tasks.input", attributes, parent=parent):
            return await self._dispatch_one(
                task_id, request_id, method, params, receiving=receiving, mrtr=mrtr, tasks=tasks
            )

    async def _dispatch_one(
        self,
        task_id: str | None,
        request_id: RequestId,
        method: str,
        params: JSONObject,
        *,
        receiving: ReceivedTask | None = None,
        mrtr: bool = False,
        tasks: TrackedTasks | None = None,
    ) -> ElicitResult | CreateMessageResult | ListRootsResult:
        client = self._client
        assert client is not None
        # An MRTR question belongs to its call, no task: the default handler, no candidates.
        untagged = task_id is None and not mrtr
        candidates = tuple(tasks.candidates()) if untagged and tasks is not None else ()
        context = InputContext(
            task_id,
            request_id,
            method,
            snapshot=_no_snapshot if tasks is None else tasks.snapshot,
            receiving=receiving,
            candidates=candidates,
        )
        try:
            if method == ELICIT:
                elicit_handler = await self._handler(self._elicitation, task_id, method, mrtr)
                elicit: ElicitRequestParams = client.decode(
                    params,
                    ElicitRequestFormParams | ElicitRequestURLParams,  # type: ignore[arg-type]
                )
                self._check_mode(elicit)
                return await elicit_handler(context, elicit)
            if method == SAMPLE:
                sample_handler = await self._handler(self._sampling, task_id, method, mrtr)
                sample = client.decode(params, CreateMessageRequestParams)
                return await sample_handler(context, sample)
            return await (await self._handler(self._roots, task_id, method, mrtr))(context)
        except DecodeError as exc:
            error = exc.under("$.params")
            raise RPCError(-32602, f"malformed {method} params: {error}") from exc

    async def _handler(
        self, table: dict[Key, H], task_id: str | None, method: str, mrtr: bool = False
    ) -> H:
        """The handler for ``task_id``; with ``unknown_task_grace``, one registered within
        the grace period counts too (a server that asks before the caller had the id)."""
        handler = table.get(None) if mrtr else _pick(table, task_id, method)
        if handler is None and task_id is not None and self.unknown_task_grace is not None:
            self._waiting[task_id] = self._waiting.get(task_id, 0) + 1
            try:
                with anyio.move_on_after(self.unknown_task_grace):
                    while (handler := _pick(table, task_id, method)) is None:
                        await self._registered.setdefault(task_id, anyio.Event()).wait()
            finally:
                self._waiting[task_id] -= 1
                if not self._waiting[task_id]:  # the last one waiting: hold nothing for it
                    del self._waiting[task_id]
                    self._registered.pop(task_id, None)
        if handler is None:
            raise _unhandled(task_id, method)
        return handler

    def _check_declared(self, method: str) -> None:
        """E A-4: an input request for a kind this client did not declare is invalid."""
        declared = {ELICIT: self.elicitation, SAMPLE: self.sampling, ROOTS: self.roots}
        if method not in declared:
            raise RPCError(-32602, f"unknown input request method {method!r}")
        if declared[method] is None:
            raise RPCError(-32602, f"{method} was not declared by this client")

    def _check_mode(self, params: ElicitRequestParams) -> None:
        """C-50: a mode the client did not declare is answered with -32602."""
        declared = self.elicitation
        assert declared is not None
        form_ok = declared.form is not None or declared.url is None  # {} means form only
        if isinstance(params, ElicitRequestURLParams) and declared.url is None:
            raise RPCError(-32602, "elicitation mode 'url' was not declared by this client")
        if isinstance(params, ElicitRequestFormParams) and not form_ok:
            raise RPCError(-32602, "elicitation mode 'form' was not declared by this client")


BusyRetry = Callable[[ServerBusy, int], "float | None"]
"""``busy(error, in_row)``: the seconds to wait before a busy ``tasks/update`` is sent again
(``in_row``: busy answers in a row, from 1), or None to raise the ServerBusy."""


@attrs.define
class _Outbox:
    """The answers of one task gathering for one ``tasks/update``; each answer's fate."""

    answers: dict[str, JSONObject]
    sent: anyio.Event = attrs.field(factory=anyio.Event)
    errors: dict[str, BaseException] = attrs.field(factory=dict)
    done: bool = False

    async def send(
        self, client: Client, task_id: str, timeout: float | None, busy: BusyRetry | None
    ) -> None:
        in_row = 0
        try:
            while True:
                try:
                    await self._send_once(client, task_id, timeout)
                    break
                except ServerBusy as exc:  # sent again only when the caller's policy says so
                    in_row += 1
                    wait = None if busy is None else busy(exc, in_row)
                    if wait is None:
                        raise
                    await anyio.sleep(wait)
        except BaseException as exc:
            self.errors = dict.fromkeys(self.answers, exc)
            raise
        self.done = True

    async def _send_once(self, client: Client, task_id: str, timeout: float | None) -> None:
        try:
            await client.update_task(task_id, self.answers, timeout=timeout)
        except InvalidParams as exc:
            if len(self.answers) == 1:
                self.errors = dict.fromkeys(self.answers, exc)
            else:  # one refused key must not cost the others their answers
                for key, answer in self.answers.items():
                    try:
                        await client.update_task(task_id, {key: answer}, timeout=timeout)
                    except InvalidParams as one:
                        self.errors[key] = one

    def outcome(self, key: str) -> bool:
        """True when ``key``'s answer went out; raises what refused it."""
        error = self.errors.get(key)
        if error is not None and not isinstance(error, anyio.get_cancelled_exc_class()):
            raise error
        return self.done and error is None
