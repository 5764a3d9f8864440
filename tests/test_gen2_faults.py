"""The 2026-07-28 dialect against a scripted, fault-injecting HTTP server on 127.0.0.1: what a
real server may do that the polite peer does not (eventually consistent acks that go on and on,
made-up resultTypes, missing inline results, ids the answer names only in a malformed body).
Rule ids: E ... (the extension digest)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    OrphanedTask,
    Poller,
    PollPolicy,
    Timeouts,
    ToolCall,
)
from mcp_tasks_client.errors import (
    CreatedTaskUnreadable,
    DeadlineExceeded,
    DecodeError,
    InputStuck,
    InvalidParams,
    InvalidToolAnnotation,
    ProtocolVersionRefused,
    RequestTimeout,
    UnsupportedInGeneration,
    UsageError,
)
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.protocol import decode_header_value
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received, sse_event

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
NOW = "2026-08-01T00:00:00Z"
FAST = PollPolicy(floor=0.01, initial=0.01, jitter=0.0)


def task(task_id: str, status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttlMs": 60000,
        "pollIntervalMs": 10,
        **extra,
    }


ASK = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}
DONE = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}


@asynccontextmanager
async def connected(
    server: HostileHTTPServer, router: InputRouter | None = None, **kw: Any
) -> AsyncIterator[Client]:
    capabilities = router.capabilities() if router is not None else None
    extra: dict[str, Any] = {"capabilities": capabilities} if capabilities is not None else {}
    async with Client(
        HttpTransport(server.url),
        generation=Generation.V2026_07_28,
        client_info=INFO,
        **extra,
        **kw,
    ) as client:
        if router is not None:
            router.attach(client)
        yield client


def router_answering(calls: list[str]) -> InputRouter:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        calls.append(ctx.key)
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(yes)
    return router


async def test_an_answered_key_shown_again_and_again_is_answered_once() -> None:
    """E C30-C33, A-9: the ack is eventually consistent; the key stays in five more
    snapshots after its answer; the handler runs once and one tasks/update goes out."""
    state = {"updates": 0, "polls_after": 0}

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            state["updates"] += 1
            await conn.result(request, {"resultType": "complete"})
        elif method == "tasks/get":
            if state["updates"] and state["polls_after"] >= 5:
                await conn.result(request, {**task("t-1", "completed"), "result": DONE})
                return
            if state["updates"]:
                state["polls_after"] += 1
            body = {**task("t-1", "input_required"), "inputRequests": {"k1": ASK}}
            await conn.result(request, {"resultType": "complete", **body})

    calls: list[str] = []
    router = router_answering(calls)
    async with HostileHTTPServer(serve) as server, connected(server, router) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert calls == ["k1"]
    assert state["updates"] == 1


def _asking(keys: list[str], updates: list[dict[str, Any]], refuse_batches: bool = False) -> Any:
    """A 2026 server whose task asks ``keys`` in one snapshot until each is answered (by
    any ``tasks/update``), then completes; it records each update's ``inputResponses`` and,
    with ``refuse_batches``, refuses (-32602) an update carrying more than one answer."""
    answered: set[str] = set()

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            responses = request.params["inputResponses"]
            updates.append(responses)
            if refuse_batches and len(responses) > 1:
                await conn.error(request, -32602, "one answer at a time")
                return
            answered.update(responses)
            await conn.result(request, {"resultType": "complete"})
        elif method == "tasks/get":
            if answered >= set(keys):
                await conn.result(request, {**task("t-1", "completed"), "result": DONE})
                return
            asks = {key: ASK for key in keys if key not in answered}
            body = {**task("t-1", "input_required"), "inputRequests": asks}
            await conn.result(request, {"resultType": "complete", **body})

    return serve


async def _waited(serve: Any, router: InputRouter) -> Any:
    """A task of ``serve`` started and waited with a Poller answering through ``router``."""
    async with HostileHTTPServer(serve) as server, connected(server, router) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(20):
                return await poller.wait(created)


async def test_the_answers_of_one_snapshot_go_in_one_update() -> None:
    """Five keys in one snapshot, answered at once by their handler: one tasks/update with
    the five answers (one round trip, not five; partial answers stay allowed, E A-10)."""
    keys = [f"k{n}" for n in range(5)]
    updates: list[dict[str, Any]] = []
    calls: list[str] = []
    router = router_answering(calls)
    outcome = await _waited(_asking(keys, updates), router)
    assert isinstance(outcome, Completed)
    assert sorted(calls) == keys
    assert [sorted(update) for update in updates] == [keys]


async def test_an_answer_never_waits_for_a_slower_handler() -> None:
    """Two keys answered at once and one whose handler waits until the other two reached
    the server: the two go together, the slow one goes alone after (had the batch waited
    for it, the wait would never end)."""
    updates: list[dict[str, Any]] = []
    serve = _asking(["fast-1", "fast-2", "slow"], updates)
    both_fast = anyio.Event()

    async def watched(request: Received, conn: Conn) -> None:
        await serve(request, conn)
        if request.rpc_method == "tasks/update" and {"fast-1", "fast-2"} <= set(
            request.params["inputResponses"]
        ):
            both_fast.set()

    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def answer(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        if ctx.key == "slow":
            await both_fast.wait()
        return ElicitResult(ElicitAction.ACCEPT, {})

    router.default_elicitation(answer)
    outcome = await _waited(watched, router)
    assert isinstance(outcome, Completed)
    assert [sorted(update) for update in updates] == [["fast-1", "fast-2"], ["slow"]]


async def test_a_refused_batch_is_sent_again_key_by_key() -> None:
    """A server that takes one answer per tasks/update (-32602 for more): the batch is sent
    again one key at a time, and every answer arrives."""
    keys = ["a", "b", "c"]
    updates: list[dict[str, Any]] = []
    router = router_answering([])
    outcome = await _waited(_asking(keys, updates, refuse_batches=True), router)
    assert isinstance(outcome, Completed)
    assert sorted(updates[0]) == keys
    assert sorted(key for update in updates[1:] for key in update) == keys
    assert all(len(update) == 1 for update in updates[1:])


def _never_moving_on(updates: list[int]) -> Any:
    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            updates.append(1)
            await conn.result(request, {"resultType": "complete"})
        else:
            body = {**task("t-1", "input_required"), "inputRequests": {"k1": ASK}}
            await conn.result(request, {"resultType": "complete", **body})

    return serve


async def test_a_task_that_never_moves_on_after_its_answers_is_input_stuck() -> None:
    """PollPolicy.stuck_input_polls: every question answered, the task still asks: the wait
    ends with InputStuck naming the keys, and nothing is cancelled."""
    updates: list[int] = []
    policy = PollPolicy(floor=0.01, initial=0.01, jitter=0.0, stuck_input_polls=4)
    router = router_answering([])
    async with HostileHTTPServer(_never_moving_on(updates)) as server:
        async with connected(server, router) as client:
            created = task_created(await client.start(ToolCall("x").as_task()))
            async with Poller(client, policy, inputs=router) as poller:
                with anyio.fail_after(20), pytest.raises(InputStuck) as caught:
                    await poller.wait(created)
        methods = server.rpc_methods()
    assert caught.value.keys == ("k1",)
    assert caught.value.polls == 4
    assert updates == [1]
    assert "tasks/cancel" not in methods


async def test_without_the_detector_a_stuck_task_waits_for_the_deadline() -> None:
    updates: list[int] = []
    calls: list[str] = []
    router = router_answering(calls)
    async with (
        HostileHTTPServer(_never_moving_on(updates)) as server,
        connected(server, router) as client,
    ):
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with pytest.raises(DeadlineExceeded):
                await poller.wait(created, deadline=0.5)
    assert calls == ["k1"]


@pytest.mark.parametrize("kind", ["nonsense", ""])
async def test_an_unknown_result_type_is_a_decode_error(kind: str) -> None:
    """E C17: a resultType the client does not know is invalid, never guessed."""

    async def serve(request: Received, conn: Conn) -> None:
        await conn.result(request, {**DONE, "resultType": kind})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        with pytest.raises(DecodeError) as caught:
            await client.start(ToolCall("x").as_task())
    assert caught.value.path == "$.result.resultType"


async def test_a_task_for_a_call_that_did_not_ask_is_invalid() -> None:
    """E C17, C19: resultType task on a request that did not declare the extension."""

    async def serve(request: Received, conn: Conn) -> None:
        await conn.result(request, {"resultType": "task", **task("t-1")})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        with pytest.raises(DecodeError) as caught:
            await client.call_tool(ToolCall("x"))
    assert caught.value.path == "$.result.resultType"


async def test_a_completed_task_without_its_result_is_a_decode_error() -> None:
    """E S6: completed MUST carry result; a wait ends with the typed error, not a guess."""

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1")})
        else:
            await conn.result(request, {"resultType": "complete", **task("t-1", "completed")})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(10), pytest.raises(DecodeError) as caught:
                await poller.wait(created)
    assert caught.value.path == "$.result.result"


async def test_a_malformed_create_answer_still_yields_its_task_id() -> None:
    """Issue 7's no-lost-id promise in 2026-07-28's flat shape."""

    async def serve(request: Received, conn: Conn) -> None:
        await conn.result(request, {"resultType": "task", **task("t-9", ttlMs="soon")})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        with pytest.raises(CreatedTaskUnreadable) as caught:
            await client.start(ToolCall("x").as_task())
    assert caught.value.task_id == "t-9"
    assert caught.value.path == "$.result.ttlMs"


async def test_a_timed_out_start_reports_the_task_it_created_and_sends_no_cancel() -> None:
    """E C38: over HTTP the stream's close is the cancel; no notifications/cancelled, and
    the late flat CreateTaskResult is still read and reported."""

    async def serve(request: Received, conn: Conn) -> None:
        await anyio.sleep(0.5)
        await conn.result(request, {"resultType": "task", **task("late-1")})

    orphans: list[OrphanedTask] = []
    timeouts = Timeouts(orphan_watch=10)
    async with HostileHTTPServer(serve) as server:
        async with connected(server, timeouts=timeouts) as client:
            client.on_orphaned_task(orphans.append)
            with pytest.raises(RequestTimeout):
                await client.start(ToolCall("x").as_task(), timeout=0.1)
            with anyio.fail_after(10):
                while not orphans:
                    await anyio.sleep(0.02)
            plain_timeout = pytest.raises(RequestTimeout)
            with plain_timeout:
                await client.call_tool(ToolCall("slow"), timeout=0.1)
            await anyio.sleep(0.3)
        methods = server.rpc_methods()
    assert [o.task_id for o in orphans] == ["late-1"]
    assert "notifications/cancelled" not in methods


async def test_an_unsupported_version_is_typed_with_what_the_server_speaks() -> None:
    """E C53, C10: -32022 names the supported versions; the client does not retry."""

    async def serve(request: Received, conn: Conn) -> None:
        data = {"supported": ["2027-01-01"], "requested": "2026-07-28"}
        body = {"code": -32022, "message": "Unsupported protocol version", "data": data}
        await conn.json({"jsonrpc": "2.0", "id": request.rpc_id, "error": body}, status=400)

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        with pytest.raises(ProtocolVersionRefused) as caught:
            await client.discover()
        methods = server.rpc_methods()
    assert caught.value.supported == ("2027-01-01",)
    assert methods == ["server/discover"]


async def test_a_task_id_that_is_not_plain_ascii_is_sentinel_encoded_in_mcp_name() -> None:
    """E C58-C59: Mcp-Name carries the taskId; a non-ASCII id goes base64-sentinel encoded."""
    seen: list[str] = []

    async def serve(request: Received, conn: Conn) -> None:
        seen.append(request.headers.get("mcp-name", ""))
        await conn.result(request, {"resultType": "complete", **task("tâche 1")})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        await client.get_task("tâche 1")
    assert seen[0].startswith("=?base64?")
    assert decode_header_value(seen[0]) == "tâche 1"


async def test_there_is_no_get_stream_in_2026() -> None:
    async with HostileHTTPServer() as server, connected(server) as client:
        with pytest.raises(UnsupportedInGeneration):
            await client.open_listen_stream()
        methods = server.rpc_methods()
    assert methods == []


# -- push: subscriptions/listen (E C39-C44, A-15, A-25) -----------------------------------------

SLOW = 600_000  # pollIntervalMs: a poll would not come within the test


def _notification(method: str, params: dict[str, Any]) -> bytes:
    return sse_event({"jsonrpc": "2.0", "method": method, "params": params})


def _listen_server(listens: list[list[str]], acknowledge: bool) -> Any:
    """Tasks that poll slowly; a listen acknowledges its ids (or none) and, a moment later,
    pushes each one completed."""

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            name = request.params["name"]
            await conn.result(request, {"resultType": "task", **task(name, pollIntervalMs=SLOW)})
        elif method == "tasks/get":
            task_id = request.params["taskId"]
            await conn.result(
                request, {"resultType": "complete", **task(task_id, pollIntervalMs=SLOW)}
            )
        elif method == "subscriptions/listen":
            ids = request.params["notifications"]["taskIds"]
            listens.append(ids)
            meta = {"io.modelcontextprotocol/subscriptionId": request.rpc_id}
            await conn.start_sse()
            acked = ids if acknowledge else []
            ack = {"_meta": meta, "notifications": {"taskIds": acked}}
            await conn.write(_notification("notifications/subscriptions/acknowledged", ack))
            await anyio.sleep(0.2)
            for task_id in ids:
                done = {**task(task_id, "completed", pollIntervalMs=SLOW), "result": DONE}
                await conn.write(_notification("notifications/tasks", {"_meta": meta, **done}))
            await anyio.sleep_forever()

    return serve


async def test_a_pushed_snapshot_ends_the_wait_long_before_the_next_poll() -> None:
    listens: list[list[str]] = []
    policy = PollPolicy(jitter=0.0, listen=True)
    async with (
        HostileHTTPServer(_listen_server(listens, acknowledge=True)) as server,
        connected(server) as client,
    ):
        created = task_created(await client.start(ToolCall("t-1").as_task()))
        async with Poller(client, policy) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created)
        gets = [m for m in server.rpc_methods() if m == "tasks/get"]
    assert isinstance(outcome, Completed)
    assert listens == [["t-1"]]
    assert len(gets) <= 1  # the first poll at most: the outcome came pushed


async def test_the_listen_is_reopened_when_the_set_of_tasks_changes() -> None:
    """A-15: one listen per poller, reopened with the current set (no update method)."""
    listens: list[list[str]] = []
    policy = PollPolicy(jitter=0.0, listen=True)
    async with (
        HostileHTTPServer(_listen_server(listens, acknowledge=True)) as server,
        connected(server) as client,
    ):
        first = task_created(await client.start(ToolCall("a").as_task()))
        second = task_created(await client.start(ToolCall("b").as_task()))
        async with Poller(client, policy) as poller:
            with anyio.fail_after(60):
                # "a" alone is listened to, and ends (pushed), before "b" is waited on: one
                # wait after the other, not a sleep that a loaded machine overruns.
                await poller.wait(first)
                await poller.wait(second)
    assert listens[0] == ["a"]
    assert ["b"] in listens


async def test_ids_the_server_did_not_acknowledge_keep_their_polling() -> None:
    """E C40: the listen is open but the server acknowledged none of the ids and pushes
    nothing: the task is polled at its own pace and the poll ends the wait."""
    listens: list[list[str]] = []
    polls = {"n": 0}

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-2")})
        elif method == "tasks/get":
            polls["n"] += 1
            status = "completed" if polls["n"] >= 3 else "working"
            extra = {"result": DONE} if status == "completed" else {}
            await conn.result(request, {"resultType": "complete", **task("t-2", status), **extra})
        elif method == "subscriptions/listen":
            listens.append(request.params["notifications"]["taskIds"])
            await conn.start_sse()
            ack: dict[str, Any] = {"notifications": {"taskIds": []}}
            await conn.write(_notification("notifications/subscriptions/acknowledged", ack))
            await anyio.sleep_forever()

    policy = PollPolicy(floor=0.01, jitter=0.0, listen=True)
    async with HostileHTTPServer(serve) as server, connected(server) as client:
        created = task_created(await client.start(ToolCall("t-2").as_task()))
        async with Poller(client, policy) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created)
    assert isinstance(outcome, Completed)
    assert polls["n"] == 3
    assert listens == [["t-2"]]


async def test_listening_is_refused_for_2025_11_25() -> None:
    async with (
        HostileHTTPServer() as server,
        Client(
            HttpTransport(server.url), generation=Generation.V2025_11_25, client_info=INFO
        ) as client,
    ):
        with pytest.raises(UsageError):
            async with Poller(client, PollPolicy(listen=True)):
                pass
        with pytest.raises(UnsupportedInGeneration):
            await client.listen_tasks(["t"])


async def test_schemas_are_kept_as_received_and_never_dereferenced() -> None:
    """E C60 and the issue's rule: a tool's schema is data. Its $ref points at a second
    server on 127.0.0.1, which hears nothing while the tool is listed and called."""
    async with HostileHTTPServer() as elsewhere:
        schema = {
            "type": "object",
            "properties": {
                "a": {"$ref": f"{elsewhere.url}/schema.json", "x-vendor": [1, {"deep": None}]},
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
            "$defs": {"loop": {"$ref": "#/$defs/loop"}},
        }
        tool = {"name": "t", "inputSchema": schema}

        async def serve(request: Received, conn: Conn) -> None:
            if request.rpc_method == "tools/list":
                await conn.result(request, {"tools": [tool], "resultType": "complete"})
            else:
                await conn.result(request, DONE)

        async with HostileHTTPServer(serve) as server, connected(server) as client:
            (listed,) = [t async for t in client.list_tools()]
            await client.call_tool(ToolCall("t", {"region": "eu"}))
            headers = server.received[-1].headers
    assert listed.input_schema == schema
    assert headers["mcp-param-region"] == "eu"
    assert elsewhere.received == []


async def test_a_listen_the_server_refuses_is_not_reopened_in_a_loop() -> None:
    """A server answering subscriptions/listen with -32601: one listen, then polling; a new
    listen only when the set of waited tasks changes."""
    listens: list[list[str]] = []
    polls = {"n": 0, "at_refusal": -1}
    polled_after_refusal = anyio.Event()

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task(request.params["name"])})
        elif method == "subscriptions/listen":
            listens.append(request.params["notifications"]["taskIds"])
            polls["at_refusal"] = polls["n"]
            await conn.error(request, -32601, "no listen here")
        elif method == "tasks/get":
            polls["n"] += 1
            if polls["at_refusal"] >= 0 and polls["n"] >= polls["at_refusal"] + 5:
                polled_after_refusal.set()
            task_id = request.params["taskId"]
            done = polls["n"] >= 20 and task_id == "late"
            body = task(task_id, "completed") if done else task(task_id)
            extra = {"result": DONE} if done else {}
            await conn.result(request, {"resultType": "complete", **body, **extra})

    policy = PollPolicy(floor=0.05, jitter=0.0, listen=True)
    async with HostileHTTPServer(serve) as server, connected(server) as client:
        first = task_created(await client.start(ToolCall("early").as_task()))
        second = task_created(await client.start(ToolCall("late").as_task()))
        async with Poller(client, policy) as poller:
            # The first wait never ends: listened to once, then polled. Five polls after the
            # refusal (not a fixed time: at load 12 one second once held no listen at all).
            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    group.start_soon(poller.wait, first)
                    await polled_after_refusal.wait()
                    group.cancel_scope.cancel()
            assert listens == [["early"]]
            with anyio.fail_after(10):
                outcome = await poller.wait(second)
    assert isinstance(outcome, Completed)
    assert listens[1] == ["late"]
    assert len(listens) <= 3  # one per change of the set, not one per floor


async def test_a_terminal_seed_is_polled_for_its_outcome() -> None:
    """E A-2: a CreateTaskResult may already say completed, but it carries no result (a base
    Task): the client asks tasks/get for it instead of failing the wait."""

    async def serve(request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-done", "completed")})
        else:
            body = {**task("t-done", "completed"), "result": DONE}
            await conn.result(request, {"resultType": "complete", **body})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created)
        methods = server.rpc_methods()
    assert isinstance(outcome, Completed)
    assert "tasks/get" in methods


async def test_a_list_typed_property_with_an_annotation_is_reported_not_raised() -> None:
    """A nullable ``type: ["string", "null"]`` under an x-mcp-header is invalid (not one of
    string/integer/boolean): the tool is left out and reported, the rest listed."""
    schema = {
        "type": "object",
        "properties": {"r": {"type": ["string", "null"], "x-mcp-header": "R"}},
    }
    tools = [{"name": "odd", "inputSchema": schema}, {"name": "fine", "inputSchema": {}}]

    async def serve(request: Received, conn: Conn) -> None:
        await conn.result(request, {"tools": tools})

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        names = [t.name async for t in client.list_tools()]
        reported = [w.tool for w in client.warnings if isinstance(w, InvalidToolAnnotation)]
    assert names == ["fine"]
    assert reported == ["odd"]


def test_a_create_task_result_says_task_whatever_its_snapshot_said() -> None:
    from mcp_tasks_client.models import CreateTaskResult, Task
    from mcp_tasks_client.wire import decode, encode

    snapshot = decode({"resultType": "complete", **task("t-1")}, Task, Generation.V2026_07_28)
    assert encode(CreateTaskResult(snapshot), Generation.V2026_07_28)["resultType"] == "task"


async def test_a_refused_answer_is_recorded_and_the_wait_goes_on() -> None:
    """S13: a server may refuse an update (-32602, say for a key it thinks answered): the
    refusal is a warning, and the task's own course decides the wait."""
    state = {"polls": 0}

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", "input_required")})
        elif method == "tasks/update":
            await conn.error(request, -32602, "key already answered")
        else:
            state["polls"] += 1
            if state["polls"] >= 4:
                body = {**task("t-1", "completed"), "result": DONE}
            else:
                body = {**task("t-1", "input_required"), "inputRequests": {"k1": ASK}}
            await conn.result(request, {"resultType": "complete", **body})

    router = router_answering([])
    async with HostileHTTPServer(serve) as server, connected(server, router) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with anyio.fail_after(10):
                outcome = await poller.wait(created)
            refused = [w for w in poller.warnings if isinstance(w, InvalidParams)]
    assert isinstance(outcome, Completed)
    assert len(refused) == 1


