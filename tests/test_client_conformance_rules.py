"""The client suite judges whole rules (issue 35, item 2).

- Two false failures are gone: a client that applies the TTL backstop (C-37, E C26) from the
  server's ``createdAt`` passes, since the scripted servers date their tasks by the real clock;
  and a receiver whose user answers late still gets its ``tasks/result`` judged (C-38 blocks
  until the task ends; the wait is the suite's timeout, not a fixed 10 s), and a task cancelled
  while still running is judged by C-41's clause for a running task.
- A 2025-11-25 client blocked in ``tasks/result`` (C-20 allows it) gets its result.
- Each single mistake of ``wrong_client`` (``MISTAKES``) fails exactly the check that judges
  its clause of the rule, and nothing else in its scenario.
- The client's own output never reaches the suite's; its exit code is in every check.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio.testing

from mcp_tasks_client import Generation
from mcp_tasks_client.conformance.clients import (
    SCENARIOS,
    Recording,
    _judge_receiver,
    _ScenarioServer,
    run_scenario,
)
from mcp_tasks_client.conformance.wrong_client import MISTAKE_ENV, MISTAKES
from mcp_tasks_client.testing import FaultServer
from mcp_tasks_client.testing._fault_base import Channel, wall_clock

REPO = Path(__file__).resolve().parent.parent
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
WRONG = [sys.executable, "-m", "mcp_tasks_client.conformance.wrong_client"]
BACKSTOP = [sys.executable, str(REPO / "examples" / "conformance_client.py"), "--ttl-backstop"]
JSON = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the clients run as processes: one backend is enough


# -- false failures ---------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "generation"),
    [
        ("poll-interval", G2),
        ("input-requests-once", G2),
        ("listen-fallback", G2),
        ("routing-headers", G2),
    ],
    ids=lambda v: v if isinstance(v, str) else v.value,
)
async def test_a_client_applying_the_ttl_backstop_passes(name: str, generation: Generation) -> None:
    """C-37 / E C26: a host may give a task up once ``createdAt`` + ``ttl`` has passed. The
    scenarios' tasks used to be dated 2026-08-01 with a 60 s ttl, so such a host gave up at its
    first poll and failed poll-interval, input-requests-once and listen-fallback."""
    with anyio.fail_after(90):
        checks = await run_scenario(BACKSTOP, name, generation, timeout=60)
    assert checks
    assert [c for c in checks if c.status != "SUCCESS"] == []


def test_the_scripted_server_dates_by_its_clock() -> None:
    """Every stamp comes from ``clock`` (the real time unless told), each later than the one
    before it, so ``createdAt`` + ``ttl`` is a moment a client can believe."""
    assert FaultServer(G2).clock is wall_clock
    moment = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    server = FaultServer(G2, clock=lambda: moment)
    assert [server._now(), server._now()] == [
        "2030-01-02T03:04:05.000Z",
        "2030-01-02T03:04:05.001Z",
    ]


class _LateReceiver(Channel):
    """The host side of the receiver scenario, in process: it answers each of the server's
    requests after ``delays[method]`` seconds of (virtual) time; a method not in ``answers``
    is never answered."""

    def __init__(self, server: _ScenarioServer, group: Any, answers: dict[str, tuple[float, Any]]):
        self.server, self.group, self.answers = server, group, answers

    async def push(self, message: JSON) -> None:
        if message["method"] in self.answers:
            self.group.start_soon(self._reply, message)

    async def _reply(self, message: JSON) -> None:
        delay, reply = self.answers[message["method"]]
        await anyio.sleep(delay)
        await self.server.answer({"jsonrpc": "2.0", "id": message["id"], **reply})


TASK = {
    "taskId": "r-1",
    "status": "completed",
    "createdAt": "2030-01-01T00:00:00Z",
    "lastUpdatedAt": "2030-01-01T00:00:01Z",
    "ttl": 120_000,
}
RELATED = {"io.modelcontextprotocol/related-task": {"taskId": "r-1"}}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"capabilities": {"tasks": {"requests": {"elicitation": {"create": {}}}}}},
}


def _virtual(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main`` on trio's virtual clock (autojump: time passes whenever all tasks wait),
    in a thread of its own: this module's async tests keep a trio run open in the main one."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        except BaseException as exc:  # handed to the test's thread
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def _drive(answers: dict[str, tuple[float, Any]], wait: float) -> Recording:
    server = _ScenarioServer(G1, {}, as_receiver=True, wait=wait)

    async def main() -> None:
        await server.answer(INITIALIZE)
        async with anyio.create_task_group() as group:
            await server._drive_receiver(_LateReceiver(server, group, answers))

    _virtual(main)
    rec = Recording(G1, received=[(0.0, INITIALIZE)])
    rec.exchanges = list(server.exchanges)
    return rec


def test_the_receiver_waits_for_a_late_answer_as_long_as_the_run_may_last() -> None:
    """C-38: tasks/result blocks until the task ends. A host whose user answers after 12 s
    was failed on receiver-result (the script waited 10 s), then on receiver-cancel."""
    answers: dict[str, tuple[float, Any]] = {
        "elicitation/create": (0, {"result": {"task": {**TASK, "status": "working"}}}),
        "tasks/get": (0, {"result": {**TASK, "status": "working"}}),
        "tasks/list": (0, {"result": {"tasks": [TASK]}}),
        "tasks/result": (12, {"result": {"action": "accept", "content": {}, "_meta": RELATED}}),
        "tasks/cancel": (0, {"error": {"code": -32602, "message": "already completed"}}),
    }
    checks = _judge_receiver(_drive(answers, wait=30), "C-36")
    assert {c.id: c.status for c in checks} == {
        "receiver-declared": "SUCCESS",
        "receiver-created": "SUCCESS",
        "receiver-get": "SUCCESS",
        "receiver-list": "SUCCESS",
        "receiver-result": "SUCCESS",
        "receiver-cancel": "SUCCESS",
    }


def test_a_receiver_task_still_running_is_cancelled_not_refused() -> None:
    """C-41's -32602 is for a finished task; a task tasks/result never saw end is still
    running, and its cancel answers it ``cancelled``. -32602 there is the failure."""
    running: dict[str, tuple[float, Any]] = {
        "elicitation/create": (0, {"result": {"task": {**TASK, "status": "working"}}}),
        "tasks/get": (0, {"result": {**TASK, "status": "working"}}),
        "tasks/list": (0, {"result": {"tasks": [TASK]}}),
        "tasks/cancel": (0, {"result": {**TASK, "status": "cancelled"}}),
    }
    checks = {c.id: c for c in _judge_receiver(_drive(running, wait=5), "C-36")}
    assert checks["receiver-result"].status == "FAILURE"
    assert checks["receiver-cancel"].status == "SUCCESS"
    refused = {**running, "tasks/cancel": (0, {"error": {"code": -32602, "message": "no"}})}
    checks = {c.id: c for c in _judge_receiver(_drive(refused, wait=5), "C-36")}
    assert checks["receiver-cancel"].status == "FAILURE"
    assert checks["receiver-cancel"].error_message == "answered -32602, not cancelled"


def _blocked_in_tasks_result(server: FaultServer) -> JSON:
    """A 2025-11-25 client that follows its ``ask`` task by one blocking tasks/result only:
    it answers the question on that stream and waits there (virtual time, 60 s at most)."""
    out: list[JSON] = []

    async def main() -> None:
        call = {"name": "ask", "arguments": {}, "task": {}}
        created = await server.answer(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        )
        assert isinstance(created, dict)
        task_id = created["result"]["task"]["taskId"]
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:

                class Stream(Channel):
                    async def push(self, message: JSON) -> None:
                        answer = {"action": "accept", "content": {"ok": True}}
                        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                        group.start_soon(server.answer, reply)

                request = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tasks/result",
                    "params": {"taskId": task_id},
                }
                got = await server.answer(request, Stream())
        assert isinstance(got, dict)
        out.append(got)

    _virtual(main)
    return out[0]


def test_a_client_blocked_in_tasks_result_gets_its_result() -> None:
    """C-20 lets a client wait in tasks/result instead of polling: the scenarios' answered
    task ends on its own pace (``self_paced``), where it used to wait for polls forever."""
    got = _blocked_in_tasks_result(FaultServer(G1, self_paced=0.2))
    assert got["result"]["content"][0]["text"].startswith("ask")
    with pytest.raises(TimeoutError):  # only polls end it: the client waits forever
        _blocked_in_tasks_result(FaultServer(G1))


# -- single mistakes ----------------------------------------------------------------------------

CAUGHT_BY: dict[str, tuple[tuple[Generation, ...], str]] = {
    "cancel-other-task": ((G1, G2), "cancel-with-tasks-cancel"),
    "cancel-no-name": ((G2,), "cancel-routing-header"),
    "update-no-name": ((G2,), "update-routing-header"),
    "poll-once": ((G1, G2), "odd-create-kept"),
    "answer-wrong-id": ((G1,), "input-required-answered"),
    "retry-drops-task": ((G2,), "request-state-new-id"),
}
MISTAKE_CASES = [
    pytest.param(mistake, g, id=f"{mistake}-{g.value}")
    for mistake, (generations, _) in CAUGHT_BY.items()
    for g in generations
]


def test_every_mistake_is_caught() -> None:
    assert set(CAUGHT_BY) == set(MISTAKES)


@pytest.mark.anyio
@pytest.mark.parametrize(("mistake", "generation"), MISTAKE_CASES)
async def test_a_single_mistake_fails_only_the_check_of_its_clause(
    mistake: str, generation: Generation
) -> None:
    """Each check fixed to judge its whole rule catches a mistake the proxy it judged by let
    pass: the wrong client keeps every rule but that one, so its scenario's other checks pass."""
    name = MISTAKES[mistake][0]
    env = {**os.environ, MISTAKE_ENV: mistake}
    with anyio.fail_after(90):
        checks = await run_scenario(WRONG, name, generation, timeout=60, env=env)
    failed = {c.id for c in checks if c.status == "FAILURE"}
    assert failed == {CAUGHT_BY[mistake][1]}, checks
    assert SCENARIOS[name].rule(generation) in {c.rule for c in checks}


# -- the client's output and exit -----------------------------------------------------------------


def test_the_clients_output_goes_to_the_details_not_the_suites() -> None:
    """``--json`` lines stay JSON: what the client prints lands in a failed check's details,
    with its exit code (every check carries it)."""
    noisy = f"{sys.executable} -c 'print(\"noise from the client\"); raise SystemExit(3)'"
    suite = [sys.executable, "-m", "mcp_tasks_client.cli", "conformance-client"]
    ran = subprocess.run(
        [*suite, "--command", noisy, "--scenario", "opt-in", "--protocol-version", "2025-11-25"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    assert ran.returncode == 1, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [line["status"] for line in lines] == ["FAILURE"]  # the client made no call
    assert lines[0]["details"]["exitCode"] == 3
    assert lines[0]["details"]["stdout"] == ["noise from the client"]
    assert "noise" not in ran.stderr
