"""Whole conversations of a conforming server, and mutators that break exactly one rule.

Traffic is a tuple of ``(direction, message)`` pairs, ``direction`` ``"sent"`` (client to
server) or ``"received"``, each message a raw JSON-RPC object, and (traffic over HTTP,
``valid_traffic(..., http=True)``) ``"http"`` items, the HTTP facts of an exchange as
``HttpExchange.to_json()`` gives them, right after the message they answer: what
:meth:`mcp_tasks_client.conformance.Validator.feed` takes, and what a scripted server can
replay to a client under test.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import attrs
from hypothesis import strategies as st

from .._drivers.v2026_07_28 import (
    DRAFT_MISSING_CAPABILITY,
    DRAFT_STATUS_NOTIFICATION,
    DRAFT_TASKS_FILTER,
)
from .._generation import Generation
from ..models import RELATED_TASK_META, TASKS_EXTENSION

__all__ = ["MUTATORS", "Mutator", "Traffic", "mutations", "status_sequences", "valid_traffic"]

Message = dict[str, Any]
Traffic = tuple[tuple[str, Message], ...]

G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
_TERMINAL = ("completed", "failed", "cancelled")


_REQUEST_META: dict[Generation, dict[str, Any]] = {
    G1: {},
    G2: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {TASKS_EXTENSION: {}},
            "elicitation": {"form": {}},
        },
    },
}
"""What each generation's client puts in every request's ``_meta``."""


def _ts(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@st.composite
def status_sequences(
    draw: st.DrawFn,
    *,
    end: str | None = None,
    input_required: bool | None = None,
    min_running: int = 0,
) -> list[str]:
    """A legal life of a task after its creation: non-terminal statuses, then one terminal
    status (``end``, when given); ``input_required`` forces (or forbids) an input phase."""
    kinds = ["working"] if input_required is False else ["working", "input_required"]
    running = draw(st.lists(st.sampled_from(kinds), min_size=min_running, max_size=4))
    if input_required is True and "input_required" not in running:
        running.insert(draw(st.integers(0, len(running))), "input_required")
    if running and running[-1] == "input_required":
        running.append("working")  # the answer arrives, the task works on
    final = end if end is not None else draw(st.sampled_from(_TERMINAL))
    return [*running, final]


_JSON_TYPE, _SSE_TYPE = "application/json", "text/event-stream"


def _exchange(kind: str, status: int, content_type: str, **more: Any) -> Message:
    out: Message = {
        "kind": kind,
        "status": status,
        "content_type": content_type,
        "session_id": None,
        "method": None,
        "request_id": None,
        "body": None,
    }
    out.update(more)
    return out


class _Builder:
    """Accumulates traffic with fresh ids and a clock that only moves forward."""

    def __init__(self, draw: st.DrawFn, generation: Generation, http: bool = False) -> None:
        self.draw = draw
        self.generation = generation
        self.http = http
        self.out: list[tuple[str, Message]] = []
        self.next_id = 1
        self.now = draw(
            st.datetimes(min_value=dt.datetime(2025, 1, 1), max_value=dt.datetime(2030, 1, 1))
        )

    def tick(self) -> str:
        self.now += dt.timedelta(milliseconds=self.draw(st.integers(0, 5000)))
        return _ts(self.now)

    def meta(self) -> dict[str, Any]:
        """What every request's ``_meta`` carries in this generation."""
        return copy.deepcopy(_REQUEST_META[self.generation])

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        rid = self.next_id
        self.next_id += 1
        body = dict(params or {})
        meta = self.meta()
        if meta:  # 2026-07-28: who the client is, in every request (E C1-C3)
            body["_meta"] = {**meta, **body.get("_meta", {})}
        message: Message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if body:
            message["params"] = body
        self.out.append(("sent", message))
        if self.http:
            content_type = self.draw(st.sampled_from([_JSON_TYPE, _SSE_TYPE]))
            exchange = _exchange("request", 200, content_type, method=method, request_id=rid)
            if method == "initialize":
                exchange["session_id"] = self.draw(
                    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1)
                )
            self.out.append(("http", exchange))
        return rid

    def sent_accepted(self, message: Message) -> None:
        """A notification or response the client POSTs: 202, no body."""
        self.out.append(("sent", message))
        if self.http:
            kind = "notification" if "method" in message else "response"
            exchange = _exchange(kind, 202, "", method=message.get("method"), body=False)
            self.out.append(("http", exchange))

    def result(self, rid: int, result: dict[str, Any]) -> None:
        self.out.append(("received", {"jsonrpc": "2.0", "id": rid, "result": result}))

    def error(self, rid: int, code: int, message: str) -> None:
        self.out.append(
            ("received", {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})
        )

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.out.append(("received", {"jsonrpc": "2.0", "method": method, "params": params}))

    def exchange(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        self.result(self.request(method, params), result)


def _call_result(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


@st.composite
def _traffic1(
    draw: st.DrawFn,
    end: str | None,
    input_required: bool | None,
    progress: bool | None,
    notify: bool | None,
    support: str | None,
    min_running: int,
    http: bool | None,
) -> Traffic:
    b = _Builder(draw, G1, draw(st.booleans()) if http is None else http)
    task_id = draw(st.uuids()).hex
    ttl = draw(st.one_of(st.none(), st.integers(1000, 3_600_000)))
    poll = draw(st.integers(1, 5000))
    progress = draw(st.booleans()) if progress is None else progress
    notify = draw(st.booleans()) if notify is None else notify
    support = support or draw(st.sampled_from(["optional", "required"]))
    b.exchange(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "c", "version": "1"},
        },
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            },
            "serverInfo": {"name": "s", "version": "1"},
        },
    )
    if b.http:
        b.sent_accepted({"jsonrpc": "2.0", "method": "notifications/initialized"})
        b.out.append(("http", _exchange("get", b.draw(st.sampled_from([200, 405])), _SSE_TYPE)))
    schema = {"type": "object"}
    tool = {"name": "job", "inputSchema": schema, "execution": {"taskSupport": support}}
    b.exchange("tools/list", {}, {"tools": [tool]})
    created_at = b.tick()

    def task(status: str, updated: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": task_id,
            "status": status,
            "createdAt": created_at,
            "lastUpdatedAt": updated,
            "ttl": ttl,
            "pollInterval": poll,
        }
        if status == "failed":
            out["statusMessage"] = "boom"
        return out

    call: dict[str, Any] = {
        "name": "job",
        "arguments": {},
        "task": {} if ttl is None else {"ttl": ttl},
    }
    if progress:
        call["_meta"] = {"progressToken": "p-1"}
    b.exchange("tools/call", call, {"task": task("working", created_at)})
    done = 0.0
    result_id: int | None = None
    statuses = draw(
        status_sequences(end=end, input_required=input_required, min_running=min_running)
    )
    for status in statuses:
        updated = b.tick()
        if progress and status not in _TERMINAL:
            done += draw(st.integers(1, 10))
            b.notify("notifications/progress", {"progressToken": "p-1", "progress": done})
        if status == "cancelled":
            b.exchange("tasks/cancel", {"taskId": task_id}, task("cancelled", updated))
        else:
            b.exchange("tasks/get", {"taskId": task_id}, task(status, updated))
        if notify:
            b.notify("notifications/tasks/status", task(status, updated))
        if status == "input_required" and result_id is None:
            result_id = b.request("tasks/result", {"taskId": task_id})
            related = {RELATED_TASK_META: {"taskId": task_id}}
            ask = {
                "jsonrpc": "2.0",
                "id": f"s-{b.next_id}",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "ok?",
                    "requestedSchema": {"type": "object", "properties": {}},
                    "_meta": related,
                },
            }
            b.out.append(("received", ask))
            answer = {"action": "accept", "content": {}, "_meta": related}
            b.sent_accepted({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    final = statuses[-1]
    last_updated = _ts(b.now)
    if final != "cancelled":
        if result_id is None:
            result_id = b.request("tasks/result", {"taskId": task_id})
        payload = _call_result("done", final == "failed")
        payload["_meta"] = {RELATED_TASK_META: {"taskId": task_id}}
        b.result(result_id, payload)
    elif result_id is not None:
        b.error(result_id, -32602, "task cancelled")  # either form
    for _ in range(draw(st.integers(0, 2))):
        b.exchange("tasks/get", {"taskId": task_id}, task(final, last_updated))
    if draw(st.booleans()):
        b.exchange("tasks/list", {}, {"tasks": [task(final, last_updated)]})
    return tuple(b.out)


@st.composite
def _traffic2(
    draw: st.DrawFn,
    end: str | None,
    input_required: bool | None,
    progress: bool | None,
    listen: bool | None,
    min_running: int,
    http: bool | None,
) -> Traffic:
    b = _Builder(draw, G2, draw(st.booleans()) if http is None else http)
    task_id = draw(st.uuids()).hex
    ttl = draw(st.one_of(st.none(), st.integers(1000, 3_600_000)))
    poll = draw(st.integers(1, 5000))
    progress = draw(st.booleans()) if progress is None else progress
    listen = draw(st.booleans()) if listen is None else listen
    b.exchange(
        "server/discover",
        {},
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
            "serverInfo": {"name": "s", "version": "1"},
            "resultType": "complete",
            # SEP-2549 (E H1, E H2): a cacheable result's hints
            "ttlMs": draw(st.integers(0, 3_600_000)),
            "cacheScope": draw(st.sampled_from(["public", "private"])),
        },
    )
    created_at = b.tick()

    def task(status: str, updated: str, phase: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": task_id,
            "status": status,
            "createdAt": created_at,
            "lastUpdatedAt": updated,
            "ttlMs": ttl,
            "pollIntervalMs": poll,
        }
        if status == "input_required":
            out["inputRequests"] = {
                f"k{phase}": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": f"question {phase}?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                }
            }
        elif status == "completed":
            out["result"] = {**_call_result("done", draw(st.booleans())), "resultType": "complete"}
        elif status == "failed":
            out["statusMessage"] = "boom"
            out["error"] = {"code": -32603, "message": "boom"}
        return out

    call: dict[str, Any] = {"name": "job", "arguments": {}}
    if progress:
        call["_meta"] = {"progressToken": "p-1"}
    call_id = b.request("tools/call", call)
    if progress:
        b.notify("notifications/progress", {"progressToken": "p-1", "progress": 1})
    b.result(call_id, {**task("working", created_at, 0), "resultType": "task"})
    listen_id: int | None = None
    if listen:
        listen_id = b.request("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
        b.notify(
            "notifications/subscriptions/acknowledged",
            {"notifications": {"taskIds": [task_id]}, "_meta": {SUBSCRIPTION_ID: listen_id}},
        )
    phase = 0
    previous = "working"
    statuses = draw(
        status_sequences(end=end, input_required=input_required, min_running=min_running)
    )
    for status in statuses:
        if status == "input_required" and previous != "input_required":
            phase += 1
        previous = status
        updated = b.tick()
        if status == "cancelled":
            b.exchange("tasks/cancel", {"taskId": task_id}, {"resultType": "complete"})
        snapshot = task(status, updated, phase)
        b.exchange("tasks/get", {"taskId": task_id}, {**snapshot, "resultType": "complete"})
        if listen_id is not None:
            b.notify("notifications/tasks", {**snapshot, "_meta": {SUBSCRIPTION_ID: listen_id}})
        if status == "input_required":
            b.exchange(
                "tasks/update",
                {"taskId": task_id, "inputResponses": {f"k{phase}": {"action": "accept"}}},
                {"resultType": "complete"},
            )
    final = statuses[-1]
    last = task(final, _ts(b.now), phase)
    for _ in range(draw(st.integers(0, 2))):
        b.exchange("tasks/get", {"taskId": task_id}, {**last, "resultType": "complete"})
    if listen_id is not None:
        b.result(listen_id, {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: listen_id}})
    if b.http:  # a removed method (E S16), answered as 2026-07-28 HTTP answers -32601
        rid = b.request("tasks/result", {"taskId": task_id})
        b.out[-1][1].update(status=404, content_type=_JSON_TYPE)
        b.error(rid, -32601, "tasks/result is not a 2026-07-28 method")
    return tuple(b.out)


