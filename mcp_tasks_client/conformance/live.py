"""A live probe: scripted checks against a running server, one verdict per registered rule.

:func:`probe` opens one connection in the generation asked for, with the strict
:class:`~mcp_tasks_client.conformance.Validator` watching every message, and runs a script
that only reads unless told otherwise: the opening, ``tools/list``, ``tasks/list``, unknown
task ids, the methods 2026-07-28 removed. A tool is called only when the caller names it in
``safe_tools`` (with its arguments); then it is called plainly and as a task, waited on,
read, cancelled, and its questions answered (each required property of a form gets a plain
value). Tools the server advertises are never called unasked.

Over HTTP the validator also sees each exchange's status, content type and session id
(V-27a-d, E C7, E S24). For V-28 (2025-11-25, HTTP, ``tasks.list`` declared, a safe
task-capable tool) the probe opens a second session with the same headers and lists tasks:
without credentials, seeing the first session's task means the server tells no requestor
apart (a warning); with credentials both sessions are one requestor, so it says nothing.
Last (2025-11-25, a URL), V-27's two probe-only parts on a session of the probe's own: a
request with a bogus ``MCP-Protocol-Version`` must get 400, and once the server accepted a
``DELETE`` of that session, a request in it must get 404 (a 405 to the DELETE: the server does
not let clients end sessions, so not applicable).

The :class:`ProbeReport` has one :class:`RuleResult` per rule of the generation: ``fail`` or
``warn`` with the evidence (the validator's finding, or the probe's own check and the answer
it got), ``pass`` when the probe exercised the rule and nothing broke it, ``not_applicable``
with the reason otherwise. A check that cannot be sure says ``warn`` or ``not_applicable``,
never ``fail``; a step that goes wrong (a timeout, a refused call) is noted in the evidence
of the rules it would have exercised, never raised.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
import attrs
import httpx

from .._client import Client, Timeouts
from .._errors import MCPTasksError, RPCError, TaskNotCancellable, TaskNotFound
from .._generation import Generation
from .._protocol.scheduler import PollPolicy
from .._transports.base import HttpExchange, Incoming, Transport, TransportFault
from .._transports.http import HttpTransport
from .._wire.jsonrpc import encode_message
from ..builders import ToolCall
from ..engine import Poller
from ..inputs import InputContext, InputRouter
from ..models import (
    CallToolResult,
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCMessage,
    TaskSupport,
    Tool,
)
from ..outcomes import Completed, Failed
from .rules import Rule, Verdict, unique_rules
from .transport import ConformancePolicy, ValidatingTransport
from .validator import Finding, Validator

__all__ = ["PROBE_CLIENT_INFO", "ProbeReport", "ProbeVerdict", "RuleResult", "probe"]

JSON = dict[str, Any]
PROBE_CLIENT_INFO = Implementation("mcp-tasks-client-probe", "0")
UNKNOWN_TASK = "mcp-tasks-client-probe-no-such-task"


class ProbeVerdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    NOT_APPLICABLE = "not_applicable"


_RANK = {ProbeVerdict.FAIL: 3, ProbeVerdict.WARN: 2, ProbeVerdict.PASS: 1}


@attrs.frozen
class RuleResult:
    """The probe's verdict on one rule, with what showed it."""

    rule: Rule
    verdict: ProbeVerdict
    evidence: str
    """What the probe saw (or why the rule does not apply)."""
    messages: tuple[Mapping[str, Any], ...] = ()
    """The messages that broke it, as they arrived (at most three)."""

    @property
    def rule_id(self) -> str:
        return self.rule.id

    def to_json(self) -> JSON:
        """``{"rule", "level", "verdict", "evidence": {"detail", "messages"}}``."""
        return {
            "rule": self.rule.id,
            "level": self.rule.level.value,
            "verdict": self.verdict.value,
            "evidence": {"detail": self.evidence, "messages": [dict(m) for m in self.messages]},
        }


@attrs.frozen
class ProbeReport:
    """One result per rule of ``generation``, in registry order."""

    generation: Generation
    results: tuple[RuleResult, ...]
    error: str | None = None
    """Why the probe could not connect at all (every rule is then not applicable)."""

    def result(self, rule_id: str) -> RuleResult:
        for r in self.results:
            if rule_id == r.rule.id or rule_id in r.rule.aliases:
                return r
        raise KeyError(rule_id)

    def verdicts(self) -> dict[str, ProbeVerdict]:
        """Rule id -> verdict."""
        return {r.rule.id: r.verdict for r in self.results}

    def with_verdict(self, *verdicts: ProbeVerdict) -> list[RuleResult]:
        return [r for r in self.results if r.verdict in verdicts]

    def to_json(self) -> list[JSON]:
        """One object per rule: ``rule``, ``level``, ``verdict``, ``evidence``."""
        return [r.to_json() for r in self.results]

    def render_table(self, *, width: int = 100) -> str:
        """A plain-text table: rule, level, verdict, evidence (cut to fit ``width``)."""
        rows = [("RULE", "LEVEL", "VERDICT", "EVIDENCE")]
        rows += [(r.rule.id, r.rule.level.value, r.verdict.value, r.evidence) for r in self.results]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        room = max(20, width - sum(widths) - 6)
        lines = []
        for row in rows:
            text = " ".join(row[3].split())
            if len(text) > room:
                text = text[: room - 3] + "..."
            cells = [row[i].ljust(widths[i]) for i in range(3)]
            lines.append("  ".join([*cells, text]).rstrip())
        if self.error is not None:
            lines.append(f"probe error: {self.error}")
        return "\n".join(lines) + "\n"


