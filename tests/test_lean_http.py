"""LeanHttpTransport's own promises: its pool (connections kept alive, reused, bounded), an idle
connection the server closed never failing the next request, and what it refuses.

Everything above one HTTP exchange is HttpTransport's code: the peer suites (the ``transport``
and ``gen2`` fixtures) and tests/test_hostile_http.py run on both transports. The server here
is a keep-alive HTTP/1.1 server written with h11 on 127.0.0.1 (the hostile server closes every
connection, so it cannot show reuse).
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import h11
import pytest
import sniffio

from mcp_tasks_client import Client, Generation, HttpTransport, LeanHttpTransport, Timeouts
from mcp_tasks_client._io._h1_engine import LeanEngine
from mcp_tasks_client.errors import RequestTimeout, TransportError, UsageError
from mcp_tasks_client.models import Implementation


def lean_of(transport: HttpTransport) -> LeanEngine:
    """The transport's lean engine (its pools)."""
    engine = transport._engine
    assert isinstance(engine, LeanEngine)
    return engine


pytestmark = pytest.mark.anyio

INFO = Implementation("lean-tests", "0")
NOW = "2026-01-01T00:00:00Z"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "keep-alive", "version": "0"},
}


class KeepAliveServer:
    """Answers initialize, notifications (202) and ``tasks/get`` (a working task) on kept-alive
    connections. ``close_after_answer``: close each connection after its first answer
    (without saying so in a header: an idle connection the server drops). Counts what it saw."""

    def __init__(
        self,
        *,
        close_after_answer: bool = False,
        hold: anyio.Event | None = None,
        shape: Callable[[int, bytes], bytes] | None = None,
        answers: int | None = None,
        eof_when_done: bool = False,
        pad: int = 0,
    ):
        self.close_after_answer = close_after_answer
        self.answers = answers  # after this many answers the server reads nothing more
        self.eof_when_done = eof_when_done  # then: one read, and a FIN (still reading nothing)
        self.shape = shape  # the answer's bytes from its status and JSON body (default: h11's)
        self.hold = hold  # tasks/get answers wait for it (to pile requests up)
        self.pad = pad  # a tasks/get answer's statusMessage: this many bytes
        self.accepted = 0
        self.open_now = 0
        self.most_open = 0
        self.closed_one = anyio.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def serve(self, stream: anyio.abc.ByteStream) -> None:
        self.accepted += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        conn = h11.Connection(h11.SERVER)
        try:
            async with stream:
                while True:
                    if self.answers is not None:
                        if self.answers == 0:
                            if self.eof_when_done:
                                await stream.receive()
                                await stream.send_eof()
                            await anyio.sleep_forever()  # the socket's buffers fill up
                        self.answers -= 1
                    request, body = await self._read(conn, stream)
                    if request is None:
                        return
                    await self._answer(conn, stream, request, body)
                    if self.close_after_answer:
                        return
                    if conn.our_state is h11.MUST_CLOSE:
                        return
                    conn.start_next_cycle()
        except (anyio.BrokenResourceError, anyio.EndOfStream, h11.ProtocolError):
            return
        finally:
            self.open_now -= 1
            if self.close_after_answer:
                self.closed_one.set()

    async def _read(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream
    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    conn.receive_data(await stream.receive())
                except anyio.EndOfStream:
                    conn.receive_data(b"")
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return request, body
            else:  # ConnectionClosed
                return None, b""

    async def _answer(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, request: h11.Request, body: bytes
    ) -> None:
        status, payload = 200, b""
        result: Any = None
        if request.method == b"POST":
            message = json.loads(body)
            if "id" not in message:
                status = 202
            else:
                method = message["method"]
                if method == "initialize":
                    result = INIT
                else:
                    if self.hold is not None:
                        await self.hold.wait()
                    task_id = message["params"]["taskId"]
                    result = {
                        "taskId": task_id,
                        "status": "working",
                        "createdAt": NOW,
                        "lastUpdatedAt": NOW,
                        "ttl": 60000,
                    }
                    if self.pad:
                        result["statusMessage"] = "x" * self.pad
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                payload = json.dumps(answer).encode()
        headers = [("content-length", str(len(payload)))]
        if payload:
            headers.append(("content-type", "application/json"))
            headers.append(("mcp-session-id", "lean-1"))
        data = conn.send(h11.Response(status_code=status, headers=headers)) or b""
        if payload:
            data += conn.send(h11.Data(data=payload)) or b""
        data += conn.send(h11.EndOfMessage()) or b""
        if self.shape is not None:
            data = self.shape(status, payload)
            await stream.send(data[:9])  # the head in two pieces, when the network keeps them
            await anyio.lowlevel.checkpoint()
            data = data[9:]
        await stream.send(data)


@asynccontextmanager
async def running(server: KeepAliveServer) -> AsyncIterator[KeepAliveServer]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server.port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, server.serve)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


