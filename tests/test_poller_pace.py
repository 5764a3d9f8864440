"""Keeping pace (issue 39, item 5): polls that fall behind, and an in-flight bound that follows
latency.

Two layers. The sans-I/O :class:`~mcp_tasks_client._sansio.pace.Pace` alone, fed simulated
times (hypothesis: the warning's rate limit and figures, the sizing rule, its bounds and its
hysteresis). Then the real :class:`Poller` against an in-memory 2025-11-25 server that answers
each ``tasks/get`` after a fixed latency, under trio's ``MockClock`` (hours of polling take
milliseconds, every time exact): a fixed bound too small for the latency falls behind and says
so with the figures; ``FollowLatency`` grows the bound, says so, and keeps the tasks' pace
within its cap. The server's ``pollInterval`` is honoured throughout (C-19).
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from typing import Any

import anyio
import pytest
import trio
import trio.testing
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from started import task_created

from mcp_tasks_client import (
    Client,
    FollowLatency,
    Generation,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client._sansio.pace import FALLING_BEHIND_EVERY, SHRINK_BELOW, Pace
from mcp_tasks_client.errors import DeadlineExceeded, FallingBehind, InFlightResized
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

# -- the sans-I/O Pace, on simulated times -----------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(
    tolerance=st.sampled_from([0.0, 0.5, 1.0, 5.0]),
    sends=st.lists(
        st.tuples(st.floats(0.0, 30.0), st.floats(-1.0, 20.0), st.integers(0, 500)),
        min_size=1,
        max_size=200,
    ),
)
def test_falling_behind_is_rate_limited_and_counts_every_late_poll(
    tolerance: float, sends: list[tuple[float, float, int]]
) -> None:
    """One ``FallingBehind`` at the first late poll, then at most one every
    FALLING_BEHIND_EVERY seconds of the loop's clock; each carries the late polls since the
    previous one, the latest of them, the line and the bound; none for a poll within the
    tolerance; together they account for every late poll."""
    pace = Pace(PollPolicy(lateness_tolerance=tolerance, max_in_flight=8))
    now = 0.0
    late: list[tuple[int, float]] = []  # (index of the send, how late it was sent)
    warnings: list[tuple[int, float, FallingBehind]] = []  # (index, time, warning)
    for index, (gap, lateness, waiting) in enumerate(sends):
        now += gap
        due = now - lateness
        warning = pace.sent(due, now, waiting, 8)
        if now - due > tolerance:
            late.append((index, now - due))
        if warning is not None:
            assert now - due > tolerance  # only a late poll warns
            assert warning.late == now - due
            assert (warning.waiting, warning.limit, warning.tolerance) == (waiting, 8, tolerance)
            warnings.append((index, now, warning))
    assert pace.late_polls == len(late)
    if late:
        assert warnings
        assert warnings[0][0] == late[0][0]
    for (_, earlier, _), (_, later, _) in itertools.pairwise(warnings):
        assert later - earlier >= FALLING_BEHIND_EVERY
    previous = -1
    for index, _, warning in warnings:  # each counts the late polls since the previous one
        window = [lateness for i, lateness in late if previous < i <= index]
        assert warning.late_polls == len(window)
        assert warning.worst == max(window)
        previous = index
    unreported = [i for i, _ in late if i > previous]
    assert sum(w.late_polls for _, _, w in warnings) + len(unreported) == len(late)


def test_no_warning_while_polls_keep_their_time() -> None:
    pace = Pace(PollPolicy())
    assert all(pace.sent(t, t + 0.999, 0, 1) is None for t in range(100))
    assert pace.late_polls == 0


def test_the_warning_carries_the_figures_and_the_rate_they_allow() -> None:
    """The measured round trip is in the warning, and ``max_rate`` is limit / latency: the
    docs' example, 64 in flight at 0.5 s, allows 128 polls/s."""
    pace = Pace(PollPolicy(max_in_flight=64))
    pace.answered(0.0, 0.5, 2.5, range(2000))
    warning = pace.sent(10.0, 25.7, 1936, 64)
    assert warning is not None
    assert (warning.limit, warning.in_flight, warning.waiting, warning.cap) == (64, 64, 1936, None)
    assert warning.latency == pytest.approx(0.5)
    assert warning.max_rate == pytest.approx(128.0)
    text = str(warning)
    assert "15.7 s after it was due" in text
    assert "128 polls/s" in text
    assert "FollowLatency" in text  # what the caller can do about it
    before_any = Pace(PollPolicy()).sent(0.0, 5.0, 1, 1)
    assert before_any is not None
    assert before_any.max_rate is None


