"""Every per-task decision of a Poller, as one sans-I/O object: events in, actions out.

Job: the :class:`Tracker` decides, for the tasks one Poller follows, when each is polled, what a
poll answer, a push or a failed poll means, when a task finishes, expires or ends, which of its
input keys are served (each once), when the listen is reopened and which ids it covers, and
whether a ``tasks/cancel`` is worth sending. It never sends, sleeps, reads a clock or logs: time
comes in with the events (monotonic seconds, the caller's), and what to do goes out as actions
the Poller's loop carries out, in order. h11's ``Connection`` is the model.

May import: ``models``, ``outcomes``, ``_exceptions``, ``_sansio.scheduler``,
``_sansio.task_machine``. Nothing of I/O, anyio, the drivers or the Client.

Theory of operation.

State (all of it here, one owner each):

- ``records``: one :class:`TaskRecord` per followed task: its :class:`TaskMachine` (the last
  accepted snapshot), its :class:`Phase` (``TRACKING`` -> ``FINISHING`` -> ``ENDED``, or
  ``TRACKING`` -> ``RELEASED`` when nobody holds it any more), its expiry, its busy streak, its
  stuck-input count, its input keys (:class:`KeyState`: ``ASKED`` -> ``SENDING`` ->
  ``ANSWERED`` -> ``ACKED``) and its open questions (2025-11-25 server requests by
  related-task, by request id, asked and not yet answered). A record is the one lifecycle of
  its task: the Poller's waiters' side (``_poller/registry.py``) reads its phase and machine
  here and keeps none of its own;
- the :class:`PollScheduler` (a deadline heap): only a ``TRACKING`` record is ever in it, and
  a ``TRACKING`` record is always in it (a poll due, or in flight awaiting its answer);
- the memory of ended tasks: the newest ``capacity`` records that ended with an outcome or
  after a terminal snapshot, with the outcome (if any), so that tracking a task again answers
  from memory with no poll (a task reported terminal is never polled again), and a task whose
  outcome could not be fetched is finished again from its terminal snapshot, never polled;
- the polls held back: tasks whose poll fell due while their input keys were being answered
  (handlers running, or ``tasks/update`` in flight); each is polled once the round is over;
- the listen: the ids the open ``subscriptions/listen`` covers and those the server
  acknowledged (E C40: polled only as a slow safety net, A-25);
- the cancels sent (the newest ``capacity`` ids): never two for one task.

Events (frozen values; :meth:`Tracker.handle` takes one and returns the actions):

============================  ==============================================================
``Track``                     a wait holds a task (first snapshot, ttl, the wait's deadline)
``Release``                   nobody holds it any more (tracking stops unless it finished)
``Tick``                      the loop woke at ``now``: the polls due
``Polled``                    a ``tasks/get`` answered (with the :class:`PollTicket` it was
                              sent under, from :meth:`Tracker.send_poll`)
``PollFailed``                a ``tasks/get`` failed with a typed error
``Pushed``                    a status notification (news sooner, never instead: C-22)
``OutcomeFetched``            a finishing task's outcome, or the error standing for it
``AnswerReady``               an input key's handler made its answer (to send, or not)
``InputAnswered``             an input key is done: its ``tasks/update`` answered (``sent``),
                              or refused, or there was no answer to send
``InputUnhandled``            no handler took an input request of the task: a server's
                              request (2025-11-25) or a key (2026-07-28)
``QuestionAsked``             a server's request for the task arrived (2025-11-25: by
                              related-task, answered on the wire by the input router)
``QuestionAnswered``          the router answered it (or handed it to the shared journal)
``QuestionFailed``            the router answered it with an error (refused, or the handler
                              failed)
``ListenAcknowledged``        the server agreed to push these ids (E C40)
``ListenEnded``               the listen ended or was refused (``error``): poll as usual again
``CancelAsked``               a wait gave up and ``cancel_on_abandon`` asks for a cancel
``TrackingFailed``            something outside the protocol ended a task (its own task
                              raised, the poller closed, the connection ended)
============================  ==============================================================

Actions (frozen values, carried out by the loop in the order given):

================  ==============================================================================
``Poll``          send ``tasks/get`` (take a ticket first: :meth:`Tracker.send_poll`)
``Accepted``      a snapshot was accepted: record it, publish it to watchers (``news``: its
                  status, message or ``lastUpdatedAt`` changed)
``FetchOutcome``  the task is terminal: fetch its outcome (then ``OutcomeFetched``)
``ServeInput``    the task asks for input: the generation's follower serves ``keys`` (the new
                  ones of this snapshot; empty when the input comes another way, 2025-11-25)
``RecordOutcome`` write the outcome to the journal, before ``End``
``SendUpdate``    send an input key's answer with ``tasks/update`` (then ``InputAnswered``)
``RecordAnswer``  write an answered input key to the journal
``End``           the task's waits end with ``outcome`` or ``error`` (exactly once a task)
``Warn``          keep a warning
``Relisten``      (re)open the one listen for ``task_ids`` (empty: close it)
``SendCancel``    send one ``tasks/cancel``
================  ==============================================================================

Rules, each decided here and nowhere else:

- A stale poll answer (a terminal snapshot, or a newer one, was accepted while the poll was in
  flight: A-08 and its overtaken case) is dropped unchecked, and the task's next poll is still
  scheduled while it is tracked: polling never stops on a stale answer (C-22).
- The next poll follows the server's ``pollInterval`` (C-19), slowed by
  ``listen_safety_factor`` for acknowledged ids, capped at ``max_server_interval`` and pulled in
  to the ttl or the waits' deadline with one ``PollIntervalCapped`` warning a task.
- A poll sent at or past the ttl backstop's expiry ends the task ``Expired`` (a TaskNotFound
  then is the server deleting it, T:459), recorded before it ends.
- An input key's answer is sent (``SendUpdate``) only while its task is polled and only once
  (``ASKED`` -> ``SENDING``): an answer made after the task ended, was released or was seen
  terminal is dropped, never sent (the wait that wanted it is over).
- Input rounds (issue 39 item 3): while any served key of a task is being answered (its handler
  runs, or its ``tasks/update`` is in flight: ``ASKED`` or ``SENDING`` until ``InputAnswered``),
  a poll of that task that falls due is held back, and sent (``Poll``) when the last of them
  is answered, as a client answering a round before polling again would: one ``tasks/get`` a
  round, not one more while the answers travel. ``PollPolicy.poll_while_answering`` asks for
  the polls anyway. A poll due at or past the ttl backstop's expiry is never held (the expiry
  rule needs it).
- A busy poll (429/503) ends the task under ``BusyPolicy.FAIL``; under ``BACK_OFF`` it is
  scheduled again by the scheduler's busy rule with a ``BackedOff`` warning.
- Input (E C30, C31, C33, A-9): a key is served once, the first time a snapshot shows it; a
  snapshot that shows it again (the ack is eventually consistent) or after the server dropped
  it serves nothing; ``stuck_input_polls`` snapshots in a row asking nothing new while nothing
  is being answered end the task with InputStuck; more than ``max_inputs_per_task`` keys end it
  with LimitExceeded; with no input handlers and ``UnhandledInputPolicy.FAIL`` the first key
  ends it with InputNotHandled, and so does, in either generation, an input request no handler
  took (``InputUnhandled``: a 2025-11-25 server request by related-task, or a 2026-07-28 key).
- Questions (2025-11-25): a server's request naming the task (related-task) is open from its
  arrival (``QuestionAsked``) until the router answered it (``QuestionAnswered``), answered it
  with an error (``QuestionFailed``) or found no handler (``InputUnhandled``); the task's end,
  release or terminal snapshot drops them (A-9). A request id that is one of the task's
  ``inputRequests`` keys is that key's (2026-07-28), never a question. An open question holds
  no poll back: in 2025-11-25 the answer goes back as the JSON-RPC response, not through the
  task, so a poll cannot race it, and the client SHOULD keep polling while not blocked on
  ``tasks/result`` (C-20; the question arrives beside that one ``tasks/result``, A-02, C-21):
  a ``tasks/get`` is how the client learns the task ended while a handler (a person) is still
  thinking. Unlike a 2026-07-28 round (issue 39 item 3), nothing is held.
- Cancel racing the outcome: a cancel is sent at most once a task, never for a task already
  reported terminal or ended (its status won the race; C-27, E C36).
- Listen refused or ended: the acknowledged ids fall back to their usual polling at once (their
  slow safety poll is pulled in), and the listen is reopened only when the set of polled tasks
  changes, never in a loop against a server that will not listen.
"""

