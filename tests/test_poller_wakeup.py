"""The Poller's per-task wakeup (``_DoneWakeup``, issue 12 part 3) on both event loops.

A ``wait()`` parks on the task's wakeup straight from its own frame: a bare future on
asyncio, ``wait_task_rescheduled`` on trio. These check what an ``anyio.Event`` gave: every
waiter still parked when it is set wakes, a waiter cancelled first (by its own scope, as a
deadline does) sees the cancellation and is forgotten, a set wakeup stays set, and nothing is
left parked afterwards.
"""

from __future__ import annotations

import anyio
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client._poller.parking import DoneWakeup as _DoneWakeup

pytestmark = pytest.mark.anyio


async def _park(wakeup: _DoneWakeup, woke: list[int], cancelled: list[int], n: int) -> None:
    try:
        parked, token = wakeup.park()
        try:
            await parked
        finally:
            wakeup.unpark(token)
    except anyio.get_cancelled_exc_class():
        cancelled.append(n)
        raise
    woke.append(n)


async def _scenario(cancel_first: list[bool]) -> None:
    """One waiter per flag, each in a scope of its own; the flagged ones are cancelled while
    parked, then the wakeup is set."""
    wakeup = _DoneWakeup()
    woke: list[int] = []
    cancelled: list[int] = []
    scopes = [anyio.CancelScope() for _ in cancel_first]

    async def one(n: int) -> None:
        with scopes[n]:
            await _park(wakeup, woke, cancelled, n)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for n in range(len(cancel_first)):
                tg.start_soon(one, n)
            await anyio.wait_all_tasks_blocked()
            for n, cancel in enumerate(cancel_first):
                if cancel:
                    scopes[n].cancel()
            await anyio.wait_all_tasks_blocked()
            wakeup.set()
            wakeup.set()  # a second set changes nothing
    expected_cancelled = [n for n, cancel in enumerate(cancel_first) if cancel]
    assert sorted(cancelled) == expected_cancelled
    assert sorted(woke) == [n for n, cancel in enumerate(cancel_first) if not cancel]
    assert wakeup.is_set
    assert wakeup._parked is None  # nothing left parked


async def test_one_waiter_wakes() -> None:
    await _scenario([False])


async def test_a_cancelled_waiter_is_forgotten_and_the_others_wake() -> None:
    await _scenario([False, True, False, True])


async def test_every_waiter_cancelled_leaves_nothing_parked() -> None:
    await _scenario([True, True, True])


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_property_cancelled_waiters_see_cancellation_the_rest_wake(
    backend: str, cancel_first: list[bool]
) -> None:
    anyio.run(_scenario, cancel_first, backend=backend)


async def test_a_scope_deadline_cancels_a_parked_waiter() -> None:
    """A deadline on the waiter's scope (what ``wait(deadline=...)`` uses) ends the park."""
    wakeup = _DoneWakeup()
    with anyio.fail_after(10):
        with anyio.move_on_after(0) as scope:
            parked, token = wakeup.park()
            try:
                await parked
            finally:
                wakeup.unpark(token)
    assert scope.cancelled_caught
    assert wakeup._parked is None
    assert not wakeup.is_set
