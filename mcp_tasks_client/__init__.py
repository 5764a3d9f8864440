"""mcp-tasks-client: a typed, explicit-control client for MCP Tasks.

Import everything from here; submodules whose names start with ``_`` are private.
"""

from ._client import Client, NotificationHandler, RequestHandler, Timeouts
from ._errors import (
    DecodeError,
    GetStreamUnavailable,
    HTTPStatusError,
    InvalidParams,
    MCPTasksError,
    MethodNotFound,
    ProcessExited,
    ProtocolError,
    RequestTimeout,
    RPCError,
    SessionExpired,
    StreamInterrupted,
    TransportClosed,
    TransportError,
    UnexpectedResponse,
    UnsupportedProtocolVersion,
    UsageError,
)
from ._generation import Generation
from ._transports.base import Transport, TransportFault
from ._transports.http import HttpTransport, StreamResumption
from ._transports.memory import MemoryServerEnd, MemoryTransport, memory_transport_pair
from ._transports.stdio import StdioShutdown, StdioTransport
from .builders import ToolCall
from .models import (
    CallToolResult,
    ClientCapabilities,
    Implementation,
    InitializeResult,
    ServerCapabilities,
    TaskStatus,
    TaskSupport,
    Tool,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "CallToolResult",
    "Client",
    "ClientCapabilities",
    "DecodeError",
    "Generation",
    "GetStreamUnavailable",
    "HTTPStatusError",
    "HttpTransport",
    "Implementation",
    "InitializeResult",
    "InvalidParams",
    "MCPTasksError",
    "MemoryServerEnd",
    "MemoryTransport",
    "MethodNotFound",
    "NotificationHandler",
    "ProcessExited",
    "ProtocolError",
    "RPCError",
    "RequestHandler",
    "RequestTimeout",
    "ServerCapabilities",
    "SessionExpired",
    "StdioShutdown",
    "StdioTransport",
    "StreamInterrupted",
    "StreamResumption",
    "TaskStatus",
    "TaskSupport",
    "Timeouts",
    "Tool",
    "ToolCall",
    "Transport",
    "TransportClosed",
    "TransportError",
    "TransportFault",
    "UnexpectedResponse",
    "UnsupportedProtocolVersion",
    "UsageError",
    "__version__",
    "memory_transport_pair",
]
