"""A transport wrapper that records what the client sent: an observer, not a stand-in.

It wraps a real transport to a real peer, so tests can check what went on the wire (the
related-task meta on an answer, how many answers a request got).
"""

from __future__ import annotations

from mcp_tasks_client._io.base import Incoming
from mcp_tasks_client.models import JSONRPCMessage
from mcp_tasks_client.transports import Transport, TransportWrapper


class RecordingTransport(TransportWrapper):
    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.sent: list[JSONRPCMessage] = []
        self.received: list[Incoming] = []

    async def __aenter__(self) -> RecordingTransport:
        await self.inner.__aenter__()
        return self

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        self.sent.append(message)
        await self.inner.send(message, held=held)

    async def receive(self) -> Incoming:
        item = await self.inner.receive()
        self.received.append(item)
        return item