from __future__ import annotations

import collections
import datetime as dt
import enum
import math
import random
from collections.abc import Mapping, Sequence

import attrs

from .._exceptions import (
    BackedOff,
    IllegalTransition,
    InputNotHandled,
    InputStuck,
    LimitExceeded,
    MCPTasksError,
    PollIntervalCapped,
    ServerBusy,
    TaskNotFound,
    UnknownValue,
)
from ..models import InputRequest, JSONObject, Task, TaskStatus
from ..outcomes import Expired, Outcome
from .scheduler import BusyPolicy, PollPolicy, PollScheduler, UnhandledInputPolicy
from .task_machine import TaskMachine, Violation, ViolationPolicy

__all__ = [
    "Accepted",
    "Action",
    "AnswerReady",
    "CancelAsked",
    "End",
    "Event",
    "FetchOutcome",
    "InputAnswered",
    "InputUnhandled",
    "KeyState",
    "ListenAcknowledged",
    "ListenEnded",
    "OutcomeFetched",
    "Phase",
    "Poll",
    "PollFailed",
    "PollTicket",
    "Polled",
    "Pushed",
    "QuestionAnswered",
    "QuestionAsked",
    "QuestionFailed",
    "RecordAnswer",
    "RecordOutcome",
    "Release",
    "Relisten",
    "SendCancel",
    "SendUpdate",
    "ServeInput",
    "TaskRecord",
    "Tick",
    "Track",
    "Tracker",
    "TrackingFailed",
    "Warn",
    "expiry_instant",
]


