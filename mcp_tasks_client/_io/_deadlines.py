"""The deadlines of the requests a transport runs in their callers' tasks, watched by one task.

Job: end each inline exchange (``HttpTransport.exchange``) at its deadline by cancelling its
one cancel scope, without a deadline on that scope. A scope with a deadline arms a timer of
the event loop on entry and disarms it on exit (on asyncio a ``TimerHandle`` made, pushed on
the loop's heap and cancelled; on trio a deadline registered and withdrawn), once per request;
one watcher per transport arms one timer for the earliest deadline instead, and re-arms it only
when a request with a sooner deadline begins or the armed one passes. And the running loop's
clock and cancellation check, bound once (:func:`loop_clock`, :func:`loop_checkpoint`), for
the code that reads them at every request.

May import: ``models``; anyio.

Theory of operation: :meth:`InlineDeadlines.add` records a request's deadline beside its scope
(the transport's ``scopes``, which its close cancels too) and, when it is sooner than the one
armed, moves the watcher's wake-up to it; :meth:`InlineDeadlines.drop` forgets it when the
exchange ends. The watcher (:meth:`InlineDeadlines.watch`, a task of the transport's group)
wakes at the earliest deadline, cancels the scope of every request whose deadline has passed,
and sleeps until the next. Requests one after another with one timeout never re-arm it: each
deadline is later than the armed one, which, when it passes, finds its request long done. A
scope cancelled so ended by its deadline: ``anyio.current_time()`` is past the recorded one.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

import anyio
import anyio.lowlevel

from ..models import RequestId

__all__ = ["Cancellable", "InlineDeadlines", "loop_checkpoint", "loop_clock"]


class Cancellable(Protocol):
    """What ends a running request: a cancel scope, or an inline exchange (``_http_engine``'s
    ``InlineExchange``: its scope, or its wait woken)."""

    def cancel(self) -> None: ...


def loop_clock() -> Callable[[], float]:
    """The running loop's clock: the function ``anyio.current_time()`` calls, found once.
    ``anyio.current_time()`` looks the loop up at every call (``get_async_backend``, sniffio);
    this one reads it straight from the loop's backend (anyio's public ``EventLoopToken``,
    4.11 and later; ``anyio.current_time`` itself before). Call it inside the loop whose
    clock it is (raises anyio's NoEventLoopError outside one); the function it returns holds
    for that loop only."""
    current_token = getattr(anyio.lowlevel, "current_token", None)
    if current_token is None:  # anyio before 4.11
        return anyio.current_time
    token = current_token()
    asyncio = sys.modules.get("asyncio")  # an asyncio loop runs only where it is imported
    if asyncio is not None and isinstance(token.native_token, asyncio.AbstractEventLoop):
        # What anyio's asyncio backend returns (``get_running_loop().time()``), less the
        # look-up of the running loop (a getpid system call) at each read.
        loop_time: Callable[[], float] = token.native_token.time
        return loop_time
    now: Callable[[], float] = token.backend_class.current_time
    return now


def loop_checkpoint() -> Callable[[], Awaitable[None]]:
    """The running loop's ``checkpoint_if_cancelled``, found once, as :func:`loop_clock`
    finds its clock (``anyio.lowlevel.checkpoint_if_cancelled`` looks the loop up at every
    call). The same check: raises the loop's cancellation if an enclosing scope was
    cancelled, else returns without a scheduling point."""
    current_token = getattr(anyio.lowlevel, "current_token", None)
    if current_token is None:  # anyio before 4.11
        return anyio.lowlevel.checkpoint_if_cancelled
    check: Callable[[], Awaitable[None]] = current_token().backend_class.checkpoint_if_cancelled
    return check


class InlineDeadlines:
    """The deadlines of one transport's inline exchanges (see the module header)."""

    __slots__ = ("_deadline_of", "_scopes", "_wake")

    def __init__(self, scopes: Mapping[RequestId, Cancellable]) -> None:
        self._scopes = scopes  # request id -> what ends its exchange (the transport's)
        self._deadline_of: dict[RequestId, float] = {}
        self._wake: anyio.CancelScope | None = None  # the watcher's sleep, while it sleeps

    def add(self, request_id: RequestId, deadline: float) -> None:
        """Watch ``request_id``'s deadline (its scope is in ``scopes``)."""
        self._deadline_of[request_id] = deadline
        wake = self._wake
        if wake is not None and deadline < wake.deadline:
            wake.deadline = deadline

    def drop(self, request_id: RequestId) -> None:
        """The exchange ended: its deadline is no longer watched."""
        self._deadline_of.pop(request_id, None)

    async def watch(self) -> None:
        """The watcher: runs until the transport's task group is cancelled. Deadline: none.
        Cancelled: stops watching (the transport is closing: its close cancels every scope)."""
        while True:
            now = anyio.current_time()
            earliest = math.inf
            for request_id, deadline in list(self._deadline_of.items()):
                if deadline <= now:
                    del self._deadline_of[request_id]
                    scope = self._scopes.get(request_id)
                    if scope is not None:
                        scope.cancel()
                elif deadline < earliest:
                    earliest = deadline
            with anyio.CancelScope(deadline=earliest) as self._wake:
                try:
                    await anyio.sleep_forever()
                finally:
                    self._wake = None
