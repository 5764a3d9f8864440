"""Tasks for hosts that already run the official MCP Python SDK (or fastmcp on top of it).

Its one job: to open this library's :class:`~mcp_tasks_client.Client` (and so the Poller, the
InputRouter, the journal, ``resume`` and tracing) over a connection the host already holds,
instead of a transport of ours, and, on mcp 2.x, to be the tasks extension a host passes to
``mcp.Client(server, extensions=[...])``.

May import: everything below the front door (``_client``, ``engine``, ``inputs``, ``journal``,
``wire``, ``_io.sdk_session``, ``models``, ``_exceptions``). ``mcp`` itself only where a
function needs it: importing this package never imports the SDK; :class:`TasksExtension`
(mcp 2.x) imports it when first named.

Theory of operation. :func:`open_client` reads from the SDK session what the SDK already
agreed and declared (2025-11-25: the ``initialize`` result and the client capabilities it
sent; 2026-07-28: the client capabilities the SDK stamps on every request, which must declare
the tasks extension) and builds a Client over an :class:`~mcp_tasks_client._io.sdk_session.
SdkSessionTransport`. The Client sends no ``initialize``; every request goes out through the
SDK session's ``send_request``, so it carries the host's auth and headers. On a 2025-11-25
connection the transport routes the server's requests by one rule: tied (related-task
``_meta``) to a task this client follows, to this client's InputRouter; anything else to the
host's own callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .. import wire
from .._cache import ResultCache
from .._client import Client, Timeouts
from .._exceptions import MCPTasksError, SdkUnsupported, TaskNotCompleted, UsageError
from .._generation import Generation
from .._io.sdk_session import SdkSessionTransport
from .._limits import Limits
from ..models import ClientCapabilities, Implementation, InitializeResult

if TYPE_CHECKING:
    from ._extension import TasksExtension

__all__ = [
    "SdkSessionTransport",
    "SdkUnsupported",
    "TaskNotCompleted",
    "TasksExtension",
    "open_client",
    "sdk_session_of",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def sdk_session_of(host: Any) -> Any:
    """The SDK ``ClientSession`` behind ``host``: the session itself, or the ``.session`` of
    an ``mcp.Client`` (2.x) or a connected fastmcp ``Client``. SdkUnsupported otherwise."""
    if callable(getattr(host, "send_request", None)):
        return host
    try:
        inner = host.session
    except AttributeError:
        inner = None
    except Exception as exc:  # fastmcp raises RuntimeError before it is connected
        raise SdkUnsupported(
            f"{type(host).__name__} has no open SDK session ({exc}); enter it first "
            "(`async with client:`), then open the tasks client over it"
        ) from None
    if callable(getattr(inner, "send_request", None)):
        return inner
    raise SdkUnsupported(
        f"{type(host).__name__} is not an official SDK ClientSession, nor a client holding one"
    )


def open_client(
    host: Any,
    *,
    generation: Generation,
    identity: str | None = None,
    initialize_result: Any = None,
    session_id: str | None = None,
    timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen value
    limits: Limits = Limits(),  # noqa: B008 - frozen value
    on_warning: Callable[[MCPTasksError], None] | None = None,
    cache: ResultCache | None = None,
    auth_context: Hashable | None = None,
) -> Client:
    """This library's Client over the host's SDK connection; open it with ``async with``.

    Nothing is sent to open it: no ``initialize`` (the SDK did that), no ``server/discover``.
    Leaving it restores the host's callbacks; the SDK session stays open (it is the host's).

    Args:
        host: An SDK ``ClientSession`` (mcp 1.x or 2.x), an ``mcp.Client`` (2.x) or a
            connected fastmcp ``Client``, entered and initialized.
        generation: What the SDK session speaks, chosen by you, never guessed: 2025-11-25 (mcp
            1.x, fastmcp 2 and 3; mcp 2.x on the legacy wire) or 2026-07-28 (mcp 2.x, fastmcp
            4, whose SDK client must declare the tasks extension: pass :class:`TasksExtension`
            to ``mcp.Client(extensions=[...])``).
        identity: The server's URL, for a journal: a journaled task is resumed (in this process
            or another) by a client with the same identity.
        initialize_result: 2025-11-25 over mcp 1.x: what ``session.initialize()`` returned (a
            fastmcp client has it as ``client.initialize_result``). mcp 2.x keeps it itself.
            Resuming a journaled task: the entry's ``session.initialize``.
        session_id: 2025-11-25 over HTTP, with a journal: the connection's ``Mcp-Session-Id``
            (mcp 1.x's ``streamablehttp_client`` hands out ``get_session_id``), so a journaled
            task can be resumed on its session by a new host that opens its SDK connection
            with that header and no ``initialize``.
        timeouts: As for :class:`Client`.
        limits: As for :class:`Client`.
        on_warning: As for :class:`Client`.
        cache: As for :class:`Client`.
        auth_context: As for :class:`Client`.
    """
    session = sdk_session_of(host)
    side = _SIDES[generation]
    agreed = side.agreed(session, initialize_result, generation)
    capabilities = side.declared(session, generation)
    transport = SdkSessionTransport(
        session,
        identity=identity,
        route=agreed is not None,
        agreed=agreed,
        session_id=session_id,
        push=side.pushes(session),
    )
    return Client(
        transport,
        generation=generation,
        client_info=_client_info(session, generation),
        capabilities=capabilities,
        timeouts=timeouts,
        limits=limits,
        on_warning=on_warning,
        cache=cache,
        auth_context=auth_context,
    )


def _dump(model: Any) -> Any:
    dump = getattr(model, "model_dump", None)
    if dump is None:
        return model
    return dump(by_alias=True, mode="json", exclude_none=True)


def _agreed(session: Any, given: Any, generation: Generation) -> InitializeResult:
    raw = given if given is not None else getattr(session, "initialize_result", None)
    if raw is None:
        raise UsageError(
            "open_client(..., initialize_result=) needs what the SDK's initialize returned on "
            "mcp 1.x (`result = await session.initialize()`; a fastmcp client: "
            "`client.initialize_result`): this client sends no initialize of its own"
        )
    if isinstance(raw, InitializeResult):
        return raw
    return wire.decode(_dump(raw), InitializeResult, generation)


def _client_info(session: Any, generation: Generation) -> Implementation:
    info = getattr(session, "_client_info", None)
    if info is None:  # pragma: no cover - every tested SDK keeps it
        return Implementation("mcp-sdk-host", "unknown")
    return wire.decode(_dump(info), Implementation, generation)


class _Handshaken:
    """2025-11-25: the SDK's initialize agreed the session and declared the capabilities."""

    def agreed(self, session: Any, given: Any, generation: Generation) -> InitializeResult:
        return _agreed(session, given, generation)

    def declared(self, session: Any, generation: Generation) -> ClientCapabilities:
        build = getattr(session, "_build_capabilities", None)
        raw = _dump(build(generation.value)) if build is not None else _v1_declared(session)
        return wire.decode(raw, ClientCapabilities, generation)

    def pushes(self, session: Any) -> bool:
        return False  # 2025-11-25 pushes notifications/tasks/status: the routing takes them


def _binds_task_pushes(session: Any) -> bool:
    """Whether the SDK session hands ``notifications/tasks`` to a binding of this library's
    (a TasksExtension on the SDK client): only then can a listen's pushes arrive."""
    bindings = getattr(session, "_notification_bindings", None) or {}
    binding = bindings.get("notifications/tasks")
    owner = getattr(getattr(binding, "handler", None), "__self__", None)
    return owner is not None and type(owner).__module__.startswith(__name__)


class _Stateless:
    """2026-07-28: nothing agreed; this library's driver writes every request's ``_meta`` (the
    tasks extension on exactly the requests that need it: the per-call opt-in), sent through
    the SDK's dispatcher, which only mcp 2.x has."""

    def agreed(self, session: Any, given: Any, generation: Generation) -> None:
        if given is not None:
            raise UsageError(
                f"initialize_result= is for a session with an initialize, not {generation.value}"
            )
        return

    def declared(self, session: Any, generation: Generation) -> ClientCapabilities:
        build = getattr(session, "_build_capabilities", None)
        if build is None or not hasattr(session, "_dispatcher"):
            raise SdkUnsupported(
                f"{generation.value} needs the official SDK 2.x (mcp>=2.3): this session is mcp 1.x"
            )
        raw = _dump(build(generation.value))
        raw = {k: v for k, v in raw.items() if k not in ("tasks", "extensions")}
        return wire.decode(raw, ClientCapabilities, generation)

    def pushes(self, session: Any) -> bool:
        return _binds_task_pushes(session)


_SIDES: dict[Generation, _Handshaken | _Stateless] = {
    Generation.V2025_11_25: _Handshaken(),
    Generation.V2026_07_28: _Stateless(),
}
"""What the SDK session agreed and declared, per generation (a lookup, never a branch)."""


def _v1_declared(session: Any) -> dict[str, Any]:
    import importlib

    defaults = importlib.import_module("mcp.client.session")
    raw: dict[str, Any] = {}
    if session._sampling_callback is not defaults._default_sampling_callback:
        raw["sampling"] = _dump(session._sampling_capabilities) or {}
    if session._elicitation_callback is not defaults._default_elicitation_callback:
        raw["elicitation"] = {"form": {}, "url": {}}
    if session._list_roots_callback is not defaults._default_list_roots_callback:
        raw["roots"] = {"listChanged": True}
    handlers = getattr(session, "_task_handlers", None)
    built = handlers.build_capability() if handlers is not None else None
    if built is not None:
        raw["tasks"] = _dump(built)
    return raw


def __getattr__(name: str) -> Any:
    if name == "TasksExtension":
        from ._extension import TasksExtension

        return TasksExtension
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
