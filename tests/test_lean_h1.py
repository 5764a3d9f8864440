"""LeanHttpTransport's own HTTP/1.1 reader and writer (``_h1``) agree with h11 or decline.

A response head ``_h1`` reads gives what h11 reads from the same bytes: the status, the
headers (lower-case names, repeats joined), the body's length, and whether the connection may
be kept; one it does not read (DECLINE) goes to h11 whole, so every error is h11's; NEED_DATA
only where h11 needs data too. A request head ``_h1`` writes is byte for byte what h11 writes
for the same request; a header h11 refuses (or one of the framing headers) makes it decline.
Values: heads built from well-formed parts and near misses of them (other versions and
statuses, bare LF, folded lines, bad names and values, repeated or odd lengths, chunked,
Connection: close), whole and cut short.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import h11
import pytest
from budget import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_tasks_client._io import _h1

PROPERTY = settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

STATUS_LINES = st.one_of(
    st.sampled_from(
        [
            b"HTTP/1.1 200 OK",
            b"HTTP/1.1 200",
            b"HTTP/1.1 200 ",
            b"HTTP/1.1 202 Accepted",
            b"HTTP/1.1 404 Not Found",
            b"HTTP/1.1 503 Busy\tnow",
            b"HTTP/1.0 200 OK",
            b"HTTP/1.1 204 No Content",
            b"HTTP/1.1 304 Not Modified",
            b"HTTP/1.1 100 Continue",
            b"HTTP/1.1 20 OK",
            b"HTTP/2 200 OK",
            b"http/1.1 200 OK",
            b" HTTP/1.1 200 OK",
            b"HTTP/1.1 200 caf\xe9",
            b"HTTP/1.1 200 O\x00K",
        ]
    ),
    st.integers(100, 599).map(lambda code: b"HTTP/1.1 %d X" % code),
)
NAMES = st.one_of(
    st.sampled_from(
        [
            b"Content-Type",
            b"content-length",
            b"Content-Length",
            b"Mcp-Session-Id",
            b"Connection",
            b"Transfer-Encoding",
            b"Retry-After",
            b"Set-Cookie",
            b"X-Odd",
            b"bad name",
            b"",
            b"caf\xe9",
            b"a\x00b",
        ]
    ),
    st.from_regex(rb"\A[-!#$%&'*+.^_`|~0-9a-zA-Z]{1,12}\Z"),
)
VALUES = st.one_of(
    st.sampled_from(
        [
            b"application/json",
            b"text/event-stream",
            b"close",
            b"keep-alive",
            b"Keep-Alive, Close",
            b"upgrade",
            b"chunked",
            b"5",
            b" 5 ",
            b"5, 5",
            b"05",
            b"-1",
            b"\xb2",
            b"1" * 19,
            b"",
            b"a\tb",
            b"a  b",
            b"a\x00b",
            b"a\rb",
            b"a\x0bb",
            b"caf\xe9",
        ]
    ),
    st.binary(max_size=12),
)
SEPARATORS = st.sampled_from([b": ", b":", b":  ", b" : ", b":\t"])
ENDS = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n"])


GOOD_NAMES = st.sampled_from(
    [b"Content-Type", b"Mcp-Session-Id", b"Connection", b"Date", b"X-Odd", b"Retry-After"]
)
GOOD_VALUES = st.sampled_from(
    [b"application/json", b"text/event-stream", b"close", b"keep-alive", b"", b"a  b", b"\xe9"]
)


@st.composite
def response_bytes(draw: st.DrawFn) -> bytes:
    """Half of them well-formed (so _h1 reads them), half built from near misses as well."""
    body = draw(st.binary(max_size=40))
    if draw(st.booleans()):
        lines = [draw(st.sampled_from([b"HTTP/1.1 200 OK", b"HTTP/1.1 202", b"HTTP/1.1 404 x"]))]
        fields = draw(st.lists(st.tuples(GOOD_NAMES, st.just(b": "), GOOD_VALUES), max_size=4))
        fields.append((b"Content-Length", b": ", b"%d" % len(body)))
        data = b"".join(line + b"\r\n" for line in lines)
        data += b"".join(n + sep + v + b"\r\n" for n, sep, v in fields) + b"\r\n" + body
        if draw(st.integers(0, 4)) == 0:
            data = data[: draw(st.integers(0, len(data)))]
        return data
    lines = [draw(STATUS_LINES)]
    fields = draw(st.lists(st.tuples(NAMES, SEPARATORS, VALUES), max_size=6))
    if draw(st.booleans()):  # a right length, somewhere
        at = draw(st.integers(0, len(fields)))
        fields.insert(at, (b"Content-Length", b": ", b"%d" % len(body)))
    for name, separator, value in fields:
        lines.append(name + separator + value)
        if draw(st.integers(0, 20)) == 0:
            lines.append(b" folded")
    ends = [draw(ENDS) for _ in lines]
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    data += draw(ENDS) + body
    if draw(st.integers(0, 5)) == 0:
        data += b"HTTP/1.1 200 OK\r\n"  # bytes past the answer
    if draw(st.integers(0, 4)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def h11_reads(data: bytes) -> tuple[Any, h11.Connection]:
    """h11's first event for ``data`` after a POST (an exception is the event)."""
    h = h11.Connection(h11.CLIENT, max_incomplete_event_size=_h1.MAX_HEAD)
    h.send(h11.Request(method="POST", target="/mcp", headers=[("Host", "x")]))
    h.send(h11.EndOfMessage())
    if data:  # b"" would be the end of the stream
        h.receive_data(data)
    try:
        return h.next_event(), h
    except h11.RemoteProtocolError as exc:
        return exc, h