def valid_traffic(
    generation: Generation,
    *,
    end: str | None = None,
    input_required: bool | None = None,
    progress: bool | None = None,
    notify: bool | None = None,
    listen: bool | None = None,
    support: str | None = None,
    min_running: int = 0,
    http: bool | None = None,
) -> st.SearchStrategy[Traffic]:
    """One task's whole conversation with a conforming server, in ``generation``.

    2025-11-25: ``initialize``, ``tools/list``, a task-augmented ``tools/call`` (with a
    progress token when ``progress``), ``tasks/get`` polls through a legal status sequence
    (status notifications when ``notify``; an elicitation on an open ``tasks/result`` during
    ``input_required``), the result, later polls and a ``tasks/list``. 2026-07-28:
    ``server/discover``, a ``tools/call`` answered with a task, polls of DetailedTasks,
    ``tasks/update`` answers, ``tasks/cancel`` acks, and (``listen``) a listen stream. Leave an
    option None to let hypothesis choose it.

    ``http``: the conversation is over Streamable HTTP, and each exchange's HTTP facts follow
    the message they answer as ``("http", HttpExchange.to_json())`` items (2025-11-25: a
    session id on the initialize answer, 202 for notifications/initialized and the
    elicitation's answer, a GET stream; 2026-07-28: no session id, and a ``tasks/result``
    answered 404 -32601).
    """
    conversations: dict[Generation, Callable[[], st.SearchStrategy[Traffic]]] = {
        G1: lambda: _traffic1(end, input_required, progress, notify, support, min_running, http),
        G2: lambda: _traffic2(end, input_required, progress, listen, min_running, http),
    }
    try:
        conversation = conversations[generation]
    except (KeyError, TypeError):
        raise ValueError(f"no traffic of generation {generation!r}") from None
    return conversation()


