"""The library's promises against a hostile server over real HTTP on 127.0.0.1 (issue 7).

Each test reproduces one fault a real server was seen to produce (or could), and checks the
promise: a typed error or outcome, within the deadline the caller set (the ``fail_after``
bounds detect a hang; they are not timings), and memory bounded by the limits (measured by
what was buffered: tracemalloc's peak, the bytes the server wrote, the size of the books).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import subprocess
import tracemalloc
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Expired,
    Failed,
    Generation,
    HttpTransport,
    InputRouter,
    LeanHttpTransport,
    Limits,
    OrphanedTask,
    Poller,
    PollPolicy,
    StreamResumption,
    Timeouts,
    ToolCall,
)
from mcp_tasks_client.errors import (
    ClientClosed,
    CreatedTaskUnreadable,
    DeadlineExceeded,
    DecodeError,
    HTTPStatusError,
    InvalidParams,
    LimitExceeded,
    ProtocolError,
    RedirectRefused,
    RequestTimeout,
    ServerBusy,
    TaskNotFound,
    TLSError,
    TransportError,
)
from mcp_tasks_client.models import (
    ClientCapabilities,
    ElicitAction,
    ElicitationCapability,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.protocol import Violation
from mcp_tasks_client.testing import HOSTILE_INIT_RESULT as INIT_RESULT
from mcp_tasks_client.testing import Conn, Handler, HostileHTTPServer, Received, sse_event

pytestmark = pytest.mark.anyio

INFO = Implementation("hostile-tests", "0")
MiB = 1024 * 1024
NOW = dt.datetime.now(dt.timezone.utc).isoformat()


_KIND: dict[str, Callable[..., HttpTransport]] = {"http": HttpTransport}


@pytest.fixture(autouse=True, params=["httpx", "lean"])
def http_kind(request: pytest.FixtureRequest) -> str:
    """Every promise here is kept by both HTTP transports: HttpTransport on httpx, and the
    lean engine (LeanHttpTransport), except what needs an injected httpx client."""
    _KIND["http"] = (
        functools.partial(HttpTransport, engine="httpx")
        if request.param == "httpx"
        else LeanHttpTransport
    )
    return str(request.param)


@asynccontextmanager
async def connected(
    server: HostileHTTPServer,
    *,
    transport: dict[str, Any] | None = None,
    **client_kw: Any,
) -> AsyncIterator[Client]:
    kind = _KIND["http"]
    if kind is LeanHttpTransport and "http_client" in (transport or {}):
        pytest.skip("LeanHttpTransport takes no httpx client")
    http = kind(server.url, **(transport or {}))
    async with Client(
        http, generation=Generation.V2025_11_25, client_info=INFO, **client_kw
    ) as client:
        yield client


def task(task_id: str, status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttl": 60000,
        "pollInterval": 50,
        **extra,
    }


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


async def stall(request: Received, conn: Conn) -> None:
    await anyio.sleep_forever()


def stall_on(method: str) -> Handler:
    async def handler(request: Received, conn: Conn) -> None:
        if request.rpc_method == method:
            await anyio.sleep_forever()
        await conn.head(202, {"Content-Length": "0"})

    return handler


# --- 1. deadlines that hold ------------------------------------------------------------------


async def test_a_stalled_initialized_notification_is_bounded_by_the_initialize_timeout() -> None:
    """Item 1: `async with Client` returned never when notifications/initialized stalled."""
    async with HostileHTTPServer(on_notification=stall_on("notifications/initialized")) as srv:
        with anyio.fail_after(10), pytest.raises(RequestTimeout) as caught:
            async with connected(srv, timeouts=Timeouts(initialize=0.5)):
                pass  # pragma: no cover - the handshake times out first
    assert caught.value.method == "notifications/initialized"
    assert isinstance(caught.value, TimeoutError)


async def test_a_call_returns_at_its_deadline_when_the_cancel_notification_stalls() -> None:
    """Item 1: call_tool(timeout=...) stayed stuck 20 s behind a stalled notifications/cancelled
    POST. The cancellation now goes out in the background, bounded (C-13)."""
    server = HostileHTTPServer(stall, on_notification=stall_on("notifications/cancelled"))
    async with server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(RequestTimeout):
                    await client.call_tool(ToolCall("slow"), timeout=0.5)
                with anyio.fail_after(5):
                    while "notifications/cancelled" not in server.rpc_methods():
                        await anyio.sleep(0.02)


async def test_initialize_is_never_cancelled_by_notification() -> None:
    """C-13 exception: a timed-out initialize gets no notifications/cancelled; a timed-out
    tools/call on the same connection does (so this test can see one when it is sent)."""
    inits = 0

    async def first_only(request: Received, conn: Conn) -> None:
        nonlocal inits
        inits += 1
        if inits > 1:
            await anyio.sleep_forever()
        await conn.json({"jsonrpc": "2.0", "id": request.rpc_id, "result": INIT_RESULT})

    server = HostileHTTPServer(stall, on_initialize=first_only)
    async with server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(RequestTimeout):
                    await client.request("initialize", {}, timeout=0.2)
                with pytest.raises(RequestTimeout):
                    await client.request("tools/call", {"name": "x"}, timeout=0.2)
                while "notifications/cancelled" not in server.rpc_methods():
                    await anyio.sleep(0.02)
    cancelled = [r.params for r in server.received if r.rpc_method == "notifications/cancelled"]
    ids = {r.rpc_id: r.rpc_method for r in server.received if r.rpc_id is not None}
    assert [ids[c["requestId"]] for c in cancelled] == ["tools/call"]


# --- 2. sizes -----------------------------------------------------------------------------------


async def test_an_endless_json_body_is_refused_at_the_limit_without_buffering_it() -> None:
    """Item 2: a 1 GB body cost 1.1 GB of RSS. Now LimitExceeded at 1 MiB; the peak of what
    was allocated while reading 64 MiB stays a few MiB."""

    async def endless(request: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "application/json"})
        await conn.write(b'{"jsonrpc":"2.0","id":%d,"result":{"x":"' % request.rpc_id)
        await conn.endless(b"a" * 65536, limit=64 * MiB)

    async with HostileHTTPServer(endless) as server:
        tracemalloc.start()
        try:
            with anyio.fail_after(30):
                async with connected(server, limits=Limits(max_message_bytes=MiB)) as client:
                    with pytest.raises(LimitExceeded) as caught:
                        await client.call_tool(ToolCall("big"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert caught.value.limit == "max_message_bytes"
    assert caught.value.maximum == MiB
    assert peak < 8 * MiB, peak


async def test_a_declared_content_length_past_the_limit_is_refused_before_reading() -> None:
    async def huge(request: Received, conn: Conn) -> None:
        await conn.head(200, {"Content-Type": "application/json", "Content-Length": "1000000000"})
        await conn.endless(b"a" * 65536, limit=8 * MiB)

    async with HostileHTTPServer(huge) as server:
        with anyio.fail_after(20):
            async with connected(server, limits=Limits(max_message_bytes=MiB)) as client:
                with pytest.raises(LimitExceeded):
                    await client.call_tool(ToolCall("big"))


@pytest.mark.parametrize(
    ("prefix", "chunk", "where"),
    [
        (b"data: ", b"a" * 65536, "an SSE line"),  # one line that never ends
        (b"", b"data: " + b"a" * 1000 + b"\n", "an SSE event"),  # an event that never ends
    ],
)
async def test_an_endless_sse_line_or_event_is_refused_at_the_limit(
    prefix: bytes, chunk: bytes, where: str
) -> None:
    async def endless(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        await conn.write(prefix)
        await conn.endless(chunk, limit=64 * MiB)

    async with HostileHTTPServer(endless) as server:
        tracemalloc.start()
        try:
            with anyio.fail_after(30):
                async with connected(server, limits=Limits(max_message_bytes=MiB)) as client:
                    with pytest.raises(LimitExceeded) as caught:
                        await client.call_tool(ToolCall("big"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert caught.value.where == where
    assert peak < 8 * MiB, peak


async def test_an_endless_error_body_is_kept_only_up_to_its_limit() -> None:
    async def endless(request: Received, conn: Conn) -> None:
        await conn.head(500, {"Content-Type": "text/plain"})
        await conn.endless(b"E" * 65536, limit=64 * MiB)

    async with HostileHTTPServer(endless) as server:
        limits = Limits(max_error_body_bytes=4096)
        with anyio.fail_after(20):
            async with connected(server, limits=limits) as client:
                with pytest.raises(HTTPStatusError) as caught:
                    await client.call_tool(ToolCall("x"))
    assert caught.value.status_code == 500
    assert len(caught.value.body) == 4096
    assert server.bytes_sent < 64 * MiB  # the client stopped reading


async def test_an_endless_body_answering_a_notification_is_not_read() -> None:
    async def endless_202(request: Received, conn: Conn) -> None:
        await conn.head(202, {"Content-Type": "application/json"})
        await conn.endless(b" " * 65536, limit=64 * MiB)

    async with HostileHTTPServer(on_notification=endless_202) as server:
        with anyio.fail_after(20):
            async with connected(server) as client:
                await client.notify("notifications/roots/list_changed")
    assert server.bytes_sent < 64 * MiB


# --- 3. server values that used to be foreign exceptions ------------------------------------


def resumable_stream(*fields: bytes) -> Handler:
    """A tasks stream that sends ``fields`` (an id, a retry), then drops: resumption needed."""

    async def handler(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        await conn.write(b"".join(fields))

    return handler


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ((b"id: e-1\n", b"retry: " + b"9" * 400 + b"\n", b"data:\n\n"), "SSE retry"),
        (("id: é-1\n".encode(), b"data:\n\n"), "SSE id"),
    ],
)
async def test_sse_fields_the_client_cannot_use_are_decode_errors(
    fields: tuple[bytes, ...], path: str
) -> None:
    """Item 3: a 400-digit retry was an OverflowError, a non-ASCII id sent back as
    Last-Event-ID a UnicodeEncodeError; both escaped as ExceptionGroups."""
    async with HostileHTTPServer(resumable_stream(*fields)) as server:
        resume = {"resumption": StreamResumption(max_attempts=2, default_retry=0.01)}
        with anyio.fail_after(10):
            async with connected(server, transport=resume) as client:
                with pytest.raises(DecodeError) as caught:
                    await client.call_tool(ToolCall("x"))
    assert caught.value.path == path


async def test_bad_utf8_in_sse_is_a_decode_error_not_replaced() -> None:
    async def bad(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        answer = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"\xff"}]}}'
        await conn.write(b"data: " + answer % request.rpc_id + b"\n\n")

    async with HostileHTTPServer(bad) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(DecodeError) as caught:
                    await client.call_tool(ToolCall("x"))
    assert caught.value.path == "SSE line"


@pytest.mark.parametrize(
    ("field", "value"),
    [("pollInterval", 10**400), ("ttl", 10**400), ("ttl", -1), ("pollInterval", 1e300)],
)
async def test_numbers_no_float_or_datetime_can_hold_are_decode_errors(
    field: str, value: float
) -> None:
    async def answer(request: Received, conn: Conn) -> None:
        await conn.result(request, {**task("t-1"), field: value})

    async with HostileHTTPServer(answer) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(DecodeError) as caught:
                    await client.get_task("t-1")
    assert caught.value.path == f"$.result.{field}"


async def test_a_created_at_near_the_end_of_the_calendar_does_not_crash_the_poller() -> None:
    """Item 3: createdAt in year 9999 + ttl overflowed the datetime inside the Poller."""
    far = "9999-12-31T23:59:59Z"
    polls = 0

    async def answer(request: Received, conn: Conn) -> None:
        nonlocal polls
        if request.rpc_method == "tasks/get":
            polls += 1
            status = "completed" if polls > 1 else "working"
            await conn.result(request, task("t-1", status, createdAt=far, lastUpdatedAt=far))
        else:
            await conn.result(request, text_result("done"))

    async with HostileHTTPServer(answer) as server:
        policy = PollPolicy(floor=0.01, jitter=0.0, ttl_backstop=True)
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client, policy) as poller:
                outcome = await poller.wait("t-1", deadline=5)
    assert isinstance(outcome, Completed)


# --- 5. a flood of server->client requests --------------------------------------------------


async def test_a_flood_of_server_requests_runs_at_most_the_limit_of_handlers() -> None:
    """Item 5: 100k elicitations made 49k concurrent handler tasks. Now at most
    ``max_server_requests`` run; every other one is answered at once with -32000, and the
    input book stays within its capacity."""
    flood = 200
    answers: list[Any] = []

    async def ask(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for n in range(flood):
            meta = {"io.modelcontextprotocol/related-task": {"taskId": f"unknown-{n}"}}
            params = {"message": "?", "requestedSchema": {"type": "object"}, "_meta": meta}
            ask = {"jsonrpc": "2.0", "id": f"q-{n}", "method": "elicitation/create"}
            await conn.write(sse_event({**ask, "params": params}))
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")}
        await conn.write(sse_event(answer))

    async def record(request: Received, conn: Conn) -> None:
        answers.append(request.json)
        await conn.head(202, {"Content-Length": "0"})

    running = peak = 0
    release = anyio.Event()

    async def slow_user(ctx: Any, params: Any) -> ElicitResult:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        return ElicitResult(ElicitAction.DECLINE)

    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.default_elicitation(slow_user)
    limits = Limits(max_server_requests=8, max_answered_inputs=5)
    async with HostileHTTPServer(ask, on_response=record) as server:
        with anyio.fail_after(30):
            async with connected(
                server, limits=limits, capabilities=router.capabilities(ClientCapabilities())
            ) as client:
                router.attach(client)
                await client.call_tool(ToolCall("flood"))
                while len(answers) < flood - 8:
                    await anyio.sleep(0.02)
                release.set()
                while len(answers) < flood:
                    await anyio.sleep(0.02)
    assert peak == 8
    refused = [a for a in answers if a.get("error", {}).get("code") == -32000]
    assert len(refused) == flood - 8
    assert "max_server_requests=8" in refused[0]["error"]["message"]
    assert len(router.book) <= 5


async def test_a_server_request_with_an_over_long_id_is_refused_as_an_invalid_request() -> None:
    """The input book and the unanswered set are bounded by count only: a server could make
    each of their entries megabytes with a long string id. An id past
    ``Limits.max_request_id_chars`` is refused with -32600 Invalid Request, ``id: null`` (JSON-RPC
    2.0, 5: the id could not be taken), a warning says so, and no handler sees it."""
    long_id, longest_ok = "x" * 1025, "y" * 1024
    answers: list[Any] = []

    async def ask(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for request_id in (long_id, longest_ok):
            ask = {"jsonrpc": "2.0", "id": request_id, "method": "roots/list", "params": {}}
            await conn.write(sse_event(ask))
        while len(answers) < 2:
            await anyio.sleep(0.01)
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")}
        await conn.write(sse_event(answer))

    async def record(request: Received, conn: Conn) -> None:
        answers.append(request.json)
        await conn.head(202, {"Content-Length": "0"})

    handled: list[Any] = []

    async def roots(request: Any) -> dict[str, Any]:
        handled.append(request.id)
        return {"roots": []}

    async with HostileHTTPServer(ask, on_response=record) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                client.on_request("roots/list", roots)
                result = await client.call_tool(ToolCall("x"))
                warnings = list(client.warnings)
    assert result.content[0].text == "ok"  # type: ignore[union-attr]
    assert handled == [longest_ok]
    refused = next(a for a in answers if "error" in a)
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    assert "max_request_id_chars=1024" in refused["error"]["message"]
    assert [a["id"] for a in answers if "result" in a] == [longest_ok]
    [warning] = warnings
    assert isinstance(warning, LimitExceeded)
    assert (warning.limit, warning.maximum) == ("max_request_id_chars", 1024)


# --- 6. abandon: concurrent, bounded, and only what no other wait holds ----------------------


def working_tasks(stall_cancel: bool) -> tuple[Handler, list[str]]:
    cancelled: list[str] = []

    async def answer(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tasks/get":
            await conn.result(request, task(request.params["taskId"]))
        elif request.rpc_method == "tasks/cancel":
            cancelled.append(request.params["taskId"])
            if stall_cancel:
                await anyio.sleep_forever()
            await conn.result(request, task(request.params["taskId"], "cancelled"))
        else:
            await conn.error(request, -32601, "no")

    return answer, cancelled


async def test_abandon_sends_every_cancel_at_once_within_one_bound() -> None:
    """Item 6: 20 cancels were sent one after another, each bounded by request_timeout, so the
    caller regained control 20 x 30 s late. Now concurrently, within ``abandon_timeout``."""
    handler, cancelled = working_tasks(stall_cancel=True)
    ids = [f"t-{n}" for n in range(20)]
    # The bound: 5 s for all 20 (at load 12, 1 s once left two unsent); one after another,
    # each bounded by request_timeout (30 s), would be 600 s, far past the 30 s guard below.
    policy = PollPolicy(floor=0.01, jitter=0.0, cancel_on_abandon=True, abandon_timeout=5.0)
    # 20 stalled cancels hold 20 connections at once: a pool that has them (the lean one's
    # default is 16; the rest would wait for a slot, which is the pool doing its job).
    pool = {"max_connections": 32}
    async with HostileHTTPServer(handler) as server:
        with anyio.fail_after(30):
            async with (
                connected(server, transport=pool) as client,
                Poller(client, policy) as poller,
            ):
                with pytest.raises(DeadlineExceeded) as caught:
                    await poller.wait_all([task_snapshot(client, t) for t in ids], deadline=0.3)
    assert sorted(caught.value.cancel_sent) == sorted(ids)
    assert sorted(cancelled) == sorted(ids)  # all 20 reached the server before the bound


def task_snapshot(client: Client, task_id: str) -> Any:
    from mcp_tasks_client.models import Task

    return client.decode(task(task_id), Task)


async def test_abandon_leaves_a_task_another_wait_still_holds() -> None:
    handler, cancelled = working_tasks(stall_cancel=False)
    policy = PollPolicy(floor=0.01, jitter=0.0, cancel_on_abandon=True)
    async with HostileHTTPServer(handler) as server:
        with anyio.fail_after(15):
            async with connected(server) as client, Poller(client, policy) as poller:
                shared = task_snapshot(client, "shared")
                async with anyio.create_task_group() as group:
                    group.start_soon(lambda: _wait_quietly(poller, shared, 2.0))
                    await anyio.sleep(0.1)
                    with pytest.raises(DeadlineExceeded) as caught:
                        await poller.wait_all([shared, task_snapshot(client, "own")], deadline=0.2)
    assert caught.value.cancel_sent == ("own",)
    assert cancelled[:1] == ["own"]  # "shared" was cancelled only when its last wait gave up


async def _wait_quietly(poller: Poller, ref: Any, deadline: float) -> None:
    with pytest.raises(DeadlineExceeded):
        await poller.wait(ref, deadline=deadline)


# --- 7. close ends everything at once --------------------------------------------------------


async def test_closing_the_client_ends_pending_requests_and_waits_with_client_closed() -> None:
    """Item 7: pending requests ended only at their own timeout (a misleading RequestTimeout);
    a Poller wait was still pending 35 s after close."""
    handler, _ = working_tasks(stall_cancel=False)

    async def answer(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await anyio.sleep_forever()
        await handler(request, conn)

    errors: list[BaseException] = []

    async def expect_closed(coro: Any) -> None:
        try:
            await coro
        except ClientClosed as exc:
            errors.append(exc)

    policy = PollPolicy(floor=5.0, initial=5.0, jitter=0.0)
    async with HostileHTTPServer(answer) as server:
        http = HttpTransport(server.url)
        client = Client(http, generation=Generation.V2025_11_25, client_info=INFO)
        # The Poller needs no open client to start: entered first, it outlives the client.
        with anyio.fail_after(10):
            async with Poller(client, policy) as poller, anyio.create_task_group() as group:
                async with client:
                    group.start_soon(expect_closed, client.call_tool(ToolCall("x"), timeout=600))
                    ref = task_snapshot(client, "t-1")
                    group.start_soon(expect_closed, poller.wait(ref, deadline=600))
                    await anyio.sleep(0.2)
                while len(errors) < 2:
                    await anyio.sleep(0.01)
    assert len(errors) == 2


# --- 8. no lost task ids ---------------------------------------------------------------------


def late_create(delay: float, body: dict[str, Any] | None = None) -> Handler:
    async def answer(request: Received, conn: Conn) -> None:
        await anyio.sleep(delay)
        await conn.result(request, body or {"task": task("late-1")})

    return answer


async def test_a_task_created_after_start_timed_out_is_reported_not_lost() -> None:
    orphans: list[OrphanedTask] = []
    async with HostileHTTPServer(late_create(0.6)) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                client.on_orphaned_task(orphans.append)
                with pytest.raises(RequestTimeout):
                    task_created(await client.start(ToolCall("slow").as_task(), timeout=0.2))
                while not orphans:
                    await anyio.sleep(0.02)
    assert orphans[0].task_id == "late-1"
    assert orphans[0].reason == "timeout"
    assert orphans[0].tool == "slow"


async def test_a_task_created_after_start_was_cancelled_is_reported_not_lost() -> None:
    orphans: list[OrphanedTask] = []
    async with HostileHTTPServer(late_create(0.6)) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                client.on_orphaned_task(orphans.append)
                with anyio.move_on_after(0.2):
                    task_created(await client.start(ToolCall("slow").as_task(), timeout=30))
                while not orphans:
                    await anyio.sleep(0.02)
    assert (orphans[0].task_id, orphans[0].reason) == ("late-1", "cancelled")


def orphan_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcp_tasks_client.client" and r.levelno == logging.WARNING
    ]


def call_id(server: HostileHTTPServer) -> Any:
    return next(r.rpc_id for r in server.received if r.rpc_method == "tools/call")


async def test_a_late_created_task_is_logged_as_a_warning_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_tasks_client")
    async with HostileHTTPServer(late_create(0.6)) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(RequestTimeout):
                    await client.start(ToolCall("slow").as_task(), timeout=0.2)
                while not orphan_warnings(caplog):
                    await anyio.sleep(0.02)
    [warning] = orphan_warnings(caplog)
    assert "'late-1'" in warning
    assert "'slow'" in warning
    assert "(timeout)" in warning


async def test_an_orphan_watch_that_expires_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    """No answer within ``Timeouts.orphan_watch``: a task may exist that no one knows the id
    of, and the log says so, naming the tool and the request."""
    caplog.set_level(logging.WARNING, logger="mcp_tasks_client")
    async with HostileHTTPServer(stall) as server:
        with anyio.fail_after(10):
            async with connected(server, timeouts=Timeouts(orphan_watch=0.2)) as client:
                with pytest.raises(RequestTimeout):
                    await client.start(ToolCall("slow").as_task(), timeout=0.2)
                while not orphan_warnings(caplog):
                    await anyio.sleep(0.02)
    [warning] = orphan_warnings(caplog)
    assert f"'slow' (request {call_id(server)!r}) did not come within 0.2 s" in warning


async def test_closing_the_client_during_an_orphan_watch_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The close ended the watch silently: it marks every waiter done (ClientClosed) before it
    cancels anything, so the watch saw "done" and reported nothing. Now it warns."""
    caplog.set_level(logging.WARNING, logger="mcp_tasks_client")
    async with HostileHTTPServer(stall) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(RequestTimeout):
                    await client.start(ToolCall("slow").as_task(), timeout=0.2)
                assert orphan_warnings(caplog) == []  # the watch runs (60 s by default)
    [warning] = orphan_warnings(caplog)
    assert f"'slow' (request {call_id(server)!r}) did not come before the client closed" in warning


