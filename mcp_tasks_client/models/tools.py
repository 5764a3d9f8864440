"""Tools, their task support, and what calling one returns (TL, T:115-117)."""

from __future__ import annotations

import enum

import attrs

from ._base import CacheScope, JSONObject, extra_field, meta_field
from .content import ContentBlock

__all__ = ["CallToolResult", "ListToolsResult", "TaskSupport", "Tool", "ToolExecution"]


class TaskSupport(enum.Enum):
    """``execution.taskSupport`` of a tool; absent means ``FORBIDDEN`` (C-17), where the
    listing carries it (2025-11-25)."""

    FORBIDDEN = "forbidden"
    OPTIONAL = "optional"
    REQUIRED = "required"
    UNKNOWN = "unknown"
    """Not a wire value: what :attr:`Tool.task_support` reads where the listing's generation
    does not carry task support (2026-07-28, E 4: the server decides per call). Never
    ``FORBIDDEN`` there: ``start()`` may well make a task."""


def _not_unknown(_: object, attribute: attrs.Attribute[TaskSupport | None], value: object) -> None:
    if value is TaskSupport.UNKNOWN:
        raise ValueError(f"{attribute.name}: TaskSupport.UNKNOWN is a reading, not a wire value")


@attrs.frozen
class ToolExecution:
    """``Tool.execution``."""

    task_support: TaskSupport | None = attrs.field(default=None, validator=_not_unknown)
    extra: JSONObject = extra_field()


@attrs.frozen
class Tool:
    """A tool the server offers."""

    name: str
    input_schema: JSONObject
    title: str | None = None
    description: str | None = None
    output_schema: JSONObject | None = None
    annotations: JSONObject | None = None
    execution: ToolExecution | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
    task_support_listed: bool = attrs.field(
        default=True, kw_only=True, eq=False, metadata={"local": True}
    )
    """Whether the listing's generation carries ``execution.taskSupport`` (2025-11-25: yes;
    2026-07-28: no, E 4). Set by the decoder, never on the wire, not part of equality."""

    @property
    def task_support(self) -> TaskSupport:
        """The tool's task support: ``execution.taskSupport``; absent, ``FORBIDDEN`` where the
        listing carries it (C-17), ``UNKNOWN`` where it does not (2026-07-28, E 4)."""
        if self.execution is None or self.execution.task_support is None:
            return TaskSupport.FORBIDDEN if self.task_support_listed else TaskSupport.UNKNOWN
        return self.execution.task_support


@attrs.frozen
class ListToolsResult:
    """One page of ``tools/list``."""

    tools: tuple[Tool, ...]
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
class CallToolResult:
    """What a tool returned: ``content`` (required), ``structuredContent``, ``isError``."""

    content: tuple[ContentBlock, ...]
    structured_content: JSONObject | None = None
    is_error: bool | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
