"""The validator sees HTTP: ValidatingTransport over HttpTransport and LeanHttpTransport gets
each exchange's status, content type and Mcp-Session-Id (V-27a-d, E C7, E S24), from the
project's scripted HTTP server on 127.0.0.1 breaking one transport rule at a time."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, LeanHttpTransport
from mcp_tasks_client.conformance import (
    ConformancePolicy,
    ConformanceViolation,
    HttpExchange,
    ValidatingTransport,
    Validator,
)
from mcp_tasks_client.errors import GetStreamUnavailable, ProtocolError, RPCError
from mcp_tasks_client.models import Implementation
from mcp_tasks_client.testing import (
    HOSTILE_INIT_RESULT,
    Conn,
    FaultServer,
    HostileHTTPServer,
    Received,
)
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
TRANSPORTS: list[Callable[[str], Transport]] = [
    functools.partial(HttpTransport, engine="httpx"),
    LeanHttpTransport,
]
DISCOVER = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    "serverInfo": {"name": "hostile", "version": "0"},
    "resultType": "complete",
    "ttlMs": 0,  # SEP-2549: a complete discover carries its caching hints (E H1)
    "cacheScope": "private",
}


def rules(validator: Validator) -> set[tuple[str, str]]:
    return {(f.rule_id, f.verdict.value) for f in validator.findings}


def client_of(
    make: Callable[[str], Transport],
    url: str,
    generation: Generation,
    policy: ConformancePolicy = ConformancePolicy.RECORD,
) -> tuple[Client, Validator, ValidatingTransport]:
    validator = Validator(generation)
    transport = ValidatingTransport(make(url), validator, policy=policy)
    client = Client(transport, generation=generation, client_info=INFO)
    return client, validator, transport


def http_of(transport: ValidatingTransport) -> HttpTransport:
    inner = transport.inner
    assert isinstance(inner, HttpTransport)  # LeanHttpTransport is one too
    return inner


async def tools_list(request: Received, conn: Conn) -> None:
    await conn.result(request, {"tools": []})


@pytest.fixture(params=TRANSPORTS, ids=["httpx", "lean"])
def make(request: pytest.FixtureRequest) -> Callable[[str], Transport]:
    maker: Callable[[str], Transport] = request.param
    return maker


async def test_a_polite_server_breaks_no_http_rule(make: Callable[[str], Transport]) -> None:
    """The scripted server's defaults: 202 with no body, JSON answers, a visible-ASCII session
    id. The validator saw every exchange and found nothing."""
    seen: list[HttpExchange] = []
    async with HostileHTTPServer(tools_list) as server:
        client, validator, transport = client_of(make, server.url, G1)
        assert transport.sees_http
        inner_observer = transport._http_exchange

        def spy(exchange: HttpExchange) -> None:
            seen.append(exchange)
            inner_observer(exchange)

        http_of(transport).observe_http(spy)
        with anyio.fail_after(20):
            async with client:
                _ = [t async for t in client.list_tools()]
    assert validator.findings == []
    kinds = [(e.kind, e.method, e.status, e.content_type) for e in seen]
    assert ("request", "initialize", 200, "application/json") in kinds
    assert ("notification", "notifications/initialized", 202, "") in kinds
    assert ("request", "tools/list", 200, "application/json") in kinds
    (init,) = [e for e in seen if e.method == "initialize"]
    assert init.session_id == "hostile-1"
    (note,) = [e for e in seen if e.kind == "notification"]
    assert note.body is False


async def test_a_notification_answered_200_with_a_body_is_v27a(
    make: Callable[[str], Transport],
) -> None:
    async def answer_200(request: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "application/json", "Content-Length": "2"})
        await conn.write(b"{}")

    async with HostileHTTPServer(tools_list, on_notification=answer_200) as server:
        client, validator, _ = client_of(make, server.url, G1, ConformancePolicy.WARN)
        with anyio.fail_after(20):
            async with client:
                _ = [t async for t in client.list_tools()]  # the client goes on
    assert rules(validator) == {("V-27a", "fail")}
    (finding,) = validator.findings
    assert finding.evidence["status"] == 200
    assert finding.evidence["method"] == "notifications/initialized"
    warned = [w for w in client.warnings if isinstance(w, ConformanceViolation)]
    assert [w.finding.rule_id for w in warned] == ["V-27a"]


async def test_a_202_with_a_chunked_body_is_v27a(make: Callable[[str], Transport]) -> None:
    """No Content-Length: the body is read (bounded) to see whether there is one."""

    async def chunked(request: Received, conn: Conn) -> None:
        await conn.head(202, {"Transfer-Encoding": "chunked"})
        await conn.write(b"2\r\nok\r\n0\r\n\r\n")

    async with HostileHTTPServer(tools_list, on_notification=chunked) as server:
        client, validator, _ = client_of(make, server.url, G1)
        with anyio.fail_after(20):
            async with client:
                pass
    assert rules(validator) == {("V-27a", "fail")}
    assert "with a body" in validator.findings[0].detail


async def test_an_empty_chunked_202_is_no_body(make: Callable[[str], Transport]) -> None:
    async def chunked(request: Received, conn: Conn) -> None:
        await conn.head(202, {"Transfer-Encoding": "chunked"})
        await conn.write(b"0\r\n\r\n")

    async with HostileHTTPServer(tools_list, on_notification=chunked) as server:
        client, validator, _ = client_of(make, server.url, G1)
        with anyio.fail_after(20):
            async with client:
                pass
    assert validator.findings == []


async def test_a_request_answered_text_plain_is_v27b_and_raise_fails_it(
    make: Callable[[str], Transport],
) -> None:
    async def text(request: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "text/plain", "Content-Length": "2"})
        await conn.write(b"hi")

    async with HostileHTTPServer(text) as server:
        client, validator, _ = client_of(make, server.url, G1, ConformancePolicy.RAISE)
        with anyio.fail_after(20):
            async with client:
                with pytest.raises(ConformanceViolation) as caught:
                    _ = [t async for t in client.list_tools()]
    assert caught.value.finding.rule_id == "V-27b"
    assert isinstance(caught.value.__cause__, ProtocolError)  # the transport's own refusal
    assert rules(validator) == {("V-27b", "fail")}


async def test_a_session_id_outside_visible_ascii_is_v27c(
    make: Callable[[str], Transport],
) -> None:
    async def initialize(request: Received, conn: Conn) -> None:
        payload = {"jsonrpc": "2.0", "id": request.rpc_id, "result": HOSTILE_INIT_RESULT}
        await conn.json(payload, headers={"Mcp-Session-Id": "a session"})

    async with HostileHTTPServer(tools_list, on_initialize=initialize) as server:
        client, validator, _ = client_of(make, server.url, G1)
        with anyio.fail_after(20), pytest.raises(ProtocolError):
            async with client:  # the transport refuses the session (X:200)
                pass
    assert rules(validator) == {("V-27c", "fail")}
    assert validator.findings[0].evidence["session_id"] == "a session"


async def test_a_get_answered_json_is_v27d(make: Callable[[str], Transport]) -> None:
    async def get(request: Received, conn: Conn) -> None:
        await conn.json({"not": "sse"})

    async with HostileHTTPServer(tools_list, on_get=get) as server:
        client, validator, transport = client_of(make, server.url, G1)
        with anyio.fail_after(20):
            async with client:
                try:
                    await http_of(transport).open_listen_stream()
                except ProtocolError:
                    pass
    assert ("V-27d", "fail") in rules(validator)


async def test_a_405_to_get_is_fine(make: Callable[[str], Transport]) -> None:
    async with HostileHTTPServer(tools_list) as server:  # GET: 405 by default
        client, validator, transport = client_of(make, server.url, G1)
        with anyio.fail_after(20):
            async with client:
                with pytest.raises(GetStreamUnavailable):
                    await http_of(transport).open_listen_stream()
    assert validator.findings == []


def gen2_server(*, session: bool, error_status: int) -> HostileHTTPServer:
    async def on_request(request: Received, conn: Conn) -> None:
        headers = {"Mcp-Session-Id": "s-1"} if session else {}
        if request.rpc_method == "server/discover":
            payload: dict[str, Any] = {"jsonrpc": "2.0", "id": request.rpc_id, "result": DISCOVER}
            await conn.json(payload, headers=headers)
            return
        error = {"code": -32601, "message": f"no {request.rpc_method}"}
        payload = {"jsonrpc": "2.0", "id": request.rpc_id, "error": error}
        await conn.json(payload, status=error_status, headers=headers)

    return HostileHTTPServer(on_request)


@pytest.mark.parametrize(
    ("session", "status", "expected"),
    [
        (False, 404, set()),
        (True, 404, {("E C7", "warn")}),
        (False, 200, {("E S24", "warn")}),
        (False, 400, {("E S24", "warn")}),
    ],
)
async def test_2026_session_ids_and_error_statuses(
    make: Callable[[str], Transport], session: bool, status: int, expected: set[tuple[str, str]]
) -> None:
    async with gen2_server(session=session, error_status=status) as server:
        client, validator, _ = client_of(make, server.url, G2)
        with anyio.fail_after(20):
            async with client:
                await client.discover()
                with pytest.raises(RPCError):
                    await client.request("tasks/list", {})
    assert rules(validator) == expected
    for finding in validator.findings:
        if finding.rule_id == "E S24":
            assert finding.evidence["http"]["status"] == status
            assert finding.evidence["error"]["code"] == -32601


async def test_the_fault_server_keeps_the_http_rules_of_both_generations() -> None:
    for generation in (G1, G2):
        async with FaultServer(generation).http() as http:
            client, validator, _ = client_of(HttpTransport, http.url, generation)
            with anyio.fail_after(20):
                async with client:
                    if generation is G2:
                        await client.discover()
                        with pytest.raises(RPCError):
                            await client.request("tasks/list", {})
                    _ = [t async for t in client.list_tools()]
        assert validator.findings == [], generation


async def test_without_a_validator_no_observer_is_installed() -> None:
    transport = HttpTransport("http://127.0.0.1:9/mcp")
    async with transport:  # opened and closed (nothing is sent): its streams are closed
        assert transport._http_observer is None
        ValidatingTransport(transport, Validator(G1))
        assert transport._http_observer is not None
