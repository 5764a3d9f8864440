"""A strict, sans-I/O validator of the server's side of task traffic.

Feed it every message in the order the client saw it: :meth:`Validator.sent` for what the
client sends (it pairs answers with their requests), :meth:`Validator.received` for what
arrives; or :meth:`Validator.exchange` for a (request, response) pair and
:meth:`Validator.notification` / :meth:`Validator.server_request` for the rest. Each call
returns the :class:`Finding` s the message produced: the rule it broke (from
:data:`~mcp_tasks_client.conformance.RULES`), the verdict, a detail and the offending message.

Over HTTP it can also be fed the HTTP facts of each exchange (:meth:`Validator.http`, an
:class:`~mcp_tasks_client.conformance.HttpExchange` the transport gives ValidatingTransport):
status, content type and ``Mcp-Session-Id`` for the rules below JSON-RPC (V-27a-d, E C7,
E S24); feed an exchange before the messages its body carries.

Messages are raw JSON-RPC objects (``{"jsonrpc": "2.0", "id": ..., "result": ...}``), so a
malformed answer is a finding, never a decode error. The validator keeps what the rules across
messages need: the server's capabilities, the tools' ``taskSupport``, each task's last
snapshot, the open ``tasks/result`` calls, progress tokens, input request keys, listens.

Sequence rules compare a snapshot only with snapshots that answered requests sent *before*
its own (a poll answered out of order, or one a status change overtook, is not a regression),
and a status notification is never taken as proof of a regression (it can overtake or trail a
poll on another stream); both only ever check their own shape and ``createdAt``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._generation import Generation
from .._transports.base import HttpExchange
from .._wire._converter import parse_timestamp
from ..models import RELATED_TASK_META, TASKS_EXTENSION
from .rules import Rule, Verdict, rule

__all__ = ["Finding", "Validator"]

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"

_STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_TASK_SUPPORT = frozenset({"forbidden", "optional", "required"})
_RESULT_TYPES = frozenset({"complete", "input_required", "task"})
_JSON_TYPE = "application/json"
_SSE_TYPE = "text/event-stream"
_ERROR_STATUS = {-32601: 404, -32020: 400, -32021: 400, -32022: 400}  # E C51-C54, E S24

JSON = dict[str, Any]


@attrs.frozen
class Finding:
    """One rule a server message broke."""

    rule: Rule
    verdict: Verdict
    detail: str
    evidence: Mapping[str, Any]
    """The offending message, as it arrived."""
    task_id: str | None = None

    @property
    def rule_id(self) -> str:
        return self.rule.id

    @property
    def level(self) -> str:
        return self.rule.level.value

    def __str__(self) -> str:
        where = f" (task {self.task_id})" if self.task_id else ""
        return f"{self.rule.id} [{self.verdict.value}]{where}: {self.rule.failure}: {self.detail}"


@attrs.define
class _Pending:
    message: JSON
    seq: int
    terminal_at_send: bool = False


@attrs.define
class _Snapshot:
    seq: int
    """The sequence number of the request it answered (or of the notification itself)."""
    status: str | None
    created_at: str | None
    last_updated_at: Any


@attrs.frozen
class _Question:
    """A server->client request tagged with related-task ``task_id``, not answered yet."""

    task_id: str
    method: str
    seq: int
    """When it arrived."""


@attrs.define
class _TaskState:
    created_at: str | None = None
    latest: _Snapshot | None = None
    terminal_seq: int | None = None
    """When the first terminal snapshot was received."""
    result_answered_seq: int | None = None
    """A tasks/result answered while the last snapshot was not terminal: its receive seq."""
    input_keys: dict[str, Any] = attrs.Factory(dict)

    @property
    def terminal(self) -> bool:
        return self.latest is not None and self.latest.status in _TERMINAL


def _obj(value: Any) -> JSON | None:
    return value if isinstance(value, dict) else None


def _meta(value: Any) -> JSON:
    obj = _obj(value)
    meta = _obj(obj.get("_meta")) if obj is not None else None
    return meta or {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _timestamp_problem(task: JSON, key: str) -> str | None:
    if key not in task:
        return f"{key} missing"
    value = task[key]
    if not isinstance(value, str):
        return f"{key} is not a string"
    try:
        parse_timestamp(value)
    except (ValueError, OverflowError):
        return f"{key} {value!r} is not an RFC 3339 timestamp"
    return None


class Validator:
    """The strict checks of one connection's server, for one generation.

    ``client_capabilities`` are what the client declared (2025-11-25: read from the
    ``initialize`` request when it is sent; give them when the validator does not see it).
    """

    def __init__(
        self, generation: Generation, *, client_capabilities: Mapping[str, Any] | None = None
    ) -> None:
        self.generation = generation
        self.findings: list[Finding] = []
        """Every finding so far, in order."""
        self._seq = 0
        self._pending: dict[Any, _Pending] = {}
        self._client_caps: Mapping[str, Any] | None = client_capabilities
        self._server_caps: JSON | None = None
        self._tools: dict[str, Any] = {}
        self._tasks: dict[str, _TaskState] = {}
        self._progress: dict[Any, float | None] = {}
        self._progress_tasks: dict[Any, str] = {}
        self._progress_closed: set[Any] = set()
        self._call_tokens: dict[Any, Any] = {}
        self._listens: dict[Any, bool] = {}
        self._http: dict[Any, HttpExchange] = {}
        self._questions: dict[Any, _Question] = {}
        """2025-11-25 in-task requests the client has not answered, by their id (V-22)."""

    # -- feeding ----------------------------------------------------------------------------

    def sent(self, message: Mapping[str, Any]) -> list[Finding]:
        """A message the client sent (requests are remembered to pair their answers)."""
        self._seq += 1
        msg = dict(message)
        if "method" in msg and "id" in msg:
            method = msg["method"]
            params = _obj(msg.get("params")) or {}
            task_id = params.get("taskId")
            state = self._tasks.get(task_id) if isinstance(task_id, str) else None
            self._pending[msg["id"]] = _Pending(
                msg, self._seq, terminal_at_send=state is not None and state.terminal
            )
            token = _meta(params).get("progressToken")
            if token is not None:
                self._progress.setdefault(token, None)
                if method == "tools/call":
                    self._call_tokens[msg["id"]] = token
            if method == "initialize" and self._client_caps is None:
                self._client_caps = _obj(params.get("capabilities")) or {}
            if method == "subscriptions/listen":
                self._listens[msg["id"]] = False
        elif "method" not in msg and "id" in msg:
            self._questions.pop(msg["id"], None)  # the client answered a server request
        return []

    def received(self, message: Mapping[str, Any]) -> list[Finding]:
        """A message from the server: an answer, a request or a notification."""
        self._seq += 1
        msg = dict(message)
        found: list[Finding] = []
        if "method" in msg:
            if "id" in msg:
                self._server_request(msg, found)
            else:
                self._notification(msg, found)
        elif "id" in msg:
            pending = self._pending.pop(msg["id"], None)
            exchange = self._http.pop(msg["id"], None) if self._http else None
            if pending is not None:
                self._answer(pending, msg, found)
                if exchange is not None:
                    self._error_status(exchange, msg, found)
        self.findings.extend(found)
        return found

    def http(self, exchange: HttpExchange | Mapping[str, Any]) -> list[Finding]:
        """The HTTP facts of one exchange (an :class:`HttpExchange`, or its ``to_json()``):
        fed when the response's headers are in, before the messages of its body."""
        if not isinstance(exchange, HttpExchange):
            exchange = HttpExchange(**exchange)
        found: list[Finding] = []
        evidence: JSON = exchange.to_json()
        status = exchange.status
        accepted = 200 <= status < 300
        kind = exchange.kind
        session_id = exchange.session_id
        if self._gen2:
            if session_id is not None:
                self._add(found, "E C7", f"Mcp-Session-Id on the answer to {kind}", evidence)
            if kind == "request" and exchange.request_id is not None:
                self._http[exchange.request_id] = exchange
        else:
            if session_id is not None and (
                not session_id or any(not 0x21 <= ord(ch) <= 0x7E for ch in session_id)
            ):
                self._add(found, "V-27c", f"Mcp-Session-Id {session_id!r}", evidence)
            what = exchange.method or kind
            if kind in ("notification", "response") and accepted:
                if status != 202:
                    self._add(found, "V-27a", f"{what} answered {status}", evidence)
                elif exchange.body:
                    self._add(found, "V-27a", f"{what} answered 202 with a body", evidence)
            elif kind == "request" and accepted:
                if status == 202:
                    self._add(found, "V-27b", f"{what} answered 202", evidence)
                elif exchange.content_type not in (_JSON_TYPE, _SSE_TYPE):
                    self._add(
                        found,
                        "V-27b",
                        f"{what} answered {status} {exchange.content_type or 'no content type'}",
                        evidence,
                    )
            elif kind == "get" and accepted and exchange.content_type != _SSE_TYPE:
                self._add(
                    found,
                    "V-27d",
                    f"GET answered {status} {exchange.content_type or 'no content type'}",
                    evidence,
                )
        self.findings.extend(found)
        return found

    def _error_status(self, exchange: HttpExchange, msg: JSON, found: list[Finding]) -> None:
        """E S24: a JSON error's HTTP status (an SSE stream's 200 says nothing of it)."""
        error = _obj(msg.get("error"))
        if not self._gen2 or error is None or exchange.content_type != _JSON_TYPE:
            return
        expected = _ERROR_STATUS.get(error.get("code"))  # type: ignore[arg-type]
        if expected is not None and exchange.status != expected:
            self._add(
                found,
                "E S24",
                f"error {error.get('code')} to {exchange.method} came with HTTP "
                f"{exchange.status}, not {expected}",
                {**msg, "http": exchange.to_json()},
            )

    def exchange(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> list[Finding]:
        """A request and its answer, one after the other."""
        return [*self.sent(request), *self.received(response)]

    def notification(self, notification: Mapping[str, Any]) -> list[Finding]:
        return self.received(notification)

    def server_request(self, request: Mapping[str, Any]) -> list[Finding]:
        return self.received(request)

    def feed(self, traffic: Iterable[tuple[str, Mapping[str, Any]]]) -> list[Finding]:
        """``(direction, message)`` pairs, direction ``"sent"``, ``"received"`` or ``"http"``
        (an :class:`HttpExchange`'s ``to_json()``)."""
        found: list[Finding] = []
        for direction, message in traffic:
            if direction == "sent":
                found.extend(self.sent(message))
            elif direction == "received":
                found.extend(self.received(message))
            elif direction == "http":
                found.extend(self.http(message))
            else:
                raise ValueError(
                    f"direction must be 'sent', 'received' or 'http', not {direction!r}"
                )
        return found

    # -- helpers -----------------------------------------------------------------------------

    def _add(
        self,
        found: list[Finding],
        rule_id: str,
        detail: str,
        evidence: JSON,
        task_id: Any = None,
        verdict: Verdict | None = None,
    ) -> None:
        r = rule(rule_id)
        found.append(
            Finding(
                r,
                verdict or r.default_verdict,
                detail,
                evidence,
                task_id if isinstance(task_id, str) else None,
            )
        )

    @property
    def _gen2(self) -> bool:
        return self.generation is Generation.V2026_07_28

    # -- answers -----------------------------------------------------------------------------

    def _answer(self, pending: _Pending, msg: JSON, found: list[Finding]) -> None:
        request = pending.message
        method = request.get("method")
        params = _obj(request.get("params")) or {}
        result = _obj(msg.get("result"))
        if self._gen2:
            self._answer2(pending, method, params, result, msg, found)
        else:
            self._answer1(pending, method, params, result, msg, found)

    def _answer1(
        self,
        pending: _Pending,
        method: Any,
        params: JSON,
        result: JSON | None,
        msg: JSON,
        found: list[Finding],
    ) -> None:
        task_id = params.get("taskId")
        if method == "initialize" and result is not None:
            self._initialize(result, msg, found)
        elif method == "tools/list" and result is not None:
            for tool in result.get("tools") or ():
                self._tool(tool, msg, found)
        elif method == "tools/call":
            self._tools_call1(pending, params, result, msg, found)
        elif method == "tasks/get" and result is not None:
            if not self._task_shape1(result, msg, found, ttl_required=True, rule_id="V-07"):
                self._related_task_meta(result, msg, found)
                self._input_required_while_asked(result, pending.seq, msg, found)
                self._snapshot(result, pending.seq, msg, found)
        elif method == "tasks/cancel" and result is not None:
            if pending.terminal_at_send:
                self._add(found, "V-14", "tasks/cancel answered a result", msg, task_id)
                return
            if self._task_shape1(result, msg, found, ttl_required=False, rule_id="V-07"):
                return
            if result.get("status") != "cancelled":
                self._add(
                    found, "V-15", f"status is {result.get('status')!r}", msg, result["taskId"]
                )
                self._related_task_meta(result, msg, found)
                return
            self._related_task_meta(result, msg, found)
            self._snapshot(result, pending.seq, msg, found)
        elif method == "tasks/list" and result is not None:
            if RELATED_TASK_META in _meta(result):
                self._add(found, "V-20", "on the tasks/list result", msg)
            for entry in result.get("tasks") or ():
                entry_obj = _obj(entry)
                if entry_obj is None:
                    self._add(found, "V-07", "a tasks/list entry is not an object", msg)
                elif not self._task_shape1(
                    entry_obj, msg, found, ttl_required=False, rule_id="V-07"
                ):
                    self._snapshot(entry_obj, pending.seq, msg, found)
        elif method == "tasks/result" and isinstance(task_id, str):
            self._tasks_result(task_id, result, msg, found)

    def _initialize(self, result: JSON, msg: JSON, found: list[Finding]) -> None:
        missing = [k for k in ("protocolVersion", "capabilities", "serverInfo") if k not in result]
        info = _obj(result.get("serverInfo"))
        if info is not None:
            missing += [
                f"serverInfo.{k}" for k in ("name", "version") if not isinstance(info.get(k), str)
            ]
        if missing:
            self._add(found, "V-01", ", ".join(missing) + " missing", msg)
        caps = _obj(result.get("capabilities")) or {}
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
                requests_obj = _obj(requests)
                tools = requests_obj.get("tools") if requests_obj is not None else None
                if requests_obj is None or (
                    tools is not None
                    and (
                        _obj(tools) is None
                        or ("call" in tools and not _capability_ok(tools["call"]))
                    )
                ):
                    bad.append("tasks.requests")
        if bad:
            self._add(found, "V-03", ", ".join(bad) + " is not an object", msg)

    def _declares_task_calls(self) -> bool | None:
        if self._server_caps is None:
            return None
        tasks = _obj(self._server_caps.get("tasks")) or {}
        requests = _obj(tasks.get("requests")) or {}
        tools = _obj(requests.get("tools")) or {}
        return _capability_value(tools.get("call"))

    def _tool(self, tool: Any, msg: JSON, found: list[Finding]) -> None:
        tool_obj = _obj(tool)
        if tool_obj is None or not isinstance(tool_obj.get("name"), str):
            return
        execution = _obj(tool_obj.get("execution"))
        support = execution.get("taskSupport") if execution is not None else None
        if support is not None and support not in _TASK_SUPPORT:
            self._add(found, "V-03", f"tool {tool_obj['name']!r} has taskSupport {support!r}", msg)
            return
        self._tools[tool_obj["name"]] = support or "forbidden"

    def _tools_call1(
        self, pending: _Pending, params: JSON, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        token = self._call_tokens.pop(pending.message.get("id"), None)
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
                self._add(
                    found,
                    "V-16",
                    f"tool {params.get('name')!r} answered a call without task with a result",
                    msg,
                )
            return
        declared = self._declares_task_calls()
        if "task" not in result:
            if declared:
                self._add(found, "V-04", "the answer has no task", msg)
            return
        if declared is False:
            self._add(found, "V-18", "the answer is a CreateTaskResult", msg)
            return
        task = _obj(result["task"])
        if task is None:
            self._add(found, "V-04", "task is not an object", msg)
            return
        if self._task_shape1(task, msg, found, ttl_required=False, rule_id="V-07"):
            return
        if task["status"] != "working":
            self._add(found, "V-05", f"created {task['status']!r}", msg, task["taskId"])
        self._snapshot(task, pending.seq, msg, found)
        if token is not None:
            self._progress_tasks[token] = task["taskId"]

    def _task_shape1(
        self, task: JSON, msg: JSON, found: list[Finding], *, ttl_required: bool, rule_id: str
    ) -> bool:
        """Report a malformed 2025-11-25 Task; True when it is too broken to follow."""
        task_id = task.get("taskId")
        if not isinstance(task_id, str):
            self._add(
                found, "V-06" if rule_id == "V-07" else rule_id, "taskId is not a string", msg
            )
            return True
        problems = [p for p in (_timestamp_problem(task, k) for k in _TIMESTAMPS) if p]
        if task.get("status") not in _STATUSES:
            problems.insert(0, f"status {task.get('status')!r} is not a task status")
        if problems:
            self._add(found, rule_id, "; ".join(problems), msg, task_id)
            return True
        ttl_rule = "V-08" if rule_id == "V-07" else rule_id
        if "ttl" in task:
            if task["ttl"] is not None and not _is_number(task["ttl"]):
                self._add(found, ttl_rule, f"ttl is {task['ttl']!r}", msg, task_id)
                return True
        elif ttl_required:
            self._add(found, ttl_rule, "ttl missing", msg, task_id)
            return True
        if task["status"] == "failed" and not isinstance(task.get("statusMessage"), str):
            self._add(found, "V-13", "failed without statusMessage", msg, task_id)
        return False

    def _related_task_meta(self, result: JSON, msg: JSON, found: list[Finding]) -> None:
        if RELATED_TASK_META in _meta(result):
            self._add(found, "V-20", "related-task _meta on a task result", msg, result["taskId"])

    def _tasks_result(
        self, task_id: str, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        state = self._tasks.setdefault(task_id, _TaskState())
        if not state.terminal:
            state.result_answered_seq = self._seq
        if result is None:
            return
        related = _obj(_meta(result).get(RELATED_TASK_META))
        if related is None or related.get("taskId") != task_id:
            self._add(found, "V-10", f"_meta related-task is {related!r}", msg, task_id)
        if not isinstance(result.get("content"), list):
            self._add(found, "V-12", "content is missing or not a list", msg, task_id)
        elif (
            result.get("isError") is True
            and state.latest is not None
            and state.latest.status == "completed"
        ):
            self._add(found, "V-13", "an isError result of a completed task", msg, task_id)

    # -- sequences (both generations) ------------------------------------------------------

    def _snapshot(self, task: JSON, seq: int, msg: JSON, found: list[Finding]) -> None:
        """Sequence rules for one well-formed snapshot answering a request sent at ``seq``
        (a notification: ``seq`` is -1 and only ``createdAt`` is compared)."""
        task_id: str = task["taskId"]
        status: str = task["status"]
        state = self._tasks.setdefault(task_id, _TaskState())
        terminal_rule = "E S22" if self._gen2 else "V-09"
        if state.created_at is None:
            state.created_at = task["createdAt"]
        elif task["createdAt"] != state.created_at:
            self._add(
                found,
                "V-26",
                f"createdAt {state.created_at!r} became {task['createdAt']!r}",
                msg,
                task_id,
            )
        if seq < 0:
            return  # a notification: no ordering proof
        latest = state.latest
        if latest is not None and seq < latest.seq:
            return  # answered out of order: older than what we know
        if (
            latest is not None
            and state.terminal_seq is not None
            and seq < state.terminal_seq
            and status not in _TERMINAL
        ):
            return  # sent before the terminal snapshot arrived: stale
        if latest is not None and latest.status in _TERMINAL and status != latest.status:
            self._add(found, terminal_rule, f"{latest.status!r} became {status!r}", msg, task_id)
            return
        if latest is not None and _later(latest.last_updated_at, task["lastUpdatedAt"]) is False:
            self._add(
                found,
                "V-26",
                f"lastUpdatedAt went back from {latest.last_updated_at!r} to "
                f"{task['lastUpdatedAt']!r}",
                msg,
                task_id,
            )
        if (
            not self._gen2
            and state.result_answered_seq is not None
            and seq > state.result_answered_seq
        ):
            if status not in _TERMINAL:
                self._add(
                    found,
                    "V-11",
                    f"tasks/result had answered; the task is still {status!r}",
                    msg,
                    task_id,
                )
            state.result_answered_seq = None
        state.latest = _Snapshot(seq, status, task["createdAt"], task["lastUpdatedAt"])
        if status in _TERMINAL and state.terminal_seq is None:
            state.terminal_seq = self._seq

    # -- server requests and notifications -------------------------------------------------

    def _server_request(self, msg: JSON, found: list[Finding]) -> None:
        method = msg.get("method")
        params = _obj(msg.get("params")) or {}
        if self._gen2 or method not in ("elicitation/create", "sampling/createMessage"):
            return
        related = _obj(_meta(params).get(RELATED_TASK_META))
        self._question_asked(msg, method, params, related)
        open_results = [
            (_obj(p.message.get("params")) or {}).get("taskId")
            for p in self._pending.values()
            if p.message.get("method") == "tasks/result"
        ]
        if open_results and (related is None or not isinstance(related.get("taskId"), str)):
            self._add(
                found,
                "V-21",
                f"{method} without related-task while tasks/result is open",
                msg,
                open_results[0],
            )
        caps = self._client_caps or {}
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            declared = _obj(caps.get("elicitation"))
            modes = set() if declared is None else ({"form"} if not declared else set(declared))
            if mode not in modes:
                self._add(found, "V-25", f"elicitation mode {mode!r} not declared", msg)
        elif "tools" in params or "toolChoice" in params:
            sampling = _obj(caps.get("sampling")) or {}
            if "tools" not in sampling:
                self._add(found, "V-25", "sampling tools without sampling.tools", msg)

    # -- V-22: input_required while a question is open (2025-11-25) -----------------------

    def _question_asked(self, msg: JSON, method: str, params: JSON, related: JSON | None) -> None:
        """An in-task question arrived: its task waits for the client's answer."""
        task_id = related.get("taskId") if related is not None else None
        if isinstance(task_id, str) and "task" not in params:  # a task-augmented one: no wait
            self._questions[msg.get("id")] = _Question(task_id, method, self._seq)

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
                self._add(found, "V-22", detail, msg, question.task_id)
                return

    def _notification(self, msg: JSON, found: list[Finding]) -> None:
        method = msg.get("method")
        params = _obj(msg.get("params")) or {}
        if method == "notifications/cancelled" and not self._gen2:
            self._questions.pop(params.get("requestId"), None)  # the server withdrew it
        if method == "notifications/progress":
            self._progress_notification(params, msg, found)
        elif self._gen2:
            if method == "notifications/subscriptions/acknowledged":
                sub = _meta(params).get(SUBSCRIPTION_ID_META)
                if sub in self._listens:
                    self._listens[sub] = True
            elif method == "notifications/tasks":
                self._tasks_notification(params, msg, found)
        elif method == "notifications/tasks/status":
            if self._task_shape1(params, msg, found, ttl_required=True, rule_id="V-23"):
                return
            if RELATED_TASK_META in _meta(params):
                self._add(found, "V-20", "on a status notification", msg, params["taskId"])
            self._snapshot(params, -1, msg, found)

    def _progress_notification(self, params: JSON, msg: JSON, found: list[Finding]) -> None:
        token = params.get("progressToken")
        if self._gen2:
            if token in self._progress_closed:
                self._add(found, "E C43", f"progress for token {token!r}", msg)
            return
        if token not in self._progress:
            self._add(found, "V-24", f"progress token {token!r} was never sent", msg)
            return
        progress: Any = params.get("progress")
        last = self._progress[token]
        if not _is_number(progress):
            self._add(found, "V-24", f"progress is {progress!r}", msg)
            return
        if last is not None and progress <= last:
            self._add(found, "V-24", f"progress {progress!r} after {last!r}", msg)
            return
        self._progress[token] = float(progress)

    # -- 2026-07-28 --------------------------------------------------------------------------

    def _answer2(
        self,
        pending: _Pending,
        method: Any,
        params: JSON,
        result: JSON | None,
        msg: JSON,
        found: list[Finding],
    ) -> None:
        token = self._call_tokens.pop(pending.message.get("id"), None)
        if result is None:
            return
        result_type = result.get("resultType")
        if "resultType" not in result:
            self._add(found, "E C15", f"on the {method} result", msg)
        elif result_type not in _RESULT_TYPES:
            self._add(found, "E C17", f"resultType {result_type!r}", msg)
            return
        elif result_type == "task" and method != "tools/call":
            verdict = Verdict.WARN if method == "tasks/get" else None
            self._add(found, "E C19", f"resultType task on {method}", msg, None, verdict)
            if method != "tasks/get":
                return
        if method == "server/discover":
            caps = _obj(result.get("capabilities")) or {}
            extensions = _obj(caps.get("extensions")) or {}
            if TASKS_EXTENSION in extensions and "tasks" in caps:
                self._add(found, "E S1", "capabilities.tasks next to the extension", msg)
        elif method == "tools/call" and result_type == "task":
            if self._task_shape2(result, msg, found, "E S4", create=True):
                return
            self._snapshot(result, pending.seq, msg, found)
            if token is not None:
                self._progress_closed.add(token)
        elif method == "tasks/get":
            if self._task_shape2(result, msg, found, "E S6", create=False):
                return
            self._detailed(result, msg, found)
            self._snapshot(result, pending.seq, msg, found)
        elif method in ("tasks/update", "tasks/cancel"):
            extra = sorted(set(result) - {"resultType", "_meta"})
            if extra:
                rule_id = "E S13" if method == "tasks/update" else "E S15"
                self._add(found, rule_id, f"the ack carries {extra}", msg, params.get("taskId"))

    def _task_shape2(
        self, task: JSON, msg: JSON, found: list[Finding], rule_id: str, *, create: bool
    ) -> bool:
        task_id = task.get("taskId")
        problems: list[str] = []
        if not isinstance(task_id, str):
            problems.append("taskId is not a string")
        if task.get("status") not in _STATUSES:
            problems.append(f"status {task.get('status')!r} is not a task status")
        problems += [p for p in (_timestamp_problem(task, k) for k in _TIMESTAMPS) if p]
        if "ttlMs" not in task:
            problems.append("ttlMs missing")
        elif task["ttlMs"] is not None and not _is_int(task["ttlMs"]):
            problems.append(f"ttlMs is {task['ttlMs']!r}")
        if "pollIntervalMs" in task and not (
            _is_int(task["pollIntervalMs"]) and task["pollIntervalMs"] > 0
        ):
            problems.append(f"pollIntervalMs is {task['pollIntervalMs']!r}")
        legacy = sorted({"ttl", "pollInterval", "task"} & set(task))
        if legacy:
            problems.append(f"2025-11-25 keys {legacy}")
        if create and "requestState" in task:
            problems.append("requestState on a CreateTaskResult")
        if problems:
            self._add(found, rule_id, "; ".join(problems), msg, task_id)
            return True
        return False

    def _detailed(
        self, task: JSON, msg: JSON, found: list[Finding], *, notified: bool = False
    ) -> None:
        task_id = task["taskId"]
        status = task["status"]
        shape_rule = "E S25" if notified else "E S6"
        if status == "input_required":
            requests = _obj(task.get("inputRequests"))
            if requests is None:
                self._add(found, shape_rule, "input_required without inputRequests", msg, task_id)
            else:
                state = self._tasks.setdefault(task_id, _TaskState())
                for key, request in requests.items():
                    known = state.input_keys.setdefault(key, request)
                    if known != request:
                        self._add(
                            found, "E S14", f"key {key!r} names another request", msg, task_id
                        )
        elif status == "completed":
            inlined = _obj(task.get("result"))
            if inlined is None:
                self._add(found, shape_rule, "completed without result", msg, task_id)
            elif RELATED_TASK_META in _meta(inlined):
                self._add(found, "E S23", "related-task in result._meta", msg, task_id)
        elif status == "failed":
            error = _obj(task.get("error"))
            if (
                error is None
                or not _is_int(error.get("code"))
                or not isinstance(error.get("message"), str)
            ):
                self._add(found, "E S8", f"error is {task.get('error')!r}", msg, task_id)
            elif "result" in task:
                inlined = _obj(task["result"])
                if inlined is not None and inlined.get("isError") is True:
                    detail = "a failed task carries its tool's isError result"
                    self._add(found, "E S7", detail, msg, task_id)
                else:
                    self._add(found, "E S8", "a failed task with a result", msg, task_id)

    def _tasks_notification(self, params: JSON, msg: JSON, found: list[Finding]) -> None:
        sub = _meta(params).get(SUBSCRIPTION_ID_META)
        if sub is None:
            self._add(found, "E C41", "no subscriptionId", msg, params.get("taskId"))
        elif self._listens.get(sub) is False:
            self._add(found, "E C40", f"before the ack of listen {sub!r}", msg)
        if self._task_shape2(params, msg, found, "E S25", create=False):
            return
        self._detailed(params, msg, found, notified=True)
        self._snapshot(params, -1, msg, found)


_TIMESTAMPS = ("createdAt", "lastUpdatedAt")


def _capability_value(value: Any) -> bool:
    """A capability is declared by an object (A-09: ``true`` read as one)."""
    return isinstance(value, dict) or value is True


def _capability_ok(value: Any) -> bool:
    """A well-formed capability value: an object, or (A-09) ``true``, ``false`` or null."""
    return isinstance(value, dict) or value is True or value is False or value is None


def _later(before: Any, after: Any) -> bool | None:
    """Whether ``after`` is not earlier than ``before``; None when either does not parse."""
    try:
        return parse_timestamp(after) >= parse_timestamp(before)
    except (ValueError, OverflowError, TypeError):
        return None
