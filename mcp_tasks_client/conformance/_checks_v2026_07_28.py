"""The validator's checks of a 2026-07-28 server with the tasks extension (the ``E`` rules).

What this generation's server must do that the other's need not: say every result's
``resultType``, from the known ones, and ``task`` only on a task call (E C15, C17, C19); keep
``capabilities.tasks`` out of ``server/discover`` next to the extension (E S1); give every task
its ``ttlMs`` and none of 2025-11-25's keys (E S4, S6, S25); inline a terminal task's outcome
and an ``input_required`` task's ``inputRequests``, each key naming one request (E S6-S8,
S14, S23); acknowledge ``tasks/update`` and ``tasks/cancel`` with nothing (E S13, S15); push
``notifications/tasks`` only on an acknowledged listen, naming it (E C40, C41); report no
progress on a call's token once the call made a task (E C43); put well-formed caching hints
on every complete cacheable result (E H1, E H2, SEP-2549); over HTTP set no session
(E C7) and answer a JSON error with its HTTP status (E S24). The server sends the client no
requests of its own here (input travels in ``inputRequests``), so none is checked. An earlier
draft's form that the client reads as the current one (the driver's ``DRAFT_*`` constants) is
a warning: -32003 for a missing capability (E A-23), ``notifications/tasks/status`` and a
``tasksStatus`` acknowledgement (E A-27); what it carries is then checked as the current form.

May import what ``_checks.py`` may, ``_checks``, and the 2026-07-28 driver's names of the
earlier drafts' forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._codec._hints import hint_problems, missing_hints
from .._drivers.v2026_07_28 import (
    DRAFT_MISSING_CAPABILITY,
    DRAFT_STATUS_NOTIFICATION,
    DRAFT_TASKS_FILTER,
)
from .._generation import Generation
from .._io.base import HttpExchange
from ..models import RELATED_TASK_META, TASKS_EXTENSION
from ._checks import (
    JSON,
    JSON_TYPE,
    STATUSES,
    TIMESTAMPS,
    Checks,
    Finding,
    Pending,
    TaskState,
    is_int,
    meta,
    obj,
    timestamp_problem,
)
from .rules import Verdict

__all__ = ["SUBSCRIPTION_ID_META", "Checks2026"]

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"

_RESULT_TYPES = frozenset({"complete", "input_required", "task"})
_CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""SEP-2549's cacheable methods: their complete results carry ttlMs and cacheScope (E H1)."""
_ERROR_STATUS = {-32601: 404, -32020: 400, -32021: 400, -32022: 400}  # E C51-C54, E S24


