"""Every exception the library raises, in one tree rooted in :class:`MCPTasksError`.

For every program that catches something: ``from mcp_tasks_client.errors import TaskNotFound``.
The root is also at the top level (``mcp_tasks_client.MCPTasksError``); every other class lives
here only. The tree, by layer:

- :class:`UsageError`: the caller asked for something the library cannot do as asked;
- :class:`ProtocolError` (and :class:`DecodeError`): what the server sent breaks the protocol;
- :class:`RPCError`: the server answered with a JSON-RPC error (code, message, data kept);
- :class:`TransportError`: moving the bytes failed (HTTP status, closed stream, child exited);
- :class:`DeadlineExceeded`, :class:`RequestTimeout`: a deadline the caller set ran out;
- :class:`InputNotHandled`, :class:`InputRequired`, :class:`InputStuck`: input mid-task;
- :class:`JournalError`: the journal the caller passed cannot be used (its database
  unreachable, a statement timed out, the pool exhausted: each a subclass of its own);
- :class:`LeaseLost`: a worker's lease on a task is no longer surely its own.

The conformance kit adds one of its own, ``mcp_tasks_client.conformance.ConformanceViolation``
(a :class:`ProtocolError`), beside the validator that raises it.

Each class's ``__module__`` is this module, so tracebacks and reprs name the import that works.
This module only re-exports: the classes are defined where the library raises them.
"""

from __future__ import annotations

from ._exceptions import (
    BackedOff,
    CapabilityNotNegotiated,
    ClientClosed,
    CreatedTaskUnreadable,
    DeadlineExceeded,
    DecodeError,
    FallingBehind,
    GetStreamUnavailable,
    HeaderMismatch,
    HTTPStatusError,
    IllegalTransition,
    InFlightResized,
    InputNotHandled,
    InputRequired,
    InputStuck,
    InvalidParams,
    InvalidToolAnnotation,
    LenientCacheHint,
    LimitExceeded,
    MCPTasksError,
    MethodNotFound,
    MissingClientCapability,
    PollIntervalCapped,
    ProcessExited,
    ProtocolError,
    ProtocolVersionRefused,
    RedirectRefused,
    RequestTimeout,
    RPCError,
    SdkUnsupported,
    ServerBusy,
    SessionExpired,
    StreamInterrupted,
    TaskAugmentationNotAllowed,
    TaskAugmentationRequired,
    TaskNotCancellable,
    TaskNotCompleted,
    TaskNotFound,
    TLSError,
    TransportClosed,
    TransportError,
    UnexpectedPlainResult,
    UnexpectedResponse,
    UnknownExtensionRevision,
    UnknownRelatedTask,
    UnknownValue,
    UnsupportedInGeneration,
    UnsupportedProtocolVersion,
    UsageError,
)
from .journal import (
    JournalBusy,
    JournalError,
    JournalTimeout,
    JournalUnavailable,
    LeaseLost,
    NotJournaled,
)

__all__ = [
    "BackedOff",
    "CapabilityNotNegotiated",
    "ClientClosed",
    "CreatedTaskUnreadable",
    "DeadlineExceeded",
    "DecodeError",
    "FallingBehind",
    "GetStreamUnavailable",
    "HTTPStatusError",
    "HeaderMismatch",
    "IllegalTransition",
    "InFlightResized",
    "InputNotHandled",
    "InputRequired",
    "InputStuck",
    "InvalidParams",
    "InvalidToolAnnotation",
    "JournalBusy",
    "JournalError",
    "JournalTimeout",
    "JournalUnavailable",
    "LeaseLost",
    "LenientCacheHint",
    "LimitExceeded",
    "MCPTasksError",
    "MethodNotFound",
    "MissingClientCapability",
    "NotJournaled",
    "PollIntervalCapped",
    "ProcessExited",
    "ProtocolError",
    "ProtocolVersionRefused",
    "RPCError",
    "RedirectRefused",
    "RequestTimeout",
    "SdkUnsupported",
    "ServerBusy",
    "SessionExpired",
    "StreamInterrupted",
    "TLSError",
    "TaskAugmentationNotAllowed",
    "TaskAugmentationRequired",
    "TaskNotCancellable",
    "TaskNotCompleted",
    "TaskNotFound",
    "TransportClosed",
    "TransportError",
    "UnexpectedPlainResult",
    "UnexpectedResponse",
    "UnknownExtensionRevision",
    "UnknownRelatedTask",
    "UnknownValue",
    "UnsupportedInGeneration",
    "UnsupportedProtocolVersion",
    "UsageError",
]

# The public path, not the private module a class happens to be defined in (pickle finds them
# here too: every name below is an attribute of this module).
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
