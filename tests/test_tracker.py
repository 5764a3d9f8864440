"""The Tracker alone (``_sansio/tracker.py``): the Poller's hardest rules as plain unit tests.

No Client, no transport, no sleep, no clock: every event carries its time, and each test reads
the actions the tracker returns and the state it keeps. Rule ids are the spec's (2025-11-25:
``C-``/``A-``/``T:``; 2026-07-28 tasks extension: ``E``).
"""

from __future__ import annotations

import datetime as dt
import math

import pytest

from mcp_tasks_client._exceptions import (
    BackedOff,
    IllegalTransition,
    InputNotHandled,
    InputStuck,
    LimitExceeded,
    PollIntervalCapped,
    ServerBusy,
    TaskNotFound,
    TransportError,
    UnknownValue,
)
from mcp_tasks_client._poller.relays import tracker_event
from mcp_tasks_client._sansio.scheduler import BusyPolicy, PollPolicy, UnhandledInputPolicy
from mcp_tasks_client._sansio.task_machine import ViolationPolicy
from mcp_tasks_client._sansio.tracker import (
    Accepted,
    Action,
    AnswerReady,
    CancelAsked,
    End,
    FetchOutcome,
    InputAnswered,
    InputUnhandled,
    KeyState,
    ListenAcknowledged,
    ListenEnded,
    OutcomeFetched,
    Phase,
    Poll,
    Polled,
    PollFailed,
    Pushed,
    QuestionAnswered,
    QuestionAsked,
    QuestionFailed,
    RecordAnswer,
    RecordOutcome,
    Release,
    Relisten,
    SendCancel,
    SendUpdate,
    ServeInput,
    Tick,
    Track,
    Tracker,
    TrackingFailed,
    Warn,
)
from mcp_tasks_client.inputs import InputEvent, InputEventKind
from mcp_tasks_client.models import InputRequest, Task, TaskStatus
from mcp_tasks_client.outcomes import Completed, Expired

EPOCH = dt.datetime(2026, 7, 28, 12, 0, tzinfo=dt.timezone.utc)
POLICY = PollPolicy(jitter=0.0, floor=0.0, initial=1.0, backoff=1.0)
GONE = TaskNotFound(-32602, "no such task")
ASK = InputRequest("elicitation/create", {"message": "name?"})

W, IR = TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED
DONE, FAILED, CANCELLED = TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED


def task(
    status: TaskStatus = W,
    updated: float = 0.0,
    *,
    task_id: str = "t1",
    inputs: dict[str, InputRequest] | None = None,
    interval_ms: float | None = None,
    ttl_ms: float | None = None,
) -> Task:
    return Task(
        task_id,
        status,
        EPOCH,
        EPOCH + dt.timedelta(seconds=updated),
        ttl=ttl_ms,
        poll_interval=interval_ms,
        input_requests=inputs,
    )


def tracked(policy: PollPolicy = POLICY, first: Task | None = None, **kw: object) -> Tracker:
    tracker = Tracker(policy, **kw)  # type: ignore[arg-type]
    do(tracker, Track(first or task(), now=0.0))
    return tracker


def poll(tracker: Tracker, answer: Task, *, at: float, sent: float | None = None) -> list[Action]:
    """One poll of ``answer.task_id`` sent at ``sent`` (default ``at``), answered at ``at``."""
    ticket = tracker.send_poll(answer.task_id, at if sent is None else sent)
    assert ticket is not None
    return list(do(tracker, Polled(ticket, answer, at)))


def do(tracker: Tracker, event: object) -> list[Action]:
    return list(tracker.handle(event))  # type: ignore[arg-type]


def ends(actions: list[Action]) -> list[End]:
    return [a for a in actions if isinstance(a, End)]


def polled_now(tracker: Tracker, task_id: str = "t1") -> bool:
    return task_id in tracker.scheduler and task_id in tracker.polled()


# -- polling and staleness -----------------------------------------------------------------


def test_first_poll_is_due_one_wait_after_tracking_and_a_tick_asks_for_it() -> None:
    """A-25: with no pollInterval the first wait is ``initial``; C-19: a tick polls what is due."""
    tracker = tracked()
    assert do(tracker, Tick(0.5)) == []
    assert do(tracker, Tick(1.0)) == [Poll("t1")]


