"""Poll scheduling for many tasks at once, sans-I/O: a deadline heap and a policy (C-19, A-25).

Theory of operation. The engine asks :meth:`PollScheduler.next_due` when it must wake up, and
at that time :meth:`PollScheduler.pop_due` tells it which tasks to poll. When a poll answers,
:meth:`PollScheduler.answered` schedules that task's next poll:

- the server's ``pollInterval`` (re-read from every snapshot) is honoured, never undercut
  except by the jitter the caller allowed (C-19), up to ``max_server_interval``: a longer one
  (1e12 ms, say) is not a promise to keep for ages, so the wait is at most that, and the caller
  (the Poller) also pulls it in to the task's ttl or the waits' deadline (``not_after``) and
  records a warning (:meth:`PollScheduler.distrusts` tells which intervals);
- with no interval from the server, the wait starts at ``initial`` and grows by ``backoff``
  up to ``ceiling`` (A-25);
- nothing is ever scheduled sooner than ``floor`` after the previous answer;
- jitter spreads many tasks' polls: the wait is multiplied by a factor drawn from
  ``[1 - jitter, 1 + jitter]`` (then held above the floor);
- a poll the server answered busy (HTTP 429 or 503) under ``on_busy=BusyPolicy.BACK_OFF`` is
  scheduled by :meth:`PollScheduler.busy`: after ``max(pollInterval, Retry-After, the policy's
  own busy backoff)``, never sooner than ``Retry-After`` (jitter never spreads it under that,
  and no ttl pulls it in); :meth:`PollPolicy.busy_wait` is that
  rule alone, and ``None`` from it (a ``Retry-After`` past ``max_server_interval``) means the
  wait ends with the ServerBusy instead.

Time is whatever monotonic float the engine passes in; randomness is an injected
``random.Random``. The heap never holds more than one live entry per task (older ones are
skipped lazily), so the cost of a poll is O(log n) in the number of tracked tasks. A live
entry is one tuple, both in the heap and in the task's slot (no object of its own per task:
a poller may track 100,000 tasks, and the garbage collector walks every container).
"""

from __future__ import annotations

import enum
import heapq
import math
import random
from typing import TypeAlias

import attrs

from .task_machine import ViolationPolicy

__all__ = ["BusyPolicy", "FollowLatency", "PollPolicy", "PollScheduler", "UnhandledInputPolicy"]


