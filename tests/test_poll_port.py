"""The Poller wires to its connection through one interface, ``PollPort`` (issue 33, item 2).

``MemoryPort`` below is a second implementation of that interface, in memory: it answers
``tasks/get`` from a script of snapshots, keeps the notification handlers the Poller
subscribes, and uses the real 2026-07-28 generation driver and codec (only the connection is
replaced). A real Poller drives tasks over it to their outcomes, with no Client, no session and
no transport: the interface is all the Poller needs. mypy checks that both the Client and
``MemoryPort`` are ``PollPort``s. Rules: C-19 (pollInterval), C-22 (push is news sooner, never
polled after terminal), E C36 (cancel), E S6/S7 (inline outcome).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import pytest

from mcp_tasks_client import Client, Poller, PollPolicy
from mcp_tasks_client._drivers import driver_for
from mcp_tasks_client._exceptions import DeadlineExceeded, DecodeError, MCPTasksError
from mcp_tasks_client._generation import Generation
from mcp_tasks_client._limits import Limits
from mcp_tasks_client._poller.port import PollPort
from mcp_tasks_client._sansio.progress import TaskProgress
from mcp_tasks_client._sansio.task_machine import Violation
from mcp_tasks_client._session import Timeouts
from mcp_tasks_client.models import JSONObject, JSONRPCNotification, Task, TaskStatus
from mcp_tasks_client.observability import Redaction, TaskTraces, Tracing
from mcp_tasks_client.outcomes import Completed

pytestmark = pytest.mark.anyio

T = TypeVar("T")
WHEN = "2026-07-28T12:00:00Z"


def wire_task(task_id: str, status: str, updated: int = 0, **more: Any) -> JSONObject:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": WHEN,
        "lastUpdatedAt": f"2026-07-28T12:00:{updated:02d}Z",
        "ttlMs": None,
        "pollIntervalMs": 10,
        **more,
    }


class _Server:
    identity = "memory:script"


class MemoryPort:
    """A PollPort in memory: scripted ``tasks/get`` answers, recorded requests."""

    def __init__(self, scripts: dict[str, list[JSONObject]]) -> None:
        self.driver = driver_for(Generation.V2026_07_28)
        self.generation = Generation.V2026_07_28
        self.limits = Limits()
        self.timeouts = Timeouts()
        self.transport = _Server()
        self.task_traces = TaskTraces()
        self.tracing = Tracing.OFF
        self.redaction = Redaction()
        self.scripts = scripts
        self.gets: list[str] = []
        self.cancels: list[str] = []
        self.handlers: dict[str, Callable[[JSONRPCNotification], None]] = {}

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        await anyio.lowlevel.checkpoint()  # as any I/O would
        self.gets.append(task_id)
        script = self.scripts[task_id]
        raw = script.pop(0) if len(script) > 1 else script[0]
        return self.driver.read_task(raw)

    async def task_result_raw(
        self, task_id: str, *, timeout: float | None = None, held: bool = True
    ) -> JSONObject:
        raise AssertionError("2026-07-28 reads the outcome inline: no tasks/result")

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Any:
        self.cancels.append(task_id)

    async def listen_tasks(
        self, task_ids: Sequence[str], *, on_open: Callable[[Any], None] | None = None
    ) -> Any:
        raise AssertionError("not asked for: PollPolicy.listen is off")

    def read_status_notification(self, notification: JSONRPCNotification) -> Task:
        return self.driver.read_task(notification.params or {})

    def decode(self, raw: Any, cls: type[T]) -> T:
        return self.driver.converter.decode(raw, cls)

    def encode(self, value: Any) -> Any:
        return self.driver.converter.encode(value)

    def on_notification(
        self, method: str, handler: Callable[[JSONRPCNotification], None]
    ) -> Callable[[], None]:
        self.handlers[method] = handler

        def unsubscribe() -> None:
            self.handlers.pop(method, None)

        return unsubscribe

    def on_connection_end(self, listener: Callable[[MCPTasksError], None]) -> Callable[[], None]:
        return lambda: None

    def on_progress(
        self, handler: Callable[[TaskProgress | Violation | DecodeError], None]
    ) -> Callable[[], None]:
        return lambda: None

    def progress(self, task_id: str) -> TaskProgress | None:
        return None


def test_the_client_and_the_memory_port_are_both_poll_ports() -> None:
    """Checked by mypy (these assignments type-check only for PollPorts) and at run time."""
    port: PollPort = MemoryPort({})
    client: type[PollPort] = Client
    members = [m for m in dir(PollPort) if not m.startswith("_")]
    assert len(members) == 19  # the whole interface: what the CHANGELOG counts
    for member in members:
        assert hasattr(port, member), member
        assert hasattr(client, member), member


async def test_a_poller_drives_a_task_to_its_outcome_over_the_memory_port() -> None:
    """C-19: polled at pollInterval; E S7: the completed snapshot carries the result inline;
    then never polled again (a later wait is answered from memory)."""
    result = {"content": [{"type": "text", "text": "done"}], "isError": False}
    port = MemoryPort(
        {
            "t1": [
                wire_task("t1", "working"),
                wire_task("t1", "working", 1),
                wire_task("t1", "completed", 2, result=result),
            ]
        }
    )
    policy = PollPolicy(floor=0.0, jitter=0.0)
    with anyio.fail_after(10):
        async with Poller(port, policy) as poller:
            outcome = await poller.wait("t1")
            assert isinstance(outcome, Completed)
            assert outcome.result.content[0].text == "done"  # type: ignore[union-attr]
            assert await poller.wait("t1") == outcome
    assert port.gets == ["t1", "t1", "t1"]


async def test_a_push_through_the_port_ends_the_wait_before_the_next_poll() -> None:
    """C-22: a status notification is news sooner; the task is not polled after it."""
    port = MemoryPort({"t2": [{**wire_task("t2", "working"), "pollIntervalMs": 600_000}]})
    ended: list[object] = []
    policy = PollPolicy(jitter=0.0, initial=0.0, floor=0.0)
    with anyio.fail_after(10):
        async with Poller(port, policy) as poller, anyio.create_task_group() as group:

            async def wait() -> None:
                ended.append(await poller.wait("t2"))

            group.start_soon(wait)
            while not port.gets:
                await anyio.sleep(0.001)
            result = {"content": [], "isError": False}
            pushed = wire_task("t2", "completed", 5, result=result)
            notify = port.handlers[port.driver.status_notification]
            notify(JSONRPCNotification(port.driver.status_notification, pushed))
    (outcome,) = ended
    assert isinstance(outcome, Completed)
    assert outcome.task is not None
    assert outcome.task.status is TaskStatus.COMPLETED
    assert port.gets == ["t2"]


async def test_an_abandoned_wait_cancels_through_the_port_once() -> None:
    """E C36 via ``cancel_on_abandon``: one tasks/cancel, through the port."""
    port = MemoryPort({"t3": [wire_task("t3", "working")]})
    policy = PollPolicy(jitter=0.0, cancel_on_abandon=True)
    with anyio.fail_after(10):
        async with Poller(port, policy) as poller:
            with pytest.raises(DeadlineExceeded):
                await poller.wait("t3", deadline=dt.timedelta(milliseconds=50))
    assert port.cancels == ["t3"]


@pytest.mark.parametrize("name", ["client", "policy", "inputs", "journal", "warnings"])
def test_the_pollers_configuration_is_read_only(name: str) -> None:
    """Setting one after construction used to do nothing, silently (issue 33, item 4): each
    is woven into the Poller's pieces when it is made. Now it is refused."""
    poller = Poller(MemoryPort({}), PollPolicy())
    before = getattr(poller, name)
    with pytest.raises(AttributeError):
        setattr(poller, name, before)
    assert getattr(poller, name) is before