def test_the_servers_poll_interval_sets_the_next_poll() -> None:
    """C-19 / E C23: the next poll is pollInterval after the answer."""
    tracker = tracked()
    poll(tracker, task(W, 1, interval_ms=5000), at=1.0)
    assert tracker.scheduler.due("t1") == 6.0


def test_a_stale_answer_overtaken_by_a_push_is_dropped_and_polling_goes_on() -> None:
    """A-08 (overtaken case) and C-22: a poll sent before a newer push was accepted answers
    with an older snapshot; it is dropped unchecked (no V-26 warning, no Accepted), and the
    task is still polled (before the tracker, the Poller stopped polling such a task)."""
    tracker = tracked()
    ticket = tracker.send_poll("t1", 1.0)
    assert ticket is not None
    pushed = do(tracker, Pushed(task(IR, 5, inputs={}), 1.1))
    assert [type(a) for a in pushed] == [Accepted]
    actions = do(tracker, Polled(ticket, task(W, 2), 1.2))
    assert not [a for a in actions if isinstance(a, (Accepted, Warn))]
    assert tracker.snapshot("t1") == task(IR, 5, inputs={})
    assert polled_now(tracker)
    assert tracker.scheduler.due("t1") == pytest.approx(2.2)


def test_a_stale_answer_after_a_pushed_terminal_status_is_no_change_after_terminal() -> None:
    """A-08: a terminal push overtakes an in-flight poll; its ``working`` answer is stale, not
    an IllegalTransition, and the task is never polled again."""
    tracker = tracked()
    ticket = tracker.send_poll("t1", 1.0)
    assert ticket is not None
    actions = do(tracker, Pushed(task(DONE, 3), 1.1))
    assert FetchOutcome("t1", task(DONE, 3)) in actions
    assert do(tracker, Polled(ticket, task(W, 2), 1.2)) == []
    assert not polled_now(tracker)
    assert tracker.send_poll("t1", 2.0) is None


def test_change_after_terminal_ends_the_wait_under_raise_and_is_a_warning_under_warn() -> None:
    """T:404-407 / C-35 / V-09 under each ViolationPolicy."""
    for policy, ended in ((POLICY, True), (PollPolicy(on_violation=ViolationPolicy.WARN), False)):
        tracker = Tracker(policy)
        do(tracker, Track(task(DONE), now=0.0, seed=True))  # a seed: polled once
        actions = poll(tracker, task(W, 1), at=1.0)
        if ended:
            (end,) = ends(actions)
            assert isinstance(end.error, IllegalTransition)
        else:
            assert [type(a) for a in actions] == [Warn]
            assert polled_now(tracker)


def test_a_terminal_first_snapshot_fetches_the_outcome_and_is_never_polled() -> None:
    """A task reported terminal is never polled again (issue 20); E A-2: unless a seed."""
    tracker = Tracker(POLICY)
    assert do(tracker, Track(task(DONE), now=0.0)) == [FetchOutcome("t1", task(DONE))]
    assert not polled_now(tracker)


def test_an_outcome_is_remembered_and_answers_a_later_track_with_no_poll() -> None:
    tracker = tracked()
    poll(tracker, task(DONE, 1), at=1.0)
    outcome = Completed(task(DONE, 1), None)  # type: ignore[arg-type]
    actions = do(tracker, OutcomeFetched("t1", outcome))
    assert actions == [RecordOutcome("t1", outcome), End("t1", outcome=outcome)]
    assert do(tracker, Track(task(W), now=5.0)) == [End("t1", outcome=outcome)]
    assert not polled_now(tracker)


# -- expiry ----------------------------------------------------------------------------------


def test_a_poll_sent_past_the_ttl_backstop_ends_the_task_expired_and_records_it() -> None:
    """E C26 (ttl backstop): the poll sent at or after ``createdAt + ttl`` ends the task
    Expired, recorded before it ends; one sent before does not."""
    first = task(W, ttl_ms=10_000)
    tracker = Tracker(POLICY)
    do(tracker, Track(first, now=0.0, expires_at=10.0, ttl_ends=10.0))
    assert ends(poll(tracker, task(W, 1, ttl_ms=10_000), at=9.0)) == []
    actions = poll(tracker, task(W, 2, ttl_ms=10_000), at=10.5, sent=10.0)
    assert [type(a) for a in actions][-2:] == [RecordOutcome, End]
    (end,) = ends(actions)
    assert isinstance(end.outcome, Expired)
    assert end.outcome.expired_at == EPOCH + dt.timedelta(seconds=10)
    assert not polled_now(tracker)