async def test_a_malformed_create_answer_still_yields_its_task_id() -> None:
    body = {"task": task("bad-1", ttl="soon")}
    async with HostileHTTPServer(late_create(0, body)) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(CreatedTaskUnreadable) as caught:
                    task_created(await client.start(ToolCall("x").as_task()))
    assert caught.value.task_id == "bad-1"
    assert caught.value.path == "$.result.task.ttl"


# --- tasks/result semantics (found by a third-party peer) ------------------------------------


async def test_an_early_tasks_result_error_is_a_violation_not_the_outcome() -> None:
    """A server answered tasks/result with -32602 "not completed yet" instead of blocking; the
    Poller ended the *completed* task with that error. Now the result is fetched at terminal."""
    polls = results = 0

    async def answer(request: Received, conn: Conn) -> None:
        nonlocal polls, results
        if request.rpc_method == "tasks/get":
            polls += 1
            status = "input_required" if polls < 3 else "completed"
            await conn.result(request, task("t-1", status))
        elif request.rpc_method == "tasks/result":
            results += 1
            if polls < 3:
                await conn.error(request, -32602, "task not completed yet")
            else:
                await conn.result(request, text_result("finally"))

    policy = PollPolicy(floor=0.01, jitter=0.0)
    async with HostileHTTPServer(answer) as server:
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client, policy) as poller:
                outcome = await poller.wait(task_snapshot(client, "t-1"), deadline=5)
                warnings = list(poller.warnings)
    assert isinstance(outcome, Completed)
    assert outcome.result.content[0].text == "finally"  # type: ignore[union-attr]
    violations = [w for w in warnings if isinstance(w, Violation)]
    assert [v.rule for v in violations] == ["T:465"]