def client_on(transport: LeanHttpTransport) -> Client:
    return Client(transport, generation=Generation.V2025_11_25, client_info=INFO)


async def test_sequential_requests_reuse_one_connection() -> None:
    async with running(KeepAliveServer()) as server:
        transport = LeanHttpTransport(server.url)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                for _ in range(30):
                    task = await client.get_task("t-1")
                    assert task.task_id == "t-1"
        assert transport.connections_opened == 1
        assert server.accepted == 1  # initialize, notification, 30 polls and DELETE on one


async def test_two_transports_share_no_header_cache() -> None:
    """Issue 33 (no process-wide state on the request path): each transport's written header
    lines and read heads are its own engine's; one client's credential header line is never
    in another's cache, and both read the same server's answers each through its own."""
    async with running(KeepAliveServer()) as server:
        one = LeanHttpTransport(server.url, headers={"Authorization": "Bearer token-of-one"})
        other = LeanHttpTransport(server.url, headers={"Authorization": "Bearer token-of-other"})
        with anyio.fail_after(20):
            async with client_on(one) as first, client_on(other) as second:
                for _ in range(3):
                    assert (await first.get_task("t-1")).task_id == "t-1"
                    assert (await second.get_task("t-1")).task_id == "t-1"
        mine, theirs = lean_of(one)._heads, lean_of(other)._heads
        assert mine is not theirs
        assert b"Authorization: Bearer token-of-one\r\n" in mine.lines.values()
        assert b"Authorization: Bearer token-of-other\r\n" in theirs.lines.values()
        for cache, foreign in ((mine, b"token-of-other"), (theirs, b"token-of-one")):
            assert not any(foreign in line for line in cache.lines.values())
        assert mine.heads
        assert theirs.heads


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    """The server drops each connection after one answer, saying nothing: the next request
    must go out on a new connection instead of failing on the dead one."""
    async with running(KeepAliveServer(close_after_answer=True)) as server:
        transport = LeanHttpTransport(server.url, delete_session_on_close=False)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                for _ in range(5):
                    await server.closed_one.wait()
                    server.closed_one = anyio.Event()
                    # Wait (no timing: a condition) until the close reached the client's idle
                    # connection, as it would have by the time a real poller polls again.
                    while not all(c.stale() for c in lean_of(transport).conns.idle):
                        await anyio.lowlevel.checkpoint()
                    task = await client.get_task("t-1")
                    assert task.task_id == "t-1"
        assert transport.connections_opened == server.accepted


async def test_connections_are_bounded_by_max_connections() -> None:
    hold = anyio.Event()
    async with running(KeepAliveServer(hold=hold)) as server:
        transport = LeanHttpTransport(server.url, max_connections=3)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                got: list[str] = []

                async def poll(n: int) -> None:
                    got.append((await client.get_task(f"t-{n}")).task_id)

                async with anyio.create_task_group() as tg:
                    for n in range(12):
                        tg.start_soon(poll, n)
                    while server.open_now < 3:
                        await anyio.sleep(0.01)
                    await anyio.sleep(0.05)
                    hold.set()
                assert sorted(got) == sorted(f"t-{n}" for n in range(12))
        assert server.most_open <= 3
        assert lean_of(transport).connections_opened <= 3


