"""Typed values for every wire shape the client sees (attrs, frozen, slotted).

Every wire value a program reads or builds is imported from here, and only from here:
``from mcp_tasks_client.models import Implementation, Task``. These classes say nothing about
JSON: ``mcp_tasks_client.wire`` encodes and decodes them for either protocol generation.

Each name's module (``tasks``, ``lifecycle``, ``content``...) is imported on first use of the
name, as the package's top level does: a program that reads a Task never builds the prompt,
resource or content classes (issue 34: each attrs class costs its methods' compilation at
import).
"""

import importlib
from typing import TYPE_CHECKING

from ._base import MAX_DURATION_MS, UNSET, CacheScope, JSONObject, JSONValue, Unset

if TYPE_CHECKING:  # what a type checker (and a reader) sees: every name and its module
    from .catalog import (
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        Prompt,
        PromptArgument,
        PromptMessage,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
    )
    from .client_requests import (
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitAction,
        ElicitRequestFormParams,
        ElicitRequestParams,
        ElicitRequestURLParams,
        ElicitResult,
        InputRequiredResult,
        ListRootsResult,
        Root,
        SamplingMessage,
    )
    from .content import (
        AudioContent,
        BlobResourceContents,
        ContentBlock,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
        UnknownContent,
    )
    from .jsonrpc import (
        ErrorObject,
        JSONRPCError,
        JSONRPCMessage,
        JSONRPCNotification,
        JSONRPCRequest,
        JSONRPCResponse,
        RequestId,
    )
    from .lifecycle import (
        SERVER_INFO_META,
        TASKS_EXTENSION,
        ClientCapabilities,
        ClientTasksCapability,
        DiscoverResult,
        ElicitationCapability,
        Implementation,
        InitializeResult,
        RootsCapability,
        SamplingCapability,
        ServerCapabilities,
        ServerTasksCapability,
        ToolsCapability,
    )
    from .tasks import (
        MODEL_IMMEDIATE_RESPONSE_META,
        RELATED_TASK_META,
        CreateTaskResult,
        InputRequest,
        ListTasksResult,
        Task,
        TaskMetadata,
        TaskStatus,
    )
    from .tools import CallToolResult, ListToolsResult, TaskSupport, Tool, ToolExecution

_HOMES = {
    "GetPromptResult": ".catalog",
    "ListPromptsResult": ".catalog",
    "ListResourceTemplatesResult": ".catalog",
    "ListResourcesResult": ".catalog",
    "Prompt": ".catalog",
    "PromptArgument": ".catalog",
    "PromptMessage": ".catalog",
    "ReadResourceResult": ".catalog",
    "Resource": ".catalog",
    "ResourceTemplate": ".catalog",
    "CreateMessageRequestParams": ".client_requests",
    "CreateMessageResult": ".client_requests",
    "ElicitAction": ".client_requests",
    "ElicitRequestFormParams": ".client_requests",
    "ElicitRequestParams": ".client_requests",
    "ElicitRequestURLParams": ".client_requests",
    "ElicitResult": ".client_requests",
    "InputRequiredResult": ".client_requests",
    "ListRootsResult": ".client_requests",
    "Root": ".client_requests",
    "SamplingMessage": ".client_requests",
    "AudioContent": ".content",
    "BlobResourceContents": ".content",
    "ContentBlock": ".content",
    "EmbeddedResource": ".content",
    "ImageContent": ".content",
    "ResourceLink": ".content",
    "TextContent": ".content",
    "TextResourceContents": ".content",
    "UnknownContent": ".content",
    "ErrorObject": ".jsonrpc",
    "JSONRPCError": ".jsonrpc",
    "JSONRPCMessage": ".jsonrpc",
    "JSONRPCNotification": ".jsonrpc",
    "JSONRPCRequest": ".jsonrpc",
    "JSONRPCResponse": ".jsonrpc",
    "RequestId": ".jsonrpc",
    "ClientCapabilities": ".lifecycle",
    "ClientTasksCapability": ".lifecycle",
    "DiscoverResult": ".lifecycle",
    "ElicitationCapability": ".lifecycle",
    "Implementation": ".lifecycle",
    "InitializeResult": ".lifecycle",
    "RootsCapability": ".lifecycle",
    "SERVER_INFO_META": ".lifecycle",
    "SamplingCapability": ".lifecycle",
    "ServerCapabilities": ".lifecycle",
    "ServerTasksCapability": ".lifecycle",
    "TASKS_EXTENSION": ".lifecycle",
    "ToolsCapability": ".lifecycle",
    "CreateTaskResult": ".tasks",
    "InputRequest": ".tasks",
    "ListTasksResult": ".tasks",
    "MODEL_IMMEDIATE_RESPONSE_META": ".tasks",
    "RELATED_TASK_META": ".tasks",
    "Task": ".tasks",
    "TaskMetadata": ".tasks",
    "TaskStatus": ".tasks",
    "CallToolResult": ".tools",
    "ListToolsResult": ".tools",
    "TaskSupport": ".tools",
    "Tool": ".tools",
    "ToolExecution": ".tools",
}
"""Where each name lives, imported on first use (module ``__getattr__``)."""

__all__ = [
    "MAX_DURATION_MS",
    "MODEL_IMMEDIATE_RESPONSE_META",
    "RELATED_TASK_META",
    "SERVER_INFO_META",
    "TASKS_EXTENSION",
    "UNSET",
    "AudioContent",
    "BlobResourceContents",
    "CacheScope",
    "CallToolResult",
    "ClientCapabilities",
    "ClientTasksCapability",
    "ContentBlock",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "CreateTaskResult",
    "DiscoverResult",
    "ElicitAction",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCapability",
    "EmbeddedResource",
    "ErrorObject",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "InitializeResult",
    "InputRequest",
    "InputRequiredResult",
    "JSONObject",
    "JSONRPCError",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONValue",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListTasksResult",
    "ListToolsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "RequestId",
    "Resource",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "SamplingMessage",
    "ServerCapabilities",
    "ServerTasksCapability",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskSupport",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolExecution",
    "ToolsCapability",
    "UnknownContent",
    "Unset",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # a type checker sees the imports above

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value  # the next use is a plain global read
        return value
