"""The real :class:`Poller` against a scripted in-memory server, in simulated time.

Every scenario runs under trio's ``MockClock(autojump_threshold=0)``: whenever every task is
blocked the clock jumps to the next deadline, so hours of polling take milliseconds and every
timing below is exact. The scripted server (:class:`SimServer`) answers ``initialize``,
``tools/call`` (one task per tool ``t<i>``), ``tasks/get`` (one step of that task's status
script per poll), ``tasks/result`` and ``tasks/cancel``, and records each request with
``trio.current_time()``; the assertions are made on that record afterwards.

``createdAt`` is served from the same clock the Poller gets as ``wall_clock`` (``EPOCH`` plus
the simulated time), so ttl expiry (``createdAt + ttl``) is deterministic.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import attrs
import pytest
import trio
import trio.testing
from budget import examples
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from started import task_created

from mcp_tasks_client import (
    Cancelled,
    Client,
    Completed,
    Expired,
    Failed,
    Generation,
    MCPTasksError,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.errors import DeadlineExceeded
from mcp_tasks_client.models import CreateTaskResult, Implementation, TextContent
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

EPOCH = dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)
TERMINAL = ("completed", "failed", "cancelled")
OUTCOME_OF: dict[str, type[Any]] = {
    "completed": Completed,
    "failed": Failed,
    "cancelled": Cancelled,
}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "sim", "version": "0"},
}
MAX_REQUESTS = 20_000  # a poller that never stops (or polls in a zero-time loop) fails, not hangs
EPS = 1e-9


def stamp(seconds: float) -> str:
    text = (EPOCH + dt.timedelta(seconds=seconds)).isoformat()
    return text.replace("+00:00", "Z")


def wall_clock() -> dt.datetime:
    """The wall clock matching the server's timestamps: EPOCH plus simulated seconds."""
    return EPOCH + dt.timedelta(seconds=trio.current_time())


def close_below(value: float, bound: float) -> bool:
    """``value >= bound`` up to float rounding."""
    return value >= bound - EPS * max(1.0, abs(value), abs(bound))


# -- the scripted server ---------------------------------------------------------------------


@attrs.define
class TaskSpec:
    """One task: the statuses its polls show, in order (the last one repeats)."""

    script: list[str]
    interval_ms: int | None = None
    ttl_ms: int | None = None
    gone_after_ttl: bool = False
    """The server deletes the task once its ttl ran out (T:459): tasks/get answers -32602."""

    @property
    def terminal(self) -> str | None:
        return self.script[-1] if self.script[-1] in TERMINAL else None


@attrs.define
class SimTask:
    task_id: str
    spec: TaskSpec
    created: float
    updated: float
    status: str = "working"
    step: int = 0

    def wire(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": stamp(self.created),
            "lastUpdatedAt": stamp(self.updated),
            "ttl": self.spec.ttl_ms,
        }
        if self.spec.interval_ms is not None:
            task["pollInterval"] = self.spec.interval_ms
        return task

    @property
    def expires_at(self) -> float | None:
        return None if self.spec.ttl_ms is None else self.created + self.spec.ttl_ms / 1000


@attrs.define
class Seen:
    """One request the server received."""

    time: float
    method: str
    task_id: str | None
    status: str | None = None
    """For tasks/get: the status it answered (``"gone"`` for -32602)."""
    answered: float | None = None
    """When the server answered (a tasks/result blocks until the task is terminal)."""


