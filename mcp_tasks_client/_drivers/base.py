"""The generation seam: one interface that every protocol generation's driver implements.

Rules of this module and its package:

- Everything that differs between protocol generations lives in one driver module per
  generation (``v2025_11_25.py``, ``v2026_07_28.py``) behind :class:`Driver`. Code outside this
  package asks a driver what to do; it never branches on a :class:`Generation` or on a flag of
  one. ``tests/test_layout.py`` checks that with a grep.
- The registry (``__init__.py``) is the only place a generation is mapped to its driver; an
  unknown generation is an error, never a fall-through to another generation's driver.
- An operation a generation lacks is named once, in its driver's ``missing`` table, and raised
  in one place (:meth:`Driver.require`) as ``UnsupportedInGeneration``.
- A driver touches no socket and no clock. What needs I/O (the handshake, an outcome's fetch,
  an input's answer) is an ``async`` method that is handed the narrow thing it sends through
  (:class:`Link`, :class:`TaskLink`); the Client and the Poller drive it.

May import: ``models``, ``_exceptions``, ``_generation``, ``_limits``, ``_codec``, ``_sansio``,
``outcomes``, ``builders`` (floors below). Never the Client, the Poller, transports or journal.

Theory of operation. A Client makes its driver from the generation the caller chose
(``driver_for``). The driver builds what each request carries (``params``, ``headers``), checks
a call before it is sent from what the caller already knows (``check_start``,
``check_plain_call``: never a hidden request), reads what an answer means (``read_start``,
``read_task``, ``read_cancel`` ...), performs the handshake and keeps what it agreed
(``handshake``, ``server_capabilities``). The Poller asks it how a tracked task's input arrives
and is answered and how its outcome is fetched (``follow``: one :class:`TaskFollow` per task).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias, TypeVar

from .._codec._converter import WireConverter
from .._exceptions import (
    DecodeError,
    MCPTasksError,
    RPCError,
    UnsupportedInGeneration,
    UsageError,
)
from .._generation import Generation
from ..models import (
    ClientCapabilities,
    DiscoverResult,
    Implementation,
    InitializeResult,
    JSONObject,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCResponse,
    RequestId,
    ServerCapabilities,
    Task,
)

if TYPE_CHECKING:  # named in signatures only: each is imported where a program uses it
    from ..builders import TaskToolCall
    from ..models import (
        CallToolResult,
        CreateTaskResult,
        InputRequiredResult,
        ListToolsResult,
        TaskSupport,
        Tool,
    )
    from ..outcomes import Outcome

__all__ = ["Driver", "Link", "StartAnswer", "TaskFollow", "TaskLink"]

T = TypeVar("T")

StartAnswer: TypeAlias = "CreateTaskResult | CallToolResult | InputRequiredResult"
"""What a task call's answer is: a task, the call's own result (the server ran it inline,
2026-07-28 only), or a request for input first (MRTR, 2026-07-28 only)."""


class Link(Protocol):
    """What a driver sends its handshake through (the Client)."""

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> JSONObject: ...

    async def notify(
        self, method: str, params: JSONObject | None = None, *, timeout: float | None = None
    ) -> None: ...

    async def reply(self, response: JSONRPCResponse, *, timeout: float | None = None) -> None:
        """Send the answer to a server request (one the session did not serve itself)."""

    def negotiated(self, protocol_version: str) -> None:
        """The transport learns the agreed version (2025-11-25)."""

    async def agreed(self) -> None:
        """The session is agreed and the server has not been told ``initialized`` yet: what
        the caller asked to have open before the server may speak unasked opens now (the
        standalone GET stream with ``Client(listen_stream=True)``, 2025-11-25)."""

    def use_message_headers(self, headers: Callable[[JSONRPCMessage], dict[str, str]]) -> None:
        """The transport learns every message's own headers (2026-07-28)."""


