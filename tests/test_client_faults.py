"""Fault injection: what a broken server can send, and the typed error the caller gets.

These use the in-memory transport (a scripted server end), which is only for faults: every
claim of interoperability is made against the real peers in test_client_peers.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import Client, Generation, OrphanedTask, ToolCall
from mcp_tasks_client._io.base import Incoming
from mcp_tasks_client.errors import (
    DecodeError,
    InvalidParams,
    MethodNotFound,
    RequestTimeout,
    RPCError,
    TransportClosed,
    UnexpectedResponse,
    UnsupportedProtocolVersion,
    UsageError,
)
from mcp_tasks_client.models import (
    ClientCapabilities,
    ElicitationCapability,
    Implementation,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
)
from mcp_tasks_client.transports import (
    MemoryServerEnd,
    MemoryTransport,
    Transport,
    memory_transport_pair,
)

pytestmark = pytest.mark.anyio

INFO = Implementation("fault-tests", "0")
INIT_RESULT: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "tasks": {"list": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "scripted", "version": "0"},
}

Script = Callable[[MemoryServerEnd], Coroutine[Any, Any, None]]


async def handshake(server: MemoryServerEnd, result: dict[str, Any] | None = None) -> Any:
    """Answer initialize (with ``result``) and swallow notifications/initialized."""
    request = await server.receive()
    assert request["method"] == "initialize"
    await server.send({"jsonrpc": "2.0", "id": request["id"], "result": result or INIT_RESULT})
    note = await server.receive()
    assert note == {"jsonrpc": "2.0", "method": "notifications/initialized"}  # C-09
    return request


async def run_with(script: Script, body: Callable[[Client], Awaitable[None]], **kw: Any) -> None:
    """Run ``script`` as the server and ``body`` as the caller; re-raise the caller's error."""
    transport, server = memory_transport_pair()
    failure: BaseException | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(script, server)
        try:
            with anyio.fail_after(10):
                async with Client(
                    transport, generation=Generation.V2025_11_25, client_info=INFO, **kw
                ) as client:
                    await body(client)
        except Exception as exc:  # raised outside the task group, so it is not wrapped
            failure = exc
        tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


async def call(client: Client) -> None:
    await client.call_tool(ToolCall("t"))


# --- the handshake -------------------------------------------------------------------------


async def test_initialize_sends_exactly_the_callers_capabilities() -> None:
    """C-06, A-16: nothing is declared that the caller did not set (empty by default)."""
    seen: list[Any] = []

    async def script(server: MemoryServerEnd) -> None:
        seen.append(await handshake(server))

    async def body(client: Client) -> None:
        assert client.server_capabilities.tasks is not None
        assert client.server_capabilities.tasks.tools_call is True
        assert client.server_capabilities.tasks.cancel is False

    await run_with(script, body)
    params = seen[0]["params"]
    assert params == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "fault-tests", "version": "0"},
    }


async def test_initialize_declares_elicitation_when_the_caller_sets_it() -> None:
    seen: list[Any] = []

    async def script(server: MemoryServerEnd) -> None:
        seen.append(await handshake(server))

    caps = ClientCapabilities(elicitation=ElicitationCapability(form={}))

    async def body(client: Client) -> None:
        pass

    await run_with(script, body, capabilities=caps)
    assert seen[0]["params"]["capabilities"] == {"elicitation": {"form": {}}}


async def test_counter_offered_version_is_unsupported_protocol_version() -> None:
    """C-08, A-20: the server offers a version we do not speak -> typed error, disconnect."""

    async def script(server: MemoryServerEnd) -> None:
        request = await server.receive()
        result = {**INIT_RESULT, "protocolVersion": "2024-11-05"}
        await server.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    with pytest.raises(UnsupportedProtocolVersion) as caught:
        await run_with(script, call)
    assert caught.value.requested == "2025-11-25"
    assert caught.value.offered == ("2024-11-05",)


async def test_version_refused_with_error_is_unsupported_protocol_version() -> None:
    """A-20 / L:271-285: -32602 with data.supported is the same typed error."""

    async def script(server: MemoryServerEnd) -> None:
        request = await server.receive()
        error = {
            "code": -32602,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2024-11-05"], "requested": "2025-11-25"},
        }
        await server.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    with pytest.raises(UnsupportedProtocolVersion) as caught:
        await run_with(script, call)
    assert caught.value.offered == ("2024-11-05",)


async def test_missing_required_field_names_its_path() -> None:
    """V-01: serverInfo is required; the error names the JSON path."""

    async def script(server: MemoryServerEnd) -> None:
        request = await server.receive()
        result = {k: v for k, v in INIT_RESULT.items() if k != "serverInfo"}
        await server.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    with pytest.raises(DecodeError) as caught:
        await run_with(script, call)
    assert caught.value.path == "$.result.serverInfo"
    assert "missing" in caught.value.problem


# --- responses that cannot be -------------------------------------------------------------


def answering(reply: Callable[[Any], Any]) -> Script:
    """A server that handshakes, then answers the next request with ``reply(request)``."""

    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        request = await server.receive()
        answer = reply(request)
        if isinstance(answer, bytes):
            await server.send_raw(answer)
        else:
            await server.send(answer)
        await anyio.sleep_forever()

    return script


