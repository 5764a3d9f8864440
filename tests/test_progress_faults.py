"""Progress for tasks against scripted servers: what a real server may send that the polite
peers do not (V-24: progress that goes down, comes after the end, or names no known token;
malformed params; floods; E C43: progress for a 2026-07-28 task after its call returned),
and the caller's own mistakes (C-46: a token in use). A progress problem is a soft warning in
``Poller.warnings``, counted in ``Client.progress_stats``; it never ends a wait, never crashes
the reader and never makes the client hold more.

The 2025-11-25 scripts run over the in-memory transport (one ordered stream, as stdio); the
2026-07-28 one over the hostile HTTP server (progress on a request's SSE stream).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Limits,
    Poller,
    PollPolicy,
    TaskProgress,
    ToolCall,
)
from mcp_tasks_client.errors import DecodeError, UsageError
from mcp_tasks_client.models import RELATED_TASK_META, Task, TaskStatus
from mcp_tasks_client.protocol import Violation
from mcp_tasks_client.testing import (
    SCRIPTED_CLIENT_INFO as INFO,
)
from mcp_tasks_client.testing import (
    Conn,
    HostileHTTPServer,
    Received,
    handshake,
    sse_event,
)
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

pytestmark = pytest.mark.anyio

FAST = PollPolicy(floor=0.01, initial=0.01, jitter=0.0)
SERVES_TASKS: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}
T0 = dt.datetime(2025, 11, 25, 10, 30, tzinfo=dt.timezone.utc)
RESULT = {"content": [{"type": "text", "text": "done"}]}


def stamp(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def task(
    task_id: str = "t-1", status: str = "working", message: str | None = None, at: float = 0
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "taskId": task_id,
        "status": status,
        "createdAt": stamp(0),
        "lastUpdatedAt": stamp(at),
        "ttl": 60000,
    }
    if message is not None:
        body["statusMessage"] = message
    return body


def progress(token: Any, value: Any, related: str | None = None, **more: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": token, "progress": value, **more}
    if related is not None:
        params["_meta"] = {RELATED_TASK_META: {"taskId": related}}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


class Script:
    """The server end after the handshake: read a request, answer it, send notifications."""

    def __init__(self, end: MemoryServerEnd) -> None:
        self.end = end
        self.methods: list[str] = []

    async def next(self, method: str) -> dict[str, Any]:
        """The next request, which must be ``method`` (notifications are skipped)."""
        while True:
            message = await self.end.receive()
            if "id" in message and "method" in message:
                self.methods.append(message["method"])
                assert message["method"] == method, message
                return dict(message)

    async def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        await self.end.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def send(self, *notes: dict[str, Any]) -> None:
        for note in notes:
            await self.end.send(note)

    async def created(self, task_id: str = "t-1") -> dict[str, Any]:
        call = await self.next("tools/call")
        await self.answer(call, {"task": task(task_id)})
        return call

    async def finish(self, task_id: str = "t-1", message: str | None = None) -> None:
        """Answer the next tasks/get completed, then the tasks/result."""
        await self.answer(await self.next("tasks/get"), task(task_id, "completed", message))
        await self.answer(await self.next("tasks/result"), RESULT)


async def scripted(
    serve: Callable[[Script], Awaitable[None]],
    body: Callable[[Client], Awaitable[None]],
    *,
    limits: Limits = Limits(),  # noqa: B008 - frozen value
) -> Script:
    """Run ``serve`` as the 2025-11-25 server and ``body`` as the caller, bounded."""
    transport, end = memory_transport_pair()
    script = Script(end)

    async def run() -> None:
        await handshake(end, SERVES_TASKS)
        try:
            await serve(script)
        except anyio.EndOfStream:  # the caller is done before the script's end: fine
            return
        await anyio.sleep_forever()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(20):
            async with Client(
                transport, generation=Generation.V2025_11_25, client_info=INFO, limits=limits
            ) as client:
                await body(client)
        group.cancel_scope.cancel()
    return script


def violations(poller: Poller) -> list[Violation]:
    return [w for w in poller.warnings if isinstance(w, Violation)]


CALL = ToolCall("render").as_task().with_progress_token("p")


# -- V-24 --------------------------------------------------------------------------------------


async def test_progress_that_goes_down_is_delivered_and_warned() -> None:
    """V-24: ``progress`` must increase. Each event still reaches the wait's callback (the
    server said it), in order; each one not above every earlier one is a soft violation."""

    async def serve(s: Script) -> None:
        call = await s.created()
        assert call["params"]["_meta"] == {"progressToken": "p"}
        poll = await s.next("tasks/get")
        await s.send(*(progress("p", v, total=4) for v in (1, 3, 2, 3, 4)))
        await s.answer(poll, task())
        await s.finish()

    seen: list[TaskProgress] = []

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            outcome = await poller.wait(created, on_progress=seen.append)
        assert isinstance(outcome, Completed)
        found = violations(poller)
        assert [v.rule for v in found] == ["V-24", "V-24"]
        assert all(v.soft and v.task_id == "t-1" for v in found)
        assert "2 is not above the earlier 3" in found[0].detail
        assert "3 is not above the earlier 3" in found[1].detail
        assert client.progress_stats.out_of_order == 2

    await scripted(serve, body)
    assert [(p.task_id, p.progress, p.total, p.token) for p in seen] == [
        ("t-1", v, 4, "p") for v in (1, 3, 2, 3, 4)
    ]


async def test_progress_after_the_end_reaches_no_one_and_is_warned() -> None:
    """V-24: progress stops once the task is terminal. One sent after the client saw the end
    (here: on the tasks/result the client opens only then) is a warning, and reaches no
    callback, watcher or later wait."""

    async def serve(s: Script) -> None:
        await s.created()
        await s.answer(await s.next("tasks/get"), task("t-1", "completed"))
        result = await s.next("tasks/result")
        await s.send(progress("p", 5), progress("p", 6, related="t-1"))
        await s.answer(result, RESULT)

    seen: list[TaskProgress] = []

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            assert isinstance(await poller.wait(created, on_progress=seen.append), Completed)
        late = violations(poller)
        assert [(v.rule, v.detail) for v in late] == [
            ("V-24", "progress after the task was terminal"),
        ] * 2
        assert client.progress_stats.late == 2
        assert client.progress("t-1") is None  # nothing delivered, ever

    await scripted(serve, body)
    assert seen == []


async def test_progress_for_a_token_nobody_holds_is_counted_not_kept() -> None:
    """A token of no request or task of this client, naming no task: a soft violation with
    no task id (there is none), counted; nothing is stored."""

    async def serve(s: Script) -> None:
        await s.created()
        poll = await s.next("tasks/get")
        await s.send(progress("nobody", 1), progress(17, 2))
        await s.answer(poll, task())
        await s.finish()

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            seen: list[TaskProgress] = []
            await poller.wait(created, on_progress=seen.append)
        assert seen == []
        unknown = violations(poller)
        assert [(v.task_id, v.rule) for v in unknown] == [("", "V-24")] * 2
        assert "token 'nobody', which no request or task of this client holds" in unknown[0].detail
        stats = client.progress_stats
        assert (stats.unknown, stats.tokens, stats.delivered) == (2, 1, 0)

    await scripted(serve, body)


async def test_the_related_task_meta_ties_progress_whose_token_is_not_known() -> None:
    """A progress notification naming a task in its related-task ``_meta`` is that task's
    even when its token is unknown (a task started without one, or resumed). For a task
    whose call carried a token, another token is a V-24 violation (it must reuse the
    original), but the event is the task's all the same."""

    async def serve(s: Script) -> None:
        await s.created("t-1")
        await s.created("t-2")
        polled: set[str] = set()
        while True:
            message = await s.end.receive()
            if message.get("method") == "tasks/result":
                await s.answer(message, RESULT)
                continue
            task_id = message["params"]["taskId"]
            if not polled:
                await s.send(
                    progress("stranger", 1, related="t-1"), progress("other", 1, related="t-2")
                )
            status = "completed" if task_id in polled else "working"
            polled.add(task_id)
            await s.answer(message, task(task_id, status))

    seen: list[TaskProgress] = []

    async def body(client: Client) -> None:
        plain = task_created(await client.start(ToolCall("render").as_task()))
        tokened = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            ended = await poller.wait_all([plain, tokened], on_progress=seen.append)
        assert all(isinstance(outcome, Completed) for outcome in ended.values())
        (wrong,) = violations(poller)
        assert (wrong.task_id, wrong.rule) == ("t-2", "V-24")
        assert "token 'other', not the task call's 'p'" in wrong.detail

    await scripted(serve, body)
    assert sorted((p.task_id, p.token) for p in seen) == [("t-1", "stranger"), ("t-2", "other")]


