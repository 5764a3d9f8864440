"""Issue 34, item 3: every first mistake of a new user's hour with ``mcp-tasks`` ends with a
next step, and Ctrl-C while the output is piped (``--json | jq``) ends quietly with the cancel
hint. Each test failed before the change it tests.

Against the real peers (mcp1: the official Python SDK, 2025-11-25; fastmcp4: 2026-07-28) on
127.0.0.1; a peer this file starts itself where the test stops the server.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import termios
from pathlib import Path

import pytest
from peers.harness import PEERS, running_http_peer, stop_process
from test_cli import ANSI, CLI, GEN2, REPO, cli, env, in_terminal
from test_cli_interrupt import spawn
from test_conformance_clients import LIBRARY

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
        generation = "2026-07-28" if server is fastmcp4 else "2025-11-25"
        listing = f"--url {server[1]} --generation {generation} tools"
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
    tool, arguments = "slow_compute", dict[str, object](seconds=30)
    if peer == "mcp1":
        tool, arguments = ("slow_echo", {"text": "x", "seconds": 30})
    proc = spawn(["--url", url, *generation, "--json", "call", tool,
                  "--args", json.dumps(arguments), "--task", "--wait"])  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stderr is not None
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


# -- cosmetic ----------------------------------------------------------------------------------


def _terminal_interrupt(args: list[str]) -> tuple[int, str]:
    """``mcp-tasks ARGS`` on a pseudo-terminal, SIGINT once the live line shows; the exit code
    and the raw screen (escape sequences kept: the line structure is what is tested)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(
        [*CLI, *args], stdin=slave, stdout=slave, stderr=slave, cwd=REPO, close_fds=True,
        env=env(TERM="xterm-256color", COLUMNS="120", LINES="40"),
    )  # fmt: skip
    os.close(slave)
    raw = b""
    sent = False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, "the terminal went quiet for 60 s"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
            if not sent and b"next poll" in raw:
                proc.send_signal(signal.SIGINT)
                sent = True
        proc.wait(timeout=60)
    finally:
        os.close(master)
        stop_process(proc)
    return proc.returncode, raw.decode("utf-8", "replace")


def test_interrupted_starts_a_line_of_its_own_not_over_the_live_line(mcp1: list[str]) -> None:
    """Was: ``interrupted: task ...`` written after the spinner's last frame, on its line."""
    args = '{"text": "x", "seconds": 30}'
    command = [*mcp1, "call", "slow_echo", "--args", args, "--task", "--wait"]
    code, screen = _terminal_interrupt(command)
    assert code == ExitCode.INTERRUPTED, screen
    before = screen[: screen.index("interrupted: task")]
    last_line = ANSI.sub("", before.rsplit("\n", 1)[-1])
    assert last_line.strip() == "", repr(last_line)  # nothing of the live line before it


def test_the_answer_prompt_shows_its_choices_up_front(mcp1: list[str]) -> None:
    """Was: ``answer  (accept):`` (rich read "[accept/...]" as markup): the choices showed
    only after a wrong answer."""
    screen = in_terminal(
        [*mcp1, "--inputs", "interactive", "call", "confirm", "--args", '{"text": "ship it"}',
         "--task", "--wait"],
        replies=[("(accept):", "\n"), ("[y/n]", "y\n")],
    )  # fmt: skip
    assert screen.code == 0, screen.text
    assert "answer [accept/decline/cancel, or y/n] (accept):" in screen.text


def test_conformance_client_on_a_terminal_prints_the_table_not_json_lines() -> None:
    screen = in_terminal(["conformance-client", "--command", " ".join(LIBRARY),
                          "--scenario", "opt-in"])  # fmt: skip
    assert screen.code == 0, screen.text
    assert '"event"' not in screen.text
    assert "opt-in" in screen.text  # the table


def test_help_has_no_two_groups_of_one_title() -> None:
    for args in ([], ["call"], ["wait"]):
        ran = subprocess.run([*CLI, *args, "--help"], capture_output=True, text=True,
                             env=env(), timeout=60, check=True)  # fmt: skip
        titles = re.findall(r"^(\S[^\n]*):$", ran.stdout, re.M)
        assert len(titles) == len(set(titles)), (args, titles)
        assert "run options" in titles


def test_the_journal_the_docs_commands_make_is_git_ignored(tmp_path: Path) -> None:
    for name in ("tasks.db", "tasks.db-wal", "tasks.db-journal"):
        ran = subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO, timeout=60,
                             check=False)  # fmt: skip
        assert ran.returncode == 0, name
