"""An in-memory transport pair, for tests and for fault injection.

The client side behaves like stdio (one JSON text per message, decoded by the client side),
so a test can feed it anything a broken server might write: bytes that are not JSON, a
response for an id never sent, a message missing a field.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._codec._converter import dumps, loads
from .._codec.messages import serialize_message
from .._exceptions import TransportClosed
from ..models import JSONRPCMessage
from ._framing import decode_line
from .base import Incoming, Transport

__all__ = ["MemoryServerEnd", "MemoryTransport", "memory_transport_pair"]


class MemoryTransport(Transport):
    """The client end of an in-memory pair."""

    def __init__(
        self,
        outgoing: MemoryObjectSendStream[bytes],
        incoming: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming
        self.protocol_version: str | None = None

    async def __aenter__(self) -> MemoryTransport:
        """Deadline: none. Cancelled: nothing to undo."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Deadline: none (closing a memory stream does not wait). Cancelled: the stream is closed
        all the same."""
        await self._outgoing.aclose()
        await self._incoming.aclose()

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """Deadline: the caller's scope (a full buffer waits for the server end to read).
        Cancelled: nothing was sent."""
        try:
            await self._outgoing.send(serialize_message(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise TransportClosed("the in-memory peer is gone") from None

    async def receive(self) -> Incoming:
        """Deadline: none. Cancelled: stops waiting; nothing is lost."""
        try:
            line = await self._incoming.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the in-memory peer closed its end") from None
        return decode_line(line)

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version


class MemoryServerEnd:
    """The server end: a test reads what the client sent and writes whatever it likes."""

    def __init__(
        self,
        outgoing: MemoryObjectSendStream[bytes],
        incoming: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming

    async def receive(self) -> Any:
        """The next message the client sent, as parsed JSON.
        Deadline: none. Cancelled: stops waiting; nothing is lost.
        """
        return loads(await self._incoming.receive())

    async def send(self, value: Any) -> None:
        """Send a JSON value to the client.
        Deadline: the caller's scope. Cancelled: nothing was sent.
        """
        await self._outgoing.send(dumps(value))

    async def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (not JSON, half a message, ...).
        Deadline: the caller's scope. Cancelled: nothing was sent.
        """
        await self._outgoing.send(data)

    async def aclose(self) -> None:
        """Deadline: none (closing does not wait). Cancelled: closed all the same."""
        await self._outgoing.aclose()
        await self._incoming.aclose()


def memory_transport_pair() -> tuple[MemoryTransport, MemoryServerEnd]:
    to_server_send, to_server_receive = anyio.create_memory_object_stream[bytes](math.inf)
    to_client_send, to_client_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return (
        MemoryTransport(to_server_send, to_client_receive),
        MemoryServerEnd(to_client_send, to_server_receive),
    )
