"""Resume: follow every open task of a journal to its end, from a new process.

``resume(journal, open_client)`` reads the journal's open tasks, takes a lease on each
(:meth:`Journal.claim`: a task another live process holds is reported :class:`Held`, not polled
twice), opens one client per server and session with the caller's ``open_client`` (the caller
owns the headers, credentials and client identity; :func:`client_for` builds the obvious one),
and waits on the tasks with a :class:`~mcp_tasks_client.Poller` that records into the journal.

Each task is reported once, as a :class:`Resumed`: its Outcome; :class:`~mcp_tasks_client.Lost`
when it cannot be followed (the server forgot it, its generation-1 session expired, or it was
bound to a stdio session, which ended with its process), recorded in the journal so no later
resume tries again; the error that stopped the wait (a refused connection: the task stays open
in the journal for a later try); or Held. Nothing hangs: a ``deadline`` bounds the waits
(DeadlineExceeded for those still running, which stay open in the journal).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shlex
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TypeAlias

import anyio
import anyio.abc
import attrs

from ._client import Client, Timeouts
from ._drivers import driver_class
from ._errors import MCPTasksError, SessionExpired, TaskNotFound, UsageError
from ._generation import Generation
from ._limits import Limits
from ._protocol.scheduler import PollPolicy
from ._transports.base import Transport
from ._transports.http import HttpTransport
from ._transports.stdio import StdioTransport
from .engine import Poller
from .inputs import InputRouter
from .journal import Journal, JournalEntry, RecordedOutcome
from .models import ClientCapabilities, Implementation, Task
from .outcomes import Lost, Outcome

_RELEASE_BOUND = 10.0  # seconds for giving every lease back at the end

__all__ = ["ClientOpener", "Held", "Resumed", "client_for", "resume"]


@attrs.frozen
class Held:
    """Another process holds this task's lease (it is polling it); it was left alone."""

    task_id: str


Ended: TypeAlias = Outcome | Lost | Held | MCPTasksError


@attrs.frozen
class Resumed:
    """One journaled task and how its resumption ended."""

    entry: JournalEntry
    ended: Ended


ClientOpener = Callable[[JournalEntry], AbstractAsyncContextManager[Client]]
"""Opens a client for the server (and generation-1 session) of an entry."""


def client_for(
    entry: JournalEntry,
    *,
    client_info: Implementation,
    capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen value
    limits: Limits = Limits(),  # noqa: B008 - frozen value
) -> Client:
    """The client an entry was made with, as far as the journal knows it: HTTP to its URL
    (with ``headers``: credentials are never journaled), resuming its generation-1 session
    without ``initialize`` and keeping it on close; or its stdio command, started anew.

    A generation-1 entry with no session (stdio) cannot be resumed: UsageError.
    """
    transport: Transport
    driver = driver_class(entry.generation)
    stdio = entry.server.startswith("stdio:")
    why = driver.unresumable(stdio=stdio, kept=entry.session is not None)
    if why is not None:
        raise UsageError(f"task {entry.task_id!r} was {why}")
    session = entry.session
    resume = driver.resumed_session(session.initialize if session is not None else None)
    if stdio:
        transport = StdioTransport(shlex.split(entry.server[len("stdio:") :]), env=env)
    else:
        transport = HttpTransport(
            entry.server,
            headers=headers,
            session_id=session.session_id if session is not None else None,
            delete_session_on_close=False,
        )
    return Client(
        transport,
        generation=entry.generation,
        client_info=client_info,
        capabilities=capabilities,
        timeouts=timeouts,
        limits=limits,
        resume=resume,
    )


def _unresumable(entry: JournalEntry) -> str | None:
    driver = driver_class(entry.generation)
    return driver.unresumable(
        stdio=entry.server.startswith("stdio:"), kept=entry.session is not None
    )