def joined(headers: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


def _fields(parsed: Any) -> Any:
    if not isinstance(parsed, _h1.Head):
        return parsed
    return (parsed.status_code, parsed.headers, parsed.content_length, parsed.close, parsed.size)


CACHE = _h1.HeadCache()
"""One cache for every example (as a transport's lives on, answer after answer): a line or head
one example left in it is read from it by the next."""


def check_head(data: bytes, note: Callable[[str], object] = lambda _: None) -> None:
    parsed = CACHE.parse_head(data)
    # Read again, its lines now remembered (the cache of lines read before): the same answer.
    assert _fields(CACHE.parse_head(data)) == _fields(parsed)
    first, h = h11_reads(data)
    if parsed is _h1.DECLINE:
        note("declined")
        return
    if parsed is _h1.NEED_DATA:
        note("need data")
        assert first is h11.NEED_DATA
        return
    note("read")
    assert isinstance(parsed, _h1.Head)
    assert isinstance(first, h11.Response), first
    assert parsed.status_code == first.status_code
    assert parsed.headers == joined(first.headers)
    body = b""
    while True:
        got = h.next_event()  # h11 read the head's length: no error in the body here
        if got is h11.NEED_DATA:
            # The body is cut short: h11 wants more, and _h1 counts what is missing.
            assert len(data) - parsed.size < parsed.content_length
            return
        if isinstance(got, h11.Data):
            body += got.data
        else:
            assert isinstance(got, h11.EndOfMessage)
            break
    assert body == data[parsed.size : parsed.size + parsed.content_length]
    assert (h.their_state is h11.DONE) == (not parsed.close)


@PROPERTY
@given(response_bytes())
def test_a_response_head_is_read_as_h11_reads_it_or_declined(data: bytes) -> None:
    check_head(data, event)


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nConnection: close\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: 1\r\n b\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nA: 1\r\nA: 2\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: " + b"a" * _h1.MAX_HEAD,
        b" ",
        b"\x00HTTP/1.1 200 OK\r\n",
    ],
)
def test_response_heads_of_each_kind(data: bytes) -> None:
    check_head(data)


def test_what_it_reads_and_what_it_declines() -> None:
    head = CACHE.parse_head(b"HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Length: 2\r\n\r\n{}")
    assert isinstance(head, _h1.Head)
    assert (head.status_code, head.content_length, head.close) == (200, 2, False)
    assert head.headers == {"content-type": "a", "content-length": "2"}
    for declined in (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n",  # read to the close
        b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    ):
        assert CACHE.parse_head(declined) is _h1.DECLINE
    assert CACHE.parse_head(b"HTTP/1.1 200 OK\r\nContent-Le") is _h1.NEED_DATA
    assert CACHE.parse_head(b"x" * _h1.MAX_HEAD) is _h1.DECLINE


