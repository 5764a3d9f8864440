"""Revisions of the tasks extension (issue 37, part 2; SEP-3392, a draft).

"An extension that makes a breaking change SHOULD add or increment a ``revision`` string in
its settings object ... A peer that receives a ``revision`` it does not know SHOULD NOT enable
the extension." The 2026-07-28 driver keeps a table of the revisions it implements
(``TASKS_REVISIONS``: today only "none", the settings object ``{}``, E A-21). A revision not
in it, wherever a peer states it (``server/discover``, a -32021's ``requiredCapabilities``,
the caller's own capabilities), means the extension is not used: UnknownExtensionRevision
before any request that would declare it, and the probe reports it. Never a guess. Against
the suite's FaultServer, in process, on both loops.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_tasks_client import Client, Generation, ToolCall
from mcp_tasks_client._drivers.v2026_07_28 import TASKS_REVISION, TASKS_REVISIONS, tasks_revision
from mcp_tasks_client.conformance import ProbeVerdict, probe
from mcp_tasks_client.errors import (
    CapabilityNotNegotiated,
    TaskAugmentationRequired,
    UnknownExtensionRevision,
)
from mcp_tasks_client.models import TASKS_EXTENSION, ClientCapabilities, Implementation
from mcp_tasks_client.testing import FaultServer

G2 = Generation.V2026_07_28
INFO = Implementation("revision-test", "0")
LATER = "2027-03-01"


def test_the_table_holds_what_this_client_implements() -> None:
    """Today: only the extension as published, whose settings carry no revision; and our ad
    carries none (``{}``) until the extension defines one."""
    assert list(TASKS_REVISIONS) == [None]
    assert TASKS_REVISION is None
    assert tasks_revision({}) is None
    assert tasks_revision({"revision": LATER, "other": 1}) == LATER
    assert tasks_revision(True) is None  # E A-21: settings it does not know are tolerated


def test_the_error_names_the_revision_and_what_is_known() -> None:
    error = UnknownExtensionRevision(TASKS_EXTENSION, LATER, [None], where="server/discover")
    assert isinstance(error, CapabilityNotNegotiated)  # the extension was not agreed on
    assert (error.revision, error.known, error.where) == (LATER, [None], "server/discover")
    assert repr(LATER) in str(error)
    assert "none" in str(error)


pytestmark = pytest.mark.anyio


def tasks_sent(server: FaultServer) -> list[dict[str, Any]]:
    """Requests that declared the tasks extension."""
    return [m for m in server.received if TASKS_EXTENSION in str(m.get("params", {}))]


@pytest.mark.parametrize(
    "settings", [{"revision": LATER}, {"revision": 2}, {"revision": ["a"]}, {"revision": None}]
)
async def test_an_unknown_revision_in_discover_means_no_tasks(settings: dict[str, Any]) -> None:
    """After ``server/discover`` states a revision the table lacks (a string, or any other
    JSON value), a task call and ``tasks/get`` raise UnknownExtensionRevision naming it, and
    nothing that declares the extension is sent; a plain call still goes (it declares
    nothing). ``{"revision": null}`` reads as no revision: implemented."""
    await refused_after_discover(G2, settings)


async def refused_after_discover(generation: Generation, settings: dict[str, Any]) -> None:
    """The body of the test above, for any generation built on the extension's driver."""
    server = FaultServer(generation, tasks_settings=settings)
    with anyio.fail_after(20):
        async with (
            server.memory() as transport,
            Client(transport, generation=generation, client_info=INFO) as client,
        ):
            await client.discover()
            if settings["revision"] is None:
                await client.start(ToolCall("echo", {"text": "hi"}).as_task())
                assert tasks_sent(server)
                return
            with pytest.raises(UnknownExtensionRevision) as caught:
                await client.start(ToolCall("echo", {"text": "hi"}).as_task())
            assert caught.value.revision == settings["revision"]
            assert caught.value.where == "server/discover"
            with pytest.raises(UnknownExtensionRevision):
                await client.get_task("task-1")
            plain = await client.call_tool(ToolCall("echo", {"text": "plain"}))
    assert not plain.is_error
    assert tasks_sent(server) == []


async def test_settings_without_a_revision_are_the_published_extension() -> None:
    """E A-21: unknown settings are tolerated; with no revision the extension is used, and
    our own ad on each task request is ``{}`` (no revision of ours to claim yet)."""
    server = FaultServer(G2, tasks_settings={"someFlag": True})
    with anyio.fail_after(20):
        async with (
            server.memory() as transport,
            Client(transport, generation=G2, client_info=INFO) as client,
        ):
            await client.discover()
            await client.start(ToolCall("echo", {"text": "hi"}).as_task())
    (call,) = [m for m in server.received if m.get("method") == "tools/call"]
    declared = call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert declared["extensions"][TASKS_EXTENSION] == {}


async def test_an_unknown_revision_a_refusal_requires_stops_the_extension() -> None:
    """The server's per-request word: a -32021 whose ``requiredCapabilities`` gives the
    extension a revision the table lacks. The refusal is read as ever (the task-only tool
    asks for a task), and from then on the client does not use the extension."""
    server = FaultServer(G2, tasks_settings={"revision": LATER})
    with anyio.fail_after(20):
        async with (
            server.memory() as transport,
            Client(transport, generation=G2, client_info=INFO) as client,
        ):
            with pytest.raises(TaskAugmentationRequired):
                await client.call_tool(ToolCall("need_task", {"text": "x"}))
            with pytest.raises(UnknownExtensionRevision) as caught:
                await client.start(ToolCall("need_task", {"text": "x"}).as_task())
    assert caught.value.revision == LATER
    assert "-32021" in caught.value.where
    assert tasks_sent(server) == []


def test_a_client_asked_to_claim_an_unknown_revision_refuses_at_once() -> None:
    """The caller's own per-request capabilities: declaring the extension at a revision this
    client does not implement is refused when the Client is made (nothing could honour it)."""
    capabilities = ClientCapabilities(extensions={TASKS_EXTENSION: {"revision": LATER}})
    with pytest.raises(UnknownExtensionRevision) as caught:
        Client(
            _unused_transport(),
            generation=G2,
            client_info=INFO,
            capabilities=capabilities,
        )
    assert caught.value.where == "the client's capabilities"


def _unused_transport() -> Any:
    from mcp_tasks_client import HttpTransport

    return HttpTransport("http://127.0.0.1:9/mcp")  # never opened: the Client refuses first


async def test_the_probe_reports_an_unknown_revision_and_probes_no_tasks() -> None:
    """The conformance probe never guesses either: with a revision it does not know it runs
    no task step, and each rule those steps exercise is not applicable, naming the revision."""
    server = FaultServer(G2, tasks_settings={"revision": LATER})
    with anyio.fail_after(60):
        async with server.memory() as transport:
            report = await probe(lambda: transport, G2, safe_tools=["echo"], timeout=10)
    for rule_id in ("E S2", "E S5", "E S15"):
        result = report.result(rule_id)
        assert result.verdict is ProbeVerdict.NOT_APPLICABLE, result
        assert repr(LATER) in result.evidence
    assert not [m for m in server.received if m.get("method") == "tools/call"]