def _non_negative(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, got {value}")


class UnhandledInputPolicy(enum.Enum):
    """What a task's wait does when the task asked for input nobody handles."""

    FAIL = "fail"
    """The wait raises InputNotHandled (the server already got a JSON-RPC error)."""
    KEEP_WAITING = "keep_waiting"
    """The wait goes on; the server decides what the refused input means for the task."""


class BusyPolicy(enum.Enum):
    """What a task's wait does when the server answers one of the Poller's ``tasks/get`` or
    ``tasks/update`` requests with HTTP 429 or 503 (ServerBusy). A busy ``tools/call`` is never
    retried, whatever the policy: the caller sent it and decides."""

    FAIL = "fail"
    """The wait ends with the ServerBusy (``.retry_after`` kept): the caller decides."""
    BACK_OFF = "back_off"
    """The request is sent again after ``max(pollInterval, Retry-After, the policy's busy
    backoff)``, never sooner than ``Retry-After``, within the wait's deadline; each backoff is
    a ``BackedOff`` warning in ``Poller.warnings`` (and a WARNING log record)."""


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be > 0, got {value}")


@attrs.frozen
class FollowLatency:
    """An in-flight bound that follows the server's latency, within ``cap``: the caller's
    opt-in, as ``PollPolicy(in_flight=FollowLatency(cap=256))``.

    The bound starts at ``PollPolicy.max_in_flight`` and is never under it nor over ``cap``.
    Once a ``window``, the Poller sizes it to what the tasks need: by Little's law, polls in
    flight = poll rate x round trip, where the rate the tasks ask for is the tracked tasks
    divided by their mean cycle (the wait the schedule gave each answered poll plus its round
    trip), so ``needed = headroom x tracked x mean round trip / mean cycle``. It grows as soon
    as the window's figures ask for more, and shrinks only once they ask for under three
    quarters of it (no flapping). Never silently: each resize is an ``InFlightResized`` in
    ``Poller.warnings`` (and an INFO log record) carrying the figures. Size the transport's
    pool to ``cap`` (``HttpTransport(url, max_connections=...)``): a poll in flight holds a
    connection for its round trip.
    """

    cap: int
    """The most ``tasks/get`` in flight at once the bound may reach (>= ``max_in_flight``)."""
    headroom: float = 1.25
    """Margin over the computed need, for jitter and uneven round trips (>= 1.0)."""
    window: float = attrs.field(default=2.0, validator=_positive)
    """Seconds of polls each sizing reads (the mean round trip and cycle of that window)."""

    def __attrs_post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError(f"FollowLatency cap must be >= 1, got {self.cap}")
        if not self.headroom >= 1.0:
            raise ValueError(f"FollowLatency headroom must be >= 1.0, got {self.headroom}")


@attrs.frozen
class PollPolicy:
    """How the engine polls; construct it, print it, pass it. All durations in seconds.

    Nothing here starts anything: a Poller polls only the tasks the caller hands it.
    """

    floor: float = attrs.field(default=0.05, validator=_non_negative)
    """Never poll one task sooner than this after its previous answer."""
    initial: float = attrs.field(default=1.0, validator=_non_negative)
    """The first wait when the server gives no ``pollInterval`` (A-25)."""
    backoff: float = 2.0
    """Growth of the wait while the server gives no interval (1.0 = fixed cadence)."""
    ceiling: float = attrs.field(default=30.0, validator=_non_negative)
    """The longest wait backoff reaches. A server's own interval is honoured even above it."""
    jitter: float = attrs.field(default=0.1, validator=_non_negative)
    """Fraction of random spread on each wait, to keep many tasks from polling in step."""
    request_timeout: float = 30.0
    """Deadline of each ``tasks/get`` (and ``tasks/update``, journal write) the Poller makes."""
    request_timeout_from_client: bool = False
    """Bound the Poller's follow-up requests by the client's ``Timeouts.request`` instead of
    ``request_timeout``: the deadline the caller gave the client then holds for every request
    about its tasks, the Poller's included (and ``resume``'s, with ``client_for(timeouts=...)``).
    Off: ``request_timeout`` (the Poller's own)."""
    result_timeout: float = 300.0
    """Deadline of the blocking ``tasks/result`` that fetches a terminal task's result (A-12)."""
    cancel_on_abandon: bool = False
    """Send one ``tasks/cancel`` when the caller's wait ends without an outcome (deadline or
    cancellation). Off unless the caller turns it on."""
    open_result_on_input_required: bool = True
    """On ``input_required``, open the blocking ``tasks/result`` the server delivers the input
    requests on (C-21: SHOULD; on by default, and printing the policy shows it). A dropped
    ``tasks/result`` is opened again when a later poll still shows ``input_required``."""
    on_unhandled_input: UnhandledInputPolicy = UnhandledInputPolicy.FAIL
    """What an input request that no handler takes does to the task's wait."""
    max_in_flight: int = 64
    """Most ``tasks/get`` requests in flight at once (size the HTTP pool to match); a poll that
    finds every slot taken waits, and ``Poller.polls_delayed`` counts it. It bounds the poll
    rate at a given server latency: at most ``min(max_in_flight, the transport's pool) / round
    trip`` polls a second (64 at 0.5 s: 128/s, so 2,000 tasks polled every 2 s, which ask for
    800/s, are each polled every 15.6 s instead). With ``in_flight``: the starting and
    lowest bound."""
    abandon_timeout: float = attrs.field(default=5.0, validator=_non_negative)
    """With ``cancel_on_abandon``: the one bound on all the ``tasks/cancel`` an abandoned wait
    sends (concurrently); the caller gets control back within it."""
    ttl_backstop: bool = False
    """End a wait as ``Expired`` once ``createdAt + ttl`` has passed by the *local* clock (and
    read a TaskNotFound after it as expiry). Off: the server's status is trusted, and a task
    the server deleted is TaskNotFound. The local clock may disagree with the server's."""
    on_violation: ViolationPolicy = ViolationPolicy.RAISE
    """What a server that breaks the status machine does to a wait (raise, or warn and go on)."""
    listen: bool = False
    """2026-07-28: keep one ``subscriptions/listen`` open for the tasks being waited on,
    reopened when that set changes; ``notifications/tasks`` then end waits as soon as the
    server pushes (E C39-C42). Off: polling only."""
    listen_safety_factor: float = attrs.field(default=10.0, validator=_non_negative)
    """With ``listen``: a task the server acknowledged on the listen is still polled, this many
    times more slowly (a stream can die silently, E A-25); the others at the usual pace."""
    max_server_interval: float = attrs.field(default=3600.0, validator=_non_negative)
    """The longest server ``pollInterval`` honoured as it is. A longer one (1e12 ms would mean
    no poll for 31 years) is capped: the next poll is due after at most this long, and no
    later than the task's ttl runs out or the latest deadline of the waits on it, and the
    Poller records a warning (a ``PollIntervalCapped`` in ``Poller.warnings``), once a task."""
    stuck_input_polls: int | None = None
    """2026-07-28: end a wait with InputStuck after this many snapshots in a row that show
    ``input_required`` with no key not taken before and no handler still running (every
    question answered, yet the task still waits). None: never (acks are eventually
    consistent, E C33; a server may be slow to move on). Nothing is cancelled by it."""
    poll_while_answering: bool = False
    """2026-07-28: keep polling a task while its input keys are being answered (their handlers
    running, or their ``tasks/update`` in flight). Off (the default): a poll of that task that
    falls due meanwhile is held back and sent as soon as the last of its keys is answered (the
    update answered, refused or failed): one ``tasks/get`` a round of input, as a client that
    answers a round before it polls again. Pushed statuses still arrive, the waits' deadlines
    still hold, and a poll due at or past the ttl backstop's expiry is never held. Turn it on
    when handlers may take long (a person answering) and the task's status matters
    meanwhile."""

    on_busy: BusyPolicy = BusyPolicy.FAIL
    """HTTP 429 or 503 to a ``tasks/get`` or ``tasks/update`` of the Poller: end the wait with
    ServerBusy (the default) or back off and send it again (:class:`BusyPolicy`)."""
    busy_backoff: float = attrs.field(default=1.0, validator=_non_negative)
    """With ``BusyPolicy.BACK_OFF``: the policy's own wait after the first busy answer in a
    row, multiplied by ``backoff`` for each further one, up to ``ceiling`` (or this, if
    larger). The wait is the largest of it, the task's ``pollInterval`` and ``Retry-After``.
    A ``Retry-After`` past ``max_server_interval`` is not waited out: the wait ends with the
    ServerBusy."""

    in_flight: FollowLatency | None = attrs.field(default=None)
    """None (the default): the bound is ``max_in_flight``, fixed. ``FollowLatency(cap=...)``:
    the bound follows the measured round trip and the poll rate the tasks need, from
    ``max_in_flight`` up to the cap, each resize an ``InFlightResized`` warning."""
    lateness_tolerance: float = attrs.field(default=1.0, validator=_non_negative)

    @in_flight.validator
    def _in_flight_is_a_policy(
        self, attribute: attrs.Attribute[FollowLatency | None], value: object
    ) -> None:
        if value is not None and not isinstance(value, FollowLatency):
            raise TypeError(
                f"in_flight is None (a fixed max_in_flight) or FollowLatency(cap=...), not "
                f"{value!r}"
            )

    """Seconds a poll may be sent after it was due before the Poller says it falls behind: a
    ``FallingBehind`` in ``Poller.warnings`` (and a WARNING log record) with the figures (how
    late, how many due polls wait for a slot, the in-flight bound, the measured round trip),
    at most one every ``FALLING_BEHIND_EVERY`` (10 s) of the loop's clock. ``math.inf``: never.
    It only reports: nothing is changed by it."""

    def busy_wait(
        self, in_row: int, retry_after: float | None, server_interval: float | None
    ) -> float | None:
        """The wait before a busy request is sent again, before jitter: ``in_row`` is how
        many busy answers in a row (1 for the first). None: not waited out (a Retry-After past
        ``max_server_interval``); the ServerBusy stands."""
        if in_row < 1:
            raise ValueError(f"in_row counts busy answers from 1, got {in_row}")
        if retry_after is not None and retry_after > self.max_server_interval:
            return None
        try:
            own = self.busy_backoff * self.backoff ** (in_row - 1)
        except OverflowError:
            own = math.inf
        own = min(own, max(self.ceiling, self.busy_backoff))
        interval = 0.0 if server_interval is None else server_interval
        interval = min(interval, self.max_server_interval)
        return max(self.floor, own, interval, retry_after or 0.0)

    def for_client(self, client_request_timeout: float) -> PollPolicy:
        """The policy a Poller runs with on a client whose ``Timeouts.request`` is given (itself,
        unless ``request_timeout_from_client``)."""
        if not self.request_timeout_from_client:
            return self
        return attrs.evolve(self, request_timeout=client_request_timeout)

    def __attrs_post_init__(self) -> None:
        if self.backoff < 1.0:
            raise ValueError(f"backoff must be >= 1.0, got {self.backoff}")
        if self.jitter >= 1.0:
            raise ValueError(f"jitter must be < 1.0, got {self.jitter}")
        if math.isnan(self.lateness_tolerance):
            raise ValueError("lateness_tolerance must be a number of seconds (math.inf: never)")
        if self.max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {self.max_in_flight}")
        if self.in_flight is not None and self.in_flight.cap < self.max_in_flight:
            raise ValueError(
                f"in_flight=FollowLatency(cap={self.in_flight.cap}) is under max_in_flight "
                f"({self.max_in_flight}), the bound it starts at and never goes under"
            )


_Entry: TypeAlias = "tuple[float, int, str, int]"
"""``(due, version, task_id, attempt)``: ordered by due time, then by when it was scheduled
(versions are unique, so a comparison never reaches the id)."""


class PollScheduler:
    """When each tracked task is next polled."""

    def __init__(self, policy: PollPolicy, rng: random.Random | None = None) -> None:
        self.policy = policy
        self._rng = rng if rng is not None else random.Random()
        self._entries: dict[str, _Entry] = {}  # the live entry of each task
        self._heap: list[_Entry] = []
        self._version = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._entries

    def track(
        self,
        task_id: str,
        now: float,
        server_interval: float | None,
        *,
        not_after: float | None = None,
    ) -> float:
        """Start tracking ``task_id``; its first poll is one wait after ``now``.

        ``not_after`` pulls the poll earlier (a ttl running out), but never under the floor.
        """
        return self._schedule(task_id, 0, now, server_interval, not_after)

    def untrack(self, task_id: str) -> None:
        self._entries.pop(task_id, None)  # its heap entries are skipped lazily

    def answered(
        self,
        task_id: str,
        now: float,
        server_interval: float | None,
        *,
        not_after: float | None = None,
    ) -> float:
        """A poll of ``task_id`` answered at ``now``: schedule the next one; returns its time."""
        attempt = self._entries[task_id][3] + 1
        return self._schedule(task_id, attempt, now, server_interval, not_after)

    def busy(
        self,
        task_id: str,
        now: float,
        in_row: int,
        retry_after: float | None,
        server_interval: float | None,
    ) -> float | None:
        """The poll of ``task_id`` was answered busy at ``now`` (``in_row``-th in a row):
        schedule it again by :meth:`PollPolicy.busy_wait`, spread by jitter but never under
        ``Retry-After``, the server's interval or the floor. Returns the new due
        time, or None (nothing scheduled: the busy answer ends the wait)."""
        policy = self.policy
        wait = policy.busy_wait(in_row, retry_after, server_interval)
        if wait is None:
            return None
        if policy.jitter:
            interval = min(server_interval or 0.0, policy.max_server_interval)
            floor = max(policy.floor, retry_after or 0.0, interval)
            wait = max(floor, wait * self._rng.uniform(1.0 - policy.jitter, 1.0 + policy.jitter))
        attempt = self._entries[task_id][3]
        self._version += 1
        entry = (now + wait, self._version, task_id, attempt)
        self._entries[task_id] = entry
        heapq.heappush(self._heap, entry)
        return entry[0]

    def postpone(self, task_id: str, when: float) -> None:
        """Keep ``task_id`` tracked with its next poll due at ``when`` (its backoff attempt
        kept): a poll held back, due again when it may no longer wait (the ttl backstop)."""
        attempt = self._entries[task_id][3]
        self._version += 1
        entry = (when, self._version, task_id, attempt)
        self._entries[task_id] = entry
        heapq.heappush(self._heap, entry)

    def distrusts(self, server_interval: float | None) -> bool:
        """Whether ``server_interval`` is past ``max_server_interval``: then the wait is capped
        at that, and the caller should pull it in further (``not_after``: the task's ttl, the
        waits' deadline) and warn."""
        return server_interval is not None and server_interval > self.policy.max_server_interval

    def wait_for(self, attempt: int, server_interval: float | None) -> float:
        """The wait before the next poll, before jitter."""
        policy = self.policy
        if server_interval is not None:
            # C-19: honour the server's interval, up to the longest one taken as it is.
            return max(policy.floor, min(server_interval, policy.max_server_interval))
        try:  # no cap on the exponent: a slow backoff must still reach the ceiling
            grown = policy.initial * policy.backoff**attempt
        except OverflowError:  # a huge backoff or a long-lived task: the ceiling caps it
            grown = math.inf if policy.initial > 0 else 0.0
        return max(policy.floor, min(policy.ceiling, grown))

    def due(self, task_id: str) -> float | None:
        """When ``task_id`` is next polled (in the past while its poll is in flight), or None
        when it is not tracked."""
        entry = self._entries.get(task_id)
        return None if entry is None else entry[0]

    def next_due(self) -> float | None:
        """When the engine must next wake up, or None when nothing is tracked."""
        heap, entries = self._heap, self._entries
        while heap:
            top = heap[0]
            if entries.get(top[2]) is top:
                return top[0]
            heapq.heappop(heap)
        return None

    def pop_due(self, now: float) -> list[str]:
        """The tasks whose poll is due at ``now``; they stay tracked, awaiting ``answered``."""
        out: list[str] = []
        heap, entries = self._heap, self._entries
        while heap and heap[0][0] <= now:
            top = heapq.heappop(heap)
            if entries.get(top[2]) is top:
                out.append(top[2])
        return out

    def _schedule(
        self,
        task_id: str,
        attempt: int,
        now: float,
        server_interval: float | None,
        not_after: float | None,
    ) -> float:
        wait = self.wait_for(attempt, server_interval)
        jitter = self.policy.jitter
        if jitter:
            wait *= self._rng.uniform(1.0 - jitter, 1.0 + jitter)
        if not_after is not None:
            wait = min(wait, not_after - now)
        wait = max(self.policy.floor, wait)
        self._version += 1
        entry = (now + wait, self._version, task_id, attempt)
        self._entries[task_id] = entry
        heapq.heappush(self._heap, entry)
        return entry[0]
