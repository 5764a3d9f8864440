"""What the live probe does the same in every generation: the recording, the steps, the report.

:class:`Probe` opens one connection with the strict Validator watching every message
(:class:`Recorder`), answers the server's input requests, runs its generation's script
(:meth:`Probe.script`, one subclass per generation: ``_probe_v2025_11_25.py``,
``_probe_v2026_07_28.py``, chosen by the registry in ``live.py``) and turns what it saw into a
:class:`~mcp_tasks_client.conformance.ProbeReport`. Nothing here asks which generation it
probes.

May import: the Client and what it stands on (``_client``, ``_exceptions``, ``_generation``,
``_sansio``, ``_io``, ``_codec``, ``builders``, ``models``, ``outcomes``), the Poller
and the InputRouter (``engine``, ``inputs``), this package's ``rules``, ``transport``,
``validator`` and ``_report``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import anyio

from .._client import Client, Timeouts
from .._codec.messages import encode_message
from .._exceptions import MCPTasksError, RPCError, UsageError
from .._generation import Generation
from .._io.base import HttpExchange, Incoming, Transport, TransportFault
from ..builders import ToolCall
from ..inputs import InputContext, InputRouter
from ..models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCMessage,
    TaskSupport,
    Tool,
)
from ._report import RANK, ProbeReport, ProbeVerdict, RuleResult
from .rules import Rule, Verdict, unique_rules
from .transport import ConformancePolicy, ValidatingTransport
from .validator import Finding, Validator

__all__ = ["PROBE_CLIENT_INFO", "TERMINAL", "UNKNOWN_TASK", "Probe", "Recorder", "Tap", "describe"]

JSON = dict[str, Any]
PROBE_CLIENT_INFO = Implementation("mcp-tasks-client-probe", "0")
UNKNOWN_TASK = "mcp-tasks-client-probe-no-such-task"


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
    "V-11": (
        frozenset({"early_result"}),
        "a tasks/result sent while the task was not terminal, and a tasks/get after its answer",
    ),
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
    "V-21": (
        frozenset({"never"}),
        "a question tied to a task (by related-task _meta, or arriving while the task was the "
        "probe's only open work): a safe tool that asks for input in its task",
    ),
    "V-17": (frozenset({"never"}), "a task-forbidden safe tool and probe(..., negative=True)"),
    "V-19": (frozenset({"never"}), "tasks.list and a safe task-capable tool"),
    "C-41": (frozenset({"never"}), "tasks.cancel and a safe task-capable tool"),
    "E S2": (frozenset({"never"}), "a safe tool"),
    "E S3": (frozenset({"never"}), "a safe task-only tool"),
    "E S5": (frozenset({"never"}), "a safe task-capable tool"),
    "V-22": (
        frozenset({"never"}),
        "a tasks/get while a task's question was open: a safe tool that asks in its task",
    ),
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
    "V-27d": (frozenset({"http:get"}), "the GET stream (over HTTP the probe opens it first)"),
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
_STATUS_CODES = frozenset({-32601, -32020, -32021, -32022})


class Recorder(ValidatingTransport):
    """A ValidatingTransport that also keeps what the probe needs to know was exercised."""

    def __init__(self, inner: Transport, validator: Validator, probe: Probe) -> None:
        super().__init__(inner, validator, policy=ConformancePolicy.RECORD)
        self._probe = probe
        self._methods: dict[Any, str] = {}
        self._json_answers: set[Any] = set()
        self.pending: dict[Any, str] = {}
        """The probe's requests not answered yet: id -> method."""
        self.status: dict[str, str] = {}
        """Each task's last status seen on the wire (a create, a tasks/get, a notification)."""
        self._early: dict[Any, str] = {}

    async def open_listen_stream(self) -> None:
        """The inner transport's standalone GET stream (the Client asks its transport)."""
        opener = getattr(self.inner, "open_listen_stream", None)
        if opener is None:
            raise UsageError(f"{type(self.inner).__name__} has no listen stream")
        await opener()

    def _http_exchange(self, exchange: HttpExchange) -> None:
        where = f"HTTP {exchange.kind} {exchange.status}"
        if exchange.request_id is not None:
            where += f" (id {exchange.request_id!r})"
        self._probe.exercise(f"http:{exchange.kind}", where)
        if exchange.session_id is not None:
            self._probe.exercise("http:session", where)
        if exchange.kind == "request" and exchange.content_type == "application/json":
            self._json_answers.add(exchange.request_id)
        super()._http_exchange(exchange)

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        raw = encode_message(message)
        if "method" in raw:
            self._probe.exercise(f"sent:{raw['method']}", describe("sent", raw))
            if "id" in raw:
                self._methods[raw["id"]] = raw["method"]
                self.pending[raw["id"]] = raw["method"]
                task_id = task_of(raw.get("params"))
                if raw["method"] == "tasks/result" and task_id is not None:
                    status = self.status.get(task_id)
                    if status is not None and status not in TERMINAL:
                        self._early[raw["id"]] = f"{task_id} was {status}"
        self._probe.log.append(("sent", raw))
        await super().send(message, held=held)

    async def receive(self) -> Incoming:
        item = await super().receive()
        if isinstance(item, TransportFault):
            return item
        raw = encode_message(item)
        self._probe.log.append(("received", raw))
        if "method" not in raw:
            self.pending.pop(raw.get("id"), None)
            self._seen_status(raw.get("result"))
        if "method" in raw and "id" not in raw:
            self._probe.exercise(f"notified:{raw['method']}", describe("received", raw))
            self._seen_status(raw.get("params"))
        elif "method" not in raw and "result" in raw:
            method = self._methods.get(raw.get("id"))
            if method is not None:
                self._probe.exercise(f"answered:{method}", describe("received", raw))
        if "method" not in raw and raw.get("id") in self._early:
            was = self._early.pop(raw["id"])
            self._probe.exercise(
                "early_result", f"tasks/result id {raw['id']!r} sent while task {was}"
            )
        elif (
            "error" in raw
            and raw.get("id") in self._json_answers
            and isinstance(raw["error"], dict)
            and raw["error"].get("code") in _STATUS_CODES
        ):
            self._probe.tags.add("http:error")
        self._json_answers.discard(raw.get("id"))
        return item

    def _seen_status(self, body: Any) -> None:
        if not isinstance(body, dict):
            return
        inner = body.get("task")
        task: dict[str, Any] = inner if isinstance(inner, dict) else body
        if isinstance(task.get("taskId"), str) and isinstance(task.get("status"), str):
            self.status[task["taskId"]] = task["status"]


