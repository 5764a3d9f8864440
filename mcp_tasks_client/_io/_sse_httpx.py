"""Server-sent events parsed by httpx-sse, over a bound that sees every byte first.

Job: the same sans-I/O interface as :class:`~._sse.SSEDecoder` (``feed(chunk)`` -> events,
``last_event_id``, ``retry``, ``buffered_bytes``), with httpx-sse's line splitter and field
interpreter doing the parsing. httpx-sse buffers a line without bound, so each chunk passes
three checks before it sees it:

- **the bound** (:class:`_Bound`): the bytes of the line being read, and the data of the event
  being read, are counted as they arrive; a line past ``max_line_bytes`` or an event whose
  data passes ``max_event_bytes`` is a :class:`~mcp_tasks_client.LimitExceeded` naming
  ``Limits.max_message_bytes`` (the event's, once it has a data line before this one, the
  moment the byte that passes it arrives; a single line's at its end, or at the line bound,
  as the hand-written decoder does); nothing past ``max_line_bytes`` is handed on;
- **UTF-8, strictly**: bytes that are not UTF-8 are a :class:`~mcp_tasks_client.DecodeError`
  naming the SSE line, never replaced with U+FFFD (one leading BOM is dropped, WHATWG);
- **the fields the library reads itself** (named properties of ``tests/test_sse_properties.py``):
  ``retry`` is read only when all ASCII digits (httpx-sse's ``int()`` takes ``-5``, ``+5``,
  ``5_0`` and non-ASCII digits), kept when the line is read (a resumption after a cut uses
  it); a dispatched event is one that had a ``data`` line (httpx-sse also dispatches an event
  with an id and no data, WHATWG does not); a CR ends its line when it arrives (httpx-sse
  holds a chunk's trailing CR back, which holds back an event ending the stream so far).

The last event id is the id of the last event httpx-sse dispatched (WHATWG: an id line counts
once its event ends, so a resumption after a stream cut mid-event asks for that event again).

May import: ``_exceptions``, ``._sse`` (its event type), httpx-sse's decoders.
"""

from __future__ import annotations

import codecs

from httpx_sse._decoders import SSEDecoder as _FieldDecoder
from httpx_sse._decoders import SSELineDecoder as _LineDecoder

from .._exceptions import DecodeError, LimitExceeded
from ._sse import SSEEvent

__all__ = ["HttpxSSEDecoder"]

_LIMIT = "max_message_bytes"
_CR, _LF = 0x0D, 0x0A


class _Bound:
    """Counts the current line's bytes and the current event's data bytes, as the hand-written
    decoder does (a data line's value, plus one for the LF joining it), without buffering."""

    def __init__(self, max_line_bytes: int, max_event_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self.line = 0  # bytes of the line being read
        self._head = b""  # its first bytes (at most 6): which field it is
        self.data = 0  # data bytes of the event being read
        self._after_cr = False

    def check(self, chunk: bytes) -> None:
        start, n = 0, len(chunk)
        if self._after_cr and n and chunk[0] == _LF:
            start = 1  # the LF of a CRLF cut between chunks
        self._after_cr = False
        while start < n:
            lf = chunk.find(b"\n", start)
            cr = chunk.find(b"\r", start)
            end = min(i for i in (lf, cr, n) if i != -1)
            self._extend(chunk[start:end])
            if end == n:
                break
            self._line_done()
            if chunk[end] == _CR:
                if end + 1 < n:
                    start = end + 2 if chunk[end + 1] == _LF else end + 1
                else:
                    self._after_cr = True
                    start = n
            else:
                start = end + 1

    def _extend(self, part: bytes) -> None:
        if len(self._head) < 6:
            self._head += part[: 6 - len(self._head)]
        self.line += len(part)
        if self.line > self.max_line_bytes:
            self.line = 0
            raise LimitExceeded(_LIMIT, self.max_line_bytes, "an SSE line")
        if self.data:  # a line of its own is the line bound's (an endless line is a line)
            self._check_event()

    def _check_event(self) -> None:
        value = self._data_value()
        if value is not None and self.data + value + 1 > self.max_event_bytes:
            self.data = 0
            raise LimitExceeded(_LIMIT, self.max_event_bytes, "an SSE event")

    def _data_value(self) -> int | None:
        """The bytes of a data line's value so far (None: not a data line)."""
        head = self._head
        if head == b"data" and self.line == 4:
            return 0
        if not head.startswith(b"data:"):
            return None
        return self.line - (6 if head.startswith(b"data: ") else 5)

    def _line_done(self) -> None:
        if self.line == 0:
            self.data = 0  # a blank line ends the event
        else:
            self._check_event()
            value = self._data_value()
            if value is not None:
                self.data += value + 1
        self.line = 0
        self._head = b""


class HttpxSSEDecoder:
    """Bytes of one event stream in, complete events out: httpx-sse under a bound."""

    def __init__(self, *, max_line_bytes: int, max_event_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self.last_event_id: str | None = None
        """The id of the last dispatched event (what a resumption sends as Last-Event-ID)."""
        self.retry: int | None = None
        """The last valid ``retry`` field, in milliseconds."""
        self._bound = _Bound(max_line_bytes, max_event_bytes)
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._lines = _LineDecoder()
        self._fields = _FieldDecoder()
        self._has_data = False
        self._id: str | None = None  # the id line of the event being read, if any
        self._after_cr = False

    @property
    def buffered_bytes(self) -> int:
        """What is held now: the unfinished line and the event's data so far."""
        return self._bound.line + self._bound.data

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes (raises LimitExceeded or DecodeError)."""
        if not chunk:
            return []
        self._bound.check(chunk)
        try:
            text = self._utf8.decode(chunk)
        except UnicodeDecodeError as exc:
            raise DecodeError("SSE line", f"not UTF-8: {exc.reason}", chunk[:200]) from None
        # A CR ends its line when it arrives: httpx-sse holds a trailing CR back until the next
        # chunk (it may be half a CRLF), which would hold the stream's last event back for as
        # long as the server sends nothing more. Line ends become LF here; a CRLF cut between
        # chunks is one line end.
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        if not text:
            return []
        self._after_cr = text.endswith("\r")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        events: list[SSEEvent] = []
        for line in self._lines.decode(text):
            self._line(line, events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            sse = self._fields.decode(line)
            if self._id is not None:
                self.last_event_id = sse.id if sse is not None else self._id
            self._id = None
            if sse is not None and self._has_data:
                events.append(SSEEvent(sse.data, sse.event, self.last_event_id))
            self._has_data = False
            return
        name, _, value = line.partition(":")
        if name == "retry":
            value = value.removeprefix(" ")
            if value and value.isascii() and value.isdigit():
                # More digits than any wait could use are kept as "too long" (int() of
                # thousands of digits raises).
                self.retry = int(value) if len(value) <= 16 else 10**16
            return  # httpx-sse reads retry with int(): the library reads it itself
        if name == "data":
            self._has_data = True
        elif name == "id" and "\x00" not in value:
            self._id = value.removeprefix(" ")
        self._fields.decode(line)
