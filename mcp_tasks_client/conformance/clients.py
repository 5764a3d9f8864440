"""The client-side conformance suite: scripted servers that judge a task **client** on the wire.

It follows the official conformance suite's client contract, so whoever knows that suite knows
this one: the client is a command, run with the server's URL appended as its last argument,
with ``MCP_CONFORMANCE_SCENARIO`` (the scenario's name), ``MCP_CONFORMANCE_PROTOCOL_VERSION``
(the generation) and ``MCP_CONFORMANCE_CONTEXT`` (a JSON object: what the scenario asks the
client to do) in its environment. Each scenario is a :class:`FaultServer` on 127.0.0.1 with a
script of its own; once the client exits (or its time runs out, when it is killed by its pid)
the scenario judges what the server received and gives one :class:`Check` per rule, each
citing its rule id from the catalogue (``docs/rule-ids.md``).

The context's keys: ``tool`` and ``arguments`` (the tool to call), ``task`` (call it as a task,
or plainly), ``ttl`` (ms to ask for, or null), ``cancel`` (cancel the task once created),
``answer`` (the content to accept a form question with), ``listen`` (2026-07-28: follow the
task by ``subscriptions/listen`` as well as polls), ``receive`` (2025-11-25: serve the server's
task-augmented questions as tasks). A client that does what the context
says and keeps the rules passes.

Scenarios (:data:`SCENARIOS`; ``mcp-tasks conformance-client --list``):

- ``opt-in``: the client is asked for a plain call of a task-capable tool: no task (C-15,
  E C18: the library never does what the caller did not opt into).
- ``poll-interval``: the server asks for 300 ms between polls: the client's ``tasks/get`` of
  the task keep it (C-19, E C23), with no storm.
- ``cancel``: the client cancels its running task: ``tasks/cancel`` naming it, and it ends
  ``cancelled``; never ``notifications/cancelled`` (C-26, E C35); 2026-07-28: the cancel's
  ``Mcp-Name`` is its ``taskId`` (E C58).
- ``input-required-result`` (2025-11-25): the task goes ``input_required``; the client opens a
  blocking ``tasks/result`` (C-21) and answers the question that comes on it.
- ``ttl``: the caller asks for a ttl (2025-11-25: it is sent as asked, C-18); the server keeps
  the task unlimited (``ttl`` null): the client follows it to its end (C-18, E C26).
- ``odd-create``: the created task's answer leaves out its ``ttl`` (the schema requires it):
  the client keeps the task's id and follows it to its end (C-30, E C22).
- ``input-requests-once`` (2026-07-28): ``inputRequests`` ``q1`` then ``q2``, and the poll
  after each ack still shows the answered key (E C33): each key answered once (E C31).
- ``request-state`` (2026-07-28): MRTR before the task, with a ``requestState`` that only an
  untouched echo keeps (E C46), on a retry with a new id that repeats the call and answers
  the key asked (E C47).
- ``related-task`` (2025-11-25): the task's question carries related-task ``_meta``; the
  client's answer echoes it (C-25, read by A-11: the client's side-channel answers too).
- ``untagged-question`` (2025-11-25): the server forgets the question's related-task
  ``_meta`` (V-21 broken, as servers in the wild do): the client still answers it, and names
  no task it was not told (A-23: route by content, never guess).
- ``routing-headers`` (2026-07-28): every request's ``MCP-Protocol-Version``, ``Mcp-Method``
  and (``tools/call``) ``Mcp-Name`` equal its body (E C57); ``tasks/get``, ``tasks/update``
  and ``tasks/cancel`` carry ``Mcp-Name`` equal to their ``taskId`` (E C58), decoded from
  ``=?base64?...?=`` when so sent (E C59).
- ``listen-fallback`` (2026-07-28): asked to follow its task by ``subscriptions/listen``,
  the client names the task in the listen (E C39); the server refuses it (-32601, HTTP 404),
  and the client polls the task to its end (E C24).
- ``receiver`` (2025-11-25): the context's ``receive`` asks the client to serve tasks; while
  answering its plain ``tools/call`` the server sends a task-augmented ``elicitation/create``
  (ttl 120000 ms): the client declared it serves such tasks (C-31), accepts with a
  ``CreateTaskResult`` (C-36), and answers ``tasks/get`` with the ttl it created the task with
  (C-37), ``tasks/list`` listing it (C-40), ``tasks/result`` with the answer and related-task
  ``_meta`` (C-38; waited for as long as the client's run may last), and ``tasks/cancel`` of
  the ended task with -32602 (C-41; of a task still running, with the task ``cancelled``).

"Followed to its end" (``odd-create``, ``ttl``, ``listen-fallback``) means the server answered
the client a terminal ``tasks/get`` or a ``tasks/result`` for the task and the client then
exited 0 (:meth:`Recording.followed`). The scripted servers date their tasks by the real
clock (a client applying the TTL backstop sees live tasks), and an answered 2025-11-25 task
also ends by itself (``SELF_PACED``), so a client waiting in ``tasks/result`` gets its result.
The client's stdout and stderr are kept for the checks' details, never passed through.

Each check cites a client rule of :data:`CLIENT_RULES`, the registry of the rules that bind
a client (as ``conformance.RULES`` is the server's); ``docs/rule-ids.md`` carries its table
(:func:`render_client_rules`).

A deliberately wrong client for each scenario ships as
``python -m mcp_tasks_client.conformance.wrong_client`` (the scenario's name says which rule
to break) and the tests show each scenario fails it.

May import: this package's ``rules``; ``_generation``, ``models``, ``testing`` (the scripted
servers).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio
import attrs

from .._exceptions import UsageError
from .._generation import Generation
from ..models import TASKS_EXTENSION
from ..testing import FaultServer

__all__ = [
    "CLIENT_RULES",
    "SCENARIOS",
    "Check",
    "ClientRule",
    "Recording",
    "Scenario",
    "render_client_rules",
    "render_table",
    "run_scenario",
]

JSON = dict[str, Any]
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@attrs.frozen
class Check:
    """One check's result, as the official suite writes one: ``id``, ``name``, ``status``
    (``SUCCESS``, ``FAILURE``, ``WARNING``), ``description``, ``specReferences`` (the rule
    id), ``errorMessage`` and ``details`` (the messages that showed it)."""

    id: str
    rule: str
    status: str
    description: str
    error_message: str | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "name": self.id,
            "status": self.status,
            "description": self.description,
            "specReferences": [{"id": self.rule}],
            "errorMessage": self.error_message,
            "details": dict(self.details),
        }


@attrs.define
class Recording:
    """What the scenario's server saw: each message the client sent, with its arrival time
    (monotonic seconds), and the client's exit."""

    generation: Generation
    received: list[tuple[float, JSON]] = attrs.field(factory=list)
    exit_code: int | None = None
    stderr: str = ""
    created: list[str] = attrs.field(factory=list)
    """The ids of the tasks the server created."""
    final: dict[str, str] = attrs.field(factory=dict)
    """Each created task's status when the client was done."""
    asked: list[JSON] = attrs.field(factory=list)
    """Every request the server sent the client (its questions), in order."""
    exchanges: list[tuple[JSON, JSON | None]] = attrs.field(factory=list)
    """The receiver scenario's requests to the client, each with its answer (None: none)."""
    posts: list[tuple[Mapping[str, str], Any]] = attrs.field(factory=list)
    """Every HTTP POST the client made: its headers (lower-case names) and its JSON body."""
    stdout: str = ""
    """The tail of what the client wrote on its stdout (kept out of the suite's output)."""
    seen_end: set[str] = attrs.field(factory=set)
    """The tasks whose end the server told the client: a ``tasks/get`` answered with a
    terminal status, or a ``tasks/result`` answered."""

    def followed(self, task_ids: Iterable[str]) -> str | None:
        """None when the client followed one of ``task_ids`` to its end and exited 0; else
        what it did instead (the rule is about the client's outcome, not the server's)."""
        ids = set(task_ids)
        if not ids:
            return "no task was created"
        if not ids & self.seen_end:
            return "the client never saw the task end (no terminal tasks/get or tasks/result)"
        if self.exit_code != 0:
            return f"the client saw the task end, then exited {self.exit_code}"
        return None

    def answers(self) -> dict[Any, JSON]:
        """The client's answers to the server's questions, by the question's id."""
        asked = {q.get("id") for q in self.asked}
        return {
            m["id"]: m
            for _, m in self.received
            if "method" not in m and m.get("id") in asked and ("result" in m or "error" in m)
        }

    def requests(self, method: str) -> list[tuple[float, JSON]]:
        return [(t, m) for t, m in self.received if m.get("method") == method and "id" in m]

    def notifications(self, method: str) -> list[JSON]:
        return [m for _, m in self.received if m.get("method") == method and "id" not in m]