async def test_a_tools_own_invalid_params_error_is_not_task_not_found() -> None:
    """-32602 from tasks/result of a failed task is the tool's error (V-12), not TaskNotFound."""

    async def answer(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tasks/get":
            await conn.result(request, task("t-1", "failed"))
        else:
            await conn.error(request, -32602, "bad argument 'scene'")

    async with HostileHTTPServer(answer) as server:
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client) as poller:
                outcome = await poller.wait("t-1", deadline=5)
    assert isinstance(outcome, Failed)
    assert isinstance(outcome.error, InvalidParams)
    assert not isinstance(outcome.error, TaskNotFound)


# --- the TTL backstop is the caller's choice ------------------------------------------------


@pytest.mark.parametrize("backstop", [False, True])
async def test_ttl_backstop_is_off_unless_asked(backstop: bool) -> None:
    """By default the server's status is trusted: a task past createdAt + ttl by the local
    clock still ends Completed; with ``ttl_backstop=True`` it ends Expired."""
    long_ago = "2020-01-01T00:00:00Z"
    polls = 0

    async def answer(request: Received, conn: Conn) -> None:
        nonlocal polls
        if request.rpc_method == "tasks/get":
            polls += 1
            status = "completed" if polls > 2 else "working"
            body = task("t-1", status, createdAt=long_ago, lastUpdatedAt=NOW, ttl=1000)
            await conn.result(request, body)
        else:
            await conn.result(request, text_result("done"))

    policy = PollPolicy(floor=0.01, jitter=0.0, ttl_backstop=backstop)
    async with HostileHTTPServer(answer) as server:
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client, policy) as poller:
                outcome = await poller.wait("t-1", deadline=5)
    assert isinstance(outcome, Expired if backstop else Completed)


