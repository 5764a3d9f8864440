"""The httpx engine's direct path (issue 12): with an httpx client of its own, a request goes
straight to the connection pool httpx would pick for the URL, without the client layer. These
tests hold it to sending what the full client path sends, and keep the full path wherever the
client layer does something (an injected client's hooks, credentials in the URL).

Against the project's own HTTP/1.1 server on 127.0.0.1 (``HostileHTTPServer``), which records
every request as it arrived.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import httpx
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, ToolCall
from mcp_tasks_client._io._httpx_engine import HttpxEngine
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import CreateTaskResult, Implementation
from mcp_tasks_client.testing import Conn, FaultServer, HostileHTTPServer, Received

pytestmark = pytest.mark.anyio

INFO = Implementation("direct-tests", "0")


async def pong(request: Received, conn: Conn) -> None:
    await conn.result(request, {})


def httpx_of(transport: HttpTransport) -> HttpxEngine:
    """The transport's httpx engine (its direct path)."""
    engine = transport._engine
    assert isinstance(engine, HttpxEngine)
    return engine


async def _session(transport: HttpTransport) -> None:
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        await client.request("ping", {})
        await client.request("ping", {})


def _wire(server: HostileHTTPServer) -> list[tuple[str, str, list[tuple[str, str]], bytes]]:
    return [(r.http_method, r.target, list(r.headers.items()), r.body) for r in server.received]


async def test_the_direct_path_sends_what_the_full_client_path_sends() -> None:
    """Same requests, same header lines in the same order, same bodies: our own client sent
    directly, and an injected default client through ``send``."""
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as direct_server:
            direct = HttpTransport(
                direct_server.url, headers={"Authorization": "Bearer t"}, engine="httpx"
            )
            assert httpx_of(direct).direct is not None
            await _session(direct)
        async with httpx.AsyncClient() as http, HostileHTTPServer(pong) as full_server:
            full = HttpTransport(
                full_server.url, headers={"Authorization": "Bearer t"}, http_client=http
            )
            assert httpx_of(full).direct is None
            await _session(full)
    sent, expected = _wire(direct_server), _wire(full_server)
    assert [r[0] for r in sent] == ["POST", "POST", "POST", "POST", "DELETE"]
    port = str(direct_server.port)
    for ours, theirs in zip(sent, expected, strict=True):
        host = [(k, v.replace(str(full_server.port), port)) for k, v in theirs[2]]
        assert ours[:2] == theirs[:2]
        assert ours[2] == host
        assert ours[3] == theirs[3]
    names = [k for k, _ in sent[2][2]]
    assert names[0] == "host"
    assert names[-1] == "content-length"
    assert dict(sent[2][2])["mcp-session-id"] == "hostile-1"
    assert dict(sent[2][2])["mcp-protocol-version"] == "2025-11-25"
    assert dict(sent[2][2])["accept-encoding"] == "identity"


async def test_an_injected_clients_hooks_and_auth_see_every_request() -> None:
    """An injected client keeps the full ``send``: its event hooks run and its auth signs
    every request (the direct path would skip both)."""
    seen: list[str] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request.method)

    with anyio.fail_after(20):
        async with (
            httpx.AsyncClient(event_hooks={"request": [hook]}, auth=("u", "p")) as http,
            HostileHTTPServer(pong) as server,
        ):
            await _session(HttpTransport(server.url, http_client=http))
    assert seen == ["POST", "POST", "POST", "POST", "DELETE"]
    basic = "Basic " + base64.b64encode(b"u:p").decode()
    assert [r.headers.get("authorization") for r in server.received] == [basic] * 5


async def test_credentials_in_the_url_are_sent_as_basic_auth() -> None:
    """httpx turns a URL's user:password into an Authorization header: such a URL keeps the
    client's full path, so that still happens."""
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as server:
            url = server.url.replace("http://", "http://user:secret@")
            transport = HttpTransport(url)
            assert transport.engine == "httpx"  # chosen for the credentials
            assert httpx_of(transport).direct is None
            await _session(transport)
    basic = "Basic " + base64.b64encode(b"user:secret").decode()
    assert {r.headers.get("authorization") for r in server.received} == {basic}


async def test_headers_the_caller_changes_are_sent_from_the_next_request_on() -> None:
    """The POST headers are built once, but rebuilt when ``transport.headers`` changes (a
    refreshed token), the session id or the protocol version."""
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as server:
            transport = HttpTransport(server.url, headers={"Authorization": "Bearer 1"})
            async with Client(
                transport, generation=Generation.V2025_11_25, client_info=INFO
            ) as client:
                await client.request("ping", {})
                transport.headers["Authorization"] = "Bearer 2"
                await client.request("ping", {})
                transport.headers = {"X-Other": "yes"}
                await client.request("ping", {})
    posts: list[dict[str, Any]] = [r.headers for r in server.received if r.http_method == "POST"]
    assert [h.get("authorization") for h in posts] == [
        "Bearer 1",  # initialize
        "Bearer 1",  # notifications/initialized
        "Bearer 1",
        "Bearer 2",
        None,
    ]
    assert posts[-1]["x-other"] == "yes"
    assert "mcp-session-id" not in posts[0]
    assert posts[1]["mcp-session-id"] == "hostile-1"


def test_a_pool_of_no_connections_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="max_connections"):
        HttpTransport("http://127.0.0.1:1/mcp", max_connections=0)


async def _gen2_session(transport: HttpTransport) -> None:
    async with Client(transport, generation=Generation.V2026_07_28, client_info=INFO) as client:
        created = await client.start(ToolCall("echo", {"text": "hi"}).as_task())
        assert isinstance(created, CreateTaskResult)
        await client.get_task(created.task.task_id)


async def test_2026_routing_headers_go_the_same_lines_on_the_direct_path() -> None:
    """2026-07-28's per-message headers (Mcp-Method, Mcp-Name...) are added to the kept
    lines where httpx's merge would put them."""
    wires = []
    with anyio.fail_after(20):
        for inject in (False, True):
            async with (
                httpx.AsyncClient() as http,
                FaultServer(Generation.V2026_07_28).http() as server,
            ):
                transport = HttpTransport(
                    server.url, engine="httpx", http_client=http if inject else None
                )
                assert (httpx_of(transport).direct is None) is inject
                await _gen2_session(transport)
                port = str(server.port)
                wires.append(
                    [
                        (m, t, [(k, v.replace(port, "PORT")) for k, v in h], b)
                        for m, t, h, b in _wire(server)
                    ]
                )
    direct, full = wires
    assert direct == full
    methods = [dict(h).get("mcp-method") for _, _, h, _ in direct]
    assert "tools/call" in methods
    assert "tasks/get" in methods
