"""The field's drift (issue 22, item 13): servers built on earlier drafts of the 2026-07-28
tasks extension, read on receipt as the current form; the client sends only the current form.

Readings (the rules catalogue, ``docs/rules.md``): E A-23 (-32003 naming
``requiredCapabilities`` is the dated schema's -32021), E A-27 (``notifications/tasks/status``
is ``notifications/tasks``; a listen acknowledged as ``tasksStatus`` acknowledged those ids).
The server here is a scripted one on 127.0.0.1: no real peer speaks the earlier drafts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client._drivers import driver_class
from mcp_tasks_client._drivers.v2026_07_28 import (
    DRAFT_MISSING_CAPABILITY,
    DRAFT_STATUS_NOTIFICATION,
    DRAFT_TASKS_FILTER,
)
from mcp_tasks_client.conformance import Validator, rule
from mcp_tasks_client.errors import MissingClientCapability, RPCError, TaskAugmentationRequired
from mcp_tasks_client.models import (
    TASKS_EXTENSION,
    ClientCapabilities,
    Implementation,
    JSONRPCNotification,
)
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received, sse_event

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
NOW = "2026-08-01T00:00:00Z"
SLOW = 600_000  # pollIntervalMs: a poll would not come within the test
SUB = "io.modelcontextprotocol/subscriptionId"
DONE = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}
_ACK = "notifications/subscriptions/acknowledged"
REQUIRED: dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}


def task(task_id: str, status: str = "working", **extra: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttlMs": 60000,
        "pollIntervalMs": SLOW,
        **extra,
    }


@asynccontextmanager
async def connected(server: HostileHTTPServer) -> AsyncIterator[Client]:
    async with Client(
        HttpTransport(server.url), generation=Generation.V2026_07_28, client_info=INFO
    ) as client:
        yield client


def _notification(method: str, params: dict[str, Any]) -> bytes:
    return sse_event({"jsonrpc": "2.0", "method": method, "params": params})


def _drifted_listen_server(listens: list[dict[str, Any]], *, method: str, filter_key: str) -> Any:
    """Tasks that poll slowly; a listen is acknowledged under ``filter_key`` and each task
    then pushed completed as ``method``."""

    async def serve(request: Received, conn: Conn) -> None:
        rpc = request.rpc_method
        if rpc == "tools/call":
            await conn.result(request, {"resultType": "task", **task(request.params["name"])})
        elif rpc == "tasks/get":
            await conn.result(request, {"resultType": "complete", **task(request.params["taskId"])})
        elif rpc == "subscriptions/listen":
            listens.append(request.params["notifications"])
            ids = request.params["notifications"].get("taskIds", [])
            meta = {SUB: request.rpc_id}
            await conn.start_sse()
            ack = {"_meta": meta, "notifications": {filter_key: ids}}
            await conn.write(_notification("notifications/subscriptions/acknowledged", ack))
            for task_id in ids:
                done = {**task(task_id, "completed"), "result": DONE}
                await conn.write(_notification(method, {"_meta": meta, **done}))
            await anyio.sleep_forever()

    return serve


@pytest.mark.parametrize(
    ("method", "filter_key"),
    [
        ("notifications/tasks", "taskIds"),  # the current draft, ext-tasks 0.2.2
        (DRAFT_STATUS_NOTIFICATION, DRAFT_TASKS_FILTER),  # earlier drafts
        (DRAFT_STATUS_NOTIFICATION, "taskIds"),
        ("notifications/tasks", DRAFT_TASKS_FILTER),
    ],
)
async def test_a_push_in_either_drafts_form_ends_the_wait(method: str, filter_key: str) -> None:
    """E A-27, E C39-C42: the pushed snapshot ends the wait (no poll after the first); the
    listen the client sent names ``taskIds`` only (the current form), whatever came back."""
    listens: list[dict[str, Any]] = []
    serve = _drifted_listen_server(listens, method=method, filter_key=filter_key)
    async with HostileHTTPServer(serve) as server, connected(server) as client:
        created = task_created(await client.start(ToolCall("t-1").as_task()))
        async with Poller(client, PollPolicy(jitter=0.0, listen=True)) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(created)
            warnings = list(poller.warnings)
        gets = [m for m in server.rpc_methods() if m == "tasks/get"]
    assert isinstance(outcome, Completed)
    assert listens == [{"taskIds": ["t-1"]}]  # sent: only the current form
    assert len(gets) <= 1  # the outcome came pushed, whichever form
    assert warnings == []  # a reading, not a fault of the client's


async def test_minus_32003_naming_the_capability_reads_as_minus_32021() -> None:
    """E A-23: a plain call of a task-only tool refused with the extension draft's -32003 is
    the same refusal as -32021 (E S3): TaskAugmentationRequired, the server's error (its code
    as sent) under it. A bare -32003 keeps no meaning (E C55): a plain RPCError."""

    async def serve(request: Received, conn: Conn) -> None:
        name = request.params.get("name")
        data = REQUIRED if name == "only_a_task" else None
        error: dict[str, Any] = {"code": DRAFT_MISSING_CAPABILITY, "message": "needs tasks"}
        if data is not None:
            error["data"] = data
        await conn.json({"jsonrpc": "2.0", "id": request.rpc_id, "error": error}, status=400)

    async with HostileHTTPServer(serve) as server, connected(server) as client:
        with pytest.raises(TaskAugmentationRequired) as refused:
            await client.call_tool(ToolCall("only_a_task"))
        with pytest.raises(RPCError) as bare:
            await client.call_tool(ToolCall("other"))
    cause = refused.value.__cause__
    assert isinstance(cause, MissingClientCapability)
    assert cause.code == DRAFT_MISSING_CAPABILITY
    assert cause.extensions == (TASKS_EXTENSION,)
    assert type(bare.value) is RPCError
    assert bare.value.code == DRAFT_MISSING_CAPABILITY


def test_the_readings_belong_to_the_2026_driver_alone() -> None:
    """The 2025-11-25 driver reads -32003 and ``notifications/tasks/status`` as they are (its
    own push is ``notifications/tasks/status``); the 2026-07-28 driver reads the drafts."""
    info = Implementation("t", "0")
    old = driver_class(Generation.V2025_11_25)(ClientCapabilities(), info)
    new = driver_class(Generation.V2026_07_28)(ClientCapabilities(), info)
    error = RPCError.from_error(DRAFT_MISSING_CAPABILITY, "x", REQUIRED, method="tools/call")
    assert old.read_error(error) is error
    assert isinstance(new.read_error(error), MissingClientCapability)
    pushed = JSONRPCNotification(DRAFT_STATUS_NOTIFICATION, task("t"))
    assert old.read_notification(pushed) is pushed
    assert new.read_notification(pushed).method == "notifications/tasks"
    ack = JSONRPCNotification(
        "notifications/subscriptions/acknowledged", {"notifications": {DRAFT_TASKS_FILTER: ["t"]}}
    )
    assert new.read_notification(ack).params == {
        "notifications": {DRAFT_TASKS_FILTER: ["t"], "taskIds": ["t"]}
    }
    current = JSONRPCNotification(
        "notifications/subscriptions/acknowledged", {"notifications": {"taskIds": ["t"]}}
    )
    assert new.read_notification(current) is current


def test_the_validator_reports_a_drifted_server_as_a_warning() -> None:
    """The rules catalogue carries both readings; the conformance kit names the drift (a
    warning: the client reads it) and still checks what the drifted message carries."""
    for rid in ("E A-23", "E A-27"):
        assert rule(rid).default_verdict.value == "warn"
        assert Generation.V2026_07_28 in rule(rid).generations
    validator = Validator(Generation.V2026_07_28)
    listen = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": ["t"]}},
    }
    ack = {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB: 7}, "notifications": {DRAFT_TASKS_FILTER: ["t"]}},
    }
    pushed = {"jsonrpc": "2.0", "method": DRAFT_STATUS_NOTIFICATION, "params": {"_meta": {SUB: 7}}}
    findings = validator.feed([("sent", listen), ("received", ack), ("received", pushed)])
    ids = sorted(f.rule_id for f in findings)
    # the drift twice (the filter, the method), and the pushed snapshot's missing fields (S25)
    assert ids.count("E A-27") == 2
    assert "E S25" in ids


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
METHODS = st.sampled_from(
    [
        "notifications/tasks",
        DRAFT_STATUS_NOTIFICATION,
        "notifications/subscriptions/acknowledged",
        "notifications/progress",
        "notifications/message",
    ]
)


@given(
    method=METHODS,
    params=st.none()
    | st.dictionaries(
        st.sampled_from(["notifications", "taskId", "_meta", "status"]), JSON_VALUES, max_size=4
    ),
    filters=st.none()
    | st.dictionaries(st.sampled_from(["taskIds", DRAFT_TASKS_FILTER, "other"]), JSON_VALUES),
)
def test_a_notification_is_read_once_into_the_current_form(
    method: str, params: dict[str, Any] | None, filters: dict[str, Any] | None
) -> None:
    """E A-27 as a property: the reading is idempotent, leaves the current form (and every
    other notification) as it came, never drops a key, and a ``taskIds`` the server sent is
    never replaced by its ``tasksStatus``."""
    if params is not None and filters is not None:
        params = {**params, "notifications": filters}
    driver = driver_class(Generation.V2026_07_28)(ClientCapabilities(), INFO)
    came = JSONRPCNotification(method, params)
    read = driver.read_notification(came)
    assert driver.read_notification(read) == read
    assert read.method == ("notifications/tasks" if method == DRAFT_STATUS_NOTIFICATION else method)
    before, after = came.params or {}, read.params or {}
    assert set(before) <= set(after)
    old, new = before.get("notifications"), after.get("notifications")
    if isinstance(old, dict) and isinstance(new, dict):
        assert {k: new[k] for k in old} == old  # nothing the server sent is changed
        if DRAFT_TASKS_FILTER in old and "taskIds" not in old and read.method == _ACK:
            assert new["taskIds"] == old[DRAFT_TASKS_FILTER]
    if method not in (DRAFT_STATUS_NOTIFICATION, _ACK):
        assert read is came


@given(
    code=st.integers(-32768, -32000) | st.sampled_from([DRAFT_MISSING_CAPABILITY, -32021]),
    data=st.none() | JSON_VALUES | st.builds(lambda r: {"requiredCapabilities": r}, JSON_VALUES),
)
def test_an_error_is_read_as_missing_capability_only_when_it_says_so(code: int, data: Any) -> None:
    """E A-23 as a property: -32021 is MissingClientCapability as before; -32003 is one only
    with ``data.requiredCapabilities`` an object; any other error is left as it came."""
    driver = driver_class(Generation.V2026_07_28)(ClientCapabilities(), INFO)
    came = RPCError.from_error(code, "m", data, method="tools/call")
    read = driver.read_error(came)
    says = isinstance(data, dict) and isinstance(data.get("requiredCapabilities"), dict)
    if code == DRAFT_MISSING_CAPABILITY and says:
        assert isinstance(read, MissingClientCapability)
        assert (read.code, read.message, read.data, read.method) == (
            came.code,
            came.message,
            came.data,
            came.method,
        )
    else:
        assert read is came
