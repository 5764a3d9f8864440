"""The inline answer read in one step (issue 39 item 2): its envelope decoded and matched to its
request together, and the loop's clock and cancellation check found once.

- ``parse_answer`` (the body of a request's own POST) reads exactly what the general way
  (``parse_message``, then a null-id error taken as the request's answer) reads, whatever
  arrives: the same message, or a DecodeError naming the same path (C-01..C-03); a
  hypothesis property over valid, mutated and arbitrary messages, with the request's id and
  others.
- ``RPCConnection.settle`` resolves a pending request once, as ``receive`` would, and leaves
  an abandoned or unknown id to ``receive`` (C-02, C-47).
- Over real HTTP on 127.0.0.1, both engines, both loops: a ``tasks/get`` answered the common
  way is a Task, and each unusual answer (another id, a boolean id, a result that is not a
  Task, malformed JSON, an error with a null id) is the typed error it was before the one-step
  path.
- ``loop_clock`` and ``loop_checkpoint`` are anyio's own clock and check for the running loop
  (simulated time on trio's mock clock; a cancelled scope's cancellation).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest
import trio.testing
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tasks_client import Client, Generation, HttpTransport
from mcp_tasks_client._codec._converter import dumps as _dumps
from mcp_tasks_client._codec.messages import (
    encode_message,
    parse_answer,
    parse_message,
    serialize_message,
)
from mcp_tasks_client._io._deadlines import loop_checkpoint, loop_clock
from mcp_tasks_client._sansio.connection import LateResponse, ResultReceived, RPCConnection
from mcp_tasks_client.errors import DecodeError, TaskNotFound, UnexpectedResponse
from mcp_tasks_client.models import (
    ErrorObject,
    Implementation,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    Task,
)
from mcp_tasks_client.testing import (
    Conn,
    HostileHTTPServer,
    Received,
    json_objects,
    json_values,
    jsonrpc_messages,
    mutated,
)

NOW = dt.datetime.now(dt.timezone.utc).isoformat()
TASK = {
    "taskId": "t-1",
    "status": "working",
    "createdAt": NOW,
    "lastUpdatedAt": NOW,
    "ttl": 60000,
    "pollInterval": 50,
}


def general(data: bytes, request_id: RequestId) -> JSONRPCMessage:
    """The general way, as the transport read a POST's JSON body before the one-step path."""
    message = parse_message(data)
    if isinstance(message, JSONRPCError) and message.id is None:
        return JSONRPCError(request_id, message.error)
    return message


def outcome(read: Callable[[bytes, RequestId], JSONRPCMessage], data: bytes, rid: int) -> Any:
    try:
        return read(data, rid)
    except DecodeError as exc:
        return ("DecodeError", exc.path, exc.problem)


_IDS = st.sampled_from([7, 8, 1, 0, -7, "7", True, False, 7.0, 1.0, None])
_ENVELOPES = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2])},
    optional={
        "id": _IDS,
        "result": json_objects() | json_values(),
        "error": st.fixed_dictionaries({"code": st.integers(-32700, -32000), "message": st.text()})
        | json_values(),
        "method": st.sampled_from(["tasks/get", "notifications/x"]) | json_values(),
        "extra": json_values(),
    },
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_answer_reads_what_the_general_way_reads(data: st.DataObject) -> None:
    """C-01..C-03: whatever a request's POST body holds, the one-step reading is the general
    reading: the same message, or a DecodeError naming the same path and problem."""
    rid = data.draw(st.sampled_from([1, 7, 8]), label="request id")
    # The common answer's shape, with an id that may or may not be the request's (True == 1
    # and 7.0 == 7 in Python, and neither is an id: C-02).
    near_common = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": st.sampled_from([rid, rid, True, False, float(rid), str(rid), rid + 1, None]),
            "result": json_objects() | json_values(),
        }
    )
    value = data.draw(
        near_common
        | _ENVELOPES
        | jsonrpc_messages().map(encode_message)
        | jsonrpc_messages().map(encode_message).flatmap(mutated)
        | json_values(),
        label="value",
    )
    raw = _dumps(value)
    assert outcome(parse_answer, raw, rid) == outcome(general, raw, rid)


def written(message: JSONRPCMessage) -> Any:
    """What writing ``message`` gives: its bytes, or the exception's type and text."""
    try:
        return serialize_message(message)
    except Exception as exc:
        return (type(exc), str(exc))


def written_the_general_way(message: JSONRPCMessage) -> Any:
    try:
        return _dumps(encode_message(message))
    except Exception as exc:
        return (type(exc), str(exc))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    message=jsonrpc_messages()
    | st.builds(
        JSONRPCRequest,
        st.integers() | st.text(max_size=8),
        st.sampled_from(["tasks/get", "tools/call"]),
        json_objects(max_size=4),
    )
)
def test_a_message_is_written_as_the_general_way_writes_it(message: JSONRPCMessage) -> None:
    """Issue 39: the request's bytes through the C encoder made once are the bytes
    ``dumps(encode_message(...))`` writes (compact, UTF-8, no NaN), for any message."""
    assert written(message) == written_the_general_way(message)


