"""Which HTTP engine serves an ``HttpTransport``, and what the httpx engine keeps (issue 39).

``HttpTransport(url)`` is the lean engine unless the caller asks for httpx (``engine="httpx"``,
``http_client=``) or lean would drop what httpx did by default (credentials in the URL, an
environment proxy for it); the choice is in ``repr`` and logged at open. Every httpx feature
is tested here on the httpx engine that serves it, with real httpx against the project's own
HTTP/1.1 server on 127.0.0.1 (``HostileHTTPServer``): an auth flow with a challenge, request
and response event hooks, a mounted transport, a proxy (the environment's and the client's).
HTTP/2 is not: ``h2`` is not installed in the test environment.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Generator
from typing import Any

import anyio
import httpx
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, LeanHttpTransport
from mcp_tasks_client.errors import UsageError
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received
from mcp_tasks_client.testing._http import HOSTILE_INIT_RESULT

pytestmark = pytest.mark.anyio

INFO = Implementation("engine-tests", "0")
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


async def pong(request: Received, conn: Conn) -> None:
    await conn.result(request, {})


async def _session(transport: HttpTransport) -> None:
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        await client.request("ping", {})


def test_the_default_engine_is_lean_and_says_so() -> None:
    transport = HttpTransport("http://127.0.0.1:1/mcp?token=secret")
    assert transport.engine == "lean"
    text = repr(transport)
    assert text == "HttpTransport('http://127.0.0.1:1/mcp', engine='lean': the default)"
    assert "secret" not in text  # a query may hold a secret: never shown


def test_httpx_is_used_when_asked_for_and_says_why() -> None:
    asked = HttpTransport("http://127.0.0.1:1/mcp", engine="httpx")
    assert asked.engine == "httpx"
    assert "engine='httpx' asked for" in repr(asked)
    client = httpx.AsyncClient()
    injected = HttpTransport("http://127.0.0.1:1/mcp", http_client=client)
    assert injected.engine == "httpx"
    assert "an injected httpx.AsyncClient" in repr(injected)
    assert LeanHttpTransport("http://127.0.0.1:1/mcp").engine == "lean"


def test_credentials_in_the_url_keep_httpx_and_stay_out_of_repr() -> None:
    transport = HttpTransport("http://user:pw@127.0.0.1:1/mcp")
    assert transport.engine == "httpx"
    assert "credentials" in repr(transport)
    assert "pw" not in repr(transport)


def test_an_environment_proxy_keeps_httpx_unless_lean_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    transport = HttpTransport("http://127.0.0.1:1/mcp")
    assert transport.engine == "httpx"
    assert "the environment names a proxy for this URL (HTTP_PROXY)" in repr(transport)
    assert HttpTransport("https://127.0.0.1:1/mcp").engine == "lean"  # no HTTPS_PROXY
    assert HttpTransport("http://127.0.0.1:1/mcp", engine="lean").engine == "lean"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert HttpTransport("http://127.0.0.1:1/mcp").engine == "lean"


def test_choices_that_contradict_each_other_are_usage_errors() -> None:
    client = httpx.AsyncClient()
    with pytest.raises(UsageError, match="httpx engine"):
        HttpTransport("http://127.0.0.1:1/mcp", engine="lean", http_client=client)
    with pytest.raises(UsageError, match="ssl_context"):
        HttpTransport(
            "http://127.0.0.1:1/mcp", http_client=client, ssl_context=ssl.create_default_context()
        )
    with pytest.raises(UsageError, match="engine must be"):
        HttpTransport("http://127.0.0.1:1/mcp", engine="h2")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no httpx client"):
        LeanHttpTransport("http://127.0.0.1:1/mcp", http_client=client)


@pytest.mark.parametrize("engine", ["lean", "httpx"])
async def test_the_engine_is_logged_when_the_transport_opens(
    engine: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_tasks_client.transport.http")
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as server:
            await _session(HttpTransport(server.url, engine=engine))  # type: ignore[arg-type]
    opened = [r.getMessage() for r in caplog.records if r.name.endswith("transport.http")]
    assert f"HTTP engine {engine} (engine={engine!r} asked for)" in opened


class _TokenOnChallenge(httpx.Auth):
    """An auth flow with a round trip of its own: a request goes without a token until the
    server challenges (401), then that request is sent again, and every later one, with it."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.challenges = 0

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.token is not None:
            request.headers["Authorization"] = self.token
        response = yield request
        if response.status_code == 401 and self.token is None:
            self.challenges += 1
            self.token = "Token " + response.headers["www-authenticate"]
            request.headers["Authorization"] = self.token
            yield request


