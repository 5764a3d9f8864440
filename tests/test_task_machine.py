"""Properties of the 2025-11-25 task status machine (``_sansio/task_machine.py``).

The machine is shown sequences of snapshots of one task, and every answer is checked against
a model written straight from the spec, not from ``TRANSITIONS``: a non-terminal status may be
followed by anything, a terminal one only by itself (C-35, T:403-407, V-09, A-08); a changed
``createdAt`` or a ``lastUpdatedAt`` that goes backwards is reported soft and accepted (V-26).
"""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client._sansio.task_machine import TRANSITIONS, TaskMachine
from mcp_tasks_client.models import Task, TaskStatus

EPOCH = dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)
NON_TERMINAL = (TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED)
TERMINAL = (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)
SETTINGS = settings(max_examples=150, deadline=None)

statuses = st.sampled_from(list(TaskStatus))
terminal_statuses = st.sampled_from(TERMINAL)


def spec_allows(previous: TaskStatus, following: TaskStatus) -> bool:
    """T:403-407 as written: working <-> input_required, either -> terminal, terminal stays."""
    if previous in NON_TERMINAL:
        return True
    return following is previous


def snapshot(
    status: TaskStatus, *, created: float = 0.0, updated: float = 0.0, task_id: str = "task-1"
) -> Task:
    return Task(
        task_id,
        status,
        EPOCH + dt.timedelta(seconds=created),
        EPOCH + dt.timedelta(seconds=updated),
        ttl=None,
    )


def test_transitions_table_is_the_spec_rule() -> None:
    """C-35, T:403-407: the table allows exactly the moves the spec allows, for all 25 pairs."""
    assert set(TRANSITIONS) == set(TaskStatus)
    for previous, following in itertools.product(TaskStatus, repeat=2):
        assert (following in TRANSITIONS[previous]) is spec_allows(previous, following), (
            previous,
            following,
        )
    assert {s for s in TaskStatus if s.is_terminal} == set(TERMINAL)


@SETTINGS
@given(first=statuses, following=st.lists(statuses, max_size=30))
def test_machine_accepts_exactly_the_legal_transitions(
    first: TaskStatus, following: list[TaskStatus]
) -> None:
    """C-35, V-09, A-08: each snapshot is accepted iff TRANSITIONS (= the spec) allows the move
    from the last *accepted* status; a rejected one leaves the previous snapshot standing and
    names T:404-407 as a hard (not soft) violation."""
    machine = TaskMachine(snapshot(first))
    accepted = machine.current
    for step, status in enumerate(following, start=1):
        shown = snapshot(status, updated=float(step))  # timestamps monotone: no soft noise
        observation = machine.observe(shown)
        legal = status in TRANSITIONS[accepted.status]
        assert legal is spec_allows(accepted.status, status)
        assert observation.accepted is legal
        if legal:
            assert observation.violations == ()
            assert machine.current is shown
            accepted = shown
        else:
            (violation,) = observation.violations
            assert (violation.rule, violation.soft) == ("T:404-407", False)
            assert violation.task_id == "task-1"
            assert machine.current is accepted
        assert machine.status is accepted.status
        assert machine.is_terminal is accepted.status.is_terminal


@SETTINGS
@given(
    before=st.lists(st.sampled_from(NON_TERMINAL), max_size=5),
    terminal=terminal_statuses,
    after=st.lists(statuses, min_size=1, max_size=20),
)
def test_terminal_status_never_changes(
    before: list[TaskStatus], terminal: TaskStatus, after: list[TaskStatus]
) -> None:
    """T:404-407, V-09, C-41 (cancelled stays cancelled): once terminal, every *different*
    status is rejected and the terminal snapshot stands; the same status is a repeat poll."""
    machine = TaskMachine(snapshot(TaskStatus.WORKING))
    clock = 0.0
    for status in before:
        clock += 1
        assert machine.observe(snapshot(status, updated=clock)).accepted
    clock += 1
    final = snapshot(terminal, updated=clock)
    assert machine.observe(final) == machine.observe(final)  # idempotent, both accepted
    assert machine.is_terminal
    standing = machine.current
    for status in after:
        clock += 1
        shown = snapshot(status, updated=clock)
        observation = machine.observe(shown)
        if status is terminal:
            assert observation.accepted
            standing = shown
        else:
            assert not observation.accepted
            assert [v.soft for v in observation.violations] == [False]
            assert terminal.value in observation.violations[0].detail
            assert status.value in observation.violations[0].detail
        assert machine.current is standing
        assert machine.status is terminal