# -- events ------------------------------------------------------------------------------


@attrs.frozen
class Track:
    """A wait holds ``first.task_id`` from ``now`` until ``waits_until`` (``inf``: no
    deadline). ``expires_at``: the ttl backstop's monotonic expiry (None: not enforced);
    ``ttl_ends``: ``createdAt + ttl`` on the monotonic clock whatever the backstop says;
    ``seed``: a terminal first snapshot that must still be polled once (E A-2)."""

    first: Task
    now: float
    expires_at: float | None = None
    ttl_ends: float | None = None
    waits_until: float = math.inf
    seed: bool = False


@attrs.frozen
class Release:
    """Nobody waits on ``task_id`` any more."""

    task_id: str


@attrs.frozen
class Tick:
    """The loop is awake at ``now``."""

    now: float


@attrs.frozen
class PollTicket:
    """What a poll was sent under: the task's record (``life``: an answer to a poll of an
    earlier record of the same id, released since, is dropped), the machine's mark (the stale
    rule) and whether the ttl backstop had run out when it went (the expiry rule)."""

    task_id: str
    life: int
    mark: int
    expired: bool


@attrs.frozen
class Polled:
    """The answer to the poll sent under ``ticket``, read at ``now``."""

    ticket: PollTicket
    snapshot: Task
    now: float


@attrs.frozen
class PollFailed:
    """The poll sent under ``ticket`` failed with ``error`` at ``now``."""

    ticket: PollTicket
    error: MCPTasksError
    now: float


@attrs.frozen
class Pushed:
    """A status notification carried ``snapshot`` at ``now``."""

    snapshot: Task
    now: float


@attrs.frozen
class OutcomeFetched:
    """The finishing task's outcome, or the error that stands for it."""

    task_id: str
    ended: Outcome | MCPTasksError


@attrs.frozen
class AnswerReady:
    """The handler of ``key`` made ``answer`` (wire JSON) for ``tasks/update``."""

    task_id: str
    key: str
    answer: JSONObject


@attrs.frozen
class InputAnswered:
    """``key`` is done: ``sent``, its answer went to the server (its ``tasks/update`` was
    answered); not sent: there was none to send, the server refused it, or it was dropped."""

    task_id: str
    key: str
    sent: bool


@attrs.frozen
class InputUnhandled:
    """No handler took the input request ``request_id`` (``method``) of ``task_id``: a server's
    request by related-task (2025-11-25, answered with a JSON-RPC error) or an
    ``inputRequests`` key (2026-07-28, left unanswered)."""

    task_id: str
    method: str
    request_id: object


@attrs.frozen
class QuestionAsked:
    """A server's request ``request_id`` (``method``) naming ``task_id`` by related-task
    arrived (2025-11-25): the task has a question open until it is answered."""

    task_id: str
    request_id: object
    method: str


@attrs.frozen
class QuestionAnswered:
    """The router answered the question ``request_id`` of ``task_id`` (``here``: with its
    handler's result; not here: handed to the shared journal for another worker)."""

    task_id: str
    request_id: object
    here: bool = True


@attrs.frozen
class QuestionFailed:
    """The router answered the question ``request_id`` of ``task_id`` with ``error`` (the
    request refused, or its handler failed)."""

    task_id: str
    request_id: object
    error: MCPTasksError | None = None


@attrs.frozen
class ListenAcknowledged:
    """E C40: the ids the server agreed to push (for the listen of ``Relisten`` last)."""

    task_ids: frozenset[str]


@attrs.frozen
class ListenEnded:
    """The listen opened for ``task_ids`` ended at ``now``; ``error``: refused, or broken."""

    task_ids: frozenset[str]
    now: float
    error: MCPTasksError | None = None


@attrs.frozen
class CancelAsked:
    """A wait gave up on ``task_id`` and asks for one ``tasks/cancel``."""

    task_id: str


@attrs.frozen
class TrackingFailed:
    """Something outside the protocol ended the task: ``error`` ends its waits (once)."""

    task_id: str
    error: MCPTasksError


Event = (
    Track
    | Release
    | Tick
    | Polled
    | PollFailed
    | Pushed
    | OutcomeFetched
    | AnswerReady
    | InputAnswered
    | InputUnhandled
    | QuestionAsked
    | QuestionAnswered
    | QuestionFailed
    | ListenAcknowledged
    | ListenEnded
    | CancelAsked
    | TrackingFailed
)


# -- actions -----------------------------------------------------------------------------


@attrs.frozen
class Poll:
    task_id: str


@attrs.frozen
class Accepted:
    """``snapshot`` replaced ``previous``: record it; ``news``: watchers are told."""

    task_id: str
    previous: Task
    snapshot: Task
    news: bool


@attrs.frozen
class FetchOutcome:
    task_id: str
    snapshot: Task


@attrs.frozen
class ServeInput:
    """``snapshot`` asks for input; ``keys`` are the requests to serve now (each once)."""

    task_id: str
    snapshot: Task
    keys: tuple[tuple[str, InputRequest], ...] = ()


@attrs.frozen
class RecordOutcome:
    task_id: str
    outcome: Outcome


