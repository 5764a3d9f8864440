"""Tools, their task support, and what calling one returns (TL, T:115-117)."""

from __future__ import annotations

import enum

import attrs

from ._base import CacheScope, JSONObject, extra_field, meta_field
from .content import ContentBlock

__all__ = ["CallToolResult", "ListToolsResult", "TaskSupport", "Tool", "ToolExecution"]


class TaskSupport(enum.Enum):
    """``execution.taskSupport`` of a tool; absent means ``FORBIDDEN`` (C-17)."""

    FORBIDDEN = "forbidden"
    OPTIONAL = "optional"
    REQUIRED = "required"


@attrs.frozen
class ToolExecution:
    """``Tool.execution``."""

    task_support: TaskSupport | None = None
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

    @property
    def task_support(self) -> TaskSupport:
        """The tool's task support, with an absent field read as ``FORBIDDEN`` (C-17)."""
        if self.execution is None or self.execution.task_support is None:
            return TaskSupport.FORBIDDEN
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
