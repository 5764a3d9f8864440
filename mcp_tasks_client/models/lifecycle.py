"""Handshake values: who is talking, what they can do, what they agreed on (L, SCH)."""

from __future__ import annotations

import attrs

from ._base import CacheScope, JSONObject, extra_field, meta_field, wire

__all__ = [
    "SERVER_INFO_META",
    "TASKS_EXTENSION",
    "ClientCapabilities",
    "ClientTasksCapability",
    "DiscoverResult",
    "ElicitationCapability",
    "Implementation",
    "InitializeResult",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTasksCapability",
    "ToolsCapability",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 tasks extension's identifier, a key of ``capabilities.extensions`` (E C3)."""

SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
"""``_meta`` key of a 2026-07-28 result naming the server (self-reported, E C8)."""


@attrs.frozen
class Implementation:
    """``Implementation``: a client's or server's name and version."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = wire("websiteUrl", default=None)
    extra: JSONObject = extra_field()


@attrs.frozen
class RootsCapability:
    """The client serves ``roots/list``."""

    list_changed: bool | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class SamplingCapability:
    """The client serves ``sampling/createMessage`` (``tools``: with tool use, S:40)."""

    tools: JSONObject | None = None
    context: JSONObject | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class ElicitationCapability:
    """The client serves ``elicitation/create``; ``{}`` means form mode only (C-49)."""

    form: JSONObject | None = None
    url: JSONObject | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class ClientTasksCapability:
    """``capabilities.tasks`` of a client: which server->client requests it runs as tasks (C-31).

    Each flag is the presence of the matching ``{}`` object on the wire (A-09).
    """

    list: bool = False
    cancel: bool = False
    sampling_create_message: bool = False
    elicitation_create: bool = False
    extra: JSONObject = extra_field()


@attrs.frozen
class ClientCapabilities:
    """What the client declares in ``initialize``. Nothing is declared unless the caller sets it."""

    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    """2025-11-25 only (the client as a task receiver); never sent in 2026-07-28 (E A-24)."""
    experimental: JSONObject | None = None
    extensions: JSONObject | None = None
    """Extensions by identifier (2026-07-28). The tasks extension is not declared here: the
    client adds it to exactly the requests that need it (a task call, ``tasks/*``)."""
    extra: JSONObject = extra_field()


@attrs.frozen
class ToolsCapability:
    """The server serves ``tools/list`` and ``tools/call``."""

    list_changed: bool | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class ServerTasksCapability:
    """``capabilities.tasks`` of a server (T:101; presence of ``{}`` read as true, A-09)."""

    list: bool = False
    cancel: bool = False
    tools_call: bool = False
    extra: JSONObject = extra_field()


@attrs.frozen
class ServerCapabilities:
    """What the server declared in its ``InitializeResult``."""

    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    logging: JSONObject | None = None
    completions: JSONObject | None = None
    prompts: JSONObject | None = None
    resources: JSONObject | None = None
    experimental: JSONObject | None = None
    extensions: JSONObject | None = None
    """Extensions by identifier (2026-07-28 ``server/discover``; E C11)."""
    extra: JSONObject = extra_field()

    @property
    def tasks_extension(self) -> bool:
        """The server advertised the 2026-07-28 tasks extension (E C11, S1)."""
        return isinstance(self.extensions, dict) and TASKS_EXTENSION in self.extensions


@attrs.frozen
class InitializeResult:
    """The server's answer to ``initialize`` (V-01)."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class DiscoverResult:
    """The answer to ``server/discover`` (2026-07-28, E 3.10): the versions and capabilities
    of a stateless server. ``ttl_ms`` and ``cache_scope`` say how long and for whom it may be
    cached (E C12, SEP-2549): None where the generation carries no hints; read in 2026-07-28,
    an absent or malformed ``ttlMs`` is 0 and an absent or unknown ``cacheScope`` is
    ``PRIVATE`` (see :class:`CacheScope`)."""

    supported_versions: tuple[str, ...]
    capabilities: ServerCapabilities
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None
    instructions: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()

    @property
    def server_info(self) -> JSONObject | None:
        """``_meta["io.modelcontextprotocol/serverInfo"]`` as sent (self-reported, E C8)."""
        info = (self.meta or {}).get(SERVER_INFO_META)
        return info if isinstance(info, dict) else None