async def test_what_it_refuses() -> None:
    import httpx

    with pytest.raises(UsageError):
        LeanHttpTransport("http://127.0.0.1:1/mcp", http_client=httpx.AsyncClient())
    with pytest.raises(UsageError):
        LeanHttpTransport("http://127.0.0.1:1/mcp", max_connections=0)
    with pytest.raises(UsageError):
        LeanHttpTransport("ftp://127.0.0.1:1/mcp")
    assert isinstance(LeanHttpTransport("https://127.0.0.1:1/mcp"), HttpTransport)


def _chunked(status: int, payload: bytes) -> bytes:
    if not payload:
        return b"HTTP/1.1 %d Accepted\r\nContent-Length: 0\r\n\r\n" % status
    return (
        b"HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        b"Mcp-Session-Id: lean-1\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (status, len(payload), payload)
    )


def _bare_lf(status: int, payload: bytes) -> bytes:
    return (
        b"HTTP/1.1 %d OK\nContent-Type: application/json\nMcp-Session-Id: lean-1\n"
        b"Content-Length: %d\n\n%s" % (status, len(payload), payload)
    )


def _plain(status: int, payload: bytes, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 %d OK\r\ncontent-type: application/json\r\nmcp-session-id: lean-1\r\n"
        b"%scontent-length: %d\r\n\r\n%s" % (status, extra, len(payload), payload)
    )


def _then_garbage(status: int, payload: bytes) -> bytes:
    return _plain(status, payload) + b"HTTP/1.1 200 OK\r\n"


def _says_close(status: int, payload: bytes) -> bytes:
    return _plain(status, payload, b"Connection: keep-alive, close\r\n")


def _with_charset(status: int, payload: bytes) -> bytes:
    return (
        b"HTTP/1.1 %d OK\r\nContent-Type: Application/JSON; charset=utf-8\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (status, len(payload), payload)
    )


def _created(status: int, payload: bytes) -> bytes:
    return _plain(201 if status == 200 else status, payload)


@pytest.mark.parametrize(
    ("shape", "kept"),
    [
        (_plain, True),
        (_chunked, True),
        (_bare_lf, True),
        (_then_garbage, False),
        (_says_close, False),
        (_with_charset, True),
        (_created, True),
    ],
    ids=[
        "content-length",
        "chunked",
        "bare-lf",
        "bytes-after-the-answer",
        "connection-close",
        "media-type-parameters",
        "201",
    ],
)
async def test_every_answer_shape_is_read_and_only_a_clean_end_keeps_the_connection(
    shape: Callable[[int, bytes], bytes], kept: bool
) -> None:
    """The common answer (Content-Length) is read by the transport's own parser, any other
    by h11; a connection is reused only after an answer that ended cleanly with nothing after
    it (bytes past the answer are nobody's: the connection is closed, never read as the next
    answer), and never after the server said Connection: close."""
    async with running(KeepAliveServer(shape=shape)) as server:
        transport = LeanHttpTransport(server.url)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                for n in range(5):
                    task = await client.get_task(f"t-{n}")
                    assert task.task_id == f"t-{n}"
        assert transport.connections_opened == server.accepted
        if kept:
            assert server.accepted == 1
        else:  # initialize, the notification, 5 polls and DELETE: one connection each
            assert server.accepted == 8


async def test_an_answer_longer_than_one_read_is_read_whole_and_keeps_the_connection() -> None:
    """The one-coroutine POST takes a body that came with its head (one receive, at most
    64 KiB); a longer one is read by the general way from the head on: the same answer, the
    connection kept."""
    async with running(KeepAliveServer(pad=200_000)) as server:
        transport = LeanHttpTransport(server.url)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                for n in range(3):
                    task = await client.get_task(f"t-{n}")
                    assert task.task_id == f"t-{n}"
                    assert task.status_message == "x" * 200_000
        assert transport.connections_opened == 1
        assert server.accepted == 1


