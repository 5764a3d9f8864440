"""Resources and prompts: what a tasks client calls besides tools (both generations).

Read like tools: ``resources/list`` and ``prompts/list`` page with an opaque cursor;
``resources/read`` and ``prompts/get`` may, in 2026-07-28, ask for input first (MRTR).
"""

from __future__ import annotations

import attrs

from ._base import JSONObject, extra_field, meta_field
from .content import BlobResourceContents, ContentBlock, TextResourceContents

__all__ = [
    "GetPromptResult",
    "ListPromptsResult",
    "ListResourcesResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
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
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ReadResourceResult:
    """What ``resources/read`` returned: the contents, as text or base64 blobs."""

    contents: tuple[TextResourceContents | BlobResourceContents, ...]
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
