"""Busy servers (HTTP 429/503) by policy: ``PollPolicy.on_busy`` (issue 37, part 3).

Three parts. The rule itself is sans-I/O (``PollPolicy.busy_wait``, ``PollScheduler.busy``):
hypothesis drives it on a simulated clock, with drawn ``Retry-After`` values, server intervals,
jitter and runs of busy answers. The whole Poller on trio's virtual clock, in process, behind a
rate limiter that refuses ``tasks/get`` as the HTTP transport does (ServerBusy from ``send``):
drawn policies, busy runs and deadlines. Then the real Poller against the suite's FaultServer over
HTTP on 127.0.0.1, both generations, both loops: a :class:`Busy` hook answers chosen requests
with 429 or 503, and the pace is checked on the server's own record of when each request
arrived (``Received.at``): the gap after a busy answer is at least its ``Retry-After``. That
is a lower bound the client must keep, not a timing of ours, so it cannot flake.

The extension lets a server rate-limit a client that polls faster than ``pollInterval``
(E A-25; C-19 in 2025-11-25 is the client's rule to honour the interval); what the client does
with the 429 is this library's policy, and its default is unchanged: the wait ends with the
ServerBusy.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import trio
import trio.testing
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_tasks_client import (
    BusyPolicy,
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    LeanHttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client._sansio.scheduler import PollScheduler
from mcp_tasks_client.errors import BackedOff, DeadlineExceeded, ServerBusy
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCRequest,
)
from mcp_tasks_client.testing import Busy, FaultServer, HostileHTTPServer, Received
from mcp_tasks_client.transports import TransportWrapper

G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
GENERATIONS = pytest.mark.parametrize("generation", [G1, G2], ids=["2025", "2026"])
INFO = Implementation("busy-test", "0")
EPS = 1e-9


def close_below(value: float, bound: float) -> bool:
    """``value >= bound`` up to float rounding."""
    return value >= bound - EPS * max(1.0, abs(value), abs(bound))


# -- the rule, sans-I/O, on a simulated clock ------------------------------------------------

policies = st.builds(
    PollPolicy,
    floor=st.floats(0.0, 2.0),
    busy_backoff=st.floats(0.0, 50.0),
    backoff=st.floats(1.0, 4.0),
    ceiling=st.floats(0.0, 120.0),
    jitter=st.floats(0.0, 0.9),
    max_server_interval=st.floats(1.0, 7200.0),
    on_busy=st.just(BusyPolicy.BACK_OFF),
)
retry_afters = st.none() | st.floats(0.0, 10_000.0)
intervals = st.none() | st.floats(0.0, 10_000.0)


@settings(max_examples=examples(300))
@given(policies, st.integers(1, 2_000), retry_afters, intervals)
@example(PollPolicy(jitter=0.0), 1, 1.0, None)
@example(PollPolicy(jitter=0.0, busy_backoff=1.0, backoff=2.0, ceiling=30.0), 1_100, None, None)
def test_the_busy_wait_is_never_under_retry_after_nor_the_interval(
    policy: PollPolicy, in_row: int, retry_after: float | None, interval: float | None
) -> None:
    """``busy_wait`` is ``max(pollInterval, Retry-After, the policy's busy backoff)``: never
    under ``Retry-After``; never under the interval (capped at ``max_server_interval``, as a
    normal poll's, C-19); the policy's own part grows by ``backoff`` per busy answer in a row
    up to ``ceiling`` (or ``busy_backoff``, if larger), never overflowing; and a
    ``Retry-After`` past ``max_server_interval`` is not waited out (None: the wait fails)."""
    wait = policy.busy_wait(in_row, retry_after, interval)
    if retry_after is not None and retry_after > policy.max_server_interval:
        assert wait is None
        return
    assert wait is not None
    assert math.isfinite(wait)
    assert wait >= (retry_after or 0.0)
    assert wait >= min(interval or 0.0, policy.max_server_interval)
    assert wait >= policy.floor
    own = min(policy.busy_backoff * policy.backoff ** min(in_row - 1, 60), math.inf)
    assert close_below(wait, min(own, max(policy.ceiling, policy.busy_backoff)))
    assert wait <= max(
        policy.floor,
        retry_after or 0.0,
        min(interval or 0.0, policy.max_server_interval),
        max(policy.ceiling, policy.busy_backoff),
    )


def test_busy_wait_counts_from_one() -> None:
    with pytest.raises(ValueError, match="in_row"):
        PollPolicy().busy_wait(0, None, None)


answers = st.lists(
    st.tuples(st.booleans(), retry_afters, intervals, st.floats(0.0, 5.0)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=examples(200))
@given(policies, answers, st.integers(0, 2**16))
@example(
    PollPolicy(on_busy=BusyPolicy.BACK_OFF, jitter=0.5),
    [(True, 1.0, None, 0.0), (True, 1.0, None, 0.0), (False, None, 2.0, 0.0)],
    0,
)
def test_on_a_simulated_clock_no_poll_comes_sooner_than_retry_after(
    policy: PollPolicy, script: list[tuple[bool, float | None, float | None, float]], seed: int
) -> None:
    """The scheduler decides, a simulated clock runs: each poll is taken at its due time
    (plus a drawn delay in flight) and answered busy or not. After a busy answer at ``t``
    with ``Retry-After: R`` the next poll is due no sooner than ``t + R`` (whatever the jitter
    drew), nor sooner than the task's interval; the busy-in-a-row count the Poller keeps
    grows the policy's own wait; a Retry-After too long to wait out schedules nothing."""
    scheduler = PollScheduler(policy, random.Random(seed))
    now = 0.0
    scheduler.track("t", now, None)
    in_row = 0
    interval: float | None = None
    for busy, retry_after, answered_interval, in_flight in script:
        due = scheduler.next_due()
        assert due is not None
        now = max(now, due)
        assert scheduler.pop_due(now) == ["t"]
        now += in_flight  # the answer arrives this much later
        if not busy:
            in_row = 0
            interval = answered_interval
            scheduler.answered("t", now, interval)
            continue
        in_row += 1
        next_due = scheduler.busy("t", now, in_row, retry_after, interval)
        if retry_after is not None and retry_after > policy.max_server_interval:
            assert next_due is None  # the Poller ends the wait with the ServerBusy
            return
        assert next_due is not None
        assert scheduler.next_due() == next_due
        assert close_below(next_due - now, retry_after or 0.0)
        assert close_below(next_due - now, min(interval or 0.0, policy.max_server_interval))
        assert close_below(next_due - now, policy.floor)


# -- the real Poller against the FaultServer over HTTP -----------------------------------------


def busy_for(method: str, answers: list[Busy]) -> Callable[[dict[str, Any]], Any]:
    """An ``on_message`` hook: the next requests of ``method`` get ``answers`` in order (then
    served as usual)."""
    left = list(answers)

    async def hook(message: dict[str, Any]) -> Any:
        if message.get("method") == method and left:
            return left.pop(0)
        return None

    return hook


@asynccontextmanager
async def busy_server(
    generation: Generation,
    method: str,
    answers: list[Busy],
    *,
    transport: Callable[..., HttpTransport] = HttpTransport,
    router: InputRouter | None = None,
) -> AsyncIterator[tuple[FaultServer, HostileHTTPServer, Client]]:
    server = FaultServer(generation, on_message=busy_for(method, answers), steps=2)
    extra: dict[str, Any] = {} if router is None else {"capabilities": router.capabilities()}
    async with (
        server.http() as http,
        Client(transport(http.url), generation=generation, client_info=INFO, **extra) as client,
    ):
        if router is not None:
            router.attach(client)
        yield server, http, client


def received(http: HostileHTTPServer, method: str) -> list[Received]:
    return [r for r in http.received if r.http_method == "POST" and r.rpc_method == method]


def fast(**changes: Any) -> PollPolicy:
    """Quick polls with no jitter (the server moves a task by polls, not by time)."""
    base: dict[str, Any] = {"floor": 0.0, "initial": 0.01, "jitter": 0.0, "busy_backoff": 0.01}
    return PollPolicy(**(base | changes))


async def started(client: Client, tool: str = "echo", **arguments: Any) -> CreateTaskResult:
    start = await client.start(ToolCall(tool, {"text": "hi", **arguments}).as_task())
    assert isinstance(start, CreateTaskResult)
    return start


pytestmark = pytest.mark.anyio


@GENERATIONS
@pytest.mark.parametrize(
    "transport",
    [functools.partial(HttpTransport, engine="httpx"), LeanHttpTransport],
    ids=["httpx", "lean"],
)
async def test_by_default_a_busy_poll_ends_the_wait_with_server_busy(
    generation: Generation, transport: Callable[..., HttpTransport]
) -> None:
    """Today's behaviour kept as the default (``BusyPolicy.FAIL``): a 429 to ``tasks/get``
    ends the wait with the ServerBusy and its Retry-After; nothing is sent again."""
    assert PollPolicy().on_busy is BusyPolicy.FAIL
    with anyio.fail_after(20):
        async with busy_server(generation, "tasks/get", [Busy(429, "7")], transport=transport) as (
            _,
            http,
            client,
        ):
            created = await started(client)
            async with Poller(client, fast()) as poller:
                with pytest.raises(ServerBusy) as caught:
                    await poller.wait(created, deadline=15)
            assert not any(isinstance(w, BackedOff) for w in poller.warnings)
    assert caught.value.status_code == 429
    assert caught.value.retry_after == 7.0
    assert caught.value.method == "tasks/get"
    assert len(received(http, "tasks/get")) == 1


@GENERATIONS
async def test_a_429_with_retry_after_on_tasks_get_is_paced_by_it(
    generation: Generation,
) -> None:
    """``BusyPolicy.BACK_OFF``: a 429 with ``Retry-After: 1``, then the task runs to its end.
    On the server's record the poll after the busy answer came at least 1 s after it (never
    faster than Retry-After), though the policy's own backoff is 10 ms; one BackedOff warning
    for the backoff, naming the method, the Retry-After and the wait. (Busy answers in a row:
    the 503 test below, and the virtual-time property above.)"""
    answers = [Busy(429, "1")]
    with anyio.fail_after(20):
        async with busy_server(generation, "tasks/get", answers) as (_, http, client):
            created = await started(client)
            async with Poller(client, fast(on_busy=BusyPolicy.BACK_OFF)) as poller:
                outcome = await poller.wait(created, deadline=15)
    assert isinstance(outcome, Completed)
    gets = received(http, "tasks/get")
    assert len(gets) == 3  # the busy one, then the two the task takes to end (steps=2)
    assert gets[1].at - gets[0].at >= 1.0, (gets[0].at, gets[1].at)
    (backed,) = [w for w in poller.warnings if isinstance(w, BackedOff)]
    assert (backed.method, backed.status_code, backed.retry_after, backed.in_row) == (
        "tasks/get",
        429,
        1.0,
        1,
    )
    assert backed.wait >= 1.0
    assert backed.task_id == created.task.task_id


@GENERATIONS
async def test_a_503_without_retry_after_backs_off_by_the_policy(generation: Generation) -> None:
    """A 503 with no ``Retry-After``: the policy's own busy backoff paces the next poll (0.2 s,
    then 0.4 s: ``backoff`` per busy answer in a row), seen on the server's record."""
    answers = [Busy(503), Busy(503)]
    policy = fast(on_busy=BusyPolicy.BACK_OFF, busy_backoff=0.2, backoff=2.0)
    with anyio.fail_after(20):
        async with busy_server(generation, "tasks/get", answers) as (_, http, client):
            created = await started(client)
            async with Poller(client, policy) as poller:
                outcome = await poller.wait(created, deadline=15)
    assert isinstance(outcome, Completed)
    gets = received(http, "tasks/get")
    assert gets[1].at - gets[0].at >= 0.2
    assert gets[2].at - gets[1].at >= 0.4
    backed = [w for w in poller.warnings if isinstance(w, BackedOff)]
    assert [(w.status_code, w.retry_after) for w in backed] == [(503, None), (503, None)]
    assert [w.wait for w in backed] == pytest.approx([0.2, 0.4])


@GENERATIONS
async def test_a_deadline_that_ends_inside_a_backoff_ends_the_wait_there(
    generation: Generation,
) -> None:
    """``Retry-After: 30`` and a 0.5 s deadline: the wait ends with DeadlineExceeded at its
    deadline (not 30 s later), and no poll is sent inside the backoff; the warning says how
    long the backoff was to be."""
    with anyio.fail_after(10):
        async with busy_server(generation, "tasks/get", [Busy(429, "30")]) as (_, http, client):
            created = await started(client)
            async with Poller(client, fast(on_busy=BusyPolicy.BACK_OFF)) as poller:
                with pytest.raises(DeadlineExceeded) as caught:
                    await poller.wait(created, deadline=0.5)
            assert len(received(http, "tasks/get")) == 1
    assert list(caught.value.task_ids) == [created.task.task_id]
    (backed,) = [w for w in poller.warnings if isinstance(w, BackedOff)]
    # due - now, both seconds on the loop's clock: (now + 30) - now is 30 give or take the
    # float's last bits at that clock's magnitude (29.999999999985 seen once).
    assert backed.wait >= 30.0 - 1e-6


async def test_a_retry_after_past_max_server_interval_is_not_waited_out() -> None:
    """A ``Retry-After`` past ``max_server_interval`` (here 60 s past 10 s) is not a wait to
    sit through silently: the wait ends with the ServerBusy at once, as under FAIL."""
    policy = fast(on_busy=BusyPolicy.BACK_OFF, max_server_interval=10.0)
    with anyio.fail_after(10):
        async with busy_server(G2, "tasks/get", [Busy(429, "60")]) as (_, http, client):
            created = await started(client)
            async with Poller(client, policy) as poller:
                with pytest.raises(ServerBusy) as caught:
                    await poller.wait(created, deadline=30)
    assert caught.value.retry_after == 60.0
    assert not isinstance(caught.value, BackedOff)
    assert len(received(http, "tasks/get")) == 1


@GENERATIONS
async def test_a_busy_tools_call_is_never_sent_again(generation: Generation) -> None:
    """A busy ``tools/call`` raises ServerBusy to the caller whatever the Poller's policy:
    sent once (a retried call could run its side effects twice)."""
    busy = [Busy(429, "0")]
    with anyio.fail_after(10):
        async with (
            busy_server(generation, "tools/call", busy) as (_, http, client),
            Poller(client, fast(on_busy=BusyPolicy.BACK_OFF)),
        ):
            with pytest.raises(ServerBusy) as caught:
                await started(client)
    assert caught.value.method == "tools/call"
    assert len(received(http, "tools/call")) == 1


def router_saying_yes() -> InputRouter:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(yes)
    return router


@pytest.mark.parametrize("on_busy", [BusyPolicy.FAIL, BusyPolicy.BACK_OFF])
async def test_a_busy_tasks_update_fails_or_is_sent_again_after_retry_after(
    on_busy: BusyPolicy,
) -> None:
    """2026-07-28 input answers go in ``tasks/update`` (E C28-C33): a 429 to the first one
    ends the wait with ServerBusy under FAIL; under BACK_OFF the same answers are sent again
    no sooner than ``Retry-After: 1`` after (the server's record), and the task completes."""
    with anyio.fail_after(20):
        router = router_saying_yes()
        updates_busy = [Busy(429, "1")]
        async with busy_server(G2, "tasks/update", updates_busy, router=router) as (
            _,
            http,
            client,
        ):
            created = await started(client, "ask")
            policy = fast(on_busy=on_busy)
            async with Poller(client, policy, inputs=router) as poller:
                if on_busy is BusyPolicy.FAIL:
                    with pytest.raises(ServerBusy) as caught:
                        await poller.wait(created, deadline=15)
                    assert caught.value.method == "tasks/update"
                else:
                    outcome = await poller.wait(created, deadline=15)
                    assert isinstance(outcome, Completed)
    updates = received(http, "tasks/update")
    if on_busy is BusyPolicy.FAIL:
        assert len(updates) == 1
        return
    assert updates[1].at - updates[0].at >= 1.0
    assert updates[1].params["inputResponses"] == updates[0].params["inputResponses"]
    backed = [w for w in poller.warnings if isinstance(w, BackedOff)]
    assert [(w.method, w.retry_after) for w in backed] == [("tasks/update", 1.0)]


def test_a_busy_answer_is_429_or_503() -> None:
    """The FaultServer's :class:`Busy` answer is one of the two busy statuses."""
    with pytest.raises(ValueError, match="429 or 503"):
        Busy(500)


# -- the whole Poller on virtual time ----------------------------------------------------------


class RateLimited(TransportWrapper):
    """A rate limiter in front of a FaultServer: the next ``tasks/get`` requests are refused
    as the HTTP transport refuses a 429/503 (ServerBusy from ``send``, the request never
    reaching the server), one per entry of ``busy`` (its Retry-After, or None). Every
    ``tasks/get`` is logged with the virtual time it was sent at and whether it was refused:
    the wire as the server's side of the limiter sees it."""

    def __init__(self, inner: Any, busy: list[float | None]) -> None:
        super().__init__(inner)
        self.busy = list(busy)
        self.gets: list[tuple[float, float | None, bool]] = []
        """(sent at, its Retry-After, refused) per tasks/get."""

    async def send(self, message: Any, *, held: bool = False) -> None:
        if isinstance(message, JSONRPCRequest) and message.method == "tasks/get":
            if self.busy:
                retry_after = self.busy.pop(0)
                self.gets.append((anyio.current_time(), retry_after, True))
                raise ServerBusy(429, "slow down", retry_after=retry_after, method="tasks/get")
            self.gets.append((anyio.current_time(), None, False))
        await super().send(message, held=held)


@settings(max_examples=examples(60))
@given(
    generation=st.sampled_from([G1, G2]),
    busy=st.lists(st.none() | st.floats(0.0, 120.0), max_size=5),
    busy_backoff=st.floats(0.0, 20.0),
    backoff=st.floats(1.0, 3.0),
    jitter=st.floats(0.0, 0.5),
    deadline=st.none() | st.floats(0.5, 300.0),
    seed=st.integers(0, 2**16),
)
@example(G2, [30.0], 0.01, 2.0, 0.0, 0.5, 0)  # a deadline inside a backoff
@example(G1, [None, None, 1.0], 0.2, 2.0, 0.3, None, 1)
def test_on_virtual_time_the_poller_never_polls_sooner_than_retry_after(
    generation: Generation,
    busy: list[float | None],
    busy_backoff: float,
    backoff: float,
    jitter: float,
    deadline: float | None,
    seed: int,
) -> None:
    """The real Poller and Client against the FaultServer in process, under trio's MockClock:
    a drawn run of busy answers to ``tasks/get``. After each, the next ``tasks/get`` is sent no
    sooner than its Retry-After and the policy's busy wait (the scheduler decides: nothing
    else); each busy answer is one BackedOff; the wait ends with the task's outcome once the
    busy run is over, or with DeadlineExceeded exactly at its deadline, with nothing sent in
    the backoff it cut short."""
    policy = PollPolicy(
        floor=0.0,
        initial=0.01,
        jitter=jitter,
        on_busy=BusyPolicy.BACK_OFF,
        busy_backoff=busy_backoff,
        backoff=backoff,
    )
    box: dict[str, Any] = {}

    async def main() -> None:
        server = FaultServer(generation, steps=2)
        async with server.memory() as inner:
            limited = RateLimited(inner, busy)
            async with Client(limited, generation=generation, client_info=INFO) as client:
                created = await started(client)
                async with Poller(client, policy, rng=random.Random(seed)) as poller:
                    begun = anyio.current_time()
                    try:
                        box["outcome"] = await poller.wait(created, deadline=deadline)
                    except DeadlineExceeded as exc:
                        box["outcome"] = exc
                    box["waited"] = anyio.current_time() - begun
                    box["warnings"] = list(poller.warnings)
            box["gets"] = limited.gets

    anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    gets: list[tuple[float, float | None, bool]] = box["gets"]
    backed = [w for w in box["warnings"] if isinstance(w, BackedOff)]
    refused = [g for g in gets if g[2]]
    assert len(backed) == len(refused)
    for warning, (_, retry_after, _) in zip(backed, refused, strict=True):
        assert warning.retry_after == retry_after
        assert close_below(warning.wait, retry_after or 0.0)
    for (sent, retry_after, was_busy), (after, _, _) in itertools.pairwise(gets):
        if was_busy:
            assert close_below(after - sent, retry_after or 0.0), (sent, after, retry_after)
    outcome = box["outcome"]
    if isinstance(outcome, DeadlineExceeded):
        assert deadline is not None
        assert box["waited"] == pytest.approx(deadline)
        assert all(sent <= gets[0][0] + deadline + EPS for sent, _, _ in gets)
    else:
        assert isinstance(outcome, Completed)
        assert len(refused) == len(busy)  # every busy answer was waited out