async def test_a_request_the_server_never_reads_ends_at_the_write_timeout() -> None:
    """The server stops reading after the handshake: a request too big for the socket buffers
    ends with a TransportError naming the write timeout, in a caller's own exchange (a
    request) and on the awaited path (a notification), each on the connection the handshake
    left idle (a fresh one the test server would buffer without bound)."""
    blob = "x" * (64 * 1024 * 1024)
    for kind in ("request", "notification"):
        async with running(KeepAliveServer(answers=2)) as server:
            transport = LeanHttpTransport(
                server.url, write_timeout=0.5, delete_session_on_close=False
            )
            with anyio.fail_after(30):
                async with client_on(transport) as client:
                    with pytest.raises(TransportError, match=r"not sent within 0\.5 s"):
                        if kind == "request":
                            await client.request("x/big", {"blob": blob}, timeout=20)
                        else:
                            await client.notify("notifications/big", {"blob": blob}, timeout=20)
            assert transport.connections_opened == 1
            assert lean_of(transport).conns.open == 0  # the connection it was written on is closed


async def test_a_request_deadline_sooner_than_the_write_timeout_is_a_request_timeout() -> None:
    """One cancel scope carries both bounds of a request's send (issue 25): the request's own
    deadline when it is the sooner (RequestTimeout, C-13, and the connection closed: a
    half-written request is never reused), the write timeout when that one is (the test
    above). Then the same for a request with no send to wait for: a server that reads the
    request and never answers."""
    blob = "x" * (64 * 1024 * 1024)
    async with running(KeepAliveServer(answers=2)) as server:
        transport = LeanHttpTransport(server.url, write_timeout=60, delete_session_on_close=False)
        with anyio.fail_after(30):
            async with client_on(transport) as client:
                with pytest.raises(RequestTimeout):
                    await client.request("x/big", {"blob": blob}, timeout=0.5)
        assert lean_of(transport).conns.open == 0
    async with running(KeepAliveServer(hold=anyio.Event())) as server:
        transport = LeanHttpTransport(server.url, write_timeout=60, delete_session_on_close=False)
        with anyio.fail_after(30):
            async with client_on(transport) as client:
                with pytest.raises(RequestTimeout):
                    await client.get_task("t-1", timeout=0.3)
                assert transport._scopes == {}  # the exchange's scope was let go


async def test_a_server_that_ends_its_side_while_a_send_waits_fails_the_send_at_once() -> None:
    """asyncio: a request too big for the socket buffers waits for them to drain; the server
    reads a little, then sends its FIN. The send fails then, as a broken connection (a
    TransportError that is not the write timeout), instead of waiting out the write timeout.
    (Under trio a send waits for the socket to take bytes: the write timeout ends it.)"""
    if sniffio.current_async_library() != "asyncio":
        pytest.skip("asyncio's own protocol")
    blob = "x" * (64 * 1024 * 1024)
    async with running(KeepAliveServer(answers=2, eof_when_done=True)) as server:
        transport = LeanHttpTransport(server.url, write_timeout=60, delete_session_on_close=False)
        with anyio.fail_after(50):
            async with client_on(transport) as client:
                with pytest.raises(TransportError) as caught:
                    await client.request("x/big", {"blob": blob}, timeout=55)
        assert "not sent within" not in str(caught.value)
        assert transport.connections_opened == 1


async def test_a_caller_that_stops_waiting_for_a_connection_leaves_the_line() -> None:
    """One connection, three callers: the first holds it, the second gives up waiting, the
    third still gets the connection when it frees (a freed slot wakes one waiter in line).
    No cancel notification for the one that gave up (it would be one more caller in line)."""
    hold = anyio.Event()
    async with running(KeepAliveServer(hold=hold)) as server:
        transport = LeanHttpTransport(server.url, max_connections=1)
        with anyio.fail_after(20):
            quiet = Timeouts(notify_cancelled=False)
            client = Client(
                transport, generation=Generation.V2025_11_25, client_info=INFO, timeouts=quiet
            )
            async with client:
                got: list[str] = []
                gave_up = anyio.CancelScope()

                async def poll(n: int, scope: anyio.CancelScope | None = None) -> None:
                    with scope or anyio.CancelScope():
                        got.append((await client.get_task(f"t-{n}")).task_id)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(poll, 1)
                    while lean_of(
                        transport
                    ).conns.idle:  # until poll 1 took the handshake's connection
                        await anyio.lowlevel.checkpoint()
                    tg.start_soon(poll, 2, gave_up)
                    tg.start_soon(poll, 3)
                    while len(lean_of(transport).conns.waiting) < 2:
                        await anyio.lowlevel.checkpoint()
                    gave_up.cancel()
                    while len(lean_of(transport).conns.waiting) > 1:
                        await anyio.lowlevel.checkpoint()
                    hold.set()
                assert sorted(got) == ["t-1", "t-3"]
        assert transport.connections_opened == 1
        assert server.most_open == 1


