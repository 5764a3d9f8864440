"""The input router's handler table: which handler answers which task's requests.

Job: the handlers, and only them. It keeps one table per kind (elicitation, sampling, roots)
keyed by task id (``None``: the default; ``UNTAGGED``: requests naming no task), the kinds the
router serves (their capabilities), and the grace a request naming a task nobody registered a
handler for yet may wait; it finds a request's handler, checks the request against what was
declared (E A-4, C-50), decodes its params and runs the handler (in a span of the
client's tracing when spans are on).

May import: ``_routing.events``, ``_client`` (the Client a request is decoded by),
``receiver``, ``_exceptions``, ``models``.

Theory of operation. Registering a handler for a task wakes every request held for that task
(``unknown_task_grace``); the last request held for a task takes its wake-up event away, so
nothing is kept for a task no one waits on. :meth:`InputHandlers.answer` builds the handler's
:class:`~mcp_tasks_client.inputs.InputContext` (the tracked tasks it is lent, for
``ctx.latest()`` and ``ctx.candidates``), and turns a malformed request into -32602.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import anyio

from .._exceptions import DecodeError, RPCError, UsageError
from ..models import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    JSONObject,
    ListRootsResult,
    RequestId,
    RootsCapability,
    SamplingCapability,
)
from ..receiver import ReceivedTask
from .events import (
    ELICIT,
    ROOTS,
    SAMPLE,
    ElicitationHandler,
    H,
    InputContext,
    Key,
    RootsHandler,
    SamplingHandler,
    TrackedTasks,
    no_snapshot,
    pick,
    unhandled,
)

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["InputHandlers"]


class InputHandlers:
    """The handlers of an InputRouter by kind and task (see the module docstring)."""

    def __init__(
        self,
        elicitation: ElicitationCapability | None,
        sampling: SamplingCapability | None,
        roots: RootsCapability | None,
        unknown_task_grace: float | None,
    ) -> None:
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.unknown_task_grace = unknown_task_grace
        self._elicitation: dict[Key, ElicitationHandler] = {}
        self._sampling: dict[Key, SamplingHandler] = {}
        self._roots: dict[Key, RootsHandler] = {}
        self._registered: dict[str, anyio.Event] = {}
        self._waiting: dict[str, int] = {}

    # -- registering -----------------------------------------------------------------------

    def set_elicitation(self, key: Key, handler: ElicitationHandler) -> None:
        self._require(ELICIT, self.elicitation)
        self._elicitation[key] = handler
        self._bound(key)

    def set_sampling(self, key: Key, handler: SamplingHandler) -> None:
        self._require(SAMPLE, self.sampling)
        self._sampling[key] = handler
        self._bound(key)

    def set_roots(self, key: Key, handler: RootsHandler) -> None:
        self._require(ROOTS, self.roots)
        self._roots[key] = handler
        self._bound(key)

    def forget(self, task_id: str) -> None:
        """Drop every handler of ``task_id``."""
        for table in (self._elicitation, self._sampling, self._roots):
            table.pop(task_id, None)

    @staticmethod
    def _require(method: str, capability: object) -> None:
        if capability is None:
            raise UsageError(f"enable {method} in InputRouter(...) before registering a handler")

    def _bound(self, key: Key) -> None:
        if isinstance(key, str):
            waiting = self._registered.pop(key, None)
            if waiting is not None:
                waiting.set()

    # -- reading ---------------------------------------------------------------------------

    def keys(self, method: str) -> frozenset[Key]:
        """The keys (task ids, ``None``, ``UNTAGGED``) with a handler for ``method``."""
        return frozenset(self._table(method) or ())

    @property
    def held_for(self) -> frozenset[str]:
        """The task ids some request is held for, waiting for a handler (the grace)."""
        return frozenset(self._registered) | frozenset(self._waiting)

    def _table(self, method: str) -> dict[Key, ElicitationHandler] | None:
        tables: dict[str, dict[Key, ElicitationHandler]] = {
            ELICIT: self._elicitation,
            SAMPLE: self._sampling,  # type: ignore[dict-item]
            ROOTS: self._roots,  # type: ignore[dict-item]
        }
        return tables.get(method)

    def has_handler(self, task_id: str, method: str) -> bool:
        table = self._table(method)
        return table is not None and pick(table, task_id, method) is not None

    def check_declared(self, method: str) -> None:
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

    # -- answering -------------------------------------------------------------------------

    async def answer(
        self,
        client: Client,
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
        """Run the handler for one request, in a span ``mcp_tasks.input`` when the client's
        spans are on (under ``parent``, a Context, when given: the task's span; else the
        current one); RPCError -32601 when there is none (after the grace, if any), -32602
        for params that do not decode or a mode not declared. Deadline: the handler's own,
        plus ``unknown_task_grace`` at most while a handler is awaited. Cancelled: the
        handler (or the wait for one) is cancelled."""
        redaction, tracing = client.redaction, client.tracing
        redaction.remember(task_id)
        span: AbstractContextManager[Any] = contextlib.nullcontext()
        if tracing.tracer is not None:
            attributes: dict[str, Any] = {
                "mcp.method.name": method,
                "jsonrpc.request.id": redaction.text_attr(str(request_id)),
                "mcp_tasks.generation": client.generation.value,
            }
            if task_id is not None:
                attributes["mcp_tasks.task.id"] = redaction.label(task_id)
            span = tracing.span("mcp_tasks.input", attributes, parent=parent)
        with span:
            return await self._run(
                client, task_id, request_id, method, params, receiving, mrtr, tasks
            )

    async def _run(
        self,
        client: Client,
        task_id: str | None,
        request_id: RequestId,
        method: str,
        params: JSONObject,
        receiving: ReceivedTask | None,
        mrtr: bool,
        tasks: TrackedTasks | None,
    ) -> ElicitResult | CreateMessageResult | ListRootsResult:
        # An MRTR question belongs to its call, no task: the default handler, no candidates.
        untagged = task_id is None and not mrtr
        candidates = tuple(tasks.candidates()) if untagged and tasks is not None else ()
        context = InputContext(
            task_id,
            request_id,
            method,
            snapshot=no_snapshot if tasks is None else tasks.snapshot,
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
        handler = table.get(None) if mrtr else pick(table, task_id, method)
        if handler is None and task_id is not None and self.unknown_task_grace is not None:
            self._waiting[task_id] = self._waiting.get(task_id, 0) + 1
            try:
                with anyio.move_on_after(self.unknown_task_grace):
                    while (handler := pick(table, task_id, method)) is None:
                        await self._registered.setdefault(task_id, anyio.Event()).wait()
            finally:
                self._waiting[task_id] -= 1
                if not self._waiting[task_id]:  # the last one waiting: hold nothing for it
                    del self._waiting[task_id]
                    self._registered.pop(task_id, None)
        if handler is None:
            raise unhandled(task_id, method)
        return handler