_NEEDS: Mapping[str, tuple[frozenset[str], str]] = {
    # rule id -> (the tags that exercise it, what would)
    "V-01": (frozenset({"initialize"}), "the opening"),
    "V-03": (frozenset({"answered:tools/list"}), "tools/list"),
    "V-04": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "V-05": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "V-06": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "V-07": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "V-08": (frozenset({"created", "answered:tasks/get"}), "a task and tasks/get"),
    "V-09": (frozenset({"terminal_get"}), "a tasks/get after a task ended"),
    "V-10": (frozenset({"result_ok"}), "a successful tasks/result"),
    "V-11": (frozenset({"answered:tasks/result"}), "tasks/result"),
    "V-12": (frozenset({"answered:tasks/result"}), "tasks/result"),
    "V-13": (frozenset({"failed"}), "a failed task (name a failing tool in safe_tools)"),
    "V-14": (frozenset({"cancel_terminal"}), "tasks/cancel of an ended task"),
    "V-15": (frozenset({"cancel_ok"}), "a successful tasks/cancel"),
    "V-16": (frozenset({"plain_required"}), "a task-required tool in safe_tools"),
    "V-18": (
        frozenset({"undeclared_task_call"}),
        "a server without tasks.requests.tools.call (this one declares it) and a safe tool",
    ),
    "V-20": (frozenset({"answered:tasks/get"}), "tasks/get"),
    "V-21": (frozenset({"elicited"}), "a safe tool that asks for input in its task"),
    "V-17": (frozenset({"never"}), "a task-forbidden safe tool and probe(..., negative=True)"),
    "V-19": (frozenset({"never"}), "tasks.list and a safe task-capable tool"),
    "C-41": (frozenset({"never"}), "tasks.cancel and a safe task-capable tool"),
    "E S2": (frozenset({"never"}), "a safe tool"),
    "E S3": (frozenset({"never"}), "a safe task-only tool"),
    "E S5": (frozenset({"never"}), "a safe task-capable tool"),
    "V-22": (frozenset({"elicited"}), "a safe tool that asks for input in its task"),
    "V-23": (
        frozenset({"notified:notifications/tasks/status"}),
        "a status notification (the server sent none; they are optional)",
    ),
    "V-24": (
        frozenset({"notified:notifications/progress"}),
        "progress notifications (the server sent none)",
    ),
    "V-25": (frozenset({"elicited"}), "a server request for input"),
    "V-26": (frozenset({"created", "answered:tasks/get"}), "a task and tasks/get"),
    "E S1": (frozenset({"answered:server/discover"}), "server/discover"),
    "E S4": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "E S6": (frozenset({"created", "answered:tasks/get"}), "a task and tasks/get"),
    "E S8": (frozenset({"failed"}), "a failed task (a safe tool ending in a protocol error)"),
    "E S13": (frozenset({"answered:tasks/update"}), "a safe tool that asks for input"),
    "E S14": (frozenset({"input"}), "a safe tool that asks for input"),
    "E S15": (frozenset({"answered:tasks/cancel"}), "tasks/cancel of a safe tool's task"),
    "E S22": (frozenset({"terminal_get"}), "a tasks/get after a task ended"),
    "E S23": (frozenset({"completed"}), "a completed task"),
    "E S25": (
        frozenset({"notified:notifications/tasks"}),
        "notifications/tasks (probe(..., listen=True) and a safe task-capable tool)",
    ),
    "E C15": (frozenset({"answered:server/discover"}), "server/discover"),
    "E C17": (frozenset({"answered:server/discover"}), "server/discover"),
    "E C19": (frozenset({"answered:server/discover"}), "server/discover"),
    "E C40": (frozenset({"sent:subscriptions/listen"}), "a listen (probe(..., listen=True))"),
    "E C41": (
        frozenset({"notified:notifications/tasks"}),
        "notifications on a listen (probe(..., listen=True))",
    ),
    "E C43": (frozenset({"created"}), "a task (name a task-capable tool in safe_tools)"),
    "V-27a": (frozenset({"http:notification"}), "a notification POSTed over HTTP"),
    "V-27b": (frozenset({"http:request"}), "a request over HTTP"),
    "V-27c": (frozenset({"http:session"}), "a server that sets Mcp-Session-Id (HTTP)"),
    "V-27d": (frozenset({"http:get"}), "the GET stream (the probe opens none)"),
    "V-28": (
        frozenset({"never"}),
        "HTTP, tasks.list declared and a safe task-capable tool (a second session lists tasks)",
    ),
    "E C7": (frozenset({"http:request"}), "a request over HTTP"),
    "E S24": (
        frozenset({"http:error"}),
        "an error answered as JSON over HTTP (tasks/result, tasks/list answer -32601)",
    ),
}