def test_task_not_found_after_expiry_is_expired_and_before_it_an_error() -> None:
    """T:459: the server may delete a task once its ttl ran out; before that, TaskNotFound."""
    for sent, expired in ((5.0, False), (10.0, True)):
        tracker = Tracker(POLICY)
        do(tracker, Track(task(W, ttl_ms=10_000), now=0.0, expires_at=10.0))
        ticket = tracker.send_poll("t1", sent)
        assert ticket is not None
        (end,) = ends(list(do(tracker, PollFailed(ticket, GONE, sent + 0.1))))
        assert isinstance(end.outcome, Expired) is expired
        assert isinstance(end.error, TaskNotFound) is not expired


def test_the_ttl_backstop_pulls_the_next_poll_in_to_the_expiry() -> None:
    tracker = Tracker(POLICY)
    do(tracker, Track(task(W, ttl_ms=3_000), now=0.0, expires_at=3.0))
    poll(tracker, task(W, 1, interval_ms=60_000, ttl_ms=3_000), at=1.0)
    assert tracker.scheduler.due("t1") == 3.0


def test_an_interval_past_the_cap_is_pulled_to_the_waits_deadline_with_one_warning() -> None:
    """C-19 kept within reason: a 1e12 ms pollInterval is capped, warned of once a task."""
    tracker = Tracker(POLICY)
    do(tracker, Track(task(W), now=0.0, waits_until=100.0))
    huge = 1e12
    first = poll(tracker, task(W, 1, interval_ms=huge), at=1.0)
    second = poll(tracker, task(W, 2, interval_ms=huge), at=100.0, sent=tracker.scheduler.due("t1"))
    assert [type(a.problem) for a in first + second if isinstance(a, Warn)] == [PollIntervalCapped]
    assert tracker.scheduler.due("t1") == POLICY.max_server_interval + 100.0


# -- busy, unknown status ----------------------------------------------------------------------


def test_a_busy_poll_ends_under_fail_and_backs_off_under_back_off() -> None:
    busy = ServerBusy(503, "busy", retry_after=7.0, method="tasks/get")
    tracker = tracked()
    ticket = tracker.send_poll("t1", 1.0)
    assert ticket is not None
    assert ends(list(do(tracker, PollFailed(ticket, busy, 1.0)))) == [End("t1", error=busy)]
    tracker = tracked(PollPolicy(jitter=0.0, on_busy=BusyPolicy.BACK_OFF))
    ticket = tracker.send_poll("t1", 1.0)
    assert ticket is not None
    (warn,) = do(tracker, PollFailed(ticket, busy, 1.0))
    assert isinstance(warn, Warn)
    assert isinstance(warn.problem, BackedOff)
    due = tracker.scheduler.due("t1")
    assert due is not None
    assert due >= 8.0  # never sooner than Retry-After


def test_an_unknown_status_is_a_warning_under_warn_and_the_end_under_raise() -> None:
    """A-08: a status the protocol does not have."""
    error = UnknownValue("$.result.status", "unknown status", "paused")
    for policy, ended in ((POLICY, True), (PollPolicy(on_violation=ViolationPolicy.WARN), False)):
        tracker = tracked(policy)
        ticket = tracker.send_poll("t1", 1.0)
        assert ticket is not None
        actions = list(do(tracker, PollFailed(ticket, error, 1.0)))
        assert bool(ends(actions)) is ended
        assert polled_now(tracker) is not ended


# -- input (2026-07-28) ------------------------------------------------------------------------