# --- HTTP edges -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "retry_after", "expected"),
    [(429, "7", 7.0), (503, None, None), (503, "soon", None)],
)
async def test_429_and_503_are_server_busy_with_retry_after_kept(
    status: int, retry_after: str | None, expected: float | None
) -> None:
    async def busy(request: Received, conn: Conn) -> None:
        headers = {"Content-Length": "4"}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        await conn.head(status, headers)
        await conn.write(b"busy")

    async with HostileHTTPServer(busy) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(ServerBusy) as caught:
                    await client.call_tool(ToolCall("x"))
    assert (caught.value.status_code, caught.value.retry_after) == (status, expected)


@pytest.mark.parametrize("follow", [None, True])
async def test_a_redirect_is_refused_and_the_session_never_leaves_the_origin(
    follow: bool | None,
) -> None:
    """Weaker spot: with the caller's own AsyncClient(follow_redirects=True) the session id and
    custom headers went to another origin. No redirect is followed, whatever the client."""
    async with HostileHTTPServer() as elsewhere:

        async def redirect(request: Received, conn: Conn) -> None:
            await conn.head(307, {"Location": elsewhere.url, "Content-Length": "0"})

        async with HostileHTTPServer(redirect) as server:
            transport: dict[str, Any] = {"headers": {"Authorization": "Bearer secret"}}
            if follow is not None:
                transport["http_client"] = httpx.AsyncClient(follow_redirects=follow)
            with anyio.fail_after(10):
                async with connected(server, transport=transport) as client:
                    with pytest.raises(RedirectRefused) as caught:
                        await client.call_tool(ToolCall("x"))
            if follow is not None:
                await transport["http_client"].aclose()
    assert caught.value.location == elsewhere.url
    assert elsewhere.received == []


