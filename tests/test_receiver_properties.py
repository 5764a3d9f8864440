"""The receiver's bookkeeping (the client running tasks for its servers, C-31..C-45), as a
hypothesis state machine with simulated time: whatever the server asks, in any order, the
book keeps the receiver rules."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from mcp_tasks_client._sansio.receiver_book import (
    NotCancellable,
    ReceiverBook,
    ReceiverFull,
    UnknownTask,
)
from mcp_tasks_client.models import ErrorObject, TaskStatus

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
OWNERS = ["a", "b"]
MAX_TTL = 5_000


class ReceiverMachine(RuleBasedStateMachine):
    ids = Bundle("ids")

    def __init__(self) -> None:
        super().__init__()
        self.book = ReceiverBook(
            default_ttl_ms=2_000, max_ttl_ms=MAX_TTL, poll_interval_ms=100, capacity=6
        )
        self.now = 0.0
        # the model: id -> (owner, status, expires)
        self.model: dict[str, tuple[str, TaskStatus, float]] = {}
        self.order: list[str] = []
        self.finished: set[str] = set()

    def wall(self) -> dt.datetime:
        return T0 + dt.timedelta(seconds=self.now)

    def live(self) -> dict[str, tuple[str, TaskStatus, float]]:
        return {k: v for k, v in self.model.items() if v[2] > self.now}

    @rule(target=ids, owner=st.sampled_from(OWNERS), ttl=st.none() | st.integers(1, 20_000))
    def create(self, owner: str, ttl: int | None) -> str:
        if len(self.live()) >= 6:
            with pytest.raises(ReceiverFull):
                self.book.create(owner, "elicitation/create", ttl, now=self.now, wall=self.wall())
            return "none"
        task = self.book.create(owner, "elicitation/create", ttl, now=self.now, wall=self.wall())
        assert task.status is TaskStatus.WORKING  # C-35: working first
        assert task.task_id not in self.model  # C-34: unique
        assert len(task.task_id) >= 16  # unguessable: 128 random bits, url-safe
        expected = min(ttl if ttl is not None else 2_000, MAX_TTL)
        assert task.ttl == expected  # requested, else default; capped (C-37)
        self.model[task.task_id] = (owner, TaskStatus.WORKING, self.now + expected / 1000)
        self.order.append(task.task_id)
        return task.task_id

    @rule(seconds=st.floats(0, 3))
    def wait(self, seconds: float) -> None:
        self.now += seconds

    @rule(task_id=ids, status=st.sampled_from([TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED]))
    def move(self, task_id: str, status: TaskStatus) -> None:
        moved = self.book.move(task_id, status, None, self.wall())
        entry = self.live().get(task_id)
        if entry is None or entry[1].is_terminal:  # gone (swept after every step), or final
            assert moved is None
            return
        assert moved is not None
        assert moved.status is status
        self.model[task_id] = (entry[0], status, entry[2])

    @rule(task_id=ids, failed=st.booleans())
    def finish(self, task_id: str, failed: bool) -> None:
        error = ErrorObject(-1, "declined") if failed else None
        result = None if failed else {"action": "accept"}
        done = self.book.finish(task_id, wall=self.wall(), result=result, error=error)
        entry = self.live().get(task_id)
        if entry is None or entry[1].is_terminal:
            if entry is not None:
                assert done is None  # terminal never changes
            return
        assert done is not None
        status = TaskStatus.FAILED if failed else TaskStatus.COMPLETED
        assert done.status is status
        self.model[task_id] = (entry[0], status, entry[2])

    @rule(task_id=ids, owner=st.sampled_from(OWNERS))
    def cancel(self, task_id: str, owner: str) -> None:
        entry = self.live().get(task_id)
        if entry is None or entry[0] != owner:
            with pytest.raises(UnknownTask):
                self.book.cancel(owner, task_id, now=self.now, wall=self.wall())
            return
        if entry[1].is_terminal:
            with pytest.raises(NotCancellable):  # C-41: -32602 for a terminal task
                self.book.cancel(owner, task_id, now=self.now, wall=self.wall())
            return
        task = self.book.cancel(owner, task_id, now=self.now, wall=self.wall())
        assert task.status is TaskStatus.CANCELLED
        self.model[task_id] = (owner, TaskStatus.CANCELLED, entry[2])

    @rule(task_id=ids, owner=st.sampled_from(OWNERS))
    def get(self, task_id: str, owner: str) -> None:
        entry = self.live().get(task_id)
        if entry is None or entry[0] != owner:  # expired, or another connection's (C-45)
            with pytest.raises(UnknownTask):
                self.book.get(owner, task_id, now=self.now)
            return
        task = self.book.get(owner, task_id, now=self.now)
        assert task.status is entry[1]
        assert task.created_at <= task.last_updated_at
        found = self.book.outcome(owner, task_id, now=self.now)
        assert (found is not None) == entry[1].is_terminal

    @rule(owner=st.sampled_from(OWNERS), size=st.integers(1, 4))
    def list_everything(self, owner: str, size: int) -> None:
        """C-40: pages in creation order, every retrievable task exactly once."""
        seen: list[str] = []
        cursor: str | None = None
        while True:
            tasks, cursor = self.book.page(owner, cursor, size, now=self.now)
            assert len(tasks) <= size
            seen += [t.task_id for t in tasks]
            if cursor is None:
                break
        live = self.live()
        expected = [i for i in self.order if i in live and live[i][0] == owner]
        assert seen == expected

    @invariant()
    def nothing_expired_is_held(self) -> None:
        self.book.sweep(self.now)
        assert len(self.book) == len(self.live())


TestReceiverMachine = ReceiverMachine.TestCase


@pytest.mark.parametrize("cursor", ["", "x", "after:", "after:-1", "after:1" + "0" * 30])
def test_a_bad_cursor_is_refused(cursor: str) -> None:
    book = ReceiverBook(default_ttl_ms=None, max_ttl_ms=None, poll_interval_ms=None, capacity=5)
    with pytest.raises(ValueError, match="invalid cursor"):
        book.page("a", cursor, 10, now=0.0)