_NOT_PROBED: Mapping[str, str] = {}
_BOGUS_VERSION = "1999-01-01"
_STATUS_CODES = frozenset({-32601, -32020, -32021, -32022})


class _Recorder(ValidatingTransport):
    """A ValidatingTransport that also keeps what the probe needs to know was exercised."""

    def __init__(self, inner: Transport, validator: Validator, probe: _Probe) -> None:
        super().__init__(inner, validator, policy=ConformancePolicy.RECORD)
        self._probe = probe
        self._methods: dict[Any, str] = {}
        self._json_answers: set[Any] = set()

    def _http_exchange(self, exchange: HttpExchange) -> None:
        self._probe.tags.add(f"http:{exchange.kind}")
        if exchange.session_id is not None:
            self._probe.tags.add("http:session")
        if exchange.kind == "request" and exchange.content_type == "application/json":
            self._json_answers.add(exchange.request_id)
        super()._http_exchange(exchange)

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        raw = encode_message(message)
        if "method" in raw:
            self._probe.tags.add(f"sent:{raw['method']}")
            if "id" in raw:
                self._methods[raw["id"]] = raw["method"]
        self._probe.log.append(("sent", raw))
        await super().send(message, held=held)

    async def receive(self) -> Incoming:
        item = await super().receive()
        if isinstance(item, TransportFault):
            return item
        raw = encode_message(item)
        self._probe.log.append(("received", raw))
        if "method" in raw and "id" not in raw:
            self._probe.tags.add(f"notified:{raw['method']}")
        elif "method" not in raw and "result" in raw:
            method = self._methods.get(raw.get("id"))
            if method is not None:
                self._probe.tags.add(f"answered:{method}")
        elif (
            "error" in raw
            and raw.get("id") in self._json_answers
            and isinstance(raw["error"], dict)
            and raw["error"].get("code") in _STATUS_CODES
        ):
            self._probe.tags.add("http:error")
        self._json_answers.discard(raw.get("id"))
        return item


class _Tap(ValidatingTransport):
    """The second session of V-28: validated too, its tasks/list answers kept as evidence."""

    def __init__(self, inner: Transport, validator: Validator, probe: _Probe) -> None:
        super().__init__(
            inner, validator, policy=ConformancePolicy.RECORD, on_finding=probe.findings.append
        )
        self.answers: list[JSON] = []

    async def receive(self) -> Incoming:
        item = await super().receive()
        if not isinstance(item, TransportFault):
            raw = encode_message(item)
            if "method" not in raw:
                self.answers.append(raw)
        return item


def _fill(schema: Mapping[str, Any]) -> JSON:
    """A plain value for each required property of a form's schema."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out: JSON = {}
    for name in required or list(props or {}):
        prop = (props or {}).get(name)
        kind = prop.get("type") if isinstance(prop, dict) else "string"
        if kind == "boolean":
            out[name] = True
        elif kind in ("number", "integer"):
            out[name] = 1
        elif isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
            out[name] = prop["enum"][0]
        else:
            out[name] = "probe"
    return out


def _declared(tool: Tool) -> TaskSupport | None:
    """The tool's ``execution.taskSupport`` as sent (None when absent)."""
    return tool.execution.task_support if tool.execution is not None else None


def _error_of(exc: MCPTasksError) -> str:
    if isinstance(exc, RPCError):
        return f"error {exc.code} {exc.message!r}"
    return f"{type(exc).__name__}: {exc}"


