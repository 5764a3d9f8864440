"""The push path's direct hand-over (issue 12): a notification the HTTP transport reads while
the client's reader is idle, with nothing delivered before it still unread, is dispatched where
it arrived instead of through the reader task. What must hold: the order of one stream's
messages (a notification never overtakes what came before it, even while the reader is busy
with it), a TransportWrapper still seeing every message through its ``receive``, and a failing
handler breaking the client as it does in the reader.

The server side is httpx.MockTransport (in-process, as in test_http_faults.py): these are
interleavings a real peer cannot be made to produce on demand. No sleeps: the interleavings
come from checkpoints and events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client import Client, Generation, HttpTransport, Limits
from mcp_tasks_client.errors import TransportError
from mcp_tasks_client.models import Implementation, JSONRPCNotification
from mcp_tasks_client.transports import TransportWrapper

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:1/mcp"  # never dialled: MockTransport answers in-process
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "mock", "version": "0"},
}
INFO = Implementation("t", "0")
LONG_ID = "x" * 9  # past Limits(max_request_id_chars=8): refused from the reader itself
LIMITS = Limits(max_request_id_chars=8)

Sent = tuple[str, int]  # ("note", n): notifications/message number n; ("request", n)


def event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"


def wire(item: Sent) -> bytes:
    kind, n = item
    if kind == "note":
        return event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}})
    # A server request whose id is too long: the reader answers it -32600 and waits for that
    # POST before it reads on (so it is busy while the stream goes on).
    return event({"jsonrpc": "2.0", "id": LONG_ID, "method": "ping", "params": {"n": n}})


class Server:
    """initialize, 202 for what the client posts, a GET stream with ``chunks`` (each then
    ``pauses[i]`` checkpoints), held open after. A refusal's POST takes ``refusal_pause``
    checkpoints and is logged as ("refused", k), the k-th refusal."""

    def __init__(
        self,
        chunks: list[bytes],
        pauses: list[int],
        log: list[tuple[str, int]],
        refusal_pause: int = 0,
        before_refusal: Callable[[], Any] | None = None,
    ) -> None:
        self.chunks = chunks
        self.pauses = pauses
        self.log = log
        self.refusal_pause = refusal_pause
        self.before_refusal = before_refusal
        self.refusals = 0
        self.streamed = anyio.Event()  # every chunk was read by the client

    async def body(self) -> AsyncIterator[bytes]:
        for chunk, pause in zip(self.chunks, self.pauses, strict=True):
            yield chunk
            for _ in range(pause):
                await anyio.lowlevel.checkpoint()
        self.streamed.set()
        await anyio.sleep_forever()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=self.body()
            )
        body = json.loads(request.content)
        if body.get("method") == "initialize":
            payload = {"jsonrpc": "2.0", "id": body["id"], "result": INIT}
            return httpx.Response(200, json=payload, headers={"Mcp-Session-Id": "s-1"})
        if "error" in body and body.get("id") is None:  # a refusal, from the reader
            if self.before_refusal is not None:
                await self.before_refusal()
            for _ in range(self.refusal_pause):
                await anyio.lowlevel.checkpoint()
            self.log.append(("refused", self.refusals))
            self.refusals += 1
        return httpx.Response(202)


def transport_for(server: Server) -> HttpTransport:
    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    return HttpTransport(URL, http_client=client)


async def run_stream(
    server: Server, transport: HttpTransport | TransportWrapper, log: list[tuple[str, int]]
) -> None:
    with anyio.fail_after(10):
        async with Client(
            transport, generation=Generation.V2025_11_25, client_info=INFO, limits=LIMITS
        ) as client:

            def noted(notification: JSONRPCNotification) -> None:
                assert notification.params is not None
                log.append(("note", notification.params["n"]))

            client.on_notification("notifications/message", noted)
            await client.open_listen_stream()
            await server.streamed.wait()
            while len(log) < len(server.chunks):
                await anyio.lowlevel.checkpoint()


def expected(sent: list[Sent]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    refused = 0
    for kind, n in sent:
        if kind == "note":
            out.append(("note", n))
        else:
            out.append(("refused", refused))
            refused += 1
    return out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@given(
    kinds=st.lists(st.sampled_from(["note", "request"]), min_size=1, max_size=12),
    data=st.data(),
)
@settings(max_examples=examples(40), deadline=None)
def test_a_stream_s_messages_are_dispatched_in_their_order_direct_or_through_the_reader(
    backend: str, kinds: list[str], data: st.DataObject
) -> None:
    """Notifications (dispatched directly when the reader is idle) and server requests the
    reader answers itself (it is busy until that answer is posted), one event per chunk,
    with checkpoints between chunks and in the answer's POST: the handlers and the answers
    happen exactly in the stream's order."""
    sent: list[Sent] = [(kind, n) for n, kind in enumerate(kinds)]
    pauses = data.draw(st.lists(st.integers(0, 3), min_size=len(sent), max_size=len(sent)))
    refusal_pause = data.draw(st.integers(0, 6))
    log: list[tuple[str, int]] = []
    server = Server([wire(item) for item in sent], pauses, log, refusal_pause)

    async def run() -> None:
        await run_stream(server, transport_for(server), log)

    anyio.run(run, backend=backend)
    assert log == expected(sent)


