"""Hypothesis strategies for every model of ``mcp_tasks_client.models`` and for raw JSON.

The strategies produce values that a 2025-11-25 peer could put on the wire, so that
``decode(encode(m)) == m`` is expected to hold for each of them:

- ``extra`` dicts never use a key the class itself reads (its wire keys, the discriminator
  ``type``/``mode`` of tagged classes, ``list``/``cancel``/``requests`` of task capabilities);
- ``meta`` dicts are JSON objects, sometimes carrying the spec's reserved keys;
- timestamps are timezone-aware, with microseconds and whole-minute offsets (RFC 3339, A-17);
- :class:`~mcp_tasks_client.models.UnknownContent` keeps its whole object, ``type`` included,
  in ``raw``, with a ``type`` this library does not know;
- ``ttl`` and ``pollInterval`` stay within ``0..MAX_DURATION_MS`` (the codec refuses the rest).

:data:`MODEL_STRATEGIES` maps every model class to its strategy; :func:`mutated` turns a valid
encoding into a near miss (a key deleted, a value of another JSON kind) for robustness tests;
:func:`wild_numbers` and :func:`timestamp_like_strings` are what a hostile or broken server could
put where a number or a timestamp goes, placed with :func:`number_paths` and :func:`replaced`.

Each factory builds its strategy once per distinct arguments and returns that same object on
later calls: building is what costs, drawing is cheap.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ParamSpec, TypeVar, cast

import attrs
from hypothesis import strategies as st

from mcp_tasks_client._codec._converter import wire_name
from mcp_tasks_client.models import (
    MAX_DURATION_MS,
    MODEL_IMMEDIATE_RESPONSE_META,
    RELATED_TASK_META,
    UNSET,
    AudioContent,
    BlobResourceContents,
    CacheScope,
    CallToolResult,
    ClientCapabilities,
    ClientTasksCapability,
    ContentBlock,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateTaskResult,
    DiscoverResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ErrorObject,
    GetPromptResult,
    ImageContent,
    Implementation,
    InitializeResult,
    InputRequest,
    InputRequiredResult,
    JSONObject,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    JSONValue,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListTasksResult,
    ListToolsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    RequestId,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Root,
    RootsCapability,
    SamplingCapability,
    SamplingMessage,
    ServerCapabilities,
    ServerTasksCapability,
    Task,
    TaskMetadata,
    TaskStatus,
    TaskSupport,
    TextContent,
    TextResourceContents,
    Tool,
    ToolExecution,
    ToolsCapability,
    UnknownContent,
    Unset,
)
from mcp_tasks_client.models.content import CONTENT_TYPES

__all__ = [
    "CACHEABLE_RESULTS",
    "GEN2_TASK_KEYS",
    "JSON_KINDS",
    "MODEL_STRATEGIES",
    "WIRE_MODELS",
    "audio_contents",
    "blob_resource_contents",
    "cache_hint_pairs",
    "call_tool_results",
    "client_capabilities",
    "client_tasks_capabilities",
    "content_blocks",
    "create_message_request_params",
    "create_message_results",
    "create_task_results",
    "detailed_tasks",
    "discover_results",
    "elicit_request_form_params",
    "elicit_request_url_params",
    "elicit_results",
    "elicitation_capabilities",
    "embedded_resources",
    "error_objects",
    "extras",
    "get_prompt_results",
    "image_contents",
    "implementations",
    "initialize_results",
    "input_requests",
    "input_required_results",
    "json_kind",
    "json_objects",
    "json_scalars",
    "json_values",
    "json_values_of_kind",
    "jsonrpc_errors",
    "jsonrpc_messages",
    "jsonrpc_notifications",
    "jsonrpc_requests",
    "jsonrpc_responses",
    "list_prompts_results",
    "list_resource_templates_results",
    "list_resources_results",
    "list_roots_results",
    "list_tasks_results",
    "list_tools_results",
    "metas",
    "mutated",
    "number_paths",
    "prompt_arguments",
    "prompt_messages",
    "prompts",
    "read_resource_results",
    "replaced",
    "request_ids",
    "resource_links",
    "resource_templates",
    "resources",
    "roots",
    "roots_capabilities",
    "sampling_capabilities",
    "sampling_messages",
    "server_capabilities",
    "server_tasks_capabilities",
    "strategy_for",
    "task_metadata",
    "task_statuses",
    "tasks",
    "text_contents",
    "text_resource_contents",
    "timestamp_like_strings",
    "timestamps",
    "timezones",
    "tool_executions",
    "tools",
    "tools_capabilities",
    "unknown_contents",
    "wild_numbers",
    "wire_cache_hints",
    "wire_keys",
    "with_cache_hints",
]

T = TypeVar("T")
P = ParamSpec("P")


def _shared(factory: Callable[P, T]) -> Callable[P, T]:
    """Build each strategy once per distinct arguments and hand out the same object after.

    Strategies are immutable, and building one (``builds`` inspects signatures, ``recursive``
    and ``filter`` set up state) costs far more than drawing from it.
    """
    return cast(Callable[P, T], functools.cache(factory))


# --- raw JSON ------------------------------------------------------------------------------

JSON_KINDS: tuple[str, ...] = ("null", "bool", "number", "string", "array", "object")
"""The six kinds of JSON value."""


def json_kind(value: JSONValue) -> str:
    """The JSON kind of a parsed value: one of :data:`JSON_KINDS`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


@_shared
def _keys() -> st.SearchStrategy[str]:
    return st.text(max_size=8)