class SimServer:
    """The scripted server end. ``tasks/result`` on a task that is not terminal is held open
    and answered once it is (V-11, C-38), or with -32602 when a ttl deletes the task."""

    def __init__(self, end: MemoryServerEnd, specs: list[TaskSpec]) -> None:
        self.end = end
        self.specs = specs
        self.tasks: dict[str, SimTask] = {}
        self.seen: list[Seen] = []
        self.held: dict[str, list[tuple[Any, Seen]]] = {}

    def polls(self, task_id: str) -> list[Seen]:
        return [s for s in self.seen if s.method == "tasks/get" and s.task_id == task_id]

    def results(self, task_id: str) -> list[Seen]:
        return [s for s in self.seen if s.method == "tasks/result" and s.task_id == task_id]

    def cancels(self) -> list[str]:
        return [s.task_id for s in self.seen if s.method == "tasks/cancel" and s.task_id]

    def terminal_poll(self, task_id: str) -> Seen | None:
        return next((s for s in self.polls(task_id) if s.status in TERMINAL), None)

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    message = await self.end.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    tg.cancel_scope.cancel()  # the client left
                    return
                if "id" not in message:
                    continue  # notifications/initialized, notifications/cancelled
                assert len(self.seen) < MAX_REQUESTS, "the client never stops polling"
                params = message.get("params") or {}
                seen = Seen(trio.current_time(), message["method"], params.get("taskId"))
                self.seen.append(seen)
                answer = self.answer(seen, params, message["id"])
                if answer is not None:
                    await self.reply(message["id"], seen, answer)
                task = self.tasks.get(seen.task_id or "")
                if task is not None and seen.method == "tools/call":
                    tg.start_soon(self.delete_at_expiry, task)
                if task is not None and task.status in TERMINAL:
                    await self.release_held(task)

    async def reply(self, request_id: Any, seen: Seen, answer: dict[str, Any]) -> None:
        seen.answered = trio.current_time()
        await self.end.send({"jsonrpc": "2.0", "id": request_id, **answer})

    async def release_held(self, task: SimTask, answer: dict[str, Any] | None = None) -> None:
        for request_id, seen in self.held.pop(task.task_id, []):
            await self.reply(request_id, seen, answer or self.result_of(task))

    async def delete_at_expiry(self, task: SimTask) -> None:
        expires = task.expires_at
        if expires is None or not task.spec.gone_after_ttl:
            return
        await trio.sleep_until(expires)
        gone = {"error": {"code": -32602, "message": "task expired and was deleted"}}
        await self.release_held(task, gone)

    async def finish(self, task_id: str, status: str) -> None:
        """The task ends on its own, and the server says so (T:477, C-44)."""
        task = self.tasks[task_id]
        task.status, task.updated = status, trio.current_time()
        note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task.wire()}
        await self.end.send(note)
        await self.release_held(task)

    @staticmethod
    def result_of(task: SimTask) -> dict[str, Any]:
        if task.status == "cancelled":  # an error or a result; never a success
            return {"error": {"code": -32603, "message": "the task was cancelled"}}
        related = {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        text = {"type": "text", "text": f"{task.task_id} {task.status}"}
        result = {"content": [text], "isError": task.status == "failed", "_meta": related}
        return {"result": result}

    def answer(self, seen: Seen, params: dict[str, Any], request_id: Any) -> dict[str, Any] | None:
        now = seen.time
        if seen.method == "initialize":
            return {"result": INIT_RESULT}
        if seen.method == "tools/call":
            assert "task" in params  # C-16/C-17: only task-augmented calls here
            index = int(params["name"][1:])
            created = SimTask(f"task-{index}", self.specs[index], now, now)
            self.tasks[created.task_id] = created
            return {"result": {"task": created.wire()}}
        task = self.tasks.get(seen.task_id or "")
        if task is None:
            return {"error": {"code": -32602, "message": "unknown task"}}
        expires = task.expires_at
        if task.spec.gone_after_ttl and expires is not None and now >= expires:
            seen.status = "gone"
            return {"error": {"code": -32602, "message": "task expired and was deleted"}}
        if seen.method == "tasks/get":
            if task.status not in TERMINAL:
                script = task.spec.script
                task.status = script[min(task.step, len(script) - 1)]
                task.step += 1
                task.updated = now
            seen.status = task.status
            return {"result": task.wire()}
        if seen.method == "tasks/result":
            if task.status in TERMINAL:
                return self.result_of(task)
            self.held.setdefault(task.task_id, []).append((request_id, seen))
            return None  # blocks until terminal (T:465)
        if seen.method == "tasks/cancel":
            if task.status in TERMINAL:
                return {"error": {"code": -32602, "message": "task is terminal"}}
            task.status = "cancelled"  # set before responding (C-41)
            task.updated = now
            return {"result": task.wire()}
        return {"error": {"code": -32601, "message": f"no {seen.method}"}}


Body = Callable[[Client, Poller, list[CreateTaskResult]], Awaitable[None]]


def run_sim(
    specs: list[TaskSpec],
    policy: PollPolicy,
    seed: int,
    body: Body,
    *,
    server_extra: Callable[[SimServer], Coroutine[Any, Any, None]] | None = None,
) -> SimServer:
    """Start one task per spec, then run ``body`` with a Poller, all in simulated time."""
    server_box: list[SimServer] = []

    async def main() -> None:
        transport, end = memory_transport_pair()
        server = SimServer(end, specs)
        server_box.append(server)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            info = Implementation("poller-sim", "0")
            async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
                created = [
                    task_created(await c.start(ToolCall(f"t{i}").as_task()))
                    for i in range(len(specs))
                ]
                if server_extra is not None:
                    tg.start_soon(server_extra, server)
                async with Poller(
                    c, policy, rng=random.Random(seed), wall_clock=wall_clock
                ) as poller:
                    await body(c, poller, created)
            tg.cancel_scope.cancel()

    clock = trio.testing.MockClock(autojump_threshold=0)
    anyio.run(main, backend="trio", backend_options={"clock": clock})
    return server_box[0]


# -- strategies ------------------------------------------------------------------------------

non_terminal = st.sampled_from(["working", "input_required"])


@st.composite
def specs_for(draw: st.DrawFn, *, ending: str = "some") -> TaskSpec:
    """``ending``: ``"all"`` (a terminal status ends the script), ``"none"`` (never
    terminal) or ``"some"`` (either)."""
    script = draw(st.lists(non_terminal, max_size=6))
    ends = {"all": st.sampled_from(TERMINAL), "none": st.none()}
    end = draw(ends.get(ending, st.none() | st.sampled_from(TERMINAL)))
    script.append(end if end is not None else draw(non_terminal))
    interval = draw(st.none() | st.integers(min_value=20, max_value=3000))
    return TaskSpec(script, interval)


@st.composite
def poll_policies(draw: st.DrawFn) -> PollPolicy:
    return PollPolicy(
        floor=draw(st.floats(0.05, 1.0)),
        initial=draw(st.floats(0.05, 3.0)),
        backoff=draw(st.floats(1.0, 4.0)),
        ceiling=draw(st.floats(0.05, 10.0)),
        jitter=draw(st.just(0.0) | st.floats(0.0, 0.9)),
        cancel_on_abandon=draw(st.booleans()),
        open_result_on_input_required=draw(st.booleans()),
    )


@attrs.define
class Scenario:
    specs: list[TaskSpec]
    policy: PollPolicy
    deadline: float | None
    mode: str
    seed: int


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    deadline = draw(st.none() | st.floats(0.1, 12.0))
    count = draw(st.integers(1, 6))
    ending = "all" if deadline is None else draw(st.sampled_from(["all", "some", "none"]))
    specs = [draw(specs_for(ending=ending)) for _ in range(count)]
    mode = draw(st.sampled_from(["wait_all", "wait_any", "as_completed"]))
    return Scenario(specs, draw(poll_policies()), deadline, mode, draw(st.integers(0, 2**32)))


SIM_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# -- the properties --------------------------------------------------------------------------


def backoff_wait(policy: PollPolicy, attempt: int, interval_ms: int | None) -> tuple[float, float]:
    """The least and greatest gap the policy allows before a poll (C-19, A-25)."""
    if interval_ms is not None:
        interval = interval_ms / 1000
        base = max(policy.floor, interval)
        low = interval * (1 - policy.jitter)
    else:
        try:
            grown = policy.initial * policy.backoff**attempt
        except OverflowError:
            grown = math.inf
        base = max(policy.floor, min(policy.ceiling, grown))
        low = base * (1 - policy.jitter)
    return max(policy.floor, low), max(policy.floor, base * (1 + policy.jitter))


def check_poll_spacing(server: SimServer, task_id: str, policy: PollPolicy, start: float) -> None:
    """(a) C-19, A-25: each gap between polls of one task (the first counted from the start of
    the wait) is within the policy's bounds: never under the floor, never under the server's
    interval minus jitter, and (no ttl here) never later than the jittered wait either."""
    spec = server.tasks[task_id].spec
    previous = start
    for attempt, poll in enumerate(server.polls(task_id)):
        low, high = backoff_wait(policy, attempt, spec.interval_ms)
        gap = poll.time - previous
        assert close_below(gap, policy.floor), (task_id, attempt, gap, policy)
        assert close_below(gap, low), (task_id, attempt, gap, low)
        assert close_below(high, gap), (task_id, attempt, gap, high)
        previous = poll.time


def check_stops_on_terminal(server: SimServer, task_id: str) -> None:
    """(c) C-20, T:404-407: the poll that showed a terminal status was the task's last."""
    polls = server.polls(task_id)
    for index, poll in enumerate(polls):
        if poll.status in TERMINAL:
            assert index == len(polls) - 1, (task_id, [p.status for p in polls])


def check_outcome(server: SimServer, task_id: str, ended: object, policy: PollPolicy) -> None:
    """(d) the outcome class follows the terminal status. Exactly one tasks/result: opened at
    the first input_required poll (C-21) and held until terminal (T:465), or else fetched
    at the terminal poll for completed and failed; none for a cancelled task (C-27, A-13)."""
    terminal = server.terminal_poll(task_id)
    assert terminal is not None, (task_id, ended)
    assert terminal.status is not None
    assert type(ended) is OUTCOME_OF[terminal.status], (task_id, ended)
    assert isinstance(ended, (Completed, Failed, Cancelled))
    assert ended.task is not None
    assert ended.task.task_id == task_id
    assert ended.task.status.value == terminal.status
    results = server.results(task_id)
    asked = [p for p in server.polls(task_id) if p.status == "input_required"]
    if asked and policy.open_result_on_input_required:
        assert [r.time for r in results] == [asked[0].time], (task_id, results)
        assert results[0].answered == terminal.time
    elif isinstance(ended, Cancelled):
        assert results == []
    else:
        assert [r.time for r in results] == [terminal.time], (task_id, results)
    if not isinstance(ended, Cancelled):
        assert ended.result is not None
        assert ended.result.content == (TextContent(f"{task_id} {terminal.status}"),)
        assert ended.result.is_error is isinstance(ended, Failed)


@SIM_SETTINGS
@given(scenario=scenarios())
def test_poller_against_scripted_server(scenario: Scenario) -> None:
    """C-19, C-20, A-25, T:403-407, C-26/C-27: wait_all, wait_any and as_completed against
    1-6 scripted tasks, under any policy, with or without a deadline:

    (a) polls of one task respect the floor, the server's interval minus jitter, backoff;
    (b) no wait returns after its deadline; DeadlineExceeded lists exactly the unfinished tasks;
    (c) no tasks/get for a task after the poll that showed it terminal;
    (d) the right outcome class for every task; wait_any's task really ended first;
        as_completed yields each task once, in the order of their terminal polls;
    (e) with cancel_on_abandon, one tasks/cancel per abandoned task (C-26), without it none.
    """
    policy, deadline = scenario.policy, scenario.deadline
    yielded: list[tuple[str, object]] = []
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        start = box["start"] = trio.current_time()
        try:
            if scenario.mode == "wait_all":
                box["all"] = await poller.wait_all(created, deadline=deadline)
            elif scenario.mode == "wait_any":
                box["any"] = await poller.wait_any(created, deadline=deadline)
            else:
                async for item in poller.as_completed(created, deadline=deadline):
                    yielded.append((item[0], item[1]))
                    assert trio.current_time() <= start + (deadline or math.inf)
        except DeadlineExceeded as exc:
            box["exceeded"] = exc
        box["end"] = trio.current_time()

    server = run_sim(scenario.specs, policy, scenario.seed, body)
    start, end = box["start"], box["end"]
    task_ids = [f"task-{i}" for i in range(len(scenario.specs))]
    terminal_at = {t: p.time for t in task_ids if (p := server.terminal_poll(t)) is not None}

    for task_id in task_ids:
        check_poll_spacing(server, task_id, policy, start)  # (a)
        check_stops_on_terminal(server, task_id)  # (c)

    # (b) the deadline is a hard bound on the wait, and it is hit only when it must be.
    exceeded: DeadlineExceeded | None = box.get("exceeded")
    limit = start + deadline if deadline is not None else math.inf
    assert end <= limit + 1e-9, (end, limit)  # one clock, two float sums: ulps apart
    if exceeded is not None:
        assert deadline is not None
        assert end == pytest.approx(limit, abs=1e-6)

    def ended_before_deadline(task_id: str) -> bool:
        return task_id in terminal_at and terminal_at[task_id] < limit - 1e-6

    def ended_at_deadline(task_id: str) -> bool:  # a tie with the deadline may go either way
        return task_id in terminal_at and abs(terminal_at[task_id] - limit) <= 1e-6

    if scenario.mode == "as_completed":
        done = [task_id for task_id, _ in yielded]
        assert len(done) == len(set(done))  # (d) each exactly once
        times = [terminal_at[task_id] for task_id in done]
        assert times == sorted(times)  # (d) in the order they ended
        for task_id, ended in yielded:
            check_outcome(server, task_id, ended, policy)
        for task_id in task_ids:
            if ended_before_deadline(task_id):
                assert task_id in done
            elif task_id in done:
                assert ended_at_deadline(task_id)
        if exceeded is None:
            assert sorted(done) == task_ids
        else:
            assert sorted(exceeded.task_ids) == sorted(set(task_ids) - set(done))
    elif scenario.mode == "wait_all":
        if exceeded is None:
            outcomes = box["all"]
            assert sorted(outcomes) == task_ids
            for task_id, ended in outcomes.items():
                check_outcome(server, task_id, ended, policy)
        else:  # exactly the unfinished ones (a task ending at the deadline instant: either)
            unfinished = {t for t in task_ids if not ended_before_deadline(t)}
            assert set(exceeded.task_ids) <= unfinished
            assert {t for t in unfinished if not ended_at_deadline(t)} <= set(exceeded.task_ids)
            assert exceeded.task_ids
    else:  # wait_any
        if exceeded is None:
            task_id, ended = box["any"]
            check_outcome(server, task_id, ended, policy)
            assert terminal_at[task_id] == min(terminal_at.values())  # really the first
            assert end == terminal_at[task_id]  # and the wait returned right then
        else:
            assert sorted(exceeded.task_ids) == task_ids
            assert not any(ended_before_deadline(t) for t in task_ids)

    # (e) abandoning at the deadline: exactly one tasks/cancel per abandoned task, or none.
    cancels = server.cancels()
    event(f"{scenario.mode}: " + ("deadline exceeded" if exceeded else "all ended"))
    event(f"cancel_on_abandon={policy.cancel_on_abandon}, tasks/cancel sent: {bool(cancels)}")
    assert len(cancels) == len(set(cancels))
    if exceeded is None or not policy.cancel_on_abandon:
        assert cancels == []
        if exceeded is not None:
            assert exceeded.cancel_sent == ()
    else:
        abandoned = set(exceeded.task_ids)
        assert set(cancels) <= abandoned
        assert {t for t in abandoned if not ended_at_deadline(t)} <= set(cancels)
        assert all(s.time == pytest.approx(limit, abs=1e-6) for s in server.seen[-len(cancels) :])
        assert sorted(exceeded.cancel_sent) == sorted(cancels)


# -- ttl expiry ------------------------------------------------------------------------------


@st.composite
def expiring_specs(draw: st.DrawFn) -> TaskSpec:
    spec = draw(specs_for())
    spec.ttl_ms = draw(st.integers(min_value=50, max_value=8000))
    spec.gone_after_ttl = draw(st.booleans())
    return spec


@SIM_SETTINGS
@given(
    specs=st.lists(expiring_specs(), min_size=1, max_size=5),
    policy=poll_policies(),
    seed=st.integers(0, 2**32),
)
def test_ttl_running_out_ends_the_task_as_expired(
    specs: list[TaskSpec], policy: PollPolicy, seed: int
) -> None:
    """(f) C-37, T:459, A-25 ("bounded by the ttl"): a task whose createdAt + ttl passes while
    it is non-terminal ends as Expired (whether the server still answers or deleted it,
    -32602), found by a poll pulled forward to the expiry time, never under the floor; a task
    that reached a terminal status first ends with that status's outcome.

    This is the opt-in ``ttl_backstop`` (issue 7: by default the server's status is trusted).
    """
    policy = attrs.evolve(policy, ttl_backstop=True)
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        box["start"] = trio.current_time()
        box["all"] = await poller.wait_all(created)  # no deadline: the ttl ends everything

    server = run_sim(specs, policy, seed, body)
    outcomes: dict[str, object] = box["all"]
    assert sorted(outcomes) == sorted(server.tasks)
    for task_id, ended in outcomes.items():
        task = server.tasks[task_id]
        polls = server.polls(task_id)
        expires = task.expires_at
        assert expires is not None
        assert polls, task_id
        last = polls[-1]
        previous = polls[-2].time if len(polls) > 1 else box["start"]
        for earlier, later in itertools.pairwise([box["start"], *(p.time for p in polls)]):
            assert close_below(later - earlier, policy.floor)  # (a) even near the ttl
        assert all(p.time < expires for p in polls[:-1])  # the first poll past expiry is the last
        event(f"ended as {type(ended).__name__}, server deleted: {task.spec.gone_after_ttl}")
        if last.status in TERMINAL:
            check_outcome(server, task_id, ended, policy)
            continue
        assert isinstance(ended, Expired), (task_id, ended, [p.status for p in polls])
        assert last.status == "gone" or not task.spec.gone_after_ttl or last.time < expires
        assert close_below(last.time, expires)  # not before the ttl ran out
        assert close_below(max(expires, previous + policy.floor), last.time)  # nor later
        assert ended.expired_at == EPOCH + dt.timedelta(milliseconds=task.spec.ttl_ms or 0)
        assert ended.task.task_id == task_id
        assert not ended.task.status.is_terminal
        seen_statuses = [p.status for p in polls if p.status != "gone"]
        assert ended.task.status.value == (seen_statuses or ["working"])[-1]


# -- a pushed status notification -------------------------------------------------------------


def test_terminal_status_notification_wakes_the_waiter_before_the_next_poll() -> None:
    """C-22, T:477: a notifications/tasks/status with a terminal status ends the wait at once
    (news sooner), long before the next poll is due; polling stops (c), the result is fetched
    once (C-38)."""
    spec = TaskSpec(["working"], interval_ms=10_000)
    policy = PollPolicy(floor=0.1, jitter=0.0)
    box: dict[str, Any] = {}

    async def push(server: SimServer) -> None:
        await trio.sleep(12.5)  # after the first poll (t=10), before the second (t=20)
        await server.finish("task-0", "completed")

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        box["outcome"] = await poller.wait(created[0], deadline=60)
        box["at"] = trio.current_time()

    server = run_sim([spec], policy, 0, body, server_extra=push)
    assert isinstance(box["outcome"], Completed)
    assert box["outcome"].result.content == (TextContent("task-0 completed"),)
    polls = server.polls("task-0")
    assert [p.time for p in polls] == [10.0]  # 0 + pollInterval; none after the news
    assert box["at"] == 12.5 < polls[-1].time + 10.0  # woken before the next poll was due
    assert [(s.time, s.answered) for s in server.results("task-0")] == [(12.5, 12.5)]


def test_next_poll_says_when_a_waited_task_is_polled_next() -> None:
    """What a display shows as "next poll": the schedule's own due time, read without a
    request; None for a task nobody waits on, and once its wait has ended."""
    spec = TaskSpec(["working", "completed"], interval_ms=1000)
    policy = PollPolicy(floor=0.1, jitter=0.0)
    seen: list[Any] = []

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        task_id = created[0].task.task_id
        seen.append(poller.next_poll(task_id))  # nobody waits on it yet: not polled

        async def waiter() -> None:
            seen.append(await poller.wait(created[0], deadline=60))

        async with anyio.create_task_group() as group:
            start = trio.current_time()
            group.start_soon(waiter)
            await trio.sleep_until(start + 0.25)
            seen.append(poller.next_poll(task_id))  # the first poll is due at start + 1
            await trio.sleep_until(start + 1.5)
            seen.append(poller.next_poll(task_id))  # polled at start + 1: next at start + 2
        seen.append(poller.next_poll(task_id))

    run_sim([spec], policy, 0, body)
    assert seen[0] is None
    assert seen[1] == pytest.approx(0.75)
    assert seen[2] == pytest.approx(0.5)
    assert isinstance(seen[3], Completed)
    assert seen[4] is None


def test_deadline_abandon_reports_the_cancels_it_sent() -> None:
    """C-26, C-41: at the deadline, cancel_on_abandon sends one tasks/cancel per unfinished
    task, and DeadlineExceeded.cancel_sent names exactly those tasks."""
    specs = [TaskSpec(["working"], interval_ms=1000), TaskSpec(["completed"], interval_ms=1000)]
    policy = PollPolicy(floor=0.1, jitter=0.0, cancel_on_abandon=True)
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        with pytest.raises(DeadlineExceeded) as caught:
            await poller.wait_all(created, deadline=2.5)
        box["exc"], box["at"] = caught.value, trio.current_time()

    server = run_sim(specs, policy, 0, body)
    exc: DeadlineExceeded = box["exc"]
    assert box["at"] == 2.5
    assert exc.task_ids == ("task-0",)
    assert server.cancels() == ["task-0"]
    assert exc.cancel_sent == ("task-0",)


def test_no_poll_after_abandoning_a_task_with_a_held_result() -> None:
    """C-21, C-26, A-13, C-19: a task in input_required has its tasks/result held open; the
    caller's deadline abandons it (one tasks/cancel), the server then answers the held call
    with an error. Nobody waits on the task any more, so nothing polls it again (the library
    never polls unasked), least of all sooner than the floor after its last poll."""
    specs = [TaskSpec(["input_required"], interval_ms=1000)]
    policy = PollPolicy(floor=0.5, jitter=0.0, cancel_on_abandon=True)
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        with pytest.raises(DeadlineExceeded) as caught:
            await poller.wait(created[0], deadline=1.25)
        box["exc"] = caught.value
        await trio.sleep(5)  # the poller keeps running; nothing may poll the task now

    server = run_sim(specs, policy, 0, body)
    assert [(p.time, p.status) for p in server.polls("task-0")] == [(1.0, "input_required")]
    assert [(r.time, r.answered) for r in server.results("task-0")] == [(1.0, 1.25)]
    assert server.cancels() == ["task-0"]
    assert box["exc"].cancel_sent == ("task-0",)


def test_errors_are_mcp_errors() -> None:
    """The failure type every wait raises or yields derives from MCPTasksError."""
    assert issubclass(DeadlineExceeded, MCPTasksError)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limit=st.integers(1, 3),
    scripts=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["completed", "failed"])),
        min_size=2,
        max_size=8,
    ),
    interval_ms=st.sampled_from([None, 50, 400, 2000]),
    jitter=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**16),
)
# Found by review: one slot, three tasks polled again later; the last poll of the line left
# the driver waiting for a slot that had freed, so no later poll ever ran.
@example(limit=1, scripts=[(3, "completed")] * 3, interval_ms=400, jitter=0.0, seed=0)
def test_more_tasks_than_slots_all_end(
    limit: int, scripts: list[tuple[int, str]], interval_ms: int | None, jitter: float, seed: int
) -> None:
    """More tasks than ``max_in_flight``: polls wait in line for a slot, and once the line is
    empty the polls scheduled for later still run (nothing may leave the driver asleep with
    polls due): every task reaches its outcome, well inside a generous deadline."""
    specs = [
        TaskSpec(["working"] * steps + [terminal], interval_ms=interval_ms)
        for steps, terminal in scripts
    ]
    policy = PollPolicy(floor=0.01, initial=0.05, jitter=jitter, max_in_flight=limit)
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        got = await poller.wait_all(created, deadline=3600)
        box["outcomes"] = [got[ref.task.task_id] for ref in created]

    run_sim(specs, policy, seed, body)
    for (_, terminal), outcome in zip(scripts, box["outcomes"], strict=True):
        assert type(outcome) is {"completed": Completed, "failed": Failed}[terminal]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    longest=st.sampled_from([3600.0, 600.0, 60.0]),
    interval_ms=st.sampled_from([10**12, 10**15]) | st.integers(3_600_001, 10**13),
    ttl_s=st.none() | st.integers(1, 20_000),
    deadline=st.floats(1.0, 20_000.0),
    seed=st.integers(0, 2**16),
)
@example(longest=3600.0, interval_ms=10**12, ttl_s=None, deadline=20_000.0, seed=0)
@example(longest=3600.0, interval_ms=10**12, ttl_s=30, deadline=20_000.0, seed=0)
def test_a_huge_poll_interval_is_capped_at_the_ttl_and_the_deadline_with_a_warning(
    longest: float, interval_ms: int, ttl_s: int | None, deadline: float, seed: int
) -> None:
    """Issue 21, item 10: a ``pollInterval`` of 1e12 ms meant no poll (and no warning) for 31
    years. Past ``PollPolicy.max_server_interval`` it is capped: polls are never further apart
    than that, one comes when the task's ttl runs out, and ``Poller.warnings`` holds one
    PollIntervalCapped for the task (C-19 is the client's rule it departs from, not a server's)."""
    from mcp_tasks_client.errors import PollIntervalCapped

    specs = [
        TaskSpec(
            ["working"], interval_ms=interval_ms, ttl_ms=None if ttl_s is None else ttl_s * 1000
        )
    ]
    policy = PollPolicy(jitter=0.0, max_server_interval=longest)
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        box["start"] = trio.current_time()
        with pytest.raises(DeadlineExceeded):
            await poller.wait(created[0], deadline=deadline)
        box["end"] = trio.current_time()
        box["warnings"] = list(poller.warnings)

    server = run_sim(specs, policy, seed, body)
    created = server.tasks["task-0"].created
    polls = [seen.time for seen in server.polls("task-0")]
    times = [created, *polls, box["end"]]
    assert all(close_below(longest, later - sooner) for sooner, later in itertools.pairwise(times))
    ttl_end = server.tasks["task-0"].expires_at
    if ttl_end is not None and ttl_end < box["end"] - 0.01:
        assert any(abs(t - ttl_end) < 0.01 for t in polls), (ttl_end, polls)
    warned = [w for w in box["warnings"] if isinstance(w, PollIntervalCapped)]
    assert len(warned) == 1
    assert warned[0].cap == longest
    assert warned[0].task_id == "task-0"
