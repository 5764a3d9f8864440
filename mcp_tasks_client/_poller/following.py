"""How the Poller follows each tracked task through its generation's driver.

Job: the seam between the Poller and the client's generation driver (``_drivers``). The driver
decides what differs by generation: how a task's input arrives and is answered (2025-11-25: a
blocking ``tasks/result`` held open on ``input_required``, C-21; 2026-07-28: each snapshot's
``inputRequests``, E C28-C33), how its outcome is fetched (``tasks/result`` or inline), the seed
rule (E A-2), which notification pushes status, and whether a listen is possible. This module
makes one driver follower per tracked task on first need (``TaskFollow``) and gives it a
:class:`_FollowLink` to act through: the requests it may send for that task, the Poller's guarded
task group, its warnings. It never branches on a generation.

Which 2026-07-28 ``inputRequests`` keys are served is the Tracker's decision (each once, E
C30-C31; a stuck task, ``PollPolicy.stuck_input_polls``; too many keys; no handlers): its
``ServeInput`` action names them, and only those reach the InputRouter when the follower hands
the snapshot back (``TaskLink.serve_inputs``). The router runs each key's handler
(``InputRouter.answer_input``); its answer is told to the Tracker (``AnswerReady``), and sent
only when the Tracker says so (``SendUpdate``: once, while the task is polled) through the
router's batches (``InputRouter.send_task_answer``); a key the router does not take (another
worker of a shared journal took it) is not answered here. What stays here is the Poller's
share: the taken keys queued on the task and drained by at most ``Limits.max_server_requests``
workers per task (never one anyio task per key: a snapshot may carry tens of thousands), at most
``Limits.max_server_requests`` handlers at once in all, the workers cancelled and the queue
dropped when the task's tracking ends, each key's end told to the Tracker (``InputAnswered``),
an answered one recorded in the journal (``RecordAnswer``) and, after a round's last answer,
the poll the Tracker held back for it handed to the Poller's ``perform``, and what a busy
``tasks/update`` (HTTP 429/503) does (``PollPolicy.on_busy``: the ServerBusy ends the task's
waits, or the same answers are sent again after the busy rule's wait, with a ``BackedOff``
warning).

May import: ``registry``, ``journal_sink``, ``port`` (the client it calls), ``_drivers``,
``inputs``, ``_sansio``, ``models``, ``outcomes``, ``_exceptions``, anyio.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from .._drivers import TaskFollow
from .._exceptions import BackedOff, InvalidParams, LimitExceeded, MCPTasksError, ServerBusy
from .._sansio.scheduler import BusyPolicy, PollPolicy
from .._sansio.task_machine import Violation
from .._sansio.tracker import (
    Action,
    AnswerReady,
    InputAnswered,
    RecordAnswer,
    SendUpdate,
    Tracker,
)
from ..inputs import InputRouter
from ..models import CallToolResult, InputRequest, JSONObject, Task
from ..outcomes import Outcome
from .journal_sink import JournalSink
from .port import PollPort
from .registry import Tracked

__all__ = ["EndTask", "Following"]


EndTask = Callable[..., None]
"""``end(tracked, *, outcome=None, error=None)``: end a task's tracking."""


