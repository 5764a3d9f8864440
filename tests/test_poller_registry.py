"""The Poller's registry of tracked tasks (``_poller/registry.py``), sans-I/O.

A tracked task's life is a table (``MOVES``): every move it allows works, every other raises
IllegalMove. A hypothesis state machine then holds, releases, finishes and ends records the
way the Poller does, and checks what the Poller relies on: a released record is never live
(nothing polls it), an ended one stays live only while held, a task that ended seen terminal
or with an outcome is answered from memory (``held``) and never tracked anew, and that memory
keeps only the newest ``capacity`` tasks.
"""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client import Completed
from mcp_tasks_client._poller.registry import MOVES, IllegalMove, Registry, Tracked, TrackState
from mcp_tasks_client._sansio.task_machine import TaskMachine
from mcp_tasks_client.errors import TaskNotFound
from mcp_tasks_client.models import CallToolResult, Task, TaskStatus

WHEN = dt.datetime(2026, 7, 28, tzinfo=dt.timezone.utc)
IDS = ("t0", "t1", "t2", "t3")
CAPACITY = 2


def snapshot(task_id: str, status: TaskStatus) -> Task:
    return Task(task_id=task_id, status=status, created_at=WHEN, last_updated_at=WHEN)


def record(task_id: str = "t0", state: TrackState = TrackState.TRACKING) -> Tracked:
    tracked = Tracked(task_id, TaskMachine(snapshot(task_id, TaskStatus.WORKING)))
    tracked.state = state
    return tracked


@pytest.mark.parametrize(
    ("start", "to"), list(itertools.product(TrackState, TrackState)), ids=lambda s: s.value
)
def test_a_move_is_allowed_exactly_when_the_table_says(start: TrackState, to: TrackState) -> None:
    tracked = record(state=start)
    if to in MOVES[start]:
        tracked.move(to)
        assert tracked.state is to
    else:
        with pytest.raises(IllegalMove, match=f"{start.value} -> {to.value}"):
            tracked.move(to)
        assert tracked.state is start


def test_done_and_released_are_final_and_every_state_is_in_the_table() -> None:
    assert set(MOVES) == set(TrackState)
    assert MOVES[TrackState.DONE] == MOVES[TrackState.RELEASED] == frozenset()
    assert TrackState.TRACKING not in set().union(*MOVES.values())  # nothing goes back


class RegistryMachine(RuleBasedStateMachine):
    """Drive one Registry as the Poller does, and check it against what the Poller needs."""

    def __init__(self) -> None:
        super().__init__()
        self.registry = Registry(CAPACITY)
        self.holds: list[Tracked] = []  # one entry per hold not released yet
        self.last_remembered: str | None = None

    def live(self) -> list[Tracked]:
        return [self.registry.live[task_id] for task_id in sorted(self.registry.live)]

    def remembered(self) -> dict[str, Tracked]:
        return dict(self.registry._ended)

    def hold(self, task_id: str) -> Tracked:
        """What ``Poller._hold`` does with the registry."""
        tracked = self.registry.held(task_id)
        if tracked is None:
            first = self.registry.terminal_snapshot(task_id)
            tracked = Tracked(task_id, TaskMachine(first or snapshot(task_id, TaskStatus.WORKING)))
            self.registry.add(tracked)
        tracked.refs += 1
        return tracked

    @rule(task_id=st.sampled_from(IDS))
    def a_wait_holds(self, task_id: str) -> None:
        live = self.registry.live.get(task_id)
        gone = self.remembered().get(task_id)
        tracked = self.hold(task_id)
        self.holds.append(tracked)
        if live is not None:
            assert tracked is live
        elif gone is not None and gone.outcome is not None:
            assert tracked is gone  # the outcome from memory: the same ended record
            assert tracked.done
        elif gone is not None:  # ended by an error after terminal: tracked again, not polled
            assert tracked.tracking
            assert tracked.machine.is_terminal
        else:
            assert tracked.tracking
            assert not tracked.machine.is_terminal

    @precondition(lambda self: self.holds)
    @rule(data=st.data())
    def a_wait_releases(self, data: st.DataObject) -> None:
        tracked = self.holds.pop(data.draw(st.integers(0, len(self.holds) - 1)))
        was = tracked.state
        stopped = self.registry.release(tracked)
        assert stopped == (was is TrackState.TRACKING and tracked.refs == 0)
        if stopped:
            assert tracked.state is TrackState.RELEASED

    @precondition(lambda self: self.registry.live)
    @rule(data=st.data(), status=st.sampled_from([TaskStatus.COMPLETED, TaskStatus.CANCELLED]))
    def a_terminal_snapshot(self, data: st.DataObject, status: TaskStatus) -> None:
        tracked = data.draw(st.sampled_from(self.live()))
        if not tracked.tracking:
            assert not self.registry.finishing(tracked)
            return
        if not tracked.machine.is_terminal:
            tracked.machine.observe(snapshot(tracked.task_id, status))
        assert self.registry.finishing(tracked)
        assert tracked.state is TrackState.FINISHING

    @precondition(lambda self: self.registry.live)
    @rule(data=st.data(), kind=st.sampled_from(["outcome", "error"]))
    def an_end(self, data: st.DataObject, kind: str) -> None:
        tracked = data.draw(st.sampled_from(self.live()))
        was_done = tracked.done
        outcome = Completed(tracked.machine.current, CallToolResult(()))
        error = TaskNotFound(-32602, "gone")
        ended = self.registry.end(
            tracked, outcome if kind == "outcome" else None, error if kind == "error" else None
        )
        assert ended == (not was_done)
        if not ended:
            return
        assert tracked.done
        if kind == "outcome" or tracked.machine.is_terminal:
            self.last_remembered = tracked.task_id
            assert self.remembered()[tracked.task_id] is tracked
        else:  # an error before terminal: a later wait polls it again, as it should
            assert self.remembered().get(tracked.task_id) is not tracked

    @invariant()
    def live_records_are_the_ones_still_wanted(self) -> None:
        for task_id, tracked in self.registry.live.items():
            assert tracked.task_id == task_id
            assert tracked.state is not TrackState.RELEASED  # never polled again
            if tracked.done:
                assert tracked.refs > 0  # kept only while a wait holds it

    @invariant()
    def memory_is_bounded_and_holds_ends(self) -> None:
        remembered = self.remembered()
        assert len(remembered) <= CAPACITY
        if self.last_remembered is not None:
            assert self.last_remembered in remembered  # the newest is never the one dropped
        for task_id, tracked in remembered.items():
            assert tracked.task_id == task_id
            assert tracked.done
            assert tracked.outcome is not None or tracked.machine.is_terminal


TestRegistry = RegistryMachine.TestCase
