"""Where a wait parks: the per-loop wakeup primitives of the Poller.

Job: let a caller's ``wait`` / ``as_completed`` / ``watch`` sleep until its task ends or has
news, at the lowest cost per waiting task (a poller may hold 100,000 of them), on asyncio,
trio and any other anyio backend.

May import: anyio, sniffio, trio/asyncio (lazily, for their own loop), ``models``,
``_sansio.progress`` and ``inputs`` (the types a watch yields). Nothing else of the poller.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import math
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import anyio.lowlevel
import sniffio

from .._sansio.progress import TaskProgress
from ..inputs import InputEvent
from ..models import Task

if TYPE_CHECKING:
    from .registry import Tracked

__all__ = ["DoneWakeup", "Inbox", "WatchItem", "WatchQueue", "bounded"]

WatchItem: TypeAlias = Task | InputEvent | TaskProgress
"""What ``Poller.watch()`` yields: a new snapshot, an input event, or a progress event."""


class WatchQueue:
    """What one ``watch()`` has not read yet, bounded: a snapshot replaces the unread one
    (only the newest state matters to a watcher that fell behind), a progress event the
    unread progress event, each then read in its new place; past ``backlog`` unread items the
    oldest is dropped (``skipped`` counts both). So at most one snapshot is unread, and the
    one a watcher just read is the poller's latest until it awaits again."""

    def __init__(self, backlog: int) -> None:
        self.backlog = backlog
        self.skipped = 0
        self._items: collections.deque[WatchItem] = collections.deque()
        self._ready: anyio.Event | None = None  # made when a reader has to wait
        self._closed = False

    def push(self, item: WatchItem) -> None:
        if self._closed:
            return
        if isinstance(item, (Task, TaskProgress)):
            kind = type(item)
            for index, unread in enumerate(self._items):
                if type(unread) is kind:
                    del self._items[index]
                    self.skipped += 1
                    break
        if len(self._items) >= self.backlog:
            self._items.popleft()
            self.skipped += 1
        self._items.append(item)
        if self._ready is not None:
            self._ready.set()

    def close(self) -> None:
        self._closed = True
        if self._ready is not None:
            self._ready.set()

    async def get(self) -> WatchItem:
        """The oldest unread item; EndOfStream once closed and read to the end."""
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            ready = self._ready = anyio.Event()
            await ready.wait()
        return self._items.popleft()


class Inbox:
    """What one ``as_completed`` has been told and not yielded yet: the tasks that ended, in
    order. Its event is made only when the reader has to wait (one per wake-up, not per
    task)."""

    __slots__ = ("_ended", "_wake")

    def __init__(self) -> None:
        self._ended: collections.deque[Tracked] = collections.deque()
        self._wake: anyio.Event | None = None

    def put(self, tracked: Tracked) -> None:
        self._ended.append(tracked)
        if self._wake is not None:
            self._wake.set()

    async def get(self) -> Tracked:
        """The oldest ended task not read yet (a checkpoint even when one is there)."""
        if self._ended:
            await anyio.lowlevel.checkpoint()
        while not self._ended:
            wake = self._wake = anyio.Event()
            await wake.wait()
        self._wake = None
        return self._ended.popleft()


class DoneWakeup:
    """Set once, when its task ends; every ``wait()`` on the task parks on it (one for all).

    Lighter than an ``anyio.Event`` for a wait that may sleep for hours on 100,000 tasks
    (issue 12): the waiter awaits what :meth:`park` returns straight from ``Poller.wait``'s
    own frame, with no coroutine of the event's in between. On asyncio that is a bare future
    (an ``anyio.Event`` is an ``asyncio.Event`` with its deque, plus two coroutines while it
    waits); on trio ``wait_task_rescheduled`` (a ``trio.Event`` adds its set, its own
    coroutine and an abort closure). Cancellation is each loop's own: asyncio cancels the
    future (the waiter then calls :meth:`unpark`), trio calls the abort function. Any other
    backend gets an ``anyio.Event``."""

    __slots__ = ("_event", "_parked", "is_set")

    def __init__(self) -> None:
        self.is_set = False
        self._parked: Any = None
        """Who waits: None, one future or trio task, or a list of them."""
        self._event: anyio.Event | None = None  # another backend's waiters

    def set(self) -> None:
        if self.is_set:
            return
        self.is_set = True
        parked, self._parked = self._parked, None
        if type(parked) is list:
            for one in parked:
                _wake(one)
        elif parked is not None:
            _wake(parked)
        if self._event is not None:
            self._event.set()

    def park(self) -> tuple[Awaitable[Any], object]:
        """What to await until :meth:`set` (not set yet), and the token :meth:`unpark`
        takes once the await is over, however it ended."""
        library = sniffio.current_async_library()
        if library == "asyncio":
            import asyncio

            future = asyncio.get_running_loop().create_future()
            self._add(future)
            return future, future
        if library == "trio":
            import trio

            task = trio.lowlevel.current_task()
            self._add(task)
            abort = functools.partial(_abort, self, task)
            return trio.lowlevel.wait_task_rescheduled(abort), task  # noqa: ASYNC105 - awaited by the caller
        if self._event is None:
            self._event = anyio.Event()
        return self._event.wait(), None

    def unpark(self, token: object) -> None:
        """``token``'s wait is over: forget it if :meth:`set` has not (a cancelled wait)."""
        parked = self._parked
        if parked is token:
            self._parked = None
        elif type(parked) is list and token in parked:
            parked.remove(token)
            if not parked:
                self._parked = None

    def _add(self, token: object) -> None:
        parked = self._parked
        if parked is None:
            self._parked = token
        elif type(parked) is list:
            parked.append(token)
        else:
            self._parked = [parked, token]


def _wake(token: Any) -> None:
    """Wake one parked waiter: a future gets its result (unless cancelled), a trio task is
    rescheduled."""
    if hasattr(token, "set_result"):
        if not token.done():
            token.set_result(None)
    else:
        import trio

        trio.lowlevel.reschedule(token)


def _abort(wakeup: DoneWakeup, task: object, _raise_cancel: object) -> Any:
    """trio is cancelling a parked wait: forget the task, let the cancellation through."""
    import trio

    wakeup.unpark(task)
    return trio.lowlevel.Abort.SUCCEEDED


_UNBOUNDED = contextlib.nullcontext()


def bounded(until: float) -> contextlib.AbstractContextManager[object]:
    """A cancel scope with ``until`` as its deadline; none at all for no deadline (a scope is
    several hundred bytes, and a wait may sleep for hours)."""
    return _UNBOUNDED if until == math.inf else anyio.CancelScope(deadline=until)
