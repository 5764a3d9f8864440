"""The progress bookkeeping, sans-I/O, against simple models (C-46, V-24, E C43):

- the token map (``ProgressBook``) as a hypothesis state machine: whatever the caller opens,
  binds and ends and whatever progress the server sends, in any order, the book agrees with a
  model written the plain way, never holds more than its capacity, and refuses a token in use;
- the status-message bookkeeping (``next_status_message``) over snapshot sequences in
  simulated time: a message's time and status are those of the snapshot that first showed it;
- the watch queue's folding: at most one unread snapshot and one unread progress event, the
  newest of each, the input events in order, never more than the backlog.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import anyio
import attrs
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client import InputEvent, InputEventKind, StatusMessage, TaskProgress, ToolCall
from mcp_tasks_client._poller.parking import WatchQueue as _WatchQueue
from mcp_tasks_client._sansio.progress import (
    ProgressBook,
    check_progress_token,
    next_status_message,
)
from mcp_tasks_client.errors import DecodeError, UsageError
from mcp_tasks_client.models import RELATED_TASK_META, Task, TaskStatus
from mcp_tasks_client.protocol import Violation

T0 = dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)
TOKENS: list[str | int] = ["a", "b", "1", 1, 2, 0]
TASK_IDS = ["t-1", "t-2", "t-3", "t-4"]
CAPACITY = 3


def key(token: object) -> tuple[bool, object]:
    return (isinstance(token, str), token)


@attrs.define
class Entry:
    token: str | int
    request: int | None
    task_call: bool
    task: str | None = None
    ended: bool = False
    highest: float | None = None
    pending: float | None = None
    latest: float | None = None


class BookMachine(RuleBasedStateMachine):
    """The book against a model: an ordered dict of entries, the order they ended in."""

    def __init__(self) -> None:
        super().__init__()
        self.keep = True
        self.book = ProgressBook(CAPACITY, tasks_keep_tokens=self.keep)
        self.entries: dict[tuple[bool, object], Entry] = {}
        self.ended: list[tuple[bool, object]] = []
        self.next_request = 0
        self.now = 0.0
        self.counts = dict.fromkeys(
            ["delivered", "for_requests", "unknown", "late", "out_of_order", "malformed"], 0
        )
        self.evicted = 0
        self.violations = 0

    def wall(self) -> dt.datetime:
        return T0 + dt.timedelta(seconds=self.now)

    def held(self, token: object) -> Entry | None:
        entry = self.entries.get(key(token))
        return entry if entry is not None and not entry.ended else None

    def by_task(self, task_id: str) -> tuple[tuple[bool, object], Entry] | None:
        for k, entry in self.entries.items():
            if entry.task == task_id:
                return k, entry
        return None

    def remove(self, k: tuple[bool, object]) -> None:
        self.entries.pop(k, None)
        if k in self.ended:
            self.ended.remove(k)

    def end(self, k: tuple[bool, object]) -> None:
        entry = self.entries[k]
        if not entry.ended:
            entry.ended = True
            self.ended.append(k)

    # -- the caller ---------------------------------------------------------------------------

    @rule(token=st.sampled_from(TOKENS), task_call=st.booleans())
    def open(self, token: str | int, task_call: bool) -> None:
        request = self.next_request
        self.next_request += 1
        if self.held(token) is not None:
            with pytest.raises(UsageError, match="C-46"):
                self.book.open(token, request, task_call=task_call)
            return
        evicted_live = self.book.open(token, request, task_call=task_call)
        self.remove(key(token))
        expect_live_evicted = False
        while len(self.entries) >= CAPACITY:
            self.evicted += 1
            if self.ended:
                self.remove(self.ended[0])
            else:
                self.remove(next(iter(self.entries)))
                expect_live_evicted = True
        assert evicted_live == expect_live_evicted
        self.entries[key(token)] = Entry(token, request, task_call)

    def pending(self, task_call: bool) -> list[Entry]:
        return [e for e in self.entries.values() if e.task is None and e.task_call == task_call]

    @precondition(lambda self: self.pending(True))
    @rule(data=st.data(), task_id=st.sampled_from(TASK_IDS))
    def bind(self, data: st.DataObject, task_id: str) -> None:
        entry = data.draw(st.sampled_from(self.pending(True)))
        assert entry.request is not None
        earlier = self.book.bind(entry.request, task_id, now=self.wall())
        other = self.by_task(task_id)
        if other is not None:
            self.remove(other[0])
        entry.request, entry.task = None, task_id
        if entry.pending is not None:
            entry.latest, entry.pending = entry.pending, None
            self.counts["delivered"] += 1
            assert earlier is not None
            assert (earlier.task_id, earlier.progress, earlier.token) == (
                task_id,
                entry.latest,
                entry.token,
            )
        else:
            assert earlier is None or earlier.progress == entry.latest
        if not self.keep:
            self.end(key(entry.token))

    @precondition(lambda self: any(e.task is None for e in self.entries.values()))
    @rule(data=st.data())
    def close_request(self, data: st.DataObject) -> None:
        entry = data.draw(st.sampled_from([e for e in self.entries.values() if e.task is None]))
        assert entry.request is not None
        self.book.close_request(entry.request)
        self.remove(key(entry.token))

    @rule(task_id=st.sampled_from(TASK_IDS))
    def task_ended(self, task_id: str) -> None:
        self.book.task_ended(task_id)
        found = self.by_task(task_id)
        if found is not None:
            self.end(found[0])

    @rule(seconds=st.floats(0, 10))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    # -- the server ---------------------------------------------------------------------------

    @rule(
        data=st.data(),
        progress=st.sampled_from([1, 2, 3]) | st.floats(0, 6),
        related=st.none() | st.sampled_from([*TASK_IDS, "t-unknown"]),
    )
    def progress_for(self, data: st.DataObject, progress: float, related: str | None) -> None:
        """Mostly a token the book holds (so orders and ends are exercised), else any."""
        held = [entry.token for entry in self.entries.values()]
        anyone = st.sampled_from([*TOKENS, "stranger", 99])
        token = data.draw(st.sampled_from(held) | anyone if held else anyone)
        self.progress(token, progress, related)

    def progress(self, token: str | int, progress: float, related: str | None) -> None:
        params: dict[str, Any] = {"progressToken": token, "progress": progress, "total": 6}
        if related is not None:
            params["_meta"] = {RELATED_TASK_META: {"taskId": related}}
        delivered, problems = self.book.receive(params, now=self.wall())
        violations = [p for p in problems if isinstance(p, Violation)]
        assert len(violations) == len(problems)  # well-formed: no DecodeError
        assert all(v.soft for v in violations)
        self.violations = 0
        expected = self.expect(token, progress, related)
        assert len(violations) == self.violations, violations
        if expected is None:
            assert delivered is None
        else:
            assert delivered == TaskProgress(expected, progress, 6, None, self.wall(), token)

    def expect(self, token: str | int, progress: float, related: str | None) -> str | None:
        """What the model delivers (the task id), counting as the book should."""
        entry = self.entries.get(key(token))
        if entry is None:
            self.violations += 1  # unknown, late, or another token than the task's
            if related is None:
                self.counts["unknown"] += 1
                return None
            found = self.by_task(related)
            if (found is not None and found[1].ended) or not self.keep:
                self.counts["late"] += 1
                return None
            self.counts["delivered"] += 1
            if found is not None:
                found[1].latest = progress
            else:
                self.violations -= 1  # a task the book does not know: tied by its id alone
            return related
        if entry.task is None:
            if not entry.task_call:
                self.counts["for_requests"] += 1
                return None
            self.order(entry, progress)
            entry.pending = progress
            return None
        if related is not None and related != entry.task:
            self.violations += 1  # names another task than the token's
        if entry.ended:
            self.counts["late"] += 1
            self.violations += 1
            return None
        self.order(entry, progress)
        self.counts["delivered"] += 1
        entry.latest = progress
        return entry.task

    def order(self, entry: Entry, progress: float) -> None:
        if entry.highest is None or progress > entry.highest:
            entry.highest = progress
        else:
            self.counts["out_of_order"] += 1
            self.violations += 1

    @rule(
        params=st.sampled_from(
            [
                None,
                [],
                {},
                {"progress": 1},
                {"progressToken": True, "progress": 1},
                {"progressToken": 1.5, "progress": 1},
                {"progressToken": {"a": 1}, "progress": 1},
                {"progressToken": "a"},
                {"progressToken": "a", "progress": "1"},
                {"progressToken": "a", "progress": False},
                {"progressToken": "a", "progress": float("inf")},
                {"progressToken": "a", "progress": 1, "total": "6"},
                {"progressToken": "a", "progress": 1, "message": 3},
            ]
        )
    )
    def malformed(self, params: Any) -> None:
        delivered, problems = self.book.receive(params, now=self.wall())
        assert delivered is None
        assert len(problems) == 1
        assert isinstance(problems[0], DecodeError)
        assert problems[0].path.startswith("$.params")
        self.counts["malformed"] += 1

    # -- what must always hold ---------------------------------------------------------------

    @invariant()
    def agrees_with_the_model(self) -> None:
        assert len(self.book) == len(self.entries) <= CAPACITY
        stats = self.book.stats
        assert stats.tokens == len(self.entries)
        assert stats.evicted == self.evicted
        for name, count in self.counts.items():
            assert getattr(stats, name) == count, name
        for token in TOKENS:
            assert (self.book.holder(token) is not None) == (self.held(token) is not None)
        for task_id in TASK_IDS:
            found = self.by_task(task_id)
            latest = self.book.latest(task_id)
            if found is None or found[1].latest is None:
                assert latest is None
            else:
                assert latest is not None
                assert latest.progress == found[1].latest


class StatelessBookMachine(BookMachine):
    """2026-07-28: a token ends with its task call's answer (E C43)."""

    def __init__(self) -> None:
        super().__init__()
        self.keep = False
        self.book = ProgressBook(CAPACITY, tasks_keep_tokens=False)