@st.composite
def timed_snapshots(draw: st.DrawFn) -> tuple[TaskStatus, float, float]:
    status = draw(statuses)
    created = draw(st.sampled_from([0.0, 0.0, 0.0, -5.0, 7.5]))  # mostly unchanged
    updated = draw(st.floats(min_value=-100, max_value=100, allow_nan=False))
    return status, created, updated


@SETTINGS
@given(
    first_updated=st.floats(min_value=-100, max_value=100, allow_nan=False),
    shown=st.lists(timed_snapshots(), max_size=25),
)
def test_soft_violations_are_reported_and_the_snapshot_accepted(
    first_updated: float, shown: list[tuple[TaskStatus, float, float]]
) -> None:
    """V-26 (implied, so soft): a changed createdAt and a lastUpdatedAt earlier than the last
    accepted one are each reported once, soft, and the snapshot is still accepted; a snapshot
    that also breaks the status rule is rejected on that alone (T:404-407)."""
    machine = TaskMachine(snapshot(TaskStatus.WORKING, updated=first_updated))
    accepted = machine.current
    for status, created, updated in shown:
        task = snapshot(status, created=created, updated=updated)
        observation = machine.observe(task)
        if not spec_allows(accepted.status, status):
            assert not observation.accepted
            assert [(v.rule, v.soft) for v in observation.violations] == [("T:404-407", False)]
            assert machine.current is accepted
            continue
        expected: list[str] = []
        if task.created_at != accepted.created_at:
            expected.append("createdAt changed")
        if task.last_updated_at < accepted.last_updated_at:
            expected.append("lastUpdatedAt went backwards")
        assert observation.accepted
        assert [v.detail for v in observation.violations] == expected
        assert all(v.soft and v.rule == "V-26" for v in observation.violations)
        assert machine.current is task
        accepted = task


def test_snapshot_of_another_task_is_a_caller_bug() -> None:
    """C-24: the taskId is the source of truth; the engine never mixes tasks up."""
    machine = TaskMachine(snapshot(TaskStatus.WORKING))
    with pytest.raises(ValueError, match="task-2"):
        machine.observe(snapshot(TaskStatus.COMPLETED, task_id="task-2"))
    assert machine.status is TaskStatus.WORKING


def test_a_poll_overtaken_by_a_terminal_snapshot_is_stale_and_a_later_one_is_not() -> None:
    """A-08, the stale rule: a poll sent before a terminal snapshot was accepted answers
    stale; one sent after it does not (so a probe polling past terminal still sees changes)."""
    when = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    def snapshot(status: TaskStatus) -> Task:
        return Task(task_id="t", status=status, created_at=when, last_updated_at=when)

    machine = TaskMachine(snapshot(TaskStatus.WORKING))
    before = machine.mark()
    assert not machine.is_stale(before)
    machine.observe(snapshot(TaskStatus.INPUT_REQUIRED))
    assert not machine.is_stale(before)  # not terminal yet
    machine.observe(snapshot(TaskStatus.COMPLETED))
    assert machine.is_stale(before)
    after = machine.mark()
    assert not machine.is_stale(after)
    assert not machine.observe(snapshot(TaskStatus.WORKING)).accepted


@SETTINGS
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=2, max_size=12),
    st.data(),
)
def test_an_answer_overtaken_by_a_newer_snapshot_is_stale_not_a_clock_going_back(
    ticks: list[int], data: st.DataObject
) -> None:
    """V-26 is the server's rule: a snapshot older than one accepted after its poll went out
    (a push on another channel overtook the poll's answer) is stale and dropped, never reported
    as ``lastUpdatedAt`` going backwards; an older answer with nothing accepted between its
    poll and its arrival is the server's clock going back, and is reported."""
    ticks = sorted(ticks)
    at = [EPOCH + dt.timedelta(milliseconds=t) for t in ticks]

    def snap(i: int) -> Task:
        return Task(task_id="t", status=TaskStatus.WORKING, created_at=EPOCH, last_updated_at=at[i])

    machine = TaskMachine(snap(0))
    sent = machine.mark()  # a poll goes out; the server answers with snapshot ``answered``
    answered = data.draw(st.integers(min_value=0, max_value=len(at) - 1))
    pushed = data.draw(st.integers(min_value=0, max_value=len(at) - 1))
    machine.observe(snap(pushed))  # a push, accepted while the poll was in flight
    stale = machine.is_stale(sent, snap(answered))
    assert stale == (at[answered] < at[pushed])
    if not stale:
        assert machine.observe(snap(answered)).violations == ()
    # Nothing accepted between a poll and its answer: an older answer is checked, and reported.
    now, held = machine.mark(), machine.current.last_updated_at
    older = snap(0)
    assert not machine.is_stale(now, older)
    went_back = [v.detail for v in machine.observe(older).violations]
    assert went_back == (["lastUpdatedAt went backwards"] if at[0] < held else [])
