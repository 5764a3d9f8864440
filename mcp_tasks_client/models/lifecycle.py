"""Handshake values: who is talking, what they can do, what they agreed on (L, SCH)."""

from __future__ import annotations

import attrs

from ._base import JSONObject, extra_field, meta_field, wire

__all__ = [
    "ClientCapabilities",
    "ClientTasksCapability",
    "ElicitationCapability",
    "Implementation",
    "InitializeResult",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTasksCapability",
    "ToolsCapability",
]


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
    experimental: JSONObject | None = None
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
    extra: JSONObject = extra_field()


@attrs.frozen
class InitializeResult:
    """The server's answer to ``initialize`` (V-01)."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
