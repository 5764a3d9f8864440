"""Hypothesis state machines over event sequences fed to the Tracker alone (no I/O, no sleep).

Virtual time only moves when a rule says so. Each machine holds a model written from the spec
rules, not from the tracker's code, and checks every action list against it:

- polling never stops for a tracked task, and never happens for one reported terminal (C-22,
  issue 20); a stale answer (A-08, overtaken by a push) is never accepted;
- expiry (E C26, T:459): a poll sent at or past the ttl backstop ends the task Expired;
- input (E C30, C31, C33, A-9): each key is served at most once in a task's life, across polls,
  pushes and acks; its answer is sent (``SendUpdate``) at most once, and only while the task
  is polled; a stuck input (``stuck_input_polls``) ends the task only when every served
  key was answered;
- the listen (E C39, C40): its ids are the polled ids; acknowledged ids are a subset; a refused
  listen leaves every id polled at its usual pace;
- cancel racing the outcome (C-27, E C36): at most one ``tasks/cancel`` a task, never after its
  terminal status was seen; every task ends at most once a life;
- input rounds (issue 39 item 3): no poll of a task while a key it served is being answered
  (unless ``PollPolicy.poll_while_answering``, or its ttl backstop ran out); the poll held back
  goes out the moment the round's last answer is in, and only a task answering is held back;
- 2025-11-25 questions (T:431-450, C-20, A-9): a server's request by related-task is open
  only from its arrival to its answer, only while its task is polled and not seen terminal,
  is never one of the task's 2026-07-28 keys, and asks for no action (no poll held or sent).
"""

from __future__ import annotations

import datetime as dt
import math

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_tasks_client._exceptions import (
    InputNotHandled,
    InputStuck,
    ServerBusy,
    TaskNotFound,
    TransportError,
)
from mcp_tasks_client._sansio.scheduler import BusyPolicy, PollPolicy, UnhandledInputPolicy
from mcp_tasks_client._sansio.tracker import (
    Accepted,
    Action,
    AnswerReady,
    CancelAsked,
    End,
    Event,
    FetchOutcome,
    InputAnswered,
    InputUnhandled,
    ListenAcknowledged,
    ListenEnded,
    OutcomeFetched,
    Phase,
    Poll,
    Polled,
    PollFailed,
    PollTicket,
    Pushed,
    QuestionAnswered,
    QuestionAsked,
    QuestionFailed,
    Release,
    Relisten,
    SendCancel,
    SendUpdate,
    ServeInput,
    Tick,
    Track,
    Tracker,
)
from mcp_tasks_client.models import CallToolResult, InputRequest, Task, TaskStatus
from mcp_tasks_client.outcomes import Completed, Expired

EPOCH = dt.datetime(2026, 7, 28, 12, 0, tzinfo=dt.timezone.utc)
IDS = ("a", "b", "c")
KEYS = ("k1", "k2", "k3")
QUESTIONS = (1, 2, "k1")  # request ids of 2025-11-25 questions ("k1": also a key's name)
ASK = InputRequest("elicitation/create", {"message": "?"})
TTL_MS = 50_000.0  # every task here expires 50 s after it was created (virtual time 0)


def snapshot(task_id: str, status: TaskStatus, updated: float, keys: frozenset[str]) -> Task:
    inputs = dict.fromkeys(sorted(keys), ASK) if status is TaskStatus.INPUT_REQUIRED else None
    return Task(
        task_id,
        status,
        EPOCH,
        EPOCH + dt.timedelta(seconds=updated),
        ttl=TTL_MS,
        poll_interval=1000.0,
        input_requests=inputs,
    )


W, IR = TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED
# Mostly live statuses, so that tasks live long enough to be polled, pushed to and asked.
statuses = st.sampled_from([W, W, W, IR, IR, IR, *[s for s in TaskStatus if s.is_terminal]])
key_sets = st.frozensets(st.sampled_from(KEYS))


