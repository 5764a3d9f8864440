"""A transport wrapper that records what the client sent: an observer, not a stand-in.

It wraps a real transport to a real peer, so tests can check what went on the wire (the
related-task meta on an answer, how many answers a request got).
"""

from __future__ import annotations

from types import TracebackType

from mcp_tasks_client import Transport
from mcp_tasks_client._transports.base import HeadersFor, Incoming
from mcp_tasks_client.models import JSONRPCMessage, RequestId


class RecordingTransport(Transport):
    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.sent: list[JSONRPCMessage] = []
        self.received: list[Incoming] = []

    async def __aenter__(self) -> RecordingTransport:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.inner.__aexit__(exc_type, exc, tb)

    async def send(self, message: JSONRPCMessage) -> None:
        self.sent.append(message)
        await self.inner.send(message)

    async def receive(self) -> Incoming:
        item = await self.inner.receive()
        self.received.append(item)
        return item

    def negotiated(self, protocol_version: str) -> None:
        self.inner.negotiated(protocol_version)

    def stateless(self, headers_for: HeadersFor) -> None:
        self.inner.stateless(headers_for)

    @property
    def cancels_by_closing(self) -> bool:
        return self.inner.cancels_by_closing

    async def abandon(self, request_id: RequestId) -> None:
        await self.inner.abandon(request_id)
