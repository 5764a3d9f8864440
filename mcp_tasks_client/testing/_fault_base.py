"""What a FaultServer is made of in every generation, and the interface of what differs.

The FaultServer (``_fault_server.py``) serves, keeps its tasks and answers what every
generation answers alike; what a generation's server does differently (its HTTP, how a call
opts into a task, what a task looks like, how its outcome and its questions travel, what cancel
and list answer) is one :class:`Dialect` per generation: ``_fault_v2025_11_25.py`` and
``_fault_v2026_07_28.py``, chosen by the registry in ``_fault_server.py``. A dialect reads and
moves its server's state (``self.server``); it keeps only what its generation alone has.

May import: ``_generation``, ``models``, ``_io`` (the memory pair), this package's
``_http``.
"""

from __future__ import annotations

import abc
import datetime as dt
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
import attrs

from .._generation import Generation
from .._io.memory import MemoryServerEnd
from ._http import Conn, Received, sse_event

if TYPE_CHECKING:
    from ._fault_server import FaultServer

__all__ = ["Dialect", "FaultTask"]

JSON = dict[str, Any]
Refusal = tuple[int, str, Any]
"""A JSON-RPC error to answer with: (code, message, data)."""

TERMINAL = frozenset({"completed", "failed", "cancelled"})
FORM = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
EPOCH = dt.datetime(2026, 8, 1, tzinfo=dt.timezone.utc)
"""A fixed moment a test may date a server's tasks from (``FaultServer(clock=...)``)."""


def wall_clock() -> dt.datetime:
    """The real time, UTC: what a FaultServer dates its tasks by unless told otherwise."""
    return dt.datetime.now(dt.timezone.utc)


@attrs.define
class FaultTask:
    task_id: str
    tool: str
    text: str
    ttl: int | None
    created_at: str
    updated_at: str
    status: str = "working"
    polls: int = 0
    gets: int = 0
    cancel_answered: bool = False
    questions: list[tuple[str, JSON]] = attrs.Factory(list)
    """Input still to ask, in order: (key, {"method", "params"})."""
    asked: Any = None
    """2025-11-25: the id of the request sent for the first question, until it is answered."""
    answers: list[Any] = attrs.Factory(list)
    shown_reused: bool = False
    answered: anyio.Event = attrs.Factory(anyio.Event)
    ended: anyio.Event = attrs.Factory(anyio.Event)

    session: str | None = None


class Channel:
    """Where a server->client request goes: the stream of the request being answered."""

    async def push(self, message: JSON) -> None:  # pragma: no cover - nothing to push to
        return None


class MemoryChannel(Channel):
    def __init__(self, end: MemoryServerEnd) -> None:
        self._end = end

    async def push(self, message: JSON) -> None:
        await self._end.send(message)


class SSEChannel(Channel):
    """The SSE response of one POST: opened at the first push, the answer its last event."""

    def __init__(self, conn: Conn, headers: dict[str, str]) -> None:
        self._conn = conn
        self._headers = headers
        self.opened = False

    async def push(self, message: JSON) -> None:
        if not self.opened:
            self.opened = True
            await self._conn.head(200, {"Content-Type": "text/event-stream", **self._headers})
        await self._conn.write(sse_event(message))


def result_json(text: str, *, is_error: bool = False) -> JSON:
    """A tool's CallToolResult saying ``text``."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def text_of(task: FaultTask) -> str:
    """The tool's answer: its text, and what the client answered to its questions."""
    return task.text if not task.answers else f"{task.text}: {json.dumps(task.answers)}"