@attrs.frozen
class SendUpdate:
    """Send ``answer`` for ``key`` with ``tasks/update`` (batched with the task's answers
    ready at the same moment); its end comes back as ``InputAnswered``."""

    task_id: str
    key: str
    answer: JSONObject


@attrs.frozen
class RecordAnswer:
    task_id: str
    key: str


@attrs.frozen
class End:
    task_id: str
    outcome: Outcome | None = None
    error: MCPTasksError | None = None


@attrs.frozen
class Warn:
    problem: Violation | MCPTasksError


@attrs.frozen
class Relisten:
    task_ids: frozenset[str]


@attrs.frozen
class SendCancel:
    task_id: str


Action = (
    Poll
    | Accepted
    | FetchOutcome
    | ServeInput
    | RecordOutcome
    | SendUpdate
    | RecordAnswer
    | End
    | Warn
    | Relisten
    | SendCancel
)


# -- state -------------------------------------------------------------------------------


class Phase(enum.Enum):
    """Where a followed task is: polled, having its outcome fetched, ended, or released.
    ``ENDED`` and ``RELEASED`` are final; nothing goes back to ``TRACKING``."""

    TRACKING = "tracking"
    FINISHING = "finishing"
    ENDED = "ended"
    RELEASED = "released"
    """Nobody held it before it ended: dropped, and whatever of it is still in flight (a poll,
    an input handler) finds it so and does nothing."""


class KeyState(enum.Enum):
    """An input key's life: served, its answer sent, answered, then no longer shown by the
    server."""

    ASKED = "asked"
    SENDING = "sending"
    ANSWERED = "answered"
    ACKED = "acked"


@attrs.define(eq=False)
class TaskRecord:
    """One followed task (slotted: a poller may follow 100,000)."""

    machine: TaskMachine
    life: int
    expires_at: float | None
    ttl_ends: float | None
    waits_until: float
    phase: Phase = Phase.TRACKING
    busy_in_row: int = 0
    interval_warned: bool = False
    stuck_polls: int = 0
    keys: dict[str, KeyState] | None = None
    questions: dict[str, str] | None = None  # open 2025-11-25 requests: str(id) -> method

    @property
    def task_id(self) -> str:
        return self.machine.current.task_id

    def answering(self) -> bool:
        """Whether any served key is still being answered (its handler runs, or its answer is
        on its way)."""
        if self.keys is None:
            return False
        states = self.keys.values()
        return KeyState.ASKED in states or KeyState.SENDING in states


def expiry_instant(task: Task) -> dt.datetime | None:
    """``createdAt + ttl``; None for no ttl (null: unlimited; UNSET: unknown, A-06) and for an
    instant past the calendar's end (year 9999): such a task never expires in our time."""
    if not isinstance(task.ttl, (int, float)):
        return None
    try:
        return task.created_at + dt.timedelta(milliseconds=task.ttl)
    except OverflowError:
        return None


def _acked(keys: dict[str, KeyState], requests: Mapping[str, InputRequest]) -> None:
    """The answered keys a snapshot no longer shows: the server took their answers (C33)."""
    for key, state in keys.items():
        if state is KeyState.ANSWERED and key not in requests:
            keys[key] = KeyState.ACKED


def _interval(task: Task) -> float | None:
    return None if task.poll_interval is None else task.poll_interval / 1000.0


_NOTHING: tuple[Action, ...] = ()  # what an event that asks for nothing returns
_FAIL = UnhandledInputPolicy.FAIL


