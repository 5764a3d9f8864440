"""``explore``: stateful, shrinking conformance testing of a live server.

Hypothesis's stateful testing draws sequences of operations on a live server, and a model
(:class:`~._explore_model.TaskModel`) judges every answer, as the strict Validator judges
every message; a sequence that breaks a rule is shrunk to the shortest one that still does
and is given back as a replayable pytest file.

- :func:`server_machine` builds the ``RuleBasedStateMachine`` for one server (pytest runs
  ``server_machine(url, generation).TestCase``). Each example opens ``budget.sessions``
  Client sessions (each its own ``initialize`` in 2025-11-25), each in a portal of its own (a
  trio loop in a thread), each reading ``tools/list`` once, and draws its rules, each in one
  session: ``start`` a task (only of a tool the caller named safe, with arguments drawn from
  its input schema over the caller's), ``poll`` one, ``fetch`` its result (2025-11-25:
  ``tasks/result``, waiting ``result_wait`` at most; the question it brings accepted,
  declined or cancelled), ``list`` tasks (2025-11-25), ``cancel`` one (or an id no task
  has), ``race`` (``tasks/get`` and ``tasks/cancel`` of one task sent at once, judged in
  whichever order explains both answers), ``answer`` or decline its open input (2026-07-28
  ``inputRequests``), ``listen`` to one or all of its tasks and ``unlisten`` (2026-07-28
  ``subscriptions/listen``, held open in the background; a server answering -32601 has none,
  and none is drawn again), and ``wait`` (let time pass). Without safe tools it is
  read-only: it lists, and polls and cancels ids no task has.
- :func:`explore` runs that machine within an :class:`ExploreBudget` (examples, steps, wall
  time, tasks alive at once, sessions at once) and returns an :class:`ExploreReport`: the
  MUST rules broken, the shrunk steps (hypothesis's shrinking, then replays leaving steps
  out), the SHOULD rules broken as warnings, and :meth:`ExploreReport.replay_script`.
- :func:`replay` runs recorded steps again against a URL (what the replay script calls).

May import: the Client and what it stands on (``_client``, ``_exceptions``, ``_generation``,
``_io``, ``builders``, ``inputs``, ``models``), this package's ``transport``, ``validator``,
``rules`` and ``_explore_model``; hypothesis (the ``testing`` extra).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import pprint
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import attrs
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from .._client import Client, Timeouts
from .._exceptions import MCPTasksError, RPCError, UsageError
from .._generation import Generation
from .._io.http import HttpTransport
from ..builders import ToolCall
from ..inputs import InputContext, InputRouter
from ..models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCNotification,
    Tool,
)
from ._explore_model import JUDGED, Broken, TaskModel
from .rules import RULES, Verdict
from .transport import ConformancePolicy, ValidatingTransport
from .validator import Validator

__all__ = [
    "EXPLORE_CLIENT_INFO",
    "ExploreBudget",
    "ExploreReport",
    "RuleBroken",
    "explore",
    "replay",
    "server_machine",
]

JSON = dict[str, Any]
Step = tuple[str, JSON]
EXPLORE_CLIENT_INFO = Implementation("mcp-tasks-client-explore", "0")
NO_SUCH_TASK = "mcp-tasks-explore-no-such-task"
ANSWERS: Mapping[str, ElicitAction] = {
    "accept": ElicitAction.ACCEPT,
    "decline": ElicitAction.DECLINE,
    "cancel": ElicitAction.CANCEL,
}
"""How a fetch answers a 2025-11-25 question its ``tasks/result`` stream brings."""
MAX_LISTENS = 2
"""Listens open at once in a session (E C44 allows several; two is a listen opened twice)."""
_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ORDERED = frozenset(rule for by in JUDGED.values() for rule in by.values())
"""The rules the model judges across answers: for answers in flight at once, its judgment
(in every order the server could have served them) is the one that counts."""
_ACKNOWLEDGED, _PUSHED = "notifications/subscriptions/acknowledged", "notifications/tasks"

_TTLS: Mapping[Generation, tuple[int | None, ...]] = {
    Generation.V2025_11_25: (None, 60_000),
    Generation.V2026_07_28: (None,),  # the server alone sets ttlMs (E 4)
}
"""The ttls a task may ask for, per generation."""
_OPERATIONS: Mapping[Generation, frozenset[str]] = {
    Generation.V2025_11_25: frozenset({"list", "fetch"}),
    Generation.V2026_07_28: frozenset({"answer", "listen"}),
}
"""The operations a generation has beyond start, poll, cancel and wait."""


@attrs.frozen
class ExploreBudget:
    """How much exploring to do: ``examples`` sequences of at most ``steps`` operations,
    stopping once ``wall_time`` seconds have passed (the example running then finishes, and
    a failure found still shrinks); at most ``concurrency`` tasks alive at once in a
    session, and ``sessions`` Client sessions open at once on the server in each sequence
    (each operation drawn in one of them); ``request_timeout`` bounds each request,
    ``result_wait`` a blocking ``tasks/result``; a listen step ends once its stream has been
    quiet for ``listen_quiet`` seconds after its acknowledgement (what the server pushes
    right after it is judged with the step that opened the listen, not left to whatever step
    comes next, or to none at a sequence's end). A failure found is shrunk by hypothesis for
    at most ``shrink_examples`` more sequences, then by replaying it with steps left out."""

    examples: int = attrs.field(default=25, validator=attrs.validators.gt(0))
    steps: int = attrs.field(default=12, validator=attrs.validators.gt(0))
    wall_time: float = attrs.field(default=120.0, validator=attrs.validators.gt(0))
    concurrency: int = attrs.field(default=3, validator=attrs.validators.gt(0))
    request_timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    result_wait: float = attrs.field(default=1.0, validator=attrs.validators.gt(0))
    sessions: int = attrs.field(default=1, validator=attrs.validators.gt(0))
    shrink_examples: int = attrs.field(default=25, validator=attrs.validators.ge(0))
    listen_quiet: float = attrs.field(default=0.1, validator=attrs.validators.ge(0))


class _OutOfTime(BaseException):
    """The wall time is spent: stops hypothesis at once (it lets a BaseException through),
    where a rejected example would make its data generation inconsistent."""


class RuleBroken(AssertionError):
    """A sequence of operations broke these rules (what makes hypothesis shrink it)."""

    def __init__(self, broken: Sequence[Broken], steps: Sequence[Step]) -> None:
        self.broken = list(broken)
        self.steps = list(steps)
        super().__init__("; ".join(str(b) for b in broken))


@attrs.frozen
class ExploreReport:
    """What :func:`explore` found: the rules the shortest failing sequence broke (empty: none
    found within the budget), that sequence, and how much was explored; ``warnings``: the
    SHOULD rules (a WARN verdict, as the Validator gives them) any sequence broke, one
    finding per rule. They fail nothing and are not shrunk."""

    url: str
    generation: Generation
    broken: tuple[Broken, ...]
    steps: tuple[Step, ...]
    examples: int
    safe_tools: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    warnings: tuple[Broken, ...] = ()

    @property
    def warned(self) -> tuple[str, ...]:
        """The ids of the SHOULD rules broken (:attr:`warnings`)."""
        return tuple(sorted({b.rule for b in self.warnings}))

    @property
    def ok(self) -> bool:
        return not self.broken

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(sorted({b.rule for b in self.broken}))

    def to_json(self) -> JSON:
        return {
            "url": self.url,
            "generation": self.generation.value,
            "examples": self.examples,
            "broken": [{"rule": b.rule, "detail": b.detail} for b in self.broken],
            "steps": [[name, args] for name, args in self.steps],
            "warnings": [{"rule": b.rule, "detail": b.detail} for b in self.warnings],
        }

    def replay_script(self) -> str:
        """A pytest file that replays the shrunk sequence against the same URL and fails
        with the same rules while the server still breaks them."""
        steps = pprint.pformat([[n, dict(a)] for n, a in self.steps], sort_dicts=False)
        safe = {k: dict(v) for k, v in self.safe_tools.items()}
        return (
            f'"""Replay of `mcp-tasks explore`: {", ".join(self.rule_ids) or "nothing"} broken '
            f"at {self.url} ({self.generation.value}).\n\n"
            + "".join(f"- {b}\n" for b in self.broken)
            + '"""\n\n'
            "from mcp_tasks_client import Generation\n"
            "from mcp_tasks_client.conformance import replay\n\n"
            f"URL = {self.url!r}\n"
            f"STEPS = {steps}\n\n\n"
            "def test_replay() -> None:\n"
            f"    broken = replay(URL, Generation({self.generation.value!r}), STEPS, "
            f"safe_tools={safe!r})\n"
            "    assert broken == [], broken\n"
        )


