"""Tasks for a host on mcp 2.x (2026-07-28) through the extension, against the real fastmcp 4
tasks server and the suite's spec-faithful FaultServer.

Runs in venv-sdk2 (mcp 2.3, fastmcp 4.1.4): see README.md here. The extension way: the host's
own ``mcp.Client(url, extensions=[TasksExtension(...)])`` and its own ``call_tool``. The
server's request log shows what went over the wire.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from tracing_kit import spans as spans  # the fixture

from mcp_tasks_client import (
    Generation,
    Poller,
    PollPolicy,
    SQLiteJournal,
    resume,
)
from mcp_tasks_client.errors import DeadlineExceeded
from mcp_tasks_client.sdk import TasksExtension, open_client
from mcp_tasks_client.testing import FaultServer
from sdk_hosts.shared import RequestLogView, confirming, lines, text_of

pytestmark = pytest.mark.anyio

FAST = PollPolicy(floor=0.01, jitter=0.0)


@pytest.fixture
def logged(logged_fastmcp4: tuple[str, RequestLogView]) -> tuple[str, RequestLogView]:
    """The run's real fastmcp 4 tasks server (conftest.py here) and its request log."""
    return logged_fastmcp4


async def test_the_extension_drives_a_claimed_task_to_the_hosts_call_tool_result(
    logged: tuple[str, RequestLogView],
) -> None:
    """E C16-C18, E C24, E C58: the host's own call_tool returns the task's result; every
    tasks/get names the task in Mcp-Name, none sooner than pollIntervalMs after the last; no
    initialize on the stateless wire."""
    url, log = logged
    extension = TasksExtension(policy=FAST)
    async with mcp.Client(url, extensions=[extension]) as host:
        result = await host.call_tool("slow_compute", {"label": "a", "seconds": 1.0})
    assert not result.is_error
    assert [b.text for b in result.content] == ["computed a in 1.0s"]
    assert extension.resolved == 1
    wire = lines(log)
    gets = [e for e in wire if e["method"] == "tasks/get"]
    assert len(gets) >= 2
    assert all(e["mcp_name"] == e["task"] for e in gets)
    times = [e["t"] for e in gets]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.1 - 0.01, gaps  # the server's pollIntervalMs: 100
    assert not [e for e in wire if e["method"] == "initialize"]


async def test_the_extension_answers_a_tasks_input_once_through_the_router(
    logged: tuple[str, RequestLogView],
) -> None:
    """E C28-C33: the task's inputRequests key is answered once, by the handler the host gave,
    with tasks/update naming the task in Mcp-Name."""
    url, log = logged
    answers: list[str] = []
    extension = TasksExtension(policy=FAST, inputs=confirming(answers))

    async def host_elicits(context: Any, params: Any) -> Any:  # the host's own (plain calls)
        raise AssertionError("a task's question reached the host's callback")

    async with mcp.Client(url, extensions=[extension], elicitation_callback=host_elicits) as host:
        with anyio.fail_after(30):
            result = await host.call_tool("confirm_delete", {"filename": "a.txt"})
    assert not result.is_error, result
    assert len(answers) == 1
    updates = [e for e in lines(log) if e["method"] == "tasks/update"]
    assert [(e["task"], len(e["keys"])) for e in updates] == [(answers[0], 1)]
    assert updates[0]["mcp_name"] == answers[0]


async def test_a_claimed_task_becomes_our_handle_and_a_deadline_cancels_it(
    logged: tuple[str, RequestLogView],
) -> None:
    """allow_claimed=True hands the host the claimed task; read_created makes it this
    library's handle; a wait past its deadline with cancel_on_abandon sends one tasks/cancel."""
    url, log = logged
    async with mcp.Client(url, extensions=[TasksExtension(policy=FAST)]) as host:
        claimed = await host.session.call_tool(
            "slow_compute", {"label": "b", "seconds": 30}, allow_claimed=True
        )
        async with open_client(host, generation=Generation.V2026_07_28) as client:
            created = client.read_created(claimed.model_dump(by_alias=True, mode="json"))
            policy = PollPolicy(floor=0.05, jitter=0.0, cancel_on_abandon=True)
            async with Poller(client, policy) as poller:
                with pytest.raises(DeadlineExceeded):
                    await poller.wait(created, deadline=0.5)
    cancels = [e for e in lines(log) if e["method"] == "tasks/cancel"]
    assert [(e["task"], e["mcp_name"]) for e in cancels] == [(created.task.task_id,) * 2]


