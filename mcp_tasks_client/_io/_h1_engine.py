"""The lean engine under HttpTransport (its default): HTTP/1.1 of our own, no httpx client.

Job: one HTTP exchange on a kept-alive connection of our own pools, at a fraction of httpx's
cost per request (benchmarks/RESULTS.md, issue 39). Nothing here knows MCP.

May import: ``_http_engine``, ``_h1``, ``_aio``, ``_url``, ``_exceptions``; h11, anyio,
sniffio. Not httpx: every error is raised as the matching exception of ``_http_engine``'s
tree (httpx's names), so the transport's one mapping names it, a TLS failure as TLSError.

Theory of operation: one request is written with a single ``send``. The common exchange (our
own header set; an answer framed by ``Content-Length``) is written and read by a small bounded
HTTP/1.1 reader of our own (``_h1``, a subset of what h11 accepts, read the same way; what it
remembers of heads written and read is this engine's own ``HeadCache``, never shared); anything
else (a caller's header it does not judge, a chunked or SSE answer, bare-LF heads,
HTTP/1.0...) by h11, from the answer's first byte, so every HTTP error is h11's. Connections
are kept alive in a pool of our own (a freed one goes to the first caller in line), an idle
connection is checked (one non-blocking readability test) before it is reused, and one with
bytes after an answer, or whose server said ``Connection: close``, is closed. In a caller's
inline exchange the write timeout is that exchange's cancel scope's deadline for the length of
the send, when sooner than the request's (one scope per request; the scope comes down as an
argument, :class:`~._http_engine.InlineExchange`). The common inline POST (an idle connection
written directly, the answer's bytes its only wait: ``post(quick=True)``) has no scope at all:
what ends it wakes that wait (``_Connection.interrupt``, the exchange's ``wake``), and a send
that must wait gets a scope of its own for its length. Plain TCP skips its stream's scheduler pass
after a send that did not wait: under trio a request goes straight to the socket (trio's stream
keeps no buffer), under asyncio the connection is a protocol of our own (``_aio``: no loop pass
per send, no ``pause_reading``/``resume_reading`` pair per receive); what must wait is sent by
the stream, under the write timeout. What it does not do: proxies, HTTP/2, auth flows, event
hooks, compression (never asked for anyway), cookies (never kept anyway): that is the httpx
engine's, by the caller's choice.
"""

from __future__ import annotations

import math
import select
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, NoReturn, cast

import anyio
import anyio.abc
import anyio.lowlevel
import sniffio

from .._exceptions import LimitExceeded
from . import _h1
from ._http_engine import (
    ConnectError,
    ConnectTimeout,
    ExchangeInterrupted,
    HttpEngine,
    InlineExchange,
    LocalProtocolError,
    ReadError,
    RemoteProtocolError,
    WriteError,
    WriteTimeout,
)
from ._url import Url

if TYPE_CHECKING:
    import h11

    from . import _aio

__all__ = ["LeanEngine"]

_READ = 65536


class _Response:
    """The part of ``httpx.Response`` the transport reads: status, headers, body chunks."""

    def __init__(
        self,
        engine: LeanEngine,
        connection: _Connection,
        status_code: int,
        headers: dict[str, str],
    ) -> None:
        self._engine = engine
        self._connection = connection
        self.status_code = status_code
        self.headers = headers
        self.complete = False
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection.h11 is None:  # a head read by _h1: Content-Length framing
            while connection.remaining:
                yield await connection.body_chunk()
            self.complete = True
            return
        import h11  # an exchange h11 reads (never the common one): imported on first use

        while True:
            event = await connection.next_event()
            if isinstance(event, h11.Data):
                if event.data:
                    yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self.complete = True
                return
            else:  # pragma: no cover - h11 allows nothing else here
                raise RemoteProtocolError(f"unexpected {type(event).__name__} in a body")

    async def read_body(self, limit: int, what: str) -> bytes:
        """A whole body framed by ``Content-Length`` (a head ``_h1`` read), without the async
        generator of :meth:`aiter_bytes`; refused past ``limit`` before any of it is read
        (``HttpTransport._read_message``'s promise)."""
        connection = self._connection
        if connection.remaining > limit:
            raise LimitExceeded("max_message_bytes", limit, f"the JSON body of {what}")
        parts: list[bytes] = []
        while connection.remaining:
            parts.append(await connection.body_chunk())
        self.complete = True
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def aclose(self) -> None:
        """The exchange's end: a connection whose response was read to its end goes back to
        the pool, any other is closed."""
        if not self.closed:
            self.closed = True
            await self._engine._finish(self._connection, self)