def steady(
    pace: Pace, tasks: int, interval: float, latency: float, seconds: float, start: float = 0.0
) -> list[Any]:
    """Answers as ``tasks`` tasks polled every ``interval`` at ``latency`` produce them, for
    ``seconds`` from ``start``; the resizes. The sizing reads only the means (round trip,
    cycle) and the tracked count, so the answers come every (interval + latency) / tasks
    seconds, or every 50 ms when that is sooner (the same means, fewer answers)."""
    step = min((interval + latency) / tasks, 0.05)
    resizes, t = [], start
    while t < start + seconds:
        resized = pace.answered(t, t + latency, t + latency + interval, range(tasks))
        if resized is not None:
            resizes.append(resized)
        t += step
    return resizes


@settings(max_examples=examples(60), deadline=None)
@given(
    tasks=st.integers(1, 5000),
    interval=st.floats(0.05, 60.0),
    latency=st.floats(0.001, 5.0),
    base=st.integers(1, 128),
    extra=st.integers(0, 1000),
    headroom=st.floats(1.0, 2.0),
)
def test_following_sizes_the_bound_to_latency_times_rate_within_its_bounds(
    tasks: int, interval: float, latency: float, base: int, extra: int, headroom: float
) -> None:
    """Little's law: N tasks each polled one cycle (interval + round trip) apart need
    N / cycle polls a second, each in flight one round trip; the bound becomes
    ceil(headroom x that), never over the cap nor under max_in_flight, and each change is an
    InFlightResized whose figures say so."""
    cap = base + extra
    policy = PollPolicy(
        max_in_flight=base, in_flight=FollowLatency(cap=cap, headroom=headroom, window=1.0)
    )
    pace = Pace(policy)
    resizes = steady(pace, tasks, interval, latency, seconds=3.5)  # three 1 s windows
    rate = tasks / (interval + latency)
    needed = headroom * rate * latency
    want = min(cap, max(base, math.ceil(needed)))
    # A bound grows from the base when the need is over it (a shrink never comes first:
    # nothing is under the base); a need within float rounding of an integer may land on
    # either side of it.
    if needed > base + 1e-6 and cap > base:
        assert abs(pace.limit - want) <= 1, (pace.limit, want)
        assert resizes
        assert resizes[0].before == base
    elif needed < base - 1e-6:
        assert pace.limit == base
        assert not resizes
    assert base <= pace.limit <= cap
    for earlier, later in itertools.pairwise(resizes):
        assert later.before == earlier.after
    for resized in resizes:
        assert resized.after != resized.before
        assert resized.cap == cap
        assert resized.tracked == tasks
        assert resized.latency == pytest.approx(latency)
        assert resized.needed_rate == pytest.approx(rate, rel=1e-6)
    assert pace.latency == pytest.approx(latency)


def test_a_fixed_bound_never_moves() -> None:
    pace = Pace(PollPolicy(max_in_flight=4))
    assert steady(pace, 2000, 2.0, 0.5, seconds=10.0) == []
    assert pace.limit == 4
    assert not pace.following
    assert pace.latency == pytest.approx(0.5)


def test_the_docs_example_at_half_a_second() -> None:
    """2,000 tasks every 2 s at 0.5 s need 800 polls/s, 400 in flight (500 with the 1.25
    headroom): capped at 256, the resize says 500 were needed."""
    pace = Pace(PollPolicy(in_flight=FollowLatency(cap=256)))
    (resized,) = steady(pace, 2000, 2.0, 0.5, seconds=10.0)
    assert (resized.before, resized.after, resized.needed) == (64, 256, 500)
    assert resized.needed_rate == pytest.approx(800.0)
    assert "capped at 256: 500 needed" in str(resized)
    assert "2000 tasks need 800 polls/s at a round trip of 0.5 s" in str(resized)


