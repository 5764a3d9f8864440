"""A FaultServer's 2026-07-28 dialect: stateless, the tasks extension, outcomes inline.

Over HTTP there is no session, no GET stream and no DELETE (405), and an error answered as JSON
carries its HTTP status (404 for -32601, 400 for -32020 to -32022, E S24). Every result says
its ``resultType``. A call asks for a task by declaring the extension in its ``_meta`` (E S2
broken: a task anyway); ``need_task`` and ``fail`` without it answer -32021 (E S3 broken: a
plain result); a tool without task support answers plainly; ``confirm`` asks its input by MRTR
before it creates its task (E S21 broken: inside it). A task carries ``ttlMs`` and
``pollIntervalMs``; a detailed one inlines its outcome (``fail``: ``completed`` with
``isError``; E S7 broken: ``failed`` with the result next to an error) or its open question as
``inputRequests`` (``q1``, then ``q2``; E S14 broken: the second reuses ``q1``, shown once),
answered by ``tasks/update``. ``subscriptions/listen`` (served with ``listen=True``) needs the
extension declared (-32021, E C39); it acknowledges the listened tasks it has, then pushes
each as ``tasks/get`` shows it at once and at each change, and closes gracefully once all have
ended (E C40-C42, C44; E C40 broken: the first pushes come before the acknowledgement; E C41
broken: pushes without ``subscriptionId``). ``tasks/cancel`` answers an empty ack;
``tasks/result`` and ``tasks/list`` are -32601 (E S16, E S17 broken: answered). E A-23
broken: the task-only tools' refusal is an earlier draft's -32003. ``server/discover`` and
``tools/list`` carry the caching hints (SEP-2549; E H1 broken: none).

May import what ``_fault_base.py`` may, ``_fault_base``, and the 2026-07-28 driver's names of
an earlier draft's forms (``DRAFT_MISSING_CAPABILITY``, to break E A-23).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import anyio

from .._drivers.v2026_07_28 import DRAFT_MISSING_CAPABILITY
from .._generation import Generation
from ..models import TASKS_EXTENSION
from ._fault_base import (
    FORM,
    JSON,
    TERMINAL,
    Channel,
    Dialect,
    FaultTask,
    Refusal,
    result_json,
    text_of,
)
from ._http import Conn, Received

__all__ = ["Dialect2026"]

_ERROR_STATUS = {-32601: 404, -32020: 400, -32021: 400, -32022: 400, -32003: 400}  # E S24
_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_CACHEABLE = frozenset({"server/discover", "tools/list"})
"""What this server answers of SEP-2549's cacheable methods."""