def _opted_in_g1(params: JSON) -> bool:
    return isinstance(params.get("task"), dict)


def _opted_in_g2(params: JSON) -> bool:
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    caps = (meta or {}).get(_CLIENT_CAPABILITIES)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


OPTED_IN: dict[Generation, Callable[[JSON], bool]] = {G1: _opted_in_g1, G2: _opted_in_g2}
"""How a ``tools/call`` asks for a task, per generation."""
_POLL_KEY = {G1: "pollInterval", G2: "pollIntervalMs"}
_CACHEABLE: dict[Generation, JSON] = {G1: {}, G2: {"ttlMs": 0, "cacheScope": "private"}}
"""The CacheableResult fields a generation's discover and list results carry."""
_TTL_KEY = {G1: "ttl", G2: "ttlMs"}
_ASKS_TTL = frozenset({G1})
"""The generations where the client asks for a ttl (2026-07-28: the server alone sets it)."""
_TTL_ASKED = {G1: 60_000}
_ROUTED = frozenset({G2})
"""The generations whose task requests carry routing headers (E C57, E C58)."""


@attrs.frozen
class ClientRule:
    """One rule of the catalogue that binds a task **client**, as the suite judges it: its
    id (``C-nn``, ``E Cnn``, ``A-nn``; ``docs/rule-ids.md``), the spec's keyword, the
    generations it applies to, and what a client that keeps it does."""

    id: str
    level: str
    generations: frozenset[Generation]
    summary: str


def _client_rules(*rules: ClientRule) -> Mapping[str, ClientRule]:
    table: dict[str, ClientRule] = {}
    for r in rules:
        if r.id in table:
            raise ValueError(f"client rule {r.id} registered twice")
        table[r.id] = r
    return table


_G1_ONLY, _G2_ONLY = frozenset({G1}), frozenset({G2})
CLIENT_RULES: Mapping[str, ClientRule] = _client_rules(
    ClientRule("C-15", "SHOULD", _G1_ONLY, "ask for a task only when the caller opts in"),
    ClientRule(
        "E C18",
        "MUST",
        _G2_ONLY,
        "declares the extension (MUST then take either result) only on an opted-in call",
    ),
    ClientRule("C-18", "MAY", _G1_ONLY, "send the caller's task.ttl as asked, in ms"),
    ClientRule(
        "E C26",
        "MAY",
        _G2_ONLY,
        "the ttl backstop is for a non-null ttlMs: a null one is followed to its end",
    ),
    ClientRule("C-19", "SHOULD", _G1_ONLY, "respect pollInterval"),
    ClientRule("E C23", "SHOULD", _G2_ONLY, "respect pollIntervalMs"),
    ClientRule(
        "C-21",
        "SHOULD",
        _G1_ONLY,
        "on input_required, call tasks/result for the task (and answer the question it brings)",
    ),
    ClientRule(
        "C-25", "MUST", _G1_ONLY, "an answer to a task's question echoes its related-task _meta"
    ),
    ClientRule(
        "A-23",
        "reading",
        _G1_ONLY,
        "route a question by its content; one naming no task is still answered, and no task "
        "is guessed for it",
    ),
    ClientRule(
        "C-26", "MUST", _G1_ONLY, "cancel a task with tasks/cancel naming it (it ends cancelled)"
    ),
    ClientRule(
        "C-31",
        "MUST",
        _G1_ONLY,
        "a receiver declares tasks.requests.elicitation.create (and list, cancel it serves)",
    ),
    ClientRule("C-36", "MUST", _G1_ONLY, "a receiver accepts with a CreateTaskResult"),
    ClientRule(
        "C-37",
        "MUST",
        _G1_ONLY,
        "tasks/get carries createdAt, lastUpdatedAt and the task's ttl, kept as created",
    ),
    ClientRule(
        "C-38",
        "MUST",
        _G1_ONLY,
        "tasks/result gives the underlying result with related-task _meta",
    ),
    ClientRule("C-40", "MUST", _G1_ONLY, "tasks/list lists every task tasks/get finds"),
    ClientRule("C-41", "MUST", _G1_ONLY, "tasks/cancel of a terminal task is -32602"),
    ClientRule(
        "E C35", "MUST", _G2_ONLY, "cancel a task with tasks/cancel naming it (it ends cancelled)"
    ),
    ClientRule("C-30", "SHOULD", _G1_ONLY, "track a created task's id, and follow it to its end"),
    ClientRule(
        "E C22",
        "MUST",
        _G2_ONLY,
        "use the created task's id for every later call, following it to its end",
    ),
    ClientRule("E C31", "SHOULD", _G2_ONLY, "answer each inputRequests key once"),
    ClientRule("E C46", "MUST", _G2_ONLY, "echo requestState byte for byte"),
    ClientRule(
        "E C47",
        "MUST",
        _G2_ONLY,
        "an MRTR retry is a new request with a new id, repeating the call and answering the "
        "keys asked",
    ),
    ClientRule(
        "E C57",
        "MUST",
        _G2_ONLY,
        "MCP-Protocol-Version, Mcp-Method and (tools/call) Mcp-Name equal the body",
    ),
    ClientRule(
        "E C39",
        "MUST",
        _G2_ONLY,
        "a subscriptions/listen for tasks names them in params.notifications.taskIds",
    ),
    ClientRule(
        "E C24",
        "SHOULD",
        _G2_ONLY,
        "keep polling until the task ends: a listen refused or ended falls back to polls",
    ),
    ClientRule(
        "E C58", "MUST", _G2_ONLY, "tasks/get, update, cancel carry Mcp-Name equal to the taskId"
    ),
)
"""Every client rule a scenario judges, by id (``docs/rule-ids.md`` documents each; the
server rules are :data:`~mcp_tasks_client.conformance.RULES`)."""

