"""The 2025-11-25 generation with its experimental tasks: stateful, ``initialize``, ``params.task``.

What this driver decides (against 2026-07-28, see ``v2026_07_28.py``):

- handshake: ``initialize`` + ``notifications/initialized`` (C-08, C-09), or a kept session
  resumed without one; what it agreed (version, server capabilities) is kept here;
- task opt-in: ``params.task`` (T:128), gated by the server's ``tasks.requests.tools.call``
  (C-16) and the tool's ``execution.taskSupport`` (C-17);
- a start's answer: always ``{task}``; a plain answer is a refusal or UnexpectedPlainResult;
- the outcome: a blocking ``tasks/result`` once the task is terminal (nothing for cancelled,
  C-27); input mid-flight arrives as server->client requests while one is open (C-21);
- status push: ``notifications/tasks/status``; cancel's answer: the Task; ``tasks/list``: yes.

May import what ``base.py`` may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from .. import models
from .._codec import v2025_11_25
from .._codec._fast_task import task_decoder_2025
from .._exceptions import (
    CapabilityNotNegotiated,
    DecodeError,
    InvalidParams,
    MCPTasksError,
    RPCError,
    TaskAugmentationNotAllowed,
    TaskAugmentationRequired,
    UnexpectedPlainResult,
    UnsupportedProtocolVersion,
    UsageError,
)
from .._generation import Generation
from ..models import (
    RELATED_TASK_META,
    CreateTaskResult,
    InitializeResult,
    JSONObject,
    JSONRPCResponse,
    RequestId,
    ServerCapabilities,
    Task,
    TaskStatus,
)
from . import refusals
from .base import Driver, Link, StartAnswer, TaskFollow, TaskLink

if TYPE_CHECKING:  # the tool models are read from ``models`` when a tool call needs them
    from ..models import CallToolResult, Tool
    from ..outcomes import Outcome

__all__ = ["Driver2025"]


class Driver2025(Driver):
    """2025-11-25 with its experimental tasks."""

    generation = Generation.V2025_11_25
    converter = v2025_11_25.converter
    status_notification = "notifications/tasks/status"
    progress_outlives_call = True
    missing: ClassVar[Mapping[str, str]] = {
        "server/discover": "initialize told the capabilities",
        "tasks/update": "input is answered by an InputRouter",
        "subscriptions/listen": "status comes unasked (C-22)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # This client's Task decoder, with its own cache of the timestamps it read (nothing
        # kept across the process's clients).
        self._decode_task = task_decoder_2025(v2025_11_25.strict_task, cached=True)
        self._initialized: InitializeResult | None = None

    # -- the handshake and what it agreed ------------------------------------------------

    def check_resume(self, resume: InitializeResult, session: str | None) -> None:
        if session is None:
            raise UsageError(
                "Client(resume=...) resumes the session the transport carries: give the "
                "transport its session id (HttpTransport(url, session_id=...))"
            )
        if not isinstance(resume, InitializeResult):
            raise UsageError(
                f"resume= takes the InitializeResult of the session, got {type(resume)!r}"
            )

    async def handshake(
        self, link: Link, *, resume: InitializeResult | None, timeout: float
    ) -> None:
        requested = self.protocol_version
        if resume is not None:
            # A session an earlier client kept (HttpTransport(delete_session_on_close=False)):
            # what it agreed on stands; nothing is sent until the caller asks. A server that
            # forgot the session answers the first request with 404: SessionExpired.
            if not self.supports(resume.protocol_version):
                raise UnsupportedProtocolVersion(requested, [resume.protocol_version])
            self._initialized = resume
            link.negotiated(resume.protocol_version)
            await link.agreed()
            return
        params = {
            "protocolVersion": requested,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        try:
            raw = await link.request("initialize", params, timeout=timeout)
        except InvalidParams as exc:  # some servers refuse with -32602 {supported}
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if isinstance(supported, list):
                raise UnsupportedProtocolVersion(requested, [str(v) for v in supported]) from exc
            raise
        try:
            result = self.converter.decode(raw, InitializeResult)
        except DecodeError as exc:
            raise exc.under("$.result") from None
        if not self.supports(result.protocol_version):  # C-08
            raise UnsupportedProtocolVersion(requested, [result.protocol_version])
        self._initialized = result
        link.negotiated(result.protocol_version)
        await link.agreed()  # before initialized: the server may speak unasked after it
        await link.notify("notifications/initialized", timeout=timeout)  # C-09

    @property
    def agreed_version(self) -> str:
        return self.initialize_result.protocol_version

    @property
    def initialize_result(self) -> InitializeResult:
        if self._initialized is None:
            raise UsageError("the client is not connected; use `async with Client(...)`")
        return self._initialized

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self.initialize_result.capabilities

    def session_to_keep(self, session: str | None) -> JSONObject | None:
        if session is None:
            return None
        encoded: JSONObject = self.converter.encode(self.initialize_result)
        return encoded

    @classmethod
    def unresumable(cls, *, stdio: bool, kept: bool) -> str | None:
        # A task is bound to the session that started it (T:3.1).
        if stdio:
            return "bound to a stdio session, which ended with its process"
        if not kept:
            return "bound to a session the journal does not know"
        return None

    @classmethod
    def resumed_session(cls, kept: JSONObject | None) -> InitializeResult | None:
        return None if kept is None else cls.converter.decode(kept, InitializeResult)

    # -- what a request carries ------------------------------------------------------------

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        task: dict[str, Any] = {} if ttl_ms is None else {"ttl": ttl_ms}
        return {**params, "task": task}

    # -- checks before a call is sent ------------------------------------------------------

    def check_start(self, name: str, tool: Tool | None) -> None:
        tasks = self.server_capabilities.tasks
        if tasks is None or not tasks.tools_call:
            raise CapabilityNotNegotiated("tasks.requests.tools.call", rule="C-16, T:113")
        if tool is not None and tool.task_support is models.TaskSupport.FORBIDDEN:
            raise TaskAugmentationNotAllowed(name)

    def check_plain_call(self, name: str, tool: Tool | None) -> None:
        if tool is not None and tool.task_support is models.TaskSupport.REQUIRED:
            raise TaskAugmentationRequired(name)

    def input_keys(self, key: str) -> list[str]:
        return []  # a JSON-RPC id is the server's counter, not a name to answer by

    tasks_bound_to_session = True

    def unknown_task_hint(self) -> str:
        return (
            ", or a task of another session: a 2025-11-25 server may bind a task to the "
            "session that started it"
        )

    def check_cancel(self) -> None:
        tasks = self.server_capabilities.tasks
        if tasks is None or not tasks.cancel:
            raise CapabilityNotNegotiated("tasks.cancel", rule="C-28")

    def check_list(self) -> None:
        tasks = self.server_capabilities.tasks
        if tasks is None or not tasks.list:
            raise CapabilityNotNegotiated("tasks.list", rule="C-28")

    # -- what an answer means --------------------------------------------------------------

    def read_start(self, raw: JSONObject) -> StartAnswer:
        if "task" in raw:  # the nested form is how a task is told from a plain answer
            return self.converter.decode(raw, CreateTaskResult)
        return self.converter.decode(raw, models.CallToolResult)

    def plain_start_answer(self, name: str, answer: CallToolResult) -> CallToolResult:
        # A plain answer to a task call: the server ran it inline, or refused in an isError.
        said = refusals.error_text(answer)
        if refusals.refuses_tasks(said):
            raise TaskAugmentationNotAllowed(name, server_said=said)
        # An isError answer (a misspelt tool, arguments refused): the server's reason is kept.
        raise UnexpectedPlainResult(name, answer, server_said=said)

    def read_task(self, raw: JSONObject) -> Task:
        return self._decode_task(raw)

    async def send_input_answer(
        self,
        link: Link,
        task_id: str,
        key: str,
        request_id: RequestId | None,
        answer: JSONObject,
        *,
        timeout: float | None,
    ) -> None:
        if request_id is None:
            raise UsageError(f"input request {key!r} of task {task_id!r} has no JSON-RPC id")
        body = dict(answer)
        meta = dict(body.get("_meta") or {})
        meta[RELATED_TASK_META] = {"taskId": task_id}  # C-25
        body["_meta"] = meta
        await link.reply(JSONRPCResponse(request_id, body), timeout=timeout)

    def read_cancel(self, raw: JSONObject) -> Task | None:
        return self._decode_task(raw)

    def created_task_id(self, raw: JSONObject | None) -> str | None:
        task = raw.get("task") if raw is not None else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        return task_id if isinstance(task_id, str) else None

    # -- the Poller's side -----------------------------------------------------------------

    def seed_is_news(self, ref: object) -> bool:
        return True

    def follow(self, link: TaskLink, policy: Any) -> TaskFollow:
        # Imported here, once per followed task (never per poll): with the outcomes, and
        # through them the tool and content models, which a program following no task (a
        # ``status``) never loads.
        from .._sansio.classify import legacy_outcome

        return _HeldResult(link, legacy_outcome, open_on_input=policy.open_result_on_input_required)


class _HeldResult(TaskFollow):
    """A 2025-11-25 task: on input_required one blocking ``tasks/result`` is held open (C-21;
    the server sends its questions while it is open, T:431-450; never two at once, T:3.2); at
    terminal its result is the outcome, or a new ``tasks/result`` answered at once.

    A ``tasks/result`` is the outcome only once the task is known terminal: an error it
    returns earlier (a server that does not block, T:465) is kept aside, the call is opened
    again while the task still needs input, and the result is fetched afresh at terminal; if
    that fetch returns a result, the early error is recorded as a violation."""

    def __init__(
        self,
        link: TaskLink,
        classify: Callable[..., Outcome | MCPTasksError],
        *,
        open_on_input: bool,
    ) -> None:
        self._link = link
        self._classify = classify
        self._open_on_input = open_on_input
        self._call: anyio.Event | None = None  # set when the held call returned
        self._scope: anyio.CancelScope | None = None
        self._raw: JSONObject | None = None
        self._early: RPCError | None = None
        self._stopped = False

    def input_required(self, snapshot: Task) -> None:
        if not self._open_on_input or self._call is not None or self._stopped:
            return
        call = self._call = anyio.Event()
        self._link.start_soon(lambda: self._hold(call))

    async def _hold(self, call: anyio.Event) -> None:
        scope = self._scope = anyio.CancelScope()
        with scope:
            await self._await(call)
        if scope.cancelled_caught:  # released: nobody waits on this task any more
            self._call = None
            call.set()

    async def _await(self, call: anyio.Event) -> None:
        try:
            self._raw = await self._link.task_result(held=True)
        except MCPTasksError as exc:
            # An error answer is the outcome only once the task is known terminal (T:465). A
            # dropped stream or a timeout likewise: forget this call; a later poll that still
            # shows input_required opens a new one, and the result is fetched afresh.
            if isinstance(exc, RPCError):
                self._early = exc
            self._link.warn(exc)
            self._call = None
            call.set()
            return
        call.set()
        # tasks/result returns once the task is terminal (T:465), but the status (completed or
        # failed, A-14) still comes from a poll that goes through the scheduler (C-19).

    def stop(self) -> None:
        self._stopped = True
        if self._scope is not None:  # nor hold its tasks/result open unasked
            self._scope.cancel()

    async def outcome(self, terminal: Task) -> Outcome | MCPTasksError:
        decode = self._link.decode_result
        if terminal.status is TaskStatus.CANCELLED:  # C-27: nothing to fetch
            return self._classify(terminal, None, None, decode)
        try:
            raw = await self._terminal_result()
        except RPCError as exc:
            return self._classify(terminal, None, exc, decode)
        return self._classify(terminal, raw, None, decode)

    async def _terminal_result(self) -> JSONObject:
        if self._call is not None:
            await self._call.wait()
            if self._raw is not None:
                return self._raw
        # The task is terminal: answered at once, on the request pool (no held connection).
        raw = await self._link.task_result(held=False)
        early = self._early
        if early is not None:
            from .._sansio.task_machine import Violation  # (a follower's: status has none)

            self._link.warn(
                Violation(
                    self._link.task_id,
                    "T:465",
                    f"tasks/result answered error {early.code} ({early.message!r}) before the "
                    "task was terminal; at terminal it returned a result",
                    soft=True,
                )
            )
        return raw