# --- mutators ---------------------------------------------------------------------------------


def _pairs(traffic: list[tuple[str, Message]]) -> Iterator[tuple[int, Message, int, Message]]:
    """(request index, request, answer index, answer) for every answered client request."""
    sent: dict[Any, tuple[int, Message]] = {}
    for i, (direction, message) in enumerate(traffic):
        if direction == "sent" and "method" in message and "id" in message:
            sent[message["id"]] = (i, message)
        elif direction == "received" and "method" not in message and message.get("id") in sent:
            j, request = sent.pop(message["id"])
            yield j, request, i, message


def _answers(traffic: list[tuple[str, Message]], method: str) -> list[Message]:
    return [answer for _, req, _, answer in _pairs(traffic) if req["method"] == method]


def _results(traffic: list[tuple[str, Message]], method: str) -> list[dict[str, Any]]:
    return [a["result"] for a in _answers(traffic, method) if "result" in a]


def _answer_index(traffic: list[tuple[str, Message]], method: str) -> int:
    return next(i for _, req, i, _ in _pairs(traffic) if req["method"] == method)


def _next_id(traffic: list[tuple[str, Message]]) -> int:
    ids = [m["id"] for d, m in traffic if d == "sent" and isinstance(m.get("id"), int)]
    return max(ids, default=0) + 1000