class Dialect(abc.ABC):
    """What a FaultServer of one generation does that the other's does not."""

    generation: ClassVar[Generation]
    tools: ClassVar[Mapping[str, str | None]]
    """The tools it serves, each with its ``execution.taskSupport`` (None: no execution)."""

    def __init__(self, server: FaultServer) -> None:
        self.server = server

    def check_ask_on(self, ask_on: str) -> None:  # noqa: B027 - every place is fine
        """ValueError when in-task questions cannot go where ``ask_on`` says."""

    # -- HTTP -------------------------------------------------------------------------------

    def serving_http(self) -> None:  # noqa: B027 - nothing to prepare
        """The server starts serving over HTTP (not in process)."""

    def http_refusal(self, request: Received, body: Any) -> tuple[JSON, int] | None:
        """An error answer and its HTTP status for a request refused before it is read."""
        return None

    @abc.abstractmethod
    def http_session(self, body: Any, session: str | None) -> tuple[str | None, dict[str, str]]:
        """The session a POST runs in, and the headers its answer carries."""

    def http_status(self, answer: JSON) -> int:
        """The HTTP status of a JSON answer."""
        return 200

    @abc.abstractmethod
    async def on_delete(self, request: Received, conn: Conn) -> None:
        """A DELETE of the session."""

    @abc.abstractmethod
    async def on_get(self, request: Received, conn: Conn) -> None:
        """A GET: the standalone SSE stream, where the generation has one."""

    # -- the protocol -----------------------------------------------------------------------

    def result(self, out: JSON) -> JSON:
        """A result as it goes out."""
        return out

    def hinted(self, method: str, out: JSON) -> JSON:
        """``out`` (the result of ``method``) with the caching hints the generation has
        (none by default)."""
        return out

    def client_answered(self, message: JSON) -> None:  # noqa: B027 - nothing was asked
        """The client answered a request the server sent."""

    @abc.abstractmethod
    def wants_task(self, name: str, params: JSON) -> bool:
        """Whether a ``tools/call`` asks for a task."""

    @abc.abstractmethod
    def call_without_task(self, support: str | None, text: str) -> JSON | Refusal:
        """The answer to a call that asked for no task, of a tool with ``support``."""

    @abc.abstractmethod
    def task_of_taskless_tool(self, text: str) -> JSON | Refusal | None:
        """The answer to a task call of a tool without task support (None: a task anyway)."""

    def requested_ttl(self, params: JSON) -> int | None:
        """The ttl a task call asked for (None: none, or the generation has none to ask)."""
        return None

    @abc.abstractmethod
    def created(self, task: FaultTask) -> JSON:
        """The answer to the call that created ``task``."""

    @abc.abstractmethod
    def questions(self, task: FaultTask, first: JSON) -> list[tuple[str, JSON]]:
        """The input ``task`` asks for, in order (``first``: its first request)."""

    @abc.abstractmethod
    def task_fields(self, task: FaultTask, out: JSON, *, detailed: bool) -> None:
        """Add this generation's fields to ``out``, the Task JSON of ``task`` (``detailed``:
        a ``tasks/get`` answer, not a creation)."""

    @abc.abstractmethod
    def ends_failed(self, task: FaultTask) -> bool:
        """Whether ``task``, ending now, ends ``failed`` (else ``completed``)."""

    async def polled_waiting(self, task: FaultTask, channel: Channel) -> None:  # noqa: B027
        """A ``tasks/get`` of ``task`` while it has a question open."""

    @abc.abstractmethod
    def waiting(self, task: FaultTask) -> None:
        """A poll of ``task`` while it has a question open: show it waiting."""

    @abc.abstractmethod
    async def tasks_result(self, params: JSON, channel: Channel) -> JSON | Refusal:
        """The answer to ``tasks/result``."""

    @abc.abstractmethod
    def tasks_cancel(self, task: FaultTask) -> JSON | Refusal:
        """The answer to ``tasks/cancel`` of ``task``."""

    @abc.abstractmethod
    def tasks_list(self, params: JSON) -> JSON | Refusal:
        """The answer to ``tasks/list``."""

    async def listen(self, params: JSON, channel: Channel, listen_id: Any) -> JSON | Refusal:
        """The answer to ``subscriptions/listen`` (request ``listen_id``), after what it
        pushed on ``channel``; a generation without it: -32601."""
        return (-32601, "subscriptions/listen is not served", None)
