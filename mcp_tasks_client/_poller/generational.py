"""What the Poller does differently in each protocol generation, in one place.

Job: everything generation-specific about driving a task to its outcome:

- input: 2025-11-25 holds one blocking ``tasks/result`` open on ``input_required`` (the
  server sends its requests while it is open, C-21); 2026-07-28 answers each ``inputRequests``
  key of a snapshot not taken before, with ``tasks/update`` (E C28-C33);
- the outcome: 2025-11-25 fetches ``tasks/result`` for completed and failed (C-27: nothing
  for cancelled), keeping an early error aside (T:465); 2026-07-28 reads it inline;
- the seed rule: a 2026-07-28 CreateTaskResult never carries the outcome, so a terminal one
  is polled once, not finished from (E A-2);
- ``PollPolicy.listen`` is for 2026-07-28 only, and which notification carries status.

This is the only module of the poller that reads ``client.dialect``; the rest of the poller
asks it. Its interface to the poller is narrow: the callables and objects its constructor
takes (end a task, warn, run guarded work, the journal sink, the tracked tasks for the input
router), so that it can move behind a per-generation driver.

May import: ``registry``, ``journal_sink``, ``_client`` (the Client it calls), ``inputs``,
``_protocol``, ``_transports.base``, ``models``, ``outcomes``, ``_errors``, anyio.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

import anyio

from .._client import Client
from .._errors import (
    InputNotHandled,
    InputStuck,
    InvalidParams,
    MCPTasksError,
    RPCError,
    UsageError,
)
from .._protocol.outcome import inline_outcome, legacy_outcome
from .._protocol.scheduler import PollPolicy, UnhandledInputPolicy
from .._protocol.task_machine import Violation
from .._transports.base import ANSWERS_AT_ONCE
from ..inputs import InputRouter
from ..models import CallToolResult, CreateTaskResult, InputRequest, JSONObject, Task, TaskStatus
from .journal_sink import JournalSink
from .registry import Registry, Tracked

__all__ = ["EndTask", "Generational"]


EndTask = Callable[..., None]
"""``end(tracked, *, outcome=None, error=None)``: end a task's tracking."""