async def test_a_request_bigger_than_the_socket_buffers_goes_out_whole() -> None:
    """A request the socket cannot take at once (trio: the rest after a direct send; asyncio:
    our protocol's wait for its buffer to drain) is sent whole, and its answer read, on the
    connection the handshake left idle."""
    pad = "y" * (8 * 1024 * 1024)
    async with running(KeepAliveServer()) as server:
        transport = LeanHttpTransport(server.url, delete_session_on_close=False)
        with anyio.fail_after(30):
            async with client_on(transport) as client:
                raw = await client.request("tasks/get", {"taskId": "t-big", "pad": pad})
                assert raw["taskId"] == "t-big"
                task = await client.get_task("t-after")
                assert task.task_id == "t-after"
        assert transport.connections_opened == server.accepted == 1


async def test_an_asyncio_connection_reads_at_most_a_bounded_backlog() -> None:
    """The asyncio protocol keeps reading between requests; past 256 KiB unread it pauses
    (bounded memory whatever a server sends), and everything sent is still read, in order,
    once the reader takes it. (Under trio nothing is read unasked: nothing to bound.)"""
    from mcp_tasks_client._io import _aio

    if sniffio.current_async_library() != "asyncio":
        pytest.skip("asyncio's own protocol")
    sent = bytes(range(256)) * (8 * 1024)  # 2 MiB
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def serve(stream: anyio.abc.ByteStream) -> None:
        async with stream:
            await stream.send(sent)

    with anyio.fail_after(20):
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            stream = await _aio.connect("127.0.0.1", port)
            while not stream._reading_paused:  # a condition, not a time
                await anyio.lowlevel.checkpoint()
            assert stream._buffered <= _aio._HIGH + 256 * 1024  # one read past the mark
            got = bytearray()
            while True:
                try:
                    got += await stream.receive(65536)
                except anyio.EndOfStream:
                    break
            assert bytes(got) == sent
            await stream.aclose()
            with pytest.raises(anyio.ClosedResourceError):
                await stream.receive()
            tg.cancel_scope.cancel()


async def test_asyncio_connections_sharing_one_read_buffer_each_read_their_own_bytes() -> None:
    """The asyncio protocol reads into one buffer its engine shares between connections (no
    allocation of the transport's 256 KiB read size per read): three connections whose
    servers send at once, each 1 MiB of its own pattern, each read back whole and in order,
    the reads of the three interleaved in the loop; a small first read (one short answer)
    too."""
    from mcp_tasks_client._io import _aio

    if sniffio.current_async_library() != "asyncio":
        pytest.skip("asyncio's own protocol")
    patterns = [bytes([n]) * 7 + bytes(range(256)) * (4 * 1024) for n in (1, 2, 3)]
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    which = iter(patterns)

    async def serve(stream: anyio.abc.ByteStream) -> None:
        pattern = next(which)
        async with stream:
            await stream.send(pattern[:7])  # the short read first
            await stream.receive()  # the client says go: the rest comes at once
            await stream.send(pattern[7:])

    shared = _aio.read_buffer()
    with anyio.fail_after(20):
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, serve)
            streams = []
            for _ in patterns:
                stream = await _aio.connect("127.0.0.1", port, shared)
                streams.append((stream, await stream.receive(65536)))
            assert all(stream._buffer is shared for stream, _ in streams)
            got: list[bytes] = []

            async def read_all(stream: _aio.AioStream, first: bytes) -> None:
                data = bytearray(first)
                await stream.send(b"go")
                while True:
                    try:
                        data += await stream.receive(65536)
                    except anyio.EndOfStream:
                        break
                got.append(bytes(data))
                await stream.aclose()

            async with anyio.create_task_group() as readers:
                for stream, first in streams:
                    readers.start_soon(read_all, stream, first)
            assert sorted(got) == sorted(patterns)
            tg.cancel_scope.cancel()