def test_what_cannot_be_written_fails_as_it_always_did() -> None:
    """A circular value, a NaN, an object JSON has no form for, a lone surrogate: the same
    exception and text as ``dumps`` (the C encoder made once checks no circularity: it runs
    into RecursionError, and ``dumps`` then writes the value again)."""
    circular: dict[str, Any] = {}
    circular["again"] = circular
    unwritable: tuple[Any, ...] = (
        circular,
        {"n": float("nan")},
        {"n": [float("inf")]},
        {"o": object()},
        {"s": "\ud800"},
        {(1, 2): "a tuple key"},
    )
    for params in unwritable:
        message = JSONRPCRequest(7, "tasks/get", params)
        got = written(message)
        assert got == written_the_general_way(message)
        assert isinstance(got, tuple), got  # each one fails


_BODY_SHAPES: list[Callable[[bytes], bytes]] = [
    lambda raw: raw,
    lambda raw: b"\xef\xbb\xbf" + raw,  # a UTF-8 BOM
    lambda raw: b" " + raw,
    lambda raw: raw + b"\r\n",
    lambda raw: raw + b"{}",  # more after the value
    lambda raw: raw[:-1],  # cut short
    lambda raw: raw.replace(b'"2.0"', b'"2.0\\ud800"', 1),  # a lone surrogate, escaped
    lambda raw: raw.replace(b'"2.0"', b'"\\u0032.0"', 1),  # an escape that is fine
    lambda raw: raw.replace(b'"2.0"', b'"2.0\xff"', 1),  # not UTF-8
    lambda raw: raw.replace(b"}", b',"n":NaN}', 1),
    lambda raw: raw.replace(b"}", b',"n":1e999}', 1),
    lambda raw: raw.replace(b"}", b',"n":-Infinity}', 1),
    lambda raw: b"[" * 5000 + b"]" * 5000,  # deeper than the parser goes
]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_answer_reads_any_body_bytes_as_the_general_way(data: st.DataObject) -> None:
    """Issue 39: the body is read by the strict decoder's scanner directly only when nothing
    in it needs ``loads``'s care; whatever the bytes (a BOM, whitespace, more after the value,
    cut short, escapes, a lone surrogate, bytes that are not UTF-8, NaN, a number out of
    range, nesting too deep), the value or the DecodeError is the general way's."""
    rid = data.draw(st.sampled_from([1, 7]), label="request id")
    value = data.draw(
        st.fixed_dictionaries(
            {"jsonrpc": st.just("2.0"), "id": st.just(rid), "result": json_objects()}
        )
        | jsonrpc_messages().map(encode_message),
        label="value",
    )
    shape = data.draw(st.sampled_from(_BODY_SHAPES), label="shape")
    raw = shape(_dumps(value))
    assert outcome(parse_answer, raw, rid) == outcome(general, raw, rid)


def test_parse_answer_reads_the_common_answer_and_falls_back_for_anything_else() -> None:
    result = {"task": dict(TASK)}
    common = _dumps({"jsonrpc": "2.0", "id": 7, "result": result})
    read = parse_answer(common, 7)
    assert type(read) is JSONRPCResponse
    assert read.id == 7
    assert read.result == result
    # Another id, a string id, a boolean one: read as the general way reads them.
    assert parse_answer(_dumps({"jsonrpc": "2.0", "id": 8, "result": {}}), 7) == (
        JSONRPCResponse(8, {})
    )
    assert parse_answer(_dumps({"jsonrpc": "2.0", "id": "7", "result": {}}), 7) == (
        JSONRPCResponse("7", {})
    )
    with pytest.raises(DecodeError) as caught:
        parse_answer(_dumps({"jsonrpc": "2.0", "id": True, "result": {}}), 1)
    assert caught.value.path == "$.id"
    # A null-id error on the request's own stream is the request's answer.
    error = parse_answer(
        _dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "no"}}), 7
    )
    assert error == JSONRPCError(7, ErrorObject(-32602, "no", None))
    with pytest.raises(DecodeError) as caught:
        parse_answer(b'{"jsonrpc": "2.0", "id": 7, "result": ', 7)
    assert "not valid JSON" in caught.value.problem


def test_settle_resolves_a_pending_request_once_and_leaves_the_rest_to_receive() -> None:
    """C-02: an answer resolves its pending request exactly once; C-47: one for a request the
    caller gave up on stays a late answer; an id never sent stays UnexpectedResponse."""
    connection = RPCConnection()
    first = connection.request("tasks/get", {"taskId": "a"})
    second = connection.request("tasks/get", {"taskId": "b"})
    assert connection.settle(first.id) is True
    assert first.id not in connection.pending
    assert second.id in connection.pending
    assert connection.settle(first.id) is False  # resolved once
    with pytest.raises(UnexpectedResponse):
        connection.receive(JSONRPCResponse(first.id, {}))
    connection.abandon(second.id)
    assert connection.settle(second.id) is False
    late = connection.receive(JSONRPCResponse(second.id, {}))
    assert isinstance(late, LateResponse)
    assert late.method == "tasks/get"
    assert connection.settle(99) is False
    third = connection.request("tasks/get", None)
    assert connection.receive(JSONRPCResponse(third.id, {"x": 1})) == ResultReceived(
        third.id, "tasks/get", {"x": 1}
    )