class _Probe:
    def __init__(
        self,
        generation: Generation,
        safe_tools: Mapping[str, Mapping[str, Any]],
        *,
        negative: bool,
        listen: bool,
        timeout: float,
    ) -> None:
        self.generation = generation
        self.safe_tools = safe_tools
        self.negative = negative
        self.listen = listen
        self.timeout = timeout
        self.tags: set[str] = set()
        self.log: list[tuple[str, JSON]] = []
        self.findings: list[Finding] = []
        self.checks: dict[str, list[tuple[ProbeVerdict, str, tuple[Mapping[str, Any], ...]]]] = {}
        self.notes: dict[str, list[str]] = {}
        self.task_tools: dict[str, Tool] = {}
        self.task_only: set[str] = set()
        self.client: Client | None = None
        self.router: InputRouter | None = None
        self.mrtr_answers = 0
        self.connect: Callable[[], Transport] | None = None
        self.first: _Recorder | None = None
        self.client_info = PROBE_CLIENT_INFO
        self.v28_task: str | None = None
        self.url: str | None = None
        self.headers: Mapping[str, str] = {}

    # -- recording ---------------------------------------------------------------------------

    def check(
        self, rule_id: str, verdict: ProbeVerdict, detail: str, *messages: Mapping[str, Any]
    ) -> None:
        self.checks.setdefault(rule_id, []).append((verdict, detail, messages))

    def note(self, rule_ids: Iterable[str], text: str) -> None:
        for rule_id in rule_ids:
            self.notes.setdefault(rule_id, []).append(text)

    def last_answer(self, method: str) -> JSON | None:
        """The last answer (result or error) to a request of ``method``."""
        ids = {raw.get("id") for d, raw in self.log if d == "sent" and raw.get("method") == method}
        for direction, raw in reversed(self.log):
            if direction == "received" and "method" not in raw and raw.get("id") in ids:
                return raw
        return None

    # -- the script --------------------------------------------------------------------------

    async def run(self, connect: Callable[[], Transport], client_info: Implementation) -> None:
        validator = Validator(self.generation)
        transport = _Recorder(connect(), validator, self)
        self.connect, self.first, self.client_info = connect, transport, client_info
        transport._on_finding = self.findings.append
        router = InputRouter(elicitation=ElicitationCapability(form={}))
        router.default_elicitation(self._answer)
        timeouts = Timeouts(request=self.timeout, initialize=self.timeout, orphan_watch=1.0)
        client = Client(
            transport,
            generation=self.generation,
            client_info=client_info,
            capabilities=router.capabilities(),
            timeouts=timeouts,
        )
        self.client = client
        self.router = router
        async with client:
            self.tags.add("initialize")
            router.attach(client)
            if self.generation is Generation.V2025_11_25:
                self._v02()
                await self._run_2025(client, router)
            else:
                await self._step(("E S1",), client.discover())
                await self._run_2026(client, router)

    async def _step(self, rules: Iterable[str], awaitable: Any) -> Any:
        try:
            with anyio.fail_after(self.timeout):
                return await awaitable
        except MCPTasksError as exc:
            self.note(rules, f"a step failed: {_error_of(exc)}")
        except TimeoutError:
            self.note(rules, f"a step timed out after {self.timeout}s")
        return None

    async def _tools(self, client: Client) -> dict[str, Tool]:
        async def listing() -> list[Tool]:
            return [tool async for tool in client.list_tools()]

        tools = await self._step(("V-03",), listing()) or []
        return {tool.name: tool for tool in tools}

    def _safe(self, tools: Mapping[str, Tool]) -> list[tuple[Tool, Mapping[str, Any]]]:
        out = []
        for name, arguments in self.safe_tools.items():
            if name in tools:
                out.append((tools[name], arguments))
            else:
                self.note(("V-03",), f"safe tool {name!r} is not in tools/list; not called")
        return out

    async def _answer(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        self.tags.add("elicited" if self.generation is Generation.V2025_11_25 else "input")
        if ctx.task_id is None and self.generation is Generation.V2026_07_28:
            self.mrtr_answers += 1  # MRTR: input of a call that has no task yet
        client = self.client
        if ctx.task_id is not None and client is not None:
            tool = self.task_tools.get(ctx.task_id)
            if self.generation is Generation.V2025_11_25:
                await self._v22(client, ctx.task_id)
            elif tool is not None and tool.name in self.task_only:
                self.check(
                    "E S21",
                    ProbeVerdict.WARN,
                    f"task-only tool {tool.name!r} created task {ctx.task_id} and then asked "
                    f"for input ({ctx.key!r}) in it, not before (MRTR)",
                    self.last_answer("tasks/get") or {},
                )
        schema = getattr(params, "requested_schema", None)
        if not isinstance(schema, Mapping):
            return ElicitResult(ElicitAction.DECLINE)  # URL mode: nothing to open
        return ElicitResult(ElicitAction.ACCEPT, _fill(schema))

    # -- 2025-11-25 --------------------------------------------------------------------------

    def _v02(self) -> None:
        for direction, raw in self.log:
            if direction == "sent" and raw.get("method") == "notifications/initialized":
                break
            method = raw.get("method")
            if direction == "received" and "id" in raw and method not in (None, "ping"):
                self.check(
                    "V-02",
                    ProbeVerdict.WARN,
                    f"{method} arrived before notifications/initialized was sent",
                    raw,
                )
        else:
            return
        if "V-02" not in self.checks:
            self.check("V-02", ProbeVerdict.PASS, "nothing but the answer before initialized")

    async def _v22(self, client: Client, task_id: str) -> None:
        task = await self._step(("V-22",), client.get_task(task_id))
        if task is None:
            return
        if task.status.value == "input_required":
            self.check("V-22", ProbeVerdict.PASS, f"task {task_id} was input_required while asked")
        else:
            self.check(
                "V-22",
                ProbeVerdict.WARN,
                f"task {task_id} was {task.status.value} while its question was open",
                self.last_answer("tasks/get") or {},
            )

    async def _run_2025(self, client: Client, router: InputRouter) -> None:
        caps = client.server_capabilities.tasks
        lists = caps is not None and caps.list
        cancels = caps is not None and caps.cancel
        calls = caps is not None and caps.tools_call
        tools = await self._tools(client)
        if lists:
            await self._step(("V-19",), self._list_ids(client))
        else:
            self.note(("V-19",), "the server does not declare tasks.list")
        await self._unknown_task(client)
        policy = PollPolicy(floor=0.05, initial=0.05, jitter=0.0)
        async with Poller(client, policy, inputs=router) as poller:
            for tool, arguments in self._safe(tools):
                support = tool.task_support
                call = ToolCall(tool.name, dict(arguments))
                if support is TaskSupport.REQUIRED:
                    self.tags.add("plain_required")
                    await self._step(("V-16",), self._raw_call(client, call, task=False))
                if support is TaskSupport.FORBIDDEN:
                    await self._v17(client, call)
                    continue
                if not calls:
                    self.tags.add("undeclared_task_call")
                    await self._step(("V-18",), self._raw_call(client, call, task=True))
                    continue
                await self._step(
                    ("V-04", "V-19"), self._task_2025(client, poller, tool, call, lists, cancels)
                )
            if calls and cancels:
                await self._cancel_2025(client, tools)
            elif not cancels:
                self.note(("C-41", "V-15", "V-14"), "the server does not declare tasks.cancel")
        if lists and self.v28_task is not None:
            # Last: a second session's end must not disturb the steps of the first (mcp 1.30
            # stops task support of every session when one ends).
            await self._step(("V-28",), self._v28(client, self.v28_task))
        elif not lists:
            self.note(("V-28",), "the server does not declare tasks.list")
        await self._step(("V-27",), self._v27())

    async def _v27(self) -> None:
        """V-27's probe-only parts, on a session of the probe's own, after every other step
        (ending a session may disturb the others: mcp 1.30 stops task support for all)."""
        url = self.url
        if url is None:
            self.note(("V-27",), "needs a URL (its parts are Streamable HTTP's)")
            return
        version = self.generation.value
        base = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **self.headers,
        }
        info = {"name": self.client_info.name, "version": self.client_info.version}
        opening = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

        def seen(response: httpx.Response, sent: Mapping[str, Any]) -> JSON:
            return {
                "request": dict(sent),
                "status": response.status_code,
                "body": response.text[:300],
            }

        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
            opened = await http.post(url, json=initialize, headers=base)
            if opened.status_code != 200:
                self.note(("V-27",), f"a session of its own did not open ({opened.status_code})")
                return
            session = opened.headers.get("mcp-session-id")
            headers = {**base, "MCP-Protocol-Version": version}
            if session is not None:
                headers["Mcp-Session-Id"] = session
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=ready, headers=headers)
            sent = {**ping, "headers": {"MCP-Protocol-Version": _BOGUS_VERSION}}
            bogus = await http.post(
                url, json=ping, headers={**headers, "MCP-Protocol-Version": _BOGUS_VERSION}
            )
            if bogus.status_code == 400:
                self.check("V-27", ProbeVerdict.PASS, "a bogus MCP-Protocol-Version got 400")
            else:
                self.check(
                    "V-27",
                    ProbeVerdict.FAIL,
                    f"a request with MCP-Protocol-Version {_BOGUS_VERSION} got "
                    f"{bogus.status_code}, not 400",
                    seen(bogus, sent),
                )
            if session is None:
                self.check(
                    "V-27", ProbeVerdict.PASS, "no Mcp-Session-Id: no ended session to check"
                )
                return
            ended = await http.delete(url, headers=headers)
            if ended.status_code == 405:
                self.check(
                    "V-27",
                    ProbeVerdict.PASS,
                    "DELETE answered 405 (the server does not let clients end a session, "
                    "which it may): no ended session to check",
                )
                return
            if not 200 <= ended.status_code < 300:
                self.note(("V-27",), f"DELETE of its session answered {ended.status_code}")
                return
            after = await http.post(url, json={**ping, "id": 3}, headers=headers)
            if after.status_code == 404:
                self.check("V-27", ProbeVerdict.PASS, "a request in an ended session got 404")
            else:
                self.check(
                    "V-27",
                    ProbeVerdict.FAIL,
                    f"a request in a session the server ended (DELETE answered "
                    f"{ended.status_code}) got {after.status_code}, not 404",
                    seen(after, {**ping, "id": 3, "headers": {"Mcp-Session-Id": session}}),
                )

    async def _raw_call(self, client: Client, call: ToolCall, *, task: bool) -> JSON | None:
        params: JSON = {"name": call.name, "arguments": dict(call.arguments or {})}
        if task:  # opted in as the generation opts in (a 2025-11-25 params.task)
            params = client.driver.task_call_params(params, None)
        try:
            return dict(await client.request("tools/call", params))
        except RPCError:
            return None

    async def _v17(self, client: Client, call: ToolCall) -> None:
        if not self.negative:
            self.note(("V-17",), "calling a task-forbidden tool with a task breaks C-17: opt in")
            return
        answer = await self._step(("V-17",), self._raw_call(client, call, task=True))
        raw = self.last_answer("tools/call") or {}
        if answer is None and "error" in raw:
            code = raw["error"].get("code")
            verdict = ProbeVerdict.PASS if code == -32601 else ProbeVerdict.WARN
            self.check("V-17", verdict, f"{call.name!r} with a task: error {code}", raw)
        elif isinstance(answer, dict) and isinstance(answer.get("task"), dict):
            self.check("V-17", ProbeVerdict.WARN, f"{call.name!r} accepted a task", raw)
        elif answer is not None:
            self.check("V-17", ProbeVerdict.WARN, f"{call.name!r} ran plainly, not -32601", raw)

    async def _list_ids(self, client: Client) -> set[str]:
        return {task.task_id async for task in client.list_tasks()}

    async def _unknown_task(self, client: Client) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await client.get_task(UNKNOWN_TASK)
        except TaskNotFound:
            self.check("V-14", ProbeVerdict.PASS, "tasks/get of an unknown id: -32602")
            return
        except RPCError as exc:
            raw = self.last_answer("tasks/get") or {}
            self.check(
                "V-14", ProbeVerdict.WARN, f"tasks/get of an unknown id: {_error_of(exc)}", raw
            )
            return
        except (MCPTasksError, TimeoutError) as exc:
            self.note(("V-14",), f"tasks/get of an unknown id: {exc!r}")
            return
        raw = self.last_answer("tasks/get") or {}
        self.check("V-14", ProbeVerdict.FAIL, "tasks/get of an unknown id answered a task", raw)

    async def _task_2025(
        self,
        client: Client,
        poller: Poller,
        tool: Tool,
        call: ToolCall,
        lists: bool,
        cancels: bool,
    ) -> None:
        started = await client.start(call.as_task())
        if not isinstance(started, CreateTaskResult):
            return
        self.tags.add("created")
        task_id = started.task.task_id
        self.task_tools[task_id] = tool
        if lists:
            await self._v19(client, task_id)
            self.v28_task = self.v28_task or task_id
        outcome = await poller.wait(started, deadline=self.timeout)
        if isinstance(outcome, Failed):
            self.tags.add("failed")
        await client.get_task(task_id)
        self.tags.add("terminal_get")
        try:
            await client.task_result_raw(task_id)
            if "error" not in (self.last_answer("tasks/result") or {}):
                self.tags.add("result_ok")
        except RPCError:
            pass
        if cancels:
            self.tags.add("cancel_terminal")
            try:
                await client.cancel_task(task_id)
            except TaskNotCancellable:
                pass

    async def _v19(self, client: Client, task_id: str) -> None:
        await client.get_task(task_id)
        listed = await self._list_ids(client)
        if task_id in listed:
            self.check("V-19", ProbeVerdict.PASS, f"task {task_id} is in tasks/list")
            return
        try:
            await client.get_task(task_id)
        except TaskNotFound:
            return  # gone in between: nothing to say
        self.check(
            "V-19",
            ProbeVerdict.FAIL,
            f"task {task_id} is retrievable by tasks/get but missing from tasks/list "
            f"(all pages: {sorted(listed)})",
            self.last_answer("tasks/list") or {},
        )

    async def _v28(self, client: Client, task_id: str) -> None:
        """A second session with the same headers lists tasks: does it see ``task_id``?"""
        first = self.first
        if first is None or self.connect is None or not first.sees_http:
            self.note(("V-28",), "needs HTTP (another stdio connection is another server)")
            return
        inner = self.connect()
        if inner is first.inner:
            self.note(("V-28",), "the transport factory gave the same transport again")
            return
        tap = _Tap(inner, Validator(self.generation), self)
        timeouts = Timeouts(request=self.timeout, initialize=self.timeout, orphan_watch=1.0)
        second = Client(
            tap, generation=self.generation, client_info=self.client_info, timeouts=timeouts
        )
        async with second:
            sessions = f"sessions {first.session!r} and {second.transport.session!r}"
            listed = await self._list_ids(second)
        credentials = sorted(getattr(inner, "headers", None) or {})
        seen = task_id in listed
        if not seen:
            try:
                await client.get_task(task_id)
            except TaskNotFound:
                self.note(("V-28",), f"task {task_id} was gone before the second session listed")
                return
        evidence = [a for a in tap.answers if isinstance(a.get("result"), dict)][-1:]
        if credentials:
            self.note(
                ("V-28",),
                f"both sessions carried the caller's headers {credentials} (one requestor), "
                f"so the second {'listing' if seen else 'not listing'} task {task_id} is "
                "correct; telling requestors apart needs a second credential",
            )
        elif seen:
            self.check(
                "V-28",
                ProbeVerdict.WARN,
                f"a second session without credentials ({sessions}) listed task {task_id} of "
                "the first: the server tells no requestor apart, yet declares tasks.list",
                *evidence,
            )
        else:
            self.check(
                "V-28",
                ProbeVerdict.PASS,
                f"a second session without credentials ({sessions}) did not list task "
                f"{task_id} of the first",
            )

    async def _cancel_2025(self, client: Client, tools: Mapping[str, Tool]) -> None:
        for tool, arguments in self._safe(tools):
            if tool.task_support is TaskSupport.FORBIDDEN:
                continue
            started = await self._step(
                ("C-41",), client.start(ToolCall(tool.name, dict(arguments)).as_task())
            )
            if not isinstance(started, CreateTaskResult):
                continue
            task_id = started.task.task_id
            self.task_tools[task_id] = tool
            try:
                with anyio.fail_after(self.timeout):
                    await client.cancel_task(task_id)
            except TaskNotCancellable:
                self.note(("C-41",), f"task {task_id} had ended before tasks/cancel")
                continue
            except (MCPTasksError, TimeoutError) as exc:
                self.note(("C-41",), f"tasks/cancel failed: {exc!r}")
                continue
            self.tags.add("cancel_ok")
            after = await self._step(("C-41",), client.get_task(task_id))
            if after is None:
                return
            raw = self.last_answer("tasks/get") or {}
            if after.status.value == "cancelled":
                self.check("C-41", ProbeVerdict.PASS, f"task {task_id} stayed cancelled")
            else:
                self.check(
                    "C-41",
                    ProbeVerdict.FAIL,
                    f"tasks/cancel answered, then tasks/get showed {after.status.value}",
                    raw,
                )
            return
        self.note(("C-41",), "no safe task-capable tool to cancel")

    # -- 2026-07-28 --------------------------------------------------------------------------

    async def _removed(self, client: Client, method: str, rule_id: str) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await client.request(method, {"taskId": UNKNOWN_TASK})
        except RPCError as exc:
            raw = self.last_answer(method) or {}
            if exc.code == -32601:
                self.check(rule_id, ProbeVerdict.PASS, f"{method}: -32601")
            else:
                self.check(rule_id, ProbeVerdict.WARN, f"{method}: {_error_of(exc)}", raw)
            return
        except (MCPTasksError, TimeoutError) as exc:
            self.note((rule_id,), f"{method}: {exc!r}")
            return
        raw = self.last_answer(method) or {}
        self.check(rule_id, ProbeVerdict.FAIL, f"{method} answered a result", raw)

    async def _run_2026(self, client: Client, router: InputRouter) -> None:
        tools = await self._tools(client)
        await self._removed(client, "tasks/result", "E S16")
        await self._removed(client, "tasks/list", "E S17")
        policy = PollPolicy(floor=0.05, initial=0.05, jitter=0.0, listen=self.listen)
        safe = [(t, a) for t, a in self._safe(tools) if _declared(t) is not TaskSupport.FORBIDDEN]
        async with Poller(client, policy, inputs=router) as poller:
            for tool, arguments in safe:
                call = ToolCall(tool.name, dict(arguments))
                await self._step(("E S2", "E S3"), self._plain_2026(client, tool, call))
                await self._step(("E S5",), self._task_2026(client, poller, tool, call))
            for tool, arguments in safe:
                call = ToolCall(tool.name, dict(arguments))
                if await self._step(("E S15",), self._cancel_2026(client, poller, call)):
                    break
        for rule_id, what in (("E S7", "a tool ending in isError"), ("E S21", "MRTR")):
            if rule_id not in self.checks:
                self.note((rule_id,), f"no safe tool showed {what}")

    async def _plain_2026(self, client: Client, tool: Tool, call: ToolCall) -> None:
        """A call without the extension: never a task (E S2); a task-only tool's is -32021
        (E S3). 2026-07-28 tools need not say which run as tasks: a -32021 says it."""
        answer = await self._raw_call(client, call, task=False)
        raw = self.last_answer("tools/call") or {}
        error = raw.get("error") if isinstance(raw.get("error"), dict) else None
        code = error.get("code") if error is not None else None
        if code == -32021:
            self.task_only.add(tool.name)
            self.check("E S3", ProbeVerdict.PASS, f"{tool.name!r} without the extension: -32021")
        if isinstance(answer, dict) and answer.get("resultType") == "task":
            self.check(
                "E S2",
                ProbeVerdict.FAIL,
                f"{tool.name!r} called without the extension answered a task",
                raw,
            )
        elif answer is not None or code is not None:
            self.check("E S2", ProbeVerdict.PASS, "no task for a call without the extension")
        if _declared(tool) is TaskSupport.REQUIRED:
            self.task_only.add(tool.name)
            if isinstance(answer, dict) and answer.get("resultType") != "task":
                self.check(
                    "E S3",
                    ProbeVerdict.FAIL,
                    f"{tool.name!r} (taskSupport required) answered a call without the "
                    "extension with a result",
                    raw,
                )
            elif code is not None and code != -32021:
                detail = f"{tool.name!r} (taskSupport required) without the extension: {code}"
                self.check("E S3", ProbeVerdict.WARN, detail, raw)

    async def _task_2026(self, client: Client, poller: Poller, tool: Tool, call: ToolCall) -> None:
        asked = self.mrtr_answers
        started = await client.start(call.as_task(), inputs=self.router)
        if isinstance(started, CallToolResult):
            self.note(("E S5",), f"{tool.name!r} answered inline, no task")
            return
        self.tags.add("created")
        task_id = started.task.task_id
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
        self.tags.add("terminal_get")
        if isinstance(outcome, Completed):
            self.tags.add("completed")
            if outcome.result.is_error:
                self.check("E S7", ProbeVerdict.PASS, f"{tool.name!r}: isError ended completed")
        elif isinstance(outcome, Failed):
            self.tags.add("failed")  # one carrying its tool's isError result: E S7, found
            # by the validator (a failed task with an error only cannot be told from E S8)

    async def _cancel_2026(self, client: Client, poller: Poller, call: ToolCall) -> bool:
        started = await client.start(call.as_task(), inputs=self.router)
        if not isinstance(started, CreateTaskResult):
            return False
        await client.cancel_task(started.task.task_id)
        with anyio.move_on_after(self.timeout):
            await poller.wait(started, deadline=self.timeout)
        return True

    # -- the report --------------------------------------------------------------------------

    def report(self, error: str | None = None) -> ProbeReport:
        by_rule: dict[str, list[tuple[ProbeVerdict, str, tuple[Mapping[str, Any], ...]]]] = {}
        for rule_id, entries in self.checks.items():
            by_rule.setdefault(_canonical(rule_id), []).extend(entries)
        for f in self.findings:
            verdict = ProbeVerdict.FAIL if f.verdict is Verdict.FAIL else ProbeVerdict.WARN
            by_rule.setdefault(f.rule.id, []).append((verdict, str(f), (f.evidence,)))
        results = []
        for r in unique_rules():
            if self.generation not in r.generations:
                continue
            results.append(self._result(r, by_rule.get(r.id, []), error))
        return ProbeReport(self.generation, tuple(results), error)

    def _result(
        self,
        r: Rule,
        entries: list[tuple[ProbeVerdict, str, tuple[Mapping[str, Any], ...]]],
        error: str | None,
    ) -> RuleResult:
        notes = "; ".join(dict.fromkeys(self.notes.get(r.id, [])))
        if entries:
            worst = max(entries, key=lambda e: _RANK[e[0]])[0]
            chosen = [e for e in entries if e[0] is worst]
            details = list(dict.fromkeys(e[1] for e in chosen))
            detail = "; ".join(details[:3]) + (
                f" (+{len(details) - 3} more)" if len(details) > 3 else ""
            )
            messages = tuple(m for e in chosen for m in e[2] if m)[:3]
            return RuleResult(r, worst, detail, messages)
        if error is not None:
            return RuleResult(r, ProbeVerdict.NOT_APPLICABLE, f"the probe could not run: {error}")
        if r.id in _NOT_PROBED:
            return RuleResult(r, ProbeVerdict.NOT_APPLICABLE, _NOT_PROBED[r.id])
        needs = _NEEDS.get(r.id)
        if r.checked and needs is not None and needs[0] <= self.tags:
            return RuleResult(r, ProbeVerdict.PASS, "exercised; the validator found nothing")
        if needs is not None:
            reason = f"not exercised: needs {needs[1]}"
        elif notes:
            reason = "not exercised"
        else:
            reason = "not exercised by this probe"
        if notes:
            reason = f"{reason} ({notes})"
        return RuleResult(r, ProbeVerdict.NOT_APPLICABLE, reason)


