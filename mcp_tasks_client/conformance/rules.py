"""The registry of server rules a client can observe, by the ids the code and docs cite.

Ids follow the repository's numbering (see the README, "rule ids"): ``V-nn`` are 2025-11-25
server rules a client can check, ``T:nnn`` a line of the 2025-11-25 tasks text, ``E Snn`` the
2026-07-28 tasks extension's server probes and ``E Cnn`` its rules as the client reads them
(some bind the server: terminal stability, ``resultType``, the listen stream). ``A-nn`` /
``E A-nn`` are our readings of ambiguities; a rule whose check follows one says so.

Each :class:`Rule` has its level as the spec writes it (MUST, SHOULD), the generations it
applies to, the verdict a broken rule gets (a SHOULD, and a MUST a client can only see softly,
are warnings), whether :class:`~mcp_tasks_client.conformance.Validator` checks it, and the text
a user sees when it fails. ``docs/rules.md`` is rendered from :data:`RULES` by
:func:`render_markdown` (a test keeps it up to date).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs

from .._generation import Generation

__all__ = ["RULES", "Level", "Rule", "Verdict", "render_markdown", "rule"]


class Level(enum.Enum):
    """The spec's keyword for the rule."""

    MUST = "MUST"
    SHOULD = "SHOULD"


class Verdict(enum.Enum):
    """What a broken rule means for the server."""

    FAIL = "fail"
    """The server broke a rule it must keep."""
    WARN = "warn"
    """A SHOULD, or a MUST a client can only observe softly (a race it cannot rule out)."""


G1 = frozenset({Generation.V2025_11_25})
G2 = frozenset({Generation.V2026_07_28})
BOTH = G1 | G2


@attrs.frozen
class Rule:
    """One server rule a client can observe."""

    id: str
    """The stable id the code, errors and docs cite (``V-09``, ``E S15``)."""
    level: Level
    generations: frozenset[Generation]
    summary: str
    """What the server must (or should) do."""
    failure: str
    """What a user sees when the rule fails."""
    source: str = ""
    """Where the spec says it (line references of the spec text)."""
    checked: bool = True
    """Whether the Validator checks it (False: only a live probe can)."""
    verdict: Verdict | None = None
    """The verdict of a finding; None means FAIL for MUST and WARN for SHOULD."""
    aliases: tuple[str, ...] = ()
    """Other ids the code cites for the same rule."""

    @property
    def default_verdict(self) -> Verdict:
        if self.verdict is not None:
            return self.verdict
        return Verdict.FAIL if self.level is Level.MUST else Verdict.WARN


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    table: dict[str, Rule] = {}
    for r in rules:
        for key in (r.id, *r.aliases):
            if key in table:
                raise ValueError(f"rule id {key!r} registered twice")
            table[key] = r
    return table


M, S = Level.MUST, Level.SHOULD

