"""The Poller's waiters' side (``_poller/registry.py``) over the Tracker's one lifecycle, sans-I/O.

Issue 33: each task has one owner of its state. The Registry keeps who waits on what; where a
task is in its life (its phase) and how it ended (the memory of outcomes) are the Tracker's,
and a ``Tracked`` only reads them. A hypothesis state machine drives a real Tracker and a
Registry the way the Poller does (hold, release, a terminal snapshot, an outcome fetched, an
outside failure) and checks what the Poller relies on: a released task is never live (nothing
polls it); an ended one stays live only while held; a task that ended with an outcome is
answered from the Tracker's memory and never tracked anew; that memory keeps the newest
``capacity`` tasks; and a ``Tracked``'s state is always its Tracker record's, never its own.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client import Completed
from mcp_tasks_client._poller import registry as registry_module
from mcp_tasks_client._poller.registry import Registry, Tracked
from mcp_tasks_client._sansio import tracker as t
from mcp_tasks_client._sansio.scheduler import PollPolicy
from mcp_tasks_client.errors import TaskNotFound
from mcp_tasks_client.models import CallToolResult, Task, TaskStatus

WHEN = dt.datetime(2026, 7, 28, tzinfo=dt.timezone.utc)
IDS = ("t0", "t1", "t2", "t3")
CAPACITY = 2


def snapshot(task_id: str, status: TaskStatus, seconds: float = 0.0) -> Task:
    updated = WHEN + dt.timedelta(seconds=seconds)
    return Task(task_id=task_id, status=status, created_at=WHEN, last_updated_at=updated)


def test_the_registry_keeps_no_lifecycle_or_outcome_memory_of_its_own() -> None:
    """One owner: no state enum, move table or memory of ended tasks in the registry; a
    Tracked's fields are its waiters and what they were told."""
    assert not hasattr(registry_module, "TrackState")
    assert not hasattr(registry_module, "MOVES")
    fields = {field.name for field in attrs.fields(Tracked)}
    assert not fields & {"state", "outcome", "error", "machine"}
    assert "record" in fields
    assert "ended" in fields
    tracker = t.Tracker(PollPolicy())
    assert vars(Registry(tracker)) == {"live": {}, "_tracker": tracker}


def test_a_tracked_reads_its_phase_and_machine_from_the_tracker_record() -> None:
    tracker = t.Tracker(PollPolicy(jitter=0.0))
    record, _ = tracker.track(t.Track(snapshot("t0", TaskStatus.WORKING), 0.0))
    tracked = Tracked("t0", record)
    assert tracked.tracking
    assert not tracked.released
    assert not tracked.done
    assert tracked.machine is record.machine
    tracker.handle(t.Pushed(snapshot("t0", TaskStatus.COMPLETED, 1.0), 1.0))
    assert not tracked.tracking  # FINISHING, said by the tracker alone
    assert tracked.machine.current.status is TaskStatus.COMPLETED