async def test_a_flood_of_progress_keeps_the_client_bounded() -> None:
    """Thousands of progress notifications, for the task, for tokens nobody holds and for
    tasks nobody knows, while the watcher reads nothing: the watcher then reads a handful of
    items (the latest progress among them), the warnings stay at ``max_warnings``, and the
    book holds the one token it held."""
    sent = anyio.Event()
    flood = 3000

    async def serve(s: Script) -> None:
        await s.created()
        poll = await s.next("tasks/get")
        for n in range(flood):
            await s.send(
                progress("p", n + 1, total=flood),
                progress(f"nobody-{n}", 1),
                progress(f"ghost-{n}", 1, related=f"ghost-task-{n}"),
            )
        await s.send(progress("p", 1))  # and down again, at the end
        sent.set()
        await s.answer(poll, task())
        await s.finish()

    limits = Limits(max_warnings=20, max_watch_backlog=8)

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            watching = poller.watch(created)
            first = await watching.__anext__()
            await sent.wait()
            while client.progress_stats.delivered < 2 * flood + 1:  # the reader catches up
                await anyio.sleep(0.01)
            rest = [item async for item in watching]
        read = [first, *rest]
        assert len(read) <= limits.max_watch_backlog
        progressed = [item for item in read if isinstance(item, TaskProgress)]
        assert progressed[-1].progress == 1  # the newest, not a backlog of 3000
        assert isinstance(read[-1], Task)
        assert read[-1].status is TaskStatus.COMPLETED
        assert len(poller.warnings) == limits.max_warnings
        stats = client.progress_stats
        assert stats.tokens == 1
        assert stats.unknown == flood
        assert stats.out_of_order == 1
        assert stats.delivered == 2 * flood + 1  # the task's, and the ghosts' (no one waits)

    await scripted(serve, body, limits=limits)