_RULES: dict[str, dict[Generation, str]] = {
    "opt-in": {G1: "C-15", G2: "E C18"},
    "poll-interval": {G1: "C-19", G2: "E C23"},
    "cancel": {G1: "C-26", G2: "E C35"},
    "input-required-result": {G1: "C-21"},
    "odd-create": {G1: "C-30", G2: "E C22"},
    "input-requests-once": {G2: "E C31"},
    "ttl": {G1: "C-18", G2: "E C26"},
    "request-state": {G2: "E C46"},
    "related-task": {G1: "C-25"},
    "untagged-question": {G1: "A-23"},
    "routing-headers": {G2: "E C58"},
    "listen-fallback": {G2: "E C24"},
    "receiver": {G1: "C-36"},
}
"""The rule each scenario judges first, per generation."""
_ALSO_CITED: dict[str, tuple[str, ...]] = {
    "receiver": ("C-31", "C-37", "C-38", "C-40", "C-41"),
    "listen-fallback": ("E C39",),
    "request-state": ("E C47",),
    "routing-headers": ("E C57",),
    "cancel": ("E C58",),
    "input-requests-once": ("E C58",),
}
"""Further rules a scenario's checks cite."""


_NULL = object()
"""An override that sends JSON null (None leaves the field out)."""


RECEIVER_TTL = 120_000
"""The ttl (ms) the receiver scenario asks the client's task for."""
_ENDED = frozenset({"completed", "failed", "cancelled"})
SELF_PACED = 0.2
"""Seconds after which a scenario's answered 2025-11-25 task ends by itself when the client
waits on its blocking ``tasks/result`` rather than polling (C-20 allows either)."""


def _declares_receiving(received: Iterable[JSON]) -> bool:
    """Whether the client's initialize declared tasks.requests.elicitation.create (C-31)."""
    for message in received:
        if message.get("method") == "initialize":
            caps = (message.get("params") or {}).get("capabilities") or {}
            tasks = caps.get("tasks") if isinstance(caps, dict) else None
            requests = tasks.get("requests") if isinstance(tasks, dict) else None
            elicitation = requests.get("elicitation") if isinstance(requests, dict) else None
            return isinstance(elicitation, dict) and isinstance(elicitation.get("create"), dict)
    return False


class _ScenarioServer(FaultServer):
    """A FaultServer whose task snapshots carry the scenario's overrides (``None``: leave the
    field out)."""

    def __init__(
        self,
        generation: Generation,
        overrides: Mapping[str, Any],
        *,
        stale_after_update: bool = False,
        request_state: str | None = None,
        as_receiver: bool = False,
        wait: float = 30.0,
        **kw: Any,
    ) -> None:
        super().__init__(generation, self_paced=SELF_PACED, **kw)
        self.overrides = dict(overrides)
        self.stale_after_update = stale_after_update
        """Eventual consistency (E C33): the first tasks/get after a tasks/update is answered
        with the snapshot before it (the answered key still shown)."""
        self.request_state = request_state
        """The requestState an MRTR answer carries instead of the FaultServer's."""
        self.arrived: list[tuple[float, JSON]] = []
        """Every message read, with its arrival time (monotonic seconds)."""
        self.as_receiver = as_receiver
        """2025-11-25: while answering the client's plain tools/call, send it a task-augmented
        elicitation/create and drive that task with tasks/get, list, result and cancel."""
        self.exchanges: list[tuple[JSON, JSON | None]] = []
        """The receiver script's requests to the client, each with its answer (None: none)."""
        self.wait = wait
        """Seconds the receiver script waits for each answer: the client's whole run may be
        spent on one (C-38: ``tasks/result`` blocks until the task ends)."""
        self.seen_end: set[str] = set()
        """Tasks whose end an answer told the client (a terminal tasks/get, a tasks/result)."""
        self._waiting: dict[Any, tuple[anyio.Event, list[JSON]]] = {}
        self._asking: JSON | None = None
        self._stale: JSON | None = None

    def _m_server_discover(self, params: JSON) -> JSON:
        # A DiscoverResult is a CacheableResult: ttlMs and cacheScope are required (E C12);
        # a strict client falls back to initialize without them.
        return {**super()._m_server_discover(params), **_CACHEABLE[self.generation]}

    def _m_tools_list(self, params: JSON) -> JSON:
        # So is a 2026-07-28 list result: a strict client refuses one without them.
        return {**super()._m_tools_list(params), **_CACHEABLE[self.generation]}

    async def answer(self, message: JSON, channel: Any = None, *, session: Any = None) -> Any:
        self.arrived.append((time.monotonic(), message))
        method = message.get("method")
        if method is None and message.get("id") in self._waiting:
            event, slot = self._waiting.pop(message["id"])
            slot.append(message)
            event.set()
            return None
        if method == "tools/call" and self.as_receiver and channel is not None:
            await self._drive_receiver(channel)
        if method == "tasks/get" and self._stale is not None and "id" in message:
            stale, self._stale = self._stale, None
            return {"jsonrpc": "2.0", "id": message["id"], "result": stale}
        out = await super().answer(message, channel, session=session)
        self._note_end(message, out)
        result = out.get("result") if isinstance(out, dict) else None
        if not isinstance(result, dict):
            return out
        if method == "tasks/get" and result.get("status") == "input_required":
            self._asking = json.loads(json.dumps(result))
        elif method == "tasks/update" and self.stale_after_update and self._asking is not None:
            self._stale, self._asking = self._asking, None
        elif method == "tools/call" and self.request_state and "requestState" in result:
            result["requestState"] = self.request_state
        return out

    def _note_end(self, message: JSON, out: Any) -> None:
        """Record the task whose end ``out``, the answer to ``message``, tells the client."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        task_id = (params or {}).get("taskId")
        if not isinstance(out, dict) or not isinstance(task_id, str):
            return
        method = message.get("method")
        result = out.get("result")
        told = (method == "tasks/result" and ("result" in out or "error" in out)) or (
            method == "tasks/get" and isinstance(result, dict) and result.get("status") in _ENDED
        )
        if told:
            self.seen_end.add(task_id)

    async def _ask_client(self, channel: Any, method: str, params: JSON) -> JSON | None:
        """Send the client one request; its answer (None if none came in time)."""
        request_id = f"receiver-{len(self.exchanges) + 1}"
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        event, slot = anyio.Event(), list[JSON]()
        self._waiting[request_id] = (event, slot)
        self.sent_requests.append(request)
        await channel.push(request)
        with anyio.move_on_after(self.wait):
            await event.wait()
        self._waiting.pop(request_id, None)
        answer = slot[0] if slot else None
        self.exchanges.append((request, answer))
        return answer

    async def _drive_receiver(self, channel: Any) -> None:
        """The client as receiver (C-31..C-41): a task-augmented question, then its task
        driven: tasks/get, tasks/list, tasks/result (blocks until it ends), tasks/cancel of
        the ended task (-32602 expected)."""
        if not _declares_receiving(self.received):
            return  # judged: the client did not declare it serves such tasks (C-31)
        params = {
            "mode": "form",
            "message": "run me as a task?",
            "requestedSchema": {"type": "object", "properties": {}},
            "task": {"ttl": RECEIVER_TTL},
        }
        created = await self._ask_client(channel, "elicitation/create", params)
        result = (created or {}).get("result")
        task = result.get("task") if isinstance(result, dict) else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            return
        await self._ask_client(channel, "tasks/get", {"taskId": task_id})
        await self._ask_client(channel, "tasks/list", {})
        await self._ask_client(channel, "tasks/result", {"taskId": task_id})
        await self._ask_client(channel, "tasks/cancel", {"taskId": task_id})

    def _task(self, task: Any, *, detailed: bool = True) -> JSON:
        out = super()._task(task, detailed=detailed)
        for key, value in self.overrides.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = None if value is _NULL else value
        return out


def _body(request: Any) -> Any:
    try:
        return request.json
    except ValueError:  # not JSON: no body to judge
        return None


Judge = Callable[[Recording, str], list[Check]]


@attrs.frozen
class Scenario:
    """One scripted server and what it judges."""

    name: str
    description: str
    generations: frozenset[Generation]
    context: Mapping[str, Any]
    judge: Judge
    overrides: Callable[[Generation], Mapping[str, Any]] = lambda g: {}
    steps: int = 2
    ask_on: str = "result"
    stale_after_update: bool = False
    request_state: str | None = None
    extra_context: Callable[[Generation], Mapping[str, Any]] = lambda g: {}
    """Context keys that differ by generation."""
    as_receiver: bool = False
    """The server makes the client a task receiver (2025-11-25)."""
    breaks: frozenset[str] = frozenset()
    """Server rules the scenario's server breaks (a question with no related-task _meta)."""

    def context_for(self, generation: Generation) -> JSON:
        return {**self.context, **self.extra_context(generation)}

    def rule(self, generation: Generation) -> str:
        """The rule the scenario judges first in ``generation``."""
        return _RULES[self.name][generation]

    def cites(self) -> frozenset[str]:
        """Every client rule the scenario's checks may cite (in :data:`CLIENT_RULES`)."""
        return frozenset(_RULES[self.name].values()) | frozenset(_ALSO_CITED.get(self.name, ()))


