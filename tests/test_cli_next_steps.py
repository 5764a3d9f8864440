"""Issue 34, item 3: every first mistake of a new user's hour with ``mcp-tasks`` ends with a
next step, and Ctrl-C while the output is piped (``--json | jq``) ends quietly with the cancel
hint. Each test failed before the change it tests.

Against the real peers (mcp1: the official Python SDK, 2025-11-25; fastmcp4: 2026-07-28) on
127.0.0.1; a peer this file starts itself where the test stops the server.
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from peers.harness import PEERS, running_http_peer, stop_process
from test_cli import GEN2, cli
from test_cli_interrupt import spawn

from mcp_tasks_client.cli import ExitCode


@pytest.fixture
def mcp1(mcp1_http_url: str) -> list[str]:
    return ["--url", mcp1_http_url]


@pytest.fixture
def fastmcp4(fastmcp4_http_url: str) -> list[str]:
    return ["--url", fastmcp4_http_url, *GEN2]


def test_no_generation_against_a_2026_server_suggests_probe_and_the_generation(
    fastmcp4_http_url: str,
) -> None:
    """Was: ``CapabilityNotNegotiated: the server did not declare tasks.requests.tools.call``
    and nothing more."""
    ran = cli("--url", fastmcp4_http_url, "call", "slow_compute", "--args", '{"seconds": 0}',
              "--task", "--wait")  # fmt: skip
    assert ran.code == ExitCode.USAGE, ran.stderr
    hint = ran.last["hint"]
    assert f"`mcp-tasks --url {fastmcp4_http_url} probe`" in hint
    assert hint.endswith("then add --generation 2026-07-28")
    assert f"mcp-tasks: {hint}" in ran.stderr.splitlines()


def test_a_typo_in_the_url_path_suggests_the_path(mcp1_http_url: str) -> None:
    """Was: HTTP 404 with a hint about the generation."""
    base = mcp1_http_url.removesuffix("/mcp")
    ran = cli("--url", f"{base}/mpc", "tools")
    assert ran.code == ExitCode.CONNECTION, ran.stderr
    hint = ran.last["hint"]
    assert hint.startswith("nothing answers at the path '/mpc' of 127.0.0.1:")
    assert "is the URL's path right? (MCP servers commonly serve at /mcp)" in hint
    assert "generation" not in hint


def test_an_unknown_tool_is_refused_not_completed_and_points_to_tools(
    mcp1: list[str], fastmcp4: list[str]
) -> None:
    """Was: "the server refused the call ... and made no task", then an outcome reading
    "completed (the tool reports an error: isError)", and nothing pointing to ``tools``."""
    for server in (mcp1, fastmcp4):
        ran = cli(*server, "call", "nosuch", "--task", "--wait")
        assert ran.code == ExitCode.FAILED, ran.stderr
        refused, hint = ran.stderr.splitlines()
        assert refused.startswith("mcp-tasks: the server refused the call of 'nosuch'")
        listing = " ".join([*server, "tools"])
        assert hint == (
            f"mcp-tasks: is 'nosuch' the tool's name? `mcp-tasks {listing}` lists the server's "
            "tools"
        )
        assert ran.last["refused"] is True
        assert ran.last["task_id"] is None


def test_arguments_a_tool_refuses_do_not_point_to_tools(mcp1: list[str]) -> None:
    ran = cli(*mcp1, "call", "slow_echo", "--args", '{"seconds": "abc"}', "--task", "--wait")
    assert ran.code == ExitCode.FAILED, ran.stderr
    assert len(ran.stderr.splitlines()) == 1  # the server's reason only
    assert "hint" not in ran.last


@pytest.mark.parametrize("command", ["status", "result", "cancel"])
def test_a_2025_task_of_an_earlier_run_suggests_journal(mcp1: list[str], command: str) -> None:
    """Was: "...each mcp-tasks run opens a new session", with no way out named."""
    started = cli(*mcp1, "call", "slow_echo", "--args", '{"text": "x", "seconds": 5}', "--task")
    assert started.code == ExitCode.COMPLETED, started.stderr
    task_id = started.last["task_id"]
    ran = cli(*mcp1, command, task_id)
    assert ran.code == ExitCode.LOST, ran.stderr
    assert (
        "start the task with --journal FILE and give the same --journal to status"
        in (ran.last["hint"])
    )


def test_wait_and_resume_with_the_server_down_say_the_task_is_kept(tmp_path: Path) -> None:
    """Was: the connection error alone, as if the task were gone."""
    journal = str(tmp_path / "tasks.db")
    with running_http_peer(PEERS["mcp1"]) as url:
        started = cli("--url", url, "--journal", journal, "call", "slow_echo",
                      "--args", '{"text": "x", "seconds": 30}', "--task")  # fmt: skip
        assert started.code == ExitCode.COMPLETED, started.stderr
        task_id = started.last["task_id"]
    # The server is down now (stopped by its pid); the task is still in the journal.
    waited = cli("--url", url, "--journal", journal, "wait", task_id)
    assert waited.code == ExitCode.CONNECTION, waited.stderr
    assert waited.last["hint"] == (
        f"task {task_id} is still in the journal {journal}: once the server answers again, "
        f"`mcp-tasks --journal {journal} resume` follows it (or wait with the same --journal)"
    )
    resumed = cli("--journal", journal, "resume")
    assert resumed.code == ExitCode.CONNECTION, resumed.stderr
    assert resumed.last["hint"] == (
        f"task {task_id} is still in the journal: run `mcp-tasks --journal {journal} resume` "
        f"again once {url} answers"
    )
    assert f"mcp-tasks: {resumed.last['hint']}" in resumed.stderr.splitlines()


# -- Ctrl-C with the output piped to a reader that Ctrl-C stopped too (`--json | jq`) ----------


@pytest.mark.parametrize("peer", ["fastmcp4", "mcp1"])
def test_ctrl_c_with_the_reader_gone_exits_130_with_the_cancel_hint(
    peer: str, request: pytest.FixtureRequest
) -> None:
    """At the terminal, Ctrl-C reaches ``jq`` too: the pipe is gone when the run says it was
    interrupted. Was: a BrokenPipeError traceback from ``report_interrupt``, exit 1, and the
    cancel hint lost. Both generations' wait loops."""
    url: str = request.getfixturevalue(f"{peer}_http_url")
    generation = GEN2 if peer == "fastmcp4" else ("--generation", "2025-11-25")
    tool, arguments = ("slow_compute", {"seconds": 30})
    if peer == "mcp1":
        tool, arguments = ("slow_echo", {"text": "x", "seconds": 30})
    proc = spawn(["--url", url, *generation, "--json", "call", tool,
                  "--args", json.dumps(arguments), "--task", "--wait"])  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no created line within 60 s"
        created = json.loads(proc.stdout.readline())
        proc.stdout.close()  # the reader is gone (jq took the Ctrl-C too) ...
        proc.send_signal(signal.SIGINT)  # ... and the run gets its Ctrl-C
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        stop_process(proc)  # type: ignore[arg-type]
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "Traceback" not in err, err
    task_id = created["task_id"]
    assert f"mcp-tasks: interrupted: task {task_id} keeps running on the server" in err
    assert f"cancel --id={task_id}" in err