def test_the_lines_it_remembers_are_bounded() -> None:
    """A server sending ever-new heads and header lines (or long ones) costs the parse, never
    memory; a caller sending ever-new header lines too."""
    cache = _h1.HeadCache()
    for n in range(1000):
        head = b"HTTP/1.1 200 OK\r\nX-%d: %s\r\nContent-Length: 0\r\n\r\n" % (n, b"v" * n)
        assert isinstance(cache.parse_head(head), _h1.Head)
        assert len(cache.fields) <= _h1._MAX_LINES
        assert len(cache.heads) <= _h1._MAX_LINES
        assert cache.request_prefix("POST", b"/", b"h", {"X-Seq": str(n)}) is not None
        assert len(cache.lines) <= _h1._MAX_LINES
    assert all(len(line) <= _h1._MAX_LINE for line in cache.fields)
    assert all(len(head) <= _h1._MAX_HEAD_KEPT for head in cache.heads)
    assert 0 < len(cache.statuses) <= _h1._MAX_LINES


def test_what_one_cache_remembers_is_its_own() -> None:
    """Issue 33 (no process-wide state on the request path): a header line written through
    one cache, a credential's included, is in that cache only; a head read through one is not
    read from another."""
    one, other = _h1.HeadCache(), _h1.HeadCache()
    secret = {"Authorization": "Bearer one-clients-token"}
    written = one.request_prefix("POST", b"/mcp", b"127.0.0.1:1", secret)
    assert written is not None
    assert b"Authorization: Bearer one-clients-token\r\n" in written
    assert b"Authorization: Bearer one-clients-token\r\n" in one.lines.values()
    assert other.lines == {}
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    assert isinstance(one.parse_head(head), _h1.Head)
    assert one.heads
    assert other.heads == {}
    assert other.fields == {}
    assert other.statuses == {}


HEADER_NAMES = st.one_of(
    st.sampled_from(
        [
            "Accept",
            "Mcp-Session-Id",
            "Authorization",
            "Host",
            "content-length",
            "Transfer-Encoding",
            "Connection",
            "Expect",
            "bad name",
            "",
            "café",
        ]
    ),
    st.from_regex(r"\A[-!#$%&'*+.^_`|~0-9a-zA-Z]{1,12}\Z"),
)
HEADER_VALUES = st.one_of(
    st.sampled_from(["application/json", "close", "chunked", "", " x", "a\tb", "a\r\nb", "é"]),
    st.text(max_size=10),
)


@PROPERTY
@given(
    st.sampled_from(["POST", "GET", "DELETE"]),
    st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=5),
    st.one_of(st.none(), st.binary(max_size=20)),
)
def test_a_request_head_is_what_h11_writes_or_declined(
    method: str, headers: dict[str, str], content: bytes | None
) -> None:
    length = len(content) if content is not None else (0 if method == "POST" else None)
    written = CACHE.request_head(method, b"/mcp", b"127.0.0.1:8000", headers, length)
    fields = [("Host", "127.0.0.1:8000"), *headers.items()]
    if length is not None:
        fields.append(("Content-Length", str(length)))
    try:
        expected = h11.Connection(h11.CLIENT).send(
            h11.Request(method=method, target="/mcp", headers=fields)
        )
    except (h11.LocalProtocolError, UnicodeEncodeError):
        event("h11 refuses")
        assert written is None
        return
    if written is None:
        event("declined")
        assert any(name.lower() in _h1._FRAMING for name in headers)
        return
    event("written")
    assert written == expected


def test_targets_it_writes() -> None:
    assert _h1.target_ok("/mcp?x=1", "127.0.0.1:80")
    assert not _h1.target_ok("/m cp", "127.0.0.1:80")
    assert not _h1.target_ok("/mcp", "hôst")