class RegistryMachine(RuleBasedStateMachine):
    """A Tracker and a Registry driven as the Poller drives them (``engine.py``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tracker = t.Tracker(PollPolicy(jitter=0.0), capacity=CAPACITY)
        self.registry = Registry(self.tracker)
        self.holds: list[Tracked] = []  # one entry per hold not released yet
        self.last_remembered: str | None = None
        self.now = 0.0

    def live(self) -> list[Tracked]:
        return [self.registry.live[task_id] for task_id in sorted(self.registry.live)]

    def perform(self, actions: Sequence[t.Action]) -> None:
        """The part of ``Poller._perform`` that touches the registry."""
        for action in actions:
            tracked = self.registry.live.get(getattr(action, "task_id", ""))
            if tracked is None:
                continue
            if isinstance(action, t.FetchOutcome):
                assert self.registry.finishing(tracked)
            elif isinstance(action, t.End):
                self.registry.end(tracked, action.outcome, action.error)

    def hold(self, task_id: str) -> Tracked:
        """What ``Poller._hold`` and ``_track`` do."""
        tracked = self.registry.held(task_id)
        if tracked is None:
            first = self.tracker.terminal_snapshot(task_id) or snapshot(task_id, TaskStatus.WORKING)
            record, actions = self.tracker.track(t.Track(first, self.now, waits_until=math.inf))
            if task_id == self.last_remembered:  # followed anew: its memory may go
                self.last_remembered = None
            tracked = Tracked(task_id, record)
            self.registry.add(tracked)
            self.perform(actions)
        tracked.refs += 1
        return tracked

    @rule(task_id=st.sampled_from(IDS))
    def a_wait_holds(self, task_id: str) -> None:
        live = self.registry.live.get(task_id)
        remembered = self.tracker.outcome(task_id)
        terminal = self.tracker.terminal_snapshot(task_id)
        tracked = self.hold(task_id)
        self.holds.append(tracked)
        if live is not None:
            assert tracked is live
        elif remembered is not None:
            assert tracked.ended is remembered  # the outcome from memory: never polled again
            assert tracked.done
            assert not tracked.tracking
            assert task_id not in self.tracker.records
            assert task_id not in self.registry.live
        elif terminal is not None:  # ended by an error after terminal: finished again, no poll
            assert self.tracker.phase(task_id) is t.Phase.FINISHING
            assert not tracked.tracking
        else:
            assert tracked.tracking
            assert task_id in self.tracker.scheduler

    @precondition(lambda self: self.holds)
    @rule(data=st.data())
    def a_wait_releases(self, data: st.DataObject) -> None:
        tracked = self.holds.pop(data.draw(st.integers(0, len(self.holds) - 1)))
        was_tracking = tracked.tracking
        stopped = self.registry.release(tracked)
        assert stopped == (was_tracking and tracked.refs == 0)
        if stopped:  # what Poller._release does next
            self.tracker.handle(t.Release(tracked.task_id))
            assert tracked.released
            assert tracked.task_id not in self.tracker.scheduler

    @precondition(lambda self: self.registry.live)
    @rule(data=st.data(), status=st.sampled_from([TaskStatus.COMPLETED, TaskStatus.CANCELLED]))
    def a_terminal_snapshot(self, data: st.DataObject, status: TaskStatus) -> None:
        tracked = data.draw(st.sampled_from(self.live()))
        self.now += 1.0
        pushed = snapshot(tracked.task_id, status, self.now)
        self.perform(self.tracker.handle(t.Pushed(pushed, self.now)))
        if not tracked.done and tracked.record is self.tracker.records.get(tracked.task_id):
            assert not tracked.tracking

    @precondition(lambda self: self.registry.live)
    @rule(data=st.data())
    def an_outcome_fetched(self, data: st.DataObject) -> None:
        tracked = data.draw(st.sampled_from(self.live()))
        if self.tracker.phase(tracked.task_id) is not t.Phase.FINISHING:
            return
        outcome = Completed(tracked.machine.current, CallToolResult(()))
        self.perform(self.tracker.handle(t.OutcomeFetched(tracked.task_id, outcome)))
        assert tracked.ended is outcome
        assert self.tracker.outcome(tracked.task_id) is outcome
        self.last_remembered = tracked.task_id

    @precondition(lambda self: self.registry.live)
    @rule(data=st.data())
    def an_outside_failure(self, data: st.DataObject) -> None:
        """``Poller._end``: the tracker first, then the waiters (once)."""
        tracked = data.draw(st.sampled_from(self.live()))
        was_done = tracked.done
        terminal = tracked.machine.is_terminal
        error = TaskNotFound(-32602, "gone")
        self.perform(self.tracker.handle(t.TrackingFailed(tracked.task_id, error)))
        told = self.registry.end(tracked, None, error)
        assert told is False  # the tracker's End told them already, or they had been
        assert tracked.done
        if not was_done:
            assert tracked.ended is error
            if terminal:
                self.last_remembered = tracked.task_id
                assert self.tracker.terminal_snapshot(tracked.task_id) is not None

    @invariant()
    def live_records_are_the_ones_still_wanted(self) -> None:
        for task_id, tracked in self.registry.live.items():
            assert tracked.task_id == task_id
            assert not tracked.released  # never polled again
            if tracked.done:
                assert tracked.refs > 0  # kept only while a wait holds it
            else:  # one lifecycle: the registry's live task is the tracker's record
                assert self.tracker.records.get(task_id) is tracked.record

    @invariant()
    def memory_is_the_trackers_and_bounded(self) -> None:
        tracker = self.tracker
        remembered = [i for i in IDS if tracker.outcome(i) or tracker.terminal_snapshot(i)]
        assert len(remembered) <= CAPACITY
        if self.last_remembered is not None and self.last_remembered not in self.tracker.records:
            assert self.last_remembered in remembered  # the newest is never the one dropped


TestRegistry = RegistryMachine.TestCase