TERMINAL = frozenset({"completed", "failed", "cancelled"})


def task_of(params: Any) -> str | None:
    """The ``taskId`` a request's params name (None if none)."""
    if isinstance(params, dict) and isinstance(params.get("taskId"), str):
        return str(params["taskId"])
    return None


def describe(direction: str, raw: Mapping[str, Any]) -> str:
    """One message as evidence: which way, its id, its method (or what it answered)."""
    arrow = "->" if direction == "sent" else "<-"
    method = raw.get("method")
    if method is None:
        kind = "error" if "error" in raw else "result"
        return f"{arrow} {kind} id {raw.get('id')!r}"
    if "id" in raw:
        return f"{arrow} {method} id {raw['id']!r}"
    return f"{arrow} {method}"


class Tap(ValidatingTransport):
    """The second session of V-28: validated too, its tasks/list answers kept as evidence."""

    def __init__(self, inner: Transport, validator: Validator, probe: Probe) -> None:
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


def fill(schema: Mapping[str, Any]) -> JSON:
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


def declared(tool: Tool) -> TaskSupport | None:
    """The tool's ``execution.taskSupport`` as sent (None when absent)."""
    return tool.execution.task_support if tool.execution is not None else None


def error_of(exc: MCPTasksError) -> str:
    if isinstance(exc, RPCError):
        return f"error {exc.code} {exc.message!r}"
    return f"{type(exc).__name__}: {exc}"