class TrackerMachine(RuleBasedStateMachine):
    """Many tasks, polls answered in any order, pushes, failures, input, listen, cancel."""

    @initialize(
        listen=st.booleans(),
        stuck=st.sampled_from([None, 1, 2]),
        backstop=st.booleans(),
        busy=st.sampled_from(list(BusyPolicy)),
        eager=st.booleans(),
        unhandled=st.sampled_from(list(UnhandledInputPolicy)),
    )
    def start(
        self,
        listen: bool,
        stuck: int | None,
        backstop: bool,
        busy: BusyPolicy,
        eager: bool,
        unhandled: UnhandledInputPolicy,
    ) -> None:
        self.policy = PollPolicy(
            jitter=0.0,
            listen=listen,
            stuck_input_polls=stuck,
            on_busy=busy,
            poll_while_answering=eager,
            on_unhandled_input=unhandled,
        )
        self.backstop = backstop
        self.tracker = Tracker(self.policy, capacity=100)
        self.now = 0.0
        # the model
        self.served: dict[str, set[str]] = {}  # keys served in the task's current life
        self.answered: dict[str, set[str]] = {}
        self.sent: dict[str, set[str]] = {}  # keys whose answer went out, in the life
        self.terminal_seen: set[str] = set()  # reported terminal (finishing or ended)
        self.ended: set[str] = set()  # ended in the current life
        self.cancels: dict[str, int] = {}
        self.pushed_after: dict[PollTicket, bool] = {}
        self.popped: dict[PollTicket, float] = {}  # polls in flight: the due time they took
        self.in_flight: list[PollTicket] = []
        self.updated = 0.0
        self.answering_before: set[str] = set()  # tasks answering input before an event
        self.asked: dict[str, set[str]] = {}  # questions asked and not answered, in the life

    # -- feeding events --------------------------------------------------------------------

    def feed(self, event: Event) -> list[Action]:
        records = self.tracker.records
        before = {i: r.phase for i, r in records.items()}
        self.answering_before = {i for i, r in records.items() if r.answering()}
        actions = list(self.tracker.handle(event))
        for action in actions:
            self.check(action, before, event)
        return actions

    def check(self, action: Action, before: dict[str, Phase], event: Event) -> None:
        if isinstance(action, Poll):
            assert before.get(action.task_id) is Phase.TRACKING  # only tracked tasks polled
            if isinstance(event, Tick) and action.task_id in self.answering_before:
                expires = self.tracker.records[action.task_id].expires_at
                out_of_time = expires is not None and event.now >= expires
                assert self.policy.poll_while_answering or out_of_time, (
                    "a poll while the round's answers are in flight (issue 39 item 3)"
                )
            else:  # the round's last answer let the poll held back for it go
                assert isinstance(event, (Tick, InputAnswered))
        elif isinstance(action, ServeInput):
            new = {k for k, _ in action.keys}
            served = self.served.setdefault(action.task_id, set())
            assert not (new & served), "a key served twice (E C31)"
            served |= new
        elif isinstance(action, Accepted):
            assert action.task_id not in self.terminal_seen
            if isinstance(event, Polled):
                assert not self.pushed_after.get(event.ticket) or (
                    action.snapshot.last_updated_at >= action.previous.last_updated_at
                ), "an overtaken answer was accepted (A-08)"
            if action.snapshot.status.is_terminal:
                self.terminal_seen.add(action.task_id)
        elif isinstance(action, FetchOutcome):
            self.terminal_seen.add(action.task_id)
        elif isinstance(action, End):
            assert action.task_id not in self.ended, "a task ended twice in one life"
            assert (action.outcome is None) is not (action.error is None)
            self.ended.add(action.task_id)
            if isinstance(action.error, InputStuck):
                assert self.served.get(action.task_id, set()) <= self.answered.get(
                    action.task_id, set()
                ), "stuck while a served key was still being answered"
        elif isinstance(action, SendUpdate):
            assert isinstance(event, AnswerReady)
            assert before.get(action.task_id) is Phase.TRACKING, "an answer sent for no wait"
            assert action.key in self.served.get(action.task_id, set()), "a key never served"
            assert action.key not in self.answered.get(action.task_id, set())
            sent = self.sent.setdefault(action.task_id, set())
            assert action.key not in sent, "an answer sent twice"
            sent.add(action.key)
        elif isinstance(action, SendCancel):
            assert action.task_id not in self.terminal_seen, "cancelled after terminal"
            self.cancels[action.task_id] = self.cancels.get(action.task_id, 0) + 1
            assert self.cancels[action.task_id] == 1, "two cancels for one task"
        elif isinstance(action, Relisten):
            assert self.policy.listen

    # -- rules -----------------------------------------------------------------------------

    @rule(task_id=st.sampled_from(IDS), status=statuses, keys=key_sets, seed=st.booleans())
    def track(self, task_id: str, status: TaskStatus, keys: frozenset[str], seed: bool) -> None:
        if task_id not in self.tracker.records:  # a new life
            self.served.pop(task_id, None)
            self.answered.pop(task_id, None)
            self.sent.pop(task_id, None)
            self.asked.pop(task_id, None)
            self.ended.discard(task_id)
            if self.tracker.outcome(task_id) is None:
                self.terminal_seen.discard(task_id)
        first = snapshot(task_id, status, self.updated, keys)
        expires = TTL_MS / 1000 if self.backstop else None
        actions = self.feed(Track(first, self.now, expires, TTL_MS / 1000, math.inf, seed))
        remembered = self.tracker.outcome(task_id)
        if remembered is not None and task_id not in self.tracker.records:
            assert actions == [End(task_id, outcome=remembered)]  # answered from memory

    @rule(step=st.sampled_from([None, None, 0.0, 0.5, 3.0, 20.0]))
    def tick(self, step: float | None) -> None:
        """Time moves (``None``: to the next poll due, if any) and the due polls go out."""
        due = self.tracker.scheduler.next_due()
        if step is None:
            self.now = max(self.now, due if due is not None else self.now)
        else:
            self.now += step
        for action in self.feed(Tick(self.now)):
            assert isinstance(action, Poll)
            self.send(action)

    def send(self, action: Poll) -> None:
        ticket = self.tracker.send_poll(action.task_id, self.now)
        assert ticket is not None
        self.pushed_after[ticket] = False
        due = self.tracker.scheduler.due(action.task_id)
        assert due is not None
        assert due <= self.now or ticket.task_id in self.answering_before
        self.popped[ticket] = min(due, self.now)  # held back to its expiry: taken now
        self.in_flight.append(ticket)

    def take(self, index: int) -> PollTicket:
        return self.in_flight.pop(index % len(self.in_flight))

    @precondition(lambda self: self.in_flight)
    @rule(index=st.integers(0, 9), status=statuses, keys=key_sets, late=st.booleans())
    def answer(self, index: int, status: TaskStatus, keys: frozenset[str], late: bool) -> None:
        ticket = self.take(index)
        self.updated += 0.0 if late else 1.0
        answered_at = self.updated - (5.0 if late else 0.0)  # late: older than what was seen
        answer = snapshot(ticket.task_id, status, answered_at, keys)
        current = self.current(ticket)
        self.feed(Polled(ticket, answer, self.now))
        if ticket.expired and current and not self.pushed_after[ticket]:
            assert self.phase(ticket.task_id) is not Phase.TRACKING, "expired, still polled"
        self.polling_goes_on(ticket)

    @rule(data=st.data())
    def poll_round(self, data: st.DataObject) -> None:
        """To the next poll due; each due poll sent, a push maybe arriving while it is in
        flight, then its answer."""
        self.tick(None)
        while self.in_flight:
            ticket = self.in_flight[-1]
            if data.draw(st.booleans(), label="push while in flight"):
                self.push(ticket.task_id, data.draw(statuses), data.draw(key_sets))
            self.answer(-1, data.draw(statuses), data.draw(key_sets), data.draw(st.booleans()))

    @precondition(lambda self: self.in_flight)
    @rule(index=st.integers(0, 9), kind=st.sampled_from(["not_found", "busy", "transport"]))
    def fail(self, index: int, kind: str) -> None:
        ticket = self.take(index)
        error = {
            "not_found": TaskNotFound(-32602, "gone"),
            "busy": ServerBusy(429, "slow down", retry_after=2.0, method="tasks/get"),
            "transport": TransportError("broken"),
        }[kind]
        current = self.current(ticket)
        actions = self.feed(PollFailed(ticket, error, self.now))
        if current and kind == "not_found":
            (end,) = [a for a in actions if isinstance(a, End)]
            assert isinstance(end.outcome, Expired) is ticket.expired  # T:459
        self.polling_goes_on(ticket)

    @rule(task_id=st.sampled_from(IDS), status=statuses, keys=key_sets)
    def push(self, task_id: str, status: TaskStatus, keys: frozenset[str]) -> None:
        self.updated += 1.0
        actions = self.feed(Pushed(snapshot(task_id, status, self.updated, keys), self.now))
        if any(isinstance(a, Accepted) for a in actions):
            for ticket in self.pushed_after:
                if ticket.task_id == task_id:
                    self.pushed_after[ticket] = True

    @rule(task_id=st.sampled_from(IDS))
    def fetch_outcome(self, task_id: str) -> None:
        record = self.tracker.records.get(task_id)
        if record is None or record.phase is not Phase.FINISHING:
            return
        outcome = Completed(record.machine.current, CallToolResult(()))
        self.feed(OutcomeFetched(task_id, outcome))
        assert self.tracker.outcome(task_id) == outcome

    @rule(task_id=st.sampled_from(IDS), key=st.sampled_from(KEYS), sent=st.booleans())
    def answer_input(self, task_id: str, key: str, sent: bool) -> None:
        if key in self.served.get(task_id, set()) and task_id in self.tracker.records:
            self.answered.setdefault(task_id, set()).add(key)
        held = self.tracker.held_back(task_id)
        polls = [a for a in self.feed(InputAnswered(task_id, key, sent)) if isinstance(a, Poll)]
        record = self.tracker.records.get(task_id)
        if held and record is not None and not record.answering():
            assert polls == [Poll(task_id)], "the round is over: its poll held back goes now"
        else:
            assert polls == []
        for poll in polls:
            self.send(poll)

    @rule(task_id=st.sampled_from(IDS), key=st.sampled_from(KEYS))
    def answer_made(self, task_id: str, key: str) -> None:
        """A handler made its answer: the Tracker says whether it goes out."""
        self.feed(AnswerReady(task_id, key, {"action": "accept"}))

    @rule(task_id=st.sampled_from(IDS), key=st.sampled_from(KEYS))
    def nobody_handled(self, task_id: str, key: str) -> None:
        """A request no handler took (either generation): the policy decides, once."""
        followed = task_id in self.tracker.records
        self.asked.get(task_id, set()).discard(key)
        actions = self.feed(InputUnhandled(task_id, "elicitation/create", key))
        ended = [a for a in actions if isinstance(a, End)]
        if followed and self.policy.on_unhandled_input is UnhandledInputPolicy.FAIL:
            assert len(ended) == 1
            assert isinstance(ended[0].error, InputNotHandled)
        else:
            assert actions == []

    @rule(task_id=st.sampled_from(IDS), request_id=st.sampled_from(QUESTIONS))
    def question(self, task_id: str, request_id: int | str) -> None:
        """A server's request naming the task arrived (2025-11-25): known, nothing to do."""
        if task_id in self.tracker.records:
            self.asked.setdefault(task_id, set()).add(str(request_id))
        assert self.feed(QuestionAsked(task_id, request_id, "elicitation/create")) == []

    @rule(task_id=st.sampled_from(IDS), request_id=st.sampled_from(QUESTIONS), ok=st.booleans())
    def question_answered(self, task_id: str, request_id: int | str, ok: bool) -> None:
        """The router answered it (a result, or an error): closed, and nothing to do."""
        self.asked.get(task_id, set()).discard(str(request_id))
        event = (
            QuestionAnswered(task_id, request_id)
            if ok
            else QuestionFailed(task_id, request_id, TransportError("handler failed"))
        )
        assert self.feed(event) == []
        assert str(request_id) not in self.tracker.open_questions(task_id)

    @rule(task_id=st.sampled_from(IDS))
    def release(self, task_id: str) -> None:
        self.feed(Release(task_id))

    @rule(task_id=st.sampled_from(IDS))
    def cancel(self, task_id: str) -> None:
        self.feed(CancelAsked(task_id))

    @precondition(lambda self: self.policy.listen)
    @rule(drop=st.frozensets(st.sampled_from(IDS)))
    def acknowledge(self, drop: frozenset[str]) -> None:
        self.feed(ListenAcknowledged(self.tracker.listening - drop))

    @precondition(lambda self: self.policy.listen)
    @rule(refused=st.booleans())
    def listen_ends(self, refused: bool) -> None:
        pushed = self.tracker.acknowledged
        error = TransportError("refused") if refused else None
        self.feed(ListenEnded(self.tracker.listening, self.now, error))
        assert self.tracker.acknowledged == frozenset()
        for task_id in pushed:  # fallback: polled at its usual pace again (E C40)
            due = self.tracker.scheduler.due(task_id)
            assert due is None or due <= self.now + 1.0

    # -- helpers and invariants --------------------------------------------------------------

    def phase(self, task_id: str) -> Phase | None:
        record = self.tracker.records.get(task_id)
        return None if record is None else record.phase

    def polling_goes_on(self, ticket: PollTicket) -> None:
        """C-22: once a poll's answer (stale or not) or failure is handled, a task still
        tracked has its next poll scheduled after the one that was taken (never left with
        none: a stale answer once stopped a task's polling for good)."""
        popped = self.popped.pop(ticket)
        if self.current(ticket):
            due = self.tracker.scheduler.due(ticket.task_id)
            assert due is not None, "a tracked task with no next poll"
            assert due > popped, "a tracked task with no next poll"

    def current(self, ticket: PollTicket) -> bool:
        """Whether ``ticket`` is of the task's record being polled now."""
        record = self.tracker.records.get(ticket.task_id)
        return record is not None and record.phase is Phase.TRACKING and record.life == ticket.life

    @invariant()
    def tracked_tasks_are_polled_and_no_others(self) -> None:
        """C-22: a tracked task always has a poll due or in flight; issue 20: a task reported
        terminal (finishing) or ended is never polled."""
        tracker = self.tracker
        for task_id in IDS:
            tracking = self.phase(task_id) is Phase.TRACKING
            assert (task_id in tracker.scheduler) is tracking
            assert (task_id in tracker.polled()) is tracking
            if task_id in self.terminal_seen and self.phase(task_id) is not None:
                assert not tracking

    @invariant()
    def only_a_task_answering_is_held_back(self) -> None:
        """Issue 39 item 3: a held poll waits for a round being answered, never for nothing
        (a task held back with nothing being answered would never be polled again)."""
        for task_id in IDS:
            record = self.tracker.records.get(task_id)
            if self.tracker.held_back(task_id):
                assert not self.policy.poll_while_answering
                assert record is not None
                assert record.phase is Phase.TRACKING
                assert record.answering()

    @invariant()
    def questions_are_open_only_while_asked_and_polled(self) -> None:
        """T:431-450, A-9: a task's open questions were asked in its life and not answered
        since; a task not polled (finishing, ended, released) or seen terminal has none; a
        2026-07-28 key of the task is never one."""
        for task_id in IDS:
            open_now = set(self.tracker.open_questions(task_id))
            assert open_now <= self.asked.get(task_id, set())
            if open_now:
                assert self.phase(task_id) is Phase.TRACKING
                assert task_id not in self.terminal_seen
                keys = self.tracker.records[task_id].keys or {}
                assert not (open_now & set(keys))

    @invariant()
    def the_listen_covers_the_polled_tasks(self) -> None:
        """E C39-C40: one listen for exactly the polled ids; acknowledged ids among them."""
        tracker = self.tracker
        if self.policy.listen:
            assert tracker.listening == tracker.polled()
        assert tracker.acknowledged <= tracker.listening


TestTrackerMachine = TrackerMachine.TestCase
TestTrackerMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
