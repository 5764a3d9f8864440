"""The 2026-07-28 generation with the ``io.modelcontextprotocol/tasks`` extension: stateless.

What this driver decides (against 2025-11-25, see ``v2025_11_25.py``):

- handshake: none, and no session; every request says who the client is in its ``_meta``
  (E C1-C3, C7); ``server/discover`` only when the caller asks (E C9-C11), kept here;
- HTTP headers: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the tools'
  ``x-mcp-header`` arguments, each equal to the body (E C57-C60);
- task opt-in: the extension declared in that request's ``_meta``; the server decides by
  ``resultType``: task, complete, input_required (E C16-C20);
- the outcome: inline in the terminal snapshot (E C27); input mid-flight: ``inputRequests``
  in a snapshot, answered with ``tasks/update`` (E C28-C33);
- caching hints (SEP-2549): the cacheable results carry ``ttlMs`` / ``cacheScope``; a malformed
  one is read the safe way and warned (``LenientCacheHint``);
- status push: ``notifications/tasks`` on a ``subscriptions/listen``; cancel's answer: an empty,
  eventually consistent ack (E C36); no ``tasks/list`` (E S17), no ``tasks/result`` (E S16);
- the field's drift, read on receipt and never sent (``read_error``, ``read_notification``):
  servers built on earlier drafts of the extension answer a missing capability with -32003
  (E A-23), push ``notifications/tasks/status`` and acknowledge a listen's filter as
  ``tasksStatus`` (E A-27). Only this module knows those forms;
- the extension's revisions (SEP-3392, a draft): a ``revision`` in the tasks extension's
  settings, read where a peer states them (``server/discover``; a -32021's
  ``requiredCapabilities``; the caller's own ``ClientCapabilities``), is looked up in
  :data:`TASKS_REVISIONS`; one not there means the extension is not used (UnknownExtensionRevision
  before any request that would declare it), never a guess. Our own ad carries
  :data:`TASKS_REVISION` once the extension defines one.

May import what ``base.py`` may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs

from .. import models
from .._codec import v2026_07_28
from .._codec._fast_task import task_decoder_2026
from .._codec._hints import hint_problems
from .._codec.headers import ParamPath, header_annotations, param_headers, routing_headers
from .._exceptions import (
    CapabilityNotNegotiated,
    DecodeError,
    InvalidToolAnnotation,
    LenientCacheHint,
    MCPTasksError,
    MissingClientCapability,
    RPCError,
    UnknownExtensionRevision,
    UsageError,
)
from .._generation import Generation
from ..models import (
    TASKS_EXTENSION,
    CreateTaskResult,
    DiscoverResult,
    InitializeResult,
    JSONObject,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    RequestId,
    ServerCapabilities,
    Task,
)
from .base import Driver, Link, StartAnswer, TaskFollow, TaskLink

if TYPE_CHECKING:  # the tool models are read from ``models`` when a tool call needs them
    from ..models import CallToolResult, InputRequiredResult, ListToolsResult, Tool
    from ..outcomes import Outcome

__all__ = [
    "DRAFT_MISSING_CAPABILITY",
    "DRAFT_STATUS_NOTIFICATION",
    "DRAFT_TASKS_FILTER",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "TASKS_REVISION",
    "TASKS_REVISIONS",
    "Driver2026",
    "tasks_revision",
]

T = TypeVar("T")

DRAFT_MISSING_CAPABILITY = -32003
"""E A-23: the extension draft's code for a missing client capability (the dated schema's is
-32021). Read as -32021 only when its ``data.requiredCapabilities`` is an object: a bare -32003
is a legacy code nobody may assume a meaning of (E C55)."""
DRAFT_STATUS_NOTIFICATION = "notifications/tasks/status"
"""E A-27: the status push of earlier drafts, read as ``notifications/tasks``."""
DRAFT_TASKS_FILTER = "tasksStatus"
"""E A-27: the listen filter of earlier drafts, read as ``taskIds`` in an acknowledgement."""
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

TASKS_REVISIONS: Mapping[str | None, str] = {
    None: "the extension as published beside 2026-07-28: its settings carry no revision "
    "(E A-21: the settings object is {}; unknown other settings are tolerated)",
}
"""Every revision of the tasks extension this driver implements, with what it is (None: the
settings carry no ``revision``). A revision not here is refused, never mapped to the nearest
(SEP-3392: a peer that receives a revision it does not know SHOULD NOT enable the extension).
A new revision this driver learns is one row here, and the code its differences need."""
TASKS_REVISION: str | None = None
"""The revision this client's ad carries (``extensions[TASKS_EXTENSION]``); None: the
extension defines none yet, so the ad is ``{}``."""


def tasks_revision(settings: object) -> object:
    """The ``revision`` of a tasks extension settings object, as sent (None when absent, or
    when the settings are not an object: E A-21 tolerates what it does not know)."""
    return settings.get("revision") if isinstance(settings, dict) else None


def _implemented(revision: object) -> bool:
    return (revision is None or isinstance(revision, str)) and revision in TASKS_REVISIONS


def _ad() -> JSONObject:
    return {} if TASKS_REVISION is None else {"revision": TASKS_REVISION}


class Driver2026(Driver):
    """2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension (E)."""

    generation = Generation.V2026_07_28
    converter = v2026_07_28.converter
    status_notification = "notifications/tasks"
    progress_outlives_call = False  # E C43: a task's progress is not reported by token
    cacheable_methods = frozenset(  # SEP-2549: complete results carry ttlMs and cacheScope
        {
            "server/discover",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "resources/read",
        }
    )
    missing: ClassVar[Mapping[str, str]] = {
        "initialize": "use discover() for the server's capabilities",
        "session resume": "E C7: there is no session",
        "tasks/result": "the result is inline in get_task()",
        "tasks/list": "keep the ids of the tasks you start",
        "the standalone GET stream": "E C56: there is none",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # This client's Task decoder, with its own cache of the timestamps it read (nothing
        # kept across the process's clients).
        self._decode_task = task_decoder_2026(v2026_07_28.strict_task, cached=True)
        self._refused_revision: tuple[object, str] | None = None
        """A tasks extension revision a peer stated that this driver does not implement,
        and where it was stated: the extension is then not used."""
        extensions = self.capabilities.get("extensions")
        if isinstance(extensions, dict) and TASKS_EXTENSION in extensions:
            # the caller's own per-request capabilities: a revision we cannot speak is refused
            # here, before any request could claim it
            self._check_revision(extensions[TASKS_EXTENSION], "the client's capabilities")
            self.check_revision()
        self._discovered: DiscoverResult | None = None
        self._tool_headers: dict[str, dict[ParamPath, str]] = {}
        """The valid ``x-mcp-header`` annotations of the tools the caller listed, by tool."""

    # -- the handshake and what it agreed ------------------------------------------------

    def check_resume(self, resume: InitializeResult, session: str | None) -> None:
        self.require("session resume")

    async def handshake(
        self, link: Link, *, resume: InitializeResult | None, timeout: float
    ) -> None:
        # E C7: no initialize, no session; every request says who the client is. Nothing is
        # sent until the caller asks (server/discover too: Client.discover).
        link.use_message_headers(self.headers)

    @property
    def agreed_version(self) -> str:
        return self.protocol_version

    @property
    def initialize_result(self) -> InitializeResult:
        self.require("initialize")
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What :meth:`Client.discover` returned (UsageError before a discover: a stateless
        client learns nothing unasked, E C11)."""
        if self._discovered is None:
            raise UsageError(
                "a 2026-07-28 client knows the server's capabilities only from "
                "`await client.discover()`"
            )
        return self._discovered.capabilities

    def discovered(self, result: DiscoverResult) -> None:
        self._discovered = result
        extensions = result.capabilities.extensions
        if isinstance(extensions, dict) and TASKS_EXTENSION in extensions:
            self._refused_revision = None  # the server's newest word on it
            self._check_revision(extensions[TASKS_EXTENSION], "server/discover")

    # -- the extension's revision (SEP-3392) --------------------------------------------------

    def _check_revision(self, settings: object, where: str) -> None:
        """Note the revision ``settings`` carry, stated ``where``, if this driver does not
        implement it (nothing is raised here: a request that would use the extension is)."""
        revision = tasks_revision(settings)
        if not _implemented(revision):
            self._refused_revision = (revision, where)

    def check_revision(self) -> None:
        """UnknownExtensionRevision when a peer stated a revision of the tasks extension this
        driver does not implement (the extension is not used); nothing otherwise."""
        if self._refused_revision is not None:
            revision, where = self._refused_revision
            raise UnknownExtensionRevision(
                TASKS_EXTENSION, revision, list(TASKS_REVISIONS), where=where
            )

    @property
    def discover_result(self) -> DiscoverResult | None:
        return self._discovered

    def session_to_keep(self, session: str | None) -> JSONObject | None:
        return None

    # -- what a request carries ------------------------------------------------------------

    def params(
        self, method: str, params: JSONObject | None, *, tasks: bool = False
    ) -> JSONObject | None:
        capabilities = dict(self.capabilities)
        if tasks or method.startswith("tasks/"):  # E C3: on exactly the requests that need it
            if self._refused_revision is not None:
                self.check_revision()  # a revision we do not implement: never declared
            extensions = dict(capabilities.get("extensions") or {})
            extensions[TASKS_EXTENSION] = _ad()
            capabilities["extensions"] = extensions
        out = dict(params or {})
        given = out.get("_meta")
        if given is not None and not isinstance(given, dict):
            raise UsageError(f"params._meta must be a JSON object, got {type(given).__name__}")
        meta = dict(given or {})
        meta[META_PROTOCOL_VERSION] = self.protocol_version
        meta[META_CLIENT_CAPABILITIES] = capabilities
        meta[META_CLIENT_INFO] = dict(self.client_info)
        out["_meta"] = meta
        return out

    def headers(self, message: JSONRPCMessage) -> dict[str, str]:
        if not isinstance(message, (JSONRPCRequest, JSONRPCNotification)):
            return {}
        headers = routing_headers(message.method, message.params, self.protocol_version)
        params = message.params or {}
        if message.method == "tools/call" and isinstance(params.get("name"), str):
            annotations = self._tool_headers.get(params["name"])
            if annotations:
                headers.update(param_headers(annotations, params.get("arguments")))
        return headers

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        if ttl_ms is not None:
            raise UsageError(
                "2026-07-28 has no requested ttl: the server picks ttlMs (E 4); "
                "build the call with as_task() and no ttl"
            )
        return params

    # -- checks before a call is sent ------------------------------------------------------

    def check_start(self, name: str, tool: Tool | None) -> None:
        # 2026-07-28 tools carry no taskSupport (E 4): the server decides per call (E C20).
        # When the caller ran discover() and the server has no tasks extension, it cannot.
        if self._discovered is not None and not self._discovered.capabilities.tasks_extension:
            raise CapabilityNotNegotiated(f"extensions[{TASKS_EXTENSION!r}]", rule="E C11")
        self.check_revision()

    # -- what an answer means --------------------------------------------------------------

    def read_start(self, raw: JSONObject) -> StartAnswer:
        kind = raw.get("resultType", "complete")  # E C16: absent means complete
        if kind == "task":
            return self.converter.decode(raw, CreateTaskResult)
        if kind == "complete":
            return self.converter.decode(raw, models.CallToolResult)
        if kind == "input_required":
            return self._input_required(raw)
        raise DecodeError("$.resultType", f"unknown resultType {kind!r} (E C17)", kind)

    def plain_start_answer(self, name: str, answer: CallToolResult) -> CallToolResult:
        return answer  # E C18: the server chose to answer inline

    def read_answer(self, raw: JSONObject, cls: type[T]) -> T | InputRequiredResult:
        kind = raw.get("resultType", "complete")  # E C16
        if kind == "complete":
            return self.converter.decode(raw, cls)
        if kind == "input_required":
            return self._input_required(raw)
        # E C17, C19: "task" on a request that declared no tasks is invalid, so is the unknown
        raise DecodeError("$.resultType", f"resultType {kind!r} is not an answer here", kind)

    def _input_required(self, raw: JSONObject) -> InputRequiredResult:
        answer = self.converter.decode(raw, models.InputRequiredResult)
        if answer.input_requests is None and answer.request_state is None:
            raise DecodeError("$", "input_required needs inputRequests or requestState (E 3.11)")
        return answer

    def read_error(self, error: RPCError) -> RPCError:
        """E A-23: an earlier draft's -32003 naming ``requiredCapabilities`` is the dated
        schema's -32021 (MissingClientCapability; ``code`` stays what the server sent)."""
        if (
            error.code == DRAFT_MISSING_CAPABILITY
            and type(error) is RPCError
            and isinstance(error.data, dict)
            and isinstance(error.data.get("requiredCapabilities"), dict)
        ):
            error = MissingClientCapability(
                error.code, error.message, error.data, method=error.method
            )
        if isinstance(error, MissingClientCapability):
            # the server's per-request word on the extension: a revision we do not implement
            # means the extension is not used from now on (SEP-3392)
            extensions = error.required.get("extensions")
            if isinstance(extensions, dict) and TASKS_EXTENSION in extensions:
                where = f"the server's -32021 answer to {error.method or 'a request'}"
                self._check_revision(extensions[TASKS_EXTENSION], where)
        return error

    def read_notification(self, notification: JSONRPCNotification) -> JSONRPCNotification:
        """E A-27: an earlier draft's ``notifications/tasks/status`` is a ``notifications/tasks``
        (its params read the same, E C42); an acknowledgement naming ``tasksStatus`` and no
        ``taskIds`` acknowledged those ids. The current form is read as it came."""
        if notification.method == DRAFT_STATUS_NOTIFICATION:
            return attrs.evolve(notification, method=self.status_notification)
        if notification.method == _ACKNOWLEDGED and notification.params is not None:
            filters = notification.params.get("notifications")
            if (
                isinstance(filters, dict)
                and "taskIds" not in filters
                and DRAFT_TASKS_FILTER in filters
            ):
                read = {**filters, "taskIds": filters[DRAFT_TASKS_FILTER]}
                return attrs.evolve(
                    notification, params={**notification.params, "notifications": read}
                )
        return notification

    def read_task(self, raw: JSONObject) -> Task:
        kind = raw.get("resultType", "complete")
        if kind not in ("complete", "task"):  # A-1 tolerates "task" on tasks/get
            raise DecodeError("$.resultType", f"a task snapshot has resultType {kind!r}", kind)
        return self._decode_task(raw)

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
        params = {"taskId": task_id, "inputResponses": {key: answer}}  # E C28-C33
        self.read_ack(await link.request("tasks/update", params, timeout=timeout))

    def read_cancel(self, raw: JSONObject) -> Task | None:
        self.read_ack(raw)
        return None

    def created_task_id(self, raw: JSONObject | None) -> str | None:
        if raw is None or raw.get("resultType") != "task":
            return None
        task_id = raw.get("taskId")
        return task_id if isinstance(task_id, str) else None

    def check_hints(
        self, method: str, raw: JSONObject, warn: Callable[[MCPTasksError], None]
    ) -> None:
        if method not in self.cacheable_methods or raw.get("resultType", "complete") != "complete":
            return
        problems = hint_problems(raw)
        if problems:
            warn(LenientCacheHint(method, "; ".join(problems)))

    def read_tools_page(
        self, page: ListToolsResult, warn: Callable[[MCPTasksError], None], keep: int
    ) -> ListToolsResult:
        """E C60: a tool with invalid ``x-mcp-header`` annotations is reported and left out;
        the valid annotations of the others are what their calls' headers mirror."""
        kept: list[Tool] = []
        headers = self._tool_headers
        for tool in page.tools:
            headers.pop(tool.name, None)
            try:
                annotations = header_annotations(tool.input_schema)
            except ValueError as exc:
                warn(InvalidToolAnnotation(tool.name, str(exc)))  # logged there
                continue
            if annotations:
                headers[tool.name] = annotations
            while len(headers) > keep:
                del headers[next(iter(headers))]
            kept.append(tool)
        if len(kept) == len(page.tools):
            return page
        return attrs.evolve(page, tools=tuple(kept))

    # -- the Poller's side -----------------------------------------------------------------

    def seed_is_news(self, ref: object) -> bool:
        # A CreateTaskResult is a base Task, never carrying the outcome: a terminal seed is
        # polled for it at once (E A-2), not finished from.
        return not isinstance(ref, CreateTaskResult)

    def follow(self, link: TaskLink, policy: Any) -> TaskFollow:
        # Imported here, once per followed task (never per poll): see the 2025-11-25 driver.
        from .._sansio.classify import inline_outcome

        return _InlineOutcome(link, inline_outcome)


class _InlineOutcome(TaskFollow):
    """A 2026-07-28 task: each snapshot's ``inputRequests`` go to the InputRouter (which
    answers each key once with ``tasks/update``); the outcome is inline in the terminal
    snapshot."""

    def __init__(self, link: TaskLink, classify: Callable[..., Outcome | MCPTasksError]) -> None:
        self._link = link
        self._classify = classify

    def input_required(self, snapshot: Task) -> None:
        self._link.serve_inputs(snapshot)

    async def outcome(self, terminal: Task) -> Outcome | MCPTasksError:
        return self._classify(terminal, self._link.decode_result)