async def resume(
    journal: Journal,
    open_client: ClientOpener,
    *,
    policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
    inputs: InputRouter | None = None,
    deadline: float | dt.timedelta | None = None,
    owner: str | None = None,
    lease: float = 60.0,
    on_resumed: Callable[[Resumed], None] | None = None,
) -> list[Resumed]:
    """Each open task of ``journal``, followed to its end; ``on_resumed`` sees each one the
    moment it ends (the list comes back in that order).

    ``owner`` names this process in the leases (default: host, pid and a random suffix);
    leases last ``lease`` seconds and are renewed while the tasks are followed, and released
    when this ends. ``inputs`` answers the tasks' input requests, as for a Poller.
    """
    if lease <= 0:
        raise UsageError("lease must be positive (seconds)")
    me = owner or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    entries = await journal.entries(open_only=True)
    groups: dict[tuple[str, Generation, str | None], list[JournalEntry]] = {}
    for entry in entries:
        session = entry.session.session_id if entry.session is not None else None
        groups.setdefault((entry.server, entry.generation, session), []).append(entry)
    done: list[Resumed] = []
    claimed: list[JournalEntry] = []

    def report(item: Resumed) -> None:
        done.append(item)
        if on_resumed is not None:
            on_resumed(item)

    async def lose(entry: JournalEntry, reason: str) -> None:
        lost = RecordedOutcome("lost", error=reason)
        with contextlib.suppress(MCPTasksError):
            await journal.finish(entry.server, entry.task_id, lost)
        report(Resumed(entry, Lost(entry.task_id, reason, entry.snapshot)))

    async def renew() -> None:
        while True:
            await anyio.sleep(lease / 3)
            for entry in list(claimed):
                with contextlib.suppress(MCPTasksError):
                    await journal.claim(entry.server, entry.task_id, me, lease)

    async def follow(group: list[JournalEntry]) -> None:
        mine: list[JournalEntry] = []
        for entry in group:
            try:
                got = await journal.claim(entry.server, entry.task_id, me, lease)
            except MCPTasksError as exc:  # the journal failed: this task is not followed
                report(Resumed(entry, exc))
                continue
            if got:
                mine.append(entry)
                claimed.append(entry)
            else:
                report(Resumed(entry, Held(entry.task_id)))
        if not mine:
            return
        reason = _unresumable(mine[0])
        if reason is not None:
            for entry in mine:
                await lose(entry, reason)
            return
        pending = {entry.task_id: entry for entry in mine}
        try:
            async with (
                open_client(mine[0]) as client,
                Poller(client, policy, inputs=inputs, journal=journal) as poller,
            ):
                refs: list[Task] = []
                for entry in mine:
                    try:
                        refs.append(await client.get_task(entry.task_id))
                    except TaskNotFound as exc:
                        del pending[entry.task_id]
                        await lose(entry, f"the server does not know it ({exc})")
                async for task_id, ended in poller.as_completed(refs, deadline=deadline):
                    entry = pending.pop(task_id)
                    if isinstance(ended, TaskNotFound):
                        await lose(entry, f"the server forgot it ({ended})")
                    else:
                        report(Resumed(entry, ended))
        except SessionExpired as exc:
            for entry in list(pending.values()):
                await lose(entry, f"its session expired ({exc})")
        except MCPTasksError as exc:
            for entry in pending.values():
                report(Resumed(entry, exc))

    try:
        async with anyio.create_task_group() as outer:
            outer.start_soon(renew)
            async with anyio.create_task_group() as inner:
                for group in groups.values():
                    inner.start_soon(follow, group)
            outer.cancel_scope.cancel()
    finally:
        # Shielded, so a cancelled resume still gives its leases back; bounded, so a journal
        # that hangs cannot hold it (an unreleased lease simply runs out).
        with anyio.CancelScope(shield=True), anyio.move_on_after(_RELEASE_BOUND):
            for entry in claimed:
                with contextlib.suppress(MCPTasksError):
                    await journal.release(entry.server, entry.task_id, me)
    return done
