"""HTTP fault injection with httpx.MockTransport: bodies and streams a broken server may send.

Interoperability is proven against the real peers (test_client_peers.py); this file only
produces the faults those peers never produce on their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, StreamResumption, ToolCall
from mcp_tasks_client.errors import (
    DecodeError,
    GetStreamUnavailable,
    HTTPStatusError,
    InvalidParams,
    ProtocolError,
    StreamInterrupted,
)
from mcp_tasks_client.models import Implementation, JSONRPCRequest, TextContent

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:1/mcp"  # never dialled: MockTransport answers in-process
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "mock", "version": "0"},
}
OK = {"content": [{"type": "text", "text": "ok"}]}


def sse(*events: tuple[str | None, Any]) -> bytes:
    out = []
    for event_id, data in events:
        lines = [] if event_id is None else [f"id: {event_id}"]
        lines.append("data: " + ("" if data is None else json.dumps(data)))
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).encode()


Handler = Callable[[httpx.Request, dict[str, Any]], httpx.Response]


class MockServer:
    """Answers initialize and notifications; every other request goes to ``on_request``."""

    def __init__(self, on_request: Handler) -> None:
        self.on_request = on_request
        self.seen: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":
            return self.on_request(request, {})
        body = json.loads(request.content)
        self.bodies.append(body)
        if body.get("method") == "initialize":
            payload = {"jsonrpc": "2.0", "id": body["id"], "result": INIT}
            return httpx.Response(200, json=payload, headers={"Mcp-Session-Id": "s-1"})
        if "id" not in body or "method" not in body:
            return httpx.Response(202)
        return self.on_request(request, body)


async def call_with(server: MockServer, **transport_kw: Any) -> Any:
    transport = HttpTransport(
        URL, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)), **transport_kw
    )
    info = Implementation("t", "0")
    with anyio.fail_after(10):
        async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
            return await c.call_tool(ToolCall("x"))


async def test_non_json_body_is_decode_error() -> None:
    server = MockServer(
        lambda r, b: httpx.Response(
            200, content=b"{oops", headers={"content-type": "application/json"}
        )
    )
    with pytest.raises(DecodeError) as caught:
        await call_with(server)
    assert "not valid JSON" in caught.value.problem


async def test_http_500_without_jsonrpc_body_is_http_status_error() -> None:
    server = MockServer(lambda r, b: httpx.Response(500, text="Internal Server Error"))
    with pytest.raises(HTTPStatusError) as caught:
        await call_with(server)
    assert caught.value.status_code == 500
    assert caught.value.method == "tools/call"
    assert "Internal Server Error" in caught.value.body


async def test_http_400_with_jsonrpc_error_body_is_that_rpc_error() -> None:
    def reply(r: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        error = {"code": -32602, "message": "Task nope not found"}
        return httpx.Response(400, json={"jsonrpc": "2.0", "id": None, "error": error})

    with pytest.raises(InvalidParams) as caught:
        await call_with(MockServer(reply))
    assert caught.value.message == "Task nope not found"


async def test_202_for_a_request_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="202"):
        await call_with(MockServer(lambda r, b: httpx.Response(202)))


async def test_unexpected_content_type_is_a_protocol_error() -> None:
    server = MockServer(lambda r, b: httpx.Response(200, text="hi"))
    with pytest.raises(ProtocolError, match="content type"):
        await call_with(server)


async def test_sse_answer_with_priming_event_is_read() -> None:
    """X:106: a priming event (id, empty data) is recorded, not parsed."""

    def reply(r: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        content = sse(("e-0", None), ("e-1", {"jsonrpc": "2.0", "id": body["id"], "result": OK}))
        return httpx.Response(200, content=content, headers={"content-type": "text/event-stream"})

    result = await call_with(MockServer(reply))
    assert result.content == (TextContent("ok"),)


async def test_sse_stream_ending_early_is_stream_interrupted_without_resumption() -> None:
    """No reconnect unless asked: the error names the last event id for the caller."""

    def reply(r: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(
            200, content=sse(("e-7", None)), headers={"content-type": "text/event-stream"}
        )

    server = MockServer(reply)
    with pytest.raises(StreamInterrupted) as caught:
        await call_with(server)
    assert caught.value.last_event_id == "e-7"
    assert [r.method for r in server.seen].count("GET") == 0


async def test_sse_stream_resumed_with_last_event_id_when_asked() -> None:
    """X:167-189: with StreamResumption, GET + Last-Event-ID after `retry`, then the answer."""
    pending: dict[str, Any] = {}

    def reply(r: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        if r.method == "POST":
            pending["id"] = body["id"]
            content = b"id: e-1\nretry: 10\ndata: \n\n"
            return httpx.Response(
                200, content=content, headers={"content-type": "text/event-stream"}
            )
        assert r.headers["last-event-id"] == "e-1"
        answer = {"jsonrpc": "2.0", "id": pending["id"], "result": OK}
        return httpx.Response(
            200, content=sse(("e-2", answer)), headers={"content-type": "text/event-stream"}
        )

    server = MockServer(reply)
    result = await call_with(server, resumption=StreamResumption(max_attempts=2))
    assert result.content == (TextContent("ok"),)
    get = next(r for r in server.seen if r.method == "GET")
    assert get.headers["accept"] == "text/event-stream"
    assert get.headers["mcp-session-id"] == "s-1"


async def test_server_request_on_the_post_stream_is_routed_and_answered() -> None:
    """X:3.1 / T:439: a server->client request arrives before the response on the same stream;
    the client answers it with a new POST carrying the same id (C-03)."""

    def reply(r: httpx.Request, body: dict[str, Any]) -> httpx.Response:
        ask = {"jsonrpc": "2.0", "id": "q-1", "method": "roots/list", "params": {}}
        answer = {"jsonrpc": "2.0", "id": body["id"], "result": OK}
        return httpx.Response(
            200,
            content=sse(("1", ask), ("2", answer)),
            headers={"content-type": "text/event-stream"},
        )

    server = MockServer(reply)
    transport = HttpTransport(
        URL, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server))
    )
    info = Implementation("t", "0")
    asked: list[JSONRPCRequest] = []

    async def roots(request: JSONRPCRequest) -> dict[str, Any]:
        asked.append(request)
        return {"roots": []}

    with anyio.fail_after(10):
        async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
            c.on_request("roots/list", roots)
            await c.call_tool(ToolCall("x"))
            while not any(b.get("id") == "q-1" for b in server.bodies):
                await anyio.sleep(0.01)
    assert [r.id for r in asked] == ["q-1"]
    answer = next(b for b in server.bodies if b.get("id") == "q-1")
    assert answer == {"jsonrpc": "2.0", "id": "q-1", "result": {"roots": []}}
    posted = [r for r in server.seen if r.method == "POST"]
    assert all(r.headers["mcp-protocol-version"] == "2025-11-25" for r in posted[1:])  # X:263
    assert "mcp-protocol-version" not in posted[0].headers  # not on initialize


async def test_get_stream_refused_with_405_is_get_stream_unavailable() -> None:
    """X:141: a server without the standalone stream answers GET with 405."""
    server = MockServer(lambda r, b: httpx.Response(405))
    transport = HttpTransport(
        URL, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server))
    )
    info = Implementation("t", "0")
    with anyio.fail_after(10):
        async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as c:
            with pytest.raises(GetStreamUnavailable):
                await c.open_listen_stream()
    get = next(r for r in server.seen if r.method == "GET")
    assert get.headers["accept"] == "text/event-stream"  # X:135 MUST


async def test_session_deleted_on_close_with_its_id() -> None:
    """X:216: DELETE with the session id when the client closes (the default)."""
    server = MockServer(
        lambda r, b: httpx.Response(200, json={"jsonrpc": "2.0", "id": b["id"], "result": OK})
    )
    await call_with(server)
    deletes = [r for r in server.seen if r.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].headers["mcp-session-id"] == "s-1"
