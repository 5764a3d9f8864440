"""Resume: follow every open task of a journal to its end, from a new process.

``resume(journal, open_client)`` reads the journal's open tasks, takes a lease on each
(:meth:`Journal.claim`: a task another live process holds is reported :class:`Held`, not polled
twice), opens one client per server and session with the caller's ``open_client`` (the caller
owns the headers, credentials and client identity; :func:`client_for` builds the obvious one),
and waits on the tasks with a :class:`~mcp_tasks_client.Poller` that records into the journal.
Input the tasks ask for is answered by an InputRouter per client, which ``inputs`` (a
:data:`RouterFactory`) makes; one InputRouter serves only a resume that opens one client.

Each task is reported once, as a :class:`Resumed`: its Outcome; :class:`~mcp_tasks_client.Lost`
when it cannot be followed (the server forgot it, its generation-1 session expired, or it was
bound to a stdio session, which ended with its process), recorded in the journal so no later
resume tries again; the error that stopped the wait (a refused connection: the task stays open
in the journal for a later try); or Held. Nothing hangs: a ``deadline`` bounds the waits
(DeadlineExceeded for those still running, which stay open in the journal).

Worker mode (``resume(..., workers=N)``) is for many processes sharing one journal (a
:class:`~mcp_tasks_client.journal.SharedJournal`, such as the PostgreSQL one): each follows up
to N tasks, claims more as they end, and takes over the tasks of workers whose leases ran out,
until no task is open. In both modes a lease is renewed every third of its length and counts
as held for 80% of it after the request that took or renewed it: a task whose lease is not
surely this process's any more is dropped (reported Held) before another process may poll it,
and that is checked again right before each poll (a process paused past its lease, then woken,
notices before it polls). With a SharedJournal, each snapshot and the outcome are written
fenced (``finish_leased``): the statement that records checks the lease's owner and token, so
a worker that lost the task cannot record over the one that took it; its outcome is reported
only once recorded (else Held: the new holder records and reports it). A journal that fails
(a dropped connection, a restart, a statement timeout) is never the end of a task: the write
of an outcome is tried again while the lease is surely ours, then left to the next holder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import shlex
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TypeAlias

import anyio
import anyio.abc
import attrs

from . import observability as _obs
from ._client import Client, Timeouts
from ._drivers import driver_class
from ._exceptions import MCPTasksError, SessionExpired, TaskNotFound, UsageError
from ._generation import Generation
from ._io.base import Transport
from ._io.http import HttpTransport
from ._limits import Limits
from ._sansio.scheduler import PollPolicy
from .engine import Poller
from .inputs import InputRouter
from .journal import (
    Journal,
    JournalEntry,
    Lease,
    LeaseLost,
    RecordedOutcome,
    SharedJournal,
    outcome_of,
)
from .models import ClientCapabilities, Implementation, Task
from .outcomes import Lost, Outcome

log = _obs.get_logger("resume")

_RELEASE_BOUND = 10.0  # seconds for giving every lease back at the end
# A lease counts as ours for this share of it, measured on this process's clock from before
# the request that took or renewed it: polls stop before the journal could give it to another.
_LEASE_SAFE = 0.8

__all__ = ["ClientOpener", "Held", "Resumed", "RouterFactory", "client_for", "resume"]


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

RouterFactory = Callable[[Client], InputRouter]
"""Makes the InputRouter of one client ``resume`` opened (a new router each call: a router
serves one client). ``resume`` attaches it to that client and hands it to that client's
Poller; the opener declares what the routers serve (``capabilities=router.capabilities()``)."""


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
        from ._io.stdio import StdioTransport  # here: resuming HTTP tasks never loads subprocess

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


def _bound_to(client: Client, entry: JournalEntry) -> None:
    """A journaled task is bound to its endpoint: a client another server's (the caller's
    ``open_client`` pointed it elsewhere) is refused before a task id is sent, so the id,
    a bearer capability, never reaches a server it was not created on. The task stays open in
    the journal (UsageError, reported for each of its tasks)."""
    identity = client.transport.identity
    if identity != entry.server:
        raise UsageError(
            f"task {entry.task_id!r} was created on {entry.server!r}, but the client opened "
            f"for it talks to {identity!r}: resuming against another endpoint is refused"
        )


def _unresumable(entry: JournalEntry) -> str | None:
    driver = driver_class(entry.generation)
    return driver.unresumable(
        stdio=entry.server.startswith("stdio:"), kept=entry.session is not None
    )


class _Follower:
    """What both modes share: reporting, recording Lost, following claimed tasks, leases."""

    def __init__(
        self,
        journal: Journal,
        open_client: ClientOpener,
        policy: PollPolicy,
        inputs: InputRouter | RouterFactory | None,
        owner: str,
        lease: float,
        on_resumed: Callable[[Resumed], None] | None,
    ) -> None:
        self.journal = journal
        self.open_client = open_client
        self.policy = policy
        self.inputs = inputs
        self.me = owner
        self.lease = lease
        self.on_resumed = on_resumed
        self.done: list[Resumed] = []
        self.claimed: dict[tuple[str, str], JournalEntry] = {}  # leases held and renewed
        # Worker mode: leases kept, not renewed, after a wait ended (an outcome dropped the
        # lease already; a failed wait's lease runs out, and the task is tried again then).
        self.resting: dict[tuple[str, str], tuple[JournalEntry, float]] = {}
        self.scopes: dict[tuple[str, str], anyio.CancelScope] = {}  # each followed task's wait
        self.valid_until: dict[tuple[str, str], float] = {}  # anyio time a lease is sure until
        self.leases: dict[tuple[str, str], Lease] = {}  # the lease (token) each write names
        self.fenced: set[tuple[str, str]] = set()  # outcomes the journal refused: not ours
        self.unrecorded: dict[tuple[str, str], RecordedOutcome] = {}  # outcome writes failed
        self.recorded_here: dict[tuple[str, str], RecordedOutcome] = {}  # outcomes we wrote
        self.writing: dict[tuple[str, str], anyio.Event] = {}  # outcome writes in flight
        self.journaled = _FencedJournal(journal, self)
        """The journal as this process's Pollers write it: fenced by each task's lease."""

    def report(self, item: Resumed) -> None:
        if isinstance(item.ended, (Outcome, Lost)):
            # Recorded: the journal dropped the lease with it; nothing left to renew.
            self.claimed.pop((item.entry.server, item.entry.task_id), None)
            self.valid_until.pop((item.entry.server, item.entry.task_id), None)
            self.leases.pop((item.entry.server, item.entry.task_id), None)
        self.done.append(item)
        if self.on_resumed is not None:
            self.on_resumed(item)

    async def lose(self, entry: JournalEntry, reason: str) -> None:
        lost = RecordedOutcome("lost", error=reason)
        with contextlib.suppress(MCPTasksError):
            await self.journal.finish(entry.server, entry.task_id, lost)
        self.report(Resumed(entry, Lost(entry.task_id, reason, entry.snapshot)))

    def hold(self, entry: JournalEntry, since: float, lease: Lease | None = None) -> None:
        """``entry``'s lease is ours, taken by a request sent at ``since`` (anyio time);
        ``lease`` (its token) fences this process's writes of the task."""
        key = (entry.server, entry.task_id)
        self.claimed[key] = entry
        self.valid_until[key] = since + self.lease * _LEASE_SAFE
        if lease is not None:
            self.leases[key] = lease

    def sure(self, key: tuple[str, str]) -> bool:
        """The task's lease is surely this process's now (taken, and renewed in time)."""
        until = self.valid_until.get(key)
        return key in self.claimed and until is not None and anyio.current_time() < until

    def gate(self, server: str) -> Callable[[str], None]:
        """The check before each poll of ``server``'s tasks: a lease that is not surely ours
        any more (a pause past it, a journal that did not answer) drops the task and sends
        no poll (LeaseLost), whatever ran first when the process woke."""

        def before_poll(task_id: str) -> None:
            key = (server, task_id)
            if not self.sure(key):
                self._drop(key, "its lease is not surely ours before a request")
                raise LeaseLost(task_id, self.me)

        return before_poll

    def _drop(self, key: tuple[str, str], why: str) -> None:
        """Stop following a task whose lease is no longer surely ours (reported Held)."""
        log.info("task %s let go: %s", _obs.TaskId(key[1]), why)
        entry = self.claimed.pop(key, None)
        self.valid_until.pop(key, None)
        scope = self.scopes.get(key)
        if scope is not None:
            scope.cancel()  # its wait reports it as it ends (Held, or an outcome it recorded)
        elif entry is not None:
            self.report(Resumed(entry, Held(entry.task_id)))

    async def renew(self) -> None:
        """Renew every lease held, every third of a lease, in one request where the journal
        can (a SharedJournal); a lease found taken by another process is dropped."""
        while True:
            await anyio.sleep(self.lease / 3)
            keys = list(self.claimed)
            since = anyio.current_time()
            try:
                if isinstance(self.journal, SharedJournal):
                    held = await self.journal.renew(self.me, keys, self.lease)
                else:
                    held = set()
                    for server, task_id in keys:
                        if await self.journal.claim(server, task_id, self.me, self.lease):
                            held.add((server, task_id))
            except MCPTasksError:
                continue  # the guard drops what runs out before the journal answers again
            for key in keys:
                if key not in self.claimed:
                    continue  # it ended meanwhile
                if key in held:
                    self.valid_until[key] = since + self.lease * _LEASE_SAFE
                    continue
                with contextlib.suppress(MCPTasksError):
                    now = await self.journal.get(*key)
                    if now is not None and not now.is_open:
                        continue  # it ended meanwhile: its report is on its way
                # The lease ran out (this process stalled) and another took the task.
                self._drop(key, "another worker took it (its lease ran out)")

    async def guard(self) -> None:
        """Stop following, before it runs out, a lease the journal has not renewed in time: a
        process that cannot reach its journal never polls a task another may have taken."""
        while True:
            await anyio.sleep(self.lease / 10)
            now = anyio.current_time()
            for key, until in list(self.valid_until.items()):
                if until <= now and key in self.claimed:
                    self._drop(key, "its lease was not renewed in time")

    async def follow(self, mine: list[JournalEntry], deadline: float | dt.timedelta | None) -> None:
        """Follow ``mine`` (one server and session, leases held) to their ends: one client,
        one Poller, a wait per task (so a task whose lease is lost stops alone)."""
        reason = _unresumable(mine[0])
        if reason is not None:
            for entry in mine:
                await self.lose(entry, reason)
            return
        unreported = {entry.task_id: entry for entry in mine}
        try:
            async with self.open_client(mine[0]) as client:
                _bound_to(client, mine[0])  # before a task id is sent
                async with (
                    Poller(
                        client,
                        self.policy,
                        inputs=self.router_of(client),
                        journal=self.journaled,
                        before_poll=self.gate(mine[0].server),
                    ) as poller,
                    anyio.create_task_group() as group,
                ):
                    for entry in mine:
                        group.start_soon(
                            self._follow_one, client, poller, entry, deadline, unreported
                        )
        except SessionExpired as exc:  # at the client's first request
            for entry in list(unreported.values()):
                await self.lose(entry, f"its session expired ({exc})")
        except MCPTasksError as exc:  # the client could not be opened, or closed badly
            for entry in list(unreported.values()):
                self.report(Resumed(entry, exc))

    def router_of(self, client: Client) -> InputRouter | None:
        """The router that answers ``client``'s input, attached to it: the caller's one router
        (attached once), or a new one from the caller's RouterFactory."""
        inputs = self.inputs
        if inputs is None:
            return None
        router = inputs if isinstance(inputs, InputRouter) else inputs(client)
        router.attach(client)
        return router

    async def _follow_one(
        self,
        client: Client,
        poller: Poller,
        entry: JournalEntry,
        deadline: float | dt.timedelta | None,
        unreported: dict[str, JournalEntry],
    ) -> None:
        key = (entry.server, entry.task_id)
        trace = _continue_trace(client, entry)
        ended: Ended = Held(entry.task_id)
        with anyio.CancelScope() as scope:
            self.scopes[key] = scope
            try:
                known = False
                try:
                    self.gate(entry.server)(entry.task_id)
                    ref = await client.get_task(entry.task_id)
                    known = True
                    ended = await poller.wait(ref, deadline=deadline)
                    if isinstance(ended, Outcome):
                        await self._recorded(key, ended)
                except TaskNotFound as exc:
                    del unreported[entry.task_id]
                    how = "forgot it" if known else "does not know it"
                    await self.lose(entry, f"the server {how} ({exc})")
                    return
                except SessionExpired as exc:
                    del unreported[entry.task_id]
                    await self.lose(entry, f"its session expired ({exc})")
                    return
                except LeaseLost:
                    ended = Held(entry.task_id)
                except MCPTasksError as exc:
                    ended = exc
            finally:
                self.scopes.pop(key, None)
                if trace is not None:  # a wait that ended without an outcome (lost, failed)
                    trace.end({"mcp_tasks.outcome": "not followed"})
        unreported.pop(entry.task_id, None)
        writing = self.writing.get(key)
        if writing is not None:  # the Poller's write of its outcome, still in flight
            with anyio.move_on_after(self.lease):
                await writing.wait()
        recorded = self.recorded_here.pop(key, None) or await self._written(key)
        if scope.cancel_called or isinstance(ended, Held):
            # Dropped (its lease no longer surely ours): Held, unless this process recorded
            # the task's outcome before it let go; then that outcome is its to report (no
            # other worker will: the task has ended in the journal).
            if recorded is None:
                ended = Held(entry.task_id)
            elif not isinstance(ended, Outcome):
                read = outcome_of(attrs.evolve(entry, outcome=recorded))
                ended = read if not isinstance(read, Lost) else Held(entry.task_id)
        self.report(Resumed(entry, ended))

    async def _written(self, key: tuple[str, str]) -> RecordedOutcome | None:
        """The outcome this process was writing when its wait was cancelled, if the journal
        holds it (the write went through; the cancellation came as it returned)."""
        writing = self.unrecorded.pop(key, None)
        self.fenced.discard(key)
        if writing is None:
            return None
        try:
            now = await self.journal.get(*key)
        except MCPTasksError:
            return None  # unknown: reported Held; the journal says what became of it
        return writing if now is not None and now.outcome == writing else None

    async def _recorded(self, key: tuple[str, str], outcome: Outcome) -> None:
        """The outcome the Poller wrote is in the journal, or this process lets the task go:
        an outcome write that failed (the journal unreachable) is tried again while the lease
        is surely ours; one the fence refused, or still unwritten when the lease is no longer
        sure, drops the task (reported Held: the next holder records and reports it)."""
        delay = 0.1
        while key in self.unrecorded and key not in self.fenced and self.sure(key):
            await anyio.sleep(delay)
            delay = min(2.0, delay * 2)
            with contextlib.suppress(MCPTasksError):
                await self.journaled.finish(*key, self.unrecorded[key])
        if key in self.fenced or key in self.unrecorded:
            self.fenced.discard(key)
            self.unrecorded.pop(key, None)
            self._drop(key, "its outcome was not recorded under its lease")

    async def release_all(self) -> None:
        # Shielded, so a cancelled resume still gives its leases back; bounded, so a journal
        # that hangs cannot hold it (an unreleased lease simply runs out).
        with anyio.CancelScope(shield=True), anyio.move_on_after(_RELEASE_BOUND):
            held = [*self.claimed.values(), *(entry for entry, _ in self.resting.values())]
            for entry in held:
                with contextlib.suppress(MCPTasksError):
                    await self.journal.release(entry.server, entry.task_id, self.me)
            self.claimed.clear()
            self.resting.clear()