class _PlaceInLine:
    """A caller in line for a connection: woken with one handed to it, or with a slot to
    open one in (``open`` already counts it)."""

    __slots__ = ("connection", "event")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.connection: _Connection | None = None


class _Pool:
    """Connections of one kind (the requests', or the held requests'): at most ``size`` open,
    idle ones kept alive, callers waiting in line, first come first served. A freed connection
    (or slot) is handed to the first in line, never left for whoever asks next: a caller that
    frees one and asks again at once (a Poller's poll task going on with the next poll) joins
    the line behind those already in it (measured before: with 64 polls in flight on 4
    connections, waits reached the length of the whole run). Waking only the first keeps a
    freed connection O(1) whatever the line's length. No connection is idle while someone
    waits."""

    __slots__ = ("idle", "open", "size", "waiting")

    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: list[_Connection] = []
        self.open = 0
        self.waiting: deque[_PlaceInLine] = deque()

    def put(self, connection: _Connection) -> None:
        """A kept-alive connection is free: the first in line's, else idle."""
        if self.waiting:
            waiter = self.waiting.popleft()
            waiter.connection = connection
            waiter.event.set()
        else:
            self.idle.append(connection)

    def drop(self) -> None:
        """A connection closed (or never opened): its slot is the first in line's."""
        if self.waiting:
            self.waiting.popleft().event.set()  # ``open`` still counts the slot: the waiter's
        else:
            self.open -= 1