def test_a_key_is_served_once_across_polls_and_acks() -> None:
    """E C30, C31, C33, A-9: a key is served the first time it is shown, never again: not
    while the eventually consistent ack still shows it, not after the server dropped it, not
    when it shows up again later."""
    tracker = tracked()
    first = poll(tracker, task(IR, 1, inputs={"name": ASK}), at=1.0)
    served = [a for a in first if isinstance(a, ServeInput)]
    assert served == [ServeInput("t1", task(IR, 1, inputs={"name": ASK}), (("name", ASK),))]
    assert do(tracker, InputAnswered("t1", "name", sent=True)) == [RecordAnswer("t1", "name")]
    again = poll(tracker, task(IR, 2, inputs={"name": ASK}), at=2.0)  # not acked yet (C33)
    assert not [a for a in again if isinstance(a, ServeInput)]
    poll(tracker, task(W, 3), at=3.0)
    assert tracker.records["t1"].keys == {"name": KeyState.ACKED}
    back = poll(tracker, task(IR, 4, inputs={"name": ASK, "age": ASK}), at=4.0)
    assert [a.keys for a in back if isinstance(a, ServeInput)] == [(("age", ASK),)]
    assert do(tracker, InputAnswered("t1", "name", sent=True)) == []  # answered once


def test_a_stuck_input_ends_the_task_after_the_policys_snapshots_asking_nothing_new() -> None:
    """PollPolicy.stuck_input_polls: every key answered, yet the snapshots keep asking; the
    counter waits while an answer is still being made."""
    tracker = tracked(PollPolicy(jitter=0.0, stuck_input_polls=2))
    ask = {"name": ASK}
    poll(tracker, task(IR, 1, inputs=ask), at=1.0)
    for at in (2.0, 3.0, 4.0):  # being answered: not stuck
        assert ends(poll(tracker, task(IR, at, inputs=ask), at=at)) == []
    do(tracker, InputAnswered("t1", "name", sent=True))
    assert ends(poll(tracker, task(IR, 5, inputs=ask), at=5.0)) == []
    (end,) = ends(poll(tracker, task(IR, 6, inputs=ask), at=6.0))
    assert isinstance(end.error, InputStuck)
    assert end.error.keys == ("name",)


def test_a_working_snapshot_resets_the_stuck_count() -> None:
    tracker = tracked(PollPolicy(jitter=0.0, stuck_input_polls=2))
    poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
    do(tracker, InputAnswered("t1", "a", sent=True))
    poll(tracker, task(IR, 2, inputs={"a": ASK}), at=2.0)
    poll(tracker, task(W, 3), at=3.0)
    assert ends(poll(tracker, task(IR, 4, inputs={"a": ASK}), at=4.0)) == []


def test_too_many_keys_fail_the_task_and_no_handlers_under_fail_is_input_not_handled() -> None:
    tracker = tracked(max_inputs_per_task=2)
    many = dict.fromkeys("abc", ASK)
    (end,) = ends(poll(tracker, task(IR, 1, inputs=many), at=1.0))
    assert isinstance(end.error, LimitExceeded)
    tracker = tracked(handles_inputs=False)
    (end,) = ends(poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0))
    assert isinstance(end.error, InputNotHandled)


def test_input_that_comes_another_way_is_served_with_no_keys() -> None:
    """2025-11-25 (C-21): the snapshot lists no requests; the follower opens tasks/result."""
    tracker = tracked()
    actions = poll(tracker, task(IR, 1), at=1.0)
    assert ServeInput("t1", task(IR, 1)) in actions


# -- 2025-11-25 questions: a server's request by related-task, as Tracker events ----------------


def test_a_question_is_open_from_its_arrival_until_answered_or_failed() -> None:
    """T:431-450, C-25: a server's request naming the task (related-task) is the task's open
    question until the router answered it, with a result or an error; none asks any action."""
    tracker = tracked()
    poll(tracker, task(IR, 1), at=1.0)
    assert do(tracker, QuestionAsked("t1", 7, "elicitation/create")) == []
    assert do(tracker, QuestionAsked("t1", "s-1", "sampling/createMessage")) == []
    assert tracker.open_questions("t1") == {
        "7": "elicitation/create",
        "s-1": "sampling/createMessage",
    }
    assert do(tracker, QuestionAnswered("t1", 7)) == []
    assert tracker.open_questions("t1") == {"s-1": "sampling/createMessage"}
    assert do(tracker, QuestionFailed("t1", "s-1", TransportError("handler failed"))) == []
    assert tracker.open_questions("t1") == {}
    assert do(tracker, QuestionAnswered("t1", 7)) == []  # answered twice: nothing more
    assert do(tracker, QuestionAsked("nobody", 1, "roots/list")) == []  # not followed
    assert tracker.open_questions("nobody") == {}


