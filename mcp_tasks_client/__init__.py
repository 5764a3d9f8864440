"""mcp-tasks-client: a typed, explicit-control client for MCP Tasks.

The top level holds what a program writes: the :class:`Client` and what configures it, the
transports you construct, the calls (``ToolCall(...).as_task()``), the :class:`Poller` and its
policies, the :class:`InputRouter` and what a handler is given, the outcomes of a wait, the
journal and ``resume``, the task receiver, ``probe_server``, and the root of every error,
:class:`MCPTasksError`. Everything else has one public home, named for who needs it:

- ``mcp_tasks_client.models``: every wire value (``Task``, ``Implementation``, ``ElicitResult``...);
- ``mcp_tasks_client.errors``: every exception (``TaskNotFound``, ``RequestTimeout``...);
- ``mcp_tasks_client.transports``: for transport authors and tests (``Transport``,
  ``TransportWrapper``, ``memory_transport_pair``...);
- ``mcp_tasks_client.protocol``: the sans-I/O pieces seen at the edges (``Violation``,
  ``ReceiverBook``, header codecs...);
- ``mcp_tasks_client.wire``: ``encode`` / ``decode`` a model as either generation's JSON;
- ``mcp_tasks_client.sync``: the same API with blocking calls, for code that is not async
  (``SyncClient``, ``SyncPoller``, ``threaded`` handlers, a blocking ``resume``);
- ``mcp_tasks_client.conformance``, ``mcp_tasks_client.testing``, ``mcp_tasks_client.cli``: the
  conformance kit, test helpers (the ``testing`` extra) and the command line.

Submodules whose names start with ``_`` are private. A name that moved off the top level says
where it went: ``mcp_tasks_client.Task`` raises an AttributeError naming
``from mcp_tasks_client.models import Task``.
"""

import importlib
import importlib.util
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what a type checker (and a reader) sees: every name and its home
    from ._cache import CacheHints, ResultCache
    from ._client import (
        CallInputs,
        Client,
        NotificationHandler,
        OrphanedTask,
        ProgressHandler,
        RequestHandler,
        Timeouts,
    )
    from ._features import Pages
    from ._generation import Generation
    from ._io.http import HttpTransport, StreamResumption
    from ._io.lean import LeanHttpTransport
    from ._io.stdio import StdioShutdown, StdioTransport
    from ._limits import Limits
    from ._sansio.progress import StatusMessage, TaskProgress
    from ._sansio.scheduler import BusyPolicy, FollowLatency, PollPolicy, UnhandledInputPolicy
    from ._sansio.task_machine import ViolationPolicy
    from .builders import GetPrompt, ReadResource, RelatedTask, TaskToolCall, ToolCall
    from .engine import Poller, ProgressCallback, TaskRef, WatchItem
    from .errors import MCPTasksError
    from .inputs import (
        UNTAGGED,
        ElicitationHandler,
        HandlerErrorPolicy,
        InputContext,
        InputEvent,
        InputEventKind,
        InputRouter,
        RootsHandler,
        SamplingHandler,
        Untagged,
    )
    from .journal import Journal, JournalEntry, RecordedOutcome, RecordedSession, SQLiteJournal
    from .outcomes import Cancelled, Completed, Expired, Failed, Lost, Outcome
    from .probe import ServerProbe, probe_server
    from .receiver import ReceivedTask, TaskReceiver
    from .resume import ClientOpener, Held, Resumed, RouterFactory, client_for, resume