async def test_a_held_request_given_up_frees_its_held_connection() -> None:
    """A held request (``tasks/result``) whose caller gives up while it waits on the server
    closes its connection and frees its slot in the held pool: the next held request gets
    it, with the pool at one connection."""
    hold = anyio.Event()
    async with running(KeepAliveServer(hold=hold)) as server:
        transport = LeanHttpTransport(server.url, max_held_connections=1)
        with anyio.fail_after(20):
            quiet = Timeouts(notify_cancelled=False)
            client = Client(
                transport, generation=Generation.V2025_11_25, client_info=INFO, timeouts=quiet
            )
            async with client:
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tg:
                        ask = functools.partial(client.request, "tasks/result", held=True)
                        tg.start_soon(ask, {"taskId": "a"})
                        while lean_of(transport).held_conns.open < 1:
                            await anyio.lowlevel.checkpoint()
                        scope.cancel()
                assert lean_of(transport).held_conns.open == 0
                assert not lean_of(transport).held_conns.idle
                hold.set()
                raw = await client.request("tasks/result", {"taskId": "b"}, held=True)
                assert raw["taskId"] == "b"
                assert lean_of(transport).held_conns.open == 1
                assert (
                    lean_of(transport).conns.open <= 1
                )  # the handshake's: held requests are apart


async def test_a_caller_that_frees_a_connection_and_asks_again_queues_behind_the_line() -> None:
    """One connection: a caller polling back to back (as a Poller's poll task goes on with
    its next poll) and a second caller that asks once, while the first is in its exchange.
    The freed connection is handed to the one in line: the second caller's request is done
    after at most two more of the first's, not after all of them (it was: the first took the
    connection back before the woken one ran)."""
    async with running(KeepAliveServer()) as server:
        transport = LeanHttpTransport(server.url, max_connections=1)
        order: list[str] = []
        with anyio.fail_after(30):
            async with client_on(transport) as client:

                async def back_to_back() -> None:
                    for n in range(40):
                        await client.get_task(f"t-{n}")
                        order.append("first")

                async def once() -> None:
                    await client.get_task("t-once")
                    order.append("second")

                async with anyio.create_task_group() as tg:
                    tg.start_soon(back_to_back)
                    while not order:  # the first is polling
                        await anyio.lowlevel.checkpoint()
                    tg.start_soon(once)
        assert order.count("first") == 40
        assert order.index("second") <= order.index("first") + 3
        assert transport.connections_opened == 1


async def test_under_trio_reads_ahead_of_the_answer_raise_nothing_after_the_first() -> None:
    """Issue 39: under trio the answer is read straight from the socket. A first read that
    finds nothing (``recv`` raising BlockingIOError: an exception made, raised and caught,
    four times a ``poll(0)``) makes the connection ask ``poll`` first from then on, until a
    read finds the answer at once. The server here holds each answer until the client waits,
    three polls in a row, so every first read would find nothing: at most the first raises,
    and each answer is still read whole once it comes."""
    if sniffio.current_async_library() != "trio":
        pytest.skip("trio's direct reads (asyncio's protocol reads only when the loop says)")
    import sys
    import types

    from mcp_tasks_client._io._h1_engine import _Connection

    read_code = _Connection._receive_direct.__code__
    calls: list[str] = []
    raised: list[type[BaseException]] = []

    def local(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "exception":
            raised.append(arg[0])
        return local

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code is read_code:
            calls.append(event)
            return local
        return None

    async with running(KeepAliveServer()) as server:
        transport = LeanHttpTransport(server.url)
        with anyio.fail_after(20):
            async with client_on(transport) as client:
                got: list[str] = []

                async def poll_once(n: int) -> None:
                    got.append((await client.get_task(f"t-{n}")).task_id)

                sys.settrace(tracer)
                try:
                    for n in range(3):
                        hold = server.hold = anyio.Event()
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(poll_once, n)
                            await anyio.wait_all_tasks_blocked()  # it waits; the server holds
                            hold.set()
                finally:
                    sys.settrace(None)
    assert got == ["t-0", "t-1", "t-2"]
    assert calls  # the reads ran under the tracer
    assert raised.count(BlockingIOError) <= 1, raised