def _task_id(traffic: list[tuple[str, Message]]) -> str:
    for _, req, _, answer in _pairs(traffic):
        if req["method"] == "tools/call":
            result = answer["result"]
            return str(result["task"]["taskId"] if "task" in result else result["taskId"])
    raise LookupError("no task")


def _last_snapshot(traffic: list[tuple[str, Message]]) -> dict[str, Any]:
    return copy.deepcopy(_results(traffic, "tasks/get")[-1])


def _terminal_results(traffic: list[tuple[str, Message]]) -> list[dict[str, Any]]:
    return [r for r in _results(traffic, "tasks/get") if r.get("status") in _TERMINAL]


def _meta_of(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.get("params", {}).items() if k == "_meta"}


def _append_exchange(
    traffic: list[tuple[str, Message]], method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    rid = _next_id(traffic)
    template = next(m for d, m in traffic if d == "sent" and "method" in m)
    body = {**_meta_of(template), **params}
    traffic.append(("sent", {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}))
    traffic.append(("received", {"jsonrpc": "2.0", "id": rid, "result": result}))


def _later(ts: str) -> str:
    moment = dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ") + dt.timedelta(seconds=1)
    return _ts(moment)


@attrs.frozen
class Mutator:
    """Breaks exactly ``rule_id`` in traffic drawn with ``needs`` (valid_traffic options)."""

    rule_id: str
    generation: Generation
    apply: Callable[[list[tuple[str, Message]]], None]
    needs: dict[str, Any] = attrs.field(factory=dict)


def _m1(rule_id: str, **needs: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(fn: Callable[[list[tuple[str, Message]]], None]) -> Callable[..., None]:
        MUTATORS.append(Mutator(rule_id, G1, fn, needs))
        return fn

    return register


def _m2(rule_id: str, **needs: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(fn: Callable[[list[tuple[str, Message]]], None]) -> Callable[..., None]:
        MUTATORS.append(Mutator(rule_id, G2, fn, needs))
        return fn

    return register


MUTATORS: list[Mutator] = []
"""Every mutator: one per rule the Validator checks, per generation the rule applies to."""


@_m1("V-01")
def _no_server_info(t: list[tuple[str, Message]]) -> None:
    del _results(t, "initialize")[0]["serverInfo"]


@_m1("V-03")
def _bad_capability(t: list[tuple[str, Message]]) -> None:
    _results(t, "initialize")[0]["capabilities"]["tasks"]["list"] = "yes"


@_m1("V-03")
def _bad_task_support(t: list[tuple[str, Message]]) -> None:
    _results(t, "tools/list")[0]["tools"][0]["execution"]["taskSupport"] = "sometimes"


@_m1("V-04")
def _plain_answer_to_task_call(t: list[tuple[str, Message]]) -> None:
    answer = _answers(t, "tools/call")[0]
    answer["result"] = _call_result("inline", False)


@_m1("V-05")
def _created_not_working(t: list[tuple[str, Message]]) -> None:
    _results(t, "tools/call")[0]["task"]["status"] = "input_required"


@_m1("V-06", min_running=1)
def _task_id_not_string(t: list[tuple[str, Message]]) -> None:
    _results(t, "tasks/get")[0]["taskId"] = 42


@_m1("V-07", min_running=1)
def _no_last_updated(t: list[tuple[str, Message]]) -> None:
    del _results(t, "tasks/get")[0]["lastUpdatedAt"]


@_m1("V-08", min_running=1)
def _no_ttl(t: list[tuple[str, Message]]) -> None:
    del _results(t, "tasks/get")[0]["ttl"]


def _revive(t: list[tuple[str, Message]], snapshot: dict[str, Any] | None = None) -> None:
    snapshot = _last_snapshot(t) if snapshot is None else snapshot
    snapshot.pop("result", None)
    snapshot.pop("error", None)
    snapshot.pop("statusMessage", None)
    snapshot["status"] = "working"
    snapshot["lastUpdatedAt"] = _later(snapshot["lastUpdatedAt"])
    _append_exchange(t, "tasks/get", {"taskId": snapshot["taskId"]}, snapshot)


_m1("V-09", end="completed")(_revive)
_m1("V-09", end="failed")(_revive)


@_m1("V-09", end="cancelled")
def _revive_cancelled(t: list[tuple[str, Message]]) -> None:
    # 2025-11-25: the cancel answer is the terminal snapshot (later polls repeat it)
    _revive(t, copy.deepcopy(_results(t, "tasks/cancel")[-1]))


@_m1("V-10", end="completed")
def _no_related_task(t: list[tuple[str, Message]]) -> None:
    del _results(t, "tasks/result")[0]["_meta"]


@_m1("V-11", min_running=1, input_required=False)
def _result_too_early(t: list[tuple[str, Message]]) -> None:
    at = _answer_index(t, "tools/call") + 1
    rid = _next_id(t)
    task_id = _task_id(t)
    t[at:at] = [
        (
            "sent",
            {"jsonrpc": "2.0", "id": rid, "method": "tasks/result", "params": {"taskId": task_id}},
        ),
        (
            "received",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32602, "message": "task not finished"},
            },
        ),
    ]


@_m1("V-12", end="completed")
def _no_content(t: list[tuple[str, Message]]) -> None:
    del _results(t, "tasks/result")[0]["content"]


@_m1("V-13", end="failed")
def _failed_without_message(t: list[tuple[str, Message]]) -> None:
    for result in _terminal_results(t):
        result.pop("statusMessage", None)
    for d, m in t:
        if d == "received" and m.get("method") == "notifications/tasks/status":
            m["params"].pop("statusMessage", None)
    for result in _results(t, "tasks/list"):
        for entry in result["tasks"]:
            entry.pop("statusMessage", None)


@_m1("V-14", end="completed")
def _cancel_terminal_succeeds(t: list[tuple[str, Message]]) -> None:
    snapshot = _last_snapshot(t)
    snapshot["status"] = "cancelled"
    _append_exchange(t, "tasks/cancel", {"taskId": snapshot["taskId"]}, snapshot)


@_m1("V-15", end="cancelled")
def _cancel_not_cancelled(t: list[tuple[str, Message]]) -> None:
    _results(t, "tasks/cancel")[0]["status"] = "working"


@_m1("V-16", support="required")
def _required_tool_runs_plain(t: list[tuple[str, Message]]) -> None:
    _append_exchange(t, "tools/call", {"name": "job", "arguments": {}}, _call_result("x", True))


@_m1("V-18")
def _undeclared_task_calls(t: list[tuple[str, Message]]) -> None:
    del _results(t, "initialize")[0]["capabilities"]["tasks"]["requests"]


@_m1("V-20", min_running=1)
def _related_task_on_get(t: list[tuple[str, Message]]) -> None:
    result = _results(t, "tasks/get")[0]
    result["_meta"] = {RELATED_TASK_META: {"taskId": result["taskId"]}}


def _elicitation(t: list[tuple[str, Message]]) -> Message:
    return next(m for d, m in t if d == "received" and m.get("method") == "elicitation/create")


@_m1("V-21", input_required=True)
def _elicitation_without_related_task(t: list[tuple[str, Message]]) -> None:
    del _elicitation(t)["params"]["_meta"]


@_m1("V-22", input_required=True)
def _working_while_asked(t: list[tuple[str, Message]]) -> None:
    # a poll between the question's arrival and the client's answer says working
    ask = _elicitation(t)
    at = next(i for i, (_, m) in enumerate(t) if m is ask) + 1
    asking = copy.deepcopy(
        next(r for r in _results(t, "tasks/get") if r["status"] == "input_required")
    )
    asking["status"] = "working"
    rid = _next_id(t)
    t[at:at] = [
        (
            "sent",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tasks/get",
                "params": {"taskId": asking["taskId"]},
            },
        ),
        ("received", {"jsonrpc": "2.0", "id": rid, "result": asking}),
    ]