_HOMES = {
    "CacheHints": "._cache",
    "ResultCache": "._cache",
    "CallInputs": "._client",
    "Client": "._client",
    "NotificationHandler": "._client",
    "OrphanedTask": "._client",
    "ProgressHandler": "._client",
    "RequestHandler": "._client",
    "Timeouts": "._client",
    "Pages": "._features",
    "Generation": "._generation",
    "HttpTransport": "._io.http",
    "StreamResumption": "._io.http",
    "LeanHttpTransport": "._io.lean",
    "StdioShutdown": "._io.stdio",
    "StdioTransport": "._io.stdio",
    "Limits": "._limits",
    "StatusMessage": "._sansio.progress",
    "TaskProgress": "._sansio.progress",
    "BusyPolicy": "._sansio.scheduler",
    "FollowLatency": "._sansio.scheduler",
    "PollPolicy": "._sansio.scheduler",
    "UnhandledInputPolicy": "._sansio.scheduler",
    "ViolationPolicy": "._sansio.task_machine",
    "GetPrompt": ".builders",
    "ReadResource": ".builders",
    "RelatedTask": ".builders",
    "TaskToolCall": ".builders",
    "ToolCall": ".builders",
    "Poller": ".engine",
    "ProgressCallback": ".engine",
    "TaskRef": ".engine",
    "WatchItem": ".engine",
    "MCPTasksError": ".errors",
    "ElicitationHandler": ".inputs",
    "HandlerErrorPolicy": ".inputs",
    "InputContext": ".inputs",
    "InputEvent": ".inputs",
    "InputEventKind": ".inputs",
    "InputRouter": ".inputs",
    "RootsHandler": ".inputs",
    "SamplingHandler": ".inputs",
    "UNTAGGED": ".inputs",
    "Untagged": ".inputs",
    "Journal": ".journal",
    "JournalEntry": ".journal",
    "RecordedOutcome": ".journal",
    "RecordedSession": ".journal",
    "SQLiteJournal": ".journal",
    "Cancelled": ".outcomes",
    "Completed": ".outcomes",
    "Expired": ".outcomes",
    "Failed": ".outcomes",
    "Lost": ".outcomes",
    "Outcome": ".outcomes",
    "ServerProbe": ".probe",
    "probe_server": ".probe",
    "ReceivedTask": ".receiver",
    "TaskReceiver": ".receiver",
    "ClientOpener": ".resume",
    "Held": ".resume",
    "Resumed": ".resume",
    "RouterFactory": ".resume",
    "client_for": ".resume",
    "resume": ".resume",
}
"""Where each top-level name lives. A bare ``import mcp_tasks_client`` imports none of them:
each is imported on first use (module ``__getattr__``), so a program pays for the parts it
uses (no sqlite without the journal, no stdio machinery without ``StdioTransport``...)."""

__version__ = "0.1.0.dev0"

__all__ = [
    "UNTAGGED",
    "BusyPolicy",
    "CacheHints",
    "CallInputs",
    "Cancelled",
    "Client",
    "ClientOpener",
    "Completed",
    "ElicitationHandler",
    "Expired",
    "Failed",
    "FollowLatency",
    "Generation",
    "GetPrompt",
    "HandlerErrorPolicy",
    "Held",
    "HttpTransport",
    "InputContext",
    "InputEvent",
    "InputEventKind",
    "InputRouter",
    "Journal",
    "JournalEntry",
    "LeanHttpTransport",
    "Limits",
    "Lost",
    "MCPTasksError",
    "NotificationHandler",
    "OrphanedTask",
    "Outcome",
    "Pages",
    "PollPolicy",
    "Poller",
    "ProgressCallback",
    "ProgressHandler",
    "ReadResource",
    "ReceivedTask",
    "RecordedOutcome",
    "RecordedSession",
    "RelatedTask",
    "RequestHandler",
    "ResultCache",
    "Resumed",
    "RootsHandler",
    "RouterFactory",
    "SQLiteJournal",
    "SamplingHandler",
    "ServerProbe",
    "StatusMessage",
    "StdioShutdown",
    "StdioTransport",
    "StreamResumption",
    "TaskProgress",
    "TaskReceiver",
    "TaskRef",
    "TaskToolCall",
    "Timeouts",
    "ToolCall",
    "UnhandledInputPolicy",
    "Untagged",
    "ViolationPolicy",
    "WatchItem",
    "__version__",
    "client_for",
    "probe_server",
    "resume",
]


def _moved() -> dict[str, str]:
    """Each name that has a public home off the top level -> the import that reaches it."""
    homes = {}
    for home in ("models", "errors", "transports", "protocol", "wire"):
        # import_module, not ``from . import``: that would look the submodule up here first.
        module = importlib.import_module(f"{__name__}.{home}")
        for name in module.__all__:
            homes[name] = f"from {module.__name__} import {name}"
    return homes


class _Package(types.ModuleType):
    """This package's module type: ``mcp_tasks_client.resume`` is the function ``resume``, as
    it was when every name was imported eagerly, although the submodule of that name is
    imported lazily now (the import system then sets the package's ``resume`` attribute to the
    submodule, which this property sees through)."""

    @property
    def resume(self) -> object:
        value = self.__dict__.get("resume")
        if value is None or isinstance(value, types.ModuleType):
            value = importlib.import_module(".resume", __name__).resume
        return value

    @resume.setter
    def resume(self, value: object) -> None:
        self.__dict__["resume"] = value


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # a type checker keeps reporting a moved name as missing

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is not None:  # first use of a top-level name: import its module now
            value = getattr(importlib.import_module(home, __name__), name)
            globals()[name] = value
            return value
        if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}"):
            # A public submodule (``mcp_tasks_client.observability``...): an attribute as
            # when this package imported its modules eagerly, imported now.
            return importlib.import_module(f".{name}", __name__)
        # Otherwise a name the module does not have: no alias, a pointer to its home.
        if name == "Dialect":
            raise AttributeError(
                "Dialect is gone: a driver per generation replaces it "
                "(Client.driver; mcp_tasks_client._drivers, internal)"
            )
        home = _moved().get(name)
        if home is not None:
            raise AttributeError(f"{name} moved: {home}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