class Checks2026(Checks):
    """The checks of a 2026-07-28 server with the tasks extension."""

    generation = Generation.V2026_07_28
    terminal_rule = "E S22"

    def __init__(self, client_capabilities: Mapping[str, Any] | None) -> None:
        super().__init__(client_capabilities)
        self._progress_closed: set[Any] = set()
        """Progress tokens of calls that made a task (E C43: no more progress on them)."""
        self._listens: dict[Any, bool] = {}
        """``subscriptions/listen`` requests by id: whether the server acknowledged each."""
        self._http: dict[Any, HttpExchange] = {}
        """The HTTP exchange of each request not answered yet (E S24), by request id."""

    # -- what the client sent -----------------------------------------------------------------

    def request_sent(self, request_id: Any, method: Any, params: JSON) -> None:
        if method == "subscriptions/listen":
            self._listens[request_id] = False

    # -- HTTP (E C7, E S24) -------------------------------------------------------------------

    def http(self, exchange: HttpExchange) -> list[Finding]:
        found: list[Finding] = []
        if exchange.session_id is not None:
            detail = f"Mcp-Session-Id on the answer to {exchange.kind}"
            self.add(found, "E C7", detail, exchange.to_json())
        if exchange.kind == "request" and exchange.request_id is not None:
            self._http[exchange.request_id] = exchange
        return found

    def answer_arrived(self, msg: JSON, found: list[Finding]) -> None:
        answers = msg["id"] in self.pending
        exchange = self._http.pop(msg["id"], None) if self._http else None
        super().answer_arrived(msg, found)
        error = obj(msg.get("error"))
        if (
            answers
            and error is not None
            and error.get("code") == DRAFT_MISSING_CAPABILITY
            and obj((obj(error.get("data")) or {}).get("requiredCapabilities")) is not None
        ):
            self.add(found, "E A-23", "-32003 with requiredCapabilities, not -32021", msg)
        if answers and exchange is not None:
            self._error_status(exchange, msg, found)

    def _error_status(self, exchange: HttpExchange, msg: JSON, found: list[Finding]) -> None:
        """E S24: a JSON error's HTTP status (an SSE stream's 200 says nothing of it)."""
        error = obj(msg.get("error"))
        if error is None or exchange.content_type != JSON_TYPE:
            return
        expected = _ERROR_STATUS.get(error.get("code"))  # type: ignore[arg-type]
        if expected is not None and exchange.status != expected:
            self.add(
                found,
                "E S24",
                f"error {error.get('code')} to {exchange.method} came with HTTP "
                f"{exchange.status}, not {expected}",
                {**msg, "http": exchange.to_json()},
            )

    # -- answers ------------------------------------------------------------------------------

    def answered(
        self, pending: Pending, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        method = pending.method
        params = pending.params
        token = self.call_tokens.pop(pending.message.get("id"), None)
        if result is None:
            return
        result_type = result.get("resultType")
        if "resultType" not in result:
            self.add(found, "E C15", f"on the {method} result", msg)
        elif result_type not in _RESULT_TYPES:
            self.add(found, "E C17", f"resultType {result_type!r}", msg)
            return
        elif result_type == "task" and method != "tools/call":
            verdict = Verdict.WARN if method == "tasks/get" else None
            self.add(found, "E C19", f"resultType task on {method}", msg, None, verdict)
            if method != "tasks/get":
                return
        if method in _CACHEABLE and result_type in (None, "complete"):
            self._hints(method, result, msg, found)
        if method == "server/discover":
            caps = obj(result.get("capabilities")) or {}
            extensions = obj(caps.get("extensions")) or {}
            if TASKS_EXTENSION in extensions and "tasks" in caps:
                self.add(found, "E S1", "capabilities.tasks next to the extension", msg)
        elif method == "tools/call" and result_type == "task":
            if self._task_shape(result, msg, found, "E S4", create=True):
                return
            self.snapshot(result, pending.seq, msg, found)
            if token is not None:
                self._progress_closed.add(token)
        elif method == "tasks/get":
            if self._task_shape(result, msg, found, "E S6", create=False):
                return
            self._detailed(result, msg, found)
            self.snapshot(result, pending.seq, msg, found)
        elif method in ("tasks/update", "tasks/cancel"):
            extra = sorted(set(result) - {"resultType", "_meta"})
            if extra:
                rule_id = "E S13" if method == "tasks/update" else "E S15"
                self.add(found, rule_id, f"the ack carries {extra}", msg, params.get("taskId"))

    def _hints(self, method: str, result: JSON, msg: JSON, found: list[Finding]) -> None:
        """E H1, E H2 (SEP-2549): a complete cacheable result carries well-formed hints."""
        missing = missing_hints(result)
        if missing:
            self.add(found, "E H1", f"the {method} result has no {' or '.join(missing)}", msg)
        problems = hint_problems(result)
        if problems:
            self.add(found, "E H2", f"on the {method} result: {'; '.join(problems)}", msg)

    def _task_shape(
        self, task: JSON, msg: JSON, found: list[Finding], rule_id: str, *, create: bool
    ) -> bool:
        """Report a malformed task; True when it is too broken to follow."""
        task_id = task.get("taskId")
        problems: list[str] = []
        if not isinstance(task_id, str):
            problems.append("taskId is not a string")
        if task.get("status") not in STATUSES:
            problems.append(f"status {task.get('status')!r} is not a task status")
        problems += [p for p in (timestamp_problem(task, k) for k in TIMESTAMPS) if p]
        if "ttlMs" not in task:
            problems.append("ttlMs missing")
        elif task["ttlMs"] is not None and not is_int(task["ttlMs"]):
            problems.append(f"ttlMs is {task['ttlMs']!r}")
        if "pollIntervalMs" in task and not (
            is_int(task["pollIntervalMs"]) and task["pollIntervalMs"] > 0
        ):
            problems.append(f"pollIntervalMs is {task['pollIntervalMs']!r}")
        legacy = sorted({"ttl", "pollInterval", "task"} & set(task))
        if legacy:
            problems.append(f"2025-11-25 keys {legacy}")
        if create and "requestState" in task:
            problems.append("requestState on a CreateTaskResult")
        if problems:
            self.add(found, rule_id, "; ".join(problems), msg, task_id)
            return True
        return False

    def _detailed(
        self, task: JSON, msg: JSON, found: list[Finding], *, notified: bool = False
    ) -> None:
        task_id = task["taskId"]
        status = task["status"]
        shape_rule = "E S25" if notified else "E S6"
        if status == "input_required":
            requests = obj(task.get("inputRequests"))
            if requests is None:
                self.add(found, shape_rule, "input_required without inputRequests", msg, task_id)
            else:
                state = self.tasks.setdefault(task_id, TaskState())
                for key, request in requests.items():
                    known = state.input_keys.setdefault(key, request)
                    if known != request:
                        self.add(found, "E S14", f"key {key!r} names another request", msg, task_id)
        elif status == "completed":
            inlined = obj(task.get("result"))
            if inlined is None:
                self.add(found, shape_rule, "completed without result", msg, task_id)
            elif RELATED_TASK_META in meta(inlined):
                self.add(found, "E S23", "related-task in result._meta", msg, task_id)
        elif status == "failed":
            error = obj(task.get("error"))
            if (
                error is None
                or not is_int(error.get("code"))
                or not isinstance(error.get("message"), str)
            ):
                self.add(found, "E S8", f"error is {task.get('error')!r}", msg, task_id)
            elif "result" in task:
                inlined = obj(task["result"])
                if inlined is not None and inlined.get("isError") is True:
                    detail = "a failed task carries its tool's isError result"
                    self.add(found, "E S7", detail, msg, task_id)
                else:
                    self.add(found, "E S8", "a failed task with a result", msg, task_id)

    # -- notifications ------------------------------------------------------------------------

    def notified(self, msg: JSON, found: list[Finding]) -> None:
        method = msg.get("method")
        params = obj(msg.get("params")) or {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            if token in self._progress_closed:
                self.add(found, "E C43", f"progress for token {token!r}", msg)
        elif method == "notifications/subscriptions/acknowledged":
            sub = meta(params).get(SUBSCRIPTION_ID_META)
            if sub in self._listens:
                self._listens[sub] = True
            filters = obj(params.get("notifications")) or {}
            if DRAFT_TASKS_FILTER in filters and "taskIds" not in filters:
                self.add(found, "E A-27", f"the acknowledgement names {DRAFT_TASKS_FILTER}", msg)
        elif method == "notifications/tasks":
            self._tasks_notification(params, msg, found)
        elif method == DRAFT_STATUS_NOTIFICATION:
            detail = f"{DRAFT_STATUS_NOTIFICATION}, not notifications/tasks"
            self.add(found, "E A-27", detail, msg, params.get("taskId"))
            self._tasks_notification(params, msg, found)

    def _tasks_notification(self, params: JSON, msg: JSON, found: list[Finding]) -> None:
        sub = meta(params).get(SUBSCRIPTION_ID_META)
        if sub is None:
            self.add(found, "E C41", "no subscriptionId", msg, params.get("taskId"))
        elif self._listens.get(sub) is False:
            self.add(found, "E C40", f"before the ack of listen {sub!r}", msg)
        if self._task_shape(params, msg, found, "E S25", create=False):
            return
        self._detailed(params, msg, found, notified=True)
        self.snapshot(params, -1, msg, found)
