"""What the strict validator does the same in every generation, and the interface of the rest.

:class:`Checks` pairs answers with the requests they answer, keeps the state the rules across
messages need (each task's last snapshot, the progress tokens sent), and holds the sequence
rules both generations share (``createdAt`` never moves, ``lastUpdatedAt`` never goes back, a
terminal status stays). What a generation's server must do besides (the shape of its answers,
its notifications, its HTTP, the requests it sends the client) is one subclass per generation:
``_checks_v2025_11_25.py`` and ``_checks_v2026_07_28.py``, chosen by the registry in
``validator.py``. Nothing here asks which generation it checks.

Sequence rules compare a snapshot only with snapshots that answered requests sent *before*
its own (a poll answered out of order, or one a status change overtook, is not a regression),
and a status notification is never taken as proof of a regression (it can overtake or trail a
poll on another stream); both only ever check their own shape and ``createdAt``.

May import: ``models``, ``_generation``, ``_io.base`` (``HttpExchange``), ``_codec``
(timestamps), this package's ``rules``.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from .._codec._converter import parse_timestamp
from .._generation import Generation
from .._io.base import HttpExchange
from .rules import Rule, Verdict, rule

__all__ = ["Checks", "Finding"]

JSON = dict[str, Any]

STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TIMESTAMPS = ("createdAt", "lastUpdatedAt")
JSON_TYPE = "application/json"


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
class Pending:
    """A request the client sent, not answered yet."""

    message: JSON
    seq: int
    terminal_at_send: bool = False

    @property
    def method(self) -> Any:
        return self.message.get("method")

    @property
    def params(self) -> JSON:
        return obj(self.message.get("params")) or {}


@attrs.define
class Snapshot:
    seq: int
    """The sequence number of the request it answered (or of the notification itself)."""
    status: str | None
    created_at: str | None
    last_updated_at: Any


@attrs.define
class TaskState:
    created_at: str | None = None
    latest: Snapshot | None = None
    terminal_seq: int | None = None
    """When the first terminal snapshot was received."""
    result_answered_seq: int | None = None
    """A tasks/result answered while the last snapshot was not terminal: its receive seq."""
    input_keys: dict[str, Any] = attrs.Factory(dict)

    @property
    def terminal(self) -> bool:
        return self.latest is not None and self.latest.status in TERMINAL


def obj(value: Any) -> JSON | None:
    return value if isinstance(value, dict) else None


def meta(value: Any) -> JSON:
    found = obj(value)
    inner = obj(found.get("_meta")) if found is not None else None
    return inner or {}


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def timestamp_problem(task: JSON, key: str) -> str | None:
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


def later(before: Any, after: Any) -> bool | None:
    """Whether ``after`` is not earlier than ``before``; None when either does not parse."""
    try:
        return parse_timestamp(after) >= parse_timestamp(before)
    except (ValueError, OverflowError, TypeError):
        return None


class Checks(abc.ABC):
    """The checks of one connection's server in one generation (one subclass per generation).

    Fed by :class:`~mcp_tasks_client.conformance.Validator`; each feeding method returns the
    findings the message produced."""

    generation: ClassVar[Generation]
    terminal_rule: ClassVar[str]
    """The rule a terminal status that changes breaks."""

    def __init__(self, client_capabilities: Mapping[str, Any] | None) -> None:
        self.seq = 0
        self.pending: dict[Any, Pending] = {}
        self.tasks: dict[str, TaskState] = {}
        self.progress: dict[Any, float | None] = {}
        """Progress tokens the client sent, with the last progress reported for each."""
        self.call_tokens: dict[Any, Any] = {}
        """The progress token of each ``tools/call`` not answered yet, by request id."""

    # -- feeding ----------------------------------------------------------------------------

    def sent(self, msg: JSON) -> None:
        self.seq += 1
        if "method" in msg and "id" in msg:
            method = msg["method"]
            params = obj(msg.get("params")) or {}
            task_id = params.get("taskId")
            state = self.tasks.get(task_id) if isinstance(task_id, str) else None
            self.pending[msg["id"]] = Pending(
                msg, self.seq, terminal_at_send=state is not None and state.terminal
            )
            token = meta(params).get("progressToken")
            if token is not None:
                self.progress.setdefault(token, None)
                if method == "tools/call":
                    self.call_tokens[msg["id"]] = token
            self.request_sent(msg["id"], method, params)
        elif "method" not in msg and "id" in msg:
            self.client_answered(msg["id"])

    def received(self, msg: JSON) -> list[Finding]:
        self.seq += 1
        found: list[Finding] = []
        if "method" in msg:
            if "id" in msg:
                self.server_request(msg, found)
            else:
                self.notified(msg, found)
        elif "id" in msg:
            self.answer_arrived(msg, found)
        return found

    def answer_arrived(self, msg: JSON, found: list[Finding]) -> None:
        pending = self.pending.pop(msg["id"], None)
        if pending is not None:
            self.answered(pending, obj(msg.get("result")), msg, found)

    # -- what each generation checks ----------------------------------------------------------

    def request_sent(self, request_id: Any, method: Any, params: JSON) -> None:  # noqa: B027
        """The client sent a request (remember what later rules need)."""

    def client_answered(self, request_id: Any) -> None:  # noqa: B027
        """The client answered the server's request ``request_id``."""

    @abc.abstractmethod
    def http(self, exchange: HttpExchange) -> list[Finding]:
        """The HTTP facts of one exchange."""

    @abc.abstractmethod
    def answered(
        self, pending: Pending, result: JSON | None, msg: JSON, found: list[Finding]
    ) -> None:
        """``msg`` answered the request ``pending`` (``result``: its result, when one)."""

    def server_request(self, msg: JSON, found: list[Finding]) -> None:  # noqa: B027
        """A request from the server to the client."""

    @abc.abstractmethod
    def notified(self, msg: JSON, found: list[Finding]) -> None:
        """A notification from the server."""

    def moved(  # noqa: B027 - nothing more to check by default
        self, state: TaskState, task: JSON, seq: int, msg: JSON, found: list[Finding]
    ) -> None:
        """``task``, a well-formed snapshot answering a request sent at ``seq``, is newer than
        what ``state`` knew (checked before it is kept as the latest)."""

    # -- helpers -----------------------------------------------------------------------------

    def add(
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

    # -- sequences (both generations) ------------------------------------------------------

    def snapshot(self, task: JSON, seq: int, msg: JSON, found: list[Finding]) -> None:
        """Sequence rules for one well-formed snapshot answering a request sent at ``seq``
        (a notification: ``seq`` is -1 and only ``createdAt`` is compared)."""
        task_id: str = task["taskId"]
        status: str = task["status"]
        state = self.tasks.setdefault(task_id, TaskState())
        if state.created_at is None:
            state.created_at = task["createdAt"]
        elif task["createdAt"] != state.created_at:
            self.add(
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
            and status not in TERMINAL
        ):
            return  # sent before the terminal snapshot arrived: stale
        if latest is not None and latest.status in TERMINAL and status != latest.status:
            detail = f"{latest.status!r} became {status!r}"
            self.add(found, self.terminal_rule, detail, msg, task_id)
            return
        if latest is not None and later(latest.last_updated_at, task["lastUpdatedAt"]) is False:
            self.add(
                found,
                "V-26",
                f"lastUpdatedAt went back from {latest.last_updated_at!r} to "
                f"{task['lastUpdatedAt']!r}",
                msg,
                task_id,
            )
        self.moved(state, task, seq, msg, found)
        state.latest = Snapshot(seq, status, task["createdAt"], task["lastUpdatedAt"])
        if status in TERMINAL and state.terminal_seq is None:
            state.terminal_seq = self.seq
