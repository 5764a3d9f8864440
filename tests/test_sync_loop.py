"""The loop thread under ``mcp_tasks_client.sync``, without a server: answers and errors cross
over from the loop to the caller's thread, iterators hand over each item and close their async
iterator when left, a SIGINT in a blocking call cancels the call's work in the loop (which
unwinds) and raises KeyboardInterrupt, and closing stops the loop and joins its thread. A
stateful property drives random sequences of these against a model.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterator

import anyio
import anyio.lowlevel
import pytest
from budget import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.sync import Backend, _Loop

BACKENDS: list[Backend] = ["trio", "asyncio"]


def loop_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("mcp-tasks-")]


class Boom(Exception):
    pass


async def numbers(n: int, fail_at: int | None, closed: list[bool]) -> AsyncIterator[int]:
    """0..n-1 (raising Boom at ``fail_at``); records in ``closed`` that it was closed."""
    try:
        for i in range(n):
            if i == fail_at:
                raise Boom(i)
            await anyio.lowlevel.checkpoint()
            yield i
    finally:
        closed.append(True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_answers_and_errors_cross_over_and_close_joins_the_thread(backend: Backend) -> None:
    loop = _Loop(backend)
    assert len(loop_threads()) == 1
    assert loop.run(lambda: 41 + 1) == 42  # a plain function, run in the loop's thread
    assert loop.run(lambda: threading.get_ident()) != threading.get_ident()

    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise Boom("in the loop")

    with pytest.raises(Boom, match="in the loop"):
        loop.run(fails)
    closed: list[bool] = []
    assert list(loop.iterate(lambda: numbers(5, None, closed))) == [0, 1, 2, 3, 4]
    assert closed == [True]
    got: list[int] = []
    with pytest.raises(Boom):
        for i in loop.iterate(lambda: numbers(5, 3, closed)):
            got.append(i)
    assert got == [0, 1, 2]  # the items before the error, then the error
    broken = loop.iterate(lambda: numbers(100, None, closed))
    assert next(broken) == 0
    broken.close()  # left early: the async iterator is closed in the loop
    assert closed == [True, True, True]
    assert loop.run(lambda: "still usable") == "still usable"
    loop.close()
    assert loop_threads() == []
    loop.close()  # idempotent
    with pytest.raises(UsageError, match="closed"):
        loop.run(lambda: None)


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="SIGINT reaches main"
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sigint_in_a_blocking_call_cancels_its_work_and_raises_keyboard_interrupt(
    backend: Backend,
) -> None:
    """The SIGINT is a real one, sent to this (the main) thread once the loop's work is
    running and this thread is blocked on it; the work sees its cancellation and unwinds
    before KeyboardInterrupt is raised here."""
    loop = _Loop(backend)
    running = threading.Event()
    unwound: list[str] = []

    async def forever() -> None:
        running.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.05)  # unwinding takes a moment: it is waited for
            unwound.append("cancelled")
            raise

    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        running.wait()  # no timeout: a SIGINT before the work runs would test nothing
        signal.pthread_kill(main, signal.SIGINT)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            loop.run(forever)
        assert unwound == ["cancelled"]
        assert loop.run(lambda: "after") == "after"  # the loop lives on
    finally:
        signal.signal(signal.SIGINT, before)
        loop.close()
    assert loop_threads() == []


class LoopMachine(RuleBasedStateMachine):
    """Random sequences of calls, iterations (whole, broken off, failing) and closes, on both
    backends; the model: what each returns, and that a closed loop refuses and has no
    thread."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: _Loop | None = None
        self.iterations = 0
        self.marks: list[bool] = []
        """One per async iterator whose ``finally`` ran (it was closed, in the loop)."""

    @rule(backend=st.sampled_from(BACKENDS))
    def open(self, backend: Backend) -> None:
        if self.loop is None:
            self.loop = _Loop(backend)

    @rule(value=st.integers())
    def call(self, value: int) -> None:
        if self.loop is None:
            return
        assert self.loop.run(lambda: value) == value

    @rule(n=st.integers(0, 6), stop=st.integers(0, 7), fail=st.none() | st.integers(0, 6))
    def iterate(self, n: int, stop: int, fail: int | None) -> None:
        if self.loop is None:
            return
        got: list[int] = []
        iterator = self.loop.iterate(lambda: numbers(n, fail, self.marks))
        failing = fail is not None and fail < n and fail <= stop
        try:
            for i in iterator:
                if len(got) == stop:
                    break
                got.append(i)
        except Boom:
            assert failing
        else:
            assert not failing
        iterator.close()
        expected = list(range(min(n, stop, fail if fail is not None else n)))
        assert got == expected
        self.iterations += 1

    @rule()
    def close(self) -> None:
        if self.loop is not None:
            self.loop.close()
            with pytest.raises(UsageError):
                self.loop.run(lambda: None)
            self.loop = None

    @invariant()
    def one_thread_per_open_loop(self) -> None:
        assert len(loop_threads()) == (0 if self.loop is None else 1)

    @invariant()
    def every_async_iterator_was_closed_when_its_iterator_was(self) -> None:
        # run out, failed or broken off: its finally ran before close() returned here
        assert len(self.marks) == self.iterations

    def teardown(self) -> None:
        self.close()


TestLoop = LoopMachine.TestCase
TestLoop.settings = settings(max_examples=examples(15), stateful_step_count=12, deadline=None)