def test_an_open_question_holds_no_poll() -> None:
    """C-20: the client keeps polling while not blocked on tasks/result, and a 2025-11-25
    answer goes back as the JSON-RPC response, never through the task: a poll cannot race it.
    An open question holds nothing back (unlike a 2026-07-28 round), so a task that ends while
    a handler still thinks is seen ending."""
    tracker = tracked()
    poll(tracker, task(IR, 1), at=1.0)
    do(tracker, QuestionAsked("t1", 7, "elicitation/create"))
    assert do(tracker, Tick(2.0)) == [Poll("t1")]
    assert not tracker.held_back("t1")
    actions = poll(tracker, task(FAILED, 2), at=2.1)
    assert FetchOutcome("t1", task(FAILED, 2)) in actions
    assert tracker.open_questions("t1") == {}  # dropped on terminal


def test_an_unhandled_question_is_closed_and_the_policy_decides() -> None:
    keep = tracked(PollPolicy(jitter=0.0, on_unhandled_input=UnhandledInputPolicy.KEEP_WAITING))
    do(keep, QuestionAsked("t1", 3, "elicitation/create"))
    assert do(keep, InputUnhandled("t1", "elicitation/create", 3)) == []
    assert keep.open_questions("t1") == {}
    assert keep.phase("t1") is Phase.TRACKING
    fail = tracked(PollPolicy(jitter=0.0, on_unhandled_input=UnhandledInputPolicy.FAIL))
    do(fail, QuestionAsked("t1", 3, "elicitation/create"))
    (end,) = ends(do(fail, InputUnhandled("t1", "elicitation/create", 3)))
    assert isinstance(end.error, InputNotHandled)
    assert fail.open_questions("t1") == {}


def test_a_question_after_the_task_ended_or_was_released_is_not_kept() -> None:
    tracker = tracked()
    do(tracker, QuestionAsked("t1", 1, "elicitation/create"))
    do(tracker, Release("t1"))
    assert do(tracker, QuestionAsked("t1", 2, "elicitation/create")) == []
    assert tracker.open_questions("t1") == {}
    ended = tracked()
    do(ended, QuestionAsked("t1", 1, "elicitation/create"))
    do(ended, TrackingFailed("t1", TransportError("connection ended")))
    assert do(ended, QuestionAsked("t1", 2, "elicitation/create")) == []
    assert ended.open_questions("t1") == {}


def test_a_2026_key_is_never_a_question() -> None:
    """E C28: a key of the task's ``inputRequests`` has its own state (KeyState); the router's
    news of it (the same InputEvents) is not a 2025-11-25 question."""
    tracker = tracked()
    poll(tracker, task(IR, 1, inputs={"k": ASK}), at=1.0)
    assert do(tracker, QuestionAsked("t1", "k", "elicitation/create")) == []
    assert tracker.open_questions("t1") == {}
    assert tracker.records["t1"].keys == {"k": KeyState.ASKED}


def test_each_input_event_of_a_task_is_the_trackers_event_or_nothing() -> None:
    """The Poller's relay tells the Tracker what the router's InputEvents say of a task."""
    failed = TransportError("handler failed")

    def told(kind: InputEventKind, task_id: str | None = "t1") -> object:
        return tracker_event(InputEvent(kind, task_id, 7, "elicitation/create", failed))

    assert told(InputEventKind.ARRIVED) == QuestionAsked("t1", 7, "elicitation/create")
    assert told(InputEventKind.ANSWERED) == QuestionAnswered("t1", 7)
    assert told(InputEventKind.QUEUED) == QuestionAnswered("t1", 7, here=False)
    assert told(InputEventKind.REJECTED) == QuestionFailed("t1", 7, failed)
    assert told(InputEventKind.HANDLER_FAILED) == QuestionFailed("t1", 7, failed)
    assert told(InputEventKind.UNHANDLED) == InputUnhandled("t1", "elicitation/create", 7)
    assert told(InputEventKind.DUPLICATE) is None
    assert told(InputEventKind.ACCEPTED_AS_TASK) is None  # its end follows
    assert told(InputEventKind.ARRIVED, None) is None  # names no task


def test_questions_are_bounded_by_max_inputs_per_task() -> None:
    tracker = tracked(max_inputs_per_task=2)
    for n in range(5):
        do(tracker, QuestionAsked("t1", n, "elicitation/create"))
    assert tracker.open_questions("t1") == {"0": "elicitation/create", "1": "elicitation/create"}
    assert tracker.phase("t1") is Phase.TRACKING