TestBookMachine = BookMachine.TestCase
TestBookMachine.settings = settings(max_examples=examples(300), stateful_step_count=50)
TestStatelessBookMachine = StatelessBookMachine.TestCase
TestStatelessBookMachine.settings = settings(max_examples=examples(60), stateful_step_count=40)


# -- tokens on calls ------------------------------------------------------------------------


@given(st.text(max_size=20) | st.integers())
@settings(max_examples=examples(100))
def test_a_string_or_integer_token_goes_to_params_meta_as_given(token: str | int) -> None:
    call = ToolCall("render", {"scene": 3}, meta={"trace": "x"}).with_progress_token(token)
    assert call.params()["_meta"] == {"trace": "x", "progressToken": token}
    task_call = ToolCall("render").as_task().with_progress_token(token)
    assert task_call.progress_token == token
    assert task_call.params()["_meta"] == {"progressToken": token}
    assert ToolCall("render").with_progress_token(token).as_task() == task_call


@pytest.mark.parametrize("token", [True, False, 1.0, None, b"x", ["a"], {"a": 1}])
def test_a_token_that_is_not_a_string_or_integer_is_refused(token: Any) -> None:
    with pytest.raises(TypeError, match="C-46"):
        ToolCall("render").with_progress_token(token)
    with pytest.raises(TypeError, match="C-46"):
        check_progress_token(token)