def _canonical(rule_id: str) -> str:
    from .rules import rule

    return rule(rule_id).id


async def probe(
    server: str | Callable[[], Transport],
    generation: Generation,
    *,
    safe_tools: Mapping[str, Mapping[str, Any]] | Iterable[str] = (),
    negative: bool = False,
    listen: bool = False,
    client_info: Implementation = PROBE_CLIENT_INFO,
    timeout: float = 30.0,
    headers: Mapping[str, str] | None = None,
) -> ProbeReport:
    """Probe the server at ``server`` (a URL, or a factory of fresh transports, e.g. for stdio)
    in ``generation``; see the module docstring.

    ``safe_tools``: the tools the probe may call, with their arguments (a plain list of names
    calls each with no arguments). ``negative``: also send what a client must not (a task for
    a task-forbidden tool, V-17). ``listen``: wait on 2026-07-28 tasks with a listen stream.
    ``timeout`` bounds each step. ``headers``: sent with every request to a URL ``server``
    (credentials: then V-28 cannot tell requestors apart and says so). Never raises for what
    the server does.
    """
    if isinstance(safe_tools, Mapping):
        safe: Mapping[str, Mapping[str, Any]] = safe_tools
    else:
        safe = {name: {} for name in safe_tools}
    if isinstance(server, str):
        url = server

        def connect() -> Transport:
            return HttpTransport(url, headers=headers)

    else:
        connect = server
    runner = _Probe(generation, safe, negative=negative, listen=listen, timeout=timeout)
    if isinstance(server, str):
        runner.url, runner.headers = server, dict(headers or {})
    error: str | None = None
    try:
        with anyio.fail_after(max(timeout * (4 + 4 * len(safe)), timeout)):
            await runner.run(connect, client_info)
    except MCPTasksError as exc:
        error = _error_of(exc)
    except TimeoutError:
        error = "the probe as a whole timed out"
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    if error is not None and "initialize" in runner.tags:
        runner.note([r.id for r in unique_rules()], f"the connection ended: {error}")
        error = None
    return runner.report(error)