class Probe(abc.ABC):
    """One probe of one server in one generation: its subclass has the generation's script."""

    generation: ClassVar[Generation]

    def __init__(
        self,
        safe_tools: Mapping[str, Mapping[str, Any]],
        *,
        negative: bool,
        listen: bool,
        timeout: float,
    ) -> None:
        self.safe_tools = safe_tools
        self.negative = negative
        self.listen = listen
        self.timeout = timeout
        self.tags: set[str] = set()
        self.exchanges: dict[str, list[str]] = {}
        """Per tag, the first few exchanges that exercised it (the evidence of a pass)."""
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
        self.first: Recorder | None = None
        self.client_info = PROBE_CLIENT_INFO
        self.v28_task: str | None = None
        self.url: str | None = None
        self.headers: Mapping[str, str] = {}

    # -- recording ---------------------------------------------------------------------------

    def check(
        self, rule_id: str, verdict: ProbeVerdict, detail: str, *messages: Mapping[str, Any]
    ) -> None:
        self.checks.setdefault(rule_id, []).append((verdict, detail, messages))

    def exercise(self, tag: str, evidence: str) -> None:
        """The probe saw ``tag`` on the wire, in the exchange ``evidence`` names."""
        self.tags.add(tag)
        seen = self.exchanges.setdefault(tag, [])
        if len(seen) < 3 and evidence not in seen:
            seen.append(evidence)

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
        transport = Recorder(connect(), validator, self)
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
            self.exercise("initialize", describe("received", self.last_answer("initialize") or {}))
            router.attach(client)
            await self.script(client, router)

    @abc.abstractmethod
    async def script(self, client: Client, router: InputRouter) -> None:
        """The generation's steps, on the open ``client`` (``router`` answers its input)."""

    @abc.abstractmethod
    async def input_asked(self, ctx: InputContext) -> None:
        """The server asked for input (``ctx.task_id`` None: before a task, by MRTR); the
        probe answers it after this returns."""

    async def _step(self, rules: Iterable[str], awaitable: Any) -> Any:
        try:
            with anyio.fail_after(self.timeout):
                return await awaitable
        except MCPTasksError as exc:
            self.note(rules, f"a step failed: {error_of(exc)}")
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
        await self.input_asked(ctx)
        schema = getattr(params, "requested_schema", None)
        if not isinstance(schema, Mapping):
            return ElicitResult(ElicitAction.DECLINE)  # URL mode: nothing to open
        return ElicitResult(ElicitAction.ACCEPT, fill(schema))

    async def _raw_call(self, client: Client, call: ToolCall, *, task: bool) -> JSON | None:
        params: JSON = {"name": call.name, "arguments": dict(call.arguments or {})}
        if task:  # opted in as the generation opts in (a 2025-11-25 params.task)
            params = client.driver.task_call_params(params, None)
        try:
            return dict(await client.request("tools/call", params))
        except RPCError:
            return None

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
            worst = max(entries, key=lambda e: RANK[e[0]])[0]
            chosen = [e for e in entries if e[0] is worst]
            details = list(dict.fromkeys(e[1] for e in chosen))
            detail = "; ".join(details[:3]) + (
                f" (+{len(details) - 3} more)" if len(details) > 3 else ""
            )
            messages = tuple(m for e in chosen for m in e[2] if m)[:3]
            if worst is ProbeVerdict.PASS:  # what exercised it, named, not quoted
                seen = tuple(describe("received", m) for m in messages if "jsonrpc" in m)
                return RuleResult(r, worst, detail, (), seen)
            return RuleResult(r, worst, detail, messages)
        if error is not None:
            return RuleResult(r, ProbeVerdict.NOT_APPLICABLE, f"the probe could not run: {error}")
        if r.id in _NOT_PROBED:
            return RuleResult(r, ProbeVerdict.NOT_APPLICABLE, _NOT_PROBED[r.id])
        needs = _NEEDS.get(r.id)
        if r.checked and needs is not None and needs[0] <= self.tags:
            seen = tuple(e for tag in sorted(needs[0]) for e in self.exchanges.get(tag, ()))
            detail = "exercised; the validator found nothing"
            if seen:
                detail += f" (seen: {'; '.join(seen[:3])})"
            return RuleResult(r, ProbeVerdict.PASS, detail, (), seen)
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
