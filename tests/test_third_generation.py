"""A third generation costs a Generation value, one driver module and one registry row (issue 37,
part 2; docs/generations.md, "When tasks move into the core").

The tasks extension is planned to move back into the core "in its current form" (agents-wg PR
29); that spec revision would be a new protocol version, so a new :class:`Generation`. This
test registers a stub of it the way a real one would be added: a Generation member, a driver
built from the 2026-07-28 one (:class:`Driver2026` with its ``generation`` changed: the
protocol version it sends and accepts), and its row in ``_drivers.DRIVERS``; the FaultServer
gets its row in ``testing.DIALECTS`` the same way. Nothing else in the library is told.

Then it runs generation-blind parts of the suite on it: tests whose only knowledge of a
generation is the value they hand the Client and the FaultServer (and, where they check the
wire, "2025-11-25 or the extension's way"). The subset, chosen for covering the Client's
requests, the Poller's loop over HTTP and the policy and builder steps of this issue:

- ``test_busy_servers``: a busy poll failing the wait by default; 429 with Retry-After paced
  by it; 503 without; a deadline inside a backoff; a busy ``tools/call`` never sent again;
- ``test_related_tasks``: related ids on the wire; a foreign id refused; journal entries;
- ``test_extension_revisions``: an unknown revision in ``server/discover`` refused.

A promotion would change what the new driver declares (the extension is core for a request
that declares the new version; SEP-3392 asks a client that still speaks the earlier version to
keep advertising the extension identifier): that is the new driver module's business, and
these tests pass on the stub because nothing outside the registry names a generation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import test_busy_servers as busy
import test_extension_revisions as revisions
import test_related_tasks as related

from mcp_tasks_client import Client, Generation, HttpTransport, LeanHttpTransport, ToolCall
from mcp_tasks_client._drivers import DRIVERS, driver_class, driver_for
from mcp_tasks_client._drivers.v2026_07_28 import Driver2026
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.testing import FaultServer
from mcp_tasks_client.testing._fault_server import DIALECTS
from mcp_tasks_client.testing._fault_v2026_07_28 import Dialect2026

STUB_NAME, STUB_VERSION = "V2099_01_01_STUB", "2099-01-01"


def _add_member(name: str, value: str) -> Generation:
    """A new member of the Generation enum, as if declared in ``_generation.py``."""
    member = object.__new__(Generation)
    member._name_ = name
    member._value_ = value
    Generation._member_map_[name] = member
    Generation._value2member_map_[value] = member
    Generation._member_names_.append(name)
    return member


def _remove_member(member: Generation) -> None:
    del Generation._member_map_[member.name]
    del Generation._value2member_map_[member.value]
    Generation._member_names_.remove(member.name)


@pytest.fixture
def third() -> Iterator[Generation]:
    """The stub third generation, registered for the test and removed after it."""
    generation = _add_member(STUB_NAME, STUB_VERSION)
    driver = type("DriverStub", (Driver2026,), {"generation": generation})
    dialect = type("DialectStub", (Dialect2026,), {"generation": generation})
    dialects: dict[Generation, Any] = DIALECTS  # type: ignore[assignment]
    DRIVERS[generation] = driver  # the one registry row of the library
    dialects[generation] = dialect  # the FaultServer's
    try:
        yield generation
    finally:
        del DRIVERS[generation]
        del dialects[generation]
        _remove_member(generation)


def test_the_stub_is_one_value_one_driver_one_row(third: Generation) -> None:
    assert Generation(STUB_VERSION) is third
    assert driver_class(third).generation is third
    assert driver_for(third).protocol_version == STUB_VERSION
    assert FaultServer(third).generation is third


@pytest.mark.anyio
async def test_the_stub_speaks_its_own_version_on_the_wire(third: Generation) -> None:
    """Every request says the new version (``_meta`` and, over HTTP, its header), and the
    Client accepts a server that lists only that version."""
    server = FaultServer(third)
    with anyio.fail_after(20):
        async with (
            server.http() as http,
            Client(HttpTransport(http.url), generation=third, client_info=related.INFO) as client,
        ):
            discovered = await client.discover()
            await client.start(ToolCall("echo", {"text": "hi"}).as_task())
    assert list(discovered.supported_versions) == [STUB_VERSION]
    posts = [r for r in http.received if r.http_method == "POST"]
    assert [r.rpc_method for r in posts] == ["server/discover", "tools/call"]
    for request in posts:
        assert request.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == STUB_VERSION
        assert request.headers["mcp-protocol-version"] == STUB_VERSION


def test_without_its_row_the_generation_is_refused() -> None:
    """The registry is the only place a generation is mapped: a value nobody registered gets
    no other generation's behaviour."""
    generation = _add_member(STUB_NAME, STUB_VERSION)
    try:
        with pytest.raises(UsageError, match="no driver for generation"):
            driver_class(generation)
        with pytest.raises(ValueError, match="no FaultServer speaks"):
            FaultServer(generation)
    finally:
        _remove_member(generation)


Blind = Callable[[Generation, Path], Awaitable[None]]


def _blind(test: Callable[..., Awaitable[None]], **kw: Any) -> Blind:
    async def run(generation: Generation, tmp_path: Path) -> None:
        await test(generation, **kw)

    run.__name__ = test.__name__
    return run


def _with_tmp(test: Callable[..., Awaitable[None]]) -> Blind:
    async def run(generation: Generation, tmp_path: Path) -> None:
        await test(generation, tmp_path)

    run.__name__ = test.__name__
    return run


BLIND: list[Blind] = [
    _blind(
        busy.test_by_default_a_busy_poll_ends_the_wait_with_server_busy,
        transport=LeanHttpTransport,
    ),
    _blind(busy.test_a_429_with_retry_after_on_tasks_get_is_paced_by_it),
    _blind(busy.test_a_503_without_retry_after_backs_off_by_the_policy),
    _blind(busy.test_a_deadline_that_ends_inside_a_backoff_ends_the_wait_there),
    _blind(busy.test_a_busy_tools_call_is_never_sent_again),
    _blind(related.test_related_ids_go_on_the_wire_in_meta),
    _blind(related.test_an_id_from_another_server_is_refused_before_sending),
    _with_tmp(related.test_a_journal_entry_vouches_for_its_own_server_only),
    _blind(revisions.refused_after_discover, settings={"revision": "2100-01-01"}),
]


@pytest.mark.anyio
@pytest.mark.parametrize("test", BLIND, ids=[t.__name__ for t in BLIND])
async def test_generation_blind_tests_pass_on_a_third_generation(
    third: Generation, test: Blind, tmp_path: Path
) -> None:
    await test(third, tmp_path)