async def test_a_journaled_claimed_task_survives_kill_9_and_is_resumed_over_another_host(
    logged: tuple[str, RequestLogView], tmp_path: Path
) -> None:
    """A host process whose TasksExtension journals its task is killed with SIGKILL while the
    task runs; a new host (this process, its own mcp.Client) resumes it from the journal over
    its SDK connection and gets the result; the journal records the outcome."""
    url, log = logged
    path = tmp_path / "tasks.db"
    child = subprocess.Popen(  # noqa: ASYNC220 - killed by its pid, waited below
        [sys.executable, str(Path(__file__).with_name("host_child.py")), url, str(path), "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        with anyio.fail_after(30):
            assert child.stdout is not None
            said = await anyio.to_thread.run_sync(child.stdout.readline)
            assert said == b"calling\n", child.communicate()
            while True:  # the journal exists now: wait until the task is in it
                with SQLiteJournal(path) as journal:
                    if await journal.entries(open_only=True):
                        break
                assert child.poll() is None, child.communicate()
                await anyio.sleep(0.1)
    finally:
        child.kill()  # SIGKILL: nothing of the host's runs after this
        child.wait()
    with SQLiteJournal(path) as journal:
        (entry,) = await journal.entries(open_only=True)
        assert entry.server == url
        async with mcp.Client(url) as host:
            with anyio.fail_after(30):
                resumed = await resume(
                    journal,
                    lambda e: open_client(host, generation=e.generation, identity=url),
                    policy=FAST,
                )
        assert not await journal.entries(open_only=True)
    (only,) = resumed
    assert only.entry.task_id == entry.task_id
    assert text_of(only.ended) == "computed journaled in 4.0s"
    assert {e["task"] for e in lines(log) if e["method"] == "tasks/get"} == {entry.task_id}


def test_the_docs_example_for_the_extension_runs(logged: tuple[str, RequestLogView]) -> None:
    """examples/sdk_extension.py (docs/sdk-hosts.md) against the real fastmcp 4 server."""
    url, _ = logged
    run = subprocess.run(
        [sys.executable, str(Path(__file__).parents[2] / "examples" / "sdk_extension.py"), url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "slow_compute: ['computed report in 1.0s']" in run.stdout
    assert "asks: " in run.stdout
    assert "tasks driven by this library: 2" in run.stdout


async def test_the_suites_spec_faithful_server_through_the_extension() -> None:
    """The suite's own 2026-07-28 server (FaultServer, no rule broken, over HTTP on 127.0.0.1)
    through the extension: a task-only tool's result, a task's two questions each answered
    once by tasks/update, and a task that never ends cut at the extension's deadline with one
    tasks/cancel."""
    server = FaultServer(Generation.V2026_07_28)
    answers: list[str] = []
    async with server.http() as http:
        extension = TasksExtension(policy=FAST, inputs=confirming(answers))

        async def host_elicits(context: Any, params: Any) -> Any:
            raise AssertionError("a task's question reached the host's callback")

        async with mcp.Client(
            http.url, extensions=[extension], elicitation_callback=host_elicits
        ) as host:
            done = await host.call_tool("need_task", {"text": "faithful"})
            asked = await host.call_tool("ask", {"text": "two questions"})
            stuck = TasksExtension(
                policy=FAST, deadline=dt.timedelta(seconds=0.5), cancel_on_abandon=True
            )
        async with mcp.Client(http.url, extensions=[stuck]) as other:
            with pytest.raises(DeadlineExceeded):
                await other.call_tool("slow", {"text": "never"})
    assert [b.text for b in done.content] == ["faithful"]
    assert not asked.is_error, asked
    assert len(answers) == 2  # q1, then q2: each key once
    updates = [m for m in server.received if m.get("method") == "tasks/update"]
    assert [sorted(m["params"]["inputResponses"]) for m in updates] == [["q1"], ["q2"]]
    cancels = [m for m in server.received if m.get("method") == "tasks/cancel"]
    assert len(cancels) == 1


async def test_two_call_tools_at_once_each_get_their_tasks_result(
    logged: tuple[str, RequestLogView],
) -> None:
    """Two of the host's call_tools at once: the extension drives each claimed task with a
    client of its own over the one SDK session (their request ids never collide)."""
    url, _ = logged
    results: dict[str, Any] = {}
    extension = TasksExtension(policy=FAST)
    async with mcp.Client(url, extensions=[extension]) as host:

        async def call(label: str) -> None:
            results[label] = await host.call_tool("slow_compute", {"label": label, "seconds": 0.5})

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for label in ("a", "b", "c"):
                    group.start_soon(call, label)
    assert {k: [b.text for b in v.content] for k, v in results.items()} == {
        label: [f"computed {label} in 0.5s"] for label in ("a", "b", "c")
    }
    assert extension.resolved == 3