def test_shrinking_waits_until_a_window_asks_for_well_under_the_bound() -> None:
    """Hysteresis: a bound of 200 is kept while the need stays above SHRINK_BELOW of it, and
    shrinks (to the need, never under max_in_flight) once it falls below."""
    pace = Pace(PollPolicy(max_in_flight=8, in_flight=FollowLatency(cap=400, headroom=1.0)))
    (grown,) = steady(pace, 800, 1.0, 0.25 / 0.75, seconds=5.0)  # 800 / (4/3) s x 1/3 s
    assert grown.after == pace.limit == 200
    # a need of 160 (0.8 of 200): kept
    assert steady(pace, 640, 1.0, 0.25 / 0.75, seconds=5.0, start=10.0) == []
    assert pace.limit == 200
    # a need of 100 (under 0.75 of 200): shrunk to it
    shrunk = steady(pace, 400, 1.0, 0.25 / 0.75, seconds=5.0, start=20.0)
    assert [r.after for r in shrunk] == [100]
    assert SHRINK_BELOW * 200 > 100
    # no tasks' worth of need: back to max_in_flight, never under it
    shrunk = steady(pace, 1, 1.0, 0.01, seconds=5.0, start=30.0)
    assert [r.after for r in shrunk] == [8]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: FollowLatency(cap=0), "cap must be >= 1"),
        (lambda: FollowLatency(cap=8, headroom=0.5), "headroom must be >= 1.0"),
        (lambda: FollowLatency(cap=8, window=0.0), "window must be > 0"),
        (lambda: FollowLatency(cap=8, headroom=math.nan), "headroom must be >= 1.0"),
        (lambda: PollPolicy(in_flight=FollowLatency(cap=10)), "under max_in_flight (64)"),
        (lambda: PollPolicy(max_in_flight=0), "max_in_flight must be >= 1"),
        (lambda: PollPolicy(lateness_tolerance=-1.0), "lateness_tolerance must be >= 0"),
        (lambda: PollPolicy(lateness_tolerance=math.nan), "lateness_tolerance must be a number"),
    ],
)
def test_bad_settings_are_refused_by_name(make: Any, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        make()


def test_an_in_flight_that_is_not_a_policy_is_refused() -> None:
    """``in_flight=256`` (a number where the policy goes) is a TypeError naming both shapes,
    not an AttributeError later; ``math.inf`` turns the warning off."""
    with pytest.raises(TypeError, match=re.escape("None (a fixed max_in_flight) or Follow")):
        PollPolicy(in_flight=256)  # type: ignore[arg-type]
    pace = Pace(PollPolicy(lateness_tolerance=math.inf))
    assert pace.sent(0.0, 1e9, 10, 1) is None
    assert pace.late_polls == 0


# -- the real Poller against a server with latency, in simulated time --------------------------

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "slow", "version": "0"},
}
STAMP = "2025-11-25T10:30:00Z"


class SlowServer:
    """Answers ``tasks/get`` ``latency`` seconds after it arrives (each in a task of its own,
    so any number may be in flight); its tasks never end; records each poll's time per task."""

    def __init__(self, end: MemoryServerEnd, latency: float, interval_ms: int) -> None:
        self.end, self.latency, self.interval_ms = end, latency, interval_ms
        self.polls: dict[str, list[float]] = {}
        self.in_flight = 0
        self.most_in_flight = 0

    def task(self, task_id: str) -> dict[str, Any]:
        return {
            "taskId": task_id,
            "status": "working",
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
            "ttl": None,
            "pollInterval": self.interval_ms,
        }

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    message = await self.end.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    tg.cancel_scope.cancel()
                    return
                if "id" not in message:
                    continue
                method, params = message["method"], message.get("params") or {}
                if method == "initialize":
                    await self.reply(message["id"], {"result": INIT_RESULT})
                elif method == "tools/call":
                    task_id = f"task-{len(self.polls)}"
                    self.polls[task_id] = []
                    await self.reply(message["id"], {"result": {"task": self.task(task_id)}})
                elif method == "tasks/get":
                    self.polls[params["taskId"]].append(trio.current_time())
                    tg.start_soon(self.slow_get, message["id"], params["taskId"])
                else:
                    await self.reply(message["id"], {"error": {"code": -32601, "message": "no"}})

    async def slow_get(self, request_id: Any, task_id: str) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await trio.sleep(self.latency)
        self.in_flight -= 1
        await self.reply(request_id, {"result": self.task(task_id)})

    async def reply(self, request_id: Any, answer: dict[str, Any]) -> None:
        try:
            await self.end.send({"jsonrpc": "2.0", "id": request_id, **answer})
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the client left


