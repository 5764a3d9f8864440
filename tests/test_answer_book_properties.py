"""The answered-keys book (``_sansio/answer_book.py``) under any sequence of moves: a held
task's keys are never forgotten, whatever else arrives (issue 21, item 2); what is not held is
bounded by ``capacity``; a held task never records more than ``per_task`` keys."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcp_tasks_client._sansio.answer_book import InputBook, InputState
from mcp_tasks_client.errors import LimitExceeded

TASKS = st.sampled_from([None, "a", "b", "c"])
NAMED = st.sampled_from(["a", "b", "c"])
KEYS = st.integers(0, 30)


class BookMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.book = InputBook(capacity=4, per_task=12)
        self.held: set[str] = set()
        self.kept: dict[str, set[int]] = {}  # every key a held task recorded

    @rule(task_id=TASKS, key=KEYS)
    def arrive_and_answer(self, task_id: str | None, key: int) -> None:
        before = self.book.state(task_id, key)
        full = task_id in self.held and len(self._recorded(task_id)) >= 12
        if full and before is None:
            with pytest.raises(LimitExceeded, match="max_inputs_per_task"):
                self.book.arrived(task_id, key, "elicitation/create")
            return
        fresh = self.book.arrived(task_id, key, "elicitation/create")
        assert fresh == (before is None)
        if fresh:
            self.book.answered(task_id, key)
            if task_id in self.held:
                self.kept[task_id].add(key)

    @rule(task_id=NAMED, keys=st.lists(KEYS, max_size=8))
    def take(self, task_id: str, keys: list[int]) -> None:
        self.held.add(task_id)
        known = {k for k in keys if self.book.state(task_id, k) is not None}
        try:
            taken = self.book.take(task_id, dict.fromkeys(keys, "elicitation/create"))
        except LimitExceeded:
            recorded = len(self.book.pending(task_id)) + self.book.answered_count(task_id)
            assert recorded + len(set(keys) - known) > 12
            self.kept[task_id] = self._recorded(task_id)
            return
        assert set(taken) == set(keys) - known
        for key in taken:
            self.book.answered(task_id, key)
        self.kept[task_id] = self._recorded(task_id)  # held: what came before it stays too

    def _recorded(self, task_id: str | None) -> set[int]:
        return {k for k in range(31) if self.book.state(task_id, k) is InputState.ANSWERED}

    @rule(task_id=NAMED)
    def release(self, task_id: str) -> None:
        self.book.release(task_id)
        self.held.discard(task_id)
        self.kept.pop(task_id, None)

    @rule(task_id=NAMED)
    def forget(self, task_id: str) -> None:
        self.book.forget(task_id)
        self.held.discard(task_id)
        self.kept.pop(task_id, None)

    @invariant()
    def held_keys_are_never_forgotten(self) -> None:
        for task_id, keys in self.kept.items():
            for key in keys:
                assert self.book.state(task_id, key) is InputState.ANSWERED
            assert len(keys) <= 12

    @invariant()
    def what_is_not_held_is_bounded(self) -> None:
        loose = sum(
            self.book.answered_count(task_id)
            for task_id in (None, "a", "b", "c")
            if task_id not in self.held
        )
        assert loose <= 4


TestBook = BookMachine.TestCase
TestBook.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)


def test_a_held_tasks_keys_outlive_any_number_of_others() -> None:
    book = InputBook(capacity=2, per_task=100)
    assert book.take("t", {f"k{i}": "elicitation/create" for i in range(50)}) != []
    for i in range(50):
        book.answered("t", f"k{i}")
    for i in range(1000):  # questions about no task, far past the capacity
        assert book.arrived(None, i, "roots/list")
        book.answered(None, i)
    assert book.answered_count("t") == 50
    assert book.take("t", {f"k{i}": "elicitation/create" for i in range(50)}) == []
    book.release("t")  # its tracking ended: its keys join the bounded memory
    assert len(book) <= 2


def test_a_batch_past_per_task_takes_nothing() -> None:
    book = InputBook(per_task=3)
    with pytest.raises(LimitExceeded) as raised:
        book.take("t", {"a": "m", "b": "m", "c": "m", "d": "m"})
    assert raised.value.limit == "max_inputs_per_task"
    assert book.state("t", "a") is None