def test_a_string_token_and_an_integer_token_are_different_tokens() -> None:
    book = ProgressBook(4)
    book.open("1", 1, task_call=True)
    book.open(1, 2, task_call=True)  # not the same token: no UsageError
    book.bind(1, "t-str", now=T0)
    book.bind(2, "t-int", now=T0)
    delivered, _ = book.receive({"progressToken": 1.0, "progress": 1}, now=T0)  # JSON's 1.0
    assert delivered is not None
    assert delivered.task_id == "t-int"
    with pytest.raises(UsageError, match="in use by task 't-str'"):
        book.open("1", 3, task_call=False)


# -- status messages ------------------------------------------------------------------------

STATUSES = list(TaskStatus)


def snapshot(status: TaskStatus, message: str | None, updated: float) -> Task:
    return Task(
        "t-1",
        status,
        T0,
        T0 + dt.timedelta(seconds=updated),
        ttl=None,
        status_message=message,
    )


@given(
    st.lists(
        st.tuples(
            st.sampled_from(STATUSES),
            st.none() | st.sampled_from(["working", "step 1", "step 2"]),
            st.floats(0, 5),  # seconds from the previous snapshot, the server's clock
            st.floats(0, 5),  # and the client's
        ),
        min_size=1,
        max_size=30,
    )
)
@settings(max_examples=examples(200))
def test_a_message_keeps_the_time_and_status_of_the_snapshot_that_first_showed_it(
    steps: list[tuple[TaskStatus, str | None, float, float]],
) -> None:
    """Simulated time: each StatusMessage is that of the first snapshot of the run of equal
    messages it belongs to (its lastUpdatedAt, the client's clock then, its status)."""
    shown: StatusMessage | None = None
    server = client = 0.0
    snapshots: list[tuple[Task, float]] = []
    for status, message, server_step, client_step in steps:
        server += server_step
        client += client_step
        task = snapshot(status, message, server)
        snapshots.append((task, client))
        shown = next_status_message(shown, task, now=T0 + dt.timedelta(seconds=client))
        if message is None:
            assert shown is None
            continue
        first = len(snapshots) - 1
        while first > 0 and snapshots[first - 1][0].status_message == message:
            first -= 1
        origin, seen = snapshots[first]
        assert shown == StatusMessage(
            message, origin.status, origin.last_updated_at, T0 + dt.timedelta(seconds=seen)
        )
        assert shown.is_current_for(task) == (origin.status is status)