RULES: Mapping[str, Rule] = _rules(
    # --- 2025-11-25 --------------------------------------------------------------------------
    Rule(
        "V-01",
        M,
        G1,
        "initialize answers protocolVersion, capabilities and serverInfo (name, version)",
        "the initialize result lacks a required field",
        "L:98, L:170-172",
    ),
    Rule(
        "V-02",
        S,
        G1,
        "the server sends nothing but ping and logging before notifications/initialized",
        "the server sent a request before the client's notifications/initialized",
        "L:160",
        checked=False,
    ),
    Rule(
        "V-03",
        M,
        G1,
        "capabilities.tasks.{list,cancel,requests.tools.call} are objects; "
        "a tool's execution.taskSupport is forbidden, optional or required",
        "a task capability or a tool's taskSupport has a value the spec does not have",
        "T:101, TL: Tool.execution",
    ),
    Rule(
        "V-04",
        M,
        G1,
        "an accepted task-augmented tools/call answers CreateTaskResult {task: Task}",
        "the answer to a task-augmented tools/call is not a CreateTaskResult",
        "T:463",
    ),
    Rule(
        "V-05",
        M,
        G1,
        "a task begins in working",
        "the created task is not working (a fast task may already be further; A-07: a warning)",
        "T:403",
        verdict=Verdict.WARN,
    ),
    Rule(
        "V-06",
        M,
        G1,
        "taskId is a string, unique across tasks",
        "a taskId is not a string",
        "T:397-399",
    ),
    Rule(
        "V-07",
        M,
        G1,
        "every task response carries a status (one of the five) and createdAt and "
        "lastUpdatedAt as timestamps",
        "a task response lacks its status, createdAt or lastUpdatedAt (or has a bad one)",
        "T:454-455, SCH Task",
    ),
    Rule(
        "V-08",
        M,
        G1,
        "tasks/get carries ttl, a number or null",
        "a tasks/get answer lacks ttl, or ttl is neither a number nor null",
        "T:457, A-06",
    ),
    Rule(
        "V-09",
        M,
        G1,
        "a terminal status never changes; a cancelled task stays cancelled",
        "the task's status changed after it was terminal",
        "T:404-407, T:496",
        aliases=("T:404-407",),
    ),
    Rule(
        "V-10",
        M,
        G1,
        "a successful tasks/result carries _meta related-task naming the task",
        "the tasks/result answer lacks io.modelcontextprotocol/related-task for its task",
        "T:755, A-10",
    ),
    Rule(
        "V-11",
        M,
        G1,
        "tasks/result does not answer before the task is terminal (the probe sends an early "
        "tasks/result on each task it knows is unfinished, then a tasks/get)",
        "tasks/result answered while the task was not terminal (a later snapshot showed it "
        "still running)",
        "T:465",
        aliases=("T:465",),
    ),
    Rule(
        "V-12",
        M,
        G1,
        "tasks/result on a terminal tools/call task returns exactly a "
        "CallToolResult (content[] required) or the JSON-RPC error",
        "the tasks/result answer is not a CallToolResult (content missing)",
        "T:464-466, T:862-863",
    ),
    Rule(
        "V-13",
        S,
        G1,
        "a failed task carries statusMessage; a tool's isError result makes the task failed",
        "a failed task has no statusMessage, or an isError result came from a completed task",
        "T:839, T:858",
    ),
    Rule(
        "V-14",
        M,
        G1,
        "cancelling a terminal task (and any unknown taskId) answers -32602",
        "tasks/cancel of a terminal task succeeded instead of answering -32602",
        "T:494, T:768-770",
    ),
    Rule(
        "V-15",
        M,
        G1,
        "a successful tasks/cancel answers the task with status cancelled",
        "the tasks/cancel answer does not show status cancelled",
        "T:495",
    ),
    Rule(
        "V-16",
        M,
        G1,
        "a tool with taskSupport required called without task answers -32601 "
        "(-32600 allowed, A-01)",
        "a task-required tool answered a plain call with a result",
        "T:117, T:775, A-01",
    ),
    Rule(
        "V-17",
        S,
        G1,
        "a tool with taskSupport forbidden called with task answers -32601",
        "a forbidden tool accepted a task",
        "T:115",
        checked=False,
    ),
    Rule(
        "V-18",
        M,
        G1,
        "a server without tasks.requests.tools.call answers a task-augmented call normally",
        "a server that did not declare tasks.requests.tools.call created a task",
        "T:392",
    ),
    Rule(
        "V-19",
        M,
        G1,
        "tasks/list lists every task tasks/get can retrieve; nextCursor while more remain",
        "a retrievable task is missing from tasks/list",
        "T:488-490",
        checked=False,
    ),
    Rule(
        "V-20",
        S,
        G1,
        "no related-task _meta on tasks/get, tasks/list, tasks/cancel results "
        "or notifications/tasks/status",
        "a tasks/get, tasks/list or tasks/cancel result (or "
        "a status notification) carries related-task _meta",
        "T:473, T:479",
    ),
    Rule(
        "V-21",
        M,
        G1,
        "a server->client request tied to a task carries related-task _meta naming it (the "
        "validator: one that arrives while tasks/result is open; the probe also: one that "
        "arrives while the task is its only open work, over HTTP with the GET stream open)",
        "an elicitation or sampling request that arrived while tasks/result was "
        "open carries no related-task _meta",
        "T:448, T:470-471",
    ),
    Rule(
        "V-22",
        S,
        G1,
        "a task waiting for input is input_required and leaves it once answered (the "
        "validator checks the first half: a tasks/get sent after the task's tagged question "
        "arrived, and answered before the client answered it, says input_required; leaving it "
        "is not checked, since the answer and a later poll can cross)",
        "the task said working while its question was open (a tasks/get sent after the "
        "question arrived, answered before the client answered it)",
        "T:447, T:450",
    ),
    Rule(
        "V-23",
        M,
        G1,
        "notifications/tasks/status params are a complete Task",
        "a status notification lacks a required Task field",
        "SCH:1488",
    ),
    Rule(
        "V-24",
        M,
        G1,
        "progress for a task reuses the request's progressToken, strictly "
        "increases, and stops once the task is terminal",
        "a progress notification names a "
        "token never sent, does not increase, or came after the task was terminal",
        "P:53, P:69-71",
    ),
    Rule(
        "V-25",
        M,
        G1,
        "no elicitation mode the client did not declare; no sampling tools without sampling.tools",
        "the server sent an elicitation mode (or sampling tools) the client did not declare",
        "E:77, S:40",
    ),
    Rule(
        "V-26",
        S,
        BOTH,
        "a task's taskId and createdAt stay the same across snapshots; "
        "lastUpdatedAt never goes backwards (implied)",
        "a snapshot changed taskId or createdAt, or moved lastUpdatedAt backwards",
        "T:454-455 (implied)",
    ),
    Rule(
        "V-27",
        M,
        G1,
        "Streamable HTTP: 400 for a bogus MCP-Protocol-Version, 404 for a session the server "
        "ended (the probe checks both on a session of its own; the parts a single exchange "
        "shows are V-27a-d; each message on exactly one stream is not checked)",
        "a bogus MCP-Protocol-Version was served, or an ended session was not answered 404",
        "X:96-219, X:280",
        checked=False,
    ),
    # V-27 split: the parts of V-27 one HTTP exchange shows, checked from the transport's
    # HttpExchange records (a letter names a part; the source is still V-27's).
    Rule(
        "V-27a",
        M,
        G1,
        "a POSTed notification or response is answered 202 Accepted with no body "
        "(a 4xx when rejected)",
        "a POSTed notification or response was answered otherwise than 202 with no body",
        "V-27 (part), X:95-100",
    ),
    Rule(
        "V-27b",
        M,
        G1,
        "a POSTed request is answered with Content-Type application/json or "
        "text/event-stream (never 202)",
        "a request was answered 202, or with another content type",
        "V-27 (part), X:101-104",
    ),
    Rule(
        "V-27c",
        M,
        G1,
        "an Mcp-Session-Id is visible ASCII only (0x21-0x7E), and not empty",
        "the server sent an Mcp-Session-Id with a byte outside 0x21-0x7E",
        "V-27 (part), X:200",
    ),
    Rule(
        "V-27d",
        M,
        G1,
        "a GET the server accepts is answered text/event-stream (or the GET is refused 405)",
        "a GET was answered 2xx without an SSE stream",
        "V-27 (part), X:133-154",
    ),
    Rule(
        "V-28",
        S,
        G1,
        "a server that cannot tell requestors apart does not declare tasks.list (probe: a "
        "second session, with the same credentials or none, lists the first one's task only "
        "when both carry credentials)",
        "a second session without credentials listed another session's task: the server "
        "tells no requestor apart, yet declares tasks.list",
        "T:876, T:871",
        checked=False,
    ),
    Rule(
        "C-41",
        M,
        G1,
        "a receiver sets cancelled before answering tasks/cancel and keeps it",
        "the task was not cancelled when tasks/cancel answered",
        "T:494-497",
        checked=False,
    ),
    # --- 2026-07-28 + io.modelcontextprotocol/tasks --------------------------------------
    Rule(
        "E S1",
        M,
        G2,
        "server/discover advertises the extension and no legacy capabilities.tasks",
        "server/discover advertises the legacy capabilities.tasks next to the extension",
        "SEP §Backward Compat",
    ),
    Rule(
        "E S2",
        M,
        G2,
        "no CreateTaskResult for a request that did not declare the extension",
        "the server created a task for a request that did not declare the extension",
        "SEP §Capability Negotiation",
        checked=False,
    ),
    Rule(
        "E S3",
        M,
        G2,
        "a task-only tool called without the extension answers -32021",
        "a task-only tool answered a non-declaring call otherwise",
        "SEP §Error Handling",
        checked=False,
    ),
    Rule(
        "E S4",
        M,
        G2,
        "a CreateTaskResult is flat (resultType task, no nested task, no "
        "legacy ttl/pollInterval, no requestState), with the Task fields; ttlMs an integer "
        "or null, pollIntervalMs a positive integer",
        "the CreateTaskResult has the wrong shape",
        "E 3.3, CONF tasks-wire-field-renames",
    ),
    Rule(
        "E S5",
        M,
        G2,
        "tasks/get resolves right after CreateTaskResult",
        "tasks/get did not find a task just created",
        "SEP durable create",
        checked=False,
    ),
    Rule(
        "E S6",
        M,
        G2,
        "tasks/get answers resultType complete and a DetailedTask: the Task "
        "fields, inputRequests when input_required, result when completed",
        "the tasks/get answer is not a complete DetailedTask",
        "E 3.2, SEP §Task Status",
        aliases=("S6",),
    ),
    Rule(
        "E S7",
        M,
        G2,
        "a tool's isError result ends the task completed, never failed",
        "a failed task carried the tool's isError result",
        "SEP §Task Execution Errors",
    ),
    Rule(
        "E S8",
        M,
        G2,
        "a failed task carries error {code, message} and no result",
        "a failed task lacks its error (or carries a result)",
        "SEP §Task Execution Errors",
    ),
    Rule(
        "E S13",
        M,
        G2,
        "tasks/update answers an empty ack {resultType: complete}",
        "the tasks/update ack is not empty",
        "SEP §tasks/update Response",
    ),
    Rule(
        "E S14",
        M,
        G2,
        "an input request key names one request for the task's whole life",
        "an input request key came back naming a different request",
        "SEP key uniqueness",
    ),
    Rule(
        "E S15",
        M,
        G2,
        "tasks/cancel answers an empty ack {resultType: complete}",
        "the tasks/cancel ack is not empty",
        "SEP §Task Cancellation",
    ),
    Rule(
        "E S16",
        M,
        G2,
        "tasks/result answers -32601",
        "tasks/result did not answer -32601",
        "SEP §Protocol Errors",
        checked=False,
    ),
    Rule(
        "E S17",
        M,
        G2,
        "tasks/list answers -32601",
        "tasks/list did not answer -32601",
        "CONF tasks-removed-tasks-list",
        checked=False,
    ),
    Rule(
        "E S21",
        S,
        G2,
        "MRTR input of a tools/call is resolved before its task is created",
        "a task-only tool created its task before asking its MRTR input",
        "SEP §Composition with MRTR",
        checked=False,
    ),
    Rule(
        "E S22",
        M,
        G2,
        "a terminal status never changes",
        "the task's status changed after it was terminal",
        "EXTDOC, E C27",
        aliases=("E C27",),
    ),
    Rule(
        "E S23",
        M,
        G2,
        "an inlined result carries no related-task _meta",
        "the task's inlined result carries io.modelcontextprotocol/related-task",
        "CONF tasks-no-related-task-meta-on-inlined-result",
    ),
    Rule(
        "E S25",
        M,
        G2,
        "notifications/tasks params are a complete DetailedTask",
        "a notifications/tasks lacks a DetailedTask field",
        "SEP §Task Status Notifications, E C42",
        aliases=("E C42",),
    ),
    Rule(
        "E S24",
        S,
        G2,
        "an error answered as a JSON body has the HTTP status of its code: -32601 404; "
        "-32020, -32021, -32022 400 (the HTTP-status part of S24, with E C51-C54; stated "
        "without a keyword, so a warning)",
        "an error came with an HTTP status other than its code's",
        "E S24 (part), E C51-C54",
    ),
    Rule(
        "E C7",
        S,
        G2,
        "a 2026-07-28 server mints and echoes no Mcp-Session-Id (there are no sessions)",
        "a 2026-07-28 answer carries an Mcp-Session-Id",
        "E C7 (CL #1, HTTP §Earlier revisions)",
    ),
    Rule(
        "E C15",
        M,
        G2,
        "every 2026-07-28 result carries resultType",
        "a result has no resultType (the client reads it as complete, E C16)",
        "BASIC §ResultType",
    ),
    Rule(
        "E C17",
        M,
        G2,
        "resultType is complete, input_required, or task (when the extension was declared)",
        "a result has a resultType the client does not recognise",
        "BASIC §ResultType",
    ),
    Rule(
        "E C19",
        M,
        G2,
        "resultType task only answers tools/call",
        "a result other than tools/call's says resultType task (on tasks/get a warning, E A-1)",
        "SEP §Supported Methods",
    ),
    Rule(
        "E C40",
        M,
        G2,
        "notifications/subscriptions/acknowledged comes first on a listen",
        "a listen's notification came before its acknowledgement",
        "SUBS",
    ),
    Rule(
        "E C41",
        M,
        G2,
        "every notification on a listen stream carries _meta subscriptionId",
        "a notifications/tasks carries no io.modelcontextprotocol/subscriptionId",
        "SUBS",
    ),
    Rule(
        "E A-23",
        S,
        G2,
        "a missing client capability is answered -32021 (reading: an earlier draft's -32003 "
        "whose data names requiredCapabilities is read as -32021, MissingClientCapability; a "
        "bare -32003 keeps no meaning, E C55)",
        "the server answered an earlier draft's -32003 for a missing capability (read as -32021)",
        "E C52; the extension draft's error table",
    ),
    Rule(
        "E A-27",
        S,
        G2,
        "the status push is notifications/tasks and a listen's acknowledgement names "
        "notifications.taskIds (reading: earlier drafts' notifications/tasks/status and "
        "tasksStatus filter are read as those; the client sends only the current form)",
        "the server speaks an earlier draft's push: notifications/tasks/status, or an "
        "acknowledgement naming tasksStatus (read as the current form)",
        "E C39-C42; ext-tasks 0.2.2 and the current draft",
    ),
    Rule(
        "E C43",
        M,
        G2,
        "no progress for a task once CreateTaskResult is returned",
        "a progress notification for a tools/call came after it returned its task",
        "SEP, CL #4",
    ),
    # --- caching hints (SEP-2549), 2026-07-28 -------------------------------------------------
    Rule(
        "E H1",
        M,
        G2,
        "a complete result of server/discover, tools/list, prompts/list, resources/list, "
        "resources/templates/list or resources/read carries ttlMs and cacheScope",
        "a cacheable result has no ttlMs or no cacheScope (the client reads ttlMs 0: stale "
        "at once; cacheScope private)",
        "SEP-2549, E C12 (CacheableResult)",
    ),
    Rule(
        "E H2",
        M,
        G2,
        "ttlMs is a non-negative integer (milliseconds); cacheScope is public or private",
        "a cacheable result's ttlMs or cacheScope is malformed (read as 0 / private, and "
        "warned: LenientCacheHint)",
        "SEP-2549 (CacheableResult schema)",
    ),
)
"""Every registered rule by id (aliases included, mapping to the same Rule)."""


