"""The Poller's per-task bookkeeping (issue 12: small, lazily made, and all of it let go).

A tracked task is one small slotted record whose event, listener, watcher and callback lists
are made on first use; ``wait()`` sleeps on the task's own event, ``as_completed`` on one
inbox per call. These properties run many concurrent waits of every kind on the same tasks
(the same task waited on several times, passed twice to one ``as_completed``, watched, with
and without deadlines, some waits cancelled by their caller) against the scripted server of
``test_poller_sim`` in simulated time, and check that every wait gets what it should and that
once the last wait let go nothing is left: no tracked task, no scheduler entry, no listener,
no callback, and no poll afterwards.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import attrs
import trio
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_poller_sim import OUTCOME_OF, SimServer, TaskSpec, run_sim, specs_for

from mcp_tasks_client import Client, MCPTasksError, Poller, PollPolicy, TaskProgress
from mcp_tasks_client.errors import DeadlineExceeded
from mcp_tasks_client.models import CreateTaskResult, Task

KINDS = ("wait", "wait_all", "as_completed", "watch")


@attrs.define
class Waiter:
    kind: str
    tasks: list[int]
    """Indexes into the created tasks (repeats allowed: the same task twice in one call)."""
    deadline: float | None
    cancel_after: float | None
    """The caller cancels this wait after so many seconds (None: never)."""
    progress: bool


@attrs.define
class Plan:
    specs: list[TaskSpec]
    waiters: list[Waiter]
    policy: PollPolicy
    seed: int


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    specs = [draw(specs_for()) for _ in range(draw(st.integers(1, 4)))]
    count = len(specs)
    waiters = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(KINDS))
        size = 1 if kind in ("wait", "watch") else draw(st.integers(1, 5))
        tasks = draw(st.lists(st.integers(0, count - 1), min_size=size, max_size=size))
        deadline = draw(st.none() | st.floats(0.1, 20.0))
        cancel_after = draw(st.none() | st.floats(0.1, 20.0))
        if (
            deadline is None
            and cancel_after is None
            and any(specs[i].terminal is None for i in tasks)
        ):
            deadline = draw(st.floats(0.1, 20.0))  # every wait ends
        waiters.append(Waiter(kind, tasks, deadline, cancel_after, draw(st.booleans())))
    policy = PollPolicy(
        floor=draw(st.floats(0.05, 1.0)),
        initial=draw(st.floats(0.05, 3.0)),
        jitter=draw(st.just(0.0) | st.floats(0.0, 0.9)),
        cancel_on_abandon=draw(st.booleans()),
        open_result_on_input_required=draw(st.booleans()),
    )
    return Plan(specs, waiters, policy, draw(st.integers(0, 2**32)))


def _ignore(_: TaskProgress) -> None:
    pass


async def _run_one(poller: Poller, waiter: Waiter, refs: list[CreateTaskResult]) -> object:
    """One waiter's wait; returns what it got (outcomes by task id, an error, or
    ``"cancelled"``)."""
    chosen = [refs[i] for i in waiter.tasks]
    progress = _ignore if waiter.progress else None
    got: object = "cancelled"
    with anyio.CancelScope() as scope:
        if waiter.cancel_after is not None:
            scope.deadline = anyio.current_time() + waiter.cancel_after
        try:
            if waiter.kind == "wait":
                outcome = await poller.wait(
                    chosen[0], deadline=waiter.deadline, on_progress=progress
                )
                got = {chosen[0].task.task_id: outcome}
            elif waiter.kind == "wait_all":
                got = await poller.wait_all(chosen, deadline=waiter.deadline, on_progress=progress)
            elif waiter.kind == "as_completed":
                seen: dict[str, object] = {}
                async for task_id, ended in poller.as_completed(
                    chosen, deadline=waiter.deadline, on_progress=progress
                ):
                    assert task_id not in seen  # each task once, even when passed twice
                    seen[task_id] = ended
                got = seen
            else:
                last: Task | None = None
                async for item in poller.watch(chosen[0], deadline=waiter.deadline):
                    if isinstance(item, Task):
                        last = item
                assert last is not None
                assert last.status.is_terminal
                got = {chosen[0].task.task_id: last}
        except DeadlineExceeded as exc:
            got = exc
        except MCPTasksError as exc:  # the terminal snapshot's outcome was an error
            got = exc
    return got


def _polls(server_box: list[SimServer]) -> int | None:
    return sum(s.method == "tasks/get" for s in server_box[0].seen) if server_box else None


def _leftovers(poller: Poller) -> list[str]:
    """Whatever the poller still holds for tasks nobody waits on."""
    left = [f"tracked {task_id}" for task_id in poller._registry.live]
    if len(poller._tracker.scheduler):
        left.append(f"{len(poller._tracker.scheduler)} scheduler entries")
    return left


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
def test_every_wait_kind_at_once_leaves_nothing_behind(plan: Plan) -> None:
    results: list[tuple[Waiter, object]] = []
    records: list[Any] = []
    box: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        async def one(waiter: Waiter) -> None:
            results.append((waiter, await _run_one(poller, waiter, created)))

        async def spy() -> None:  # every tracked record the poller made, to look at after
            while True:
                records.extend(r for r in poller._registry.live.values() if r not in records)
                await trio.sleep(0.01)

        async with anyio.create_task_group() as tg:
            tg.start_soon(spy)
            async with anyio.create_task_group() as waits:
                for waiter in plan.waiters:
                    waits.start_soon(one, waiter)
            tg.cancel_scope.cancel()
        box["requests"] = _polls(server_box)
        # A watch ends at the terminal snapshot while that task's result is still being
        # fetched (so a later wait has the outcome at once): that fetch may still be in
        # flight here, and its record goes once it lands.
        await trio.sleep(3600)  # an hour with nobody waiting: not one poll
        box["left"] = _leftovers(poller)
        box["after"] = _polls(server_box)

    server_box: list[SimServer] = []

    async def grab(server: SimServer) -> None:
        server_box.append(server)

    server = run_sim(plan.specs, plan.policy, plan.seed, body, server_extra=grab)
    assert box["left"] == []
    assert box["after"] == box["requests"]
    for record in records:
        assert record.refs == 0
        assert not record.listeners, record.listeners
        assert not record.progress_callbacks, record.progress_callbacks
        assert not record.watchers, record.watchers
    assert len(results) == len(plan.waiters)
    for waiter, got in results:
        if got == "cancelled":
            assert waiter.cancel_after is not None
            continue
        if isinstance(got, DeadlineExceeded):
            assert waiter.deadline is not None
            continue
        if isinstance(got, MCPTasksError):
            continue  # an error outcome (checked in test_poller_sim)
        assert isinstance(got, dict)
        assert set(got) == {f"task-{i}" for i in waiter.tasks}
        for task_id, ended in got.items():
            terminal = server.terminal_poll(task_id)  # no notifications here: polls only
            assert terminal is not None, (task_id, ended)
            assert terminal.status is not None
            if waiter.kind == "watch":
                assert isinstance(ended, Task)
                assert ended.status.value == terminal.status
            else:
                assert type(ended) is OUTCOME_OF[terminal.status], (task_id, ended)


def test_waits_on_one_task_share_one_event() -> None:
    """Ten ``wait()`` on one task: one tracked record, one event, every wait the outcome."""
    specs = [TaskSpec(["working", "working", "completed"], 100)]
    seen: dict[str, Any] = {}

    async def body(client: Client, poller: Poller, created: list[CreateTaskResult]) -> None:
        outcomes: list[object] = []

        async def one() -> None:
            outcomes.append(await poller.wait(created[0]))

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(one)
            await trio.sleep(0.01)
            (record,) = poller._registry.live.values()
            seen["refs"] = record.refs
            seen["event"] = record.done_event
            seen["lists"] = (record.listeners, record.watchers, record.progress_callbacks)
        seen["outcomes"] = outcomes
        seen["left"] = _leftovers(poller)

    run_sim(specs, PollPolicy(floor=0.05, jitter=0.0), random.randrange(2**32), body)
    assert seen["refs"] == 10
    assert seen["event"] is not None
    assert seen["lists"] == (None, None, None)  # nothing made that nobody asked for
    assert len(seen["outcomes"]) == 10
    assert len({type(o).__name__ for o in seen["outcomes"]}) == 1
    assert seen["left"] == []
