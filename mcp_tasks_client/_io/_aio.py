"""A plain TCP connection of LeanHttpTransport under asyncio: a protocol of our own.

anyio's asyncio stream costs per request what one HTTP/1.1 exchange at a time does not need:
a shielded cancel scope and a loop pass after every send, and a ``resume_reading`` /
``pause_reading`` pair (two selector updates) around every receive. This one writes to the
transport and returns (waiting only while the transport's buffer is over its high-water mark,
as anyio does), keeps reading on (paused only past ``_HIGH`` unread bytes: bounded), and
receives from what ``buffer_updated`` queued. Errors are anyio's: EndOfStream at the end,
BrokenResourceError for a lost connection, ClosedResourceError once closed. TLS stays on
anyio's stream.

It is a buffered protocol: the loop reads into a buffer given once (``read_buffer``, which the
engine shares between its connections: the loop copies out of it before it reads again), not
into a fresh bytes object of the transport's read size per read. asyncio's plain protocols
read with ``recv(256 KiB)``: an allocation above glibc's mmap threshold, so each read maps,
shrinks (``mremap``) and unmaps memory and faults its pages in (three system calls and two
page faults a request, about a fifth of the library's CPU per ``tasks/get``: issue 39,
benchmarks/RESULTS.md). The running loop is found once, when the connection opens
(``asyncio.get_running_loop`` is a ``getpid`` system call each time).
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import anyio
import anyio.lowlevel

__all__ = ["AioStream", "connect"]

_HIGH = 256 * 1024  # unread bytes past which reading pauses (resumed under _LOW)
_LOW = 64 * 1024
READ_SIZE = 64 * 1024  # the most one read takes (anyio's streams read 64 KiB too)


def read_buffer() -> memoryview:
    """A buffer for :class:`AioStream`'s reads (one may serve many connections of one loop)."""
    return memoryview(bytearray(READ_SIZE))


class AioStream(asyncio.BufferedProtocol):
    """The byte stream of one connection (``send``, ``receive``, ``aclose``, ``stale``)."""

    def __init__(self, buffer: memoryview | None = None) -> None:
        self._buffer = read_buffer() if buffer is None else buffer
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._eof = False
        self._lost: BaseException | None = None
        self._closed = False
        self._reading_paused = False
        self._writing_paused = False
        self._reader: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        data = bytes(self._buffer[:nbytes])  # copied out before the loop reads again
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > _HIGH and not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool | None:
        self._eof = True
        self._wake_reader()
        self._wake_writer()  # a send waiting for the buffer to drain: the transport closes
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        if exc is not None:
            self._lost = exc
        self._wake_reader()
        self._wake_writer()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake_writer()

    def interrupt(self, error: BaseException) -> None:
        """A pending :meth:`receive` raises ``error`` (nothing when none waits)."""
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_exception(error)

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    def _wake_writer(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    # -- the stream -------------------------------------------------------------------------

    def raw_socket(self) -> Any:
        return None if self._transport is None else self._transport.get_extra_info("socket")

    def stale(self) -> bool:
        """Something arrived (or the end) on a connection nobody is reading from."""
        transport = self._transport
        return bool(self._chunks) or self._eof or transport is None or transport.is_closing()

    def write_now(self, data: bytes) -> bytes | None:
        """``data`` to the transport: None, or b"" when its buffer is now over the high-water
        mark (``send(b"")`` waits for it to drain)."""
        transport = self._check()
        if transport.is_closing():
            raise anyio.BrokenResourceError from self._lost
        transport.write(data)
        return b"" if self._writing_paused else None

    async def send(self, data: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        self.write_now(data)
        while self._writing_paused:
            self._drained = self._loop.create_future()
            try:
                await self._drained
            finally:
                self._drained = None
            transport = self._check()
            if self._lost is not None or transport.is_closing():
                raise anyio.BrokenResourceError from self._lost  # gone, or going: not sent

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._chunks:
            await anyio.lowlevel.checkpoint_if_cancelled()
        while not self._chunks:
            self._check()
            if self._eof:
                if self._lost is not None:
                    raise anyio.BrokenResourceError from self._lost
                raise anyio.EndOfStream
            self._reader = self._loop.create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        chunk = self._chunks.popleft()
        if len(chunk) > max_bytes:
            chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
            self._chunks.appendleft(rest)
        self._buffered -= len(chunk)
        if self._reading_paused and self._buffered < _LOW and self._transport is not None:
            self._reading_paused = False
            self._transport.resume_reading()
        return chunk

    async def aclose(self) -> None:
        self._closed = True
        if self._transport is not None:
            self._transport.abort()
        self._wake_reader()
        self._wake_writer()

    def _check(self) -> asyncio.Transport:
        if self._closed or self._transport is None:
            raise anyio.ClosedResourceError
        return self._transport


async def connect(host: str, port: int, buffer: memoryview | None = None) -> AioStream:
    """A plain TCP connection (TCP_NODELAY: asyncio sets it; addresses raced as anyio's
    ``connect_tcp`` does, 250 ms apart), reading into ``buffer`` (:func:`read_buffer`; one of
    its own when None)."""
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: AioStream(buffer), host, port, happy_eyeballs_delay=0.25
    )
    return protocol
