"""The SSE layer under arbitrary input (issue 7, item 3 and the "bad UTF-8" weaker spot).

The decoder is sans-I/O: these properties feed it byte strings cut at arbitrary places and
check what comes out against a reference reading of the same events, and that any input at
all gives events, LimitExceeded or DecodeError, with the buffer never past its limits.
`nox -s fuzz` runs the same properties with many more examples.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    Limits,
    MCPTasksError,
    StreamResumption,
    ToolCall,
)
from mcp_tasks_client._io._http_answers import retry_after as _retry_after
from mcp_tasks_client._io._http_sse import _header_value, _retry_seconds
from mcp_tasks_client._io._sse import SSEDecoder, SSEEvent
from mcp_tasks_client._io._sse_httpx import HttpxSSEDecoder
from mcp_tasks_client.errors import DecodeError, LimitExceeded
from mcp_tasks_client.models import CallToolResult, Implementation

LINE_ENDINGS = st.sampled_from([b"\n", b"\r\n", b"\r"])
# Field values: any text without a line break (a value cannot hold one).
VALUES = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]))


@st.composite
def events(draw: st.DrawFn) -> tuple[list[str | None], str | None]:
    """(data lines or None for a data-less event, id)."""
    lines: list[str | None] = list(draw(st.lists(VALUES, min_size=0, max_size=4)))
    event_id = draw(st.none() | VALUES.filter(lambda v: "\x00" not in v))
    return (lines or [None]), event_id


def encode(stream: list[tuple[list[str | None], str | None]], endings: list[bytes]) -> bytes:
    out = bytearray()
    ending = iter(endings * 1000)
    for lines, event_id in stream:
        out += b": keep-alive" + next(ending)
        if event_id is not None:
            out += b"id: " + event_id.encode() + next(ending)
        for line in lines:
            if line is not None:
                out += b"data: " + line.encode() + next(ending)
        blank = next(ending)
        if out.endswith(b"\r") and blank == b"\n":  # CR then LF would read as one CRLF
            blank = b"\r\n"
        out += blank
    return bytes(out)


def expected(stream: list[tuple[list[str | None], str | None]]) -> list[SSEEvent]:
    out: list[SSEEvent] = []
    last_id: str | None = None
    for lines, event_id in stream:
        if event_id is not None:
            last_id = event_id
        data = [line for line in lines if line is not None]
        if data:
            out.append(SSEEvent("\n".join(data), "message", last_id))
    return out


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    out, previous = [], 0
    for point in [*points, len(data)]:
        out.append(data[previous:point])
        previous = point
    return out


Decoder = type[SSEDecoder] | type[HttpxSSEDecoder]
# Every decoder property runs against both: the hand-written reference and httpx-sse under its
# bound (what the HTTP transport uses, issue 22 item 15).
DECODERS = pytest.mark.parametrize(
    "decoder_class", [SSEDecoder, HttpxSSEDecoder], ids=["hand-written", "httpx-sse"]
)


def feed_all(decoder: SSEDecoder | HttpxSSEDecoder, chunks: list[bytes]) -> list[SSEEvent]:
    out: list[SSEEvent] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
        assert decoder.buffered_bytes <= decoder.max_line_bytes + decoder.max_event_bytes
    return out


@DECODERS
@given(
    stream=st.lists(events(), max_size=6),
    endings=st.lists(LINE_ENDINGS, min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
)
def test_events_survive_any_line_endings_and_any_chunking(
    stream: list[tuple[list[str | None], str | None]],
    endings: list[bytes],
    cuts: list[int],
    decoder_class: Decoder,
) -> None:
    """WHATWG event-stream rules: LF, CRLF or CR (a CRLF may be cut between chunks), comments
    skipped, data lines joined with LF, the last id carried, data-less events not dispatched."""
    data = encode(stream, endings)
    decoder = decoder_class(max_line_bytes=1 << 20, max_event_bytes=1 << 20)
    assert feed_all(decoder, chunked(data, cuts)) == expected(stream)


@DECODERS
@given(data=st.binary(max_size=4000), cuts=st.lists(st.integers(0, 4000), max_size=10))
def test_any_bytes_give_events_or_a_typed_error_within_the_limits(
    data: bytes, cuts: list[int], decoder_class: Decoder
) -> None:
    decoder = decoder_class(max_line_bytes=256, max_event_bytes=512)
    try:
        got = feed_all(decoder, chunked(data, cuts))
    except (LimitExceeded, DecodeError) as exc:
        error: LimitExceeded | DecodeError = exc
        assert isinstance(error, LimitExceeded) or error.path == "SSE line"
        return
    for event in got:
        assert len(event.data.encode()) <= 512
    if decoder.retry is not None:
        assert decoder.retry >= 0


@DECODERS
@given(value=st.binary(max_size=600))
def test_any_retry_field_is_a_wait_or_a_decode_error(value: bytes, decoder_class: Decoder) -> None:
    """A 400-digit retry was an OverflowError; now any retry is a number of ms or ignored, and
    turning it into a wait gives seconds or a DecodeError naming the SSE field."""
    decoder = decoder_class(max_line_bytes=1 << 12, max_event_bytes=1 << 12)
    try:
        decoder.feed(b"retry: " + value.replace(b"\n", b"").replace(b"\r", b"") + b"\n")
    except DecodeError:
        return  # not UTF-8
    try:
        wait = _retry_seconds(decoder.retry, 1.0)
    except DecodeError as exc:
        error = exc
        assert error.path == "SSE retry"
        return
    assert 0.0 <= wait <= 24 * 3600


@given(event_id=st.text(max_size=50))
def test_any_event_id_is_sent_back_as_ascii_or_refused_as_a_decode_error(event_id: str) -> None:
    """A non-ASCII id sent back as Last-Event-ID was a UnicodeEncodeError."""
    try:
        value = _header_value(event_id)
    except DecodeError as exc:
        error = exc
        assert error.path == "SSE id"
        return
    value.encode("ascii")  # what the header layer does with it


@given(header=st.text(max_size=60) | st.integers(-(10**30), 10**30).map(str))
def test_any_retry_after_header_is_seconds_or_none(header: str) -> None:
    seconds = _retry_after(header)
    assert seconds is None or seconds >= 0


@DECODERS
@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"data: " + b"a" * 300 + b"\n", "an SSE line"),
        (b"".join(b"data: " + b"a" * 100 + b"\n" for _ in range(6)), "an SSE event"),
    ],
)
def test_limits_name_what_exceeded_them(data: bytes, problem: str, decoder_class: Decoder) -> None:
    decoder = decoder_class(max_line_bytes=256, max_event_bytes=512)
    with pytest.raises(LimitExceeded) as caught:
        decoder.feed(data)
    assert (caught.value.limit, caught.value.where) == ("max_message_bytes", problem)


@DECODERS
def test_bad_utf8_is_refused_not_replaced(decoder_class: Decoder) -> None:
    decoder = decoder_class(max_line_bytes=256, max_event_bytes=512)
    with pytest.raises(DecodeError) as caught:
        decoder.feed(b'data: {"text":"\xff"}\n\n')
    assert caught.value.path == "SSE line"


@DECODERS
def test_a_priming_event_and_an_id_with_nul(decoder_class: Decoder) -> None:
    """X:106: an id with empty data is recorded; an id with NUL is ignored (WHATWG)."""
    decoder = decoder_class(max_line_bytes=256, max_event_bytes=512)
    got: list[Any] = decoder.feed(b"id: e-1\ndata:\n\nid: e\x002\n\n")
    assert got == [SSEEvent("", "message", "e-1")]
    assert decoder.last_event_id == "e-1"


# Lines a server may send: every field the decoders read, comments, unknown fields, a field
# without a colon, values with leading spaces and NULs, retries valid and not.
SSE_LINES = st.one_of(
    st.builds(lambda v: "data:" + v, VALUES),
    st.builds(lambda v: "data: " + v, VALUES),
    st.just("data"),
    st.builds(lambda v: "id: " + v, VALUES),
    st.builds(lambda v: "event: " + v, VALUES),
    st.builds(lambda v: "retry: " + v, st.from_regex(r"[0-9+\- _]{0,20}", fullmatch=True)),
    st.builds(lambda v: ":" + v, VALUES),
    st.builds(lambda v: "x-unknown: " + v, VALUES),
    st.just(""),
)


@given(
    lines=st.lists(SSE_LINES, max_size=20),
    endings=st.lists(LINE_ENDINGS, min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
    bom=st.booleans(),
)
def test_both_decoders_read_any_valid_stream_alike(
    lines: list[str], endings: list[bytes], cuts: list[int], bom: bool
) -> None:
    """The hand-written decoder (the reference) and httpx-sse under its bound give the same
    events and the same ``retry`` for any UTF-8 stream within the limits, however it is cut;
    once the stream ends on an event boundary, the same last event id too (mid-event, httpx-sse
    counts an id once its event ends, WHATWG; the reference as soon as its line is read)."""
    out = bytearray(b"\xef\xbb\xbf" if bom else b"")
    ending = iter(endings * 100)
    for line in [*lines, "", ""]:  # ends on an event boundary
        e = next(ending)
        if out.endswith(b"\r") and e == b"\n" and not line:
            e = b"\r\n"  # CR then LF would read as one CRLF
        out += line.encode() + e
    reference = SSEDecoder(max_line_bytes=1 << 20, max_event_bytes=1 << 20)
    carried = HttpxSSEDecoder(max_line_bytes=1 << 20, max_event_bytes=1 << 20)
    chunks = chunked(bytes(out), cuts)
    assert feed_all(carried, chunks) == feed_all(reference, chunks)
    assert carried.retry == reference.retry
    assert carried.last_event_id == reference.last_event_id


def test_the_http_transport_parses_with_httpx_sse() -> None:
    """Issue 22, item 15: httpx-sse carries the transport's SSE parsing, under the bound."""
    transport = HttpTransport("http://127.0.0.1:1/mcp")
    transport.apply_limits(Limits(max_message_bytes=1000))  # what Client(limits=) does
    decoder = transport._sse_decoder()
    assert isinstance(decoder, HttpxSSEDecoder)
    assert (decoder.max_line_bytes, decoder.max_event_bytes) == (1016, 1000)


