"""The inline exchanges' deadlines, watched by one task per transport (``_io/_deadlines.py``).

An inline exchange's cancel scope carries no deadline of its own (a timer armed and disarmed
per request); the transport's one watcher cancels it once its deadline passed. The property,
on trio's mock clock (simulated time, no sleeping): whatever the order in which exchanges with
their own timeouts begin and end, each is cancelled exactly when its deadline passes if it is
still running then, never before, and one that ended first is never cancelled. Then the same
over real HTTP on both loops: a request with a short deadline times out (RequestTimeout) while
one begun before it with a long deadline, still waiting, is answered.
"""

from __future__ import annotations

import math

import anyio
import pytest
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lean_http import KeepAliveServer, client_on, running

from mcp_tasks_client import LeanHttpTransport
from mcp_tasks_client._io._deadlines import InlineDeadlines
from mcp_tasks_client.errors import RequestTimeout

# (when it begins, its timeout, when it would end by itself: None = never), in tenths of a
# second; timeouts even and ends odd, so no exchange ends in the instant its deadline passes.
_EXCHANGES = st.lists(
    st.tuples(
        st.integers(0, 40),
        st.integers(1, 50).map(lambda n: 2 * n),
        st.one_of(st.none(), st.integers(0, 60).map(lambda n: 2 * n + 1)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(_EXCHANGES)
def test_each_exchange_is_cancelled_when_its_deadline_passes_and_never_before(
    exchanges: list[tuple[int, int, int | None]],
) -> None:
    scopes: dict[int | str, anyio.CancelScope] = {}
    deadlines = InlineDeadlines(scopes)
    seen: dict[int, tuple[bool, float, float]] = {}

    async def exchange(n: int, begin: int, timeout: int, ends: int | None) -> None:
        await anyio.sleep(begin / 10)
        scope = anyio.CancelScope()
        scopes[n] = scope
        deadline = anyio.current_time() + timeout / 10
        deadlines.add(n, deadline)
        try:
            with scope:
                await anyio.sleep(math.inf if ends is None else ends / 10)
        finally:
            scopes.pop(n, None)
            deadlines.drop(n)
        seen[n] = (scope.cancelled_caught, anyio.current_time(), deadline)

    async def main() -> None:
        # Simulated seconds: a watcher that misses a deadline fails here, never hangs.
        with anyio.fail_after(1000):
            await run_all()

    async def run_all() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(deadlines.watch)
            async with anyio.create_task_group() as requests:
                for n, (begin, timeout, ends) in enumerate(exchanges):
                    requests.start_soon(exchange, n, begin, timeout, ends)
            tg.cancel_scope.cancel()

    anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    for n, (_, timeout, ends) in enumerate(exchanges):
        cancelled, ended, deadline = seen[n]
        assert cancelled == (ends is None or ends > timeout), (n, exchanges[n])
        if cancelled:
            assert ended == pytest.approx(deadline, abs=1e-9)  # at its deadline, not later
        else:
            assert ended < deadline


@pytest.mark.anyio
async def test_a_sooner_deadline_ends_its_request_while_a_later_one_is_answered() -> None:
    """Over real HTTP: a request waits with the default deadline; one begun after it with a
    short one times out at its own (the watcher armed for the later one moves to it), and
    the first is answered once the server answers."""
    hold = anyio.Event()
    async with running(KeepAliveServer(hold=hold)) as server:
        transport = LeanHttpTransport(server.url)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                got: list[str] = []

                async def long_wait() -> None:
                    got.append((await client.get_task("t-long")).task_id)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(long_wait)
                    await anyio.wait_all_tasks_blocked()  # its deadline is watched now
                    with pytest.raises(RequestTimeout):
                        await client.get_task("t-short", timeout=0.3)
                    assert got == []  # the long one still waits
                    hold.set()
                assert got == ["t-long"]
                # Later requests still get their deadlines: a fresh short one times out too.
                hold2 = anyio.Event()
                server.hold = hold2
                with pytest.raises(RequestTimeout):
                    await client.get_task("t-again", timeout=0.3)
                hold2.set()