class Generational:
    """The generation-specific steps of one Poller (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        policy: PollPolicy,
        inputs: InputRouter | None,
        registry: Registry,
        journal: JournalSink | None,
        *,
        end: EndTask,
        warn: Callable[[Violation | MCPTasksError], None],
        spawn: Callable[[Tracked, Callable[[], Awaitable[None]]], None],
    ) -> None:
        if policy.listen and not client.dialect.stateless:
            raise UsageError("PollPolicy(listen=True) is for 2026-07-28 (subscriptions/listen)")
        self.client = client
        self.policy = policy
        self.inputs = inputs
        self._registry = registry
        self._journal = journal
        self._end = end
        self._warn = warn
        self._spawn = spawn
        # 2026 input handlers at once: as many as server->client requests in 2025-11-25.
        self._input_limiter = anyio.CapacityLimiter(client.limits.max_server_requests)

    @property
    def status_notification(self) -> str:
        """The method of the notification that pushes a task's status."""
        return self.client.dialect.status_notification

    def polls_seed(self, ref: object) -> bool:
        """A terminal first snapshot that must still be polled once: a 2026 CreateTaskResult
        is a base Task, never carrying the outcome (E A-2)."""
        return self.client.dialect.inline_results and isinstance(ref, CreateTaskResult)

    def released(self, tracked: Tracked) -> None:
        """Nobody waits on ``tracked`` any more: hold no ``tasks/result`` open unasked."""
        if tracked.result_scope is not None:
            tracked.result_scope.cancel()

    # -- input ---------------------------------------------------------------------------

    def needs_input(self, tracked: Tracked, snapshot: Task) -> None:
        """2025-11-25: hold a tasks/result open (the requests come on it). 2026-07-28: answer
        the snapshot's inputRequests not taken before."""
        if self.client.dialect.inline_results:
            self._serve_inputs(tracked, snapshot)
        else:
            self._open_result(tracked)

    def _serve_inputs(self, tracked: Tracked, snapshot: Task) -> None:
        requests = snapshot.input_requests or {}
        if self.inputs is None:
            if requests and self.policy.on_unhandled_input is UnhandledInputPolicy.FAIL:
                key, request = next(iter(requests.items()))
                self._end(tracked, error=InputNotHandled(tracked.task_id, request.method, key))
            return
        taken = self.inputs.take_inputs(tracked.task_id, requests)
        for key, request in taken:
            tracked.inputs_running += 1
            self._spawn(tracked, functools.partial(self._answer, tracked, key, request))
        tracked.stuck_polls = 0 if taken or tracked.inputs_running else tracked.stuck_polls + 1
        limit = self.policy.stuck_input_polls
        if limit is not None and tracked.stuck_polls >= limit:
            self._end(tracked, error=InputStuck(tracked.task_id, list(requests), limit))

    async def _answer(self, tracked: Tracked, key: str, request: InputRequest) -> None:
        """One input request: its handler, then ``tasks/update`` with its answer alone
        (partial answers are allowed, E A-10). The next poll shows what the server made of it."""
        assert self.inputs is not None
        scope = anyio.CancelScope()
        if tracked.input_scopes is None:
            tracked.input_scopes = set()
        tracked.input_scopes.add(scope)
        try:
            with scope:  # the wait ended: the question is moot, stop asking
                async with self._input_limiter:
                    response = await self.inputs.answer_input(
                        tracked.task_id, key, request, tasks=self._registry
                    )
                if response is None or tracked.done:
                    return
                await self.client.update_task(
                    tracked.task_id, {key: response}, timeout=self.policy.request_timeout
                )
                if self._journal is not None:
                    await self._journal.answered(tracked.task_id, key)
        except InvalidParams as exc:
            # The server refused this answer (a key already answered, S13 says ignore; or the
            # task is gone, which the next poll tells as such): recorded, the wait goes on.
            self._warn(exc)
        finally:
            tracked.inputs_running -= 1
            if tracked.input_scopes is not None:
                tracked.input_scopes.discard(scope)

    def _open_result(self, tracked: Tracked) -> None:
        """C-21: on input_required, one blocking tasks/result; the server sends its input
        requests while it is open (T:431-450). Never two at once for one task (T:3.2)."""
        if not self.policy.open_result_on_input_required:
            return
        if tracked.result_call is not None or not tracked.tracking:
            return
        call = tracked.result_call = anyio.Event()
        self._spawn(tracked, functools.partial(self._hold_result, tracked, call))

    async def _hold_result(self, tracked: Tracked, call: anyio.Event) -> None:
        scope = tracked.result_scope = anyio.CancelScope()
        with scope:
            await self._await_result(tracked, call)
        if scope.cancelled_caught:  # released: nobody waits on this task any more
            tracked.result_call = None
            call.set()

    async def _await_result(self, tracked: Tracked, call: anyio.Event) -> None:
        try:
            tracked.result_raw = await self.client.task_result_raw(
                tracked.task_id, timeout=self.policy.result_timeout
            )
        except MCPTasksError as exc:
            # An error answer is the outcome only once the task is known terminal: a server
            # may answer early ("not completed yet") instead of blocking (T:465). A dropped
            # stream or a timeout likewise: forget this call; a later poll that still shows
            # input_required opens a new one (the book keeps answers from repeating), and the
            # result is fetched afresh at terminal.
            if isinstance(exc, RPCError):
                tracked.early_error = exc
            self._warn(exc)
            tracked.result_call = None
            call.set()
            return
        call.set()
        # tasks/result returns once the task is terminal (T:465), but the status (completed or
        # failed, A-14) still comes from a poll, and every poll goes through the scheduler: a
        # tasks/get sent from here would ignore the floor and pollInterval (C-19), race the
        # poll in flight, poll a task nobody waits on any more (abandoned), and turn a ttl
        # deletion (-32602) into TaskNotFound instead of Expired. The next due poll finds out.

    # -- the outcome ---------------------------------------------------------------------

    async def finish(self, tracked: Tracked) -> None:
        """The terminal task's outcome (or the error that stands for it), then its end."""
        task = tracked.machine.current

        def decode(raw: JSONObject) -> CallToolResult:
            return self.client.decode(raw, CallToolResult)

        if self.client.dialect.inline_results:
            ended = inline_outcome(task, decode)
        elif task.status is TaskStatus.CANCELLED:
            ended = legacy_outcome(task, None, None, decode)
        else:
            try:
                raw = await self._terminal_result(tracked)
            except RPCError as exc:
                ended = legacy_outcome(task, None, exc, decode)
            else:
                ended = legacy_outcome(task, raw, None, decode)
        if isinstance(ended, MCPTasksError):
            self._end(tracked, error=ended)
        else:
            if self._journal is not None:
                await self._journal.outcome(tracked.task_id, ended)
            self._end(tracked, outcome=ended)

    async def _terminal_result(self, tracked: Tracked) -> JSONObject:
        """The terminal task's result: the held tasks/result's, or a new call."""
        if tracked.result_call is not None:
            await tracked.result_call.wait()
            if tracked.result_raw is not None:
                return tracked.result_raw
        token = ANSWERS_AT_ONCE.set(True)  # the task is terminal: no held connection for it
        try:
            raw = await self.client.task_result_raw(
                tracked.task_id, timeout=self.policy.result_timeout
            )
        finally:
            ANSWERS_AT_ONCE.reset(token)
        early = tracked.early_error
        if isinstance(early, RPCError):
            self._warn(
                Violation(
                    tracked.task_id,
                    "T:465",
                    f"tasks/result answered error {early.code} ({early.message!r}) before the "
                    "task was terminal; at terminal it returned a result",
                    soft=True,
                )
            )
        return raw