BAD_PARAMS: list[tuple[Any, str]] = [
    ({"progress": 1}, "$.params.progressToken"),
    ({"progressToken": True, "progress": 1}, "$.params.progressToken"),
    ({"progressToken": 1.5, "progress": 1}, "$.params.progressToken"),
    ({"progressToken": {"a": "b"}, "progress": 1}, "$.params.progressToken"),
    ({"progressToken": "p"}, "$.params.progress"),
    ({"progressToken": "p", "progress": "1"}, "$.params.progress"),
    ({"progressToken": "p", "progress": None}, "$.params.progress"),
    ({"progressToken": "p", "progress": 1, "total": "2"}, "$.params.total"),
    ({"progressToken": "p", "progress": 1, "message": ["m"]}, "$.params.message"),
    ({"progressToken": "x" * 10_000, "progress": [0] * 10_000}, "$.params.progress"),
]


async def test_malformed_progress_params_are_decode_errors_not_a_crash() -> None:
    """Params that are no progress: a DecodeError naming the path in ``Poller.warnings``
    (the offending value cut short), counted; the reader goes on, a good one after them is
    delivered, the wait ends normally."""

    async def serve(s: Script) -> None:
        await s.created()
        poll = await s.next("tasks/get")
        await s.send({"jsonrpc": "2.0", "method": "notifications/progress"})  # no params
        for params, _ in BAD_PARAMS:
            await s.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        await s.send(progress("p", 1, message="fine"))
        await s.answer(poll, task())
        await s.finish()

    seen: list[TaskProgress] = []

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            assert isinstance(await poller.wait(created, on_progress=seen.append), Completed)
        errors = [w for w in poller.warnings if isinstance(w, DecodeError)]
        assert [e.path for e in errors] == ["$.params"] + [path for _, path in BAD_PARAMS]
        assert all(len(repr(e.value)) < 200 for e in errors)
        assert client.progress_stats.malformed == len(BAD_PARAMS) + 1

    await scripted(serve, body)
    assert [(p.progress, p.message) for p in seen] == [(1, "fine")]


# -- the caller's side -----------------------------------------------------------------------