# --- over real HTTP ---------------------------------------------------------------------------


def answering(body: Callable[[Received], bytes]) -> Callable[[Received, Conn], Any]:
    async def handler(request: Received, conn: Conn) -> None:
        if request.rpc_method != "tasks/get":
            await conn.head(202, {"Content-Length": "0"})
            return
        payload = body(request)
        await conn.head(
            200, {"Content-Type": "application/json", "Content-Length": str(len(payload))}
        )
        await conn.write(payload)

    return handler


Engine = Literal["lean", "httpx"]


@asynccontextmanager
async def connected(server: HostileHTTPServer, engine: Engine) -> AsyncIterator[Client]:
    transport = HttpTransport(server.url, engine=engine)
    async with Client(
        transport, generation=Generation.V2025_11_25, client_info=Implementation("t", "0")
    ) as client:
        yield client


ENGINES = pytest.mark.parametrize("engine", ["lean", "httpx"])


@pytest.mark.anyio
@ENGINES
async def test_the_common_answer_is_the_task_and_leaves_nothing_pending(engine: Engine) -> None:
    def body(request: Received) -> bytes:
        return _dumps({"jsonrpc": "2.0", "id": request.rpc_id, "result": TASK})

    async with HostileHTTPServer(answering(body)) as server:
        with anyio.fail_after(10):
            async with connected(server, engine) as client:
                for _ in range(3):
                    task = await client.get_task("t-1")
                    assert isinstance(task, Task)
                    assert task.task_id == "t-1"
                session = client._session
                assert session._connection.pending == {}
                assert session._waiters == {}


def _another_id(request: Received) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request.rpc_id + 1000, "result": TASK})


def _boolean_id(request: Received) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": True, "result": TASK})


def _not_a_task(request: Received) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request.rpc_id, "result": {**TASK, "ttl": "soon"}})


def _malformed(request: Received) -> bytes:
    return b'{"jsonrpc": "2.0", "id": ' + str(request.rpc_id).encode() + b', "result": {'


def _null_id_error(request: Received) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "gone"}})


@pytest.mark.anyio
@ENGINES
@pytest.mark.parametrize(
    ("body", "error", "check"),
    [
        (_another_id, UnexpectedResponse, lambda exc: exc.message_id > 1000),
        (_boolean_id, DecodeError, lambda exc: exc.path == "$.id"),
        (_not_a_task, DecodeError, lambda exc: exc.path == "$.result.ttl"),
        (_malformed, DecodeError, lambda exc: "not valid JSON" in exc.problem),
        (_null_id_error, TaskNotFound, lambda exc: exc.code == -32602),
    ],
    ids=["another-id", "boolean-id", "not-a-task", "malformed-json", "null-id-error"],
)
async def test_an_unusual_answer_is_the_typed_error_it_always_was(
    engine: Engine,
    body: Callable[[Received], bytes],
    error: type[Exception],
    check: Callable[[Any], bool],
) -> None:
    """C-02/C-03 and the codec's promise: the one-step path takes only the common answer;
    every other one goes the general way and ends in the same typed error."""
    async with HostileHTTPServer(answering(body)) as server:
        with anyio.fail_after(10):
            async with connected(server, engine) as client:
                with pytest.raises(error) as caught:
                    await client.get_task("t-1")
    assert check(caught.value), caught.value


# --- the loop's clock and check, found once ---------------------------------------------------


@pytest.mark.anyio
async def test_loop_clock_is_anyios_clock_for_the_running_loop() -> None:
    clock = loop_clock()
    before = anyio.current_time()
    now = clock()
    after = anyio.current_time()
    assert before <= now <= after


def test_loop_clock_follows_simulated_time_on_trios_mock_clock() -> None:
    mock = trio.testing.MockClock()

    async def main() -> tuple[float, float, float]:
        clock = loop_clock()
        start = clock()
        mock.jump(3600)
        return start, clock(), anyio.current_time()

    start, later, anyio_now = anyio.run(main, backend="trio", backend_options={"clock": mock})
    assert later - start == pytest.approx(3600)
    assert later == anyio_now


@pytest.mark.anyio
async def test_loop_checkpoint_raises_in_a_cancelled_scope_and_passes_otherwise() -> None:
    check = loop_checkpoint()
    await check()  # nothing cancelled: returns
    reached = False
    with anyio.CancelScope() as scope:
        scope.cancel()
        await check()
        reached = True
    assert scope.cancelled_caught
    assert not reached
