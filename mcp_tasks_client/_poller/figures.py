"""What a Poller has done and how it keeps pace, read-only: counters for a display or metrics.

Job: :class:`PollerFigures`, the Poller's base, holds its read-only figures: requests sent
(``polls_sent``, ``cancels_sent``, ``listens_opened``), polls that waited for a slot or were
sent late (``polls_delayed``, ``polls_late``), the in-flight bound now and the round trip
measured (``in_flight_limit``, ``poll_latency``). Each reads the piece that keeps it; none
changes anything.

May import: ``scheduling``, ``waits``, ``relays`` for type checking only (the pieces it reads);
nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .relays import Listener
    from .scheduling import PollLoop
    from .waits import Abandon

__all__ = ["PollerFigures"]


class PollerFigures:
    """The Poller's read-only figures (see the module docstring)."""

    _loop: PollLoop
    _abandon: Abandon
    _listener: Listener

    @property
    def polls_sent(self) -> int:
        """``tasks/get`` requests sent."""
        return self._loop.sent

    @property
    def cancels_sent(self) -> int:
        """``tasks/cancel`` requests sent by abandoned waits (``cancel_on_abandon``)."""
        return self._abandon.count

    @property
    def polls_delayed(self) -> int:
        """Polls that were due but waited for a slot (the in-flight bound saturated)."""
        return self._loop.delayed

    @property
    def polls_late(self) -> int:
        """Polls sent later than ``PollPolicy.lateness_tolerance`` after they were due (each
        counted; the ``FallingBehind`` warnings are rate-limited)."""
        return self._loop.pace.late_polls

    @property
    def in_flight_limit(self) -> int:
        """The in-flight bound now: ``PollPolicy.max_in_flight``, or where
        ``PollPolicy.in_flight`` (``FollowLatency``) sized it last."""
        return self._loop.pace.limit

    @property
    def poll_latency(self) -> float | None:
        """The mean ``tasks/get`` round trip (s) over the last window of answered polls (2 s,
        or ``FollowLatency.window``); None before one closed."""
        return self._loop.pace.latency

    @property
    def listens_opened(self) -> int:
        """``subscriptions/listen`` requests opened (``PollPolicy.listen``)."""
        return self._listener.opened
