"""Issue 21, item 9: questions sent before the client listens are lost.

A 2025-11-25 server over HTTP sends what it says unasked on the standalone GET stream, and only
on one that is open when it speaks: fastmcp 3.x sends an untagged in-task ``elicitation/create``
there right after it answered the ``tools/call`` that made the task, and a server may send
``notifications/tools/list_changed`` right after ``initialized``. ``EarlyServer`` does both,
on real HTTP on 127.0.0.1, and drops what finds no stream open (``lost``). The client must
have the stream open by then when asked to: ``Client(listen_stream=True)`` (open before
``initialized``), ``client.open_listen_stream()`` right after entering, and the command line
whenever it serves input (``--inputs``)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_cli import CLI, REPO, env

from mcp_tasks_client import Client, Generation, HttpTransport, InputContext, InputRouter
from mcp_tasks_client.builders import ToolCall
from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.errors import GetStreamUnavailable, UnsupportedInGeneration
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCNotification,
)
from mcp_tasks_client.testing import (
    Conn,
    HostileHTTPServer,
    Received,
    handshake,
    sse_event,
)
from mcp_tasks_client.transports import memory_transport_pair

pytestmark = pytest.mark.anyio

INFO = Implementation("listen-first-tests", "0")
NOW = dt.datetime.now(dt.timezone.utc).isoformat()
QUESTION = {
    "jsonrpc": "2.0",
    "id": "q-1",
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def _task(status: str) -> dict[str, Any]:
    return {
        "taskId": "t-1",
        "status": status,
        "createdAt": NOW,
        "lastUpdatedAt": NOW,
        "ttl": 60000,
        "pollInterval": 20,
    }


class EarlyServer:
    """Speaks on its GET stream as soon as it has something to say; what finds no stream open
    then is dropped and named in ``lost`` (a real server keeps no backlog for it)."""

    def __init__(self, *, offers_get: bool = True) -> None:
        self.offers_get = offers_get
        self.streams: list[Conn] = []
        self.lost: list[str] = []
        self.answer: dict[str, Any] | None = None
        self.answered = anyio.Event()
        self.gets_before_initialized = 0
        self.initialized = False

    def http(self) -> HostileHTTPServer:
        return HostileHTTPServer(
            self.on_request,
            on_notification=self.on_notification,
            on_response=self.on_response,
            on_get=self.on_get if self.offers_get else None,
        )

    async def push(self, message: dict[str, Any]) -> None:
        if not self.streams:
            self.lost.append(message["method"])
            return
        await self.streams[0].write(sse_event(message))

    async def on_get(self, request: Received, conn: Conn) -> None:
        if not self.initialized:
            self.gets_before_initialized += 1
        await conn.start_sse()
        self.streams.append(conn)
        try:
            await conn.client_closed()
        finally:
            self.streams.remove(conn)

    async def on_notification(self, request: Received, conn: Conn) -> None:
        if request.rpc_method == "notifications/initialized":
            self.initialized = True
            await self.push(LIST_CHANGED)  # before answering: "right after initialized"
        await conn.head(202, {"Content-Length": "0"})

    async def on_response(self, request: Received, conn: Conn) -> None:
        body = request.json
        if body.get("id") == QUESTION["id"]:
            self.answer = body
            self.answered.set()
        await conn.head(202, {"Content-Length": "0"})

    async def on_request(self, request: Received, conn: Conn) -> None:
        if request.rpc_method == "tools/call":
            await conn.result(request, {"task": _task("working")})
            await self.push(QUESTION)  # right after the create answer, as fastmcp 3.x
        elif request.rpc_method == "tasks/get":
            await conn.result(request, _task("completed" if self.answered.is_set() else "working"))
        elif request.rpc_method == "tasks/result":
            name = (self.answer or {}).get("result", {}).get("content", {}).get("name")
            await conn.result(request, {"content": [{"type": "text", "text": f"hello {name}"}]})
        else:
            await conn.error(request, -32601, "not scripted")


def _router() -> InputRouter:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def name(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {"name": "Ada"})

    router.default_elicitation(name)
    return router


@pytest.mark.parametrize("how", ["listen_stream=True", "open_listen_stream()"])
async def test_a_question_sent_right_after_the_task_was_made_is_answered(how: str) -> None:
    """The untagged question pushed right after the create answer finds the GET stream open,
    and the client's handler answers it. (The explicit call worked before too: it guards the
    documented way; only ``listen_stream=True`` also hears the ``list_changed`` sent right
    after ``initialized``.)"""
    early = EarlyServer()
    router = _router()
    async with early.http() as server:
        transport = HttpTransport(server.url)
        capabilities = router.capabilities()
        client = (
            Client(
                transport,
                generation=Generation.V2025_11_25,
                client_info=INFO,
                capabilities=capabilities,
                listen_stream=True,
            )
            if how == "listen_stream=True"
            else Client(
                transport,
                generation=Generation.V2025_11_25,
                client_info=INFO,
                capabilities=capabilities,
            )
        )
        router.attach(client)
        with anyio.fail_after(20):
            async with client:
                if how == "open_listen_stream()":
                    await client.open_listen_stream()
                await client.start(ToolCall("job").as_task())
                await early.answered.wait()
    assert early.lost == (
        ["notifications/tools/list_changed"] if how != "listen_stream=True" else []
    )
    assert early.answer is not None
    assert early.answer["result"] == {"action": "accept", "content": {"name": "Ada"}}


async def test_listen_stream_opens_before_initialized_and_hears_what_follows_it() -> None:
    """``listen_stream=True`` opens the GET stream between the initialize answer and
    ``notifications/initialized``: the ``list_changed`` sent right after it arrives."""
    early = EarlyServer()
    heard: list[str] = []
    async with early.http() as server:
        client = Client(
            HttpTransport(server.url),
            generation=Generation.V2025_11_25,
            client_info=INFO,
            listen_stream=True,
        )
        got = anyio.Event()

        def changed(note: JSONRPCNotification) -> None:
            heard.append(note.method)
            got.set()

        client.on_notification("notifications/tools/list_changed", changed)
        with anyio.fail_after(20):
            async with client:
                await got.wait()
    assert early.gets_before_initialized == 1
    assert early.lost == []
    assert heard == ["notifications/tools/list_changed"]


async def test_listen_stream_on_a_server_without_one_is_a_warning() -> None:
    """HTTP 405 (the server offers no GET stream, which the spec allows): the client enters,
    with a GetStreamUnavailable warning; the server had nowhere to send, so nothing waits."""
    early = EarlyServer(offers_get=False)
    async with early.http() as server:
        client = Client(
            HttpTransport(server.url),
            generation=Generation.V2025_11_25,
            client_info=INFO,
            listen_stream=True,
        )
        with anyio.fail_after(20):
            async with client:
                pass
    assert [type(w) for w in client.warnings] == [GetStreamUnavailable]


def test_listen_stream_in_a_generation_without_the_stream_is_refused_typed() -> None:
    transport, _ = memory_transport_pair()
    with pytest.raises(UnsupportedInGeneration, match="GET stream"):
        Client(
            transport,
            generation=Generation.V2026_07_28,
            client_info=INFO,
            listen_stream=True,
        )


async def test_listen_stream_over_a_transport_that_reads_everything_is_a_no_op() -> None:
    transport, server = memory_transport_pair()
    client = Client(
        transport, generation=Generation.V2025_11_25, client_info=INFO, listen_stream=True
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(handshake, server)
            async with client:
                pass
    assert list(client.warnings) == []


async def test_the_command_line_answers_a_question_sent_right_after_the_task_was_made(
    tmp_path: Path,
) -> None:
    """``mcp-tasks call --task --wait --inputs FILE``: the GET stream is open before the call,
    so the question fastmcp-style servers push right after the create answer is answered from
    the file, and the task completes (before: lost, and the wait ran to its deadline)."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"Your name?": {"content": {"name": "Ada"}}}))
    early = EarlyServer()
    async with early.http() as server:
        args = ["--url", server.url, "--deadline", "15", "call", "job", "--task", "--wait"]
        args += ["--interval", "0.05", "--inputs", str(answers)]
        with anyio.fail_after(60):
            run = await anyio.run_process(
                [*CLI, *args], env=env(), cwd=REPO, check=False, stderr=subprocess.PIPE
            )
    stderr = run.stderr.decode()
    lines = [json.loads(line) for line in run.stdout.decode().splitlines()]
    assert "elicitation/create" not in early.lost, stderr
    assert run.returncode == ExitCode.COMPLETED, stderr
    assert early.answer is not None
    assert early.answer["result"]["content"] == {"name": "Ada"}
    assert lines[-1]["event"] == "outcome"