async def test_a_token_in_use_is_refused_before_anything_is_sent() -> None:
    """C-46: a token is unique across the active requests, and a task's stays active until
    the task is terminal. Reusing it meanwhile is the caller's error, raised before anything
    is sent; once the client saw the task end, the token is free again."""

    async def serve(s: Script) -> None:
        await s.created("t-1")
        await s.answer(await s.next("tasks/get"), task("t-1", "completed"))
        await s.created("t-2")

    async def body(client: Client) -> None:
        await client.start(CALL)
        with pytest.raises(UsageError, match=r"progressToken 'p' is in use by task 't-1'.*C-46"):
            await client.start(CALL)
        with pytest.raises(UsageError, match="C-46"):
            await client.call_tool(ToolCall("echo").with_progress_token("p"))
        with pytest.raises(UsageError, match="C-46"):  # set by hand, not a token
            await client.start(ToolCall("x", meta={"progressToken": True}).as_task())
        assert (await client.get_task("t-1")).status is TaskStatus.COMPLETED
        assert task_created(await client.start(CALL)).task.task_id == "t-2"

    script = await scripted(serve, body)
    assert script.methods == ["tools/call", "tasks/get", "tools/call"]


async def test_the_token_map_is_bounded_ended_tasks_first() -> None:
    """``Limits.max_progress_tokens``: an ended task's token is forgotten first (no word
    about it); with none ended, the oldest live one, with a LimitExceeded warning; its later
    progress is then for no known token."""

    async def serve(s: Script) -> None:
        await s.created("t-1")
        await s.answer(await s.next("tasks/get"), task("t-1", "completed"))
        await s.created("t-2")
        await s.created("t-3")
        await s.created("t-4")  # t-1 (ended) went for t-3; now t-2 (live) goes
        await s.send(progress("b", 1))

    async def body(client: Client) -> None:
        seen: list[Any] = []
        client.on_progress(seen.append)
        call = ToolCall("render").as_task()
        await client.start(call.with_progress_token("a"))
        await client.get_task("t-1")
        await client.start(call.with_progress_token("b"))
        await client.start(call.with_progress_token("c"))
        assert not client.warnings  # an ended one went: no warning
        await client.start(call.with_progress_token("d"))
        (full,) = client.warnings
        assert "Limits.max_progress_tokens=2" in str(full)
        with anyio.fail_after(5):
            while not seen:
                await anyio.sleep(0.01)
        (unknown,) = seen
        assert isinstance(unknown, Violation)
        assert "token 'b', which no request" in unknown.detail
        assert client.progress_stats.tokens == 2
        assert client.progress_stats.evicted == 2

    await scripted(serve, body, limits=Limits(max_progress_tokens=2))


async def test_progress_before_the_create_answer_is_the_created_tasks() -> None:
    """Progress on the task call's own stream, before its CreateTaskResult: the request
    became the task, so it is the task's (its latest: the first event a watcher reads, and
    what a wait's callback is called with first)."""

    async def serve(s: Script) -> None:
        call = await s.next("tools/call")
        await s.send(progress("p", 0.25, message="queued"), progress("p", 0.5, message="started"))
        await s.answer(call, {"task": task()})
        await s.finish()

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        latest = client.progress("t-1")
        assert latest is not None
        assert (latest.progress, latest.message, latest.token) == (0.5, "started", "p")
        async with Poller(client, FAST) as poller:
            items = [item async for item in poller.watch(created)]
            assert items[0] == latest
            assert isinstance(items[-1], Task)
            assert items[-1].status is TaskStatus.COMPLETED
            assert violations(poller) == []

    await scripted(serve, body)


async def test_progress_for_a_plain_call_is_the_callers_own() -> None:
    """A plain call may carry a token too: its progress is neither a task's nor a violation
    (the caller's own ``on_notification`` sees it raw); once the call is answered the token
    is free, and progress for it is then for no one."""

    async def serve(s: Script) -> None:
        call = await s.next("tools/call")
        assert "task" not in call["params"]
        await s.send(progress("q", 1))
        await s.answer(call, RESULT)
        await s.send(progress("q", 2))

    async def body(client: Client) -> None:
        raw: list[Any] = []
        client.on_notification("notifications/progress", raw.append)
        seen: list[Any] = []
        client.on_progress(seen.append)
        await client.call_tool(ToolCall("echo").with_progress_token("q"))
        with anyio.fail_after(5):
            while len(raw) < 2:
                await anyio.sleep(0.01)
        assert [n.params["progress"] for n in raw] == [1, 2]
        (unknown,) = seen
        assert isinstance(unknown, Violation)
        assert "token 'q', which no request" in unknown.detail
        assert client.progress_stats.for_requests == 1
        assert client.progress_stats.tokens == 0

    await scripted(serve, body)


