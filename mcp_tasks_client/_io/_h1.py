"""The common HTTP/1.1 exchange of LeanHttpTransport, written and read without h11 (sans-I/O).

Most exchanges are alike: a POST with our own fixed header set, answered by a status line, a
few headers and a ``Content-Length`` body. For those, building the request bytes here and
parsing the response head with a bounded parser costs a fraction of h11's event machinery.
Everything else is declined (``None`` / :data:`DECLINE`) and goes through h11 unchanged: a
header this module would have to judge (non-ASCII, a name or value h11 refuses, one of the
framing headers), a response head that is chunked, has no length, is informational or
bodiless (1xx, 204, 304), is not HTTP/1.1, uses bare-LF line ends, folds lines, or repeats
``Content-Length``. What is accepted is a subset of what h11 accepts, read the same way (a
hypothesis property in the tests checks that against h11), so every error is h11's.

What it remembers (the header lines it wrote, the heads and lines it read) is kept by a
:class:`HeadCache` its caller owns, one per transport: a credential header line of one client
(``Authorization: ...``) is never in a cache another client reads, and nothing here is
process-wide state.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "DECLINE",
    "MAX_HEAD",
    "NEED_DATA",
    "Head",
    "HeadCache",
    "request_end",
]

MAX_HEAD: Final = 64 * 1024
"""The most bytes a response head may take (h11's ``max_incomplete_event_size`` here)."""

# The grammar of h11's _abnf (RFC 7230), on bytes.
_TOKEN = rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"
_FIELD_VALUE = rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?"
_NAME_RE = re.compile(_TOKEN)
_VALUE_RE = re.compile(_FIELD_VALUE)
_FIELD_RE = re.compile(rb"(" + _TOKEN + rb"):[ \t]*(" + _FIELD_VALUE + rb")[ \t]*")
_STATUS_RE = re.compile(rb"HTTP/1\.1 ([0-9]{3})(?: (?:[ \t]|[^\x00\s])*)?")
_TARGET_RE = re.compile(rb"[\x21-\x7e]+")

# Headers whose meaning is framing or connection state: h11 judges those.
_FRAMING = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "expect", "upgrade", "te"}
)
_MAX_LINES = 256  # each cache emptied when full: a transport's header set is small and constant


class _Decline:
    def __repr__(self) -> str:
        return "DECLINE"


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


DECLINE: Final = _Decline()
NEED_DATA: Final = _NeedData()


def target_ok(target: str, authority: str) -> bool:
    """Whether a request line and Host header for these can be written here at all."""
    try:
        return bool(
            _TARGET_RE.fullmatch(target.encode("ascii"))
            and _VALUE_RE.fullmatch(authority.encode("ascii"))
        )
    except UnicodeEncodeError:
        return False


def request_end(prefix: bytes, length: int | None) -> bytes:
    """A :func:`request_prefix` ended: its ``Content-Length`` (when given) and blank line."""
    if length is None:
        return prefix + b"\r\n"
    return b"%sContent-Length: %d\r\n\r\n" % (prefix, length)


class Head:
    """A response head read here: what the transport needs of it."""

    __slots__ = ("close", "content_length", "headers", "size", "status_code")

    def __init__(
        self,
        status_code: int,
        headers: dict[str, str],
        content_length: int,
        close: bool,
        size: int,
    ) -> None:
        self.status_code = status_code
        self.headers = headers  # lower-case names, repeated fields joined with ", "
        self.content_length = content_length
        self.close = close  # the server said Connection: close
        self.size = size  # bytes of the head, its blank line included


_MAX_LINE = 256
_MAX_HEAD_KEPT = 1024


def _remember(cache: dict[bytes, Any], line: bytes, value: Any, longest: int = _MAX_LINE) -> None:
    if len(line) <= longest:
        if len(cache) >= _MAX_LINES:
            cache.clear()
        cache[line] = value