def _ok(check_id: str, rule: str, description: str, **details: Any) -> Check:
    return Check(check_id, rule, "SUCCESS", description, None, details)


def _bad(check_id: str, rule: str, description: str, error: str, **details: Any) -> Check:
    return Check(check_id, rule, "FAILURE", description, error, details)


def _task_calls(rec: Recording) -> list[JSON]:
    return [m for _, m in rec.requests("tools/call")]


def _judge_opt_in(rec: Recording, rule: str) -> list[Check]:
    calls = _task_calls(rec)
    what = "a plain call of a task-capable tool carries no task request"
    if not calls:
        return [_bad("opt-in-no-task", rule, what, "the client made no tools/call")]
    opted = [c for c in calls if OPTED_IN[rec.generation](c.get("params") or {})]
    if opted:
        return [
            _bad(
                "opt-in-no-task",
                rule,
                what,
                "the client asked for a task it was not asked to start",
                messages=opted[:2],
            )
        ]
    return [_ok("opt-in-no-task", rule, what, messages=calls[:1])]


POLL_MS = 300


def _task_ids(rec: Recording) -> set[str]:
    return {
        str(m["params"]["taskId"])
        for _, m in rec.received
        if isinstance(m.get("params"), dict) and isinstance(m["params"].get("taskId"), str)
    }


def _judge_poll_interval(rec: Recording, rule: str) -> list[Check]:
    what = f"tasks/get of a task keeps its pollInterval ({POLL_MS} ms), no storm"
    gets = rec.requests("tasks/get")
    if len(gets) < 2:
        # A client that reached the end without two polls (a 2025-11-25 one waiting in
        # tasks/result, which C-20 allows) kept the interval; one that never got there is
        # judged on nothing.
        if rec.followed(rec.created) is None:
            return [_ok("poll-interval", rule, what, polls=len(gets))]
        return [_bad("poll-interval", rule, what, f"{len(gets)} tasks/get: nothing to judge")]
    by_task: dict[str, list[float]] = {}
    for t, m in gets:
        by_task.setdefault(str((m.get("params") or {}).get("taskId")), []).append(t)
    gaps = [b - a for times in by_task.values() for a, b in itertools.pairwise(times)]
    # A slower client keeps the rule; a noisy machine only makes gaps longer. 10 % slack for
    # the two clocks' rounding.
    short = [round(g * 1000) for g in gaps if g < POLL_MS / 1000 * 0.9]
    if short:
        return [
            _bad(
                "poll-interval",
                rule,
                what,
                f"{len(short)} of {len(gaps)} polls came sooner than {POLL_MS} ms",
                polls=len(gets),
                short_gaps_ms=short[:5],
            )
        ]
    return [
        _ok("poll-interval", rule, what, polls=len(gets), gaps_ms=[round(g * 1000) for g in gaps])
    ]


def _judge_cancel(rec: Recording, rule: str) -> list[Check]:
    what = "a task is cancelled with tasks/cancel, never notifications/cancelled"
    out: list[Check] = []
    call_ids = {m.get("id") for m in _task_calls(rec)}
    wrong = [
        m
        for m in rec.notifications("notifications/cancelled")
        if (m.get("params") or {}).get("requestId") in call_ids
    ]
    if wrong:
        out.append(
            _bad(
                "cancel-not-notification",
                rule,
                what,
                "notifications/cancelled named the task's tools/call",
                messages=wrong[:2],
            )
        )
    cancels = [m for _, m in rec.requests("tasks/cancel")]
    named = [m for m in cancels if (m.get("params") or {}).get("taskId") in rec.created]
    targets = {(m.get("params") or {}).get("taskId") for m in named}
    ended = {t: s for t, s in rec.final.items() if t in targets and s == "cancelled"}
    if not cancels:
        out.append(_bad("cancel-with-tasks-cancel", rule, what, "no tasks/cancel was sent"))
    elif not named:
        error = "tasks/cancel named no task the server created"
        out.append(_bad("cancel-with-tasks-cancel", rule, what, error, messages=cancels[:2]))
    elif not ended:
        error = f"the task named did not end cancelled: {rec.final}"
        out.append(_bad("cancel-with-tasks-cancel", rule, what, error, messages=named[:1]))
    else:
        out.append(_ok("cancel-with-tasks-cancel", rule, what, messages=named[:1], final=ended))
    if rec.generation in _ROUTED and cancels:  # E C58: the cancel names its task in Mcp-Name
        out.append(_judge_task_header(rec, "tasks/cancel", "cancel-routing-header"))
    return out