class Following:
    """The driver followers of one Poller's tasks (see the module docstring)."""

    def __init__(
        self,
        client: PollPort,
        policy: PollPolicy,
        inputs: InputRouter | None,
        tracker: Tracker,
        journal: JournalSink | None,
        *,
        end: EndTask,
        perform: Callable[[Sequence[Action]], None],
        warn: Callable[[Violation | MCPTasksError], None],
        spawn: Callable[[Tracked, Callable[[], Awaitable[None]]], None],
        before_outcome: Callable[[str], None] | None = None,
    ) -> None:
        if policy.listen:
            client.driver.check_listen()
        self.client = client
        self.policy = policy
        self.inputs = inputs
        self._tracker = tracker
        self._journal = journal
        # The keys of the ServeInput being carried out (the follower hands back the snapshot).
        self._asked: tuple[tuple[str, InputRequest], ...] = ()
        self._end = end
        self._perform = perform  # the Poller's: carry out the Tracker's actions
        self._warn = warn
        self._spawn = spawn
        self._before_outcome = before_outcome  # the Poller's before_poll, for the fetch too
        # 2026 input handlers at once: as many as server->client requests in 2025-11-25.
        self._input_limiter = anyio.CapacityLimiter(client.limits.max_server_requests)
        self._workers_per_task = client.limits.max_server_requests

    @property
    def status_notification(self) -> str:
        """The method of the notification that pushes a task's status."""
        return self.client.driver.status_notification

    def polls_seed(self, ref: object) -> bool:
        """A terminal first snapshot that must still be polled once (the driver's seed rule)."""
        return not self.client.driver.seed_is_news(ref)

    def follow(self, tracked: Tracked) -> TaskFollow:
        """The task's follower from the client's driver, made on first need."""
        if tracked.follow is None:
            tracked.follow = self.client.driver.follow(_FollowLink(self, tracked), self.policy)
            if self.inputs is not None and tracked.tracking:
                self.inputs.hold(tracked.task_id)  # its questions are never forgotten now
        return tracked.follow

    def released(self, tracked: Tracked) -> None:
        """Nobody waits on ``tracked`` any more: the follower lets go of what it holds."""
        if tracked.follow is not None:
            tracked.follow.stop()
        self.ended(tracked)

    def ended(self, tracked: Tracked) -> None:
        """``tracked``'s tracking ended: the router's memory of its keys becomes bounded."""
        if self.inputs is not None:
            self.inputs.release(tracked.task_id)

    def needs_input(
        self, tracked: Tracked, snapshot: Task, keys: tuple[tuple[str, InputRequest], ...]
    ) -> None:
        """The Tracker's ``ServeInput``: the follower knows where the input comes from (the
        snapshot's ``keys``, 2026-07-28; a held ``tasks/result``, 2025-11-25)."""
        if tracked.tracking:
            self._asked = keys
            try:
                self.follow(tracked).input_required(snapshot)
            finally:
                self._asked = ()

    async def outcome(self, tracked: Tracked) -> Outcome | MCPTasksError:
        """The terminal task's outcome (or the error that stands for it). The Poller's
        ``before_poll`` is asked first, as for a poll: a fetch (``tasks/result``) and the
        journal's record are actions too."""
        if self._before_outcome is not None:
            self._before_outcome(tracked.task_id)
        return await self.follow(tracked).outcome(tracked.machine.current)

    # -- 2026-07-28 inputRequests, handed back by the follower ---------------------------

    def serve_inputs(self, tracked: Tracked, snapshot: Task) -> None:
        """The keys the Tracker asked to serve (never the snapshot's others) to the router."""
        requests = dict(self._asked)
        if self.inputs is None or not requests:
            return  # with no router the Tracker decided already (UnhandledInputPolicy)
        try:
            taken = self.inputs.take_inputs(tracked.task_id, requests)
        except LimitExceeded as exc:  # never forget a key: the task fails instead
            self._end(tracked, error=exc)
            return
        if len(taken) < len(requests):  # taken before by this router (or another worker)
            mine = {key for key, _ in taken}
            for key in requests.keys() - mine:
                self._perform(self._tracker.handle(InputAnswered(tracked.task_id, key, False)))
        if taken:
            if tracked.input_queue is None:
                tracked.input_queue = collections.deque()
            tracked.input_queue.extend(taken)
            wanted = min(len(tracked.input_queue), self._workers_per_task)
            for _ in range(wanted - tracked.input_workers):
                tracked.input_workers += 1
                self._spawn(tracked, functools.partial(self._drain, tracked))

    async def _drain(self, tracked: Tracked) -> None:
        """One worker of ``tracked``'s queue of taken keys: each answered by the InputRouter
        (its handler, then ``tasks/update`` with its answer alone: partial answers are
        allowed, E A-10); the next poll shows what the server made of them. Cancelled when the
        task's tracking ends."""
        scope = anyio.CancelScope()
        if tracked.input_scopes is None:
            tracked.input_scopes = set()
        tracked.input_scopes.add(scope)
        queue = tracked.input_queue
        try:
            with scope:  # the wait ended: the questions are moot, stop asking
                while queue and not tracked.done:
                    key, request = queue.popleft()
                    await self._answer(tracked, key, request)
        finally:
            tracked.input_workers -= 1
            tracked.input_scopes.discard(scope)

    async def _answer(self, tracked: Tracked, key: str, request: InputRequest) -> None:
        """One input request: its handler run by the InputRouter; its answer sent when the
        Tracker says so (``SendUpdate``: the task is still polled), by the router's batches."""
        assert self.inputs is not None
        task_id, tracker = tracked.task_id, self._tracker
        sent = False
        async with self._input_limiter:
            answer = await self.inputs.answer_input(task_id, key, request, tasks=tracker)
            ready = () if answer is None else tracker.handle(AnswerReady(task_id, key, answer))
            for action in ready:
                if isinstance(action, SendUpdate):
                    try:
                        sent = await self.inputs.send_task_answer(
                            task_id,
                            key,
                            action.answer,
                            timeout=self.policy.request_timeout,
                            busy=functools.partial(self._busy_update, tracked),
                        )
                    except InvalidParams as exc:
                        # The server refused this answer (a key already answered, S13 says
                        # ignore; or the task is gone, which the next poll tells as such):
                        # recorded, the wait goes on.
                        self._warn(exc)
        for action in tracker.handle(InputAnswered(task_id, key, sent)):
            if isinstance(action, RecordAnswer):
                if self._journal is not None:
                    await self._journal.answered(action.task_id, action.key)
            else:  # the round's last answer: the poll held back for it goes out
                self._perform((action,))

    def _busy_update(self, tracked: Tracked, busy: ServerBusy, in_row: int) -> float | None:
        """The wait before a busy ``tasks/update`` of ``tracked`` is sent again (None: the
        ServerBusy ends the task's waits), by the same rule as a busy poll."""
        policy = self.policy
        if policy.on_busy is BusyPolicy.FAIL:
            return None
        current = tracked.machine.current
        interval = None if current.poll_interval is None else current.poll_interval / 1000.0
        wait = policy.busy_wait(in_row, busy.retry_after, interval)
        if wait is not None:
            self._warn(BackedOff(busy, tracked.task_id, wait, in_row))
        return wait


class _FollowLink:
    """What one tracked task's driver follower may do through the Poller (``TaskLink``)."""

    __slots__ = ("_following", "_tracked", "task_id")

    def __init__(self, following: Following, tracked: Tracked) -> None:
        self._following = following
        self._tracked = tracked
        self.task_id = tracked.task_id

    async def task_result(self, *, held: bool) -> JSONObject:
        client, timeout = self._following.client, self._following.policy.result_timeout
        return await client.task_result_raw(self.task_id, timeout=timeout, held=held)

    def serve_inputs(self, snapshot: Task) -> None:
        self._following.serve_inputs(self._tracked, snapshot)

    def start_soon(self, work: Callable[[], Awaitable[None]]) -> None:
        self._following._spawn(self._tracked, work)

    def warn(self, problem: Any) -> None:
        self._following._warn(problem)

    def decode_result(self, raw: JSONObject) -> CallToolResult:
        return self._following.client.decode(raw, CallToolResult)
