"""Whether a Poller keeps pace with its tasks, and the in-flight bound, sans-I/O.

Job: the :class:`Pace` of one poll loop reads, for each poll, when it was due and when it was
sent, and for each answer its round trip and when the schedule put the task's next poll; from
them it tells (1) when polls fall behind their due times by more than
``PollPolicy.lateness_tolerance`` (a :class:`FallingBehind`, rate-limited) and (2) under
``PollPolicy(in_flight=FollowLatency(cap=...))``, what the in-flight bound should be (an
:class:`InFlightResized` for each change). It never sends, sleeps, reads a clock or logs: the
loop hands in its own times (monotonic seconds) and carries out what comes back.

May import: ``_exceptions``, ``_sansio.scheduler``. Nothing of I/O.

Theory of operation.

- Lateness is ``sent - due`` of one poll; one past the tolerance counts as late. The first late
  poll is reported at once; then at most one :class:`FallingBehind` every
  :data:`FALLING_BEHIND_EVERY` seconds of the loop's clock, each with the figures since the
  previous one (how many polls were late, the latest), the line of due polls waiting for a
  slot, the polls in flight, the bound and the measured round trip.
- A window (``FollowLatency.window``; :data:`LATENCY_WINDOW` when the bound is fixed) gathers
  the round trips of the polls answered in it and their cycles (``next due - sent``: the
  scheduled wait plus the round trip, never the time spent in line). When it closes, the
  measured latency is its mean round trip.
- Sizing (Little's law): a task whose polls come one cycle apart needs ``1 / cycle`` polls a
  second, each in flight for a round trip; averaged over the window's polls, whose frequency is
  each task's own rate, ``mean cycle = tracked / rate`` (the harmonic mean falls out), so the
  rate needed is ``tracked / mean cycle`` and the bound ``headroom x rate x mean round trip``,
  within ``[max_in_flight, cap]``. It grows as soon as a window asks for more and shrinks only
  when a window asks for under :data:`SHRINK_BELOW` of it.
"""

from __future__ import annotations

import math
from collections.abc import Sized

from .._exceptions import FallingBehind, InFlightResized
from .scheduler import PollPolicy

__all__ = ["FALLING_BEHIND_EVERY", "LATENCY_WINDOW", "SHRINK_BELOW", "Pace"]

FALLING_BEHIND_EVERY = 10.0
"""At most one :class:`FallingBehind` this many seconds apart (the loop's clock)."""
LATENCY_WINDOW = 2.0
"""Seconds of answers the measured round trip is the mean of, when the bound is fixed."""
SHRINK_BELOW = 0.75
"""A following bound shrinks only when a window asks for under this share of it."""


class Pace:
    """How one poll loop keeps pace (see the module docstring). ``limit`` is the in-flight
    bound now; ``latency`` the mean round trip of the last window that had answers."""

    def __init__(self, policy: PollPolicy) -> None:
        self._policy = policy
        self._follow = follow = policy.in_flight
        self.tolerance = policy.lateness_tolerance
        """Polls sent later than this after their due time are late."""
        self.limit = policy.max_in_flight
        """The in-flight bound now (fixed, or as ``FollowLatency`` sized it last)."""
        self.latency: float | None = None
        """The mean round trip of the last closed window (s); None before one closed."""
        self.late_polls = 0
        """Polls sent later than the tolerance, in all."""
        self.following = follow is not None
        """Whether the bound follows latency (``PollPolicy.in_flight``)."""
        self._window = LATENCY_WINDOW if follow is None else follow.window
        self._window_ends = -math.inf  # opened by the first answer
        self._trips = 0
        self._trip_sum = 0.0
        self._cycles = 0
        self._cycle_sum = 0.0
        self._late_since = 0  # late polls since the last FallingBehind
        self._worst_since = 0.0
        self._warned_at = -math.inf

    def sent(self, due: float, now: float, waiting: int, in_flight: int) -> FallingBehind | None:
        """A poll due at ``due`` is sent at ``now``, with ``waiting`` due polls in line and
        ``in_flight`` polls in flight (this one included): the warning to give, if any."""
        late = now - due
        if not late > self.tolerance:
            return None
        self.late_polls += 1
        self._late_since += 1
        self._worst_since = max(self._worst_since, late)
        if now - self._warned_at < FALLING_BEHIND_EVERY:
            return None
        follow = self._follow
        warning = FallingBehind(
            late=late,
            worst=self._worst_since,
            late_polls=self._late_since,
            waiting=waiting,
            in_flight=in_flight,
            limit=self.limit,
            latency=self._latency_now(),
            tolerance=self.tolerance,
            cap=None if follow is None else follow.cap,
        )
        self._warned_at = now
        self._late_since = 0
        self._worst_since = 0.0
        return warning

    def answered(
        self, sent: float, now: float, next_due: float | None, tracked: Sized
    ) -> InFlightResized | None:
        """A poll sent at ``sent`` answered (or failed) at ``now``; the task's next poll is due
        at ``next_due`` (None: not polled again); ``len(tracked)``: the tasks being polled
        (read only when a window closes). The resize to carry out, if any (``limit`` is
        already the new bound)."""
        if now >= self._window_ends:
            resized = self._close_window(len(tracked)) if self._trips else None
            self._window_ends = now + self._window
        else:
            resized = None
        self._trips += 1
        self._trip_sum += now - sent
        if next_due is not None and next_due > sent:
            self._cycles += 1
            self._cycle_sum += next_due - sent
        return resized

    def _latency_now(self) -> float | None:
        """The open window's mean round trip, else the last closed one's."""
        return self._trip_sum / self._trips if self._trips else self.latency

    def _close_window(self, tracked: int) -> InFlightResized | None:
        latency = self.latency = self._trip_sum / self._trips
        cycles, cycle_sum = self._cycles, self._cycle_sum
        self._trips, self._trip_sum, self._cycles, self._cycle_sum = 0, 0.0, 0, 0.0
        follow = self._follow
        if follow is None or not cycles or tracked <= 0:
            return None
        rate = tracked / (cycle_sum / cycles)
        wanted = rate * latency * follow.headroom
        # rounded first: sums of float times must not turn an exact 200 into 201
        needed = math.ceil(round(wanted, 6)) if math.isfinite(wanted) else follow.cap
        target = min(follow.cap, max(self._policy.max_in_flight, needed))
        before = self.limit
        if target > before or (target < before and needed < SHRINK_BELOW * before):
            self.limit = target
            return InFlightResized(
                before=before,
                after=target,
                latency=latency,
                needed_rate=rate,
                needed=needed,
                tracked=tracked,
                cap=follow.cap,
            )
        return None