async def test_a_notification_waits_while_the_reader_is_busy_with_what_came_before() -> None:
    """The reader took a request and is answering it (its POST held until the notification
    after it was read off the stream): nothing is queued, yet the notification is dispatched
    after that answer, not beside it."""
    log: list[tuple[str, int]] = []
    answering = anyio.Event()
    read_past_it = anyio.Event()

    async def hold() -> None:
        answering.set()
        await read_past_it.wait()

    server = Server([wire(("request", 0)), wire(("note", 1))], [0, 0], log, before_refusal=hold)

    async def body() -> AsyncIterator[bytes]:
        yield server.chunks[0]
        await answering.wait()  # the reader took the request: it is busy
        yield server.chunks[1]
        read_past_it.set()  # the client asked for more: it read the notification
        server.streamed.set()
        await anyio.sleep_forever()

    server.body = body  # type: ignore[method-assign]
    await run_stream(server, transport_for(server), log)
    assert log == [("refused", 0), ("note", 1)]


async def test_a_status_notification_is_dispatched_in_the_stream_s_task_when_the_reader_idles() -> (
    None
):
    """The direct path is taken (no hop through the reader task) when nothing is queued."""
    log: list[tuple[str, int]] = []
    tasks: list[str] = []
    server = Server([wire(("note", 0)), wire(("note", 1))], [1, 1], log)
    with anyio.fail_after(10):
        async with Client(
            transport_for(server), generation=Generation.V2025_11_25, client_info=INFO
        ) as client:

            def noted(notification: JSONRPCNotification) -> None:
                assert notification.params is not None
                log.append(("note", notification.params["n"]))
                tasks.append(anyio.get_current_task().name or "")

            client.on_notification("notifications/message", noted)
            await client.open_listen_stream()
            await server.streamed.wait()
            while len(log) < 2:
                await anyio.lowlevel.checkpoint()
    assert log == [("note", 0), ("note", 1)]
    assert all("_run_listen_stream" in name for name in tasks), tasks


class Recording(TransportWrapper):
    def __init__(self, inner: HttpTransport) -> None:
        super().__init__(inner)
        self.received: list[object] = []

    async def receive(self) -> Any:
        item = await self.inner.receive()
        self.received.append(item)
        return item


async def test_a_wrapper_sees_every_notification_through_its_receive() -> None:
    log: list[tuple[str, int]] = []
    sent: list[Sent] = [("note", 0), ("note", 1), ("note", 2)]
    server = Server([wire(item) for item in sent], [1, 0, 2], log)
    wrapper = Recording(transport_for(server))
    await run_stream(server, wrapper, log)
    assert log == expected(sent)
    notes = [item for item in wrapper.received if isinstance(item, JSONRPCNotification)]
    assert [n.params for n in notes] == [{"n": 0}, {"n": 1}, {"n": 2}]


async def test_a_handler_that_raises_on_the_direct_path_breaks_the_client_as_in_the_reader() -> (
    None
):
    log: list[tuple[str, int]] = []
    server = Server([wire(("note", 0)), wire(("note", 1))], [1, 1], log)
    seen: list[int] = []
    with anyio.fail_after(10):
        async with Client(
            transport_for(server), generation=Generation.V2025_11_25, client_info=INFO
        ) as client:

            def broken(notification: JSONRPCNotification) -> None:
                assert notification.params is not None
                seen.append(notification.params["n"])
                raise RuntimeError("a handler bug")

            client.on_notification("notifications/message", broken)
            await client.open_listen_stream()
            await server.streamed.wait()
            with pytest.raises(TransportError, match="reader failed: RuntimeError"):
                await client.list_tools_page()
    assert seen == [0]  # the reader reads no more after the failure, as before