async def test_an_injected_client_keeps_the_transports_timeouts() -> None:
    """Weaker spot: an injected AsyncClient(timeout=0.3) turned a blocking tasks/result into
    StreamInterrupted after its read timeout. Per-request timeouts are the transport's."""

    async def slow_result(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        await anyio.sleep(1.0)
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("late")}
        await conn.write(sse_event(answer))

    async with HostileHTTPServer(slow_result) as server:
        http_client = httpx.AsyncClient(timeout=0.3)
        with anyio.fail_after(10):
            async with connected(server, transport={"http_client": http_client}) as client:
                result = await client.task_result("t-1", timeout=10)
        await http_client.aclose()
    assert result.content[0].text == "late"  # type: ignore[union-attr]


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key, cert = tmp / "key.pem", tmp / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return key, cert


async def test_a_self_signed_certificate_is_a_tls_error_naming_the_cause(tmp_path: Path) -> None:
    """Weaker spot: it failed as ConnectError('') with no word of TLS."""
    import ssl

    key, cert = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    async with HostileHTTPServer(tls=context) as server:
        with anyio.fail_after(20), pytest.raises(TLSError) as caught:
            async with connected(server):
                pass  # pragma: no cover - the handshake fails first
    assert "certificate" in caught.value.reason.lower()
    assert server.url in str(caught.value)


# --- bounded histories ---------------------------------------------------------------------