async def test_a_callback_that_raises_is_logged_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def serve(s: Script) -> None:
        await s.created()
        poll = await s.next("tasks/get")
        await s.send(progress("p", 1), progress("p", 2))
        await s.answer(poll, task())
        await s.finish()

    calls: list[float] = []

    def broken(event: TaskProgress) -> None:
        calls.append(event.progress)
        raise RuntimeError("the caller's bug")

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            assert isinstance(await poller.wait(created, on_progress=broken), Completed)

    with caplog.at_level(logging.ERROR, logger="mcp_tasks_client"):
        await scripted(serve, body)
    assert calls == [1, 2]
    assert caplog.text.count("an on_progress callback raised") == 2


# -- status messages ---------------------------------------------------------------------------


async def test_a_terminal_snapshot_never_passes_off_an_old_message_as_news() -> None:
    """The message "step 3/3" set while working and carried into the completed snapshot keeps
    the time and status it was first seen with; a new message at the end is current."""

    async def serve(s: Script) -> None:
        await s.created()
        await s.answer(await s.next("tasks/get"), task(message="step 3/3", at=5))
        await s.answer(await s.next("tasks/get"), task(message="step 3/3", at=6))
        await s.finish(message="step 3/3")

    async def body(client: Client) -> None:
        created = task_created(await client.start(CALL))
        async with Poller(client, FAST) as poller:
            told = []
            async for item in poller.watch(created):
                if isinstance(item, Task):
                    told.append((item, poller.status_message(item.task_id)))
        first, *_, (last, message) = told
        assert first[1] is None  # the created task has no message
        assert message is not None
        assert message.text == "step 3/3"
        assert message.status is TaskStatus.WORKING
        assert message.since == T0 + dt.timedelta(seconds=5)  # when it was set, not 6, not the end
        assert last.status is TaskStatus.COMPLETED
        assert not message.is_current_for(last)

    await scripted(serve, body)


# -- 2026-07-28 ---------------------------------------------------------------------------------


NOW_2026 = "2026-08-01T00:00:00Z"


def task_2026(status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": "t-1",
        "status": status,
        "createdAt": NOW_2026,
        "lastUpdatedAt": NOW_2026,
        "ttlMs": 60000,
        "pollIntervalMs": 10,
        **extra,
    }


async def test_2026_progress_is_the_calls_until_it_returns_then_a_violation() -> None:
    """E C43: progress is not supported on tasks; it flows only on the originating request's
    stream, so it stops once the CreateTaskResult is returned. What came before is the task's
    (the call became the task); what comes after (here on a tasks/get's stream) is a soft
    violation, delivered to no one."""

    async def serve(request: Received, conn: Conn) -> None:
        await conn.start_sse()
        if request.rpc_method == "tools/call":
            assert request.params["_meta"]["progressToken"] == 7
            await conn.write(sse_event(progress(7, 1, message="accepted")))
            answer = {"resultType": "task", **task_2026()}
            await conn.write(sse_event({"jsonrpc": "2.0", "id": request.rpc_id, "result": answer}))
        elif request.rpc_method == "tasks/get":
            await conn.write(sse_event(progress(7, 2)))
            done = {"resultType": "complete", **task_2026("completed", result=RESULT)}
            await conn.write(sse_event({"jsonrpc": "2.0", "id": request.rpc_id, "result": done}))

    seen: list[TaskProgress] = []
    async with HostileHTTPServer(serve) as server:
        with anyio.fail_after(20):
            async with Client(
                HttpTransport(server.url), generation=Generation.V2026_07_28, client_info=INFO
            ) as client:
                call = ToolCall("render").as_task().with_progress_token(7)
                created = task_created(await client.start(call))
                async with Poller(client, FAST) as poller:
                    outcome = await poller.wait(created, on_progress=seen.append)
                    assert isinstance(outcome, Completed)
                (late,) = violations(poller)
                assert (late.task_id, late.rule) == ("t-1", "E C43")
                # the call returned: the token is free again (2026: no task keeps it)
                assert client.progress_stats.late == 1
    assert [(p.task_id, p.progress, p.message, p.token) for p in seen] == [
        ("t-1", 1, "accepted", 7)
    ]