class _FencedJournal:
    """The journal as a worker's Pollers write it: a task this worker leases is written with its
    lease (owner and token) checked by the statement that writes (``snapshot_leased``,
    ``finish_leased`` of a SharedJournal), so a write after another worker took the task over
    changes nothing; the refusal is noted (``fenced``) for the follower. An outcome write
    that fails is noted too (``unrecorded``) and raised, for the Poller's sink to warn of.
    Everything else goes to the journal as it is."""

    def __init__(self, journal: Journal, follower: _Follower) -> None:
        self.journal = journal
        self.follower = follower

    def _lease(self, server: str, task_id: str) -> tuple[SharedJournal, Lease | None] | None:
        """The shared journal and the task's lease (None: unknown, the journal would not say);
        None for a journal without leases to fence by."""
        if not isinstance(self.journal, SharedJournal):
            return None
        return self.journal, self.follower.leases.get((server, task_id))

    async def record(self, entry: JournalEntry) -> None:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        await self.journal.record(entry)

    async def snapshot(self, server: str, task_id: str, snapshot: Task) -> None:
        """Fenced by the task's lease. Deadline and Cancelled: as the journal's statement."""
        leased = self._lease(server, task_id)
        if leased is None:
            await self.journal.snapshot(server, task_id, snapshot)
        elif not self.follower.sure((server, task_id)):
            return  # let go: the next holder writes its own
        elif leased[1] is None:
            await self.journal.snapshot(server, task_id, snapshot)
        else:
            # Refused (another worker took it, or its outcome came first): nothing to do; the
            # outcome's own write is fenced the same way.
            await leased[0].snapshot_leased(server, task_id, snapshot, leased[1])

    async def answered(self, server: str, task_id: str, key: str) -> None:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        await self.journal.answered(server, task_id, key)

    async def finish(self, server: str, task_id: str, outcome: RecordedOutcome) -> None:
        """Fenced by the task's lease. Deadline and Cancelled: as the journal's statement."""
        key = (server, task_id)
        follower = self.follower
        leased = self._lease(server, task_id)
        if leased is not None and not follower.sure(key):
            follower.fenced.add(key)  # let go already: the next holder records it
            return
        lease = leased[1] if leased is not None else None
        follower.unrecorded[key] = outcome  # until the write is known done
        done = follower.writing[key] = anyio.Event()
        try:
            refused = False
            if leased is None or lease is None:
                await self.journal.finish(server, task_id, outcome)
            elif not await leased[0].finish_leased(server, task_id, outcome, lease):
                # Refused: fenced, or recorded already; by this very write (tried again after
                # a connection broke past its commit) when the journal holds this outcome.
                now = await self.journal.get(server, task_id)
                refused = now is None or now.outcome != outcome
            if refused:
                follower.fenced.add(key)
            else:
                follower.fenced.discard(key)
                follower.recorded_here[key] = outcome
            follower.unrecorded.pop(key, None)
        finally:
            done.set()
            if follower.writing.get(key) is done:
                del follower.writing[key]

    async def get(self, server: str, task_id: str) -> JournalEntry | None:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        return await self.journal.get(server, task_id)

    async def entries(self, *, open_only: bool = False) -> Sequence[JournalEntry]:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        return await self.journal.entries(open_only=open_only)

    async def claim(self, server: str, task_id: str, owner: str, lease: float) -> bool:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        return await self.journal.claim(server, task_id, owner, lease)

    async def release(self, server: str, task_id: str, owner: str) -> None:
        """As the journal's. Deadline and Cancelled: as the journal's statement."""
        await self.journal.release(server, task_id, owner)