def _draw_value(schema: Any, fallback: Any) -> st.SearchStrategy[Any]:
    """Values for one property of an input schema (the caller's value when it has one the
    strategy cannot improve on)."""
    if not isinstance(schema, Mapping):
        return st.just(fallback)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 1000)
        return st.integers(low, high)
    if kind == "number":
        low, high = schema.get("minimum", 0), schema.get("maximum", 1000)
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    return st.just(fallback)


def arguments_for(tool: Tool | None, given: Mapping[str, Any]) -> st.SearchStrategy[JSON]:
    """Arguments for a safe tool: the caller's as given (a caller who names a tool safe names
    the values that keep it so: a duration, a size), and each other property of its input
    schema that has a type (string, integer, number, boolean, enum) drawn or left out."""
    schema = tool.input_schema if tool is not None else {}
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return st.just(dict(given))
    required = set(schema.get("required") or ())
    fixed = {k: st.just(v) for k, v in given.items()}
    drawn = {k: _draw_value(p, None) for k, p in props.items() if k not in given}
    return st.fixed_dictionaries(
        {**fixed, **{k: v for k, v in drawn.items() if k in required}},
        optional={k: v for k, v in drawn.items() if k not in required},
    )


@attrs.define
class _Listen:
    """One ``subscriptions/listen`` of a session: the tasks it named, what its
    acknowledgement agreed to, and a model of its own judging its pushes in their order."""

    ids: list[str]
    model: TaskModel
    request_id: Any = None
    agreed: list[str] | None = None
    refused: int | None = None
    """The error code the listen was answered with (-32601: the server has no listens)."""
    ended: bool = False
    settled: anyio.Event | None = None
    """Set once acknowledged or ended (made on the portal's loop)."""
    future: Any = None