async def test_an_injected_clients_auth_flow_answers_a_challenge() -> None:
    async def challenge(request: Received, conn: Conn) -> None:
        if request.headers.get("authorization") != "Token t-1":
            await conn.head(401, {"WWW-Authenticate": "t-1", "Content-Length": "0"})
            return
        payload = {"jsonrpc": "2.0", "id": request.rpc_id, "result": _init_result()}
        await conn.json(payload, headers={"Mcp-Session-Id": "s-1"})

    auth = _TokenOnChallenge()
    with anyio.fail_after(20):
        async with (
            httpx.AsyncClient(auth=auth) as http,
            HostileHTTPServer(pong, on_initialize=challenge) as server,
        ):
            await _session(HttpTransport(server.url, http_client=http))
    assert auth.challenges == 1
    auths = [r.headers.get("authorization") for r in server.received]
    assert auths == [None, "Token t-1", "Token t-1", "Token t-1", "Token t-1"]
    assert [r.http_method for r in server.received][-1] == "DELETE"


def _init_result() -> dict[str, object]:
    return dict(HOSTILE_INIT_RESULT)


async def test_an_injected_clients_event_hooks_see_each_request_and_response() -> None:
    seen: list[tuple[str, object]] = []

    async def on_request(request: httpx.Request) -> None:
        seen.append(("request", request.method))

    async def on_response(response: httpx.Response) -> None:
        seen.append(("response", response.status_code))

    hooks: dict[str, list[Callable[..., Any]]] = {
        "request": [on_request],
        "response": [on_response],
    }
    with anyio.fail_after(20):
        async with (
            httpx.AsyncClient(event_hooks=hooks) as http,
            HostileHTTPServer(pong) as server,
        ):
            await _session(HttpTransport(server.url, http_client=http))
    methods = [r.http_method for r in server.received]
    assert [m for kind, m in seen if kind == "request"] == methods
    assert [s for kind, s in seen if kind == "response"] == [200, 202, 200, 200]


class _Counting(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.handled: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.handled.append(request.method)
        return await super().handle_async_request(request)


async def test_an_injected_clients_mounted_transport_carries_the_requests() -> None:
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as server:
            mounted = _Counting()
            async with httpx.AsyncClient(
                mounts={f"http://127.0.0.1:{server.port}": mounted}
            ) as http:
                await _session(HttpTransport(server.url, http_client=http))
    assert mounted.handled == [r.http_method for r in server.received]
    assert mounted.handled == ["POST", "POST", "POST", "DELETE"]


@pytest.mark.parametrize("how", ["environment", "client"])
async def test_a_proxy_carries_the_session(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy (our own HTTP/1.1 server, answering as the MCP server would) gets every
    request in absolute form for a URL where nothing listens: only the proxy could answer."""
    with anyio.fail_after(20):
        async with HostileHTTPServer(pong) as proxy:
            url = "http://127.0.0.1:9/mcp"  # the discard port: no server
            proxy_url = f"http://127.0.0.1:{proxy.port}"
            if how == "environment":
                monkeypatch.setenv("HTTP_PROXY", proxy_url)
                transport = HttpTransport(url)
                assert transport.engine == "httpx"
                await _session(transport)
            else:
                async with httpx.AsyncClient(proxy=proxy_url) as http:
                    await _session(HttpTransport(url, http_client=http))
    assert [r.target for r in proxy.received] == [url] * 4