def run_slow(
    tasks: int, latency: float, interval_ms: int, policy: PollPolicy, seconds: float
) -> tuple[SlowServer, dict[str, Any]]:
    """``tasks`` tasks waited for ``seconds`` by one Poller against a SlowServer, in
    simulated time; what the Poller saw (its warnings and counters) at the end."""
    box: dict[str, Any] = {}

    async def main() -> None:
        transport, end = memory_transport_pair()
        server = SlowServer(end, latency, interval_ms)
        box["server"] = server
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run)
            info = Implementation("pace-sim", "0")
            async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
                created = [
                    task_created(await c.start(ToolCall("slow").as_task())) for _ in range(tasks)
                ]
                async with Poller(c, policy) as poller:
                    box["start"] = trio.current_time()
                    with pytest.raises(DeadlineExceeded):
                        await poller.wait_all(created, deadline=seconds)
                    box["warnings"] = list(poller.warnings)
                    box["late"] = poller.polls_late
                    box["limit"] = poller.in_flight_limit
                    box["latency"] = poller.poll_latency
                    box["sent"] = poller.polls_sent
            tg.cancel_scope.cancel()

    clock = trio.testing.MockClock(autojump_threshold=0)
    anyio.run(main, backend="trio", backend_options={"clock": clock})
    return box.pop("server"), box


def gaps(server: SlowServer, after: float) -> list[float]:
    """The gaps between one task's successive polls sent after ``after``, all tasks."""
    out: list[float] = []
    for times in server.polls.values():
        later = [t for t in times if t >= after]
        out += [b - a for a, b in itertools.pairwise(later)]
    return out