@_m1("V-23", notify=True)
def _incomplete_status_notification(t: list[tuple[str, Message]]) -> None:
    note = next(m for d, m in t if m.get("method") == "notifications/tasks/status")
    del note["params"]["createdAt"]


@_m1("V-24", progress=True, min_running=1)
def _progress_repeats(t: list[tuple[str, Message]]) -> None:
    at = next(i for i, (_, m) in enumerate(t) if m.get("method") == "notifications/progress")
    t.insert(at + 1, ("received", copy.deepcopy(t[at][1])))


@_m1("V-25", input_required=True)
def _undeclared_url_mode(t: list[tuple[str, Message]]) -> None:
    params = _elicitation(t)["params"]
    params.pop("requestedSchema")
    params.update(mode="url", url="https://example.invalid/", elicitationId="e-1")


def _created_at_moves(t: list[tuple[str, Message]]) -> None:
    result = _results(t, "tasks/get")[0]
    result["createdAt"] = _later(result["createdAt"])


_m1("V-26", min_running=1)(_created_at_moves)
_m2("V-26", min_running=1)(_created_at_moves)


@_m2("E S1")
def _legacy_capability(t: list[tuple[str, Message]]) -> None:
    _results(t, "server/discover")[0]["capabilities"]["tasks"] = {"list": {}}


