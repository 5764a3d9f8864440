"""The client against real third-party MCP servers (tests/peers/), HTTP and stdio.

Both peers implement 2025-11-25 tasks: the official Python SDK (mcp==1.30.0) and the official
TypeScript SDK (@modelcontextprotocol/sdk@1.32.2). Each test runs on trio and on asyncio.
"""

from __future__ import annotations

import anyio
import httpx
import pytest
from peers.harness import Peer

from mcp_tasks_client import Client, Generation, HttpTransport, StdioTransport, ToolCall
from mcp_tasks_client.errors import ProcessExited, RequestTimeout, SessionExpired
from mcp_tasks_client.models import Implementation, TaskSupport, TextContent
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
EXPECTED_SUPPORT = {
    "slow_echo": TaskSupport.OPTIONAL,
    "need_task": TaskSupport.REQUIRED,
    "confirm": TaskSupport.REQUIRED,
    "fail": TaskSupport.REQUIRED,
    "summarize": TaskSupport.REQUIRED,
    "plain_echo": TaskSupport.FORBIDDEN,
    # the tools that send the client task-augmented requests (tests/test_receiver_peers.py)
    "ask_as_task": TaskSupport.FORBIDDEN,
    "sample_as_task": TaskSupport.FORBIDDEN,
    "list_then_cancel": TaskSupport.FORBIDDEN,
    "ask_short_ttl": TaskSupport.FORBIDDEN,
    "immediate_ask": TaskSupport.REQUIRED,
    "progress_steps": TaskSupport.REQUIRED,
}


def _client(transport: Transport) -> Client:
    return Client(transport, generation=Generation.V2025_11_25, client_info=INFO)


async def test_initialize_negotiates_2025_11_25_and_reads_task_capability(
    transport: Transport,
) -> None:
    """V-01, V-03: the InitializeResult is typed; tasks capability flags are read (A-09)."""
    async with _client(transport) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info.name.endswith("-tasks-peer")
        tasks = client.server_capabilities.tasks
        assert tasks is not None
        assert (tasks.list, tasks.cancel, tasks.tools_call) == (True, True, True)
        assert client.server_capabilities.tools is not None


async def test_list_tools_shows_each_tools_task_support(transport: Transport) -> None:
    """V-03 / C-17: execution.taskSupport per tool; absent reads as forbidden."""
    async with _client(transport) as client:
        tools = {tool.name: tool async for tool in client.list_tools()}
    assert {name: tool.task_support for name, tool in tools.items()} == EXPECTED_SUPPORT
    assert tools["plain_echo"].execution is None  # absent on the wire, not "forbidden"
    assert tools["slow_echo"].input_schema["type"] == "object"


async def test_plain_tool_call_returns_typed_result(transport: Transport) -> None:
    async with _client(transport) as client:
        result = await client.call_tool(ToolCall("plain_echo", {"text": "hi"}))
    assert result.is_error is False
    assert result.content == (TextContent("echo: hi"),)


async def test_timeout_then_the_connection_still_works(transport: Transport) -> None:
    """C-13: a request past its deadline raises RequestTimeout; its late answer is ignored."""
    async with _client(transport) as client:
        with pytest.raises(RequestTimeout) as caught:
            await client.call_tool(
                ToolCall("slow_echo", {"text": "late", "seconds": 1.5}), timeout=0.2
            )
        assert caught.value.method == "tools/call"
        await anyio.sleep(1.6)  # let the late answer arrive and be dropped
        result = await client.call_tool(ToolCall("plain_echo", {"text": "after"}))
        assert result.content == (TextContent("echo: after"),)
        assert list(client.warnings) == []


