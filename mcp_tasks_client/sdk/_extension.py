"""The ``io.modelcontextprotocol/tasks`` extension for the official SDK's ``mcp.Client`` (2.x).

Its one job: to be what a host passes to ``mcp.Client(server, extensions=[TasksExtension(...)])``
so that a ``tools/call`` the server answers with ``resultType: "task"`` is driven to its end by
this library's engine over the SDK's own session, and the host's ``call_tool`` returns the
``CallToolResult`` it promises.

May import: the ``sdk`` package's front (``open_client``), ``engine``, ``inputs``, ``journal``,
``_generation``, ``outcomes``, ``models``, and ``mcp`` 2.x (this module is imported only when
``TasksExtension`` is named).

Theory of operation. Constructing the extension is the opt-in; everything else is an argument:
the poll policy, the input router (a function of the Client that makes one, since a router
serves one client), the journal, the deadline and cancel-on-abandon. The SDK stamps an
extension's capability on every request of the ``mcp.Client`` that holds it, so the server
may make any call of that client a task: the opt-in is per SDK client, not per call (a host
that wants the per-call choice leaves the extension out and starts its tasks through
:func:`~mcp_tasks_client.sdk.open_client`: that declares the extension on those requests
alone). The claim's ``resolve`` opens
a Client over ``ctx.session`` (nothing is sent to open it), reads the claimed answer as the
created task, waits for it with a Poller, and returns its result; an outcome without one
raises :class:`~mcp_tasks_client.sdk.TaskNotCompleted`.
"""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Callable
from typing import Any, Literal

import attrs
import mcp_types
import pydantic
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from pydantic import ConfigDict, Field

from .._client import Client
from .._generation import Generation
from .._io.sdk_session import SdkSessionBridge, deliver_pushed
from .._sansio.scheduler import PollPolicy
from ..engine import Poller
from ..inputs import InputRouter
from ..journal import Journal
from ..outcomes import Completed, Failed
from . import TASKS_EXTENSION, TaskNotCompleted, open_client

__all__ = ["TaskAnswer", "TasksExtension"]


class TaskAnswer(mcp_types.Result):  # type: ignore[misc]  # the SDK's pydantic base
    """The claimed shape: a ``tools/call`` answered with a task (E C16-C18). The task's own
    fields are kept as they came (extra fields allowed) and read by this library's codec."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")


class _Pushed(pydantic.BaseModel):  # type: ignore[misc]  # the SDK's pydantic
    """A ``notifications/tasks``'s params, kept as they came (read by this library's codec)."""

    model_config = ConfigDict(extra="allow")


class TasksExtension(ClientExtension):  # type: ignore[misc]  # the SDK's base class
    """Tasks for an ``mcp.Client`` (2.x, 2026-07-28): pass it as ``extensions=[...]``.

    Args:
        policy: How to poll (the server's ``pollIntervalMs`` is honoured within it).
        inputs: Makes the InputRouter for each task's Client (``lambda client: router``): the
            handlers that answer a task's ``inputRequests``. None: a task that asks for input
            ends the wait with InputNotHandled (nothing is answered on your behalf).
        journal: Records each task and its outcome (``resume`` picks them up later).
        identity: The server's URL, for the journal.
        deadline: How long one ``call_tool`` may wait for its task (None: as long as it runs;
            the SDK call's own read timeout, when set, is the bound instead).
        cancel_on_abandon: Send ``tasks/cancel`` when the wait ends without an outcome (the
            deadline, or the host's cancellation); otherwise the task runs on.
        revision: Not yet defined by the extension; reserved.
    """

    identifier = TASKS_EXTENSION

    def __init__(
        self,
        *,
        policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
        inputs: Callable[[Client], InputRouter] | None = None,
        journal: Journal | None = None,
        identity: str | None = None,
        deadline: dt.timedelta | None = None,
        cancel_on_abandon: bool = False,
    ) -> None:
        if cancel_on_abandon != policy.cancel_on_abandon:
            policy = attrs.evolve(policy, cancel_on_abandon=cancel_on_abandon)
        self.policy = policy
        self._inputs = inputs
        self._journal = journal
        self._identity = identity
        self._deadline = deadline
        self.resolved = 0
        """How many claimed tasks this extension drove to an outcome."""
        self.bridges: weakref.WeakSet[SdkSessionBridge] = weakref.WeakSet()
        """The SDK sessions bound to this extension on which a client of this library takes
        pushed notifications (each session's bridge adds itself while one is open): where
        ``notifications/tasks`` goes."""

    def settings(self) -> dict[str, Any]:
        return {}

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskAnswer, resolve=self._resolve)]

    def notifications(self) -> list[NotificationBinding[Any]]:
        """``notifications/tasks`` (a listen's pushes, E C39-C44), which the SDK would drop:
        handed to this library's clients over the SDK client's session, so a Poller with
        ``PollPolicy(listen=True)`` learns of a task's end before its next poll."""
        return [
            NotificationBinding(
                method="notifications/tasks", params_type=_Pushed, handler=self._pushed
            )
        ]

    async def _pushed(self, params: _Pushed) -> None:
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        deliver_pushed(self, "notifications/tasks", raw)

    async def _resolve(self, claimed: TaskAnswer, ctx: ClaimContext) -> Any:
        raw = claimed.model_dump(by_alias=True, mode="json", exclude_none=True)
        deadline: float | dt.timedelta | None = self._deadline
        if deadline is None and ctx.read_timeout_seconds is not None:
            deadline = float(ctx.read_timeout_seconds)
        async with open_client(
            ctx.session, generation=Generation.V2026_07_28, identity=self._identity
        ) as client:
            created = client.read_created(raw)
            if self._journal is not None:
                await self._journal.record(client.journal_entry(created.task, ctx.tool_name))
            router = self._inputs(client) if self._inputs is not None else None
            if router is not None:
                router.attach(client)
            async with Poller(client, self.policy, inputs=router, journal=self._journal) as poller:
                outcome = await poller.wait(created, deadline=deadline)
            self.resolved += 1
            if isinstance(outcome, Completed) or (
                isinstance(outcome, Failed) and outcome.result is not None
            ):
                assert outcome.result is not None
                return mcp_types.CallToolResult.model_validate(client.encode(outcome.result))
        raise TaskNotCompleted(created.task.task_id, outcome)