class HeadCache:
    """What one transport's heads said before, bounded: the header lines it wrote (its requests
    carry the same ones, request after request), and what a head, or a line of one, read
    before said (a server sends the same head answer after answer, or the same lines with a
    Date that changes): a whole head's reading; a status line's code; a header line's
    lower-case name, value and, for a Content-Length, the length it gives (-1: not a length
    h11 would take). Only short ones, at most ``_MAX_LINES`` of each kind, each emptied when
    full: a server sending ever-new heads costs the parse, never memory. Its owner (the lean
    engine, one per transport) is its only reader: nothing is shared between clients."""

    __slots__ = ("fields", "heads", "lines", "statuses")

    def __init__(self) -> None:
        self.lines: dict[tuple[str, str], bytes] = {}
        self.heads: dict[bytes, tuple[int, dict[str, str], int, bool]] = {}
        self.statuses: dict[bytes, int] = {}
        self.fields: dict[bytes, tuple[str, str, int]] = {}

    def _line(self, name: str, value: str) -> bytes | None:
        key = (name, value)
        lines = self.lines
        line = lines.get(key)
        if line is not None:
            return line
        if name.lower() in _FRAMING:
            return None
        try:
            raw_name, raw_value = name.encode("ascii"), value.encode("ascii")
        except UnicodeEncodeError:
            return None
        if not _NAME_RE.fullmatch(raw_name) or not _VALUE_RE.fullmatch(raw_value):
            return None
        line = b"%s: %s\r\n" % (raw_name, raw_value)
        if len(lines) >= _MAX_LINES:
            lines.clear()
        lines[key] = line
        return line

    def request_head(
        self,
        method: str,
        target: bytes,
        authority: bytes,
        headers: dict[str, str],
        length: int | None,
    ) -> bytes | None:
        """The request line and headers as h11 would write them (Host first, then ``headers``
        in order, then ``Content-Length`` when ``length`` is given); None: let h11 write it."""
        prefix = self.request_prefix(method, target, authority, headers)
        if prefix is None:
            return None
        return request_end(prefix, length)

    def request_prefix(
        self, method: str, target: bytes, authority: bytes, headers: dict[str, str]
    ) -> bytes | None:
        """:meth:`request_head` up to its ``Content-Length`` (a transport keeps it for the next
        request with the same headers); None: let h11 write it."""
        parts = [b"%s %s HTTP/1.1\r\nHost: %s\r\n" % (method.encode("ascii"), target, authority)]
        for name, value in headers.items():
            line = self._line(name, value)
            if line is None:
                return None
            parts.append(line)
        return b"".join(parts)

    def _field(self, line: bytes) -> tuple[str, str, int] | None:
        """A header line read (and remembered); None: h11's to judge."""
        field = _FIELD_RE.fullmatch(line)
        if field is None:
            return None
        name = field.group(1).lower().decode("ascii")
        value = field.group(2).decode("latin-1")
        number = -1
        if name == "content-length" and value.isascii() and value.isdigit() and len(value) <= 18:
            number = int(value)
        got = (name, value, number)
        _remember(self.fields, line, got)
        return got

    def parse_head(self, data: bytes) -> Head | _Decline | _NeedData:
        """The response head at the start of ``data``: a :class:`Head`, NEED_DATA (no blank line
        yet, fewer than MAX_HEAD bytes), or DECLINE (let h11 read it, from the first byte)."""
        if data and data[0] < 0x21:
            return DECLINE  # h11 refuses this at once, before any blank line (a control or space)
        # The blank line as h11 finds it (LF, optional CR, LF); ours only when it is CRLF CRLF.
        blank = data.find(b"\n\r\n")
        bare = data.find(b"\n\n", 0, len(data) if blank < 0 else blank + 1)
        if bare >= 0:
            return DECLINE  # a bare-LF blank line: h11's to read
        if blank < 0:
            return NEED_DATA if len(data) < MAX_HEAD else DECLINE
        end = blank - 1
        if end < 0 or data[end] != 13 or end + 4 > MAX_HEAD:
            return DECLINE
        head = data[:end]
        known = self.heads.get(head)
        if known is not None:  # this very head read before: its reading (a copy of its fields)
            return Head(known[0], dict(known[1]), known[2], known[3], end + 4)
        lines = head.split(b"\r\n")
        fields = self.fields
        code = self.statuses.get(lines[0])
        if code is None:
            status = _STATUS_RE.fullmatch(lines[0])
            if status is None:
                return DECLINE
            code = int(status.group(1))
            _remember(self.statuses, lines[0], code)
        if code < 200 or code in (204, 304):
            return DECLINE
        headers: dict[str, str] = {}
        length: int | None = None
        close = False
        for line in lines[1:]:
            field = fields.get(line)
            if field is None:
                field = self._field(line)
                if field is None:
                    return DECLINE  # an obs-fold, a bare LF or CR, a bad name or value
            name, value, number = field
            if name == "content-length":
                if length is not None or number < 0:
                    return DECLINE
                length = number
            elif name == "transfer-encoding":
                return DECLINE
            elif name == "connection":
                close = close or "close" in [t.strip().lower() for t in value.split(",")]
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if length is None:
            return DECLINE  # a body read to the close: h11's
        _remember(self.heads, head, (code, dict(headers), length, close), _MAX_HEAD_KEPT)
        return Head(code, headers, length, close, end + 4)