@_m2("E H1")
def _no_cache_hints(t: list[tuple[str, Message]]) -> None:
    del _results(t, "server/discover")[0]["ttlMs"]


@_m2("E H2")
def _malformed_cache_hints(t: list[tuple[str, Message]]) -> None:
    _results(t, "server/discover")[0]["cacheScope"] = "shared"


@_m2("E C15", min_running=1)
def _no_result_type(t: list[tuple[str, Message]]) -> None:
    del _results(t, "tasks/get")[0]["resultType"]


@_m2("E C17", input_required=True)
def _unknown_result_type(t: list[tuple[str, Message]]) -> None:
    _results(t, "tasks/update")[0]["resultType"] = "done"


@_m2("E C19")
def _task_result_type_elsewhere(t: list[tuple[str, Message]]) -> None:
    _results(t, "server/discover")[0]["resultType"] = "task"


@_m2("E S4")
def _legacy_poll_interval(t: list[tuple[str, Message]]) -> None:
    _results(t, "tools/call")[0]["pollInterval"] = 200


@_m2("E S6", end="completed", listen=False)
def _completed_without_result(t: list[tuple[str, Message]]) -> None:
    for result in _terminal_results(t):
        del result["result"]


@_m2("E S8", end="failed", listen=False)
def _failed_without_error(t: list[tuple[str, Message]]) -> None:
    for result in _terminal_results(t):
        del result["error"]