def test_a_terminal_snapshot_carrying_a_working_message_is_not_current() -> None:
    working = next_status_message(None, snapshot(TaskStatus.WORKING, "step 3/3", 1), now=T0)
    done = snapshot(TaskStatus.COMPLETED, "step 3/3", 2)
    carried = next_status_message(working, done, now=T0 + dt.timedelta(seconds=9))
    assert carried is working
    assert carried is not None
    assert carried.status is TaskStatus.WORKING
    assert not carried.is_current_for(done)
    failed = snapshot(TaskStatus.FAILED, "boom", 3)
    told = next_status_message(carried, failed, now=T0)
    assert told is not None
    assert told.is_current_for(failed)


# -- the watch queue ------------------------------------------------------------------------


def progress_event(n: int) -> TaskProgress:
    return TaskProgress("t-1", n, None, None, T0, "p")


def input_event(n: int) -> InputEvent:
    return InputEvent(InputEventKind.ARRIVED, "t-1", n, "elicitation/create")


ITEMS = st.one_of(
    st.integers(0, 1000).map(lambda n: snapshot(TaskStatus.WORKING, f"m{n}", n)),
    st.integers(0, 1000).map(progress_event),
    st.integers(0, 1000).map(input_event),
)


@given(st.lists(ITEMS, max_size=60), st.integers(1, 8))
@settings(max_examples=examples(200))
def test_a_slow_watcher_holds_the_newest_snapshot_and_progress_and_the_input_events(
    pushed: list[Task | TaskProgress | InputEvent], backlog: int
) -> None:
    async def run() -> list[Task | TaskProgress | InputEvent]:
        queue = _WatchQueue(backlog)
        for item in pushed:
            queue.push(item)
        queue.close()
        read: list[Task | TaskProgress | InputEvent] = []
        while True:
            try:
                read.append(await queue.get())
            except anyio.EndOfStream:
                return read

    read = anyio.run(run)
    assert len(read) <= backlog
    assert sum(isinstance(i, Task) for i in read) <= 1
    assert sum(isinstance(i, TaskProgress) for i in read) <= 1
    events = [i for i in pushed if isinstance(i, InputEvent)]
    read_events = [i for i in read if isinstance(i, InputEvent)]
    assert read_events == events[len(events) - len(read_events) :]  # the newest, in order
    for kind in (Task, TaskProgress):
        of_kind = [i for i in pushed if isinstance(i, kind)]
        if of_kind and len(read) < backlog:  # nothing dropped for room: the newest is there
            assert of_kind[-1] in read
        for item in read:
            if isinstance(item, kind):
                assert item is of_kind[-1]  # only ever the newest of its kind