def rule(rule_id: str) -> Rule:
    """The registered rule ``rule_id`` (or an alias of it); KeyError when unknown."""
    return RULES[rule_id]


def unique_rules(rules: Iterable[Rule] | None = None) -> list[Rule]:
    """Each rule once, in registry order."""
    seen: dict[str, Rule] = {}
    for r in RULES.values() if rules is None else rules:
        seen.setdefault(r.id, r)
    return list(seen.values())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown() -> str:
    """``docs/rules.md``: the registry as a table."""
    lines = [
        "# Server rules a client can observe",
        "",
        "Generated from `mcp_tasks_client.conformance.RULES` by "
        "`python -m mcp_tasks_client.conformance`; do not edit by hand.",
        "",
        "Ids: `V-nn` (2025-11-25 server rules), `T:nnn` (a line of the 2025-11-25 tasks text), "
        "`C-nn` (2025-11-25 receiver rules), `E Snn` / `E Cnn` (the 2026-07-28 tasks "
        "extension's server checks and rules), `A-nn` / `E A-nn` (our readings of "
        "ambiguities). *Checked*: the strict `Validator` checks it on live traffic; the "
        "others need a probe. *Verdict*: what a broken rule is reported as.",
        "",
        "| Id | Level | Generations | Verdict | Checked | Rule | Failure message | Source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in unique_rules():
        gens = ", ".join(g.value for g in sorted(r.generations, key=lambda g: g.value))
        ident = r.id if not r.aliases else f"{r.id} ({', '.join(r.aliases)})"
        lines.append(
            f"| {ident} | {r.level.value} | {gens} | {r.default_verdict.value} | "
            f"{'yes' if r.checked else 'no'} | {_cell(r.summary)} | {_cell(r.failure)} | "
            f"{_cell(r.source)} |"
        )
    return "\n".join(lines) + "\n"