# -- input rounds: no tasks/get while a round's answers are in flight (issue 39 item 3) -------


def test_no_poll_while_a_rounds_answers_are_in_flight_then_one_when_the_last_is_in() -> None:
    """E C28-C31: a snapshot's keys are a round; while their handlers run and their
    ``tasks/update`` is in flight, the poll that falls due is held back (a poll then could
    only show the same keys again, C33); the last answer in (sent or not) lets it go at once."""
    tracker = tracked()
    ask = {"a": ASK, "b": ASK}
    poll(tracker, task(IR, 1, inputs=ask), at=1.0)
    assert tracker.scheduler.due("t1") == 2.0
    assert do(tracker, Tick(2.0)) == []  # due, held back
    assert tracker.held_back("t1")
    assert do(tracker, Tick(9.0)) == []  # held however long the round takes
    assert do(tracker, InputAnswered("t1", "a", sent=True)) == [RecordAnswer("t1", "a")]
    assert do(tracker, InputAnswered("t1", "b", sent=False)) == [Poll("t1")]
    assert not tracker.held_back("t1")
    ticket = tracker.send_poll("t1", 9.5)
    assert ticket is not None
    next_round = do(tracker, Polled(ticket, task(IR, 2, inputs={"c": ASK}), 9.6))
    assert [a.keys for a in next_round if isinstance(a, ServeInput)] == [(("c", ASK),)]


def test_a_round_answered_before_the_poll_is_due_changes_nothing() -> None:
    tracker = tracked()
    poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
    assert do(tracker, InputAnswered("t1", "a", sent=True)) == [RecordAnswer("t1", "a")]
    assert not tracker.held_back("t1")
    assert do(tracker, Tick(2.0)) == [Poll("t1")]


def test_the_policy_may_ask_for_polls_while_answering() -> None:
    """``PollPolicy.poll_while_answering``: the caller's explicit choice (a person answering,
    the status wanted meanwhile)."""
    eager = PollPolicy(jitter=0.0, floor=0.0, initial=1.0, backoff=1.0, poll_while_answering=True)
    tracker = tracked(eager)
    poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
    assert do(tracker, Tick(2.0)) == [Poll("t1")]
    assert not tracker.held_back("t1")
    assert do(tracker, InputAnswered("t1", "a", sent=True)) == [RecordAnswer("t1", "a")]


def test_a_held_poll_still_goes_out_at_the_ttl_backstops_expiry() -> None:
    """E C26 / T:459: a round never keeps a task from expiring under the backstop."""
    tracker = Tracker(POLICY)
    do(tracker, Track(task(ttl_ms=5_000), now=0.0, expires_at=5.0, ttl_ends=5.0))
    poll(tracker, task(IR, 1, inputs={"a": ASK}, ttl_ms=5_000), at=1.0)
    assert do(tracker, Tick(2.0)) == []
    assert tracker.scheduler.next_due() == 5.0  # the loop wakes at the expiry
    assert do(tracker, Tick(5.0)) == [Poll("t1")]
    ticket = tracker.send_poll("t1", 5.0)
    assert ticket is not None
    assert ticket.expired
    asking = task(IR, 2, inputs={"a": ASK}, ttl_ms=5_000)
    (end,) = ends(do(tracker, Polled(ticket, asking, 5.1)))
    assert isinstance(end.outcome, Expired)
    assert do(tracker, InputAnswered("t1", "a", sent=True)) == []  # ended: nothing more


def test_a_round_cut_short_by_a_terminal_push_or_a_release_leaves_no_poll_held() -> None:
    for last in (Pushed(task(DONE, 5), 3.0), Release("t1")):
        tracker = tracked()
        poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
        do(tracker, Tick(2.0))
        assert tracker.held_back("t1")
        do(tracker, last)
        assert not tracker.held_back("t1")
        assert do(tracker, InputAnswered("t1", "a", sent=True)) == []