async def test_non_json_line_breaks_the_connection_with_decode_error() -> None:
    with pytest.raises(DecodeError) as caught:
        await run_with(answering(lambda _: b"<html>oops</html>"), call)
    assert "not valid JSON" in caught.value.problem


async def test_response_with_unknown_id_is_unexpected_response() -> None:
    """C-02/C-03: a response for an id never sent is a protocol error, not silently dropped."""
    with pytest.raises(UnexpectedResponse) as caught:
        await run_with(answering(lambda _: {"jsonrpc": "2.0", "id": 999, "result": {}}), call)
    assert caught.value.message_id == 999


async def test_wrong_type_in_result_names_the_path() -> None:
    def reply(request: Any) -> Any:
        result = {"content": [{"type": "text", "text": 5}]}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}

    with pytest.raises(DecodeError) as caught:
        await run_with(answering(reply), call)
    assert caught.value.path == "$.result.content[0].text"
    assert caught.value.value == 5


async def test_not_jsonrpc_2_0_is_decode_error() -> None:
    with pytest.raises(DecodeError) as caught:
        await run_with(answering(lambda r: {"jsonrpc": "1.0", "id": r["id"], "result": {}}), call)
    assert caught.value.path == "$.jsonrpc"


async def test_error_answer_keeps_code_message_and_data() -> None:
    def reply(request: Any) -> Any:
        error = {"code": -32601, "message": "nope", "data": {"why": "no such tool"}}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}

    with pytest.raises(MethodNotFound) as caught:
        await run_with(answering(reply), call)
    assert (caught.value.code, caught.value.message) == (-32601, "nope")
    assert caught.value.data == {"why": "no such tool"}
    assert caught.value.method == "tools/call"


async def test_other_error_codes_are_plain_rpc_errors() -> None:
    def reply(request: Any) -> Any:
        error = {"code": -32042, "message": "url elicitation required"}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}

    with pytest.raises(RPCError) as caught:
        await run_with(answering(reply), call)
    assert type(caught.value) is RPCError
    assert caught.value.code == -32042


async def test_server_closing_mid_request_is_transport_closed() -> None:
    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        await server.receive()
        await server.aclose()

    with pytest.raises(TransportClosed):
        await run_with(script, call)


# --- deadlines -----------------------------------------------------------------------------


async def test_timeout_sends_cancelled_and_ignores_the_late_answer() -> None:
    """C-13: RequestTimeout, notifications/cancelled for that id; C-47: late answer ignored."""
    seen: list[Any] = []

    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        slow = await server.receive()
        # The cancellation goes out in the background (the caller has control back at its
        # deadline), so the next request may overtake it.
        first, second = await server.receive(), await server.receive()
        cancel, fast = (first, second) if "id" not in first else (second, first)
        seen.append(cancel)
        await server.send({"jsonrpc": "2.0", "id": slow["id"], "result": {"content": []}})
        result = {"content": [{"type": "text", "text": "ok"}]}
        await server.send({"jsonrpc": "2.0", "id": fast["id"], "result": result})
        await anyio.sleep_forever()

    async def body(client: Client) -> None:
        with pytest.raises(RequestTimeout):
            await client.call_tool(ToolCall("slow"), timeout=0.05)
        result = await client.call_tool(ToolCall("fast"))
        assert result.content == (TextContent("ok"),)

    await run_with(script, body)
    assert seen[0]["method"] == "notifications/cancelled"
    assert seen[0]["params"]["requestId"] == 2  # 1 was initialize


# --- server -> client requests ------------------------------------------------------------