@_shared
def _numbers() -> st.SearchStrategy[int | float]:
    return st.integers() | st.floats(allow_nan=False, allow_infinity=False)


@_shared
def json_scalars() -> st.SearchStrategy[JSONValue]:
    """``null``, booleans, integers, finite floats and strings."""
    return st.none() | st.booleans() | _numbers() | st.text(max_size=12)


@_shared
def json_values(max_leaves: int = 6) -> st.SearchStrategy[JSONValue]:
    """Any value ``json.loads`` can return (finite numbers only), nested at most a few levels."""
    return st.recursive(
        json_scalars(),
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(_keys(), children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


@_shared
def json_objects(max_size: int = 3) -> st.SearchStrategy[dict[str, JSONValue]]:
    """A JSON object with arbitrary JSON values."""
    return st.dictionaries(_keys(), json_values(), max_size=max_size)


@_shared
def json_values_of_kind(kind: str) -> st.SearchStrategy[JSONValue]:
    """JSON values of exactly one kind (see :func:`json_kind`)."""
    by_kind: dict[str, st.SearchStrategy[JSONValue]] = {
        "null": st.none(),
        "bool": st.booleans(),
        "number": _numbers(),
        "string": st.text(max_size=12),
        "array": st.lists(json_values(max_leaves=4), max_size=3),
        "object": json_objects(),
    }
    return by_kind[kind]


# --- building blocks -----------------------------------------------------------------------


def _optional(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.none() | strategy


def _tuples(strategy: st.SearchStrategy[T], max_size: int = 3) -> st.SearchStrategy[tuple[T, ...]]:
    return st.lists(strategy, max_size=max_size).map(tuple)


@_shared
def _texts() -> st.SearchStrategy[str]:
    return st.text(max_size=12)


@_shared
def _non_negative_ints() -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=2**53)


@_shared
def _durations_ms() -> st.SearchStrategy[int]:
    """Milliseconds the codec accepts for ``ttl`` and ``pollInterval`` (0..MAX_DURATION_MS)."""
    return st.integers(min_value=0, max_value=MAX_DURATION_MS)


@_shared
def _task_durations_ms() -> st.SearchStrategy[int | float]:
    """``Task.ttl``/``pollInterval`` are JSON numbers (A-18): integers or floats, in range."""
    floats = st.floats(min_value=0, max_value=MAX_DURATION_MS, allow_nan=False)
    return _durations_ms() | floats


_TAG_KEYS: Mapping[type, frozenset[str]] = {
    **{cls: frozenset({"type"}) for cls in CONTENT_TYPES.values()},
    UnknownContent: frozenset({"type"}),
    ElicitRequestFormParams: frozenset({"mode"}),
    ElicitRequestURLParams: frozenset({"mode"}),
}

_TASKS_CAPABILITY_KEYS = frozenset({"list", "cancel", "requests"})


def wire_keys(cls: type) -> frozenset[str]:
    """The JSON keys ``cls`` reads itself, so an ``extra`` dict must not use them.

    That is the wire name of every field but ``extra``, plus the discriminator of tagged
    classes; the task capabilities read ``list``, ``cancel`` and ``requests`` (A-09).
    """
    if cls in (ServerTasksCapability, ClientTasksCapability):
        return _TASKS_CAPABILITY_KEYS
    own = frozenset(
        wire_name(field) for field in attrs.fields(cls) if not field.metadata.get("extra")
    )
    return own | _TAG_KEYS.get(cls, frozenset())


@_shared
def extras(cls: type, max_size: int = 2) -> st.SearchStrategy[dict[str, JSONValue]]:
    """Unknown keys a newer peer might send for ``cls`` (none of them read by ``cls``)."""
    taken = wire_keys(cls)
    return st.dictionaries(
        _keys().filter(lambda key: key not in taken), json_values(), max_size=max_size
    )


@_shared
def metas() -> st.SearchStrategy[JSONObject | None]:
    """``_meta``: absent, or a JSON object, sometimes with the spec's reserved keys."""
    reserved = st.fixed_dictionaries(
        {},
        optional={
            RELATED_TASK_META: st.fixed_dictionaries({"taskId": _texts()}),
            "progressToken": st.text(max_size=8) | st.integers(),
        },
    )
    objects = st.builds(lambda a, b: {**a, **b}, json_objects(max_size=2), reserved)
    return st.none() | objects


@_shared
def request_ids() -> st.SearchStrategy[RequestId]:
    """A JSON-RPC request id: a string or an integer, never null (C-02)."""
    return st.integers() | st.text(max_size=8)


# --- time ----------------------------------------------------------------------------------

_UTC_SAFE_MIN = dt.datetime(1, 1, 2)
_UTC_SAFE_MAX = dt.datetime(9999, 12, 30)


@_shared
def timezones() -> st.SearchStrategy[dt.tzinfo]:
    """Fixed offsets RFC 3339 can write: UTC or whole minutes within a day."""
    minutes = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)
    return st.just(dt.timezone.utc) | minutes.map(lambda m: dt.timezone(dt.timedelta(minutes=m)))


@_shared
def timestamps(
    tz: st.SearchStrategy[dt.tzinfo] | None = None,
) -> st.SearchStrategy[dt.datetime]:
    """Timezone-aware datetimes with microsecond precision (A-17).

    The range stops a day short of ``datetime.min``/``max``, so every value can be shifted to
    UTC without overflow.
    """
    return st.datetimes(
        min_value=_UTC_SAFE_MIN,
        max_value=_UTC_SAFE_MAX,
        timezones=timezones() if tz is None else tz,
    )


# --- lifecycle -----------------------------------------------------------------------------


@_shared
def implementations() -> st.SearchStrategy[Implementation]:
    return st.builds(
        Implementation,
        name=_texts(),
        version=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        website_url=_optional(_texts()),
        extra=extras(Implementation),
    )


@_shared
def roots_capabilities() -> st.SearchStrategy[RootsCapability]:
    return st.builds(
        RootsCapability, list_changed=_optional(st.booleans()), extra=extras(RootsCapability)
    )


@_shared
def sampling_capabilities() -> st.SearchStrategy[SamplingCapability]:
    return st.builds(
        SamplingCapability,
        tools=_optional(json_objects()),
        context=_optional(json_objects()),
        extra=extras(SamplingCapability),
    )


@_shared
def elicitation_capabilities() -> st.SearchStrategy[ElicitationCapability]:
    return st.builds(
        ElicitationCapability,
        form=_optional(json_objects()),
        url=_optional(json_objects()),
        extra=extras(ElicitationCapability),
    )


@_shared
def client_tasks_capabilities() -> st.SearchStrategy[ClientTasksCapability]:
    return st.builds(
        ClientTasksCapability,
        list=st.booleans(),
        cancel=st.booleans(),
        sampling_create_message=st.booleans(),
        elicitation_create=st.booleans(),
        extra=extras(ClientTasksCapability),
    )


@_shared
def client_capabilities() -> st.SearchStrategy[ClientCapabilities]:
    return st.builds(
        ClientCapabilities,
        roots=_optional(roots_capabilities()),
        sampling=_optional(sampling_capabilities()),
        elicitation=_optional(elicitation_capabilities()),
        tasks=_optional(client_tasks_capabilities()),
        experimental=_optional(json_objects()),
        extensions=_optional(json_objects()),
        extra=extras(ClientCapabilities),
    )


@_shared
def tools_capabilities() -> st.SearchStrategy[ToolsCapability]:
    return st.builds(
        ToolsCapability, list_changed=_optional(st.booleans()), extra=extras(ToolsCapability)
    )


@_shared
def server_tasks_capabilities() -> st.SearchStrategy[ServerTasksCapability]:
    return st.builds(
        ServerTasksCapability,
        list=st.booleans(),
        cancel=st.booleans(),
        tools_call=st.booleans(),
        extra=extras(ServerTasksCapability),
    )


@_shared
def server_capabilities() -> st.SearchStrategy[ServerCapabilities]:
    return st.builds(
        ServerCapabilities,
        tools=_optional(tools_capabilities()),
        tasks=_optional(server_tasks_capabilities()),
        logging=_optional(json_objects()),
        completions=_optional(json_objects()),
        prompts=_optional(json_objects()),
        resources=_optional(json_objects()),
        experimental=_optional(json_objects()),
        extensions=_optional(json_objects()),
        extra=extras(ServerCapabilities),
    )


@_shared
def initialize_results() -> st.SearchStrategy[InitializeResult]:
    return st.builds(
        InitializeResult,
        protocol_version=st.just("2025-11-25") | _texts(),
        capabilities=server_capabilities(),
        server_info=implementations(),
        instructions=_optional(_texts()),
        meta=metas(),
        extra=extras(InitializeResult),
    )


# --- content -------------------------------------------------------------------------------

_MIME_TYPES = st.sampled_from(["text/plain", "image/png", "audio/wav", "application/json"])


@_shared
def text_contents() -> st.SearchStrategy[TextContent]:
    return st.builds(
        TextContent,
        text=_texts(),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(TextContent),
    )


@_shared
def image_contents() -> st.SearchStrategy[ImageContent]:
    return st.builds(
        ImageContent,
        data=_texts(),
        mime_type=_MIME_TYPES | _texts(),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(ImageContent),
    )


@_shared
def audio_contents() -> st.SearchStrategy[AudioContent]:
    return st.builds(
        AudioContent,
        data=_texts(),
        mime_type=_MIME_TYPES | _texts(),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(AudioContent),
    )


@_shared
def resource_links() -> st.SearchStrategy[ResourceLink]:
    return st.builds(
        ResourceLink,
        uri=_texts(),
        name=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        mime_type=_optional(_texts()),
        size=_optional(_non_negative_ints()),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(ResourceLink),
    )


@_shared
def text_resource_contents() -> st.SearchStrategy[TextResourceContents]:
    return st.builds(
        TextResourceContents,
        uri=_texts(),
        text=_texts(),
        mime_type=_optional(_texts()),
        meta=metas(),
        extra=extras(TextResourceContents),
    )


@_shared
def blob_resource_contents() -> st.SearchStrategy[BlobResourceContents]:
    return st.builds(
        BlobResourceContents,
        uri=_texts(),
        blob=_texts(),
        mime_type=_optional(_texts()),
        meta=metas(),
        extra=extras(BlobResourceContents),
    )


@_shared
def embedded_resources() -> st.SearchStrategy[EmbeddedResource]:
    return st.builds(
        EmbeddedResource,
        resource=text_resource_contents() | blob_resource_contents(),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(EmbeddedResource),
    )


@_shared
def unknown_contents() -> st.SearchStrategy[UnknownContent]:
    """A block of a type this library does not know, e.g. sampling's ``tool_use``.

    ``raw`` is the whole JSON object, so it carries ``"type"`` too.
    """
    tags = (st.sampled_from(["tool_use", "tool_result"]) | _texts()).filter(
        lambda tag: tag not in CONTENT_TYPES
    )
    return st.builds(
        lambda tag, body: UnknownContent(type=tag, raw={**body, "type": tag}),
        tags,
        json_objects(),
    )


@_shared
def content_blocks() -> st.SearchStrategy[ContentBlock]:
    """Any content block, the unknown kind included."""
    return st.one_of(
        text_contents(),
        image_contents(),
        audio_contents(),
        resource_links(),
        embedded_resources(),
        unknown_contents(),
    )


# --- resources and prompts -----------------------------------------------------------------


@_shared
def resources() -> st.SearchStrategy[Resource]:
    return st.builds(
        Resource,
        uri=_texts(),
        name=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        mime_type=_optional(_texts()),
        size=_optional(_non_negative_ints()),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(Resource),
    )


@_shared
def list_resources_results() -> st.SearchStrategy[ListResourcesResult]:
    return st.builds(
        ListResourcesResult,
        resources=_tuples(resources(), max_size=2),
        next_cursor=_optional(_texts()),
        meta=metas(),
        extra=extras(ListResourcesResult),
    )


@_shared
def resource_templates() -> st.SearchStrategy[ResourceTemplate]:
    return st.builds(
        ResourceTemplate,
        uri_template=_texts(),
        name=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        mime_type=_optional(_texts()),
        annotations=_optional(json_objects()),
        meta=metas(),
        extra=extras(ResourceTemplate),
    )


@_shared
def list_resource_templates_results() -> st.SearchStrategy[ListResourceTemplatesResult]:
    return st.builds(
        ListResourceTemplatesResult,
        resource_templates=_tuples(resource_templates(), max_size=2),
        next_cursor=_optional(_texts()),
        meta=metas(),
        extra=extras(ListResourceTemplatesResult),
    )


@_shared
def read_resource_results() -> st.SearchStrategy[ReadResourceResult]:
    contents = st.one_of(text_resource_contents(), blob_resource_contents())
    return st.builds(
        ReadResourceResult,
        contents=_tuples(contents, max_size=2),
        meta=metas(),
        extra=extras(ReadResourceResult),
    )


@_shared
def prompt_arguments() -> st.SearchStrategy[PromptArgument]:
    return st.builds(
        PromptArgument,
        name=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        required=_optional(st.booleans()),
        extra=extras(PromptArgument),
    )


@_shared
def prompts() -> st.SearchStrategy[Prompt]:
    return st.builds(
        Prompt,
        name=_texts(),
        title=_optional(_texts()),
        description=_optional(_texts()),
        arguments=_optional(_tuples(prompt_arguments(), max_size=2)),
        meta=metas(),
        extra=extras(Prompt),
    )


@_shared
def list_prompts_results() -> st.SearchStrategy[ListPromptsResult]:
    return st.builds(
        ListPromptsResult,
        prompts=_tuples(prompts(), max_size=2),
        next_cursor=_optional(_texts()),
        meta=metas(),
        extra=extras(ListPromptsResult),
    )


@_shared
def prompt_messages() -> st.SearchStrategy[PromptMessage]:
    roles = st.sampled_from(["user", "assistant"]) | _texts()
    return st.builds(
        PromptMessage, role=roles, content=content_blocks(), extra=extras(PromptMessage)
    )


@_shared
def get_prompt_results() -> st.SearchStrategy[GetPromptResult]:
    return st.builds(
        GetPromptResult,
        messages=_tuples(prompt_messages(), max_size=2),
        description=_optional(_texts()),
        meta=metas(),
        extra=extras(GetPromptResult),
    )


# --- tools ---------------------------------------------------------------------------------


@_shared
def tool_executions() -> st.SearchStrategy[ToolExecution]:
    return st.builds(
        ToolExecution,
        # UNKNOWN is a reading of a 2026-07-28 listing, never a wire value.
        task_support=_optional(st.sampled_from([s for s in TaskSupport if s.value != "unknown"])),
        extra=extras(ToolExecution),
    )


@_shared
def tools() -> st.SearchStrategy[Tool]:
    schema = st.builds(lambda props: {"type": "object", **props}, json_objects(max_size=2))
    return st.builds(
        Tool,
        name=_texts(),
        input_schema=schema,
        title=_optional(_texts()),
        description=_optional(_texts()),
        output_schema=_optional(schema),
        annotations=_optional(json_objects()),
        execution=_optional(tool_executions()),
        meta=metas(),
        extra=extras(Tool),
    )


@_shared
def list_tools_results() -> st.SearchStrategy[ListToolsResult]:
    return st.builds(
        ListToolsResult,
        tools=_tuples(tools(), max_size=2),
        next_cursor=_optional(_texts()),
        meta=metas(),
        extra=extras(ListToolsResult),
    )


@_shared
def call_tool_results() -> st.SearchStrategy[CallToolResult]:
    return st.builds(
        CallToolResult,
        content=_tuples(content_blocks()),
        structured_content=_optional(json_objects()),
        is_error=_optional(st.booleans()),
        meta=metas(),
        extra=extras(CallToolResult),
    )


# --- tasks ---------------------------------------------------------------------------------


@_shared
def task_statuses() -> st.SearchStrategy[TaskStatus]:
    return st.sampled_from(TaskStatus)


@_shared
def task_metadata() -> st.SearchStrategy[TaskMetadata]:
    """``params.task``: a requested ttl in ms, or none (the receiver's default)."""
    return st.builds(TaskMetadata, ttl=_optional(_durations_ms()), extra=extras(TaskMetadata))


@_shared
def tasks() -> st.SearchStrategy[Task]:
    """A Task; ``ttl`` is a number, ``None`` (unlimited) or ``UNSET`` (key left out, A-06).

    ``ttl`` and ``pollInterval`` stay within ``0..MAX_DURATION_MS``, as the codec demands.
    """
    ttls: st.SearchStrategy[int | float | Unset | None] = st.one_of(
        _task_durations_ms(), st.none(), st.just(UNSET)
    )
    return st.builds(
        Task,
        task_id=_texts(),
        status=task_statuses(),
        created_at=timestamps(),
        last_updated_at=timestamps(),
        ttl=ttls,
        status_message=_optional(_texts()),
        poll_interval=_optional(_task_durations_ms()),
        meta=metas(),
        extra=extras(Task),
    )


GEN2_TASK_KEYS = frozenset({"ttlMs", "pollIntervalMs", "resultType"})
"""Keys a 2026-07-28 task (or its CreateTaskResult) reads besides its fields' names."""


@_shared
def input_requests() -> st.SearchStrategy[InputRequest]:
    """One ``inputRequests`` entry: ``{method, params}`` (E C50); params kept raw."""
    methods = st.sampled_from(["elicitation/create", "sampling/createMessage", "roots/list"])
    return st.builds(
        InputRequest,
        method=methods | _texts(),
        params=_optional(json_objects()),
        extra=extras(InputRequest),
    )


@_shared
def detailed_tasks() -> st.SearchStrategy[Task]:
    """A 2026-07-28 task as ``tasks/get`` shows it: a Task that may inline ``result``,
    ``error`` and ``inputRequests`` (E 3.2); its extras avoid the 2026 keys."""
    gen2_extras = extras(Task).map(
        lambda extra: {k: v for k, v in extra.items() if k not in GEN2_TASK_KEYS}
    )
    return st.builds(
        attrs.evolve,
        tasks(),
        result=_optional(json_objects()),
        error=_optional(error_objects()),
        input_requests=_optional(st.dictionaries(_keys(), input_requests(), max_size=3)),
        extra=gen2_extras,
    )


@_shared
def input_required_results() -> st.SearchStrategy[InputRequiredResult]:
    return st.builds(
        InputRequiredResult,
        input_requests=_optional(st.dictionaries(_keys(), input_requests(), max_size=3)),
        request_state=_optional(st.text(max_size=40)),
        meta=metas(),
        extra=extras(InputRequiredResult),
    )


@_shared
def discover_results() -> st.SearchStrategy[DiscoverResult]:
    # 2026-07-28's alone: always with its hints, as that generation reads them
    return with_cache_hints(
        st.builds(
            DiscoverResult,
            supported_versions=_tuples(st.just("2026-07-28") | _texts()),
            capabilities=server_capabilities(),
            instructions=_optional(_texts()),
            meta=metas(),
            extra=extras(DiscoverResult),
        )
    )


@_shared
def create_task_results() -> st.SearchStrategy[CreateTaskResult]:
    """``{"task": Task}``; ``_meta`` sometimes has the model-immediate-response (T:175)."""
    immediate = st.fixed_dictionaries({MODEL_IMMEDIATE_RESPONSE_META: _texts()})
    meta = metas() | st.builds(lambda a, b: {**(a or {}), **b}, metas(), immediate)
    return st.builds(CreateTaskResult, task=tasks(), meta=meta, extra=extras(CreateTaskResult))


@_shared
def list_tasks_results() -> st.SearchStrategy[ListTasksResult]:
    return st.builds(
        ListTasksResult,
        tasks=_tuples(tasks(), max_size=2),
        next_cursor=_optional(_texts()),
        meta=metas(),
        extra=extras(ListTasksResult),
    )


# --- server -> client requests -----------------------------------------------------------


@_shared
def elicit_request_form_params() -> st.SearchStrategy[ElicitRequestFormParams]:
    schema = st.builds(
        lambda props: {"type": "object", "properties": props}, json_objects(max_size=2)
    )
    return st.builds(
        ElicitRequestFormParams,
        message=_texts(),
        requested_schema=schema,
        task=_optional(task_metadata()),
        meta=metas(),
        extra=extras(ElicitRequestFormParams),
    )


@_shared
def elicit_request_url_params() -> st.SearchStrategy[ElicitRequestURLParams]:
    return st.builds(
        ElicitRequestURLParams,
        message=_texts(),
        url=_texts(),
        elicitation_id=_texts(),
        task=_optional(task_metadata()),
        meta=metas(),
        extra=extras(ElicitRequestURLParams),
    )


@_shared
def elicit_results() -> st.SearchStrategy[ElicitResult]:
    return st.builds(
        ElicitResult,
        action=st.sampled_from(ElicitAction),
        content=_optional(json_objects()),
        meta=metas(),
        extra=extras(ElicitResult),
    )


@_shared
def _sampling_content() -> st.SearchStrategy[ContentBlock | tuple[ContentBlock, ...]]:
    return content_blocks() | _tuples(content_blocks(), max_size=2)


@_shared
def _roles() -> st.SearchStrategy[str]:
    return st.sampled_from(["user", "assistant"]) | _texts()


@_shared
def sampling_messages() -> st.SearchStrategy[SamplingMessage]:
    """A sampling message whose ``content`` is one block or an array of blocks."""
    return st.builds(
        SamplingMessage,
        role=_roles(),
        content=_sampling_content(),
        meta=metas(),
        extra=extras(SamplingMessage),
    )


@_shared
def create_message_request_params() -> st.SearchStrategy[CreateMessageRequestParams]:
    return st.builds(
        CreateMessageRequestParams,
        messages=_tuples(sampling_messages(), max_size=2),
        max_tokens=_non_negative_ints(),
        system_prompt=_optional(_texts()),
        include_context=_optional(st.sampled_from(["none", "thisServer", "allServers"])),
        temperature=_optional(st.floats(allow_nan=False, allow_infinity=False)),
        stop_sequences=_optional(_tuples(_texts())),
        model_preferences=_optional(json_objects()),
        metadata=_optional(json_objects()),
        task=_optional(task_metadata()),
        meta=metas(),
        extra=extras(CreateMessageRequestParams),
    )


@_shared
def create_message_results() -> st.SearchStrategy[CreateMessageResult]:
    return st.builds(
        CreateMessageResult,
        role=_roles(),
        content=_sampling_content(),
        model=_texts(),
        stop_reason=_optional(st.sampled_from(["endTurn", "stopSequence", "maxTokens"])),
        meta=metas(),
        extra=extras(CreateMessageResult),
    )


@_shared
def roots() -> st.SearchStrategy[Root]:
    return st.builds(Root, uri=_texts(), name=_optional(_texts()), meta=metas(), extra=extras(Root))


@_shared
def list_roots_results() -> st.SearchStrategy[ListRootsResult]:
    return st.builds(
        ListRootsResult,
        roots=_tuples(roots()),
        meta=metas(),
        extra=extras(ListRootsResult),
    )


# --- JSON-RPC envelopes ------------------------------------------------------------------


@_shared
def error_objects() -> st.SearchStrategy[ErrorObject]:
    """A JSON-RPC error object; ``data`` ``None`` stands for an absent ``data`` key."""
    codes = st.sampled_from([-32700, -32600, -32601, -32602, -32603, -32042]) | st.integers()
    return st.builds(ErrorObject, code=codes, message=_texts(), data=json_values())


@_shared
def _methods() -> st.SearchStrategy[str]:
    return st.sampled_from(["tasks/get", "tools/call", "notifications/tasks/status"]) | _texts()


@_shared
def jsonrpc_requests() -> st.SearchStrategy[JSONRPCRequest]:
    return st.builds(
        JSONRPCRequest, id=request_ids(), method=_methods(), params=_optional(json_objects())
    )


@_shared
def jsonrpc_notifications() -> st.SearchStrategy[JSONRPCNotification]:
    return st.builds(JSONRPCNotification, method=_methods(), params=_optional(json_objects()))


@_shared
def jsonrpc_responses() -> st.SearchStrategy[JSONRPCResponse]:
    return st.builds(JSONRPCResponse, id=request_ids(), result=json_objects())


@_shared
def jsonrpc_errors() -> st.SearchStrategy[JSONRPCError]:
    """An error response; a ``None`` id is the "could not read your id" case."""
    return st.builds(JSONRPCError, id=_optional(request_ids()), error=error_objects())


@_shared
def jsonrpc_messages() -> st.SearchStrategy[JSONRPCMessage]:
    """Requests, notifications, responses and errors (B:27-108)."""
    return st.one_of(
        jsonrpc_requests(), jsonrpc_notifications(), jsonrpc_responses(), jsonrpc_errors()
    )


# --- the registry --------------------------------------------------------------------------

MODEL_STRATEGIES: Mapping[type, Callable[[], st.SearchStrategy[Any]]] = {
    Implementation: implementations,
    RootsCapability: roots_capabilities,
    SamplingCapability: sampling_capabilities,
    ElicitationCapability: elicitation_capabilities,
    ClientTasksCapability: client_tasks_capabilities,
    ClientCapabilities: client_capabilities,
    ToolsCapability: tools_capabilities,
    ServerTasksCapability: server_tasks_capabilities,
    ServerCapabilities: server_capabilities,
    InitializeResult: initialize_results,
    DiscoverResult: discover_results,
    TextContent: text_contents,
    ImageContent: image_contents,
    AudioContent: audio_contents,
    ResourceLink: resource_links,
    TextResourceContents: text_resource_contents,
    BlobResourceContents: blob_resource_contents,
    EmbeddedResource: embedded_resources,
    UnknownContent: unknown_contents,
    Resource: resources,
    ListResourcesResult: list_resources_results,
    ResourceTemplate: resource_templates,
    ListResourceTemplatesResult: list_resource_templates_results,
    ReadResourceResult: read_resource_results,
    PromptArgument: prompt_arguments,
    Prompt: prompts,
    ListPromptsResult: list_prompts_results,
    PromptMessage: prompt_messages,
    GetPromptResult: get_prompt_results,
    ToolExecution: tool_executions,
    Tool: tools,
    ListToolsResult: list_tools_results,
    CallToolResult: call_tool_results,
    TaskMetadata: task_metadata,
    Task: tasks,
    CreateTaskResult: create_task_results,
    ListTasksResult: list_tasks_results,
    InputRequest: input_requests,
    InputRequiredResult: input_required_results,
    ElicitRequestFormParams: elicit_request_form_params,
    ElicitRequestURLParams: elicit_request_url_params,
    ElicitResult: elicit_results,
    SamplingMessage: sampling_messages,
    CreateMessageRequestParams: create_message_request_params,
    CreateMessageResult: create_message_results,
    Root: roots,
    ListRootsResult: list_roots_results,
    ErrorObject: error_objects,
    JSONRPCRequest: jsonrpc_requests,
    JSONRPCNotification: jsonrpc_notifications,
    JSONRPCResponse: jsonrpc_responses,
    JSONRPCError: jsonrpc_errors,
}
"""Every attrs class of ``mcp_tasks_client.models`` -> a function returning its strategy."""


@_shared
def strategy_for(cls: type) -> st.SearchStrategy[Any]:
    """The strategy of model class ``cls`` (from :data:`MODEL_STRATEGIES`), built once."""
    return MODEL_STRATEGIES[cls]()


_ENVELOPES = frozenset(
    {ErrorObject, JSONRPCRequest, JSONRPCNotification, JSONRPCResponse, JSONRPCError}
)

WIRE_MODELS: tuple[type, ...] = tuple(cls for cls in MODEL_STRATEGIES if cls not in _ENVELOPES)
"""The models the generation converter encodes (the JSON-RPC envelopes have their own codec)."""


# --- caching hints (2026-07-28, SEP-2549) -----------------------------------------------------

CACHEABLE_RESULTS: tuple[type, ...] = (
    DiscoverResult,
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
)
"""The results that carry ``ttlMs`` and ``cacheScope`` in 2026-07-28. Their strategies above
draw them without hints (as 2025-11-25 reads them; ``discover_results``, 2026-07-28's alone,
with them); :func:`with_cache_hints` adds hints."""


@_shared
def cache_hint_pairs() -> st.SearchStrategy[tuple[int, CacheScope]]:
    """Valid hints as a 2026-07-28 codec reads them: ``(ttl_ms, cache_scope)``, ``ttl_ms``
    in ``0..MAX_DURATION_MS`` with 0 (stale at once) and small values drawn often."""
    ttl = st.sampled_from([0, 1, 1000, 60_000]) | _durations_ms()
    return st.tuples(ttl, st.sampled_from(list(CacheScope)))


def with_cache_hints(models: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``models`` (a cacheable result's strategy) with valid hints: what a 2026-07-28 codec
    decodes them to, so ``decode(encode(m)) == m`` holds under that generation."""
    return st.builds(
        lambda model, hints: attrs.evolve(model, ttl_ms=hints[0], cache_scope=hints[1]),
        models,
        cache_hint_pairs(),
    )


_ABSENT = object()


@_shared
def wire_cache_hints() -> st.SearchStrategy[dict[str, JSONValue]]:
    """The hint keys as a server may send them, odd values included: ``{}`` (both absent),
    valid pairs, and malformed ones (a negative or fractional ``ttlMs``, a string, ``true``,
    ``null``, past ``MAX_DURATION_MS``; a scope in the wrong case or of another kind). Merge
    into a cacheable result's encoding; ``mcp_tasks_client._codec._hints.read_hints`` says
    what each reads as."""
    odd_ttls: st.SearchStrategy[JSONValue] = st.one_of(
        st.integers(max_value=-1),
        st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer()),
        st.integers(min_value=MAX_DURATION_MS + 1, max_value=2**63),
        st.sampled_from(["60000", "", True, False, None, [], {}]),
    )
    ttls = st.sampled_from([_ABSENT, 0, 1, 60_000, 60_000.0]) | _durations_ms() | odd_ttls
    scopes = st.sampled_from(
        [_ABSENT, "public", "private", "PUBLIC", "Private", "", "shared", None, 1, True, []]
    )

    def build(ttl: Any, scope: Any) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {}
        if ttl is not _ABSENT:
            out["ttlMs"] = ttl
        if scope is not _ABSENT:
            out["cacheScope"] = scope
        return out

    return st.builds(build, ttls, scopes)


# --- near misses ---------------------------------------------------------------------------

Path = tuple[str | int, ...]


def _paths(value: JSONValue, prefix: Path = ()) -> Iterator[Path]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _get(value: JSONValue, path: Path) -> JSONValue:
    for step in path:
        value = value[step]
    return value


def _edit(value: JSONValue, path: Path, new: JSONValue, *, delete: bool) -> JSONValue:
    """A copy of ``value`` with ``path`` replaced by ``new`` (or deleted); the rest is shared."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out_obj = dict(value)
        if delete and not rest:
            del out_obj[head]
        else:
            out_obj[head] = _edit(value[head], rest, new, delete=delete)
        return out_obj
    assert isinstance(head, int)
    out_list = list(value)
    if delete and not rest:
        del out_list[head]
    else:
        out_list[head] = _edit(value[head], rest, new, delete=delete)
    return out_list


@st.composite
def _mutations(draw: st.DrawFn, value: JSONValue) -> JSONValue:
    path = draw(st.sampled_from(list(_paths(value))))
    delete: bool = draw(st.booleans())
    if path and delete:
        return _edit(value, path, None, delete=True)
    kind = json_kind(_get(value, path))
    other = draw(st.sampled_from([k for k in JSON_KINDS if k != kind]))
    return _edit(value, path, draw(json_values_of_kind(other)), delete=False)


def mutated(value: JSONValue) -> st.SearchStrategy[JSONValue]:
    """``value`` with one change at any depth: a key or item deleted, or a value replaced by
    a value of another JSON kind. ``value`` itself is never modified."""
    return _mutations(value)


def replaced(value: JSONValue, path: Path, new: JSONValue) -> JSONValue:
    """``value`` with the item at ``path`` replaced by ``new``; ``value`` is not modified."""
    return _edit(value, path, new, delete=False)


def number_paths(value: JSONValue) -> list[Path]:
    """The path of every number in ``value`` (booleans are not numbers), at any depth."""
    return [path for path in _paths(value) if json_kind(_get(value, path)) == "number"]


# --- hostile numbers and timestamps ----------------------------------------------------------

_FLOAT_MAX = sys.float_info.max
_TIMEDELTA_MAX_MS = dt.timedelta.max // dt.timedelta(milliseconds=1)

_EDGE_NUMBERS: tuple[int | float, ...] = (
    0,
    -0.0,
    1,
    -1,
    0.5,
    -0.5,
    MAX_DURATION_MS,
    MAX_DURATION_MS + 1,
    float(MAX_DURATION_MS),
    MAX_DURATION_MS + 0.5,
    2**53,
    2**63,
    2**64,
    _TIMEDELTA_MAX_MS,
    _TIMEDELTA_MAX_MS + 1,
    10**308,
    10**309,
    _FLOAT_MAX,
    -_FLOAT_MAX,
    int(_FLOAT_MAX),
    int(_FLOAT_MAX) + 1,
    -(int(_FLOAT_MAX) + 1),
    2**1024,
    sys.float_info.min,
    5e-324,
    -5e-324,
    1e-300,
)


@_shared
def wild_numbers() -> st.SearchStrategy[int | float]:
    """Any number ``json.loads`` can return, biased to the edges that break arithmetic.

    Huge integers (``±10**k`` for ``k`` up to 400, and their neighbours: JSON spells them in
    digits, so ``loads`` returns them as ints), floats near the float limits and near zero,
    negatives, zero, and the bounds of the library's ranges. Never NaN or an infinity:
    ``loads`` refuses those before any model sees them.
    """
    signs = st.sampled_from([1, -1])
    powers = st.integers(min_value=0, max_value=400)
    huge = st.builds(lambda sign, k: sign * 10**k, signs, powers)
    near_huge = st.builds(
        lambda sign, k, step: sign * (10**k + step), signs, powers, st.integers(-3, 3)
    )
    big_floats = st.floats(min_value=1e300, allow_infinity=False) | st.floats(
        max_value=-1e300, allow_infinity=False
    )
    tiny_floats = st.floats(min_value=-1e-300, max_value=1e-300)
    return st.one_of(
        st.sampled_from(_EDGE_NUMBERS),
        huge,
        near_huge,
        big_floats,
        tiny_floats,
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
    )


def _digits(size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet="0123456789", min_size=size, max_size=size)


@_shared
def timestamp_like_strings() -> st.SearchStrategy[str]:
    """Strings of the RFC 3339 shape with any digits in every position.

    ``9999-99-99T99:99:99.9999999+99:99``, ``0000-02-30T24:00:60Z``, offsets past a day, leap
    seconds, no offset at all, plus the odd near miss (a character replaced or appended), so
    both the pattern and the field ranges behind it are exercised.
    """
    fraction = st.none() | st.text(alphabet="0123456789", min_size=1, max_size=12)
    # The edges are drawn on purpose: uniform digits would rarely give year 1 or 9999 with a
    # date and an offset that push the instant out of the years ``datetime`` holds.
    years = st.sampled_from(["0000", "0001", "9999"]) | _digits(4)
    months = st.sampled_from(["01", "12", "13"]) | _digits(2)
    days = st.sampled_from(["01", "31", "32"]) | _digits(2)
    hours = st.sampled_from(["00", "23", "24"]) | _digits(2)
    minutes = st.sampled_from(["00", "59", "60"]) | _digits(2)
    offset = st.sampled_from(["Z", "z", ""]) | st.builds(
        lambda sign, hh, mm: f"{sign}{hh}:{mm}", st.sampled_from(["+", "-"]), hours, minutes
    )
    shaped = st.builds(
        lambda y, mo, d, sep, h, mi, s, frac, off: (
            f"{y}-{mo}-{d}{sep}{h}:{mi}:{s}{'' if frac is None else '.' + frac}{off}"
        ),
        years,
        months,
        days,
        st.sampled_from(["T", "t", " "]),
        hours,
        minutes,
        st.sampled_from(["59", "60", "61"]) | _digits(2),
        fraction,
        offset,
    )

    # Valid fields at the ends of the calendar with an offset: the instant may leave years
    # 1-9999 once moved to UTC (``0001-01-01T00:00:00+00:01``), which no single field shows.
    edges = st.builds(
        lambda day, time, sign, hh, mm: f"{day}T{time}{sign}{hh}:{mm}",
        st.sampled_from(["0001-01-01", "9999-12-31"]),
        st.sampled_from(["00:00:00", "00:30:00", "23:59:59", "23:59:60.999999"]),
        st.sampled_from(["+", "-"]),
        st.sampled_from(["00", "01", "23"]),
        st.sampled_from(["00", "01", "59"]),
    )

    @st.composite
    def near_miss(draw: st.DrawFn) -> str:
        text = draw(shaped)
        index = draw(st.integers(min_value=0, max_value=len(text)))
        char = draw(st.sampled_from(["", "\n", "\u0662", "0", "9", ":", "-", "x", " "]))
        return text[:index] + char + text[index + 1 :]

    return shaped | edges | near_miss()
