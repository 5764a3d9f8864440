"""The server's features, typed: tools, resources and prompts, with the multi-round-trip
requests (MRTR) of 2026-07-28 answered by the caller's handlers when the caller passes them.

May import what ``_client.py`` may. Part of ``Client`` (combined in ``_client.py``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import models as _models
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
from .models import TASKS_EXTENSION

if TYPE_CHECKING:  # the feature models are read from ``models`` when first used; the
    # builders and the result cache's hints where a call or a listing needs them
    from ._cache import CacheHints
    from .builders import GetPrompt, ReadResource, ToolCall
    from .models import (
        CallToolResult,
        GetPromptResult,
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

__all__ = ["FeatureCalls", "Pages", "unmarked"]

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
        return (await self._tools_page(cursor, timeout=timeout))[0]

    async def _tools_page(
        self, cursor: str | None, *, timeout: float | None
    ) -> tuple[ListToolsResult, bool]:
        """:meth:`list_tools_page`, and whether the page was served from the cache."""
        params = {"cursor": cursor} if cursor is not None else None
        reader = _reader(self, _models.ListToolsResult)
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
        return page, served

    def list_tools(self, *, timeout: float | None = None) -> Pages[Tool]:
        """Every tool, following ``nextCursor`` page by page (``timeout`` applies per page; a
        cursor the server already gave is a ProtocolError: the pages would loop forever).
        The :class:`Pages` it returns says, once read, the whole list's caching hints
        (``hints``: the shortest TTL of its pages, private if any page is) and how many of
        its pages came from the cache (``cached_pages``)."""
        return Pages("tools/list", self._tools_page, "tools", timeout)

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
        return (
            await self._list_page(
                "resources/list", _models.ListResourcesResult, cursor, timeout=timeout
            )
        )[0]

    def list_resources(self, *, timeout: float | None = None) -> Pages[Resource]:
        """Every resource, page by page (as :meth:`list_tools`)."""
        return Pages("resources/list", self._pages_of("resources/list"), "resources", timeout)

    async def list_prompts_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListPromptsResult:
        """One page of ``prompts/list``; the cursor is opaque.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting
        (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        model = _models.ListPromptsResult
        return (await self._list_page("prompts/list", model, cursor, timeout=timeout))[0]

    def list_prompts(self, *, timeout: float | None = None) -> Pages[Prompt]:
        """Every prompt, page by page (as :meth:`list_tools`)."""
        return Pages("prompts/list", self._pages_of("prompts/list"), "prompts", timeout)

    async def list_resource_templates_page(
        self, cursor: str | None = None, *, timeout: float | None = None
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``; the cursor is opaque.
        Deadline: timeout (default Timeouts.request). Cancelled: stops waiting
        (notifications/cancelled sent when Timeouts.notify_cancelled).
        """
        return (
            await self._list_page(
                "resources/templates/list",
                _models.ListResourceTemplatesResult,
                cursor,
                timeout=timeout,
            )
        )[0]

    def list_resource_templates(self, *, timeout: float | None = None) -> Pages[ResourceTemplate]:
        """Every resource template, page by page (as :meth:`list_tools`)."""
        method = "resources/templates/list"
        return Pages(method, self._pages_of(method), "resource_templates", timeout)

    async def _list_page(
        self, method: str, cls: type[T], cursor: str | None, *, timeout: float | None
    ) -> tuple[T, bool]:
        """One page of a cacheable list, and whether it was served from the cache."""
        params = {"cursor": cursor} if cursor is not None else None
        return await self._fetch_marked(method, params, _reader(self, cls), timeout)

    def _pages_of(self, method: str) -> Callable[..., Awaitable[tuple[Any, bool]]]:
        return functools.partial(self._list_page, method, getattr(_models, _LIST_RESULTS[method]))

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
        if isinstance(read, str):
            from .builders import ReadResource

            read = ReadResource(read)
        request = read
        once = functools.partial(
            self._answer, "resources/read", _models.ReadResourceResult, timeout
        )
        return await self._mrtr(request, once, inputs)

    async def get_prompt(
        self, get: GetPrompt, *, timeout: float | None = None, inputs: CallInputs | None = None
    ) -> GetPromptResult:
        """``prompts/get``; MRTR as for :meth:`read_resource` (``timeout`` per round).
        Cancelled: stops waiting between or within rounds; an answer already sent for a round
        stays sent.
        """
        once = functools.partial(self._answer, "prompts/get", _models.GetPromptResult, timeout)
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
        ``timeout`` applies to each round. Related task ids (``call.related_to``) this client
        cannot vouch for raise UnknownRelatedTask before anything is sent.
        Cancelled: stops waiting; the server may still run the call (notifications/cancelled is
        sent for it when Timeouts.notify_cancelled, C-13).
        """
        from .builders import TaskToolCall, ToolCall

        if isinstance(call, TaskToolCall):
            raise UsageError(
                f"call_tool() makes a plain call; {call.name!r} was built with as_task(): "
                "pass it to start() to run it as a task, or pass the ToolCall itself"
            )
        if not isinstance(call, ToolCall):
            raise UsageError(f"call_tool() takes a ToolCall, got {type(call).__name__}")
        self._driver.check_plain_call(call.name, tool or self._known_tools.get(call.name))
        self._check_related(call)
        once = functools.partial(self._call_tool_once, timeout=timeout)
        return await self._mrtr(call, once, inputs)

    async def _call_tool_once(self, call: ToolCall, *, timeout: float | None) -> CallToolResult:
        try:
            result = await self._answer("tools/call", _models.CallToolResult, timeout, call)
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
        if isinstance(answer, _models.InputRequiredResult):
            raise InputRequired(method, getattr(request, "name", None) or request.uri, answer)
        return answer


def _unwarned(problem: Any) -> None:
    """Where a cached page's problems go: they were reported when it was fetched."""


def _reader(client: ClientBase, cls: type[T]) -> Callable[[Any], T]:
    return functools.partial(client.driver.converter.decode, cls=cls)


_LIST_RESULTS: dict[str, str] = {
    "resources/list": "ListResourcesResult",
    "prompts/list": "ListPromptsResult",
    "resources/templates/list": "ListResourceTemplatesResult",
}
"""Each paginated list's result model, by its name in ``models`` (read there on first use: a
client that lists no prompts nor resources never builds their classes)."""


class Pages(AsyncIterator[T]):
    """Every item of a paginated list, following ``nextCursor`` (opaque, C-23), page by page
    as it is iterated; a cursor the server already gave is a ProtocolError (the pages would
    loop forever). ``Client.list_tools()`` and the other all-pages helpers return one.

    Pages are requested (and cached, with a :class:`~mcp_tasks_client.ResultCache`) one by
    one, so a list can come back part from the cache and part fresh. What was read so far is
    reported: ``hints``, the whole list's caching hints (SEP-2549: the shortest TTL of its
    pages, and private when one page is; None before the first page, or when a page carries
    none, as in 2025-11-25), ``pages`` (pages read) and ``cached_pages`` (of those, served
    from the cache). Read them once the iteration ends for the whole list."""

    def __init__(
        self,
        method: str,
        page_of: Callable[..., Awaitable[tuple[Any, bool]]],
        field: str,
        timeout: float | None,
    ) -> None:
        self.method = method
        self.hints: CacheHints | None = None
        """The combined hints of the pages read so far (:meth:`CacheHints.combine`)."""
        self.pages = 0
        """Pages read so far."""
        self.cached_pages = 0
        """Pages read so far that were served from the ResultCache (no request sent)."""
        self._items = self._walk(page_of, field, timeout)

    def __repr__(self) -> str:
        return (
            f"Pages({self.method!r}, pages={self.pages}, cached_pages={self.cached_pages}, "
            f"hints={self.hints!r})"
        )

    def __aiter__(self) -> Pages[T]:
        return self

    async def __anext__(self) -> T:
        """The next item; the next page is requested when the current one is used up.
        Deadline: the list's timeout, per page. Cancelled: stops waiting for the page."""
        return await self._items.__anext__()

    async def aclose(self) -> None:
        """Stop early (no further page is requested). Deadline: none, nothing is sent.
        Cancelled: returns."""
        await self._items.aclose()

    async def _walk(
        self,
        page_of: Callable[..., Awaitable[tuple[Any, bool]]],
        field: str,
        timeout: float | None,
    ) -> AsyncGenerator[T, None]:
        from ._cache import CacheHints

        seen: set[str] = set()
        cursor: str | None = None
        while True:
            page, served = await page_of(cursor, timeout=timeout)
            hints = CacheHints.of(page)
            self.hints = hints if self.pages == 0 else CacheHints.combine((self.hints, hints))
            self.pages += 1
            self.cached_pages += served
            for item in getattr(page, field):
                yield item
            cursor = page.next_cursor
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolError(
                    f"{self.method} gave the cursor {cursor[:100]!r} twice: its pages loop"
                )
            seen.add(cursor)


def unmarked(
    page_of: Callable[..., Awaitable[Any]],
) -> Callable[..., Awaitable[tuple[Any, bool]]]:
    """A page function that never uses the cache, as :class:`Pages` takes one."""

    async def marked(cursor: str | None, *, timeout: float | None) -> tuple[Any, bool]:
        return await page_of(cursor, timeout=timeout), False

    return marked