class TaskLink(Protocol):
    """What a tracked task's follower needs from the Poller that tracks it: the requests it
    may send for that one task, where its background work runs, and where problems go."""

    task_id: str

    async def task_result(self, *, held: bool) -> JSONObject:
        """``tasks/result`` of this task (2025-11-25); ``held``: the server may keep it open
        until the task ends (a connection of the held pool), else it is answered at once."""
        ...

    def serve_inputs(self, snapshot: Task) -> None:
        """Hand the snapshot's ``inputRequests`` to the InputRouter, which answers each key
        once (2026-07-28)."""

    def start_soon(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` in the Poller's task group, guarded: what it raises ends this task's
        waits with a typed error."""

    def warn(self, problem: MCPTasksError | Any) -> None: ...

    def decode_result(self, raw: JSONObject) -> CallToolResult: ...


class TaskFollow(abc.ABC):
    """How one tracked task's input arrives and its outcome is fetched, in one generation.

    Made by :meth:`Driver.follow` when the Poller starts tracking a task; told of each
    accepted snapshot that asks for input; asked for the outcome once the task is terminal;
    stopped when nobody waits on the task any more (whatever it holds open is let go)."""

    @abc.abstractmethod
    def input_required(self, snapshot: Task) -> None:
        """An accepted snapshot says ``input_required``."""

    @abc.abstractmethod
    async def outcome(self, terminal: Task) -> Outcome | MCPTasksError:
        """The outcome of the task whose terminal snapshot is ``terminal``."""

    def stop(self) -> None:  # noqa: B027 - nothing to let go by default
        """Nobody waits on the task any more: let go of what is held open for it."""


class Driver(abc.ABC):
    """What one protocol generation means; the Client and the Poller drive it."""

    generation: ClassVar[Generation]
    converter: ClassVar[WireConverter]
    status_notification: ClassVar[str]
    """The method of the notification that pushes a task's status."""
    missing: ClassVar[Mapping[str, str]]
    """Operations this generation does not have, each with what to do instead."""
    cacheable_methods: ClassVar[frozenset[str]] = frozenset()
    """The methods whose complete results carry caching hints (SEP-2549), which a
    ``ResultCache`` may keep; none by default (2025-11-25 has no hints: never cached)."""
    progress_outlives_call: ClassVar[bool]
    """A task call's progress token stays valid for the task's life (2025-11-25), or ends with
    the call's answer (2026-07-28, E C43)."""
    tasks_bound_to_session: ClassVar[bool] = False
    """A server may bind a task to the session that started it (2025-11-25), so another
    session may not reach it; see :meth:`unknown_task_hint` for the words."""

    def __init__(self, capabilities: ClientCapabilities, client_info: Implementation) -> None:
        self.capabilities: JSONObject = self.converter.encode(capabilities)
        self.client_info: JSONObject = self.converter.encode(client_info)
        self._declared = capabilities

    @property
    def protocol_version(self) -> str:
        return self.generation.protocol_version

    def supports(self, version: str) -> bool:
        return version == self.generation.protocol_version

    def require(self, operation: str) -> None:
        """UnsupportedInGeneration when this generation lacks ``operation`` (the one place it
        is raised for every missing operation)."""
        instead = self.missing.get(operation)
        if instead is not None:
            raise UnsupportedInGeneration(operation, self.generation.value, instead or None)

    def has(self, operation: str) -> bool:
        """Whether this generation has ``operation`` (see :meth:`require`)."""
        return operation not in self.missing

    # -- the handshake and what it agreed ------------------------------------------------

    @abc.abstractmethod
    def check_resume(self, resume: InitializeResult, session: str | None) -> None:
        """``Client(resume=...)`` is possible here (UsageError otherwise)."""

    @abc.abstractmethod
    async def handshake(
        self, link: Link, *, resume: InitializeResult | None, timeout: float
    ) -> None:
        """Open the conversation as this generation does, and keep what was agreed."""

    @property
    @abc.abstractmethod
    def agreed_version(self) -> str:
        """The protocol version the conversation runs under."""

    @property
    @abc.abstractmethod
    def initialize_result(self) -> InitializeResult: ...

    @property
    @abc.abstractmethod
    def server_capabilities(self) -> ServerCapabilities: ...

    def discovered(self, result: DiscoverResult) -> None:
        """What ``server/discover`` answered (kept where the generation has it)."""
        self.require("server/discover")

    @property
    def discover_result(self) -> DiscoverResult | None:
        """What the last ``server/discover`` answered, or None (never sent, or no such
        request in this generation)."""
        return None

    @abc.abstractmethod
    def session_to_keep(self, session: str | None) -> JSONObject | None:
        """What a journal keeps to resume ``session`` in another process (the initialize
        result as wire JSON), or None when nothing can be resumed."""

    @classmethod
    def unresumable(cls, *, stdio: bool, kept: bool) -> str | None:
        """Why a journaled task of this generation cannot be followed from another process
        (``stdio``: its server was a child process; ``kept``: the journal kept its session),
        or None when it can."""
        return None

    @classmethod
    def resumed_session(cls, kept: JSONObject | None) -> InitializeResult | None:
        """What ``Client(resume=...)`` takes for a journaled session (its kept initialize
        result), or None where the generation resumes nothing."""
        return None

    # -- what a request carries ------------------------------------------------------------

    def params(
        self, method: str, params: JSONObject | None, *, tasks: bool = False
    ) -> JSONObject | None:
        """``params`` as the request carries them; ``tasks`` declares the tasks extension on
        this request (2026-07-28: a task call; ``tasks/*`` always declare it)."""
        return params

    def headers(self, message: JSONRPCMessage) -> dict[str, str]:
        """The HTTP headers ``message`` carries besides the transport's own."""
        return {}

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        """A tool call's params, made a task call (before :meth:`params`)."""
        return params

    def with_task_progress(self, call: TaskToolCall, token: str) -> TaskToolCall:
        """``call`` with a progress token where this generation reports a task's progress
        through it; ``call`` itself where it does not."""
        return call if not self.progress_outlives_call else call.with_progress_token(token)

    # -- checks before a call is sent (from what the caller has: never a hidden request) ----

    @abc.abstractmethod
    def check_start(self, name: str, tool: Tool | None) -> None:
        """A task call of ``name`` may be sent (CapabilityNotNegotiated, or the tool's own
        refusal of tasks)."""

    def check_plain_call(self, name: str, tool: Tool | None) -> None:  # noqa: B027
        """A plain call of ``name`` may be sent (its metadata may require a task)."""

    def task_support(self, tool: Tool) -> TaskSupport | None:
        """What the listing says of the tool's task support: ``UNKNOWN`` where the
        generation's listings do not carry it (the server decides per call, E 4)."""
        return tool.task_support

    def input_keys(self, key: str) -> list[str]:
        """The names under which an answer prepared ahead of time (a file of answers) may be
        looked up for the input request called ``key``: the request's own key where the
        server names it (2026-07-28 ``inputRequests``), none where ``key`` is only a JSON-RPC
        id (2025-11-25: a counter of the server's, not a name)."""
        return [key]

    def unknown_task_hint(self) -> str:
        """Why a server may not know a task id, besides an unknown or expired one (words for a
        person, appended to a hint)."""
        return ""

    def check_cancel(self) -> None:  # noqa: B027 - nothing to check by default
        """``tasks/cancel`` may be sent (the server declared it, where that is needed)."""

    def check_list(self) -> None:
        """``tasks/list`` may be sent."""
        self.require("tasks/list")

    # -- what an answer means --------------------------------------------------------------

    @abc.abstractmethod
    def read_start(self, raw: JSONObject) -> StartAnswer:
        """The answer to a task call."""

    @abc.abstractmethod
    def plain_start_answer(self, name: str, answer: CallToolResult) -> CallToolResult:
        """A task call answered with a plain result: the result, or the typed refusal."""

    def read_task(self, raw: JSONObject) -> Task:
        """A ``tasks/get`` answer or a status notification's params."""
        return self.converter.decode(raw, Task)

    def read_answer(self, raw: JSONObject, cls: type[T]) -> T | InputRequiredResult:
        """The answer to a request that cannot make a task (a plain ``tools/call``,
        ``prompts/get``, ``resources/read`` ...): ``cls``, or (2026-07-28) a request for input
        first."""
        return self.converter.decode(raw, cls)

    def read_error(self, error: RPCError) -> RPCError:
        """A JSON-RPC error the server answered, as this generation reads it (a generation may
        read an earlier draft's code as the current one's: see ``v2026_07_28.py``)."""
        return error

    def read_notification(self, notification: JSONRPCNotification) -> JSONRPCNotification:
        """A notification as this generation reads it, before it is dispatched by method (a
        generation may read an earlier draft's form as the current one)."""
        return notification

    def read_ack(self, raw: JSONObject) -> None:
        """An answer that carries nothing (``{"resultType": "complete"}``); another resultType
        is invalid."""
        kind = raw.get("resultType", "complete")
        if kind != "complete":
            raise DecodeError("$.resultType", f"an acknowledgement has resultType {kind!r}", kind)

    @abc.abstractmethod
    async def send_input_answer(
        self,
        link: Link,
        task_id: str,
        key: str,
        request_id: RequestId | None,
        answer: JSONObject,
        *,
        timeout: float | None,
    ) -> None:
        """Send ``answer`` (wire JSON) to the input request ``key`` of ``task_id`` outside the
        handler that received it (a request queued in a shared journal): 2025-11-25 the
        JSON-RPC response to ``request_id`` on this session; 2026-07-28 ``tasks/update``."""

    @abc.abstractmethod
    def read_cancel(self, raw: JSONObject) -> Task | None:
        """A ``tasks/cancel`` answer: the Task (2025-11-25) or None (an empty ack)."""

    @abc.abstractmethod
    def created_task_id(self, raw: JSONObject | None) -> str | None:
        """The id of the task an answer names, read as leniently as possible: a task the
        server created must never be lost to a malformed answer."""

    def check_hints(  # noqa: B027 - no hints to check by default
        self, method: str, raw: JSONObject, warn: Callable[[MCPTasksError], None]
    ) -> None:
        """Report a cacheable result's hints that were read leniently (where the generation
        has hints)."""

    def read_tools_page(
        self, page: ListToolsResult, warn: Callable[[MCPTasksError], None], keep: int
    ) -> ListToolsResult:
        """A ``tools/list`` page as the caller gets it (the generation may check and keep what
        its tools' metadata means for later calls, at most ``keep`` tools)."""
        return page

    def check_revision(self) -> None:  # noqa: B027 - a generation with no extension revisions
        """UnknownExtensionRevision when a peer stated a revision of this generation's tasks
        extension that the driver does not implement (then the extension is not used);
        nothing otherwise, and nothing for a generation whose tasks have no extension."""

    # -- the Poller's side -----------------------------------------------------------------

    def check_listen(self) -> None:
        """``PollPolicy(listen=True)`` is possible (UsageError otherwise)."""
        if not self.has("subscriptions/listen"):
            raise UsageError(
                f"PollPolicy(listen=True) needs subscriptions/listen, which "
                f"{self.generation.value} does not have"
            )

    @abc.abstractmethod
    def seed_is_news(self, ref: object) -> bool:
        """Whether a terminal status in what the caller handed a wait can be finished from
        (False: poll the task first for its outcome)."""

    @abc.abstractmethod
    def follow(self, link: TaskLink, policy: Any) -> TaskFollow:
        """The follower of one tracked task (``policy``: the Poller's PollPolicy)."""
