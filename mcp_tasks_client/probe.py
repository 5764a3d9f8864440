"""Which protocol generations a server speaks, asked explicitly (E 5.1, C9, C13, A-12, A-13).

:func:`probe_server` asks twice, each on a fresh connection the caller's factory makes: first
``server/discover`` the 2026-07-28 way, then ``initialize`` the 2025-11-25 way. It reports
what each said and which generations can run tasks; it never picks one for the caller and
never switches a Client: the caller reads the report and constructs the Client it wants.

How an answer is read (the digest's HTTP and stdio rules, E 5.1):

- a DiscoverResult, or one of the 2026 errors (-32020, -32021, -32022), means the server speaks
  2026-07-28 (A-13: -32601 does not: legacy servers say it too);
- an InitializeResult at 2025-11-25 means it speaks 2025-11-25; tasks there need
  ``capabilities.tasks.requests.tools.call``;
- any other error, an HTTP error status or a timeout means "not this generation", and the error
  is kept in the report;
- a DiscoverResult without well-formed caching hints (``ttlMs``, ``cacheScope``: a server MUST
  send both, SEP-2549) is reported in ``discover_hint_problems`` (E H1, E H2).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ._client import Client, Timeouts
from ._codec._hints import hint_problems as malformed_hints
from ._codec._hints import missing_hints
from ._exceptions import (
    DecodeError,
    HeaderMismatch,
    MCPTasksError,
    MissingClientCapability,
    ProtocolVersionRefused,
    UnsupportedProtocolVersion,
)
from ._generation import Generation
from ._io.base import Transport
from .models import DiscoverResult, Implementation, InitializeResult

__all__ = ["ServerProbe", "probe_server"]

_MODERN_ERRORS = (HeaderMismatch, MissingClientCapability, ProtocolVersionRefused)


@attrs.frozen
class ServerProbe:
    """What a server said to each generation's opening."""

    discover: DiscoverResult | None
    """The ``server/discover`` answer, if there was one."""
    discover_error: MCPTasksError | None
    initialize: InitializeResult | None
    """The 2025-11-25 ``initialize`` answer, if there was one."""
    initialize_error: MCPTasksError | None
    discover_hint_problems: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    """What the ``server/discover`` answer lacked or got wrong of its caching hints (a
    complete cacheable 2026-07-28 result MUST carry ``ttlMs`` and ``cacheScope``, SEP-2549,
    rules E H1 and E H2); empty when both are there and well formed, or there was no answer."""

    @property
    def generations(self) -> tuple[Generation, ...]:
        """The generations the server speaks, newest first."""
        found: list[Generation] = []
        if self.discover is not None or isinstance(self.discover_error, _MODERN_ERRORS):
            found.append(Generation.V2026_07_28)
        if self.initialize is not None:
            found.append(Generation.V2025_11_25)
        return tuple(found)

    @property
    def task_generations(self) -> tuple[Generation, ...]:
        """The generations in which the server runs tasks, newest first."""
        found: list[Generation] = []
        if self.discover is not None and self.discover.capabilities.tasks_extension:
            found.append(Generation.V2026_07_28)
        tasks = self.initialize.capabilities.tasks if self.initialize is not None else None
        if tasks is not None and tasks.tools_call:
            found.append(Generation.V2025_11_25)
        return tuple(found)

    @property
    def versions(self) -> tuple[str, ...]:
        """Every protocol version the server named (discover's list, -32022's list, the
        version initialize agreed on or offered)."""
        named: list[str] = []
        if self.discover is not None:
            named += self.discover.supported_versions
        if isinstance(self.discover_error, ProtocolVersionRefused):
            named += self.discover_error.supported
        if self.initialize is not None:
            named.append(self.initialize.protocol_version)
        if isinstance(self.initialize_error, UnsupportedProtocolVersion):
            named += self.initialize_error.offered
        return tuple(dict.fromkeys(named))


async def probe_server(
    connect: Callable[[], Transport],
    *,
    client_info: Implementation,
    timeout: float = 10.0,
) -> ServerProbe:
    """Ask a server which generations it speaks: ``connect()`` makes a fresh, unopened
    transport for each of the two attempts (for stdio, a new process each). Each attempt is
    bounded by ``timeout`` seconds; nothing else is sent.
    Deadline: ``timeout`` for each attempt. Cancelled: stops at once; the clients it opened are
    closed.
    """
    timeouts = Timeouts(request=timeout, initialize=timeout, orphan_watch=timeout)
    discover: DiscoverResult | None = None
    discover_error: MCPTasksError | None = None
    hint_problems: list[str] = []
    try:
        async with Client(
            connect(), generation=Generation.V2026_07_28, client_info=client_info, timeouts=timeouts
        ) as client:
            # Not client.discover(): a server that lists other versions only is still reported.
            raw = await client.request("server/discover")
            try:
                discover = client.decode(raw, DiscoverResult)
            except DecodeError as exc:
                raise exc.under("$.result") from None
            hint_problems = [f"{key} missing (E H1)" for key in missing_hints(raw)]
            hint_problems += [f"{problem} (E H2)" for problem in malformed_hints(raw)]
    except MCPTasksError as exc:
        discover_error = exc
    initialize: InitializeResult | None = None
    initialize_error: MCPTasksError | None = None
    try:
        async with Client(
            connect(), generation=Generation.V2025_11_25, client_info=client_info, timeouts=timeouts
        ) as client:
            initialize = client.initialize_result
    except MCPTasksError as exc:
        initialize_error = exc
    return ServerProbe(
        discover,
        discover_error,
        initialize,
        initialize_error,
        discover_hint_problems=tuple(hint_problems),
    )
