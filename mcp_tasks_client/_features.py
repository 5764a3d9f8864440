"""The server's features, typed: tools, resources and prompts, with the multi-round-trip
requests (MRTR) of 2026-07-28 answered by the caller's handlers when the caller passes them.

May import what ``_client.py`` may. Part of ``Client`` (combined in ``_client.py``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from ._client_base import CallInputs, ClientBase
from ._drivers import refusals
from ._exceptions import (
    InputRequired,
    MethodNotFound,
    MissingClientCapability,
    ProtocolError,
    TaskAugmentationRequired,
    UsageError,
)
from .builders import GetPrompt, ReadResource, TaskToolCall, ToolCall
from .models import (
    TASKS_EXTENSION,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)

__all__ = ["FeatureCalls", "paginate"]

T = TypeVar("T")


class FeatureCalls(ClientBase):
    """Tools, resources and prompts (part of ``Client``)."""

    async def list_tools_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListToolsResult:
        """One page of ``tools/list``; the cursor is opaque (C-23). The tools' metadata guards
        later calls (:meth:`known_tool`); a tool the generation cannot call as listed is
        reported (a warning) and left out (E C60).
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting, the page is not
        read (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        params = {"cursor": cursor} if cursor is not None else None
        reader = _reader(self, ListToolsResult)
        page, served = await self._fetch_marked("tools/list", params, reader, timeout)
        keep = self.limits.max_known_tools
        # a page served from the cache was reported when it came: not warned again
        warn = _unwarned if served else self._session.warn
        page = self._driver.read_tools_page(page, warn, keep)
        for tool in page.tools:
            self._known_tools.pop(tool.name, None)
            self._known_tools[tool.name] = tool
        while len(self._known_tools) > keep:  # the oldest go first
            del self._known_tools[next(iter(self._known_tools))]
        return page

    def list_tools(self, *, timeout: float | None = None) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` page by page (``timeout`` applies per page; a
        cursor the server already gave is a ProtocolError: the pages would loop forever)."""
        return paginate("tools/list", self.list_tools_page, "tools", timeout)

    def known_tool(self, name: str) -> Tool | None:
        """The tool's metadata as the caller's own ``list_tools`` last saw it (no request)."""
        return self._known_tools.get(name)

    async def list_resources_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListResourcesResult:
        """One page of ``resources/list``; the cursor is opaque.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting
        (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        params = {"cursor": cursor} if cursor is not None else None
        reader = _reader(self, ListResourcesResult)
        return await self._fetch("resources/list", params, reader, timeout)

    def list_resources(self, *, timeout: float | None = None) -> AsyncIterator[Resource]:
        """Every resource, page by page (as :meth:`list_tools`)."""
        return paginate("resources/list", self.list_resources_page, "resources", timeout)

    async def list_prompts_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListPromptsResult:
        """One page of ``prompts/list``; the cursor is opaque.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting
        (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        params = {"cursor": cursor} if cursor is not None else None
        reader = _reader(self, ListPromptsResult)
        return await self._fetch("prompts/list", params, reader, timeout)

    def list_prompts(self, *, timeout: float | None = None) -> AsyncIterator[Prompt]:
        """Every prompt, page by page (as :meth:`list_tools`)."""
        return paginate("prompts/list", self.list_prompts_page, "prompts", timeout)

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``; the cursor is opaque.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting
        (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        params = {"cursor": cursor} if cursor is not None else None
        reader = _reader(self, ListResourceTemplatesResult)
        return await self._fetch("resources/templates/list", params, reader, timeout)

    def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page by page (as :meth:`list_tools`)."""
        return paginate(
            "resources/templates/list",
            self.list_resource_templates_page,
            "resource_templates",
            timeout,
        )

    async def read_resource(
        self,
        read: ReadResource | str,
        *,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> ReadResourceResult:
        """``resources/read``. In 2026-07-28 it may need input first: InputRequired, or with
        ``inputs`` answered and retried as for :meth:`call_tool` (``timeout`` per round).
        Cancelled: stops waiting between or within rounds; an answer already sent for a round
        stays sent.
        """
        request = ReadResource(read) if isinstance(read, str) else read
        once = functools.partial(self._answer, "resources/read", ReadResourceResult, timeout)
        return await self._mrtr(request, once, inputs)

    async def get_prompt(
        self, get: GetPrompt, *, timeout: float | None = None, inputs: CallInputs | None = None
    ) -> GetPromptResult:
        """``prompts/get``; MRTR as for :meth:`read_resource` (``timeout`` per round).
        Cancelled: stops waiting between or within rounds; an answer already sent for a round
        stays sent.
        """
        once = functools.partial(self._answer, "prompts/get", GetPromptResult, timeout)
        return await self._mrtr(get, once, inputs)

    async def call_tool(
        self,
        call: ToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> CallToolResult:
        """A plain ``tools/call``, never task-augmented (2026-07-28: the tasks extension is not
        declared, so the server cannot make it a task, E S2).

        The tool's own errors are in ``is_error``; protocol errors raise RPCError. A tool whose
        metadata (``tool=``, or what the caller's ``list_tools`` saw) requires a task raises
        TaskAugmentationRequired before anything is sent (C-17); so does the server's refusal
        of such a call. A 2026-07-28 answer that needs input first (MRTR, E C45-C48) raises
        InputRequired; with ``inputs`` (an InputRouter, for this call only) it is answered by
        its default handlers and the call retried, at most ``Limits.max_input_rounds`` times.
        ``timeout`` applies to each round.
        Cancelled: stops waiting; the server may still run the call (notifications/cancelled is
        sent for it when Timeouts.notify_cancelled, C-13).
        """
        if isinstance(call, TaskToolCall):
            raise UsageError(
                f"call_tool() makes a plain call; {call.name!r} was built with as_task(): "
                "pass it to start() to run it as a task, or pass the ToolCall itself"
            )
        if not isinstance(call, ToolCall):
            raise UsageError(f"call_tool() takes a ToolCall, got {type(call).__name__}")
        self._driver.check_plain_call(call.name, tool or self._known_tools.get(call.name))
        once = functools.partial(self._call_tool_once, timeout=timeout)
        return await self._mrtr(call, once, inputs)

    async def _call_tool_once(self, call: ToolCall, *, timeout: float | None) -> CallToolResult:
        try:
            result = await self._answer("tools/call", CallToolResult, timeout, call)
        except MethodNotFound as exc:
            if refusals.mentions_task(exc.message):
                raise TaskAugmentationRequired(
                    call.name, server_said=exc.message, refusal=exc
                ) from exc
            raise
        except MissingClientCapability as exc:
            if TASKS_EXTENSION in exc.extensions:  # E S3: only runs as a task
                raise TaskAugmentationRequired(
                    call.name, server_said=exc.message, refusal=exc
                ) from exc
            raise
        said = refusals.error_text(result)
        if refusals.requires_task(said):
            raise TaskAugmentationRequired(call.name, server_said=said)
        return result

    async def _answer(self, method: str, cls: type[T], timeout: float | None, request: Any) -> T:
        """One round of a request that cannot make a task: ``cls``, or InputRequired. A
        cacheable one (``resources/read``) goes through the caller's ResultCache: its MRTR
        retries never do (they carry ``inputResponses`` / ``requestState``)."""
        reader = functools.partial(self._driver.read_answer, cls=cls)
        params = self._call_params(request.params())
        answer = await self._fetch(method, params, reader, timeout)
        if isinstance(answer, InputRequiredResult):
            raise InputRequired(method, getattr(request, "name", None) or request.uri, answer)
        return answer


def _unwarned(problem: Any) -> None:
    """Where a cached page's problems go: they were reported when it was fetched."""


def _reader(client: ClientBase, cls: type[T]) -> Callable[[Any], T]:
    return functools.partial(client._driver.converter.decode, cls=cls)


async def paginate(
    method: str,
    page_of: Callable[..., Awaitable[Any]],
    field: str,
    timeout: float | None,
) -> AsyncIterator[Any]:
    """Every item of a paginated list, following ``nextCursor`` (opaque, C-23); a cursor the
    server already gave is a ProtocolError (the pages would loop forever)."""
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        page = await page_of(cursor, timeout=timeout)
        for item in getattr(page, field):
            yield item
        cursor = page.next_cursor
        if cursor is None:
            return
        if cursor in seen:
            raise ProtocolError(f"{method} gave the cursor {cursor[:100]!r} twice: its pages loop")
        seen.add(cursor)