async def test_a_question_still_open_when_the_wait_ends_is_withdrawn() -> None:
    """The handler of a 2026 question is cancelled when its task's wait ends (here the
    deadline): no form stays open for a task nobody waits on."""
    withdrawn = anyio.Event()

    async def slow_user(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError("unreachable")  # pragma: no cover

    router = InputRouter(elicitation=ElicitationCapability(form={}))
    router.default_elicitation(slow_user)
    async with (
        HostileHTTPServer(_never_moving_on([])) as server,
        connected(server, router) as client,
    ):
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, FAST, inputs=router) as poller:
            with pytest.raises(DeadlineExceeded):
                await poller.wait(created, deadline=0.3)
            with anyio.fail_after(5):
                await withdrawn.wait()


@pytest.mark.parametrize("foreign", [True, False])
async def test_an_acknowledgement_counts_only_for_its_own_listen(foreign: bool) -> None:
    """E C41: notifications name their listen (subscriptionId = the listen's request id); an
    acknowledgement naming another does not slow this listen's tasks to the safety poll."""
    acknowledged = anyio.Event()

    async def serve(request: Received, conn: Conn) -> None:
        method = request.rpc_method
        if method == "tools/call":
            await conn.result(request, {"resultType": "task", **task("t-1", pollIntervalMs=SLOW)})
        elif method == "tasks/get":
            body = task("t-1", pollIntervalMs=SLOW)
            await conn.result(request, {"resultType": "complete", **body})
        elif method == "subscriptions/listen":
            owner = "someone-else" if foreign else request.rpc_id
            ack = {
                "_meta": {"io.modelcontextprotocol/subscriptionId": owner},
                "notifications": {"taskIds": ["t-1"]},
            }
            await conn.start_sse()
            await conn.write(_notification("notifications/subscriptions/acknowledged", ack))
            acknowledged.set()
            await anyio.sleep_forever()

    policy = PollPolicy(jitter=0.0, listen=True)
    async with HostileHTTPServer(serve) as server, connected(server) as client:
        created = task_created(await client.start(ToolCall("x").as_task()))
        async with Poller(client, policy) as poller:
            with anyio.move_on_after(2):
                async with anyio.create_task_group() as group:
                    group.start_soon(poller.wait, created)
                    await acknowledged.wait()
                    await anyio.sleep(0.2)
                    seen = poller._tracker.acknowledged
                    group.cancel_scope.cancel()
    assert seen == (frozenset() if foreign else frozenset({"t-1"}))
