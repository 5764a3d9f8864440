"""The live probe's script for a 2026-07-28 server with the tasks extension.

``server/discover`` (E S1), ``tools/list``, the methods 2026-07-28 removed (E S16, E S17); each
safe tool called without the extension (E S2, E S3) and as a task: found at once (E S5),
waited on (its MRTR input before the task, E S21, or its ``inputRequests`` answered, E S14),
read once ended; one more task cancelled (E S15). ``probe(..., listen=True)`` waits on a
listen stream (E C40, C41, S25). A server whose ``server/discover`` gives the tasks extension
a ``revision`` this client does not implement is not probed with tasks at all (SEP-3392: the
extension is not used, never guessed): every rule the tasks would have exercised is not
applicable, and says why, naming the revision.

May import what ``_probe.py`` may, and ``_probe``.
"""

from __future__ import annotations

import anyio

from .._client import Client
from .._exceptions import (
    MCPTasksError,
    MissingClientCapability,
    RPCError,
    TaskNotFound,
    UnknownExtensionRevision,
)
from .._generation import Generation
from .._sansio.scheduler import PollPolicy
from ..builders import ToolCall
from ..engine import Poller
from ..inputs import InputContext, InputRouter
from ..models import CallToolResult, CreateTaskResult, TaskSupport, Tool
from ..outcomes import Completed, Failed
from ._probe import UNKNOWN_TASK, Probe, declared, describe, error_of
from ._report import ProbeVerdict

__all__ = ["Probe2026"]

_TASK_RULES = (
    "E S1",
    "E S2",
    "E S3",
    "E S5",
    "E S7",
    "E S14",
    "E S15",
    "E S16",
    "E S17",
    "E S21",
    "E C40",
    "E C41",
    "E S25",
)
"""The rules the probe's task steps exercise (none run under a revision it does not know)."""


