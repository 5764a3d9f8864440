"""The lean transport's connection pool (``_Pool`` with ``_acquire``/``_release``) as a state
machine, on both event loops, over real TCP connections to a local listener: callers come at
random steps, hold a connection for a while, give it back kept alive or closed, and some are
cancelled at random moments (waiting in line, or holding one, released as ``_stream`` does).

What must hold: never more than ``size`` connections open, no idle connection while anyone
waits in line (a freed one is handed on), every caller not cancelled is served (no lost
wake-up), and at the end the pool is back to idle connections only, counted right."""

from __future__ import annotations

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client import LeanHttpTransport
from mcp_tasks_client._io._h1_engine import LeanEngine


def lean_of(transport: LeanHttpTransport) -> LeanEngine:
    """The transport's lean engine (its pools)."""
    engine = transport._engine
    assert isinstance(engine, LeanEngine)
    return engine


Caller = tuple[int, int, bool, int | None]  # start step, hold steps, keep, cancel at step


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[int, list[Caller]]:
    size = draw(st.integers(1, 3))
    callers = draw(
        st.lists(
            st.tuples(
                st.integers(0, 8),
                st.integers(0, 4),
                st.booleans(),
                st.none() | st.integers(0, 14),
            ),
            min_size=1,
            max_size=10,
        )
    )
    return size, callers


async def _run(size: int, callers: list[Caller]) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    accepted: list[anyio.abc.SocketStream] = []

    async def hold(stream: anyio.abc.SocketStream) -> None:
        accepted.append(stream)
        await anyio.sleep_forever()

    transport = LeanHttpTransport(f"http://127.0.0.1:{port}/mcp", max_connections=size)
    pool = lean_of(transport).conns
    served: list[int] = []
    cancelled: list[int] = []
    holding = [0]
    scopes = [anyio.CancelScope() for _ in callers]

    def check() -> None:
        assert pool.open <= size
        assert not (pool.idle and pool.waiting), "an idle connection while callers wait"

    async def caller(n: int, hold_steps: int, keep: bool) -> None:
        with scopes[n]:
            try:
                connection = await lean_of(transport)._acquire(pool)
            except anyio.get_cancelled_exc_class():
                cancelled.append(n)
                raise
            served.append(n)
            holding[0] += 1
            check()
            try:
                for _ in range(hold_steps):
                    await anyio.lowlevel.checkpoint()
            finally:
                holding[0] -= 1
                with anyio.CancelScope(shield=True):
                    await lean_of(transport)._release(connection, keep)
                check()
        if scopes[n].cancelled_caught and n not in cancelled:
            cancelled.append(n)  # cancelled while holding: it was served

    with anyio.fail_after(20):
        async with anyio.create_task_group() as server:
            server.start_soon(listener.serve, hold)
            async with anyio.create_task_group() as tg:
                for step in range(16):
                    for n, (start, hold_steps, keep, _) in enumerate(callers):
                        if start == step:
                            tg.start_soon(caller, n, hold_steps, keep)
                    for n, (*_, cancel_at) in enumerate(callers):
                        if cancel_at == step:
                            scopes[n].cancel()
                    await anyio.lowlevel.checkpoint()
                    check()
            check()
            assert not pool.waiting
            assert holding[0] == 0
            assert pool.open == len(pool.idle), "an open connection nobody holds nor keeps"
            # Everyone not cancelled was served (waiting callers cancelled before their turn
            # were not; one cancelled while holding was).
            for n, (*_, cancel_at) in enumerate(callers):
                if cancel_at is None:
                    assert n in served
            await lean_of(transport).aclose()
            server.cancel_scope.cancel()
    for stream in accepted:
        await stream.aclose()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=examples(40), deadline=None)
@given(scenarios())
def test_the_pool_hands_on_what_is_freed_and_ends_clean(
    backend: str, scenario: tuple[int, list[Caller]]
) -> None:
    anyio.run(_run, *scenario, backend=backend)