class _Connection:
    """One kept-alive connection. An exchange is read either by ``_h1`` (``h11`` is None:
    ``buffer`` holds what was received and not read, ``remaining`` the body bytes yet to
    come) or, for anything ``_h1`` declines, by an h11 connection made for that exchange."""

    def __init__(
        self,
        stream: anyio.abc.ByteStream | _aio.AioStream,
        raw: Any,
        pool: _Pool,
        direct: bool = False,
        aio: bool = False,
    ) -> None:
        self.stream = stream
        self.aio = aio  # ``stream`` is our asyncio protocol (``_aio.AioStream``):
        self.own: _aio.AioStream | None = cast("_aio.AioStream", stream) if aio else None
        self.raw = raw  # the socket, for the idle check
        # The idle check's poll object, the socket registered once (a ``poll(0)`` costs less
        # than a ``select`` of a list, which asks the socket for its fd each time); None
        # where there is no poll (Windows): ``select`` then.
        self.poll: Any = None
        if raw is not None and hasattr(select, "poll"):
            try:
                self.poll = select.poll()
                self.poll.register(raw.fileno(), select.POLLIN)
            except (OSError, ValueError):
                self.poll = None
        self.pool = pool
        # Whether a request may be written without the stream's send (``send_now``): plain
        # TCP under trio (straight to the socket: its stream keeps no buffer of its own, so
        # bytes written past it cannot overtake any) or on our asyncio protocol.
        self.direct = direct
        # Plain TCP under trio: ``trio.lowlevel``, to receive straight from the socket.
        self.trio: Any = None
        # Under trio: the last first read found nothing (we read ahead of the answer).
        self.ahead = False
        self.h11: h11.Connection | None = None
        self.buffer = b""
        self.remaining = 0
        self.keep = False

    def stale(self) -> bool:
        """An idle connection with something to read was closed by the server (or holds
        bytes nobody asked for): not reusable."""
        own = self.own
        if own is not None and own.stale():
            return True  # read (or ended) while idle: its protocol reads all along
        if self.raw is None:
            return False
        try:
            poll = self.poll
            if poll is not None:  # readable, or hung up, in error: any event
                # The fd polled is the socket's while it is open: ours closes it only with
                # its transport (``own.stale()`` above); anyio's may close it under us, and
                # its number may be another socket's by now.
                if own is None and self.raw.fileno() < 0:
                    return True
                return bool(poll.poll(0))
            readable, _, _ = select.select([self.raw], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def interrupt(self) -> None:
        """Wake a wait for this connection's bytes with an error (``InlineExchange.wake``):
        our asyncio protocol's with ExchangeInterrupted, trio's ``wait_readable`` with its
        ClosedResourceError (trio's way to end a wait on a socket about to close: the
        exchange closes the connection). Nothing when nobody waits."""
        own = self.own
        if own is not None:
            own.interrupt(
                ExchangeInterrupted("the exchange was ended while its answer was awaited")
            )
        elif self.trio is not None:
            self.trio.notify_closing(self.raw)

    def send_now(self, data: bytes) -> bytes | None:
        """``data`` written without waiting (``direct`` only): None when it all went out, else
        what the stream's ``send`` must still do (our asyncio protocol: b"", wait for its
        buffer to drain). An error is raised as the stream's send would."""
        own = self.own
        if own is not None:
            return own.write_now(data)
        try:
            sent: int = self.raw.send(data)
        except (BlockingIOError, InterruptedError):
            return data
        return data[sent:] if sent < len(data) else None

    async def receive(self) -> bytes:
        """The next bytes off the connection; b"" at its end."""
        if self.trio is not None:
            return await self._receive_direct(self.trio)
        try:
            return await self.stream.receive(_READ)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            return b""
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ReadError(f"{type(exc).__name__}: {exc}") from exc
        except ssl.SSLError as exc:
            raise ReadError(str(exc)) from exc

    async def body_chunk(self) -> bytes:
        """The next bytes of a body framed by ``Content-Length`` (``remaining`` of it left):
        what the buffer holds first, else what comes off the connection, never past its end."""
        data = self.buffer
        if not data:
            data = await self.receive()
            if not data:
                raise RemoteProtocolError(
                    "peer closed connection without sending complete message body: "
                    f"{self.remaining} bytes missing"
                )
        take = self.remaining
        chunk, self.buffer = data[:take], data[take:]
        self.remaining -= len(chunk)
        return chunk

    async def _receive_direct(self, trio_lowlevel: Any) -> bytes:
        """Under trio, from the socket as trio's own ``recv`` does it (a cancellation point,
        one attempt, a schedule point after it if it read something, else a wait until the
        socket is readable), less the stream's and trio's socket wrappers around it. An error
        of the socket (or of trio: a close while waiting) is a ReadError, as from the stream.

        A ``recv`` that finds nothing raises BlockingIOError, which costs four times a
        ``poll(0)`` that says so (1.9 against 0.45 µs here), and one that finds something
        needs no poll. Which comes is a race with the server that holds for a process (on
        loopback: the answer there at the first read 24% of the time in one run, 99% in the
        next: issue 39, RESULTS.md): so the attempt asks the idle check's ``poll`` first only
        while the connection's last attempt found nothing (``ahead``)."""
        raw = self.raw
        try:
            await trio_lowlevel.checkpoint_if_cancelled()
            poll = self.poll
            if not self.ahead or poll is None or poll.poll(0):
                try:
                    data: bytes = raw.recv(_READ)
                except (BlockingIOError, InterruptedError):
                    self.ahead = True
                else:
                    self.ahead = False
                    await trio_lowlevel.cancel_shielded_checkpoint()
                    return data
            while True:
                await trio_lowlevel.wait_readable(raw)
                try:
                    return raw.recv(_READ)  # type: ignore[no-any-return]
                except (BlockingIOError, InterruptedError):
                    pass  # woken with nothing to read after all
        except Exception as exc:
            raise ReadError(f"{type(exc).__name__}: {exc}") from exc

    async def next_event(self) -> Any:
        import h11  # only an exchange h11 reads gets here

        h = self.h11
        assert h is not None
        while True:
            try:
                event = h.next_event()
            except h11.RemoteProtocolError as exc:
                raise RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            data = await self.receive()
            try:
                h.receive_data(data)  # b"": the EOF, read as ConnectionClosed or an error
            except h11.RemoteProtocolError as exc:  # pragma: no cover - raised on next_event
                raise RemoteProtocolError(str(exc)) from exc

    def ended_without_io(self) -> bool:
        """Whether the unread rest of a body is already here and ends it (an empty 202, an
        error body shorter than what was read): then the connection can be kept."""
        h = self.h11
        if h is None:
            if len(self.buffer) < self.remaining:
                return False
            self.buffer = self.buffer[self.remaining :]
            self.remaining = 0
            return True
        import h11

        try:
            while True:
                event = h.next_event()
                if isinstance(event, h11.EndOfMessage):
                    return True
                if not isinstance(event, h11.Data):
                    return False  # NEED_DATA (more is coming), or the connection closed
        except h11.RemoteProtocolError:
            return False

    def reusable(self) -> bool:
        """Whether the exchange ended cleanly with nothing after it: then the next one starts
        on this connection (bytes past the end of a response are nobody's: closed)."""
        h = self.h11
        if h is None:
            return self.keep and not self.remaining and not self.buffer
        import h11

        self.h11 = None
        return h.our_state is h11.DONE and h.their_state is h11.DONE and not h.trailing_data[0]


class LeanEngine(HttpEngine):
    """HTTP/1.1 of our own to one URL (see the module header): a pool of ``max_connections``
    for requests and one of ``max_held`` for requests the server holds open by design."""

    name = "lean"

    def __init__(
        self,
        parsed: Url,
        *,
        ssl_context: ssl.SSLContext | None,
        connect_timeout: float,
        write_timeout: float,
        max_connections: int,
        max_held: int,
        why: str,
    ) -> None:
        super().__init__(why)
        self._tls = parsed.scheme == "https"
        self._host = parsed.host
        self._port = parsed.port or (443 if self._tls else 80)
        default_port = 443 if self._tls else 80
        self._authority = (
            parsed.netloc.decode("ascii")
            if self._port != default_port
            else parsed.host.encode("idna").decode("ascii")
        )
        target = parsed.raw_path.decode("ascii") or "/"
        self._target = target
        # The common exchange is written and read by _h1; a target or host it cannot write
        # sends every request through h11 instead.
        ok = _h1.target_ok(target, self._authority)
        self._fast_target = target.encode("ascii") if ok else None
        self._fast_host = self._authority.encode("ascii") if ok else b""
        self._prefix_for: tuple[object, str, bytes | None] = (None, "", None)
        self._heads = _h1.HeadCache()  # this transport's own: no header line leaves it
        self._ssl_context = ssl_context
        self._connect_timeout = connect_timeout
        self._write_timeout = write_timeout
        self.conns = _Pool(max_connections)
        self.held_conns = _Pool(max_held)
        self.closed = False
        self._opened = 0
        self._read_buffer: memoryview | None = None  # asyncio's reads (_aio), made on first use

    @property
    def connections_opened(self) -> int:
        """TCP connections this engine opened (a reused one is not counted again)."""
        return self._opened

    def write_timeout_text(self) -> str:
        return f"request not sent within {self._write_timeout} s"

    def closing(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True
        for pool in (self.conns, self.held_conns):
            idle, pool.idle = pool.idle, []
            for connection in idle:
                await _close(connection)

    def stream(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        held: bool,
        inline: InlineExchange | None,
    ) -> _Exchange:
        """An :class:`_Exchange` (a context manager of its own, not a generator's: one per
        request) on a connection of the held pool or the request pool."""
        return _Exchange(
            self, method, headers, content, self.held_conns if held else self.conns, inline
        )

    def chunks(self, response: Any) -> AsyncIterator[bytes]:
        return response.aiter_bytes()  # type: ignore[no-any-return]

    async def read_body(self, response: Any, limit: int, what: str) -> bytes:
        if type(response) is _Response and response._connection.h11 is None:
            connection = response._connection
            remaining = connection.remaining
            buffer = connection.buffer
            if remaining <= limit and len(buffer) >= remaining:
                # The common answer: the whole body came with its head (one receive).
                body, connection.buffer = buffer[:remaining], buffer[remaining:]
                connection.remaining = 0
                response.complete = True
                return body
            return await response.read_body(limit, what)
        return await super().read_body(response, limit, what)

    quick_post = True

    async def post(
        self,
        headers: dict[str, str],
        content: bytes,
        *,
        held: bool,
        inline: InlineExchange,
        media: str,
        limit: int,
        quick: bool = False,
    ) -> bytes | _Response | _Connection | None:
        """The common POST in one coroutine: taken from the pool, written, its head read, and
        for a 200 answer of media type ``media`` without Content-Encoding whose whole body (at
        most ``limit`` bytes) came with its head, that body, the connection back in the pool.
        Anything else is the response (its head in), or the connection whose head h11 reads
        (``_h1`` declined it), to read as :meth:`stream`'s and close with :meth:`opened` (the
        same bytes on the wire either way).

        ``quick``: the exchange runs without a cancel scope (``inline.scope`` is None), so this
        waits for nothing but the answer's bytes, a wait ``inline.wake`` (set here) ends; None
        when that cannot be (no idle connection ready, a head ``_h1`` does not write, a
        connection not written directly): nothing was done, the caller runs the exchange in a
        scope. A write that must wait runs in a scope of its own (the write timeout's).

        Deadline: the write timeout as :meth:`stream`'s; the rest is the inline exchange's
        (its scope, or :meth:`InlineExchange.cancel` waking the wait). Cancelled: the exchange
        is abandoned, its connection closed."""
        pool = self.held_conns if held else self.conns
        connection: _Connection | None = None
        if quick:
            if pool.waiting or not pool.idle or not pool.idle[-1].direct:
                return None
            head = self._head("POST", headers, len(content))
            if head is None:
                return None
            connection = pool.idle[-1]
            if connection.stale():
                return None  # the general way closes it
            pool.idle.pop()
            inline.wake = connection.interrupt
        else:
            if not pool.waiting and pool.idle:
                connection = pool.idle[-1]
                if connection.stale():
                    connection = None  # the general way closes it
                else:
                    pool.idle.pop()
            if connection is None:
                connection = await self._acquire(pool)
            head = None
        try:
            if head is None:
                head = self._head("POST", headers, len(content))
                if head is None or not connection.direct:
                    return await self._start(connection, "POST", headers, content, inline)
            # Written as _send writes it, read as _start reads it, less their coroutines (and
            # the look-up of the loop for the cancellation check: the transport's, found once).
            await inline.checkpoint()
            try:
                rest = connection.send_now(head + content if content else head)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise WriteError(f"{type(exc).__name__}: {exc}") from exc
            if rest is not None:
                if quick:
                    await self._send_scoped(connection, rest, inline)
                else:
                    await self._send_rest(connection, rest, inline)
            own = connection.own
            read = connection.buffer
            ended = False
            parse_head = self._heads.parse_head
            while True:
                parsed = parse_head(read) if read else _h1.NEED_DATA
                if parsed is not _h1.NEED_DATA:
                    break
                if quick and inline.cancelled:
                    _interrupted()  # ended (woken, or between two reads): no wait begins
                if own is None:
                    more = await connection.receive()
                else:
                    try:
                        more = await own.receive(_READ)
                    except anyio.EndOfStream:
                        more = b""
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                        raise ReadError(f"{type(exc).__name__}: {exc}") from exc
                if not more:
                    ended = True
                    break
                read += more
            if not isinstance(parsed, _h1.Head):
                self._decline(connection, "POST", headers, content, read, ended)
                if quick:
                    return connection  # h11 reads its head, in the caller's scope (opened)
                return await self._h11_head(connection)
            size = parsed.size
            length = parsed.content_length
            end = size + length
            fields = parsed.headers
            media_type = fields.get("content-type", "")
            if (
                parsed.status_code != 200
                or len(read) < end
                or length > limit
                or "content-encoding" in fields
                or (media_type != media and media_type.split(";")[0].strip().lower() != media)
            ):
                connection.buffer = read[size:]
                connection.remaining = length
                connection.keep = not parsed.close
                return _Response(self, connection, parsed.status_code, fields)
            connection.remaining = 0
            if len(read) == end and not parsed.close and not self.closed:
                connection.buffer = b""
                pool.put(connection)  # the common end: nothing to await
                return read[size:]
        except BaseException:
            await self._finish(connection, None)
            raise
        finally:
            inline.wake = None
        # Read whole, but not to be kept (the server said close, bytes came after the answer,
        # or the transport is closing): closed.
        await self._finish(connection, None)
        return read[size:end]

    async def _send_scoped(
        self, connection: _Connection, rest: bytes, inline: InlineExchange
    ) -> None:
        """:meth:`_send_rest` for an exchange without a cancel scope: in one of its own for the
        length of the send (what ends it cancels it meanwhile); ExchangeInterrupted when it did."""
        scope = inline.scope = anyio.CancelScope()
        if inline.cancelled:
            scope.cancel()
        try:
            with scope:
                await self._send_rest(connection, rest, inline)
        finally:
            inline.scope = None
        if scope.cancelled_caught:
            raise ExchangeInterrupted("the exchange was ended while its request was written")

    def opened(self, response: Any) -> _Exchange:
        """The exchange of what :meth:`post` returned (a response, or a connection whose head
        h11 reads), to read and close as :meth:`stream`'s."""
        exchange = _Exchange(self, "POST", {}, None, self.conns, None)
        if type(response) is _Connection:
            exchange.pending = response
        else:
            exchange.response = response
        return exchange

    async def _connect(self, pool: _Pool) -> _Connection:
        try:
            own: _aio.AioStream | None = None  # plain TCP under asyncio: our own protocol
            with anyio.fail_after(self._connect_timeout):
                stream: anyio.abc.ByteStream | _aio.AioStream
                if self._tls:
                    stream = await anyio.connect_tcp(
                        self._host,
                        self._port,
                        ssl_context=self._ssl_context or ssl.create_default_context(),
                        tls_standard_compatible=False,
                    )
                elif sniffio.current_async_library() == "asyncio":
                    from . import _aio  # asyncio runs: its import is already paid

                    if self._read_buffer is None:
                        self._read_buffer = _aio.read_buffer()  # one for this engine's reads
                    stream = own = await _aio.connect(self._host, self._port, self._read_buffer)
                else:
                    stream = await anyio.connect_tcp(self._host, self._port)
        except TimeoutError as exc:
            raise ConnectTimeout(f"no connection within {self._connect_timeout} s") from exc
        except ssl.SSLError as exc:
            raise ConnectError(str(exc)) from exc
        except OSError as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, ssl.SSLError):
                raise ConnectError(str(cause)) from cause
            raise ConnectError(f"{type(exc).__name__}: {exc}") from exc
        except anyio.BrokenResourceError as exc:
            cause = exc.__cause__ or exc.__context__
            raise ConnectError(str(cause or exc)) from (cause or exc)
        self._opened += 1
        if own is not None:
            return _Connection(own, own.raw_socket(), pool, direct=True, aio=True)
        stream = cast("anyio.abc.ByteStream", stream)
        raw = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        direct = raw is not None and not self._tls and sniffio.current_async_library() == "trio"
        connection = _Connection(stream, raw, pool, direct)
        if direct:
            import trio.lowlevel  # running under trio: installed

            connection.trio = trio.lowlevel
        return connection

    async def _acquire(self, pool: _Pool) -> _Connection:
        connection: _Connection | None = None
        if not pool.waiting:  # nobody in line: an idle connection, or a new one
            while pool.idle:
                connection = pool.idle.pop()
                if not connection.stale():
                    return connection
                pool.open -= 1
                await _close(connection)
            if pool.open < pool.size:
                pool.open += 1
                return await self._open_in_slot(pool)
        waiter = _PlaceInLine()  # in line, behind whoever is there already
        pool.waiting.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if not waiter.event.is_set():
                pool.waiting.remove(waiter)
            elif waiter.connection is not None and not self.closed:
                pool.put(waiter.connection)  # handed one while leaving: the next one's
            elif waiter.connection is not None:
                with anyio.CancelScope(shield=True):
                    await _close(waiter.connection)
                pool.drop()
            else:
                pool.drop()
            raise
        connection = waiter.connection
        if connection is not None:
            if not connection.stale():
                return connection
            await _close(connection)  # closed by the server meanwhile: its slot is ours
        return await self._open_in_slot(pool)

    async def _open_in_slot(self, pool: _Pool) -> _Connection:
        """A new connection in a slot ``pool.open`` already counts for this caller."""
        try:
            return await self._connect(pool)
        except BaseException:
            pool.drop()
            raise

    async def _release(self, connection: _Connection, keep: bool) -> None:
        pool = connection.pool
        if keep and not self.closed:
            pool.put(connection)
        else:
            await _close(connection)
            pool.drop()

    async def _finish(self, connection: _Connection, response: _Response | None) -> None:
        """Back to the pool if the response was read to its end (an error's body read only
        in part, or a broken exchange, closes the connection)."""
        if response is not None and not response.complete:
            response.complete = connection.ended_without_io()
        keep = response is not None and response.complete and connection.reusable()
        if keep and not self.closed:  # back to the pool: nothing to await
            connection.pool.put(connection)
            return
        with anyio.CancelScope(shield=True):
            await self._release(connection, keep)

    def _head(self, method: str, headers: dict[str, str], length: int | None) -> bytes | None:
        """The request's head written by ``_h1`` (None: a header it does not judge, for h11).
        The head up to its Content-Length is kept for the next request with the same headers:
        a POST's are one dict, replaced (never changed) when a header changes
        (HttpTransport._message_headers); the reference kept here keeps its id unique."""
        if self._fast_target is None:
            return None
        kept = self._prefix_for
        if kept[0] is headers and kept[1] == method:
            prefix = kept[2]
        else:
            prefix = self._heads.request_prefix(method, self._fast_target, self._fast_host, headers)
            self._prefix_for = (headers, method, prefix)
        return None if prefix is None else _h1.request_end(prefix, length)

    async def _send(
        self, connection: _Connection, data: bytes, inline: InlineExchange | None
    ) -> None:
        """``data`` written to the connection, within the write timeout; a write's failure as
        WriteError or WriteTimeout."""
        rest: bytes | None = data
        if connection.direct:
            # Straight to the socket (trio) or the transport (our asyncio protocol), less the
            # scheduler pass their streams take after a send that did not wait (the answer's
            # receive is this exchange's schedule point, and its cancellation point is here);
            # only what must wait goes below, with the write timeout.
            await anyio.lowlevel.checkpoint_if_cancelled()
            try:
                rest = connection.send_now(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise WriteError(f"{type(exc).__name__}: {exc}") from exc
        if rest is not None:
            await self._send_rest(connection, rest, inline)

    async def _send_rest(
        self, connection: _Connection, rest: bytes, inline: InlineExchange | None
    ) -> None:
        """What could not be written at once, by the stream's send, within the write timeout
        (WriteTimeout past it; WriteError for a connection that failed). Deadline: the write
        timeout; in an inline exchange it is the deadline of the exchange's own scope for the
        length of the send (when sooner than the request's): one cancel scope per request, not
        two. Cancelled: the send is abandoned (the exchange closes its connection)."""
        try:
            if inline is None:
                with anyio.fail_after(self._write_timeout):
                    await connection.stream.send(rest)
                return
            scope = inline.scope
            assert scope is not None  # an inline send that waits runs in a scope (_send_scoped)
            deadline = anyio.current_time() + self._write_timeout
            if deadline < inline.deadline:
                scope.deadline = deadline
            try:
                await connection.stream.send(rest)
            except BaseException:
                if deadline < inline.deadline and anyio.current_time() >= deadline:
                    inline.write_timed_out = True
                raise
            finally:
                scope.deadline = math.inf  # the request's own is watched by the transport
        except TimeoutError as exc:
            raise WriteTimeout(self.write_timeout_text()) from exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise WriteError(f"{type(exc).__name__}: {exc}") from exc

    async def _start(
        self,
        connection: _Connection,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        inline: InlineExchange | None,
    ) -> _Response:
        if content is not None:
            length: int | None = len(content)
        elif method in ("POST", "PUT"):
            length = 0
        else:
            length = None
        head = self._head(method, headers, length)
        if head is not None:
            data = head + content if content else head
        else:  # a header _h1 does not judge: h11 writes the request and reads its answer
            import h11

            h = connection.h11 = _exchange_h11()
            try:
                data = b"".join(h.send(e) or b"" for e in self._events(method, headers, content))
            except h11.LocalProtocolError as exc:
                raise LocalProtocolError(str(exc)) from exc
        await self._send(connection, data, inline)
        if connection.h11 is None:
            read = connection.buffer
            ended = False
            parse_head = self._heads.parse_head
            while True:
                parsed = parse_head(read) if read else _h1.NEED_DATA
                if parsed is not _h1.NEED_DATA:
                    break
                more = await connection.receive()
                if not more:
                    ended = True  # the end before a whole head: h11 names it
                    break
                read += more
            if isinstance(parsed, _h1.Head):
                connection.buffer = read[parsed.size :]
                connection.remaining = parsed.content_length
                connection.keep = not parsed.close
                return _Response(self, connection, parsed.status_code, parsed.headers)
            self._decline(connection, method, headers, content, read, ended)
        return await self._h11_head(connection)

    def _decline(
        self,
        connection: _Connection,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        read: bytes,
        ended: bool,
    ) -> None:
        """An answer ``_h1`` declined: h11 reads it from its first byte (``read``, and the end
        when ``ended``), as if it had sent the request (it writes the same bytes; they are not
        sent again)."""
        import h11

        h = connection.h11 = _exchange_h11()
        try:
            for event in self._events(method, headers, content):
                h.send(event)
        except h11.LocalProtocolError as exc:  # pragma: no cover - _h1 wrote it already
            raise LocalProtocolError(str(exc)) from exc
        connection.buffer = b""
        h.receive_data(read)
        if ended:
            h.receive_data(b"")

    async def _h11_head(self, connection: _Connection) -> _Response:
        """The response head, read by h11 (the exchange's h11 connection has the request)."""
        import h11  # imported already, by whoever made the exchange's h11 connection

        while True:
            event = await connection.next_event()
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                break
            if isinstance(event, h11.ConnectionClosed):
                raise RemoteProtocolError("server disconnected without sending a response")
            raise RemoteProtocolError(f"unexpected {type(event).__name__}")  # pragma: no cover
        fields_in: dict[str, str] = {}
        for name, value in event.headers:
            key = name.decode("latin-1")
            text = value.decode("latin-1")
            fields_in[key] = f"{fields_in[key]}, {text}" if key in fields_in else text
        return _Response(self, connection, event.status_code, fields_in)

    def _events(self, method: str, headers: dict[str, str], content: bytes | None) -> list[Any]:
        """The request as h11 events (h11 validates every header)."""
        import h11

        fields = [("Host", self._authority), *headers.items()]
        if content is not None:
            fields.append(("Content-Length", str(len(content))))
        elif method in ("POST", "PUT"):
            fields.append(("Content-Length", "0"))
        events: list[Any] = [h11.Request(method=method, target=self._target, headers=fields)]
        if content:
            events.append(h11.Data(data=content))
        events.append(h11.EndOfMessage())
        return events


class _Exchange:
    """One HTTP exchange on a pooled connection, as ``async with``: entered, a connection
    taken from ``pool`` and the request sent (the response's head read); left, the response
    closed (its connection back to the pool when read to its end), unless a drain task owns
    it (its id in the engine's ``handed_off``)."""

    __slots__ = (
        "content",
        "engine",
        "headers",
        "inline",
        "method",
        "pending",
        "pool",
        "response",
    )

    def __init__(
        self,
        engine: LeanEngine,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        pool: _Pool,
        inline: InlineExchange | None,
    ) -> None:
        self.engine = engine
        self.method = method
        self.headers = headers
        self.content = content
        self.pool = pool
        self.inline = inline
        self.response: _Response | None = None
        self.pending: _Connection | None = None  # sent, its head h11's to read (opened)

    async def __aenter__(self) -> _Response:
        if self.response is not None:  # already under way (LeanEngine.opened)
            return self.response
        engine = self.engine
        connection = self.pending
        try:
            if connection is not None:
                self.response = await engine._h11_head(connection)
            else:
                connection = await engine._acquire(self.pool)
                self.response = await engine._start(
                    connection, self.method, self.headers, self.content, self.inline
                )
        except BaseException:
            if connection is None:
                raise
            await engine._finish(connection, None)
            raise
        return self.response

    async def __aexit__(self, *exc_info: object) -> None:
        response = self.response
        assert response is not None
        engine = self.engine
        handed_off = engine.handed_off
        if handed_off and id(response) in handed_off:
            handed_off.discard(id(response))  # its drain task closes it
        elif not response.closed:
            response.closed = True
            connection = response._connection
            if (
                response.complete
                and not engine.closed
                and connection.h11 is None
                and connection.reusable()
            ):
                connection.pool.put(connection)  # the common end: nothing to await
            else:
                await engine._finish(connection, response)


def _interrupted() -> NoReturn:
    raise ExchangeInterrupted("the exchange was ended while its answer was awaited")


def _exchange_h11() -> h11.Connection:
    import h11  # imported on first use: most exchanges never need it

    return h11.Connection(h11.CLIENT, max_incomplete_event_size=_h1.MAX_HEAD)


async def _close(connection: _Connection) -> None:
    try:
        await connection.stream.aclose()
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, ssl.SSLError):
        pass