class Tracker:
    """The decisions of one Poller's tasks (see the module docstring)."""

    def __init__(
        self,
        policy: PollPolicy,
        *,
        rng: random.Random | None = None,
        capacity: int = 10_000,
        max_inputs_per_task: int = 10_000,
        handles_inputs: bool = True,
    ) -> None:
        self.policy = policy
        self.scheduler = PollScheduler(policy, rng)
        self.records: dict[str, TaskRecord] = {}
        self._capacity = capacity
        self._max_keys = max_inputs_per_task
        self._handles_inputs = handles_inputs
        # The ended tasks remembered: each one's last record and its outcome (None: ended by
        # an error after a terminal snapshot), the newest ``capacity``.
        self._ended: collections.OrderedDict[str, tuple[TaskRecord, Outcome | None]] = (
            collections.OrderedDict()
        )
        self._cancelled: dict[str, None] = {}
        self._polled: set[str] = set()
        self._held: set[str] = set()  # polls due, held back while input is being answered
        self._asking: dict[str, int] = {}  # keys ASKED (being answered), tasks with some only
        self._lives = 0  # records made: each one's ``life``
        self.listening: frozenset[str] = frozenset()
        """The ids the listen asked for (the last ``Relisten``)."""
        self.acknowledged: frozenset[str] = frozenset()
        """Those the server acknowledged: polled only as a safety net."""

    # -- queries (no change) -------------------------------------------------------------

    def outcome(self, task_id: str) -> Outcome | None:
        """The remembered outcome of a task that ended (None: none remembered)."""
        ended = self._ended.get(task_id)
        return None if ended is None else ended[1]

    def terminal_snapshot(self, task_id: str) -> Task | None:
        """The terminal snapshot of a remembered task whose tracking ended with an error (its
        result could not be fetched or read): a new wait tracks it from there, with no poll."""
        ended = self._ended.get(task_id)
        if ended is None or ended[1] is not None:
            return None
        return ended[0].machine.current

    def phase(self, task_id: str) -> Phase | None:
        """The phase of the task's record being followed (None: none is)."""
        record = self.records.get(task_id)
        return None if record is None else record.phase

    def held_back(self, task_id: str) -> bool:
        """Whether the task's due poll waits for its input round to be answered."""
        return task_id in self._held

    def open_questions(self, task_id: str) -> dict[str, str]:
        """The task's open questions (2025-11-25 server requests asked and not yet answered):
        request id (as text) -> method; empty for a task not polled."""
        record = self.records.get(task_id)
        if record is None or not record.questions:
            return {}
        return dict(record.questions)

    def snapshot(self, task_id: str) -> Task | None:
        record = self.records.get(task_id)
        return None if record is None else record.machine.current

    def candidates(self) -> list[Task]:
        """The polled tasks a request naming no task may belong to (``working`` or
        ``input_required``): what an input handler's ``ctx.candidates`` shows."""
        return [
            record.machine.current
            for record in self.records.values()
            if record.phase is Phase.TRACKING and not record.machine.is_terminal
        ]

    def polled(self) -> frozenset[str]:
        """The ids of the tasks being polled."""
        return frozenset(self._polled)

    def send_poll(self, task_id: str, now: float) -> PollTicket | None:
        """A ``Poll`` is about to go out at ``now``: its ticket, or None when the task is no
        longer polled (released, finishing or ended meanwhile: send nothing)."""
        record = self.records.get(task_id)
        if record is None or record.phase is not Phase.TRACKING:
            return None
        expired = record.expires_at is not None and now >= record.expires_at
        return PollTicket(task_id, record.life, record.machine.mark(), expired)

    def recall(self, task_id: str) -> tuple[TaskRecord, Outcome] | None:
        """A task that ended with an outcome, remembered: its last record (phase ``ENDED``, its
        machine at the terminal snapshot) and the outcome; a new wait is answered from it, with
        no poll. Recalling it makes it the newest remembered (the oldest is forgotten first)."""
        ended = self._ended.get(task_id)
        if ended is None or ended[1] is None:
            return None
        self._ended.move_to_end(task_id)
        return ended[0], ended[1]

    def track(self, event: Track) -> tuple[TaskRecord, Sequence[Action]]:
        """:meth:`handle` of a ``Track``, with the record the task is followed by: the one
        already followed, the remembered one (answered from memory: ``End`` with its
        outcome), or the one made now (its phase says whether it is polled; it may have ended
        at once: an input nobody handles, too many keys)."""
        return self._track(event)

    # -- events --------------------------------------------------------------------------

    def handle(self, event: Event) -> Sequence[Action]:
        """The actions ``event`` calls for, in the order to carry them out."""
        match event:
            case Polled():
                return self._polled_answer(event)
            case Tick(now=now):
                if not self._asking or self.policy.poll_while_answering:  # no input round
                    return [Poll(task_id) for task_id in self.scheduler.pop_due(now)]
                return self._held_back_due(now)
            case Pushed(snapshot=snapshot, now=now):
                record = self.records.get(snapshot.task_id)
                if record is None or record.phase is not Phase.TRACKING:
                    return _NOTHING
                return self._observe(record, snapshot, now, [])
            case PollFailed():
                return self._poll_failed(event)
            case Track():
                return self._track(event)[1]
            case Release(task_id=task_id):
                return self._release(task_id)
            case OutcomeFetched(task_id=task_id, ended=ended):
                return self._fetched(task_id, ended)
            case AnswerReady(task_id=task_id, key=key, answer=answer):
                return self._answer_ready(task_id, key, answer)
            case InputAnswered(task_id=task_id, key=key, sent=sent):
                return self._answered(task_id, key, sent)
            case InputUnhandled(task_id=task_id, method=method, request_id=request_id):
                record = self.records.get(task_id)
                if record is not None and record.questions:
                    record.questions.pop(str(request_id), None)  # answered -32601
                if record is None or self.policy.on_unhandled_input is not _FAIL:
                    return _NOTHING  # not followed, or the caller keeps waiting
                return self._end(record, [], error=InputNotHandled(task_id, method, request_id))
            case QuestionAsked(task_id=task_id, request_id=request_id, method=method):
                return self._asked(task_id, str(request_id), method)
            case (
                QuestionAnswered(task_id=task_id, request_id=request_id)
                | QuestionFailed(task_id=task_id, request_id=request_id)
            ):
                record = self.records.get(task_id)
                if record is not None and record.questions:
                    record.questions.pop(str(request_id), None)
                return _NOTHING
            case ListenAcknowledged(task_ids=ids):
                self.acknowledged = ids & self.listening
                return _NOTHING
            case ListenEnded():
                return self._listen_ended(event)
            case CancelAsked(task_id=task_id):
                return self._cancel(task_id)
            case TrackingFailed(task_id=task_id, error=error):
                record = self.records.get(task_id)
                if record is None or record.phase is Phase.ENDED:
                    return _NOTHING
                return self._end(record, [], error=error)
        raise TypeError(f"not a tracker event: {event!r}")  # pragma: no cover

    # -- tracking --------------------------------------------------------------------------

    def _track(self, event: Track) -> tuple[TaskRecord, Sequence[Action]]:
        first = event.first
        task_id = first.task_id
        record = self.records.get(task_id)
        if record is not None:
            record.waits_until = max(record.waits_until, event.waits_until)
            return record, _NOTHING
        remembered = self.recall(task_id)
        if remembered is not None:  # ended before: answered from memory, never polled
            return remembered[0], [End(task_id, outcome=remembered[1])]
        machine = TaskMachine(first)
        self._lives += 1
        record = TaskRecord(
            machine, self._lives, event.expires_at, event.ttl_ends, event.waits_until
        )
        self.records[task_id] = record
        actions: list[Action] = []
        if machine.is_terminal and not event.seed:
            record.phase = Phase.FINISHING
            actions.append(FetchOutcome(task_id, first))
            return record, actions
        if first.status is TaskStatus.INPUT_REQUIRED:
            self._inputs(record, first, actions)
            if record.phase is not Phase.TRACKING:
                return record, actions
        now = event.now
        interval = _interval(first)
        self.scheduler.track(
            task_id, now, interval, not_after=self._not_after(record, now, interval, actions)
        )
        self._polled.add(task_id)
        self._relisten(actions)
        return record, actions

    def _release(self, task_id: str) -> Sequence[Action]:
        record = self.records.get(task_id)
        if record is None or record.phase is not Phase.TRACKING:
            return _NOTHING  # a finishing task's outcome is still fetched (and remembered)
        record.phase = Phase.RELEASED
        del self.records[task_id]
        self._leave(task_id)
        actions: list[Action] = []
        self._relisten(actions)
        return actions

    def _leave(self, task_id: str) -> None:
        """``task_id`` is polled no more (finishing, ended or released)."""
        self.scheduler.untrack(task_id)
        self._polled.discard(task_id)
        self._held.discard(task_id)
        self._asking.pop(task_id, None)

    # -- polls -----------------------------------------------------------------------------

    def _held_back_due(self, now: float) -> list[Action]:
        """The polls due at ``now`` while some task's input round is being answered: one of
        such a task is held back (issue 39 item 3), unless its ttl ran out (the policy's
        ``poll_while_answering`` was looked at before)."""
        asking = self._asking
        actions: list[Action] = []
        for task_id in self.scheduler.pop_due(now):
            if task_id in asking:
                expires_at = self.records[task_id].expires_at
                if expires_at is None or now < expires_at:
                    self._held.add(task_id)
                    if expires_at is not None:  # it may wait for the round until then only
                        self.scheduler.postpone(task_id, expires_at)
                    continue
                self._held.discard(task_id)  # out of time: polled (and expired) now
            actions.append(Poll(task_id))
        return actions

    def _polled_answer(self, event: Polled) -> Sequence[Action]:
        ticket = event.ticket
        record = self.records.get(ticket.task_id)
        if record is None or record.phase is not Phase.TRACKING or record.life != ticket.life:
            return _NOTHING  # released, finishing or ended while the poll was in flight
        record.busy_in_row = 0
        actions: list[Action] = []
        if not record.machine.is_stale(ticket.mark, event.snapshot):
            self._observe(record, event.snapshot, event.now, actions)
            if record.phase is not Phase.TRACKING:
                return actions
        # A stale answer (A-08: overtaken by a push) is dropped, but polling goes on (C-22).
        return self._next_poll(record, ticket, event.now, actions)

    def _next_poll(
        self, record: TaskRecord, ticket: PollTicket, now: float, actions: list[Action]
    ) -> list[Action]:
        if ticket.expired:
            return self._expire(record, actions)
        task_id = ticket.task_id
        interval = asked = _interval(record.machine.current)
        if task_id in self.acknowledged:  # pushed to us: a slow safety poll only
            base = interval if interval is not None else self.policy.initial
            interval = base * self.policy.listen_safety_factor
        not_after = self._not_after(record, now, asked, actions)
        self.scheduler.answered(task_id, now, interval, not_after=not_after)
        return actions

    def _poll_failed(self, event: PollFailed) -> Sequence[Action]:
        ticket, error = event.ticket, event.error
        record = self.records.get(ticket.task_id)
        if record is None or record.phase is not Phase.TRACKING or record.life != ticket.life:
            return _NOTHING  # released, finishing or ended while the poll was in flight
        actions: list[Action] = []
        if isinstance(error, TaskNotFound):
            if ticket.expired:  # the server may delete a task once its ttl ran out (T:459)
                return self._expire(record, actions)
            return self._end(record, actions, error=error)
        if isinstance(error, ServerBusy):
            return self._busy(record, error, event.now, actions)
        if (
            isinstance(error, UnknownValue)
            and error.path == "$.result.status"
            and self.policy.on_violation is ViolationPolicy.WARN
        ):
            actions.append(Warn(error))  # an unknown status, ignored under WARN
            if record.phase is not Phase.TRACKING:
                return actions
            return self._next_poll(record, ticket, event.now, actions)
        return self._end(record, actions, error=error)

    def _busy(
        self, record: TaskRecord, busy: ServerBusy, now: float, actions: list[Action]
    ) -> list[Action]:
        if self.policy.on_busy is BusyPolicy.FAIL:
            return self._end(record, actions, error=busy)
        if record.phase is not Phase.TRACKING:
            return actions
        record.busy_in_row += 1
        task_id = record.task_id
        interval = _interval(record.machine.current)
        due = self.scheduler.busy(task_id, now, record.busy_in_row, busy.retry_after, interval)
        if due is None:
            return self._end(record, actions, error=busy)
        actions.append(Warn(BackedOff(busy, task_id, due - now, record.busy_in_row)))
        return actions

    def _not_after(
        self, record: TaskRecord, now: float, interval: float | None, actions: list[Action]
    ) -> float | None:
        """The latest the next poll may be due: the ttl backstop's expiry; and, for a server
        interval past ``max_server_interval``, the task's ttl or its waits' latest deadline
        too (one still ahead), with a warning, once a task."""
        limit = record.expires_at
        if not self.scheduler.distrusts(interval):
            return limit
        assert interval is not None
        ends = [
            end
            for end in (limit, record.ttl_ends, record.waits_until)
            if end is not None and now < end < math.inf
        ]
        if not record.interval_warned:
            record.interval_warned = True
            cap = self.policy.max_server_interval
            actions.append(Warn(PollIntervalCapped(record.task_id, interval, cap)))
        return min(ends) if ends else None

    # -- snapshots -------------------------------------------------------------------------

    def _observe(
        self, record: TaskRecord, snapshot: Task, now: float, actions: list[Action]
    ) -> list[Action]:
        machine = record.machine
        previous = machine.current
        observation = machine.observe(snapshot)
        for violation in observation.violations:
            if violation.soft or self.policy.on_violation is ViolationPolicy.WARN:
                actions.append(Warn(violation))
            else:
                error = IllegalTransition(
                    record.task_id, previous.status.value, snapshot.status.value
                )
                return self._end(record, actions, error=error)
        if not observation.accepted:
            return actions
        news = (snapshot.status, snapshot.status_message, snapshot.last_updated_at) != (
            previous.status,
            previous.status_message,
            previous.last_updated_at,
        )
        actions.append(Accepted(record.task_id, previous, snapshot, news))
        if machine.is_terminal:  # the one place terminal is decided: the task machine
            record.phase = Phase.FINISHING
            self._leave(record.task_id)
            record.keys = None  # the answered set is dropped on terminal
            record.questions = None
            actions.append(FetchOutcome(record.task_id, snapshot))
            self._relisten(actions)
        elif snapshot.status is TaskStatus.INPUT_REQUIRED:
            self._inputs(record, snapshot, actions)
        else:
            record.stuck_polls = 0
            if record.keys:
                _acked(record.keys, {})
        return actions

    def _inputs(self, record: TaskRecord, snapshot: Task, actions: list[Action]) -> None:
        """An accepted ``input_required`` snapshot: its new keys are served, each once."""
        requests = snapshot.input_requests
        if requests is None:  # the input arrives another way (2025-11-25: tasks/result)
            actions.append(ServeInput(record.task_id, snapshot))
            return
        task_id = record.task_id
        if not self._handles_inputs:
            if requests and self.policy.on_unhandled_input is UnhandledInputPolicy.FAIL:
                key, request = next(iter(requests.items()))
                self._end(record, actions, error=InputNotHandled(task_id, request.method, key))
            return
        keys = record.keys
        if keys is None:
            keys = record.keys = {}
        new = tuple((k, r) for k, r in requests.items() if k not in keys)
        _acked(keys, requests)
        if len(keys) + len(new) > self._max_keys:  # never forget a key: the task fails
            where = f"task {task_id!r}'s input requests"
            error = LimitExceeded("max_inputs_per_task", self._max_keys, where)
            self._end(record, actions, error=error)
            return
        for key, _ in new:
            keys[key] = KeyState.ASKED
        if record.questions:  # a key is that key's, never a question
            for key, _ in new:
                record.questions.pop(key, None)
        if new:
            self._asking[task_id] = self._asking.get(task_id, 0) + len(new)
            actions.append(ServeInput(task_id, snapshot, new))
        record.stuck_polls = 0 if new or record.answering() else record.stuck_polls + 1
        limit = self.policy.stuck_input_polls
        if limit is not None and record.stuck_polls >= limit:
            self._end(record, actions, error=InputStuck(task_id, list(requests), limit))

    def _asked(self, task_id: str, key: str, method: str) -> Sequence[Action]:
        """A 2025-11-25 question of a polled task is open (it holds no poll: see the rules)."""
        record = self.records.get(task_id)
        if record is None or record.phase is not Phase.TRACKING:
            return _NOTHING  # not followed, finishing, ended or released: nothing to know
        if record.keys is not None and key in record.keys:
            return _NOTHING  # a 2026-07-28 key: its own state says where it is
        questions = record.questions
        if questions is None:
            questions = record.questions = {}
        if key in questions or len(questions) < self._max_keys:  # the router's bound too
            questions[key] = method
        return _NOTHING

    def _answer_ready(self, task_id: str, key: str, answer: JSONObject) -> Sequence[Action]:
        """A key's answer is made: sent once, and only while the task is polled."""
        record = self.records.get(task_id)
        if record is None or record.keys is None or record.keys.get(key) is not KeyState.ASKED:
            return _NOTHING  # ended, released, terminal, or sent already: dropped
        record.keys[key] = KeyState.SENDING
        return [SendUpdate(task_id, key, answer)]

    def _answered(self, task_id: str, key: str, sent: bool) -> Sequence[Action]:
        record = self.records.get(task_id)
        if record is None or record.keys is None:
            return _NOTHING
        if record.keys.get(key) not in (KeyState.ASKED, KeyState.SENDING):
            return _NOTHING
        record.keys[key] = KeyState.ANSWERED
        actions: list[Action] = [RecordAnswer(task_id, key)] if sent else []
        left = self._asking[task_id] - 1
        if left:
            self._asking[task_id] = left
            return actions
        del self._asking[task_id]
        if task_id in self._held:  # the round is over: its poll goes out now
            self._held.discard(task_id)
            actions.append(Poll(task_id))
        return actions

    # -- ending ----------------------------------------------------------------------------

    def _fetched(self, task_id: str, ended: Outcome | MCPTasksError) -> Sequence[Action]:
        record = self.records.get(task_id)
        if record is None or record.phase is not Phase.FINISHING:
            return _NOTHING
        if isinstance(ended, MCPTasksError):
            return self._end(record, [], error=ended)
        return self._end(record, [RecordOutcome(task_id, ended)], outcome=ended)

    def _expire(self, record: TaskRecord, actions: list[Action]) -> list[Action]:
        task = record.machine.current
        expired_at = expiry_instant(task)
        assert expired_at is not None  # only a task with a representable expiry expires
        outcome = Expired(task, expired_at)
        actions.append(RecordOutcome(record.task_id, outcome))
        return self._end(record, actions, outcome=outcome)

    def _end(
        self,
        record: TaskRecord,
        actions: list[Action],
        *,
        outcome: Outcome | None = None,
        error: MCPTasksError | None = None,
    ) -> list[Action]:
        task_id = record.task_id
        was_polled = record.phase is Phase.TRACKING
        record.phase = Phase.ENDED
        record.keys = None
        record.questions = None
        self._asking.pop(task_id, None)
        del self.records[task_id]
        if outcome is not None or record.machine.is_terminal:
            self._ended[task_id] = (record, outcome)
            self._ended.move_to_end(task_id)
            while len(self._ended) > self._capacity:
                self._ended.popitem(last=False)
        actions.append(End(task_id, outcome, error))
        if was_polled:
            self._leave(task_id)
            self._relisten(actions)
        return actions

    def _cancel(self, task_id: str) -> Sequence[Action]:
        if task_id in self._cancelled or task_id in self._ended:
            return _NOTHING  # ended with an outcome, or seen terminal: nothing to cancel
        record = self.records.get(task_id)
        if record is not None and record.phase is not Phase.TRACKING:
            return _NOTHING  # its terminal status won the race: nothing left to cancel
        self._cancelled[task_id] = None
        while len(self._cancelled) > self._capacity:
            del self._cancelled[next(iter(self._cancelled))]
        return [SendCancel(task_id)]

    # -- the listen ------------------------------------------------------------------------

    def _relisten(self, actions: list[Action]) -> None:
        """The set of polled tasks may have changed: reopen the listen if it did."""
        if not self.policy.listen or len(self._polled) == len(self.listening) == 0:
            return
        wanted = frozenset(self._polled)
        if wanted != self.listening:
            self.listening, self.acknowledged = wanted, frozenset()
            actions.append(Relisten(wanted))

    def _listen_ended(self, event: ListenEnded) -> Sequence[Action]:
        if event.task_ids != self.listening:
            return _NOTHING  # an older listen's end: the newer one stands
        actions: list[Action] = [] if event.error is None else [Warn(event.error)]
        pushed, self.acknowledged = self.acknowledged, frozenset()
        # Poll as usual again at once: the acknowledged ids' slow safety poll is pulled in.
        # ``listening`` keeps the set, so nothing reopens until the polled set changes.
        now = event.now
        for task_id in sorted(pushed):
            record = self.records.get(task_id)
            if record is None or record.phase is not Phase.TRACKING:
                continue
            due = self.scheduler.due(task_id)
            interval = _interval(record.machine.current)
            usual = now + self.scheduler.wait_for(0, interval)
            if due is not None and due > usual:
                self.scheduler.track(task_id, now, interval, not_after=record.expires_at)
        return actions