class _Session:
    """One Client session on a portal of its own: the operations, each judged by the
    Validator (every message) and the model (every answer)."""

    def __init__(
        self,
        url: str,
        generation: Generation,
        safe_tools: Mapping[str, Mapping[str, Any]],
        budget: ExploreBudget,
        known: frozenset[str] = frozenset(),
    ) -> None:
        self.generation, self.budget = generation, budget
        self.known = known
        """Rules an earlier run found: not judged here (to look for the next failure)."""
        self.model = TaskModel(generation)
        self.validator = Validator(generation)
        self.broken: list[Broken] = []
        self.warnings: list[Broken] = []
        """What broke a SHOULD rule (a WARN verdict): noted, never failing the sequence."""
        self.tasks: list[str] = []
        self.answer_with = ElicitAction.ACCEPT
        self.open_inputs: dict[str, Any] = {}
        """The input requests the last poll showed (2026-07-28)."""
        self.listens: list[_Listen] = []
        """The listens opened, in order (2026-07-28)."""
        self.no_listens = False
        """The server answered a listen -32601: it offers none (no listen is drawn again)."""
        self._by_request: dict[Any, _Listen] = {}
        self._heard = 0
        """Listen notifications the reader got so far (a listen step waits for quiet)."""
        self._inbox: collections.deque[tuple[str, JSON]] = collections.deque()
        """Listen notifications as the reader got them, judged by the test's thread."""
        self._stack = contextlib.ExitStack()
        self.portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal("trio"))
        transport = ValidatingTransport(
            HttpTransport(url), self.validator, policy=ConformancePolicy.RECORD
        )
        router = InputRouter(elicitation=ElicitationCapability(form={}))
        router.default_elicitation(self._answer)
        timeout = budget.request_timeout
        self.client = Client(
            transport,
            generation=generation,
            client_info=EXPLORE_CLIENT_INFO,
            capabilities=router.capabilities(),
            timeouts=Timeouts(request=timeout, initialize=timeout),
        )
        try:
            self._stack.enter_context(self.portal.wrap_async_context_manager(self.client))
            router.attach(self.client)
            if "listen" in _OPERATIONS[generation]:  # its listens' notifications
                for method in (_ACKNOWLEDGED, _PUSHED):
                    self.client.on_notification(method, self._notified)
            listed = self.portal.call(self._tools)
        except BaseException:
            self._stack.close()
            raise
        self.tools = {name: listed.get(name) for name in safe_tools if name in listed}
        self.safe = {name: safe_tools[name] for name in self.tools}

    def close(self) -> None:
        try:
            for listen in self.listens:
                if listen.future is not None:
                    listen.future.cancel()
        finally:
            self._stack.close()

    def _notified(self, note: JSONRPCNotification) -> None:
        """Runs in the reader: only noted here (an acknowledgement settles its listen)."""
        params = dict(note.params or {})
        self._inbox.append((note.method, params))
        self._heard += 1
        meta = params.get("_meta")
        sub = meta.get(_SUBSCRIPTION_ID) if isinstance(meta, Mapping) else None
        listen = self._by_request.get(sub)
        if note.method == _ACKNOWLEDGED and listen is not None and listen.settled is not None:
            listen.settled.set()

    async def _tools(self) -> dict[str, Tool]:
        return {tool.name: tool async for tool in self.client.list_tools()}

    async def _answer(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        content: JSON | None = {} if self.answer_with is ElicitAction.ACCEPT else None
        return ElicitResult(self.answer_with, content)

    def _run(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on the portal, judged (:meth:`_judged`)."""
        return self._judged(lambda: self.portal.call(fn, *args))

    def _judged(self, thunk: Callable[[], Any], *, in_flight: bool = False) -> Any:
        """``thunk()``, then the validator's new failures and the listens' new notifications
        judged. ``in_flight``: its requests were in flight at once, so their answers arrived
        in an order that need not be the server's; the Validator's findings across answers
        (a rule the model judges in every order, :data:`ORDERED`) are left to the model."""
        seen = len(self.validator.findings)
        try:
            return thunk()
        finally:
            self._judge_pushes()
            for finding in self.validator.findings[seen:]:
                if finding.rule_id in self.known or (in_flight and finding.rule_id in ORDERED):
                    continue
                if finding.verdict is Verdict.FAIL:
                    self.broken.append(Broken(finding.rule_id, finding.detail))
                elif finding.verdict is Verdict.WARN:
                    self.warnings.append(Broken(finding.rule_id, finding.detail))

    def _judge_pushes(self) -> None:
        while self._inbox:
            method, params = self._inbox.popleft()
            meta = params.get("_meta")
            sub = meta.get(_SUBSCRIPTION_ID) if isinstance(meta, Mapping) else None
            listen = self._by_request.get(sub)
            if listen is None:
                continue  # no subscriptionId, or not ours: the Validator's (E C41)
            if method == _ACKNOWLEDGED:
                filters = params.get("notifications")
                ids = filters.get("taskIds") if isinstance(filters, Mapping) else None
                listen.agreed = (
                    [t for t in ids if isinstance(t, str)] if isinstance(ids, list) else []
                )
                extra = sorted(set(listen.agreed) - set(listen.ids))
                if extra:
                    self.judge(
                        self.model.unagreed(f"a listen of {listen.ids} acknowledged {extra}")
                    )
                continue
            self._judge_push(listen, params)

    def _judge_push(self, listen: _Listen, params: JSON) -> None:
        try:
            task = self.client.driver.read_task(params)
        except (MCPTasksError, KeyError, TypeError, ValueError):
            return  # a malformed push is the Validator's (E S25)
        if listen.agreed is not None and task.task_id not in listen.agreed:
            what = f"a listen agreed to {listen.agreed} pushed task {task.task_id}"
            self.judge(self.model.unagreed(what))
        requests = {k: _plain(v) for k, v in (task.input_requests or {}).items()}
        status, created = task.status.value, task.created_at
        self.judge(
            listen.model.snapshot(task.task_id, status, created, task.last_updated_at, requests)
        )
        self.judge(self.model.seen_elsewhere(task.task_id, status, created, requests))

    def judge(self, broken: Sequence[Broken]) -> None:
        """The model's findings: a MUST rule's breaks the sequence, a SHOULD rule's warns."""
        for found in broken:
            if found.rule not in self.known:
                (self.broken if _fails(found) else self.warnings).append(found)

    # -- the operations ---------------------------------------------------------------------

    def start(self, tool: str, arguments: JSON, ttl_ms: int | None) -> None:
        call = ToolCall(tool, arguments).as_task(
            None if ttl_ms is None else dt.timedelta(milliseconds=ttl_ms)
        )

        async def go() -> Any:
            try:
                return await self.client.start(call, tool=self.tools.get(tool))
            except RPCError:
                return None  # a refusal is the server's to give (the Validator judges it)

        started = self._run(go)
        if isinstance(started, CreateTaskResult):
            task = started.task
            self.model.created(
                task.task_id, task.status.value, task.created_at, task.last_updated_at
            )
            self.tasks.append(task.task_id)

    async def _get(self, task_id: str) -> Any:
        try:
            return await self.client.get_task(task_id)
        except RPCError as exc:
            return exc

    def _got(self, model: TaskModel, task_id: str, got: Any) -> list[Broken]:
        """What ``model`` makes of ``tasks/get`` of ``task_id`` answering ``got``."""
        if isinstance(got, RPCError):
            return model.get_refused(task_id, got.code)
        requests = {k: _plain(v) for k, v in (got.input_requests or {}).items()}
        return model.snapshot(
            got.task_id, got.status.value, got.created_at, got.last_updated_at, requests
        )

    def poll(self, task_id: str) -> bool:
        """``tasks/get`` of ``task_id``, judged; whether it retrieved the task."""
        got = self._run(self._get, task_id)
        self.judge(self._got(self.model, task_id, got))
        if isinstance(got, RPCError):
            return False
        self.open_inputs = dict(got.input_requests or {})
        return True

    def race(self, task_id: str) -> None:
        """``tasks/get`` and ``tasks/cancel`` of ``task_id`` sent at once (a cancel racing a
        poll), judged in whichever order explains both answers (:meth:`TaskModel.in_some_order`)."""
        answers: dict[str, Any] = {}

        async def go() -> None:
            async def get() -> None:
                answers["get"] = await self._get(task_id)

            async def cancel() -> None:
                answers["cancel"] = await self._cancel(task_id)

            async with anyio.create_task_group() as group:
                group.start_soon(get)
                group.start_soon(cancel)

        self._judged(lambda: self.portal.call(go), in_flight=True)
        known = task_id in self.tasks
        self.judge(
            self.model.in_some_order(
                [
                    lambda model: self._got(model, task_id, answers["get"]),
                    lambda model: model.cancel_answered(task_id, known, *answers["cancel"]),
                ],
                serious=_fails,
            )
        )
        got = answers["get"]
        self.open_inputs = {} if isinstance(got, RPCError) else dict(got.input_requests or {})

    def fetch(self, task_id: str, answer: str = "accept") -> None:
        """``tasks/result`` of ``task_id`` (2025-11-25), waiting ``result_wait`` at most; a
        question its stream brings is answered ``answer`` (accept, decline or cancel)."""
        self.answer_with = ANSWERS[answer]

        async def go() -> bool:
            try:
                with anyio.fail_after(self.budget.result_wait):
                    await self.client.task_result_raw(task_id, timeout=self.budget.result_wait)
            except (TimeoutError, MCPTasksError) as exc:
                return isinstance(exc, RPCError)  # the task's own error is an answer too
            return True

        if self._run(go):
            self.model.result_answered(task_id)

    def list_tasks(self, foreign: Sequence[str] = ()) -> None:
        """``tasks/list`` (2025-11-25), every page; ``foreign``: the tasks the sequence's
        other sessions created (none may be listed here, V-28)."""

        async def go() -> list[str]:
            return [task.task_id async for task in self.client.list_tasks()]

        try:
            ids = self._run(go)
        except MCPTasksError:
            return
        self.judge(self.model.listed_foreign(ids, foreign))
        for task_id in self.model.unlisted(ids):  # V-19 is about what tasks/get retrieves
            if self.poll(task_id):
                self.judge(self.model.left_out(task_id))

    async def _cancel(self, task_id: str) -> tuple[str | None, int | None]:
        """``tasks/cancel``'s answer: the task's status (None: an empty ack) or the error code."""
        try:
            task = await self.client.cancel_task(task_id)
        except RPCError as exc:
            return None, exc.code
        return (task.status.value if task is not None else None), None

    def cancel(self, task_id: str) -> None:
        status, code = self._run(self._cancel, task_id)
        self.judge(self.model.cancel_answered(task_id, task_id in self.tasks, status, code))

    def answer(self, task_id: str, accept: bool) -> None:
        keys = list(self.open_inputs)
        if not keys:
            return
        action = ElicitAction.ACCEPT if accept else ElicitAction.DECLINE
        responses = {k: ElicitResult(action, {} if accept else None) for k in keys}

        async def go() -> None:
            with contextlib.suppress(RPCError):
                await self.client.update_task(task_id, responses)

        self._run(go)
        self.open_inputs = {}

    def wait(self, ms: int) -> None:
        self._run(anyio.sleep, ms / 1000)

    def open_listen(self, task_ids: Sequence[str]) -> None:
        """``subscriptions/listen`` of ``task_ids`` (2026-07-28), held open in the
        background; returns once it is acknowledged and its stream has been quiet for
        ``budget.listen_quiet``, or refused or ended (``request_timeout`` at most). A -32601
        means the server offers no listens: none is drawn again."""
        listen = _Listen(list(task_ids), TaskModel(self.generation))
        self.listens.append(listen)

        def opened(request_id: Any) -> None:
            listen.request_id = request_id
            self._by_request[request_id] = listen

        async def body() -> None:
            try:
                await self.client.listen_tasks(listen.ids, on_open=opened)
            except RPCError as exc:
                listen.refused = exc.code
            except MCPTasksError:
                pass  # a stream that broke: the listen is over
            finally:
                listen.ended = True
                if listen.settled is not None:
                    listen.settled.set()

        async def run(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            listen.settled = anyio.Event()
            async with anyio.create_task_group() as group:
                group.start_soon(body)
                with anyio.move_on_after(self.budget.request_timeout):
                    await listen.settled.wait()
                    while not listen.ended:  # until quiet (what follows the ack: E C41)
                        heard = self._heard
                        await anyio.sleep(self.budget.listen_quiet)
                        if self._heard == heard:
                            break
                task_status.started()

        def start() -> None:
            listen.future, _ = self.portal.start_task(run)

        self._judged(start)
        if listen.refused == -32601:
            self.no_listens = True

    def close_listen(self, index: int) -> None:
        """End one open listen (HTTP: its stream closed, E C44)."""
        open_ = [listen for listen in self.listens if not listen.ended]
        if not open_:
            return
        listen = open_[index % len(open_)]
        listen.ended = True
        if listen.future is not None:
            listen.future.cancel()
        self._run(anyio.sleep, 0)  # what came before the close is judged now

    @property
    def open_listens(self) -> int:
        return sum(1 for listen in self.listens if not listen.ended)


def _fails(found: Broken) -> bool:
    """Whether ``found`` fails a sequence: its rule's verdict is FAIL (a SHOULD rule's WARN
    is a warning; a rule the registry lacks fails)."""
    known = RULES.get(found.rule)
    return known is None or known.default_verdict is not Verdict.WARN


def _plain(value: Any) -> Any:
    """An attrs value (an input request) as plain data, to compare two of them."""
    if attrs.has(type(value)):
        return {k: _plain(v) for k, v in attrs.asdict(value, recurse=False).items()}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if isinstance(value, str | int | float | bool | type(None)) else repr(value)


class _Explorer:
    """The sessions of one sequence (``budget.sessions``), open on the same server."""

    def __init__(
        self,
        url: str,
        generation: Generation,
        safe_tools: Mapping[str, Mapping[str, Any]],
        budget: ExploreBudget,
        known: frozenset[str] = frozenset(),
    ) -> None:
        self._stack = contextlib.ExitStack()
        self.sessions: list[_Session] = []
        try:
            for _ in range(budget.sessions):
                session = _Session(url, generation, safe_tools, budget, known)
                self._stack.callback(session.close)
                self.sessions.append(session)
        except BaseException:
            self._stack.close()
            raise

    @property
    def broken(self) -> list[Broken]:
        return [b for session in self.sessions for b in session.broken]

    @property
    def warnings(self) -> list[Broken]:
        return [b for session in self.sessions for b in session.warnings]

    def close(self) -> None:
        self._stack.close()


def run_steps(explorer: _Explorer, steps: Sequence[Step]) -> None:
    """Run recorded ``steps`` (a task named by its index among those its session created; a
    step naming none it has is skipped)."""
    for name, args in steps:
        apply_step(explorer, name, args)


def apply_step(explorer: _Explorer, name: str, args: Mapping[str, Any]) -> None:
    """One recorded step, in the session its ``session`` names (default the first)."""
    session = explorer.sessions[int(args.get("session", 0)) % len(explorer.sessions)]

    def task(i: int) -> str | None:
        return session.tasks[i % len(session.tasks)] if session.tasks else None

    if name == "start":
        session.start(args["tool"], dict(args["arguments"]), args.get("ttl_ms"))
    elif name in ("poll", "fetch", "cancel", "answer", "race"):
        chosen = NO_SUCH_TASK if args.get("unknown") else task(int(args.get("task", 0)))
        if chosen is None:
            return
        if name == "answer":
            session.answer(chosen, bool(args.get("accept", True)))
        elif name == "fetch":
            session.fetch(chosen, str(args.get("answer", "accept")))
        else:
            getattr(session, name)(chosen)
    elif name == "list":
        others = [t for other in explorer.sessions if other is not session for t in other.tasks]
        session.list_tasks(others)
    elif name == "listen":
        chosen = task(int(args.get("task", 0)))
        if chosen is None or session.no_listens:
            return
        session.open_listen(list(session.tasks) if args.get("all") else [chosen])
    elif name == "unlisten":
        session.close_listen(int(args.get("listen", 0)))
    elif name == "wait":
        session.wait(int(args["ms"]))
    else:
        raise UsageError(f"no explore step {name!r}")


def server_machine(
    url: str,
    generation: Generation,
    safe_tools: Mapping[str, Mapping[str, Any]] | None = None,
    budget: ExploreBudget | None = None,
    known: Iterable[str] = (),
) -> type[RuleBasedStateMachine]:
    """The state machine exploring the server at ``url`` in ``generation``: a
    ``RuleBasedStateMachine`` whose ``TestCase`` pytest collects. ``safe_tools``: the tools
    it may call, each with its base arguments (none: read-only); ``known``: rules already
    found, not judged (so a run looks for the next failure)."""
    skip = frozenset(known)
    safe = {k: dict(v) for k, v in (safe_tools or {}).items()}
    limits = budget or ExploreBudget()
    ops = _OPERATIONS[generation]
    many = limits.sessions > 1
    # One session: no session is drawn nor named in a step (the draws, so the sequences
    # found, are a one-session explorer's).
    which: dict[str, Any] = {"session": st.integers(0, limits.sessions - 1)} if many else {}

    def where(session: int) -> JSON:
        return {"session": session} if many else {}

    class ServerMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.explorer = _Explorer(url, generation, safe, limits, skip)
            self.steps: list[Step] = []

        def _s(self, index: int) -> _Session:
            return self.explorer.sessions[index]

        def _any(self, test: Callable[[_Session], bool]) -> bool:
            return any(test(session) for session in self.explorer.sessions)

        def _step(self, name: str, **args: Any) -> None:
            self.steps.append((name, args))
            apply_step(self.explorer, name, args)
            broken = self.explorer.broken
            if broken:
                raise RuleBroken(broken, self.steps)

        @precondition(
            lambda self: self._any(lambda s: bool(s.safe) and len(s.tasks) < limits.concurrency)
        )
        @rule(data=st.data(), ttl=st.sampled_from(_TTLS[generation]), **which)
        def start(self, data: st.DataObject, ttl: int | None, session: int = 0) -> None:
            at = self._s(session)
            if not at.safe or len(at.tasks) >= limits.concurrency:
                return
            tool = data.draw(st.sampled_from(sorted(at.safe)), label="tool")
            arguments = data.draw(
                arguments_for(at.tools.get(tool), at.safe[tool]), label="arguments"
            )
            self._step("start", tool=tool, arguments=arguments, ttl_ms=ttl, **where(session))

        @rule(task=st.integers(0, 7), unknown=st.booleans(), **which)
        def poll(self, task: int, unknown: bool, session: int = 0) -> None:
            unknown = unknown or not self._s(session).tasks
            self._step("poll", task=task, unknown=unknown, **where(session))

        if "fetch" in ops:  # each generation's own operations, defined only there

            @precondition(lambda self: self._any(lambda s: bool(s.tasks)))
            @rule(task=st.integers(0, 7), answer=st.sampled_from(sorted(ANSWERS)), **which)
            def fetch(self, task: int, answer: str, session: int = 0) -> None:
                self._step("fetch", task=task, answer=answer, **where(session))

        if "list" in ops:

            @rule(**which)
            def list_tasks(self, session: int = 0) -> None:
                self._step("list", **where(session))

        @rule(task=st.integers(0, 7), unknown=st.booleans(), **which)
        def cancel(self, task: int, unknown: bool, session: int = 0) -> None:
            unknown = unknown or not self._s(session).tasks
            self._step("cancel", task=task, unknown=unknown, **where(session))

        @precondition(lambda self: self._any(lambda s: bool(s.tasks)))
        @rule(task=st.integers(0, 7), **which)
        def race(self, task: int, session: int = 0) -> None:
            self._step("race", task=task, **where(session))

        if "answer" in ops:

            @precondition(lambda self: self._any(lambda s: bool(s.open_inputs)))
            @rule(task=st.integers(0, 7), accept=st.booleans(), **which)
            def answer(self, task: int, accept: bool, session: int = 0) -> None:
                self._step("answer", task=task, accept=accept, **where(session))

        if "listen" in ops:

            @precondition(
                lambda self: self._any(
                    lambda s: bool(s.tasks) and not s.no_listens and s.open_listens < MAX_LISTENS
                )
            )
            @rule(task=st.integers(0, 7), every=st.booleans(), **which)
            def listen(self, task: int, every: bool, session: int = 0) -> None:
                if self._s(session).open_listens < MAX_LISTENS:
                    self._step("listen", task=task, all=every, **where(session))

            @precondition(lambda self: self._any(lambda s: s.open_listens > 0))
            @rule(listen=st.integers(0, MAX_LISTENS - 1), **which)
            def unlisten(self, listen: int, session: int = 0) -> None:
                self._step("unlisten", listen=listen, **where(session))

        @rule(ms=st.sampled_from([10, 50, 200]))
        def wait(self, ms: int) -> None:
            self._step("wait", ms=ms)

        def teardown(self) -> None:
            self.explorer.close()

    ServerMachine.__name__ = ServerMachine.__qualname__ = "ServerMachine"
    ServerMachine.TestCase.settings = _settings(limits)
    return ServerMachine


def _settings(budget: ExploreBudget, *, seed_db: bool = False) -> settings:
    return settings(
        max_examples=budget.examples,
        stateful_step_count=budget.steps,
        deadline=None,
        database=None,
        derandomize=not seed_db,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        print_blob=False,
        report_multiple_bugs=False,
    )


def _seeded(machine: type[RuleBasedStateMachine]) -> Callable[[], RuleBasedStateMachine]:
    """``machine``'s factory for hypothesis: a derandomized run draws from a seed hypothesis
    hashes from the factory's source, so the factory is this fixed function, not the class
    (whose source changes with the explorer's code: the same server then got other sequences,
    and another table of findings, after any edit of it)."""

    def explored() -> RuleBasedStateMachine:
        return machine()

    return explored


def explore_sync(
    url: str,
    generation: Generation,
    *,
    safe_tools: Mapping[str, Mapping[str, Any]] | None = None,
    budget: ExploreBudget | None = None,
    known: Iterable[str] = (),
) -> ExploreReport:
    """:func:`explore` without an event loop (it starts its own, one per example)."""
    limits = budget or ExploreBudget()
    safe = {k: dict(v) for k, v in (safe_tools or {}).items()}
    skip = frozenset(known)
    machine = server_machine(url, generation, safe, limits, skip)
    last: list[RuleBroken] = []
    examples = 0
    found_at = [0]  # the example that found the first failure
    warned: dict[str, Broken] = {}  # the first warning of each SHOULD rule, any sequence
    timed_out = False
    started = time.monotonic()

    class RecordingMachine(machine):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            nonlocal examples
            nonlocal timed_out
            if time.monotonic() - started > limits.wall_time and not last:
                timed_out = True
                raise _OutOfTime  # no new example (a failure found still shrinks)
            if last and examples - found_at[0] >= limits.shrink_examples:
                raise _OutOfTime  # hypothesis has shrunk enough: the replays finish it
            examples += 1
            super().__init__()

        def teardown(self) -> None:
            for warning in self.explorer.warnings:
                warned.setdefault(warning.rule, warning)
            super().teardown()

        def _step(self, name: str, **args: Any) -> None:
            try:
                super()._step(name, **args)
            except RuleBroken as exc:
                if not last:
                    found_at[0] = examples
                last.append(exc)
                raise

    def warnings() -> tuple[Broken, ...]:
        return tuple(warned[rule] for rule in sorted(warned))

    try:
        # a factory function is what its docstring allows; its stub says a class
        run_state_machine_as_test(_seeded(RecordingMachine), settings=_settings(limits))  # type: ignore[arg-type]
    except RuleBroken as exc:
        final = exc
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        # Out of time (hypothesis may report the interrupted example as flaky), or a session
        # failed while shrinking (the failure found stands).
        if last:
            final = min(last, key=lambda exc: len(exc.steps))  # the shortest found so far
        elif timed_out:
            return ExploreReport(url, generation, (), (), examples, safe, warnings())
        else:
            raise
    else:
        return ExploreReport(url, generation, (), (), examples, safe, warnings())
    broken, steps = _tightened(url, generation, safe, limits, final.broken, final.steps, skip)
    return ExploreReport(url, generation, tuple(broken), tuple(steps), examples, safe, warnings())


_PLAINER = (
    ("task", 0),
    ("all", False),
    ("listen", 0),
    ("answer", "accept"),
    ("ttl_ms", None),
)
"""The plainer value of a step's argument :func:`_tightened` tries."""


def _tightened(
    url: str,
    generation: Generation,
    safe: Mapping[str, Mapping[str, Any]],
    budget: ExploreBudget,
    broken: Sequence[Broken],
    steps: Sequence[Step],
    known: frozenset[str] = frozenset(),
) -> tuple[list[Broken], list[Step]]:
    """The sequence hypothesis shrank, shrunk further by replaying it: a step left out, or a
    task named by index 0 rather than another, is kept so while the replay still breaks the
    same rules (hypothesis shrinks the draws, and a draw that is gone can shift the meaning of
    the ones after it; this shrinks the steps themselves), and so is a plainer argument
    (:data:`_PLAINER`); for ``budget.wall_time`` at most. A replay that breaks them no more
    (a timing-dependent failure) changes nothing."""
    want = {b.rule for b in broken}
    best_broken, best = list(dict.fromkeys(broken)), list(steps)
    until = time.monotonic() + budget.wall_time

    def still(candidate: list[Step]) -> bool:
        nonlocal best_broken, best
        if time.monotonic() > until:
            return False  # out of time: the shortest so far stands
        try:
            found, ran = _replayed(url, generation, candidate, safe, budget, known)
        except MCPTasksError:
            return False
        if {b.rule for b in found} != want:
            return False
        best_broken, best = found, candidate[:ran]
        return True

    changed = True
    while changed:
        changed = any(still(best[:i] + best[i + 1 :]) for i in range(len(best)) if len(best) > 1)
        if not changed:
            changed = any(
                still([*best[:i], (name, {**args, key: plain}), *best[i + 1 :]])
                for i, (name, args) in enumerate(best)
                for key, plain in _PLAINER
                if key in args and args[key] != plain
            )
        if not changed:  # a race is a poll and a cancel: the poll alone may do
            changed = any(
                still([*best[:i], ("poll", {**args, "unknown": False}), *best[i + 1 :]])
                for i, (name, args) in enumerate(best)
                if name == "race"
            )
    return best_broken, best


async def explore(
    url: str,
    generation: Generation,
    *,
    safe_tools: Mapping[str, Mapping[str, Any]] | None = None,
    budget: ExploreBudget | None = None,
    known: Iterable[str] = (),
) -> ExploreReport:
    """Explore the server at ``url`` in ``generation``: draw sequences of operations within
    ``budget``, judge each answer, and shrink a failing sequence to the shortest one that
    still fails; see the module docstring. ``safe_tools``: the tools it may call, with their
    base arguments (none: read-only). A run reports one failure: ``known`` (the rules of
    failures found before) are not judged, so a run finds the next one.
    Deadline: ``budget.wall_time`` for drawing new examples, then the shrinking of a failure
    found: ``budget.shrink_examples`` more examples, then replays for ``budget.wall_time`` at
    most (each request bounded by ``budget.request_timeout``). Cancelled: the exploring
    thread is abandoned to finish its current example."""
    return await anyio.to_thread.run_sync(
        lambda: explore_sync(
            url, generation, safe_tools=safe_tools, budget=budget, known=frozenset(known)
        ),
        abandon_on_cancel=True,
    )


def replay(
    url: str,
    generation: Generation,
    steps: Sequence[Sequence[Any]],
    *,
    safe_tools: Mapping[str, Mapping[str, Any]] | None = None,
    budget: ExploreBudget | None = None,
    known: Iterable[str] = (),
) -> list[Broken]:
    """Run recorded ``steps`` (``[name, args]`` pairs, as :meth:`ExploreReport.to_json` and
    the replay script give them) against ``url`` in one session; the rules they broke
    (``known`` not judged, as the run that found them had it)."""
    pairs = [(str(n), dict(a)) for n, a in steps]
    broken, _ = _replayed(url, generation, pairs, safe_tools or {}, budget, frozenset(known))
    return broken


def _replayed(
    url: str,
    generation: Generation,
    steps: Sequence[Step],
    safe_tools: Mapping[str, Mapping[str, Any]],
    budget: ExploreBudget | None,
    known: frozenset[str] = frozenset(),
) -> tuple[list[Broken], int]:
    """:func:`replay`, and how many steps ran (up to the first that broke a rule)."""
    limits = budget or ExploreBudget()
    needed = 1 + max((int(args.get("session", 0)) for _, args in steps), default=0)
    limits = attrs.evolve(limits, sessions=needed)
    explorer = _Explorer(url, generation, dict(safe_tools), limits, known)
    ran = 0
    try:
        for name, args in steps:
            ran += 1
            apply_step(explorer, name, args)
            if explorer.broken:
                break
    finally:
        explorer.close()
    return list(dict.fromkeys(explorer.broken)), ran