@_m2("E S7", end="failed", listen=False)
def _is_error_result_failed(t: list[tuple[str, Message]]) -> None:
    for result in _terminal_results(t):
        result["result"] = {**_call_result("no", True), "resultType": "complete"}


@_m2("E S13", input_required=True)
def _update_ack_not_empty(t: list[tuple[str, Message]]) -> None:
    _results(t, "tasks/update")[0]["status"] = "working"


@_m2("E S14", input_required=True)
def _key_names_another_request(t: list[tuple[str, Message]]) -> None:
    asking = next(r for r in _results(t, "tasks/get") if r["status"] == "input_required")
    again = copy.deepcopy(asking)
    (key,) = again["inputRequests"]
    again["inputRequests"][key]["params"]["message"] = "another question?"
    at = next(i for _, _, i, a in _pairs(t) if a.get("result") is asking) + 1
    rid = _next_id(t)
    template = next(m for d, m in t if d == "sent" and "method" in m)
    t[at:at] = [
        (
            "sent",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tasks/get",
                "params": {**_meta_of(template), "taskId": asking["taskId"]},
            },
        ),
        ("received", {"jsonrpc": "2.0", "id": rid, "result": again}),
    ]


@_m2("E S15", end="cancelled")
def _cancel_ack_not_empty(t: list[tuple[str, Message]]) -> None:
    _results(t, "tasks/cancel")[0]["status"] = "cancelled"


_m2("E S22", end="completed")(_revive)
_m2("E S22", end="failed")(_revive)
_m2("E S22", end="cancelled")(_revive)


@_m2("E S23", end="completed", listen=False)
def _related_task_in_inlined_result(t: list[tuple[str, Message]]) -> None:
    result = _terminal_results(t)[0]
    result["result"]["_meta"] = {RELATED_TASK_META: {"taskId": result["taskId"]}}


def _task_notes(t: list[tuple[str, Message]]) -> list[Message]:
    return [m for d, m in t if d == "received" and m.get("method") == "notifications/tasks"]


@_m2("E S25", listen=True)
def _incomplete_task_notification(t: list[tuple[str, Message]]) -> None:
    del _task_notes(t)[0]["params"]["createdAt"]


@_m2("E C40", listen=True)
def _notification_before_ack(t: list[tuple[str, Message]]) -> None:
    at = next(
        i
        for i, (_, m) in enumerate(t)
        if m.get("method") == "notifications/subscriptions/acknowledged"
    )
    del t[at]


@_m2("E C41", listen=True)
def _notification_without_subscription(t: list[tuple[str, Message]]) -> None:
    del _task_notes(t)[0]["params"]["_meta"]


