"""Properties of the sans-I/O poll scheduler (``_sansio/scheduler.py``), on a simulated clock.

A hypothesis ``RuleBasedStateMachine`` drives one :class:`PollScheduler` the way the engine
does (track, pop_due, answered, untrack) with a float clock it advances by drawn amounts, and
keeps a model of every tracked task: its due time (``None`` while popped and unanswered, i.e.
in flight), the time of its previous answer, and how many answers it had.

Invariants checked after every step: nothing is polled sooner than ``floor`` after its previous
answer, nor sooner than ``pollInterval * (1 - jitter)`` when the server gave one (C-19); with no
interval the wait is ``initial * backoff**n`` capped at ``ceiling``, times a jitter factor
(A-25); ``not_after`` (a ttl running out) pulls a poll earlier but never under the floor;
``pop_due(now)`` returns exactly the tracked tasks due at ``now``, each once, never an
untracked one; ``next_due()`` is the earliest due time; no task is lost.
"""

from __future__ import annotations

import math
import random

import attrs
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from mcp_tasks_client import PollPolicy
from mcp_tasks_client._sansio.scheduler import PollScheduler

TASK_IDS = [f"task-{i}" for i in range(6)]


def close_below(value: float, bound: float) -> bool:
    """``value >= bound`` up to float rounding of sums of times."""
    return value >= bound - 1e-9 * max(1.0, abs(value), abs(bound))


def grown(policy: PollPolicy, attempt: int) -> float:
    """``initial * backoff**attempt``, saturating instead of overflowing."""
    if policy.initial == 0:
        return 0.0
    try:
        return policy.initial * policy.backoff**attempt
    except OverflowError:
        return math.inf


def wait_bounds(
    policy: PollPolicy,
    attempt: int,
    interval: float | None,
    now: float,
    not_after: float | None,
) -> tuple[float, float]:
    """The least and greatest wait the policy allows (C-19, A-25), after jitter and ttl."""
    if interval is not None:
        base = max(policy.floor, interval)
        low = interval * (1 - policy.jitter)  # C-19: the server's interval, minus jitter
    else:
        base = max(policy.floor, min(policy.ceiling, grown(policy, attempt)))
        low = base * (1 - policy.jitter)
    high = base * (1 + policy.jitter)
    if not_after is not None:
        low = min(low, not_after - now)
        high = min(high, not_after - now)
    return max(policy.floor, low), max(policy.floor, high)


policies = st.builds(
    PollPolicy,
    floor=st.floats(0, 2),
    initial=st.floats(0, 5),
    backoff=st.floats(1, 4),
    ceiling=st.floats(0, 30),
    jitter=st.floats(0, 0.95) | st.just(0.0),
)
intervals = st.none() | st.floats(0, 20)
clock_steps = st.floats(0, 10) | st.sampled_from([0.0, 0.05, 1.0])


@attrs.define
class Model:
    due: float | None  # None: popped, awaiting ``answered`` (in flight)
    base_time: float  # when it was tracked or last answered
    min_wait: float  # the least wait the policy allowed for this schedule
    attempt: int = 0


class SchedulerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.model: dict[str, Model] = {}
        self.policy = PollPolicy()
        self.scheduler = PollScheduler(self.policy)
        self.popped = 0

    @initialize(policy=policies, seed=st.integers(0, 2**32 - 1))
    def start(self, policy: PollPolicy, seed: int) -> None:
        self.policy = policy
        self.scheduler = PollScheduler(policy, random.Random(seed))

    def _scheduled(
        self,
        task_id: str,
        due: float,
        attempt: int,
        interval: float | None,
        not_after: float | None,
    ) -> None:
        """Check one returned due time against the policy and record it in the model."""
        wait = due - self.now
        low, high = wait_bounds(self.policy, attempt, interval, self.now, not_after)
        assert close_below(wait, self.policy.floor), (wait, self.policy)  # the floor, always
        assert close_below(wait, low), (wait, low, attempt, interval, not_after)
        assert close_below(high, wait), (wait, high, attempt, interval, not_after)
        self.model[task_id] = Model(due, self.now, low, attempt)

    # -- rules --------------------------------------------------------------------------------

    @rule(step=clock_steps)
    def advance(self, step: float) -> None:
        self.now += step

    @rule()
    def advance_to_next_due(self) -> None:
        """What the engine does: sleep until exactly next_due() (then pop_due at that time)."""
        due = self.scheduler.next_due()
        if due is not None:
            self.now = max(self.now, due)

    @rule(
        task_id=st.sampled_from(TASK_IDS),
        interval=intervals,
        not_after=st.none() | st.floats(-5, 30),
    )
    def track(self, task_id: str, interval: float | None, not_after: float | None) -> None:
        """Tracking again (a resumed task) starts over at attempt 0."""
        limit = None if not_after is None else self.now + not_after
        due = self.scheduler.track(task_id, self.now, interval, not_after=limit)
        self._scheduled(task_id, due, 0, interval, limit)

    @rule(task_id=st.sampled_from(TASK_IDS))
    def untrack(self, task_id: str) -> None:
        self.scheduler.untrack(task_id)  # untracking an unknown task is a no-op
        self.model.pop(task_id, None)

    @rule()
    def pop_due(self) -> None:
        """Exactly the tracked tasks due by now, each once; none untracked (C-19 via floor)."""
        popped = self.scheduler.pop_due(self.now)
        expected = {
            task_id
            for task_id, entry in self.model.items()
            if entry.due is not None and entry.due <= self.now
        }
        assert len(popped) == len(set(popped)), popped
        assert set(popped) == expected
        for task_id in popped:
            entry = self.model[task_id]
            since = self.now - entry.base_time
            assert close_below(since, self.policy.floor)
            assert close_below(since, entry.min_wait)
            entry.due = None
        self.popped += len(popped)
        assert self.scheduler.pop_due(self.now) == []  # nothing twice

    @precondition(lambda self: bool(self.model))
    @rule(
        data=st.data(),
        interval=intervals,
        not_after=st.none() | st.floats(-5, 30),
        in_flight_only=st.booleans(),
    )
    def answered(
        self,
        data: st.DataObject,
        interval: float | None,
        not_after: float | None,
        in_flight_only: bool,
    ) -> None:
        """A poll answered now, with the server's pollInterval (seconds) or none."""
        candidates = sorted(
            task_id
            for task_id, entry in self.model.items()
            if entry.due is None or not in_flight_only
        )
        if not candidates:
            return
        task_id = data.draw(st.sampled_from(candidates))
        attempt = self.model[task_id].attempt + 1
        limit = None if not_after is None else self.now + not_after
        due = self.scheduler.answered(task_id, self.now, interval, not_after=limit)
        self._scheduled(task_id, due, attempt, interval, limit)

    # -- invariants ---------------------------------------------------------------------------

    @invariant()
    def tracked_set_matches(self) -> None:
        assert len(self.scheduler) == len(self.model)
        for task_id in TASK_IDS:
            assert (task_id in self.scheduler) is (task_id in self.model)

    @invariant()
    def next_due_is_the_earliest(self) -> None:
        """No task is lost: each tracked task is either due (and next_due covers it) or was
        popped and awaits its answer."""
        dues = [entry.due for entry in self.model.values() if entry.due is not None]
        assert self.scheduler.next_due() == (min(dues) if dues else None)


TestSchedulerMachine = SchedulerMachine.TestCase
TestSchedulerMachine.settings = settings(max_examples=120, stateful_step_count=40, deadline=None)


@settings(max_examples=200, deadline=None)
@given(
    policy=st.builds(
        PollPolicy,
        floor=st.floats(0, 2),
        initial=st.floats(0, 10),
        backoff=st.floats(1, 1e12),
        ceiling=st.floats(0, 3600),
        jitter=st.just(0.0),
    ),
    attempt=st.integers(0, 10_000),
)
@example(policy=PollPolicy(initial=1.0, backoff=1.05, ceiling=30.0, jitter=0.0), attempt=100)
@example(policy=PollPolicy(initial=1.0, backoff=1e5, ceiling=30.0, jitter=0.0), attempt=64)
def test_backoff_wait_is_capped_and_never_overflows(policy: PollPolicy, attempt: int) -> None:
    """A-25: with no pollInterval the wait is min(ceiling, initial * backoff**n), at least the
    floor, for any valid policy and any number of polls: a slow backoff (1.05) still reaches
    its ceiling after 64 polls, and a huge one (1e5) must not overflow and crash the driver."""
    scheduler = PollScheduler(policy)
    wait = scheduler.wait_for(attempt, None)
    expected = max(policy.floor, min(policy.ceiling, grown(policy, attempt)))
    assert wait == expected
    assert wait <= max(policy.floor, policy.ceiling)


@settings(max_examples=100, deadline=None)
@given(policy=policies, interval=st.floats(0, 120), attempt=st.integers(0, 200))
def test_server_interval_is_honoured_even_above_ceiling(
    policy: PollPolicy, interval: float, attempt: int
) -> None:
    """C-19: the server's pollInterval replaces backoff, ceiling included; floor still holds."""
    assert PollScheduler(policy).wait_for(attempt, interval) == max(policy.floor, interval)


@settings(max_examples=100, deadline=None)
@given(
    longest=st.floats(0.001, 1e6),
    interval=st.floats(0, 1e15),
    attempt=st.integers(0, 200),
    floor=st.floats(0, 2),
)
@example(longest=3600.0, interval=1e9, attempt=0, floor=0.05)  # pollInterval 1e12 ms
def test_a_server_interval_past_max_server_interval_is_capped(
    longest: float, interval: float, attempt: int, floor: float
) -> None:
    """Issue 21, item 10: an interval past ``max_server_interval`` waits that long at most
    (and ``distrusts`` says so, for the Poller to pull it in to the ttl or the deadline and
    warn); one up to it is honoured exactly (C-19)."""
    policy = PollPolicy(floor=floor, jitter=0.0, max_server_interval=longest)
    scheduler = PollScheduler(policy)
    assert scheduler.wait_for(attempt, interval) == max(floor, min(interval, longest))
    assert scheduler.distrusts(interval) == (interval > longest)
    assert not scheduler.distrusts(None)