async def test_warnings_are_bounded_and_every_one_reaches_on_warning() -> None:
    """Weaker spot: `warnings` grew forever. 300 uncorrelated errors (null id, on the GET
    stream) keep the last 10; ``on_warning`` sees each one."""

    async def noisy(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for n in range(300):
            error = {"code": -32700, "message": f"parse error {n}"}
            await conn.write(sse_event({"jsonrpc": "2.0", "id": None, "error": error}))
        await anyio.sleep_forever()

    seen: list[Any] = []
    async with HostileHTTPServer(on_get=noisy) as server:
        with anyio.fail_after(10):
            async with connected(
                server, limits=Limits(max_warnings=10), on_warning=seen.append
            ) as client:
                await client.open_listen_stream()
                while len(seen) < 300:
                    await anyio.sleep(0.02)
                kept = list(client.warnings)
    assert len(kept) == 10
    assert [str(w) for w in kept] == [str(w) for w in seen[-10:]]


async def test_poller_warnings_are_bounded_under_a_flood_of_bad_status_notifications() -> None:
    """Each status notification the Poller cannot decode is a warning: 300 of them keep
    ``Limits.max_warnings``, the latest ones."""
    flood = 300

    async def noisy(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for n in range(flood):
            params = {"taskId": n, "status": "working"}  # a number where the id goes
            note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params}
            await conn.write(sse_event(note))
        await anyio.sleep_forever()

    seen: list[Any] = []
    async with HostileHTTPServer(on_get=noisy) as server:
        with anyio.fail_after(10):
            limits = Limits(max_warnings=10)
            async with connected(server, limits=limits) as client, Poller(client) as poller:
                # After the Poller's own handler: once this one saw them all, so did the Poller.
                client.on_notification("notifications/tasks/status", seen.append)
                await client.open_listen_stream()
                while len(seen) < flood:
                    await anyio.sleep(0.02)
                kept = list(poller.warnings)
    assert len(kept) == 10
    decode_errors = [w for w in kept if isinstance(w, DecodeError)]
    assert {w.path for w in decode_errors} == {"$.params.taskId"}
    assert [w.value for w in decode_errors] == list(range(flood - 10, flood))  # the latest


async def test_a_saturated_poller_says_so() -> None:
    """Weaker spot: max_in_flight saturation was invisible; polls_delayed counts it."""

    async def slow_get(request: Received, conn: Conn) -> None:
        await anyio.sleep(0.2)
        await conn.result(request, task(request.params["taskId"], "completed"))

    async def answer(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tasks/get":
            await slow_get(request, conn)
        else:
            await conn.result(request, text_result("ok"))

    policy = PollPolicy(floor=0.0, initial=0.0, jitter=0.0, max_in_flight=1)
    async with HostileHTTPServer(answer) as server:
        with anyio.fail_after(20):
            async with connected(server) as client, Poller(client, policy) as poller:
                refs = [task_snapshot(client, f"t-{n}") for n in range(4)]
                outcomes = await poller.wait_all(refs, deadline=15)
    assert all(isinstance(o, Completed) for o in outcomes.values())
    assert poller.polls_delayed > 0


async def test_a_flood_the_server_does_not_read_the_answers_to_stays_bounded() -> None:
    """Item 5, second half: when the server stops reading our answers, each refusal waits at
    most ``Timeouts.request`` (the reader reads nothing more meanwhile: back-pressure), so no
    task and no buffer grows with the flood."""
    flood, limit = 12, 4

    async def ask(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for n in range(flood):
            ask = {"jsonrpc": "2.0", "id": f"q-{n}", "method": "roots/list", "params": {}}
            await conn.write(sse_event(ask))
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")}
        await conn.write(sse_event(answer))

    running = peak = 0

    async def roots(request: Any) -> dict[str, Any]:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    async with HostileHTTPServer(ask, on_response=stall) as server:
        with anyio.fail_after(30):
            async with connected(
                server,
                limits=Limits(max_server_requests=limit),
                timeouts=Timeouts(request=0.2),
            ) as client:
                client.on_request("roots/list", roots)
                await client.call_tool(ToolCall("flood"), timeout=20)
                refusals = [w for w in client.warnings if isinstance(w, RequestTimeout)]
    assert peak == limit
    assert len(refusals) == flood - limit


async def test_a_cancelled_caller_gets_control_back_within_the_abandon_bound() -> None:
    """Item 6: the caller's own cancellation (not only the deadline) returns within
    ``abandon_timeout`` although every tasks/cancel stalls."""
    handler, cancelled = working_tasks(stall_cancel=True)
    policy = PollPolicy(floor=0.01, jitter=0.0, cancel_on_abandon=True, abandon_timeout=0.5)
    async with HostileHTTPServer(handler) as server:
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client, policy) as poller:
                refs = [task_snapshot(client, f"t-{n}") for n in range(10)]
                with anyio.move_on_after(0.3) as scope:
                    await poller.wait_all(refs)
    assert scope.cancelled_caught
    assert sorted(cancelled) == sorted(f"t-{n}" for n in range(10))


async def test_a_bug_inside_the_poller_ends_that_wait_with_a_typed_error() -> None:
    """Item 3's second half: whatever goes wrong inside the Poller's own tasks ends the waits it
    concerns with a typed error; it never escapes `async with Poller` as an ExceptionGroup."""
    handler, _ = working_tasks(stall_cancel=False)

    def broken_observe(*args: Any) -> None:  # what a poll answer is handed to
        raise RuntimeError("a bug")

    async with HostileHTTPServer(handler) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                poller = Poller(client, PollPolicy(floor=0.01, initial=0.01, jitter=0.0))
                async with poller:
                    poller._accepted = broken_observe  # type: ignore[method-assign,assignment]
                    with pytest.raises(TransportError) as caught:
                        await poller.wait(task_snapshot(client, "t-1"), deadline=5)
    assert isinstance(caught.value.__cause__, RuntimeError)


# --- found by an independent hostile probe ----------------------------------------------------


async def test_a_wait_on_a_bare_task_id_holds_its_deadline_while_tasks_get_stalls() -> None:
    """Resuming by bare id fetches the first snapshot within the wait's deadline, not within
    ``request_timeout`` (30 s)."""
    async with HostileHTTPServer(stall) as server:
        with anyio.fail_after(10):
            async with connected(server) as client, Poller(client) as poller:
                with pytest.raises(DeadlineExceeded) as caught:
                    await poller.wait("t-1", deadline=0.5)
    assert caught.value.task_ids == ("t-1",)


async def test_a_snapshot_of_another_task_is_a_decode_error() -> None:
    """V-26: tasks/get for t-1 answered with t-2 would have been tracked as t-2 (or raised a
    ValueError inside the status machine)."""

    async def other(request: Received, conn: Conn) -> None:
        await conn.result(request, task("t-2"))

    async with HostileHTTPServer(other) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(DecodeError) as caught:
                    await client.get_task("t-1")
                async with Poller(client) as poller:
                    with pytest.raises(DecodeError):
                        await poller.wait("t-1", deadline=5)
    assert caught.value.path == "$.result.taskId"


async def test_a_cursor_given_twice_is_a_protocol_error_not_an_endless_listing() -> None:
    async def loop(request: Received, conn: Conn) -> None:
        await conn.result(request, {"tasks": [task("t-1")], "nextCursor": "again"})

    async with HostileHTTPServer(loop) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(ProtocolError, match="twice"):
                    async for _ in client.list_tasks():
                        pass


async def test_a_compressed_body_is_refused_since_identity_was_asked_for() -> None:
    """A gzip body could inflate a thousandfold inside the HTTP stack before any limit sees
    it; the client asks for identity and refuses anything else."""
    import gzip

    async def gzipped(request: Received, conn: Conn) -> None:
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("x" * 1000)}
        body = gzip.compress(json.dumps(answer).encode())
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        await conn.head(200, {**headers, "Content-Length": str(len(body))})
        await conn.write(body)

    async with HostileHTTPServer(gzipped) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(ProtocolError, match="gzip"):
                    await client.call_tool(ToolCall("x"))
    assert all(r.headers.get("accept-encoding") == "identity" for r in server.received)


async def test_cookies_are_not_kept() -> None:
    """A server setting a new cookie on every answer would grow the jar without bound; MCP
    carries its session in a header, so the transport's own client keeps no cookie."""
    count = 0

    async def cookie(request: Received, conn: Conn) -> None:
        nonlocal count
        count += 1
        body = json.dumps({"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")})
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        await conn.head(200, {**headers, "Set-Cookie": f"c{count}=v; Path=/"})
        await conn.write(body.encode())

    async with HostileHTTPServer(cookie) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                for _ in range(3):
                    await client.call_tool(ToolCall("x"))
    assert not any("cookie" in r.headers for r in server.received)