# --- the transport's SSE handling, end to end -----------------------------------------------


def _run_call_over(body: bytes) -> object:
    """Answer a tools/call with ``body`` as an SSE stream; return what the call gave."""
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "fuzz", "version": "0"},
    }

    def server(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":  # a resumption attempt: the stream is gone for good
            return httpx.Response(404 if request.headers.get("mcp-session-id") else 405)
        message = json.loads(request.content)
        if message.get("method") == "initialize":
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": init}
            return httpx.Response(200, json=answer, headers={"Mcp-Session-Id": "s"})
        if "id" not in message or "method" not in message:
            return httpx.Response(202)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    async def main() -> object:
        client = httpx.AsyncClient(transport=httpx.MockTransport(server))
        transport = HttpTransport(
            "http://127.0.0.1:1/mcp",
            http_client=client,
            resumption=StreamResumption(max_attempts=1, default_retry=0.0),
        )
        info = Implementation("fuzz", "0")
        limits = Limits(max_message_bytes=2048)
        try:
            with anyio.fail_after(10):
                async with Client(
                    transport, generation=Generation.V2025_11_25, client_info=info, limits=limits
                ) as mcp:
                    return await mcp.call_tool(ToolCall("x"), timeout=5)
        except MCPTasksError as exc:
            return exc
        finally:
            await client.aclose()

    return anyio.run(main, backend="trio")


@given(
    events=st.lists(
        st.one_of(
            st.binary(max_size=300),
            st.sampled_from(
                [
                    b"id: \xc3\xa9\n",
                    b"retry: " + b"9" * 400 + b"\n",
                    b"retry: -1\n",
                    b"data: \xff\n\n",
                    b'data: {"jsonrpc":"2.0","id":2,"result":{"content":[]}}\n\n',
                    b'data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":1}]}}\n\n',
                    b'data: {"jsonrpc":"2.0","id":99,"result":{}}\n\n',
                    b'data: {"jsonrpc":"2.0","method":"ping","id":"p"}\n\n',
                    b'data: {"jsonrpc":"2.0","method":"ping","id":"\\ud800"}\n\n',
                    b'data: {"jsonrpc":"2.0","id":2,"result":{"content":[],"x\\udc00":1}}\n\n',
                    b"data: " + b"a" * 3000 + b"\n\n",
                    b"\r\n\r\n",
                ]
            ),
        ),
        max_size=6,
    )
)
def test_any_sse_answer_is_a_result_or_a_typed_error(events: list[bytes]) -> None:
    """Issue 7, item 3: arbitrary SSE bytes answering a request, through the real transport and
    client: the call returns a result or raises one of the library's errors, nothing else."""
    outcome = _run_call_over(b"".join(events))
    assert isinstance(outcome, (CallToolResult, MCPTasksError)), outcome


def test_a_resumption_after_a_cut_asks_again_for_the_event_cut_short() -> None:
    """WHATWG: an id counts once its event ends. A stream cut inside event 2 resumes from 1
    with httpx-sse (the transport's), so the server sends event 2 again; the hand-written
    reference counted the id line at once and would have skipped event 2."""
    cut = b"id: 1\ndata: a\n\nid: 2\ndata: b"
    carried = HttpxSSEDecoder(max_line_bytes=256, max_event_bytes=512)
    assert carried.feed(cut) == [SSEEvent("a", "message", "1")]
    assert carried.last_event_id == "1"
    reference = SSEDecoder(max_line_bytes=256, max_event_bytes=512)
    reference.feed(cut)
    assert reference.last_event_id == "2"
