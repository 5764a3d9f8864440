"""Content blocks carried by tool results and sampling messages (SCH ``ContentBlock``)."""

from __future__ import annotations

from typing import TypeAlias

import attrs

from ._base import JSONObject, extra_field, meta_field, wire

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "UnknownContent",
]


@attrs.frozen
class TextContent:
    """``{"type": "text"}``"""

    text: str
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ImageContent:
    """``{"type": "image"}``: base64 ``data`` of ``mime_type``."""

    data: str
    mime_type: str
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class AudioContent:
    """``{"type": "audio"}``: base64 ``data`` of ``mime_type``."""

    data: str
    mime_type: str
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ResourceLink:
    """``{"type": "resource_link"}``: a resource the server points at, not its contents."""

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
class TextResourceContents:
    """Resource contents as text."""

    uri: str
    text: str
    mime_type: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class BlobResourceContents:
    """Resource contents as base64 ``blob``."""

    uri: str
    blob: str
    mime_type: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class EmbeddedResource:
    """``{"type": "resource"}``: the contents of a resource, inline."""

    resource: TextResourceContents | BlobResourceContents
    annotations: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class UnknownContent:
    """A content block whose ``type`` this library does not know (kept whole, never dropped).

    Later protocol versions add block types (``tool_use``, ``tool_result`` in sampling); a client
    that refused them would break on every upgrade of the server.
    """

    type: str = wire("type")
    raw: JSONObject = attrs.field(factory=dict)


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | UnknownContent
)

CONTENT_TYPES: dict[str, type] = {
    "text": TextContent,
    "image": ImageContent,
    "audio": AudioContent,
    "resource_link": ResourceLink,
    "resource": EmbeddedResource,
}