async def test_http_session_id_captured_and_deleted_on_close(peer_http: tuple[Peer, str]) -> None:
    """X:194-219: the session id is echoed while open and DELETEd on close (then 404)."""
    url = peer_http[1]
    transport = HttpTransport(url)
    async with _client(transport) as client:
        session_id = transport.session_id
        assert session_id is not None
        assert transport.protocol_version == "2025-11-25"
        await client.call_tool(ToolCall("plain_echo", {"text": "x"}))
    async with httpx.AsyncClient() as raw:
        response = await raw.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Mcp-Session-Id": session_id,
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert response.status_code == 404


async def test_http_404_on_the_session_is_session_expired(peer_http: tuple[Peer, str]) -> None:
    """X:214: a 404 for a request carrying a session id -> SessionExpired; no re-initialise."""
    url = peer_http[1]
    transport = HttpTransport(url)
    async with _client(transport) as client:
        assert transport.session_id is not None
        async with httpx.AsyncClient() as raw:  # another party ends the session
            ended = await raw.delete(
                url,
                headers={
                    "Mcp-Session-Id": transport.session_id,
                    "MCP-Protocol-Version": "2025-11-25",
                },
            )
            assert ended.status_code in (200, 202, 204)
        with pytest.raises(SessionExpired) as caught:
            await client.call_tool(ToolCall("plain_echo", {"text": "x"}))
        assert caught.value.session_id == transport.session_id


async def test_http_listen_stream_opens(peer_http: tuple[Peer, str]) -> None:
    """X:133: the caller may open the standalone GET stream; both peers serve SSE there."""
    transport = HttpTransport(peer_http[1])
    async with _client(transport) as client:
        await client.open_listen_stream()
        result = await client.call_tool(ToolCall("plain_echo", {"text": "with GET open"}))
        assert result.content == (TextContent("echo: with GET open"),)


async def test_http_listen_stream_opened_while_entering(peer_http: tuple[Peer, str]) -> None:
    """``Client(listen_stream=True)`` opens the GET stream between the initialize answer and
    ``notifications/initialized`` (issue 21, item 9): both SDK peers serve it then, with no
    warning, and the session works as usual."""
    transport = HttpTransport(peer_http[1])
    client = Client(
        transport, generation=Generation.V2025_11_25, client_info=INFO, listen_stream=True
    )
    async with client:
        result = await client.call_tool(ToolCall("plain_echo", {"text": "GET open first"}))
        assert result.content == (TextContent("echo: GET open first"),)
    assert list(client.warnings) == []


async def test_stdio_child_exiting_mid_request_fails_the_request(
    peer_stdio: tuple[Peer, list[str]],
) -> None:
    """A server process that dies during a request: ProcessExited, not a hang."""
    transport = StdioTransport(peer_stdio[1])
    async with _client(transport) as client:
        assert transport.pid is not None

        async def kill_soon() -> None:
            await anyio.sleep(0.3)
            assert transport._process is not None
            transport._process.kill()

        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_soon)
            with anyio.fail_after(10), pytest.raises(ProcessExited) as caught:
                await client.call_tool(ToolCall("slow_echo", {"text": "x", "seconds": 5}))
        assert caught.value.returncode is not None
        with pytest.raises(ProcessExited):  # the connection stays broken, it does not hang
            await client.call_tool(ToolCall("plain_echo", {"text": "x"}))


async def test_http_reuses_connections_across_sse_answers(peer_http: tuple[Peer, str]) -> None:
    """Sequential requests answered over SSE share pooled connections (measured: a
    connection per request cost more CPU than the request): the transport reads each SSE
    answer to its end so httpcore can pool the connection."""
    connects: list[str] = []

    async def trace(name: str, info: dict[str, object]) -> None:
        if name == "connection.connect_tcp.started":
            connects.append(name)

    async def add_trace(request: httpx.Request) -> None:
        request.extensions["trace"] = trace

    http = httpx.AsyncClient(event_hooks={"request": [add_trace]})
    async with http, _client(HttpTransport(peer_http[1], http_client=http)) as client:
        for _ in range(20):
            await client.call_tool(ToolCall("plain_echo", {"text": "again"}))
    assert len(connects) <= 3  # initialize, the notification POST, maybe one more