class Dialect2026(Dialect):
    """A FaultServer speaking 2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension."""

    generation = Generation.V2026_07_28
    tools: ClassVar[Mapping[str, str | None]] = {
        "echo": "optional",
        "need_task": "required",
        "fail": "required",
        "protocol_error": "optional",
        "slow": "optional",
        "plain": None,
        "ask": "optional",
        "confirm": "required",
    }

    def check_ask_on(self, ask_on: str) -> None:
        if ask_on == "get":
            raise ValueError("2026-07-28 asks by inputRequests; it has no GET stream (E C56)")

    # -- HTTP -------------------------------------------------------------------------------

    def http_session(self, body: Any, session: str | None) -> tuple[str | None, dict[str, str]]:
        return session, {}  # E C7: no session

    def http_status(self, answer: JSON) -> int:
        error = answer.get("error")
        if isinstance(error, dict):
            return _ERROR_STATUS.get(error.get("code"), 200)  # type: ignore[arg-type]
        return 200

    async def on_delete(self, request: Received, conn: Conn) -> None:
        await conn.head(405, {"Content-Length": "0"})

    async def on_get(self, request: Received, conn: Conn) -> None:
        await conn.head(405, {"Content-Length": "0"})  # E C56: no standalone stream

    # -- calls and tasks --------------------------------------------------------------------

    def result(self, out: JSON) -> JSON:
        out.setdefault("resultType", "complete")
        return out

    def hinted(self, method: str, out: JSON) -> JSON:
        # SEP-2549: a complete cacheable result MUST carry ttlMs and cacheScope (E H1).
        if method in _CACHEABLE and "E H1" not in self.server.breaks:
            ttl, scope = self.server.cache_hints
            out.setdefault("ttlMs", ttl)
            out.setdefault("cacheScope", scope)
        return out

    def wants_task(self, name: str, params: JSON) -> bool:
        # E S2 broken: a task anyway (confirm, task-only, keeps -32021: E S3 holds)
        return _declares(params) or ("E S2" in self.server.breaks and name != "confirm")

    def call_without_task(self, support: str | None, text: str) -> JSON | Refusal:
        if support == "required" and "E S3" not in self.server.breaks:
            settings = dict(self.server.tasks_settings)
            data: JSON = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: settings}}}
            # E A-23 broken: the extension draft's code (the client reads it as -32021)
            code = DRAFT_MISSING_CAPABILITY if "E A-23" in self.server.breaks else -32021
            return (code, "this tool runs only as a task", data)
        return result_json(text)

    def task_of_taskless_tool(self, text: str) -> JSON | Refusal | None:
        return result_json(text)  # the server decides per call (E C20): inline

    def created(self, task: FaultTask) -> JSON:
        return {**self.server._task(task, detailed=False), "resultType": "task"}

    def questions(self, task: FaultTask, first: JSON) -> list[tuple[str, JSON]]:
        if task.tool == "confirm":
            return [("confirm", first)]
        second = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "and again?", "requestedSchema": FORM},
        }
        return [("q1", first), ("q1" if "E S14" in self.server.breaks else "q2", second)]

    def task_fields(self, task: FaultTask, out: JSON, *, detailed: bool) -> None:
        out["ttlMs"] = 60_000
        out["pollIntervalMs"] = 10
        if not detailed:
            return
        is_error = task.tool == "fail"
        result = {**result_json(text_of(task), is_error=is_error), "resultType": "complete"}
        if task.status == "completed":
            out["result"] = result
        elif task.status == "failed":
            out["error"] = {"code": -32603, "message": "failed on purpose"}
            if is_error:  # E S7 broken: the tool's own isError result, failed
                out["result"] = result
        elif task.status == "input_required" and task.questions:
            key, question = task.questions[0]
            out["inputRequests"] = {key: question}

    def ends_failed(self, task: FaultTask) -> bool:
        return task.tool == "fail" and "E S7" in self.server.breaks

    # -- input: inputRequests ---------------------------------------------------------------

    def waiting(self, task: FaultTask) -> None:
        """With E S14 broken, a reused key shown once is dropped next."""
        if task.shown_reused:
            task.shown_reused = False
            task.questions.pop(0)
            if not task.questions:
                task.status = "working"
                task.updated_at = self.server._now()
                return
        if len(task.questions) == 1 and "E S14" in self.server.breaks and task.answers:
            task.shown_reused = True
        if task.status != "input_required":
            task.status = "input_required"
            task.updated_at = self.server._now()

    # -- tasks/result, cancel, list ---------------------------------------------------------

    async def tasks_result(self, params: JSON, channel: Channel) -> JSON | Refusal:
        if "E S16" in self.server.breaks:
            return {"content": []}
        return (-32601, "tasks/result is not a 2026-07-28 method", None)

    def tasks_cancel(self, task: FaultTask) -> JSON | Refusal:
        if task.status not in TERMINAL:
            task.status = "cancelled"
            task.updated_at = self.server._now()
            task.ended.set()
        return {}

    def tasks_list(self, params: JSON) -> JSON | Refusal:
        if "E S17" not in self.server.breaks:
            return (-32601, "tasks/list is not a 2026-07-28 method", None)
        return self.server._listing()

    # -- subscriptions/listen ---------------------------------------------------------------

    async def listen(self, params: JSON, channel: Channel, listen_id: Any) -> JSON | Refusal:
        server = self.server
        if not server.serves_listen:
            return (-32601, "subscriptions/listen is not served", None)
        if not _declares(params):  # E C39
            data: JSON = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
            return (-32021, "a listen for tasks needs the tasks extension", data)
        filters = params.get("notifications")
        asked = filters.get("taskIds") if isinstance(filters, dict) else None
        if not isinstance(asked, list) or not all(isinstance(t, str) for t in asked):
            return (-32602, "notifications.taskIds is a list of task ids", None)
        agreed = [t for t in dict.fromkeys(asked) if t in server.tasks]
        meta = {_SUBSCRIPTION_ID: listen_id}
        pushed: dict[str, tuple[str, str, int]] = {}

        async def push_changed() -> None:
            for task_id in agreed:
                task = server.tasks[task_id]
                state = (task.status, task.updated_at, len(task.questions))
                if pushed.get(task_id) != state:
                    pushed[task_id] = state
                    note = server._task(task)
                    if "E C41" not in server.breaks:
                        note["_meta"] = dict(meta)
                    await channel.push(
                        {"jsonrpc": "2.0", "method": "notifications/tasks", "params": note}
                    )

        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": dict(meta), "notifications": {"taskIds": agreed}},
        }
        if "E C40" in server.breaks:
            await push_changed()
        await channel.push(ack)
        if server.listen_delay:
            await anyio.sleep(server.listen_delay)
        while True:
            await push_changed()
            if all(server.tasks[t].status in TERMINAL for t in agreed):
                return {"_meta": dict(meta)}  # the graceful close (E C44)
            with anyio.move_on_after(1.0):  # a change, or a look again (nothing missed)
                await server.changed()


def _declares(params: JSON) -> bool:
    """The call declares the tasks extension in its ``_meta`` (E C3)."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    caps = (meta or {}).get(_CLIENT_CAPABILITIES)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
