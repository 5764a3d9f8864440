"""Server-sent events, sans-I/O, with every buffer bounded (X:105-131, WHATWG "event stream").

The transports parse with httpx-sse under a bound (``_sse_httpx.py``, the same interface);
this decoder is the reference every SSE property runs against beside it, and the other row of
the bench's SSE section (issue 22, item 15).

Theory of operation. A caller feeds the raw bytes of a ``text/event-stream`` body to
:meth:`SSEDecoder.feed` as they arrive and gets back the events completed by them. The decoder
follows the event-stream interpretation rules: lines end in CRLF, LF or CR (also split across
chunks); a line starting with ``:`` is a comment; ``data`` lines are joined with LF; a blank
line dispatches the event; ``id`` sets the last event id unless it contains NUL; ``retry`` is
read only when it is all ASCII digits; unknown fields are ignored.

Where this decoder is stricter than a browser, on purpose (a server we do not control must not
be able to make the client hold unbounded memory or silently change what it said):

- a line longer than ``max_line_bytes``, or an event whose data grows past ``max_event_bytes``,
  is a :class:`~mcp_tasks_client.LimitExceeded` naming ``Limits.max_message_bytes``; nothing
  beyond the limit is buffered;
- bytes that are not UTF-8 are a :class:`~mcp_tasks_client.DecodeError` naming the SSE line,
  never replaced with U+FFFD (a replaced byte would silently change a JSON-RPC message).

``retry`` is kept as the integer the server sent (milliseconds, however many digits): turning
it into a wait, and checking that it is one, is the caller's job at the moment it would wait.
"""

from __future__ import annotations

import attrs

from .._exceptions import DecodeError, LimitExceeded

__all__ = ["SSEDecoder", "SSEEvent"]

_LIMIT = "max_message_bytes"


@attrs.frozen
class SSEEvent:
    """One dispatched event: ``data`` without its final LF, the stream's last event id."""

    data: str
    event: str = "message"
    id: str | None = None


class SSEDecoder:
    """Bytes of one event stream in, complete events out."""

    def __init__(self, *, max_line_bytes: int, max_event_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self.last_event_id: str | None = None
        """The last ``id`` field seen (what a resumption sends as Last-Event-ID)."""
        self.retry: int | None = None
        """The last valid ``retry`` field, in milliseconds."""
        self._line = bytearray()
        self._after_cr = False
        self._first_line = True
        self._data: list[str] = []
        self._data_bytes = 0
        self._event_type = ""

    @property
    def buffered_bytes(self) -> int:
        """What the decoder holds now: the unfinished line and the event's data so far."""
        return len(self._line) + self._data_bytes

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes (raises LimitExceeded or DecodeError)."""
        events: list[SSEEvent] = []
        start = 0
        n = len(chunk)
        if self._after_cr and n and chunk[0] == 0x0A:  # the LF of a CRLF split across chunks
            start = 1
        self._after_cr = False
        while start < n:
            lf = chunk.find(b"\n", start)
            cr = chunk.find(b"\r", start)
            ends = [i for i in (lf, cr) if i != -1]
            if not ends:
                self._extend(chunk[start:])
                break
            end = min(ends)
            self._extend(chunk[start:end])
            self._line_done(events)
            if chunk[end] == 0x0D:
                if end + 1 < n:
                    start = end + 2 if chunk[end + 1] == 0x0A else end + 1
                else:
                    self._after_cr = True
                    start = n
            else:
                start = end + 1
        return events

    def _extend(self, part: bytes) -> None:
        if len(self._line) + len(part) > self.max_line_bytes:
            self._line.clear()
            raise LimitExceeded(_LIMIT, self.max_line_bytes, "an SSE line")
        self._line += part

    def _line_done(self, events: list[SSEEvent]) -> None:
        raw = bytes(self._line)
        self._line.clear()
        if self._first_line:
            self._first_line = False
            raw = raw.removeprefix(b"\xef\xbb\xbf")  # one leading BOM is allowed
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("SSE line", f"not UTF-8: {exc.reason}", raw[:200]) from None
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment (keep-alive)
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            size = len(value.encode()) + 1
            if self._data_bytes + size > self.max_event_bytes:
                self._data.clear()
                self._data_bytes = 0
                raise LimitExceeded(_LIMIT, self.max_event_bytes, "an SSE event")
            self._data.append(value)
            self._data_bytes += size
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif name == "retry" and value and value.isascii() and value.isdigit():
            # More digits than any wait could use are kept as "too long": int() of
            # thousands of digits raises, and no caller waits 10**16 ms anyway.
            self.retry = int(value) if len(value) <= 16 else 10**16
        # any other field is ignored (WHATWG 9.2.6)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if not self._data:
            self._event_type = ""
            return
        data = "\n".join(self._data)
        events.append(SSEEvent(data, self._event_type or "message", self.last_event_id))
        self._data.clear()
        self._data_bytes = 0
        self._event_type = ""