def test_an_answer_is_sent_as_the_trackers_send_update_once_and_only_while_polled() -> None:
    """E C28-C31 (issue 33: ``tasks/update`` is a Tracker action): a key's answer goes out
    once, as ``SendUpdate``; the round goes on until its update is answered; an answer made
    after the task was seen terminal, or released, is dropped (nobody waits for it)."""
    answer = {"action": "accept", "content": {}}
    tracker = tracked()
    poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
    assert do(tracker, AnswerReady("t1", "a", answer)) == [SendUpdate("t1", "a", answer)]
    assert tracker.records["t1"].keys == {"a": KeyState.SENDING}
    assert do(tracker, AnswerReady("t1", "a", answer)) == []  # never sent twice
    assert do(tracker, Tick(2.0)) == []  # its update in flight: no poll
    assert do(tracker, AnswerReady("t1", "b", answer)) == []  # a key never served
    assert do(tracker, InputAnswered("t1", "a", sent=True)) == [RecordAnswer("t1", "a"), Poll("t1")]
    for last in (Pushed(task(DONE, 5), 3.0), Release("t1")):
        tracker = tracked()
        poll(tracker, task(IR, 1, inputs={"a": ASK}), at=1.0)
        do(tracker, last)
        assert do(tracker, AnswerReady("t1", "a", answer)) == []


def test_an_input_request_nobody_handled_ends_the_task_under_fail_in_either_generation() -> None:
    """C-49/C-52 (2025-11-25: a server request by related-task, refused with -32601) and E C30
    (2026-07-28: a key no handler took): ``UnhandledInputPolicy.FAIL`` ends the wait with
    InputNotHandled, once; ``KEEP_WAITING`` leaves the server to decide."""
    tracker = tracked()
    (end,) = ends(do(tracker, InputUnhandled("t1", "elicitation/create", 7)))
    assert isinstance(end.error, InputNotHandled)
    assert end.error.request_id == 7
    assert not polled_now(tracker)
    assert do(tracker, InputUnhandled("t1", "elicitation/create", 8)) == []  # ended once
    keep = tracked(PollPolicy(jitter=0.0, on_unhandled_input=UnhandledInputPolicy.KEEP_WAITING))
    assert do(keep, InputUnhandled("t1", "sampling/createMessage", "k")) == []
    assert polled_now(keep)
    assert do(Tracker(POLICY), InputUnhandled("nobody", "roots/list", 1)) == []


# -- listen (2026-07-28) -----------------------------------------------------------------------

LISTEN = PollPolicy(jitter=0.0, floor=0.0, initial=1.0, backoff=1.0, listen=True)


def test_the_listen_follows_the_polled_set() -> None:
    """E C39: one listen for the tasks being polled, reopened when that set changes."""
    tracker = Tracker(LISTEN)
    assert Relisten(frozenset({"a"})) in do(tracker, Track(task(task_id="a"), now=0.0))
    assert Relisten(frozenset({"a", "b"})) in do(tracker, Track(task(task_id="b"), now=0.0))
    assert do(tracker, Release("a")) == [Relisten(frozenset({"b"}))]
    assert do(tracker, Release("b")) == [Relisten(frozenset())]


def test_acknowledged_ids_are_polled_slowly_and_others_as_usual() -> None:
    """E C40 / A-25: acknowledged ids get the safety factor; unacknowledged ones do not."""
    tracker = Tracker(LISTEN)
    do(tracker, Track(task(task_id="a"), now=0.0))
    do(tracker, Track(task(task_id="b"), now=0.0))
    do(tracker, ListenAcknowledged(frozenset({"a", "zzz"})))
    assert tracker.acknowledged == {"a"}
    poll(tracker, task(W, 1, task_id="a"), at=1.0)
    poll(tracker, task(W, 1, task_id="b"), at=1.0)
    assert tracker.scheduler.due("a") == 1.0 + LISTEN.listen_safety_factor
    assert tracker.scheduler.due("b") == 2.0


def test_listen_refused_falls_back_to_polling_at_once_and_is_not_reopened() -> None:
    """E C40: a listen that is refused (or ends) leaves every id polled as usual: the slow
    safety poll of an acknowledged id is pulled in; no reopen until the polled set changes."""
    tracker = Tracker(LISTEN)
    do(tracker, Track(task(task_id="a"), now=0.0))
    do(tracker, ListenAcknowledged(frozenset({"a"})))
    poll(tracker, task(W, 1, task_id="a"), at=1.0)
    assert tracker.scheduler.due("a") == 11.0
    refused = TransportError("listen refused")
    actions = do(tracker, ListenEnded(frozenset({"a"}), 2.0, refused))
    assert actions == [Warn(refused)]
    assert tracker.acknowledged == frozenset()
    assert tracker.scheduler.due("a") == 3.0
    assert not [
        a for a in poll(tracker, task(W, 2, task_id="a"), at=3.0) if isinstance(a, Relisten)
    ]
    assert Relisten(frozenset({"a", "b"})) in do(tracker, Track(task(task_id="b"), now=4.0))