async def test_a_body_that_is_not_utf8_is_a_decode_error() -> None:
    """X:3.3: JSON-RPC is UTF-8; json.loads would have guessed UTF-16 from the bytes."""

    async def utf16(request: Received, conn: Conn) -> None:
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")}
        body = json.dumps(answer).encode("utf-16")
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        await conn.head(200, headers)
        await conn.write(body)

    async with HostileHTTPServer(utf16) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(DecodeError, match="not valid JSON"):
                    await client.call_tool(ToolCall("x"))


async def test_a_listen_stream_that_never_starts_is_bounded() -> None:
    async with HostileHTTPServer(on_get=stall) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(RequestTimeout):
                    await client.open_listen_stream(timeout=0.5)


async def test_a_listen_stream_that_timed_out_is_abandoned_not_opened_later() -> None:
    """After ``open_listen_stream`` raised RequestTimeout, the GET went on in the background: a
    server answering it a second later delivered its notifications to a caller who was told
    there was no stream. The attempt is now cancelled with the opener: the connection closes."""
    dropped = anyio.Event()
    answer = anyio.Event()

    async def late(request: Received, conn: Conn) -> None:
        async with anyio.create_task_group() as group:

            async def closed() -> None:
                await conn.client_closed()
                dropped.set()
                group.cancel_scope.cancel()

            group.start_soon(closed)
            await answer.wait()  # the test's word, not a clock: the answer comes late
            await conn.start_sse()
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "late"}}
            await conn.write(sse_event(note))
            await anyio.sleep_forever()

    notes: list[Any] = []
    async with HostileHTTPServer(on_get=late) as server:
        with anyio.fail_after(60):
            async with connected(server) as client:
                client.on_notification("notifications/message", notes.append)
                with pytest.raises(RequestTimeout):
                    # Long enough for the GET to reach the server on a loaded machine.
                    await client.open_listen_stream(timeout=5)
                assert any(r.http_method == "GET" for r in server.received)
                with anyio.move_on_after(30):  # a bound, not a window: it comes at once
                    await dropped.wait()  # the client closed the GET attempt
                answer.set()  # otherwise the server answers now, late
                assert dropped.is_set()
                assert notes == []
                assert list(client.warnings) == []


async def test_closing_the_client_ends_a_listen_stream_that_never_started() -> None:
    """A GET stream whose headers never come held `Client.__aexit__` up (the transport waited
    for the start); now the opener gets ClientClosed and the close returns."""
    async with HostileHTTPServer(on_get=stall) as server:
        errors: list[BaseException] = []

        async def open_it(client: Client) -> None:
            try:
                await client.open_listen_stream(timeout=600)
            except ClientClosed as exc:
                errors.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                async with connected(server) as client:
                    group.start_soon(open_it, client)
                    while not any(r.http_method == "GET" for r in server.received):
                        await anyio.sleep(0.01)
                while not errors:
                    await anyio.sleep(0.01)
    assert isinstance(errors[0], ClientClosed)


async def test_no_task_id_is_lost_however_a_start_is_cancelled() -> None:
    """Item 8: a cancellation landing in the same instant as the answer lost the task (2 in 39
    on trio, 8 in 142 on asyncio). Swept across the round trip: every task the server created
    is either returned to its caller or reported as an OrphanedTask."""
    created: list[str] = []

    async def create(request: Received, conn: Conn) -> None:
        task_id = f"task-{len(created)}"
        created.append(task_id)
        await conn.result(request, {"task": task(task_id)})

    orphans: list[OrphanedTask] = []
    returned: list[str] = []
    async with HostileHTTPServer(create) as server:
        with anyio.fail_after(200):
            async with connected(server) as client:
                client.on_orphaned_task(orphans.append)
                for n in range(400):
                    with anyio.move_on_after(0.0001 * (n % 40)):
                        started = task_created(await client.start(ToolCall("x").as_task()))
                        returned.append(started.task.task_id)
                # Orphans are reported as their answers arrive; on a loaded machine the last
                # of up to 400 queued POSTs can take tens of seconds (seen: over 40 s with the
                # suite and a benchmark sharing two cores). The client reads an orphan's answer
                # for Timeouts.orphan_watch (60 s): wait that long, no longer (a bound, not a
                # timing; the loop ends as soon as every task is accounted for).
                with anyio.move_on_after(client.timeouts.orphan_watch + 5):
                    # Every POST was sent (none is given up before it is), so all 400 reach
                    # the server; until the last has, "accounted == created" can hold with
                    # one still on its way (the test's race, seen on asyncio under load).
                    while len(created) < 400 or len(returned) + len(orphans) < len(created):
                        await anyio.sleep(0.01)
    assert sorted(returned + [o.task_id for o in orphans]) == sorted(created)


