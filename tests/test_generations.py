"""One API over both generations, against real peers: the same caller code starts a task that
needs input, answers it through a handler keyed by its task id, and gets the same typed outcome
from a 2025-11-25 server (mcp 1.30) and a 2026-07-28 server (fastmcp 4.1.4). And the explicit
probe tells the peers apart without any client switching on its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import attrs
import pytest
from conftest import require_peer
from peers.harness import stdio_command, stdio_env

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    StdioTransport,
    ToolCall,
    probe_server,
)
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
)
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")


@attrs.frozen
class Case:
    """A peer of one generation, with its tool that asks a yes/no question mid-task."""

    peer: str
    generation: Generation
    call: ToolCall
    field: str  # the boolean the peer's elicitation schema asks for
    said: str  # what the tool returns when the answer is yes


CASES = {
    "2025-11-25": Case(
        "mcp1", Generation.V2025_11_25, ToolCall("confirm", {"text": "go"}), "ok", "confirmed=True"
    ),
    "2026-07-28": Case(
        "fastmcp4",
        Generation.V2026_07_28,
        ToolCall("confirm_delete", {"filename": "b.txt"}),
        "confirm",
        "deleted b.txt",
    ),
}


@pytest.fixture(params=[f"{g}-{k}" for g in CASES for k in ("http", "stdio")])
def case(request: pytest.FixtureRequest) -> tuple[Case, Transport]:
    generation, kind = str(request.param).rsplit("-", 1)
    chosen = CASES[generation]
    peer = require_peer(chosen.peer)
    if kind == "http":
        url: str = request.getfixturevalue(f"{chosen.peer}_http_url")
        return chosen, HttpTransport(url)
    return chosen, StdioTransport(stdio_command(peer), env=stdio_env(peer))


async def test_the_same_caller_code_answers_a_tasks_question_in_both_generations(
    case: tuple[Case, Transport],
) -> None:
    """T:470 / E C28: the question reaches the handler keyed by the task id; the answer ends
    the task Completed, whichever generation carried it."""
    chosen, transport = case
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    asked: list[str | None] = []

    async def yes(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        asked.append(ctx.task_id)
        return ElicitResult(ElicitAction.ACCEPT, {chosen.field: True})

    # From here on, nothing depends on the generation but the constructor's argument.
    async with Client(
        transport,
        generation=chosen.generation,
        client_info=INFO,
        capabilities=router.capabilities(),
    ) as client:
        router.attach(client)
        started = await client.start(chosen.call.as_task())
        assert isinstance(started, CreateTaskResult)
        router.on_elicitation(started.task.task_id, yes)
        async with Poller(client, PollPolicy(floor=0.05, jitter=0.0), inputs=router) as poller:
            with anyio.fail_after(30):
                outcome = await poller.wait(started)
    assert isinstance(outcome, Completed)
    text = " ".join(b.text for b in outcome.result.content if isinstance(b, TextContent))
    assert chosen.said in text
    assert asked == [started.task.task_id]


def _http(url: str) -> Callable[[], Transport]:
    return lambda: HttpTransport(url)


@pytest.mark.parametrize(
    ("peer", "speaks", "tasks"),
    [
        ("fastmcp4", {Generation.V2026_07_28, Generation.V2025_11_25}, (Generation.V2026_07_28,)),
        ("mcp1", {Generation.V2025_11_25}, (Generation.V2025_11_25,)),
        ("ts1", {Generation.V2025_11_25}, (Generation.V2025_11_25,)),
        ("mcp2", {Generation.V2026_07_28, Generation.V2025_11_25}, ()),
    ],
)
async def test_the_probe_tells_the_peers_apart(
    request: pytest.FixtureRequest, peer: str, speaks: set[Generation], tasks: tuple[Any, ...]
) -> None:
    """E 5.1, A-13: discover first, then initialize, each on its own connection; a -32601 or
    -32602 to discover is a legacy server, not a modern one."""
    require_peer(peer)
    url: str = request.getfixturevalue(f"{peer}_http_url")
    with anyio.fail_after(30):
        report = await probe_server(_http(url), client_info=INFO)
    assert set(report.generations) == speaks
    assert report.task_generations == tasks
    assert report.discover_hint_problems == ()  # E H1, E H2: fastmcp 4 sends both
    if Generation.V2026_07_28 not in speaks:
        assert report.discover is None
        assert report.discover_error is not None


async def test_the_probe_over_stdio_starts_a_process_per_attempt() -> None:
    """Each attempt starts a Python server process, which on a loaded machine (load 8 on two
    cores) took longer than the probe's default 10 s per attempt: the bound here is what a
    start may take there, not a measurement."""
    peer = require_peer("fastmcp4")
    with anyio.fail_after(200):
        report = await probe_server(
            lambda: StdioTransport(stdio_command(peer), env=stdio_env(peer)),
            client_info=INFO,
            timeout=90,
        )
    assert report.task_generations == (Generation.V2026_07_28,)
    assert "2026-07-28" in report.versions
