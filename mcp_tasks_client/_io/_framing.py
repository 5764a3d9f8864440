"""Line framing shared by stdio and the in-memory transport (X:3.3: one message per line)."""

from __future__ import annotations

from .._codec.messages import parse_message
from .._exceptions import MCPTasksError
from .base import Incoming, TransportFault


def decode_line(line: bytes) -> Incoming:
    """One line as a message, or a connection-wide fault naming what was wrong with it."""
    try:
        return parse_message(line)
    except MCPTasksError as exc:
        return TransportFault(None, exc)