async def test_a_slow_watcher_gets_the_latest_snapshot_not_a_growing_queue() -> None:
    """`watch()` queued every snapshot: a flood of status notifications while the caller was
    busy held 300+ MiB. Snapshots now fold into the latest; the backlog is bounded."""
    sent = anyio.Event()

    async def flood(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        for n in range(2000):
            status = {**task("t-1"), "statusMessage": f"step {n}"}
            note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": status}
            await conn.write(sse_event(note))
        done = {"jsonrpc": "2.0", "method": "notifications/tasks/status"}
        await conn.write(sse_event({**done, "params": task("t-1", "completed")}))
        sent.set()
        await anyio.sleep_forever()

    async def answer(request: Received, conn: Conn) -> None:
        await conn.result(request, text_result("done"))

    policy = PollPolicy(initial=600, floor=600, jitter=0.0)
    seen: list[Any] = []
    async with HostileHTTPServer(answer, on_get=flood) as server:
        with anyio.fail_after(20):
            async with connected(server) as client, Poller(client, policy) as poller:
                watching = poller.watch(task_snapshot(client, "t-1"))
                seen.append(await watching.__anext__())
                await client.open_listen_stream()
                await sent.wait()
                await anyio.sleep(0.2)  # let the reader take in the whole flood
                seen += [item async for item in watching]
    assert len(seen) <= 3
    assert seen[-1].status.value == "completed"


async def test_known_tools_are_bounded() -> None:
    pages = 0

    async def tools(request: Received, conn: Conn) -> None:
        nonlocal pages
        pages += 1
        listed = [
            {"name": f"tool-{pages}-{n}", "inputSchema": {"type": "object"}} for n in range(5)
        ]
        cursor = {"nextCursor": f"page-{pages}"} if pages < 4 else {}
        await conn.result(request, {"tools": listed, **cursor})

    async with HostileHTTPServer(tools) as server:
        with anyio.fail_after(10):
            async with connected(server, limits=Limits(max_known_tools=7)) as client:
                names = [tool.name async for tool in client.list_tools()]
                known = [name for name in names if client.known_tool(name) is not None]
    assert len(names) == 20
    assert known == names[-7:]


# --- strings that are not Unicode text --------------------------------------------------------


async def test_a_request_id_with_a_lone_surrogate_is_a_decode_error_not_a_crash() -> None:
    """JSON allows ``"\\ud800"``, which no UTF-8 can carry: a ping with that id was answered,
    and writing the answer raised UnicodeEncodeError inside the client's task group (an
    ExceptionGroup out of ``async with Client``). The message is now refused at parse time as
    a DecodeError naming the path; the call whose stream carried it fails with it, and the
    client stays usable."""
    calls = 0

    async def ping_then_answer(request: Received, conn: Conn) -> None:
        nonlocal calls
        calls += 1
        await conn.start_sse()
        if calls == 1:
            await conn.write(b'data: {"jsonrpc":"2.0","id":"\\ud800","method":"ping"}\n\n')
        answer = {"jsonrpc": "2.0", "id": request.rpc_id, "result": text_result("ok")}
        await conn.write(sse_event(answer))

    async with HostileHTTPServer(ping_then_answer) as server:
        with anyio.fail_after(10):
            async with connected(server) as client:
                with pytest.raises(DecodeError) as caught:
                    await client.call_tool(ToolCall("x"))
                again = await client.call_tool(ToolCall("x"))
    assert caught.value.path == "$.id"
    assert "surrogate" in caught.value.problem
    str(caught.value).encode()  # the error itself is writable text
    assert again.content[0].text == "ok"  # type: ignore[union-attr]
    assert [r for r in server.received if r.http_method == "POST" and r.rpc_method is None] == []


async def test_a_tracked_2025_task_asking_past_max_inputs_per_task_is_refused() -> None:
    """Issue 21, item 2, in 2025-11-25: a task a Poller tracks has every question remembered
    until its tracking ends, so ``Limits.max_inputs_per_task`` bounds them: the request past
    it is answered -32000 naming the limit, and no handler sees it."""
    answers: list[Any] = []
    gets = [0]

    async def record(request: Received, conn: Conn) -> None:
        answers.append(request.json)
        await conn.head(202, {"Content-Length": "0"})

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method != "tasks/get":
            await conn.result(request, text_result("ok"))
            return
        gets[0] += 1
        if gets[0] == 1:
            await conn.result(request, task("t-1", "input_required"))
            return
        if gets[0] == 2:
            await conn.start_sse()
            for n in range(6):
                meta = {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}
                params = {"message": "?", "requestedSchema": {"type": "object"}, "_meta": meta}
                ask = {"jsonrpc": "2.0", "id": f"q-{n}", "method": "elicitation/create"}
                await conn.write(sse_event({**ask, "params": params}))
            reply = {
                "jsonrpc": "2.0",
                "id": request.rpc_id,
                "result": task("t-1", "input_required"),
            }
            await conn.write(sse_event(reply))
            return
        status = "completed" if len(answers) >= 6 else "input_required"
        await conn.result(request, task("t-1", status))

    seen: list[str] = []

    async def accept(ctx: Any, params: Any) -> ElicitResult:
        seen.append(str(ctx.request_id))
        return ElicitResult(ElicitAction.DECLINE)

    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.on_elicitation("t-1", accept)
    limits = Limits(max_inputs_per_task=5)
    policy = PollPolicy(floor=0.01, initial=0.01, jitter=0.0, open_result_on_input_required=False)
    async with HostileHTTPServer(serve, on_response=record) as server:
        with anyio.fail_after(30):
            async with connected(
                server, limits=limits, capabilities=router.capabilities(ClientCapabilities())
            ) as client:
                router.attach(client)
                async with Poller(client, policy, inputs=router) as poller:
                    await poller.wait("t-1", deadline=20)
    refused = [a for a in answers if "error" in a]
    assert [a["id"] for a in refused] == ["q-5"]
    assert refused[0]["error"]["code"] == -32000
    assert "max_inputs_per_task=5" in refused[0]["error"]["message"]
    assert sorted(seen) == [f"q-{n}" for n in range(5)]