def _continue_trace(client: Client, entry: JournalEntry) -> _obs.TaskTrace | None:
    """The resumed task's span, when spans are on: a child of the span recorded with the task
    (a remote parent: the trace id stays the task's, whichever process started it), so its
    first poll, the rest of its polls and its outcome join the task's trace."""
    if not client.tracing.enabled:
        return None
    return client.task_traces.track(
        entry.task_id,
        {
            "mcp_tasks.task.id": client.redaction.label(entry.task_id),
            "mcp_tasks.generation": entry.generation.value,
            "mcp_tasks.resumed": True,
        },
        parent=_obs.remote_context(entry.traceparent, entry.tracestate),
    )


def _group(entries: list[JournalEntry]) -> list[list[JournalEntry]]:
    """``entries`` by server, generation and session: one client follows each group."""
    groups: dict[tuple[str, Generation, str | None], list[JournalEntry]] = {}
    for entry in entries:
        session = entry.session.session_id if entry.session is not None else None
        groups.setdefault((entry.server, entry.generation, session), []).append(entry)
    return list(groups.values())


async def resume(
    journal: Journal,
    open_client: ClientOpener,
    *,
    policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
    inputs: InputRouter | RouterFactory | None = None,
    deadline: float | dt.timedelta | None = None,
    owner: str | None = None,
    lease: float = 60.0,
    on_resumed: Callable[[Resumed], None] | None = None,
    workers: int | None = None,
    idle: float = 1.0,
) -> list[Resumed]:
    """Each open task of ``journal``, followed to its end; ``on_resumed`` sees each one the
    moment it ends (the list comes back in that order).

    ``owner`` names this process in the leases (default: host, pid and a random suffix);
    leases last ``lease`` seconds and are renewed while the tasks are followed, and released
    when this ends.

    ``inputs`` answers the tasks' input requests, as for a Poller: a
    :data:`RouterFactory` (a function of a client that makes its InputRouter), called for each
    client this opens, or one InputRouter, for a resume that opens one client (the open tasks
    are of one server and, in 2025-11-25, one session; not in worker mode, which opens a client
    per claim): else UsageError, before anything is claimed. Each router is attached to its
    client here (the opener declares what it serves). Give each router the shared journal
    (``InputRouter(journal=...)``) and a key answered by one worker is never answered by
    another.

    Worker mode (``workers=N``), for many processes sharing one journal: follow at most N
    tasks at once, claiming due tasks (open, no live lease) as capacity frees, until the
    journal holds no open task, ``deadline`` passes, or the caller cancels. Tasks other
    workers hold are not reported Held but looked at again every ``idle`` seconds: when a
    worker dies, its leases run out and this one takes its tasks over. A task whose wait
    failed (an unreachable server) keeps its lease until it runs out, and is then tried
    again, by any worker; it is reported each time.
    """
    if lease <= 0:
        raise UsageError("lease must be positive (seconds)")
    me = owner or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    follower = _Follower(journal, open_client, policy, inputs, me, lease, on_resumed)
    if workers is not None:
        if workers < 1:
            raise UsageError("workers must be at least 1")
        if idle <= 0:
            raise UsageError("idle must be positive (seconds)")
        if isinstance(inputs, InputRouter):
            raise UsageError(
                "worker mode opens a client for each batch of tasks it claims, and an "
                "InputRouter serves one client: pass inputs= a function of the client that "
                "makes its router (RouterFactory)"
            )
        await _work(follower, workers, deadline, idle)
        return follower.done
    groups = _group(list(await journal.entries(open_only=True)))
    if isinstance(inputs, InputRouter) and len(groups) > 1:
        raise UsageError(
            f"the journal's open tasks need {len(groups)} clients (one per server and, in "
            "2025-11-25, session), and an InputRouter serves one client: pass inputs= a "
            "function of the client that makes its router (RouterFactory)"
        )

    async def claim_and_follow(group: list[JournalEntry]) -> None:
        mine: list[JournalEntry] = []
        for entry in group:
            since = anyio.current_time()
            try:
                got = await journal.claim(entry.server, entry.task_id, me, lease)
            except MCPTasksError as exc:  # the journal failed: this task is not followed
                follower.report(Resumed(entry, exc))
                continue
            if got:
                mine.append(entry)
                token = None
                if isinstance(journal, SharedJournal):
                    with contextlib.suppress(MCPTasksError):
                        token = await journal.lease_of(entry.server, entry.task_id)
                follower.hold(entry, since, token if token and token.owner == me else None)
            else:
                follower.report(Resumed(entry, Held(entry.task_id)))
        if mine:
            await follower.follow(mine, deadline)

    try:
        async with anyio.create_task_group() as outer:
            outer.start_soon(follower.renew)
            outer.start_soon(follower.guard)
            async with anyio.create_task_group() as inner:
                for group in groups:
                    inner.start_soon(claim_and_follow, group)
            outer.cancel_scope.cancel()
    finally:
        await follower.release_all()
    return follower.done


