"""The one interface between a Poller and the connection it polls over: :class:`PollPort`.

Job: name, in one place, everything a Poller asks of its client: the requests it sends for a
task (``tasks/get``, ``tasks/result``, ``tasks/cancel``, ``subscriptions/listen``), the news it
subscribes to (status notifications, progress, the connection's end), the generation's driver
(how input arrives and the outcome is fetched), the codec, the limits and timeouts, and which
server it is (for a journal). The library's ``Client`` is a ``PollPort`` as it is (a structural
``typing.Protocol``: no adapter, no registration); anything else that answers these members can
stand in for it (``tests/test_poll_port.py`` drives a real Poller over a small in-memory one).

Before this interface the Poller's pieces were wired with 20 callables taken off the Client
one by one (``get_task``, ``cancel_task``, ``listen_tasks``, ``observe``, ``end``, ``expire``,
``failed``, ``acknowledged``, ...). Now the Poller is given one ``PollPort``; inside, its loop
gets the Tracker and four callables (``get``, ``perform``, ``failed``, ``before_poll``).

May import: ``models``, ``_exceptions``, ``_limits``, ``_sansio``, ``observability`` (for
types); the driver and session types for type checking only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._exceptions import DecodeError, MCPTasksError
from .._limits import Limits
from .._sansio.progress import TaskProgress
from .._sansio.task_machine import Violation
from ..models import JSONObject, JSONRPCNotification, Task

if TYPE_CHECKING:
    from .._drivers.base import Driver as GenerationDriver
    from .._generation import Generation
    from .._session import Timeouts
    from ..observability import Redaction, TaskTraces, Tracing

__all__ = ["PollPort", "ServerIdentity"]

T = TypeVar("T")


class ServerIdentity(Protocol):
    """Which server a port reaches (a journal records it with each task)."""

    @property
    def identity(self) -> str:
        """The server's URL, or ``stdio:`` and its command line."""
        ...


class PollPort(Protocol):
    """Everything a Poller needs from its connection (see the module docstring). Each request
    is bounded by the ``timeout`` the Poller passes (its policy's); each subscription returns
    the function that ends it."""

    @property
    def limits(self) -> Limits:
        """The bounds the Poller keeps too (warnings kept, outcomes remembered, input keys)."""
        ...

    @property
    def timeouts(self) -> Timeouts:
        """The connection's timeouts (``request``: the Poller's default request timeout)."""
        ...

    @property
    def driver(self) -> GenerationDriver:
        """The generation's driver: how each task's input arrives and its outcome is fetched."""
        ...

    @property
    def generation(self) -> Generation: ...

    @property
    def transport(self) -> ServerIdentity: ...

    @property
    def task_traces(self) -> TaskTraces:
        """The spans of the tasks (read only when spans are on)."""
        ...

    @property
    def tracing(self) -> Tracing:
        """The connection's span settings: the Poller opens task spans only when on."""
        ...

    @property
    def redaction(self) -> Redaction:
        """How the connection shows task ids in logs and spans."""
        ...

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """One ``tasks/get``: the task's snapshot, or a typed error (TaskNotFound, ...)."""
        ...

    async def task_result_raw(
        self, task_id: str, *, timeout: float | None = None, held: bool = True
    ) -> JSONObject:
        """One ``tasks/result`` (2025-11-25), as received."""
        ...

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Any:
        """One ``tasks/cancel``."""
        ...

    async def listen_tasks(
        self, task_ids: Sequence[str], *, on_open: Callable[[Any], None] | None = None
    ) -> Any:
        """One ``subscriptions/listen`` for ``task_ids``, returning when it ends (2026-07-28)."""
        ...

    def read_status_notification(self, notification: JSONRPCNotification) -> Task:
        """The snapshot a status notification carries (DecodeError when it cannot be read)."""
        ...

    def decode(self, raw: Any, cls: type[T]) -> T: ...

    def encode(self, value: Any) -> Any: ...

    def on_notification(
        self, method: str, handler: Callable[[JSONRPCNotification], None]
    ) -> Callable[[], None]:
        """Call ``handler`` with each notification of ``method`` (in the reader: no blocking)."""
        ...

    def on_connection_end(
        self, listener: Callable[[MCPTasksError], None]
    ) -> Callable[[], None]: ...

    def on_progress(
        self, handler: Callable[[TaskProgress | Violation | DecodeError], None]
    ) -> Callable[[], None]: ...

    def progress(self, task_id: str) -> TaskProgress | None:
        """The latest progress of ``task_id`` (no request)."""
        ...
