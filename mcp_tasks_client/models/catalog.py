"""Resources and prompts: what a tasks client calls besides tools (both generations).

Read like tools: ``resources/list`` and ``prompts/list`` page with an opaque cursor;
``resources/read`` and ``prompts/get`` may, in 2026-07-28, ask for input first (MRTR). The lists
and ``resources/read`` are cacheable in 2026-07-28: they carry ``ttl_ms`` and ``cache_scope``
(SEP-2549; None in 2025-11-25, which has no hints).
"""

from __future__ import annotations

import attrs

from ._base import CacheScope, JSONObject, extra_field, meta_field
from .content import BlobResourceContents, ContentBlock, TextResourceContents

__all__ = [
    "GetPromptResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
]


@attrs.frozen
class Resource:
    """A resource the server lists."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ListResourcesResult:
    """One page of ``resources/list``."""

    resources: tuple[Resource, ...]
    next_cursor: str | None = None
    ttl_ms: int | None = attrs.field(default=None, kw_only=True)
    """``ttlMs`` (2026-07-28, SEP-2549): how long, in ms, the result may be reused; None where
    the generation carries no hints (2025-11-25), 0 when the server sent none (see
    :class:`~mcp_tasks_client.models.CacheScope`)."""
    cache_scope: CacheScope | None = attrs.field(default=None, kw_only=True)
    """``cacheScope`` (2026-07-28): who may reuse it; None where the generation carries no
    hints."""
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ResourceTemplate:
    """A parameterised resource the server lists (``uriTemplate``, RFC 6570)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ListResourceTemplatesResult:
    """One page of ``resources/templates/list``."""

    resource_templates: tuple[ResourceTemplate, ...]
    next_cursor: str | None = None
    ttl_ms: int | None = attrs.field(default=None, kw_only=True)
    """``ttlMs`` (2026-07-28, SEP-2549): how long, in ms, the result may be reused; None where
    the generation carries no hints (2025-11-25), 0 when the server sent none (see
    :class:`~mcp_tasks_client.models.CacheScope`)."""
    cache_scope: CacheScope | None = attrs.field(default=None, kw_only=True)
    """``cacheScope`` (2026-07-28): who may reuse it; None where the generation carries no
    hints."""
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ReadResourceResult:
    """What ``resources/read`` returned: the contents, as text or base64 blobs."""

    contents: tuple[TextResourceContents | BlobResourceContents, ...]
    ttl_ms: int | None = attrs.field(default=None, kw_only=True)
    """``ttlMs`` (2026-07-28, SEP-2549): how long, in ms, the result may be reused; None where
    the generation carries no hints (2025-11-25), 0 when the server sent none (see
    :class:`~mcp_tasks_client.models.CacheScope`)."""
    cache_scope: CacheScope | None = attrs.field(default=None, kw_only=True)
    """``cacheScope`` (2026-07-28): who may reuse it; None where the generation carries no
    hints."""
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class PromptArgument:
    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None
    extra: JSONObject = extra_field()


@attrs.frozen
class Prompt:
    """A prompt the server lists."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ListPromptsResult:
    """One page of ``prompts/list``."""

    prompts: tuple[Prompt, ...]
    next_cursor: str | None = None
    ttl_ms: int | None = attrs.field(default=None, kw_only=True)
    """``ttlMs`` (2026-07-28, SEP-2549): how long, in ms, the result may be reused; None where
    the generation carries no hints (2025-11-25), 0 when the server sent none (see
    :class:`~mcp_tasks_client.models.CacheScope`)."""
    cache_scope: CacheScope | None = attrs.field(default=None, kw_only=True)
    """``cacheScope`` (2026-07-28): who may reuse it; None where the generation carries no
    hints."""
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class PromptMessage:
    role: str
    content: ContentBlock
    extra: JSONObject = extra_field()


@attrs.frozen
class GetPromptResult:
    """What ``prompts/get`` returned."""

    messages: tuple[PromptMessage, ...]
    description: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