def _judge_input_required_result(rec: Recording, rule: str) -> list[Check]:
    what = "on input_required the client opens a blocking tasks/result for its task"
    results = [
        m
        for _, m in rec.requests("tasks/result")
        if (m.get("params") or {}).get("taskId") in rec.created
    ]
    # The answer to the question the server sent on that stream, by the question's id: any
    # other response (to another id, or an error) leaves the question open.
    answers = [a for a in rec.answers().values() if "result" in a]
    out = []
    if not results:
        out.append(
            _bad(
                "input-required-result",
                rule,
                what,
                "the task was input_required; the client never sent tasks/result, so its "
                "question was never delivered",
            )
        )
    else:
        out.append(_ok("input-required-result", rule, what, messages=results[:1]))
    asked = "the question on the tasks/result stream is answered"
    if answers:
        out.append(_ok("input-required-answered", rule, asked, messages=answers[:1]))
    else:
        out.append(_bad("input-required-answered", rule, asked, "no answer to the question"))
    return out


def _judge_odd_create(rec: Recording, rule: str) -> list[Check]:
    what = "a created task whose answer lacks ttl is kept: its id is polled to its end"
    calls = _task_calls(rec)
    if not rec.created:
        error = "asked to start a task, the client created none"
        return [_bad("odd-create-kept", rule, what, error, messages=calls[:1])]
    later = _task_ids(rec) & set(rec.created)
    if not later:
        return [
            _bad(
                "odd-create-kept",
                rule,
                what,
                "the task was created, and the client never named it again: its id is lost",
                messages=calls[:1],
            )
        ]
    short = rec.followed(later)
    if short is not None:
        error = f"the client named the task again, but did not follow it to its end: {short}"
        return [_bad("odd-create-kept", rule, what, error, task_ids=sorted(later))]
    return [_ok("odd-create-kept", rule, what, task_ids=sorted(later))]


def _judge_input_requests_once(rec: Recording, rule: str) -> list[Check]:
    what = "each inputRequests key is answered once, also when a later poll still shows it"
    answered: dict[str, int] = {}
    updates = [m for _, m in rec.requests("tasks/update")]
    for m in updates:
        responses = (m.get("params") or {}).get("inputResponses")
        for key in responses if isinstance(responses, dict) else ():
            answered[key] = answered.get(key, 0) + 1
    again = {k: n for k, n in answered.items() if n > 1}
    if again:
        error = f"answered again after the ack: {again} (the stale poll still showed the key)"
        return [_bad("input-requests-once", rule, what, error, messages=updates[:3])]
    if set(answered) != {"q1", "q2"}:
        error = f"the keys answered were {sorted(answered)}, not q1 and q2"
        return [_bad("input-requests-once", rule, what, error, messages=updates[:3])]
    # E C58: each tasks/update names its task in Mcp-Name too
    header = _judge_task_header(rec, "tasks/update", "update-routing-header")
    return [_ok("input-requests-once", rule, what, messages=updates[:2]), header]


TRICKY_STATE = ' sealed:"\u00e9\u2713" \\n+/= '
"""A requestState a client can only echo right by not touching it: spaces at both ends,
quotes, non-ASCII, a backslash."""


def _judge_request_state(rec: Recording, rule: str) -> list[Check]:
    calls = _task_calls(rec)
    first = [c for c in calls if "inputResponses" not in (c.get("params") or {})]
    retries = [c for c in calls if "inputResponses" in (c.get("params") or {})]
    echo = "the MRTR retry echoes requestState byte for byte"
    fresh = "the MRTR retry is a new request with a new id"
    if not first or not retries:
        error = "the client never retried the call with inputResponses"
        return [_bad("request-state-echoed", rule, echo, error, messages=calls[:2])]
    out = []
    wrong = [r for r in retries if (r.get("params") or {}).get("requestState") != TRICKY_STATE]
    if wrong:
        got = (wrong[0].get("params") or {}).get("requestState")
        error = f"sent {got!r} back for {TRICKY_STATE!r}"
        out.append(_bad("request-state-echoed", rule, echo, error, messages=wrong[:1]))
    else:
        out.append(_ok("request-state-echoed", rule, echo, messages=retries[:1]))
    out.append(_judge_retry(rec, first[0], retries, fresh))
    return out


def _judge_retry(rec: Recording, first: JSON, retries: list[JSON], what: str) -> Check:
    """E C47 whole: each retry is a new request with a new id, repeats the original call
    (its tool, arguments and task opt-in) and answers the keys that were asked."""
    sent_before: set[Any] = set()
    for _, message in rec.received:
        if any(message is r for r in retries) and message.get("id") in sent_before:
            error = f"the retry reused id {message.get('id')!r}"
            return _bad("request-state-new-id", "E C47", what, error, messages=[message])
        if "method" in message and "id" in message:
            sent_before.add(message["id"])
    original: JSON = first.get("params") or {}
    for retry in retries:
        params: JSON = retry.get("params") or {}
        if params.get("name") != original.get("name") or (params.get("arguments") or {}) != (
            original.get("arguments") or {}
        ):
            error = "the retry does not repeat the original call's tool and arguments"
            return _bad("request-state-new-id", "E C47", what, error, messages=[first, retry])
        if OPTED_IN[rec.generation](params) != OPTED_IN[rec.generation](original):
            error = "the retry does not repeat the original call's task opt-in"
            return _bad("request-state-new-id", "E C47", what, error, messages=[first, retry])
        answered = params.get("inputResponses")
        if not isinstance(answered, dict) or set(answered) != {"confirm"}:
            keys = sorted(answered) if isinstance(answered, dict) else answered
            error = f"the retry answers {keys}, not the key asked ['confirm']"
            return _bad("request-state-new-id", "E C47", what, error, messages=[retry])
    return _ok("request-state-new-id", "E C47", what, messages=retries[:1])


TTL_MS = _TTL_ASKED[G1]


def _judge_ttl(rec: Recording, rule: str) -> list[Check]:
    out: list[Check] = []
    calls = _task_calls(rec)
    asked = "the ttl the caller asked for is the one sent"
    if rec.generation in _ASKS_TTL:  # a generation where the client asks for a ttl
        sent = [(c.get("params") or {}).get("task", {}).get("ttl") for c in calls]
        if sent and all(ttl == TTL_MS for ttl in sent):
            out.append(_ok("ttl-as-asked", rule, asked, messages=calls[:1]))
        else:
            error = f"asked for {TTL_MS} ms, the client sent {sent}"
            out.append(_bad("ttl-as-asked", rule, asked, error, messages=calls[:1]))
    kept = "a task whose ttl is null (unlimited) is followed to its end"
    short = rec.followed(rec.created)
    if short is None:
        out.append(_ok("ttl-null-followed", rule, kept, task_ids=sorted(rec.seen_end)))
    else:
        error = f"the task was not followed to its end: {short}"
        out.append(_bad("ttl-null-followed", rule, kept, error, messages=calls[:1]))
    return out