def test_a_fixed_bound_too_small_for_the_latency_falls_behind_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """40 tasks every 1 s at a 0.5 s round trip ask for 26.7 polls/s (13.3 in flight); a fixed
    bound of 4 allows 8/s: polls fall behind, and the Poller says so with the figures, at most
    once every 10 s, as WARNING records too. Nothing is changed by it: the bound stays 4."""
    policy = PollPolicy(floor=0.0, jitter=0.0, max_in_flight=4, lateness_tolerance=0.5)
    caplog.set_level(logging.WARNING, logger="mcp_tasks_client.poller")
    server, seen = run_slow(40, 0.5, 1000, policy, seconds=60.0)
    behind = [w for w in seen["warnings"] if isinstance(w, FallingBehind)]
    assert 1 <= len(behind) <= 60 / FALLING_BEHIND_EVERY + 1
    assert not [w for w in seen["warnings"] if isinstance(w, InFlightResized)]
    last = behind[-1]
    assert (last.limit, last.cap) == (4, None)
    assert last.in_flight <= 4
    assert last.waiting > 0
    assert last.late > 0.5
    assert last.latency == pytest.approx(0.5)
    assert last.max_rate == pytest.approx(8.0)
    assert seen["limit"] == 4
    assert seen["late"] >= sum(w.late_polls for w in behind)
    assert server.most_in_flight == 4
    # each task is polled about every 40 / 8 = 5 s, not every 1.5 s
    assert sorted(gaps(server, 10.0))[len(gaps(server, 10.0)) // 2] == pytest.approx(5.0, rel=0.1)
    records = [r for r in caplog.records if "FallingBehind" in r.getMessage()]
    assert len(records) == len(behind)
    assert all(r.levelno == logging.WARNING for r in records)


def test_following_latency_grows_the_bound_says_so_and_keeps_the_pace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The same load under ``FollowLatency(cap=64)``: after the first window the bound becomes
    ceil(1.25 x 40 / 1.5 s x 0.5 s) = 17, one InFlightResized (an INFO record) says so, and
    from then on no poll is late and each task is polled every interval + round trip (C-19)."""
    policy = PollPolicy(
        floor=0.0,
        jitter=0.0,
        max_in_flight=4,
        lateness_tolerance=0.5,
        in_flight=FollowLatency(cap=64),
    )
    caplog.set_level(logging.INFO, logger="mcp_tasks_client.poller")
    server, seen = run_slow(40, 0.5, 1000, policy, seconds=60.0)
    resizes = [w for w in seen["warnings"] if isinstance(w, InFlightResized)]
    assert resizes
    assert resizes[0].before == 4
    assert seen["limit"] == resizes[-1].after
    assert 14 <= seen["limit"] <= 18  # 17 in a steady state; the first window is uneven
    assert server.most_in_flight <= seen["limit"]
    records = [r for r in caplog.records if "InFlightResized" in r.getMessage()]
    assert len(records) == len(resizes)
    assert all(r.levelno == logging.INFO for r in records)
    steady_gaps = gaps(server, 20.0)
    assert steady_gaps
    assert max(steady_gaps) == pytest.approx(1.5, abs=0.01)
    behind = [w for w in seen["warnings"] if isinstance(w, FallingBehind)]
    assert all(w.cap == 64 for w in behind)


def test_following_stops_at_the_cap_and_the_warning_says_so() -> None:
    """A cap under the need: the bound stops at it, the resize says what was needed, and the
    polls that still fall behind are reported as held by the cap."""
    policy = PollPolicy(
        floor=0.0,
        jitter=0.0,
        max_in_flight=2,
        lateness_tolerance=0.5,
        in_flight=FollowLatency(cap=6),
    )
    server, seen = run_slow(40, 0.5, 1000, policy, seconds=60.0)
    resizes = [w for w in seen["warnings"] if isinstance(w, InFlightResized)]
    assert [r.after for r in resizes] == [6]
    assert resizes[0].needed > 6
    assert server.most_in_flight == 6
    behind = [w for w in seen["warnings"] if isinstance(w, FallingBehind)]
    assert behind
    assert "at its cap (6)" in str(behind[-1])


def test_a_poller_that_keeps_up_says_nothing() -> None:
    """The default policy with room to spare: no warning, no resize, the bound unchanged."""
    policy = PollPolicy(floor=0.0, jitter=0.0)
    server, seen = run_slow(20, 0.05, 1000, policy, seconds=30.0)
    assert seen["warnings"] == []
    assert seen["late"] == 0
    assert seen["limit"] == 64
    assert seen["latency"] == pytest.approx(0.05)
    assert max(gaps(server, 5.0)) == pytest.approx(1.05, abs=0.01)


@settings(max_examples=examples(12), deadline=None)
@given(
    tasks=st.integers(1, 24),
    latency_eighths=st.integers(1, 8),
    interval_ms=st.sampled_from([250, 500, 1000, 2000]),
    bound=st.integers(1, 8),
    cap=st.none() | st.integers(8, 32),
    # off the eighths every time here is a multiple of: no poll is late by exactly the
    # tolerance (no float tie), and a count off by any shift of the lateness shows
    tolerance=st.sampled_from([0.3, 0.55, 1.05]),
)
def test_lateness_counted_by_the_poller_is_what_the_server_saw(
    tasks: int,
    latency_eighths: int,
    interval_ms: int,
    bound: int,
    cap: int | None,
    tolerance: float,
) -> None:
    """Any load, fixed or following bound: every poll the server received later than its due
    time (one interval after the task's previous answer, C-19; the first one interval after
    the wait began) by more than the tolerance is one the Poller counted late, and no other;
    there is a FallingBehind exactly when one was; the server never saw more polls in flight
    than the bound (the cap, when it follows)."""
    latency = latency_eighths / 8
    interval = interval_ms / 1000
    follow = None if cap is None else FollowLatency(cap=cap)
    policy = PollPolicy(
        floor=0.0,
        jitter=0.0,
        max_in_flight=bound,
        lateness_tolerance=tolerance,
        in_flight=follow,
    )
    server, seen = run_slow(tasks, latency, interval_ms, policy, seconds=30.0)
    late = 0
    for times in server.polls.values():
        due = seen["start"] + interval  # the first poll: one interval after the wait began
        for sent in times:
            late += sent - due > tolerance
            due = sent + latency + interval  # answered one latency later, then one interval
    assert seen["late"] == late
    behind = [w for w in seen["warnings"] if isinstance(w, FallingBehind)]
    assert bool(behind) == (late > 0)
    assert server.most_in_flight <= (bound if cap is None else cap)
    assert bound <= seen["limit"] <= (bound if cap is None else cap)