async def server_asks(server: MemoryServerEnd, method: str, out: list[Any]) -> None:
    await handshake(server)
    await server.send({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": {}})
    out.append(await server.receive())
    await anyio.sleep_forever()


async def test_request_without_handler_is_answered_with_an_error_not_accepted() -> None:
    """No implicit answers: an unhandled elicitation gets -32601 naming the missing handler."""
    seen: list[Any] = []

    async def body(client: Client) -> None:
        while not seen:
            await anyio.sleep(0.01)

    await run_with(lambda s: server_asks(s, "elicitation/create", seen), body)
    assert seen[0]["id"] == "s-1"
    assert seen[0]["error"]["code"] == -32601
    assert "no handler registered for elicitation/create" in seen[0]["error"]["message"]


async def test_ping_is_answered() -> None:
    seen: list[Any] = []

    async def body(client: Client) -> None:
        while not seen:
            await anyio.sleep(0.01)

    await run_with(lambda s: server_asks(s, "ping", seen), body)
    assert seen[0] == {"jsonrpc": "2.0", "id": "s-1", "result": {}}


async def test_registered_handler_answers_and_its_rpc_error_is_sent() -> None:
    seen: list[Any] = []

    async def handler(request: JSONRPCRequest) -> Any:
        raise InvalidParams(-32602, "mode not declared")

    async def body(client: Client) -> None:
        while not seen:
            await anyio.sleep(0.01)

    transport, server = memory_transport_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server_asks, server, "elicitation/create", seen)
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
            c.on_request("elicitation/create", handler)
            with anyio.fail_after(5):
                await body(c)
        tg.cancel_scope.cancel()
    assert seen[0]["error"] == {"code": -32602, "message": "mode not declared"}


async def test_a_request_delivered_twice_while_unanswered_is_answered_once() -> None:
    """C-03: one answer per request, even when the server sends it again meanwhile."""
    release = anyio.Event()
    calls: list[Any] = []
    seen: list[Any] = []

    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        message = {"jsonrpc": "2.0", "id": 7, "method": "slow/thing", "params": {}}
        await server.send(message)
        await server.send(message)
        # The reader takes messages in order: once this ping is answered, the copy was read.
        await server.send({"jsonrpc": "2.0", "id": "p0", "method": "ping"})
        assert (await server.receive())["id"] == "p0"
        release.set()
        seen.append(await server.receive())
        await server.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        seen.append(await server.receive())
        await anyio.sleep_forever()

    async def slow(request: JSONRPCRequest) -> Any:
        calls.append(request.id)
        await release.wait()
        return {"done": True}

    transport, server = memory_transport_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(script, server)
        async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as c:
            c.on_request("slow/thing", slow)
            with anyio.fail_after(5):
                while len(seen) < 2:
                    await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert calls == [7]
    assert seen == [
        {"jsonrpc": "2.0", "id": 7, "result": {"done": True}},
        {"jsonrpc": "2.0", "id": "p", "result": {}},
    ]


async def test_an_answer_that_cannot_be_sent_is_a_warning_not_a_crash() -> None:
    """A handler result the wire cannot carry (a lone surrogate, which no UTF-8 holds) raised
    UnicodeEncodeError from the answer's send, inside the client's task group. Any failure to
    send an answer is now a warning; the client goes on."""
    seen: list[Any] = []

    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        await server.send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        await server.send({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
        seen.append(await server.receive())
        request = await server.receive()
        await server.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
        await anyio.sleep_forever()

    async def roots(request: JSONRPCRequest) -> Any:
        return {"roots": [{"uri": "file:///\ud800"}]}

    async def body(client: Client) -> None:
        client.on_request("roots/list", roots)
        with anyio.fail_after(5):
            while not seen:
                await anyio.sleep(0.01)
        assert (await client.call_tool(ToolCall("t"))).content == ()
        warned = [w for w in client.warnings if "UnicodeEncodeError" in str(w)]
        assert len(warned) == 1, list(client.warnings)

    await run_with(script, body)
    assert seen == [{"jsonrpc": "2.0", "id": "p1", "result": {}}]


class CancelsAsTheAnswerArrives(Transport):
    """The in-memory client end, which cancels ``scope`` as it hands the client a response:
    the caller's cancellation and the answer land in one scheduling step, no checkpoint
    between them (the race a sweep of timings hits only by luck)."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.scope: anyio.CancelScope | None = None

    async def __aenter__(self) -> CancelsAsTheAnswerArrives:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        await self.inner.send(message, held=held)

    async def receive(self) -> Incoming:
        item = await self.inner.receive()
        if isinstance(item, JSONRPCResponse) and self.scope is not None:
            self.scope.cancel()  # then, without a checkpoint, the reader sets the answer
        return item


async def test_a_start_cancelled_in_the_step_its_answer_arrives_reports_the_task() -> None:
    """No lost task id, deterministically: the caller's scope is cancelled and the answer
    delivered in the same step. The caller never sees the CreateTaskResult, so the task it
    created must be reported as an OrphanedTask (reason "cancelled")."""
    memory, server = memory_transport_pair()
    transport = CancelsAsTheAnswerArrives(memory)
    created = {
        "taskId": "t-raced",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": 60000,
    }

    async def script(server: MemoryServerEnd) -> None:
        await handshake(server)
        request = await server.receive()
        assert request["method"] == "tools/call"
        await server.send({"jsonrpc": "2.0", "id": request["id"], "result": {"task": created}})
        await anyio.sleep_forever()

    orphans: list[OrphanedTask] = []
    returned: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(script, server)
        with anyio.fail_after(10):
            async with Client(
                transport, generation=Generation.V2025_11_25, client_info=INFO
            ) as client:
                client.on_orphaned_task(orphans.append)
                with anyio.CancelScope() as scope:
                    transport.scope = scope
                    started = task_created(await client.start(ToolCall("x").as_task()))
                    returned.append(started.task.task_id)  # pragma: no cover - cancelled
        tg.cancel_scope.cancel()
    assert scope.cancelled_caught
    assert returned == []
    assert [(o.task_id, o.tool, o.reason) for o in orphans] == [("t-raced", "x", "cancelled")]


# --- the caller's mistakes ------------------------------------------------------------------


async def test_using_a_client_before_entering_it_is_a_usage_error() -> None:
    transport, _ = memory_transport_pair()
    client = Client(transport, generation=Generation.V2025_11_25, client_info=INFO)
    with pytest.raises(UsageError):
        await client.call_tool(ToolCall("t"))
    with pytest.raises(UsageError):
        _ = client.server_capabilities
