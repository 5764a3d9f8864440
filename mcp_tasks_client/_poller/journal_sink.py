"""The journal as a sink: what the Poller records, written without holding up a wait.

Job: write a tracked task's accepted snapshots (in the background, the newest per task, the
first come first), the 2026-07-28 input keys it answered, and its outcome (its terminal
snapshot, then the outcome, before the wait wakes). Every write is bounded by the policy's
``request_timeout``; a failure is a warning (``warn``), never the end of a wait.

May import: ``journal``, ``models``, ``outcomes``, ``_exceptions``, ``port``, anyio. Of the
client's ``PollPort`` it reads the server's identity (at each write) and the codec's
``encode``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from .._exceptions import MCPTasksError
from ..journal import Journal, JournalError, recorded_outcome
from ..models import Task
from ..outcomes import Outcome
from .port import PollPort

__all__ = ["JournalSink"]


class JournalSink:
    """One Poller's writes to its Journal."""

    def __init__(
        self,
        journal: Journal,
        port: PollPort,
        timeout: float,
        warn: Callable[[MCPTasksError], None],
    ) -> None:
        self.journal = journal
        self._port = port
        self._timeout = timeout
        self._warn = warn
        self._pending: dict[str, Task] = {}
        self._wake = anyio.Event()

    def _server(self) -> str:
        """The server's identity, read at each write."""
        return self._port.transport.identity

    def snapshot(self, task_id: str, snapshot: Task) -> None:
        """An accepted snapshot: written by :meth:`run` (only the newest, if it falls behind)."""
        self._pending[task_id] = snapshot
        self._wake.set()

    async def answered(self, task_id: str, key: str) -> None:
        """A 2026-07-28 input key answered (``tasks/update`` sent)."""
        await self._journaled(self.journal.answered(self._server(), task_id, key))

    async def outcome(self, task_id: str, outcome: Outcome) -> None:
        """The terminal snapshot (the newest not yet written), then the outcome."""
        last = self._pending.pop(task_id, None) or outcome.task
        if last is not None:
            await self._journaled(self.journal.snapshot(self._server(), task_id, last))
        recorded = recorded_outcome(outcome, self._port.encode)
        await self._journaled(self.journal.finish(self._server(), task_id, recorded))

    async def run(self) -> None:
        """Write the snapshots noted, for the poller's life."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self._pending:
                task_id, snapshot = self._pending.popitem()
                await self._journaled(self.journal.snapshot(self._server(), task_id, snapshot))

    async def _journaled(self, write: Awaitable[None]) -> None:
        """One journal write, bounded by ``request_timeout``; a failure is a warning."""
        try:
            with anyio.fail_after(self._timeout):
                await write
        except MCPTasksError as exc:
            self._warn(exc)
        except TimeoutError:
            self._warn(JournalError("journal", "a write did not finish in time"))
        except Exception as exc:
            self._warn(JournalError("journal", f"{type(exc).__name__}: {exc}"))