class Observing(HttpTransport):
    """A subclass that looks at what it receives (overriding ``receive``)."""

    received: list[object]

    async def receive(self) -> Any:
        item = await super().receive()
        self.received.append(item)
        return item


async def test_a_subclass_that_overrides_receive_sees_every_notification_there() -> None:
    log: list[tuple[str, int]] = []
    sent: list[Sent] = [("note", 0), ("note", 1)]
    server = Server([wire(item) for item in sent], [1, 1], log)
    transport = Observing(URL, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))
    transport.received = []
    await run_stream(server, transport, log)
    assert log == expected(sent)
    notes = [item for item in transport.received if isinstance(item, JSONRPCNotification)]
    assert [n.params for n in notes] == [{"n": 0}, {"n": 1}]


class BlockedStreamServer:
    """Request 1's answer: an SSE stream of notifications 0..5, held open after (more than the
    transport's buffer of 4: its stream task waits to deliver notification 4). Request 2's: one
    notification, 100, then its answer."""

    async def many(self) -> AsyncIterator[bytes]:
        for n in range(6):
            yield event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}})
        await anyio.sleep_forever()

    async def one(self) -> AsyncIterator[bytes]:
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": 100}}
        yield event(note)
        yield event({"jsonrpc": "2.0", "id": 2, "result": {}})

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        body = json.loads(request.content)
        sse = {"content-type": "text/event-stream"}
        if body.get("id") == 1:
            return httpx.Response(200, headers=sse, content=self.many())
        if body.get("id") == 2:
            return httpx.Response(200, headers=sse, content=self.one())
        return httpx.Response(202)


async def test_a_stream_cancelled_while_its_waiting_notification_is_taken_keeps_the_order() -> None:
    """The reader takes a message (which moves the next one of a stream waiting on the full
    buffer into it) just after that stream's request was abandoned: the stream task then ends
    by its cancellation though its notification was delivered. That notification is still
    unread, so a later notification must not be handed over directly ahead of it. (asyncio
    runs the reader first every time; trio in about half the rounds.)"""
    for _ in range(8):
        with anyio.fail_after(10):
            log = await _cancelled_while_taken()
        seen = [n for _, n in log]
        if 4 in seen:  # delivered by the stream: read before what came after it
            assert seen.index(4) < seen.index(100), log


async def _cancelled_while_taken() -> list[tuple[str, int]]:
    from mcp_tasks_client.models import JSONRPCRequest

    mock = httpx.MockTransport(BlockedStreamServer())
    transport = HttpTransport(URL, http_client=httpx.AsyncClient(transport=mock))
    log: list[tuple[str, int]] = []
    idle = False

    def take(notification: JSONRPCNotification) -> bool:
        if not idle:
            return False
        assert notification.params is not None
        log.append(("take", notification.params["n"]))
        return True

    def note(item: object) -> int:
        assert isinstance(item, JSONRPCNotification)
        assert item.params is not None
        n: int = item.params["n"]
        return n

    async with transport:
        transport.take_notifications(take)
        await transport.send(JSONRPCRequest(1, "x/stream"))
        while transport._incoming_send.statistics().tasks_waiting_send < 1:
            await anyio.lowlevel.checkpoint()  # 0..3 buffered, 4 waiting to be
        go = anyio.Event()

        async def read_one() -> None:
            await go.wait()
            log.append(("receive", note(await transport.receive())))

        async def give_up() -> None:
            await go.wait()
            await transport.abandon(1)

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_one)  # woken first: its receive() checkpoints, give_up cancels
            tg.start_soon(give_up)
            while go.statistics().tasks_waiting < 2:
                await anyio.lowlevel.checkpoint()
            go.set()
        idle = True
        while len(log) < 4:  # 1, 2, 3 (and 4 if the stream task delivered it at all)
            log.append(("receive", note(await transport.receive())))
        await transport.send(JSONRPCRequest(2, "x/later"))
        while not any(n == 100 for _, n in log):
            item = await transport.receive()
            if isinstance(item, JSONRPCNotification):
                log.append(("receive", note(item)))
    return log