_RELATED = "io.modelcontextprotocol/related-task"


def _related(message: JSON) -> Any:
    """The related-task taskId a message's params (a request) or result (an answer) names."""
    part = message.get("params") if "method" in message else message.get("result")
    meta = part.get("_meta") if isinstance(part, dict) else None
    tag = meta.get(_RELATED) if isinstance(meta, dict) else None
    return tag.get("taskId") if isinstance(tag, dict) else None


def _judge_related_task(rec: Recording, rule: str) -> list[Check]:
    what = "the answer to a task's question echoes its related-task _meta"
    tagged = [q for q in rec.asked if _related(q) is not None]
    answers = rec.answers()
    if not tagged:
        return [_bad("related-task-echoed", rule, what, "the server asked no tagged question")]
    unanswered = [q for q in tagged if q.get("id") not in answers]
    if unanswered:
        error = "the task's question was never answered"
        return [_bad("related-task-echoed", rule, what, error, questions=unanswered[:1])]
    wrong = [(q, answers[q["id"]]) for q in tagged if _related(answers[q["id"]]) != _related(q)]
    if wrong:
        question, answer = wrong[0]
        error = (
            f"the question named task {_related(question)!r}; the answer's related-task "
            f"names {_related(answer)!r}"
        )
        return [_bad("related-task-echoed", rule, what, error, messages=[question, answer])]
    return [_ok("related-task-echoed", rule, what, messages=[answers[tagged[0]["id"]]])]


def _judge_untagged_question(rec: Recording, rule: str) -> list[Check]:
    answered = "a question naming no task is answered all the same"
    guessed = "no task is guessed for a question that names none"
    untagged = [q for q in rec.asked if _related(q) is None]
    answers = rec.answers()
    if not untagged:
        return [_bad("untagged-answered", rule, answered, "the server asked no question")]
    out: list[Check] = []
    got = [answers[q["id"]] for q in untagged if q.get("id") in answers]
    results = [a for a in got if "result" in a]
    if len(results) < len(untagged):
        error = "the question with no related-task _meta was dropped or refused"
        out.append(_bad("untagged-answered", rule, answered, error, messages=[*untagged, *got][:2]))
    else:
        out.append(_ok("untagged-answered", rule, answered, messages=results[:1]))
    invented = [a for a in results if _related(a) is not None]
    if invented:
        error = f"the answer names task {_related(invented[0])!r}, which the question did not"
        out.append(_bad("untagged-not-guessed", rule, guessed, error, messages=invented[:1]))
    elif results:
        out.append(_ok("untagged-not-guessed", rule, guessed, messages=results[:1]))
    return out


def _header_value(value: str | None) -> str | None:
    """A routing header's value, its ``=?base64?...?=`` form decoded (E C59)."""
    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return value
    return value


_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def _judge_task_header(rec: Recording, method: str, check_id: str) -> Check:
    """E C58 for one method: every ``method`` request the client POSTed carries ``Mcp-Method``
    equal to it and ``Mcp-Name`` equal to its ``params.taskId`` (E C59 decoded)."""
    what = f"{method} carries Mcp-Method {method} and Mcp-Name equal to its taskId"
    sent = [
        (headers, body)
        for headers, body in rec.posts
        if isinstance(body, dict) and body.get("method") == method and "id" in body
    ]
    if not sent:
        return _bad(check_id, "E C58", what, f"no {method} request to judge")
    for headers, body in sent:
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        task_id = (params or {}).get("taskId")
        if headers.get("mcp-method") != method or _header_value(headers.get("mcp-name")) != task_id:
            seen = {k: headers.get(k) for k in ("mcp-method", "mcp-name")}
            error = f"{method} without Mcp-Name equal to the taskId"
            return _bad(check_id, "E C58", what, error, headers=seen, taskId=task_id)
    return _ok(check_id, "E C58", what, requests=len(sent))


def _judge_routing_headers(rec: Recording, rule: str) -> list[Check]:
    equal = "MCP-Protocol-Version, Mcp-Method and a tools/call's Mcp-Name equal the body"
    named = "tasks/get, tasks/update and tasks/cancel carry Mcp-Name equal to the taskId"
    off: list[JSON] = []
    task_named: list[JSON] = []
    task_off: list[JSON] = []
    for headers, body in rec.posts:
        if not isinstance(body, dict) or "method" not in body or "id" not in body:
            continue
        params: JSON = body["params"] if isinstance(body.get("params"), dict) else {}
        meta: JSON = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        version = meta.get("io.modelcontextprotocol/protocolVersion", rec.generation.value)
        sent = {
            "method": body["method"],
            "id": body["id"],
            "mcp-method": headers.get("mcp-method"),
            "mcp-protocol-version": headers.get("mcp-protocol-version"),
            "mcp-name": headers.get("mcp-name"),
        }
        wrong = headers.get("mcp-method") != body["method"] or (
            headers.get("mcp-protocol-version") != version
        )
        if body["method"] == "tools/call":
            wrong = wrong or _header_value(headers.get("mcp-name")) != params.get("name")
        if wrong:
            off.append(sent)
        if body["method"] in _TASK_METHODS:
            if _header_value(headers.get("mcp-name")) == params.get("taskId"):
                task_named.append(sent)
            else:
                task_off.append({**sent, "taskId": params.get("taskId")})
    out: list[Check] = []
    if off:
        methods = sorted({str(r["method"]) for r in off})
        error = f"headers that differ from the body on {', '.join(methods)}"
        out.append(_bad("routing-headers-equal", "E C57", equal, error, requests=off[:3]))
    else:
        out.append(_ok("routing-headers-equal", "E C57", equal, requests=len(rec.posts)))
    if task_off:
        methods = sorted({str(r["method"]) for r in task_off})
        error = f"{', '.join(methods)} without Mcp-Name equal to the taskId"
        out.append(_bad("routing-headers-task", rule, named, error, requests=task_off[:3]))
    elif not task_named:
        out.append(_bad("routing-headers-task", rule, named, "no tasks/* request to judge"))
    else:
        out.append(_ok("routing-headers-task", rule, named, requests=task_named[:2]))
    return out


