"""The validator's checks of a 2025-11-25 server (the ``V-`` rules).

What this generation's server must do that the other's need not: answer ``initialize`` with
its capabilities (V-01, V-03), nest a created task under ``task`` only when the call asked for
one and the server declared it (V-04, V-05, V-16, V-18), give every Task its ``ttl`` (V-07,
V-08), answer ``tasks/result`` with the tool's result tagged with related-task ``_meta`` and
only once the task ended (V-10 to V-13), cancel with the cancelled Task (V-14, V-15), tag the
requests it sends inside a task (V-21), show ``input_required`` while it waits for the client
(V-22), push ``notifications/tasks/status`` (V-23), count progress up on the tokens it was
given (V-24), send only the input requests the client declared (V-25), and over Streamable
HTTP answer with the statuses and content types of V-27a-d.

May import what ``_checks.py`` may, and ``_checks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._generation import Generation
from .._io.base import HttpExchange
from ..models import RELATED_TASK_META
from ._checks import (
    JSON,
    JSON_TYPE,
    STATUSES,
    TERMINAL,
    TIMESTAMPS,
    Checks,
    Finding,
    Pending,
    TaskState,
    is_number,
    meta,
    obj,
    timestamp_problem,
)

__all__ = ["Checks2025"]

_TASK_SUPPORT = frozenset({"forbidden", "optional", "required"})
_SSE_TYPE = "text/event-stream"


@attrs.frozen
class _Question:
    """A server->client request tagged with related-task ``task_id``, not answered yet."""

    task_id: str
    method: str
    seq: int
    """When it arrived."""


def _capability_value(value: Any) -> bool:
    """A capability is declared by an object (A-09: ``true`` read as one)."""
    return isinstance(value, dict) or value is True


def _capability_ok(value: Any) -> bool:
    """A well-formed capability value: an object, or (A-09) ``true``, ``false`` or null."""
    return isinstance(value, dict) or value is True or value is False or value is None


class Checks2025(Checks):
    """The checks of a 2025-11-25 server.

    ``client_capabilities`` are what the client declared: read from the ``initialize``
    request when it is sent; given when the validator does not see it."""

    generation = Generation.V2025_11_25
    terminal_rule = "V-09"

    def __init__(self, client_capabilities: Mapping[str, Any] | None) -> None:
        super().__init__(client_capabilities)
        self._client_caps = client_capabilities
        self._server_caps: JSON | None = None
        self._tools: dict[str, Any] = {}
        self._questions: dict[Any, _Question] = {}
        """In-task requests the client has not answered, by their id (V-22)."""

    # -- what the client sent -----------------------------------------------------------------

    def request_sent(self, request_id: Any, method: Any, params: JSON) -> None:
        if method == "initialize" and self._client_caps is None:
            self._client_caps = obj(params.get("capabilities")) or {}

    def client_answered(self, request_id: Any) -> None:
        self._questions.pop(request_id, None)

    # -- HTTP (V-27a-d) -------------------------------------------------------------------------

    def http(self, exchange: HttpExchange) -> list[Finding]:
        found: list[Finding] = []
        evidence: JSON = exchange.to_json()
        status = exchange.status
        accepted = 200 <= status < 300
        kind = exchange.kind
        session_id = exchange.session_id
        if session_id is not None and (
            not session_id or any(not 0x21 <= ord(ch) <= 0x7E for ch in session_id)
        ):
            self.add(found, "V-27c", f"Mcp-Session-Id {session_id!r}", evidence)
        what = exchange.method or kind
        if kind in ("notification", "response") and accepted:
            if status != 202:
                self.add(found, "V-27a", f"{what} answered {status}", evidence)
            elif exchange.body:
                self.add(found, "V-27a", f"{what} answered 202 with a body", evidence)
        elif kind == "request" and accepted:
            if status == 202:
                self.add(found, "V-27b", f"{what} answered 202", evidence)
            elif exchange.content_type not in (JSON_TYPE, _SSE_TYPE):
                self.add(
                    found,
                    "V-27b",
                    f"{what} answered {status} {exchange.content_type or 'no content type'}",
                    evidence,
                )
        elif kind == "get" and accepted and exchange.content_type != _SSE_TYPE:
            self.add(
                found,
                "V-27d",
                f"GET answered {status} {exchange.content_type or 'no content type'}",
                evidence,
            )
        return found

    # -- answers ------------------------------------------------------------------------------

    def answered(
        self, pending: Pending, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        method = pending.method
        params = pending.params
        task_id = params.get("taskId")
        if method == "initialize" and result is not None:
            self._initialize(result, msg, found)
        elif method == "tools/list" and result is not None:
            for tool in result.get("tools") or ():
                self._tool(tool, msg, found)
        elif method == "tools/call":
            self._tools_call(pending, params, result, msg, found)
        elif method == "tasks/get" and result is not None:
            if not self._task_shape(result, msg, found, ttl_required=True, rule_id="V-07"):
                self._related_task_meta(result, msg, found)
                self._input_required_while_asked(result, pending.seq, msg, found)
                self.snapshot(result, pending.seq, msg, found)
        elif method == "tasks/cancel" and result is not None:
            if pending.terminal_at_send:
                self.add(found, "V-14", "tasks/cancel answered a result", msg, task_id)
                return
            if self._task_shape(result, msg, found, ttl_required=False, rule_id="V-07"):
                return
            if result.get("status") != "cancelled":
                self.add(
                    found, "V-15", f"status is {result.get('status')!r}", msg, result["taskId"]
                )
                self._related_task_meta(result, msg, found)
                return
            self._related_task_meta(result, msg, found)
            self.snapshot(result, pending.seq, msg, found)
        elif method == "tasks/list" and result is not None:
            if RELATED_TASK_META in meta(result):
                self.add(found, "V-20", "on the tasks/list result", msg)
            for entry in result.get("tasks") or ():
                entry_obj = obj(entry)
                if entry_obj is None:
                    self.add(found, "V-07", "a tasks/list entry is not an object", msg)
                elif not self._task_shape(
                    entry_obj, msg, found, ttl_required=False, rule_id="V-07"
                ):
                    self.snapshot(entry_obj, pending.seq, msg, found)
        elif method == "tasks/result" and isinstance(task_id, str):
            self._tasks_result(task_id, result, msg, found)

    def _initialize(self, result: JSON, msg: JSON, found: list[Finding]) -> None:
        missing = [k for k in ("protocolVersion", "capabilities", "serverInfo") if k not in result]
        info = obj(result.get("serverInfo"))
        if info is not None:
            missing += [
                f"serverInfo.{k}" for k in ("name", "version") if not isinstance(info.get(k), str)
            ]
        if missing:
            self.add(found, "V-01", ", ".join(missing) + " missing", msg)
        caps = obj(result.get("capabilities")) or {}
        self._server_caps = caps
        tasks = caps.get("tasks")
        if tasks is None:
            return
        bad: list[str] = []
        if not isinstance(tasks, dict):
            bad.append("tasks")
        else:
            for key in ("list", "cancel"):
                if key in tasks and not _capability_ok(tasks[key]):
                    bad.append(f"tasks.{key}")
            requests = tasks.get("requests")
            if requests is not None:
                requests_obj = obj(requests)
                tools = requests_obj.get("tools") if requests_obj is not None else None
                if requests_obj is None or (
                    tools is not None
                    and (
                        obj(tools) is None
                        or ("call" in tools and not _capability_ok(tools["call"]))
                    )
                ):
                    bad.append("tasks.requests")
        if bad:
            self.add(found, "V-03", ", ".join(bad) + " is not an object", msg)

    def _declares_task_calls(self) -> bool | None:
        if self._server_caps is None:
            return None
        tasks = obj(self._server_caps.get("tasks")) or {}
        requests = obj(tasks.get("requests")) or {}
        tools = obj(requests.get("tools")) or {}
        return _capability_value(tools.get("call"))

    def _tool(self, tool: Any, msg: JSON, found: list[Finding]) -> None:
        tool_obj = obj(tool)
        if tool_obj is None or not isinstance(tool_obj.get("name"), str):
            return
        execution = obj(tool_obj.get("execution"))
        support = execution.get("taskSupport") if execution is not None else None
        if support is not None and support not in _TASK_SUPPORT:
            self.add(found, "V-03", f"tool {tool_obj['name']!r} has taskSupport {support!r}", msg)
            return
        self._tools[tool_obj["name"]] = support or "forbidden"

    def _tools_call(
        self, pending: Pending, params: JSON, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        # a task call's progress token lives as long as its task (V-24): nothing closes it
        self.call_tokens.pop(pending.message.get("id"), None)
        if result is None:
            return
        augmented = "task" in params
        if not augmented:
            name = params.get("name")
            if (
                isinstance(name, str)
                and self._tools.get(name) == "required"
                and "task" not in result
            ):
                self.add(
                    found,
                    "V-16",
                    f"tool {params.get('name')!r} answered a call without task with a result",
                    msg,
                )
            return
        declared = self._declares_task_calls()
        if "task" not in result:
            if declared:
                self.add(found, "V-04", "the answer has no task", msg)
            return
        if declared is False:
            self.add(found, "V-18", "the answer is a CreateTaskResult", msg)
            return
        task = obj(result["task"])
        if task is None:
            self.add(found, "V-04", "task is not an object", msg)
            return
        if self._task_shape(task, msg, found, ttl_required=False, rule_id="V-07"):
            return
        if task["status"] != "working":
            self.add(found, "V-05", f"created {task['status']!r}", msg, task["taskId"])
        self.snapshot(task, pending.seq, msg, found)

    def _task_shape(
        self, task: JSON, msg: JSON, found: list[Finding], *, ttl_required: bool, rule_id: str
    ) -> bool:
        """Report a malformed Task; True when it is too broken to follow."""
        task_id = task.get("taskId")
        if not isinstance(task_id, str):
            self.add(found, "V-06" if rule_id == "V-07" else rule_id, "taskId is not a string", msg)
            return True
        problems = [p for p in (timestamp_problem(task, k) for k in TIMESTAMPS) if p]
        if task.get("status") not in STATUSES:
            problems.insert(0, f"status {task.get('status')!r} is not a task status")
        if problems:
            self.add(found, rule_id, "; ".join(problems), msg, task_id)
            return True
        ttl_rule = "V-08" if rule_id == "V-07" else rule_id
        if "ttl" in task:
            if task["ttl"] is not None and not is_number(task["ttl"]):
                self.add(found, ttl_rule, f"ttl is {task['ttl']!r}", msg, task_id)
                return True
        elif ttl_required:
            self.add(found, ttl_rule, "ttl missing", msg, task_id)
            return True
        if task["status"] == "failed" and not isinstance(task.get("statusMessage"), str):
            self.add(found, "V-13", "failed without statusMessage", msg, task_id)
        return False

    def _related_task_meta(self, result: JSON, msg: JSON, found: list[Finding]) -> None:
        if RELATED_TASK_META in meta(result):
            self.add(found, "V-20", "related-task _meta on a task result", msg, result["taskId"])

    def _tasks_result(
        self, task_id: str, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        state = self.tasks.setdefault(task_id, TaskState())
        if not state.terminal:
            state.result_answered_seq = self.seq
        if result is None:
            return
        related = obj(meta(result).get(RELATED_TASK_META))
        if related is None or related.get("taskId") != task_id:
            self.add(found, "V-10", f"_meta related-task is {related!r}", msg, task_id)
        if not isinstance(result.get("content"), list):
            self.add(found, "V-12", "content is missing or not a list", msg, task_id)
        elif (
            result.get("isError") is True
            and state.latest is not None
            and state.latest.status == "completed"
        ):
            self.add(found, "V-13", "an isError result of a completed task", msg, task_id)

    def moved(
        self, state: TaskState, task: JSON, seq: int, msg: JSON, found: list[Finding]
    ) -> None:
        """V-11: a snapshot polled after ``tasks/result`` answered shows the task ended."""
        if state.result_answered_seq is None or seq <= state.result_answered_seq:
            return
        status = task["status"]
        if status not in TERMINAL:
            self.add(
                found,
                "V-11",
                f"tasks/result had answered; the task is still {status!r}",
                msg,
                task["taskId"],
            )
        state.result_answered_seq = None

    # -- server requests and notifications -------------------------------------------------

    def server_request(self, msg: JSON, found: list[Finding]) -> None:
        method = msg.get("method")
        params = obj(msg.get("params")) or {}
        if method not in ("elicitation/create", "sampling/createMessage"):
            return
        related = obj(meta(params).get(RELATED_TASK_META))
        self._question_asked(msg, method, params, related)
        open_results = [
            p.params.get("taskId") for p in self.pending.values() if p.method == "tasks/result"
        ]
        if open_results and (related is None or not isinstance(related.get("taskId"), str)):
            self.add(
                found,
                "V-21",
                f"{method} without related-task while tasks/result is open",
                msg,
                open_results[0],
            )
        caps = self._client_caps or {}
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            declared = obj(caps.get("elicitation"))
            modes = set() if declared is None else ({"form"} if not declared else set(declared))
            if mode not in modes:
                self.add(found, "V-25", f"elicitation mode {mode!r} not declared", msg)
        elif "tools" in params or "toolChoice" in params:
            sampling = obj(caps.get("sampling")) or {}
            if "tools" not in sampling:
                self.add(found, "V-25", "sampling tools without sampling.tools", msg)

    # -- V-22: input_required while a question is open -----------------------------------------

    def _question_asked(self, msg: JSON, method: str, params: JSON, related: JSON | None) -> None:
        """An in-task question arrived: its task waits for the client's answer."""
        task_id = related.get("taskId") if related is not None else None
        if isinstance(task_id, str) and "task" not in params:  # a task-augmented one: no wait
            self._questions[msg.get("id")] = _Question(task_id, method, self.seq)

    def _input_required_while_asked(
        self, task: JSON, seq: int, msg: JSON, found: list[Finding]
    ) -> None:
        """V-22, the half a client can be sure of: a tasks/get sent after the task's question
        arrived and answered before the client answered it was answered while the server knew
        the question was open; it says ``working``. (Leaving input_required once answered is
        not checked: the answer and a later poll can cross on their way to the server.)"""
        if task["status"] != "working":
            return  # input_required keeps the rule; a terminal task asks no more
        for request_id, question in self._questions.items():
            if question.task_id == task["taskId"] and question.seq < seq:
                detail = (
                    f"a tasks/get sent after {question.method} {request_id!r} arrived, and "
                    "answered before the client answered it, says working"
                )
                self.add(found, "V-22", detail, msg, question.task_id)
                return

    def notified(self, msg: JSON, found: list[Finding]) -> None:
        method = msg.get("method")
        params = obj(msg.get("params")) or {}
        if method == "notifications/cancelled":
            self._questions.pop(params.get("requestId"), None)  # the server withdrew it
        if method == "notifications/progress":
            self._progress(params, msg, found)
        elif method == "notifications/tasks/status":
            if self._task_shape(params, msg, found, ttl_required=True, rule_id="V-23"):
                return
            if RELATED_TASK_META in meta(params):
                self.add(found, "V-20", "on a status notification", msg, params["taskId"])
            self.snapshot(params, -1, msg, found)

    def _progress(self, params: JSON, msg: JSON, found: list[Finding]) -> None:
        token = params.get("progressToken")
        if token not in self.progress:
            self.add(found, "V-24", f"progress token {token!r} was never sent", msg)
            return
        progress: Any = params.get("progress")
        last = self.progress[token]
        if not is_number(progress):
            self.add(found, "V-24", f"progress is {progress!r}", msg)
            return
        if last is not None and progress <= last:
            self.add(found, "V-24", f"progress {progress!r} after {last!r}", msg)
            return
        self.progress[token] = float(progress)