async def _claim_due(
    journal: Journal, owner: str, lease: float, limit: int
) -> Sequence[JournalEntry]:
    """Up to ``limit`` due tasks, leased to ``owner``: in one statement where the journal can
    (a SharedJournal), else one lease at a time over its open tasks."""
    if isinstance(journal, SharedJournal):
        return await journal.claim_due(owner, lease, limit)
    taken: list[JournalEntry] = []
    for entry in await journal.entries(open_only=True):
        if len(taken) == limit:
            break
        if await journal.claim(entry.server, entry.task_id, owner, lease):
            taken.append(entry)
    return taken


async def _work(
    follower: _Follower, workers: int, deadline: float | dt.timedelta | None, idle: float
) -> None:
    journal = follower.journal
    if isinstance(deadline, dt.timedelta):
        deadline = deadline.total_seconds()
    end = anyio.current_time() + deadline if deadline is not None else math.inf
    freed = anyio.Event()  # set when a followed group ends: room to claim more
    following: dict[tuple[str, str], JournalEntry] = {}

    async def follow(group: list[JournalEntry]) -> None:
        try:
            left = None if end == math.inf else max(0.0, end - anyio.current_time())
            await follower.follow(group, left)
        finally:
            for entry in group:
                key = (entry.server, entry.task_id)
                following.pop(key, None)
                follower.claimed.pop(key, None)
                follower.valid_until.pop(key, None)
                follower.leases.pop(key, None)
                follower.resting[key] = (entry, anyio.current_time() + follower.lease)
            freed.set()

    try:
        async with anyio.create_task_group() as outer:
            outer.start_soon(follower.renew)
            outer.start_soon(follower.guard)
            async with anyio.create_task_group() as running:
                while anyio.current_time() < end:
                    freed = anyio.Event()  # before claiming: a group ending meanwhile counts
                    room = workers - len(following)
                    got: Sequence[JournalEntry] = []
                    if room > 0:
                        since = anyio.current_time()
                        try:
                            got = await _claim_due(journal, follower.me, follower.lease, room)
                        except MCPTasksError:  # the journal is unreachable: try again later
                            got = []
                        # One of ours whose renewal came late is due again: still ours.
                        got = [e for e in got if (e.server, e.task_id) not in following]
                        for entry in got:
                            key = (entry.server, entry.task_id)
                            following[key] = entry
                            follower.hold(entry, since, entry.lease)
                            follower.resting.pop(key, None)
                        for group in _group(got):
                            running.start_soon(follow, group)
                    now = anyio.current_time()
                    for key, (_, until) in list(follower.resting.items()):
                        if until < now:
                            del follower.resting[key]  # run out: nothing left to release
                    if not following and not got:
                        with contextlib.suppress(MCPTasksError):
                            if not await journal.entries(open_only=True):
                                break  # nothing open anywhere: the work is done
                    with anyio.move_on_after(min(idle, max(0.0, end - anyio.current_time()))):
                        await freed.wait()
            outer.cancel_scope.cancel()
    finally:
        await follower.release_all()