@_m2("E A-27", listen=True)
def _draft_status_notification(t: list[tuple[str, Message]]) -> None:
    _task_notes(t)[0]["method"] = DRAFT_STATUS_NOTIFICATION


@_m2("E A-27", listen=True)
def _draft_tasks_filter(t: list[tuple[str, Message]]) -> None:
    ack = next(m for _, m in t if m.get("method") == "notifications/subscriptions/acknowledged")
    filters = ack["params"]["notifications"]
    filters[DRAFT_TASKS_FILTER] = filters.pop("taskIds")


@_m2("E A-23")
def _draft_missing_capability(t: list[tuple[str, Message]]) -> None:
    rid = _next_id(t)
    required: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
    t += [
        (
            "sent",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "only_a_task", "arguments": {}},
            },
        ),
        (
            "received",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {
                    "code": DRAFT_MISSING_CAPABILITY,
                    "message": "runs only as a task",
                    "data": {"requiredCapabilities": required},
                },
            },
        ),
    ]


@_m2("E C43", progress=True)
def _progress_after_task(t: list[tuple[str, Message]]) -> None:
    at = _answer_index(t, "tools/call") + 1
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p-1", "progress": 2},
    }
    t.insert(at, ("received", note))


# --- HTTP (traffic drawn with http=True) ---------------------------------------------------


def _http_items(
    t: list[tuple[str, Message]], kind: str, method: str | None = None
) -> list[Message]:
    return [
        m
        for d, m in t
        if d == "http" and m["kind"] == kind and (method is None or m["method"] == method)
    ]


@_m1("V-27a", http=True)
def _notification_answered_200(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "notification", "notifications/initialized")[0]["status"] = 200


@_m1("V-27a", http=True)
def _accepted_with_a_body(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "notification", "notifications/initialized")[0]["body"] = True


@_m1("V-27b", http=True)
def _request_answered_text(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "request", "tools/list")[0]["content_type"] = "text/plain"


@_m1("V-27b", http=True)
def _request_answered_202(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "request", "tools/list")[0]["status"] = 202


@_m1("V-27c", http=True)
def _session_id_with_a_space(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "request", "initialize")[0]["session_id"] = "session 1"


@_m1("V-27d", http=True)
def _get_answered_json(t: list[tuple[str, Message]]) -> None:
    get = _http_items(t, "get")[0]
    get.update(status=200, content_type=_JSON_TYPE)


@_m2("E C7", http=True)
def _session_id_in_2026(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "request", "server/discover")[0]["session_id"] = "s-1"


@_m2("E S24", http=True)
def _method_not_found_with_200(t: list[tuple[str, Message]]) -> None:
    _http_items(t, "request", "tasks/result")[-1].update(status=200, content_type=_JSON_TYPE)


@st.composite
def _mutated(draw: st.DrawFn, mutator: Mutator) -> tuple[str, Traffic]:
    traffic = [
        (d, copy.deepcopy(m)) for d, m in draw(valid_traffic(mutator.generation, **mutator.needs))
    ]
    mutator.apply(traffic)
    return mutator.rule_id, tuple(traffic)


def mutations(
    generation: Generation | None = None, *, rule_id: str | None = None
) -> st.SearchStrategy[tuple[str, Traffic]]:
    """``(rule_id, traffic)``: valid traffic with exactly one server rule broken.

    Restricted to one ``generation`` and/or one ``rule_id`` when given; the strict Validator
    fed the traffic reports that rule and no other.
    """
    chosen = [
        m
        for m in MUTATORS
        if (generation is None or m.generation is generation)
        and (rule_id is None or m.rule_id == rule_id)
    ]
    if not chosen:
        raise ValueError(f"no mutator for generation={generation} rule_id={rule_id!r}")
    return st.sampled_from(chosen).flatmap(_mutated)


def mutator_rules(generation: Generation | None = None) -> set[str]:
    """The rule ids :func:`mutations` can break (in ``generation``)."""
    return {m.rule_id for m in MUTATORS if generation is None or m.generation is generation}