def test_an_older_listens_end_changes_nothing() -> None:
    tracker = Tracker(LISTEN)
    do(tracker, Track(task(task_id="a"), now=0.0))
    do(tracker, Track(task(task_id="b"), now=0.0))
    do(tracker, ListenAcknowledged(frozenset({"a", "b"})))
    assert do(tracker, ListenEnded(frozenset({"a"}), 1.0, TransportError("x"))) == []
    assert tracker.acknowledged == {"a", "b"}


# -- cancel ----------------------------------------------------------------------------------


def test_cancel_is_sent_once_a_task() -> None:
    tracker = tracked()
    assert do(tracker, CancelAsked("t1")) == [SendCancel("t1")]
    assert do(tracker, CancelAsked("t1")) == []


def test_cancel_racing_the_outcome_loses_to_a_terminal_status() -> None:
    """C-27 / E C36: once the task is reported terminal (its outcome being fetched, or
    remembered), no tasks/cancel goes out for it."""
    tracker = tracked()
    poll(tracker, task(DONE, 1), at=1.0)
    assert tracker.records["t1"].phase is Phase.FINISHING
    assert do(tracker, CancelAsked("t1")) == []
    outcome = Completed(task(DONE, 1), None)  # type: ignore[arg-type]
    do(tracker, OutcomeFetched("t1", outcome))
    assert do(tracker, CancelAsked("t1")) == []


def test_no_cancel_for_a_task_seen_terminal_that_ended_before_its_outcome_came() -> None:
    """C-27, E C36; found by the state machine: a task seen completed, then ended by an error
    before its outcome was fetched (an input nobody handled, the connection ended), had no
    outcome remembered, and a later abandoned wait sent it a ``tasks/cancel``."""
    for failure in (
        TrackingFailed("t1", TransportError("gone")),
        InputUnhandled("t1", "elicitation/create", 1),
    ):
        tracker = tracked()
        poll(tracker, task(DONE, 1), at=1.0)
        assert ends(do(tracker, failure))
        assert tracker.terminal_snapshot("t1") == task(DONE, 1)
        assert do(tracker, CancelAsked("t1")) == []


def test_cancel_then_the_outcome_still_ends_the_task_once() -> None:
    tracker = tracked()
    assert do(tracker, CancelAsked("t1")) == [SendCancel("t1")]
    poll(tracker, task(CANCELLED, 1), at=1.0)
    outcome = Completed(task(CANCELLED, 1), None)  # type: ignore[arg-type]
    assert len(ends(list(do(tracker, OutcomeFetched("t1", outcome))))) == 1
    assert do(tracker, TrackingFailed("t1", TransportError("late"))) == []


# -- ending and releasing ------------------------------------------------------------------------


def test_a_released_task_is_polled_no_more_and_its_answer_in_flight_is_dropped() -> None:
    tracker = tracked()
    ticket = tracker.send_poll("t1", 1.0)
    assert ticket is not None
    do(tracker, Release("t1"))
    assert do(tracker, Polled(ticket, task(DONE, 1), 1.1)) == []
    assert not polled_now(tracker)
    assert tracker.records == {}


def test_a_finishing_task_is_not_released_its_outcome_is_still_fetched() -> None:
    tracker = tracked()
    poll(tracker, task(DONE, 1), at=1.0)
    assert do(tracker, Release("t1")) == []
    outcome = Completed(task(DONE, 1), None)  # type: ignore[arg-type]
    assert ends(list(do(tracker, OutcomeFetched("t1", outcome))))
    assert tracker.outcome("t1") == outcome


def test_tracking_twice_joins_the_record_and_keeps_the_latest_deadline() -> None:
    tracker = Tracker(POLICY)
    do(tracker, Track(task(), now=0.0, waits_until=5.0))
    assert do(tracker, Track(task(), now=1.0, waits_until=math.inf)) == []
    assert tracker.records["t1"].waits_until == math.inf
