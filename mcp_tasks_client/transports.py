"""For transport authors and for tests: the interface every transport offers the Client.

A program that talks to a server constructs one of the transports at the top level
(``HttpTransport``, ``LeanHttpTransport``, ``StdioTransport``). This module is for code that
writes or wraps a transport:

- :class:`Transport`: the interface (an async context manager that sends messages and hands
  out what arrives); :data:`Incoming` is what ``receive()`` returns: a decoded JSON-RPC
  message or a :class:`TransportFault`;
- :class:`TransportWrapper`: delegates every call to an inner transport; subclass it to
  observe, delay or break traffic (fault injection, recording);
- :func:`memory_transport_pair`: a :class:`MemoryTransport` for the Client and a
  :class:`MemoryServerEnd` a test scripts (it can write anything a broken server might).

Only re-exports: the classes live in the library's private transport modules.
"""

from __future__ import annotations

from ._io.base import Incoming, Transport, TransportFault, TransportWrapper
from ._io.memory import MemoryServerEnd, MemoryTransport, memory_transport_pair

__all__ = [
    "Incoming",
    "MemoryServerEnd",
    "MemoryTransport",
    "Transport",
    "TransportFault",
    "TransportWrapper",
    "memory_transport_pair",
]