def _judge_listen_fallback(rec: Recording, rule: str) -> list[Check]:
    asked = "the listen names the task in params.notifications.taskIds"
    kept = "the listen refused, the client polls the task to its end"
    listens = rec.requests("subscriptions/listen")
    if not listens:
        return [_bad("listen-asked", "E C39", asked, "asked to listen, the client sent none")]
    out: list[Check] = []
    named = [
        m
        for _, m in listens
        if set(rec.created)
        & set((((m.get("params") or {}).get("notifications") or {}).get("taskIds")) or ())
    ]
    if named:
        out.append(_ok("listen-asked", "E C39", asked, messages=named[:1]))
    else:
        error = f"no listen named the task {rec.created}"
        out.append(_bad("listen-asked", "E C39", asked, error, messages=[listens[0][1]]))
    refused_at = listens[0][0]
    later = [m for t, m in rec.requests("tasks/get") if t >= refused_at]
    short = rec.followed(rec.created)
    if short is None and later:
        out.append(_ok("listen-fallback", rule, kept, polls_after_listen=len(later)))
    else:
        error = f"{len(later)} tasks/get after the refused listen; {short or 'the task ended'}"
        out.append(_bad("listen-fallback", rule, kept, error, final=rec.final))
    return out


def _exchange(rec: Recording, method: str) -> tuple[JSON, JSON | None] | None:
    return next((e for e in rec.exchanges if e[0].get("method") == method), None)


def _judge_receiver(rec: Recording, rule: str) -> list[Check]:
    declared = "the client declares tasks.requests.elicitation.create when asked to receive"
    if not _declares_receiving(m for _, m in rec.received):
        error = "its initialize declared no tasks.requests.elicitation.create: no task to serve"
        return [_bad("receiver-declared", "C-31", declared, error)]
    out = [_ok("receiver-declared", "C-31", declared)]
    created = _exchange(rec, "elicitation/create")
    accept = "a task-augmented elicitation/create is accepted with a CreateTaskResult"
    answer: JSON = (created[1] or {}) if created else {}
    result: JSON = answer["result"] if isinstance(answer.get("result"), dict) else {}
    task = result.get("task") if isinstance(result.get("task"), dict) else None
    if task is None or not isinstance(task.get("taskId"), str):
        error = "the answer is not a CreateTaskResult" if answer else "no answer came"
        out.append(_bad("receiver-created", rule, accept, error, messages=[answer]))
        return out
    out.append(_ok("receiver-created", rule, accept, messages=[answer]))
    task_id = task["taskId"]

    def answered(method: str) -> tuple[JSON, JSON]:
        exchange = _exchange(rec, method)
        reply = (exchange[1] or {}) if exchange else {}
        body = reply.get("result")
        return reply, body if isinstance(body, dict) else {}

    reply, got = answered("tasks/get")
    what = "tasks/get carries createdAt, lastUpdatedAt and the ttl the task was created with"
    missing = [k for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl") if k not in got]
    if missing or got.get("ttl") != task.get("ttl", got.get("ttl")):
        error = f"missing {missing}" if missing else f"ttl {got.get('ttl')} != {task.get('ttl')}"
        out.append(_bad("receiver-get", "C-37", what, error, messages=[reply]))
    else:
        out.append(_ok("receiver-get", "C-37", what, messages=[reply]))
    reply, got = answered("tasks/list")
    what = "tasks/list lists the task"
    ids = [t.get("taskId") for t in got.get("tasks") or () if isinstance(t, dict)]
    if task_id in ids:
        out.append(_ok("receiver-list", "C-40", what, messages=[reply]))
    else:
        error = f"listed {len(ids)} task(s), not the one it created"
        out.append(_bad("receiver-list", "C-40", what, error, messages=[reply]))
    reply, got = answered("tasks/result")
    what = "tasks/result gives the elicitation's answer with related-task _meta"
    if "action" in got and _related(reply) == task_id:
        out.append(_ok("receiver-result", "C-38", what, messages=[reply]))
    else:
        if not reply:
            error = "no answer came"
        elif "action" not in got:
            error = "the answer is no ElicitResult"
        elif _related(reply) is None:
            error = "the ElicitResult carries no related-task _meta"
        else:
            error = "the ElicitResult's related-task _meta names another task"
        out.append(_bad("receiver-result", "C-38", what, error, messages=[reply]))
    ended = bool(reply)  # tasks/result answers once the task has ended (C-38)
    reply, got = answered("tasks/cancel")
    code = (reply.get("error") or {}).get("code") if isinstance(reply.get("error"), dict) else None
    if not ended and reply:
        # tasks/result never answered, so the task may still be running: C-41 then asks for
        # the task set cancelled before the answer, not -32602 (that is for a finished task)
        what = "tasks/cancel of a task still running answers it cancelled"
        if got.get("status") == "cancelled" and got.get("taskId") == task_id:
            out.append(_ok("receiver-cancel", "C-41", what, messages=[reply]))
        else:
            error = f"answered {code if code is not None else got.get('status')!r}, not cancelled"
            out.append(_bad("receiver-cancel", "C-41", what, error, messages=[reply]))
        return out
    what = "tasks/cancel of the ended task is refused with -32602"
    if code == -32602:
        out.append(_ok("receiver-cancel", "C-41", what, messages=[reply]))
    else:
        # The message names no id or time (the published table must be reproducible): the
        # reply itself is in the details.
        if not reply:
            error = "no answer came"
        elif code is not None:
            error = f"answered error {code}, not -32602"
        else:
            status = (reply.get("result") or {}).get("status")
            error = f"answered a result (status {status!r}), not -32602"
        out.append(_bad("receiver-cancel", "C-41", what, error, messages=[reply]))
    return out


BOTH = frozenset({G1, G2})
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "opt-in",
            "asked for a plain call of a task-capable tool, the client asks for no task",
            BOTH,
            {"tool": "echo", "arguments": {"text": "plain"}, "task": False},
            _judge_opt_in,
        ),
        Scenario(
            "poll-interval",
            f"the server asks for {POLL_MS} ms between polls; the client keeps it",
            BOTH,
            {"tool": "echo", "arguments": {"text": "poll"}, "task": True},
            _judge_poll_interval,
            overrides=lambda g: {_POLL_KEY[g]: POLL_MS},
            steps=3,
        ),
        Scenario(
            "cancel",
            "the client cancels its running task with tasks/cancel",
            BOTH,
            {"tool": "slow", "arguments": {}, "task": True, "cancel": True},
            _judge_cancel,
        ),
        Scenario(
            "input-required-result",
            "the task needs input: the client opens tasks/result and answers on it",
            frozenset({G1}),
            {"tool": "ask", "arguments": {}, "task": True, "answer": {"ok": True}},
            _judge_input_required_result,
        ),
        Scenario(
            "odd-create",
            "the created task's answer lacks ttl; the client keeps its id",
            BOTH,
            {"tool": "echo", "arguments": {"text": "odd"}, "task": True},
            _judge_odd_create,
            overrides=lambda g: {_TTL_KEY[g]: None},
        ),
        Scenario(
            "ttl",
            f"the caller asks for a {TTL_MS} ms ttl; the server keeps the task unlimited (null)",
            BOTH,
            {"tool": "echo", "arguments": {"text": "ttl"}, "task": True},
            _judge_ttl,
            overrides=lambda g: {_TTL_KEY[g]: _NULL},
            extra_context=lambda g: {"ttl": _TTL_ASKED.get(g)},
        ),
        Scenario(
            "input-requests-once",
            "the task asks q1 then q2; the poll after each ack still shows the answered key",
            frozenset({G2}),
            {"tool": "ask", "arguments": {}, "task": True, "answer": {"ok": True}},
            _judge_input_requests_once,
            stale_after_update=True,
        ),
        Scenario(
            "related-task",
            "the task asks a question tagged with its related-task _meta; the answer echoes it",
            frozenset({G1}),
            {"tool": "ask", "arguments": {}, "task": True, "answer": {"ok": True}},
            _judge_related_task,
        ),
        Scenario(
            "untagged-question",
            "the task's question comes without related-task _meta; the client still answers it",
            frozenset({G1}),
            {"tool": "ask", "arguments": {}, "task": True, "answer": {"ok": True}},
            _judge_untagged_question,
            breaks=frozenset({"V-21"}),
        ),
        Scenario(
            "routing-headers",
            "every request's routing headers equal its body; a task request names its taskId",
            frozenset({G2}),
            {"tool": "echo", "arguments": {"text": "headers"}, "task": True},
            _judge_routing_headers,
        ),
        Scenario(
            "listen-fallback",
            "the client follows its task with subscriptions/listen; the server refuses it "
            "(-32601): the client polls the task to its end",
            frozenset({G2}),
            {"tool": "echo", "arguments": {"text": "listen"}, "task": True, "listen": True},
            _judge_listen_fallback,
        ),
        Scenario(
            "receiver",
            "while answering a plain call, the server sends the client a task-augmented "
            "elicitation/create and drives that task: tasks/get, list, result, cancel",
            frozenset({G1}),
            {
                "tool": "echo",
                "arguments": {"text": "receiver"},
                "task": False,
                "receive": True,
                "answer": {"ok": True},
            },
            _judge_receiver,
            as_receiver=True,
        ),
        Scenario(
            "request-state",
            "the task-only tool asks by MRTR first, with an opaque requestState to echo",
            frozenset({G2}),
            {"tool": "confirm", "arguments": {}, "task": True, "answer": {"ok": True}},
            _judge_request_state,
            request_state=TRICKY_STATE,
        ),
    )
}
"""Every scenario, by name."""


def scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        known = ", ".join(SCENARIOS)
        raise UsageError(f"no client scenario {name!r} (known: {known})") from None


async def run_scenario(
    command: Sequence[str],
    name: str,
    generation: Generation,
    *,
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> list[Check]:
    """Run the client ``command`` (the URL appended) against scenario ``name`` in
    ``generation``; the scenario's checks. UsageError for an unknown scenario or one that
    does not speak ``generation``.
    Deadline: ``timeout`` for the client's run; past it the client is killed (by its pid)
    and judged on what it sent. Cancelled: the client is killed and the server stopped."""
    chosen = scenario(name)
    if generation not in chosen.generations:
        raise UsageError(f"scenario {name!r} is not in {generation.value}")
    rec = Recording(generation)
    server = _ScenarioServer(
        generation,
        chosen.overrides(generation),
        steps=chosen.steps,
        ask_on=chosen.ask_on,
        stale_after_update=chosen.stale_after_update,
        request_state=chosen.request_state,
        breaks=chosen.breaks,
        as_receiver=chosen.as_receiver,
        wait=timeout,
    )
    async with server.http() as http:

        async def notified(request: Any, conn: Any) -> None:
            if isinstance(request.json, dict):  # the FaultServer reads no notification
                server.arrived.append((time.monotonic(), request.json))
            await conn.head(202, {"Content-Length": "0"})

        http.on_notification = notified
        environment = {
            **(os.environ if env is None else env),
            "MCP_CONFORMANCE_SCENARIO": name,
            "MCP_CONFORMANCE_PROTOCOL_VERSION": generation.value,
            "MCP_CONFORMANCE_CONTEXT": json.dumps(chosen.context_for(generation)),
        }
        # The client's own output is kept for the checks' details, never mixed into the
        # suite's (whose stdout may be a stream of JSON lines).
        with tempfile.TemporaryFile() as errors, tempfile.TemporaryFile() as output:
            process = await anyio.open_process(
                [*command, http.url], env=environment, stdin=None, stdout=output, stderr=errors
            )
            try:
                with anyio.move_on_after(timeout):
                    await process.wait()
            finally:
                if process.returncode is None:
                    process.kill()
                    with anyio.CancelScope(shield=True):
                        await process.wait()
                errors.seek(0)
                rec.stderr = errors.read()[-4000:].decode(errors="replace")
                output.seek(0)
                rec.stdout = output.read()[-4000:].decode(errors="replace")
        rec.exit_code = process.returncode
        rec.posts = [(r.headers, _body(r)) for r in http.received if r.http_method == "POST"]
    rec.received = list(server.arrived)
    rec.asked = list(server.sent_requests)
    rec.exchanges = list(server.exchanges)
    rec.created = list(server.tasks)
    rec.final = {task_id: task.status for task_id, task in server.tasks.items()}
    rec.seen_end = set(server.seen_end)
    checks = chosen.judge(rec, chosen.rule(generation))
    # Every check says how the client ended (its exit code); a failure carries the tails of
    # its stderr and stdout too.
    ended: JSON = {"exitCode": rec.exit_code}
    tails: JSON = {
        "stderr": rec.stderr.strip().splitlines()[-8:],
        "stdout": rec.stdout.strip().splitlines()[-8:],
    }
    return [
        attrs.evolve(c, details={**c.details, **ended, **(tails if c.status == "FAILURE" else {})})
        for c in checks
    ]


def render_client_rules() -> str:
    """The table of :data:`CLIENT_RULES` that ``docs/rule-ids.md`` carries (a test keeps it
    equal): id, keyword, generations, what a client keeping it does, the scenarios judging it."""
    lines = [
        "| Id | Level | Generations | What a client keeping it does | Scenarios |",
        "|---|---|---|---|---|",
    ]
    for r in CLIENT_RULES.values():
        gens = ", ".join(g.value for g in sorted(r.generations, key=lambda g: g.value))
        names = ", ".join(f"`{s.name}`" for s in SCENARIOS.values() if r.id in s.cites())
        lines.append(f"| `{r.id}` | {r.level} | {gens} | {r.summary} | {names} |")
    return "\n".join(lines) + "\n"


def render_table(rows: Iterable[tuple[str, str, Check]]) -> str:
    """A plain table: scenario, generation, check, rule, status, what went wrong."""
    lines = [("SCENARIO", "VERSION", "CHECK", "RULE", "STATUS", "ERROR")]
    for name, version, c in rows:
        lines.append((name, version, c.id, c.rule, c.status, c.error_message or ""))
    widths = [max(len(row[i]) for row in lines) for i in range(5)]
    return (
        "\n".join(
            "  ".join([*(row[i].ljust(widths[i]) for i in range(5)), row[5]]).rstrip()
            for row in lines
        )
        + "\n"
    )