class Probe2026(Probe):
    """The probe of a 2026-07-28 server."""

    generation = Generation.V2026_07_28
    refused_revision: UnknownExtensionRevision | None = None
    """The tasks extension revision the server stated and this client does not implement."""

    async def script(self, client: Client, router: InputRouter) -> None:
        await self._step(("E S1",), client.discover())
        try:
            client.driver.check_revision()
        except UnknownExtensionRevision as refused:
            self.refused_revision = refused
            self.note(_TASK_RULES, f"not probed: {refused}")
            return
        await self._run(client, router)

    async def input_asked(self, ctx: InputContext) -> None:
        self.exercise("input", f"input {ctx.key!r} asked ({ctx.method})")
        if ctx.task_id is None:
            self.mrtr_answers += 1  # MRTR: input of a call that has no task yet
            return
        tool = self.task_tools.get(ctx.task_id)
        if self.client is not None and tool is not None and tool.name in self.task_only:
            self.check(
                "E S21",
                ProbeVerdict.WARN,
                f"task-only tool {tool.name!r} created task {ctx.task_id} and then asked "
                f"for input ({ctx.key!r}) in it, not before (MRTR)",
                self.last_answer("tasks/get") or {},
            )

    async def _removed(self, client: Client, method: str, rule_id: str) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await client.request(method, {"taskId": UNKNOWN_TASK})
        except RPCError as exc:
            raw = self.last_answer(method) or {}
            if exc.code == -32601:
                self.check(rule_id, ProbeVerdict.PASS, f"{method}: -32601")
            else:
                self.check(rule_id, ProbeVerdict.WARN, f"{method}: {error_of(exc)}", raw)
            return
        except (MCPTasksError, TimeoutError) as exc:
            self.note((rule_id,), f"{method}: {exc!r}")
            return
        raw = self.last_answer(method) or {}
        self.check(rule_id, ProbeVerdict.FAIL, f"{method} answered a result", raw)

    async def _run(self, client: Client, router: InputRouter) -> None:
        tools = await self._tools(client)
        await self._removed(client, "tasks/result", "E S16")
        await self._removed(client, "tasks/list", "E S17")
        policy = PollPolicy(floor=0.05, initial=0.05, jitter=0.0, listen=self.listen)
        safe = [(t, a) for t, a in self._safe(tools) if declared(t) is not TaskSupport.FORBIDDEN]
        async with Poller(client, policy, inputs=router) as poller:
            for tool, arguments in safe:
                call = ToolCall(tool.name, dict(arguments))
                await self._step(("E S2", "E S3"), self._plain(client, tool, call))
                await self._step(("E S5",), self._task(client, poller, tool, call))
            for tool, arguments in safe:
                call = ToolCall(tool.name, dict(arguments))
                if await self._step(("E S15",), self._cancel(client, poller, call)):
                    break
        for rule_id, what in (("E S7", "a tool ending in isError"), ("E S21", "MRTR")):
            if rule_id not in self.checks:
                self.note((rule_id,), f"no safe tool showed {what}")

    async def _plain(self, client: Client, tool: Tool, call: ToolCall) -> None:
        """A call without the extension: never a task (E S2); a task-only tool's is -32021
        (E S3). 2026-07-28 tools need not say which run as tasks: a -32021 says it."""
        answer = await self._raw_call(client, call, task=False)
        raw = self.last_answer("tools/call") or {}
        error = raw.get("error") if isinstance(raw.get("error"), dict) else None
        code = error.get("code") if error is not None else None
        needs_tasks = _needs_tasks(client, error)
        if needs_tasks:
            # -32021, or what the driver reads as it (an earlier draft's -32003, E A-23: the
            # Validator warns of the drift)
            self.task_only.add(tool.name)
            self.check("E S3", ProbeVerdict.PASS, f"{tool.name!r} without the extension: {code}")
        if isinstance(answer, dict) and answer.get("resultType") == "task":
            self.check(
                "E S2",
                ProbeVerdict.FAIL,
                f"{tool.name!r} called without the extension answered a task",
                raw,
            )
        elif answer is not None or code is not None:
            self.check("E S2", ProbeVerdict.PASS, "no task for a call without the extension")
        if declared(tool) is TaskSupport.REQUIRED:
            self.task_only.add(tool.name)
            if isinstance(answer, dict) and answer.get("resultType") != "task":
                self.check(
                    "E S3",
                    ProbeVerdict.FAIL,
                    f"{tool.name!r} (taskSupport required) answered a call without the "
                    "extension with a result",
                    raw,
                )
            elif code is not None and not needs_tasks:
                detail = f"{tool.name!r} (taskSupport required) without the extension: {code}"
                self.check("E S3", ProbeVerdict.WARN, detail, raw)

    async def _task(self, client: Client, poller: Poller, tool: Tool, call: ToolCall) -> None:
        asked = self.mrtr_answers
        started = await client.start(call.as_task(), inputs=self.router)
        if isinstance(started, CallToolResult):
            self.note(("E S5",), f"{tool.name!r} answered inline, no task")
            return
        task_id = started.task.task_id
        answer = describe("received", self.last_answer("tools/call") or {})
        self.exercise("created", f"task {task_id} created by {tool.name!r} ({answer})")
        self.task_tools[task_id] = tool
        if self.mrtr_answers > asked and tool.name in self.task_only:
            self.check(
                "E S21",
                ProbeVerdict.PASS,
                f"task-only tool {tool.name!r} asked its MRTR input before creating {task_id}",
            )
        try:
            await client.get_task(task_id)
            self.check("E S5", ProbeVerdict.PASS, f"tasks/get found {task_id} at once")
        except TaskNotFound:
            raw = self.last_answer("tasks/get") or {}
            self.check("E S5", ProbeVerdict.FAIL, f"tasks/get right after creating {task_id}", raw)
        outcome = await poller.wait(started, deadline=self.timeout)
        await client.get_task(task_id)
        self.exercise("terminal_get", f"tasks/get of ended task {task_id}")
        if isinstance(outcome, Completed):
            self.exercise("completed", f"task {task_id} completed")
            if outcome.result.is_error:
                self.check("E S7", ProbeVerdict.PASS, f"{tool.name!r}: isError ended completed")
        elif isinstance(outcome, Failed):
            # one carrying its tool's isError result: E S7, found by the validator
            self.exercise("failed", f"task {task_id} failed")
            # (a failed task with an error only cannot be told from E S8)

    async def _cancel(self, client: Client, poller: Poller, call: ToolCall) -> bool:
        started = await client.start(call.as_task(), inputs=self.router)
        if not isinstance(started, CreateTaskResult):
            return False
        await client.cancel_task(started.task.task_id)
        with anyio.move_on_after(self.timeout):
            await poller.wait(started, deadline=self.timeout)
        return True


def _needs_tasks(client: Client, error: dict[str, object] | None) -> bool:
    """Whether a refusal is a missing capability (-32021) as the client reads it (E C52, and
    E A-23: an earlier draft's -32003 naming ``requiredCapabilities``)."""
    code = error.get("code") if error is not None else None
    if error is None or not isinstance(code, int) or isinstance(code, bool):
        return False
    message = error.get("message")
    refusal = RPCError.from_error(
        code, message if isinstance(message, str) else "", error.get("data")
    )
    read = client.driver.read_error(refusal)
    return isinstance(read, MissingClientCapability)
