"""Line framing shared by stdio and the in-memory transport (X:3.3: one message per line)."""

from __future__ import annotations

from .._errors import MCPTasksError
from .._wire.jsonrpc import parse_message
from .base import Incoming, TransportFault


def decode_line(line: bytes) -> Incoming:
    """One line as a message, or a connection-wide fault naming what was wrong with it."""
    try:
        return parse_message(line)
    except MCPTasksError as exc:
        return TransportFault(None, exc)
