"""The ``mcp-tasks`` command line, driven as a script drives it: a subprocess per command,
against the real peers over HTTP and stdio (and scripted servers for the faults), its JSON
lines parsed and its exit codes checked; the live display through a pseudo-terminal.

These tests are synchronous: every command is its own process running its own trio loop.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shlex
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import require_peer
from peers.harness import PEERS, stdio_command, stop_process

from mcp_tasks_client.cli import ExitCode

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcp_tasks_client.cli"]
GEN2 = ("--generation", "2026-07-28")
RUN_TIMEOUT = 90  # seconds: a hung command fails its test instead of hanging the suite


def env(**extra: str) -> dict[str, str]:
    """This environment, the worktree's package first, the peers' variables (fastmcp's
    stdio child inherits them from the CLI) and ``extra``."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    fastmcp = dict(PEERS["fastmcp4"].env)
    return {**os.environ, **fastmcp, "PYTHONPATH": path, **extra}


@attrs.frozen
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every stdout line, parsed: each must be one JSON object with an "event" key."""
        events = [json.loads(line) for line in self.stdout.splitlines()]
        for event in events:
            assert isinstance(event, dict)
            assert "event" in event, event
        return events

    @property
    def last(self) -> dict[str, Any]:
        return self.events[-1]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]


def cli(*args: str, timeout: float = RUN_TIMEOUT) -> Ran:
    """``mcp-tasks ARGS`` with stdout a pipe (so JSON lines, --json or not)."""
    run = subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
        cwd=REPO,
        check=False,
    )
    return Ran(run.returncode, run.stdout, run.stderr)


def texts(result: dict[str, Any]) -> str:
    return " ".join(b["text"] for b in result["content"] if b.get("type") == "text")


def answers_file(tmp_path: Path, answers: dict[str, Any]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return str(path)


# -- servers -----------------------------------------------------------------------------------


@pytest.fixture(params=["mcp1-http", "mcp1-stdio", "ts1-http", "ts1-stdio"])
def gen1(request: pytest.FixtureRequest) -> list[str]:
    """The server options for each 2025-11-25 peer over each transport."""
    name, kind = str(request.param).split("-")
    peer = require_peer(name)
    if kind == "http":
        url: str = request.getfixturevalue(f"{name}_http_url")
        return ["--url", url]
    return ["--stdio", shlex.join(stdio_command(peer))]


@pytest.fixture
def mcp1(mcp1_http_url: str) -> list[str]:
    return ["--url", mcp1_http_url]


@pytest.fixture
def ts1(ts1_http_url: str) -> list[str]:
    return ["--url", ts1_http_url]


@pytest.fixture(params=["http", "stdio"])
def gen2(request: pytest.FixtureRequest) -> list[str]:
    """The server options for the fastmcp 4.1.4 peer (2026-07-28), HTTP or stdio."""
    peer = require_peer("fastmcp4")
    if request.param == "http":
        url: str = request.getfixturevalue("fastmcp4_http_url")
        return ["--url", url, *GEN2]
    return ["--stdio", shlex.join(stdio_command(peer)), *GEN2]


@pytest.fixture
def fastmcp4(fastmcp4_http_url: str) -> list[str]:
    """fastmcp over HTTP: stateless, so a task outlives the command that started it."""
    return ["--url", fastmcp4_http_url, *GEN2]


# -- usage, help, the extra ----------------------------------------------------------------------


def test_help_names_every_command_and_every_exit_code() -> None:
    ran = cli("--help")
    assert ran.code == 0
    for command in ("tools", "call", "status", "wait", "result", "cancel", "list", "probe"):
        assert command in ran.stdout
    assert "exit codes:" in ran.stdout
    for code in ExitCode:
        assert re.search(rf"^\s+{code.value}\s+\S", ran.stdout, re.MULTILINE), code
    assert "--generation" in ran.stdout
    assert "default: 2025-11-25" in ran.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["tools"],  # no server
        ["--url", "http://127.0.0.1:9/mcp", "--stdio", "x", "tools"],  # two servers
        ["--url", "http://127.0.0.1:9/mcp", "call"],  # no tool
        ["--url", "http://127.0.0.1:9/mcp", "call", "t", "--args", "[1]"],  # not an object
        ["--url", "http://127.0.0.1:9/mcp", "call", "t", "--ttl", "5"],  # --ttl without --task
        ["--url", "http://127.0.0.1:9/mcp", "--timeout", "-1", "tools"],
        ["--url", "http://127.0.0.1:9/mcp", "frobnicate"],
    ],
)
def test_bad_arguments_exit_2(args: list[str]) -> None:
    ran = cli(*args)
    assert ran.code == ExitCode.USAGE
    assert "usage:" in ran.stderr
    assert ran.stdout == ""


def test_without_rich_the_command_names_the_extra_and_the_library_never_imports_rich() -> None:
    lean = (
        "import sys\n"
        "import mcp_tasks_client, mcp_tasks_client.cli\n"
        "assert 'rich' not in sys.modules, 'the library imported rich'\n"
        "sys.modules['rich'] = None  # as if the extra were not installed\n"
        "raise SystemExit(mcp_tasks_client.cli.main(['--url', 'http://127.0.0.1:9', 'tools']))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", lean], capture_output=True, text=True, env=env(), timeout=60
    )
    assert run.returncode == ExitCode.USAGE, run.stderr
    assert "pip install 'mcp-tasks-client[cli]'" in run.stderr


def test_the_installed_mcp_tasks_script_runs_the_same_command() -> None:
    script = Path(sys.executable).with_name("mcp-tasks")
    if not script.exists():
        message = f"no {script}: install the package (pip install -e '.[cli]')"
        if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    run = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, env=env(), timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert "exit codes:" in run.stdout


# -- tools and plain calls ---------------------------------------------------------------------


def test_tools_lists_each_tools_task_support(gen1: list[str]) -> None:
    ran = cli(*gen1, "tools")
    assert ran.code == 0, ran.stderr
    tools = {e["name"]: e["tool"] for e in ran.of("tool")}
    assert tools["need_task"]["execution"]["taskSupport"] == "required"
    assert tools["slow_echo"]["execution"]["taskSupport"] == "optional"
    assert "execution" not in tools["plain_echo"]


def test_a_plain_call_prints_its_result(mcp1: list[str], fastmcp4: list[str]) -> None:
    ran = cli(*mcp1, "--json", "call", "plain_echo", "--args", '{"text": "hi"}')
    assert ran.code == 0, ran.stderr
    assert ran.last["event"] == "outcome"
    assert ran.last["status"] == "completed"
    assert texts(ran.last["result"]) == "echo: hi"
    ran = cli(*fastmcp4, "call", "greet", "--args", '{"name": "Ada"}')
    assert ran.code == 0, ran.stderr
    assert texts(ran.last["result"]) == "Hello, Ada!"


def test_a_task_only_tool_called_plainly_is_a_usage_error(mcp1: list[str]) -> None:
    ran = cli(*mcp1, "call", "need_task")
    assert ran.code == ExitCode.USAGE
    assert ran.last["error"]["type"] == "TaskAugmentationRequired"


# -- tasks, waited on ----------------------------------------------------------------------------


def test_call_task_wait_prints_created_statuses_and_the_outcome(gen1: list[str]) -> None:
    args = '{"text": "scene 3", "seconds": 0.3}'
    ran = cli(*gen1, "call", "need_task", "--args", args, "--task", "--wait", "--interval", "0.2")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    events = ran.events
    assert events[0]["event"] == "created"
    task_id = events[0]["task_id"]
    assert events[0]["task"]["taskId"] == task_id
    statuses = [e["status"] for e in ran.of("status")]
    assert statuses[-1] == "completed"
    assert ran.last == {
        "event": "outcome",
        "task_id": task_id,
        "status": "completed",
        "result": ran.last["result"],
        "exit_code": 0,
    }
    assert texts(ran.last["result"]) == "echo (task): scene 3"


def test_a_2026_task_call_waits_the_same_way(gen2: list[str]) -> None:
    args = '{"seconds": 0.3, "label": "a"}'
    ran = cli(*gen2, "call", "slow_compute", "--args", args, "--task", "--wait")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert ran.events[0]["event"] == "created"
    assert ran.last["status"] == "completed"
    assert texts(ran.last["result"]) == "computed a in 0.3s"


def test_a_failed_task_exits_1(mcp1: list[str], fastmcp4: list[str]) -> None:
    ran = cli(*mcp1, "call", "fail", "--task", "--wait")
    assert ran.code == ExitCode.FAILED, ran.stderr
    assert ran.last["status"] == "failed"
    assert ran.last["error"] == {"type": "TaskFailed", "message": "boom"}
    # 2026-07-28: a tool error is a completed task whose result has isError (E S7).
    ran = cli(*fastmcp4, "call", "failing_job", "--task", "--wait")
    assert ran.code == ExitCode.FAILED, ran.stderr
    assert ran.last["status"] == "completed"
    assert ran.last["result"]["isError"] is True
    assert "job failed on purpose" in texts(ran.last["result"])


def test_a_deadline_exits_4_and_says_the_task_goes_on(mcp1: list[str], fastmcp4: list[str]) -> None:
    for server, tool in ((mcp1, "need_task"), (fastmcp4, "slow_compute")):
        ran = cli(
            *server, "--deadline", "0.3", "call", tool, "--args", '{"seconds": 5}', "--task",
            "--wait",
        )  # fmt: skip
        assert ran.code == ExitCode.EXPIRED, ran.stderr
        assert ran.last["event"] == "outcome"
        assert ran.last["status"] == "working"
        assert ran.last["error"]["type"] == "DeadlineExceeded"
        assert "--deadline 0.3s reached" in ran.stderr
        assert "keeps running" in ran.stderr


# -- one task, several commands ------------------------------------------------------------------


def test_status_wait_result_and_cancel_each_in_its_own_process(fastmcp4: list[str]) -> None:
    started = cli(*fastmcp4, "call", "slow_compute", "--args", '{"seconds": 0.5}', "--task")
    assert started.code == 0, started.stderr
    assert [e["event"] for e in started.events] == ["created"]
    task_id = started.last["task_id"]
    status = cli(*fastmcp4, "status", task_id)
    assert status.code == 0, status.stderr
    assert status.last["event"] == "status"
    assert status.last["task_id"] == task_id
    assert status.last["status"] in ("working", "completed")
    waited = cli(*fastmcp4, "wait", task_id)
    assert waited.code == 0, waited.stderr
    assert texts(waited.last["result"]) == "computed  in 0.5s"
    result = cli(*fastmcp4, "result", task_id)
    assert result.code == 0, result.stderr
    assert [e["event"] for e in result.events] == ["outcome"]  # no progress lines
    assert result.last["result"] == waited.last["result"]


def test_a_task_cancelled_from_another_process_ends_the_wait_with_3(
    fastmcp4: list[str],
) -> None:
    waiting = subprocess.Popen(
        [*CLI, *fastmcp4, "--interval", "0.2", "call", "slow_compute", "--task", "--wait",
         "--args", '{"seconds": 30}'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=REPO,
    )  # fmt: skip
    try:
        assert waiting.stdout is not None
        created = json.loads(waiting.stdout.readline())
        assert created["event"] == "created"
        cancel = cli(*fastmcp4, "cancel", created["task_id"])
        assert cancel.code == 0, cancel.stderr
        assert cancel.last["event"] == "cancel"
        out, err = waiting.communicate(timeout=RUN_TIMEOUT)
    finally:
        stop_process(waiting)  # type: ignore[arg-type]
    assert waiting.returncode == ExitCode.CANCELLED, err
    last = json.loads(out.splitlines()[-1])
    assert last["status"] == "cancelled"
    assert last["task_id"] == created["task_id"]
    assert last["error"]["type"] == "Cancelled"


def test_a_2025_task_of_another_session_is_lost_with_a_hint(mcp1: list[str]) -> None:
    started = cli(*mcp1, "call", "need_task", "--args", '{"seconds": 5}', "--task")
    assert started.code == 0, started.stderr
    task_id = started.last["task_id"]
    for command in ("status", "wait", "cancel"):
        ran = cli(*mcp1, command, task_id)
        assert ran.code == ExitCode.LOST, (command, ran.stderr)
        assert ran.last["error"]["type"] == "TaskNotFound"
        assert ran.last["task_id"] == task_id
        assert "another session" in ran.last["hint"]


def test_an_unknown_task_id_exits_8(fastmcp4: list[str], ts1: list[str]) -> None:
    ran = cli(*fastmcp4, "status", "no-such-task")
    assert ran.code == ExitCode.LOST
    assert ran.last["error"]["code"] == -32602
    ran = cli(*fastmcp4, "wait", "-no-such-task", "--json")  # ids may start with '-'
    assert ran.code == ExitCode.LOST
    assert ran.last["task_id"] == "-no-such-task"
    ran = cli(*ts1, "result", "no-such-task")
    assert ran.code == ExitCode.LOST
    assert ran.last["status"] is None


def test_list_is_2025_only(gen1: list[str], fastmcp4: list[str]) -> None:
    ran = cli(*gen1, "list")
    assert ran.code == 0, ran.stderr
    assert ran.of("error") == []  # a new session: its own tasks only (none yet)
    ran = cli(*fastmcp4, "list")
    assert ran.code == ExitCode.USAGE
    assert ran.last["error"]["type"] == "UnsupportedInGeneration"


def test_probe_reports_the_generations(mcp1: list[str], fastmcp4: list[str]) -> None:
    ran = cli(*mcp1, "probe")
    assert ran.code == 0, ran.stderr
    [found] = ran.of("probe")
    assert found["generations"] == ["2025-11-25"]
    assert found["task_generations"] == ["2025-11-25"]
    assert found["initialize"]["serverInfo"]["name"] == "mcp1-tasks-peer"
    # Read-only by default: no tool called, so nothing fails; each rule has its line.
    rules = ran.of("rule")
    assert rules
    assert all(set(r) == {"event", "rule", "level", "verdict", "evidence"} for r in rules)
    assert not [r for r in rules if r["verdict"] == "fail"]
    assert ran.last["event"] == "rules"
    assert ran.last["verdicts"]["fail"] == 0
    ran = cli(*fastmcp4, "probe")
    assert ran.code == 0, ran.stderr
    assert "2026-07-28" in ran.of("probe")[0]["task_generations"]
    assert ran.last["generation"] == "2026-07-28"
    assert ran.last["verdicts"]["fail"] == 0


def test_probe_reports_a_peers_known_deviations_under_their_rules(mcp1: list[str]) -> None:
    """mcp 1.30, with tools the probe may call: V-08 (no ttl in tasks/get), V-12 (a failed
    task's tasks/result holds only _meta), V-16 (a task-required tool answers a plain call):
    each a failure with its evidence, nothing else, exit 1."""
    safe = ["--safe-tool", 'slow_echo={"text": "x", "seconds": 0.2}', "--safe-tool", "fail"]
    ran = cli(*mcp1, "probe", *safe)
    assert ran.code == ExitCode.FAILED, ran.stderr
    failed = {r["rule"] for r in ran.of("rule") if r["verdict"] == "fail"}
    assert failed == {"V-08", "V-12", "V-16"}
    for rule in ran.of("rule"):
        if rule["verdict"] == "fail":
            assert rule["level"] == "MUST"
            assert rule["evidence"]["detail"]


def test_probe_in_2026_07_28(fastmcp4: list[str]) -> None:
    safe = ["--safe-tool", 'slow_compute={"seconds": 0.2}', "--safe-tool", "failing_job"]
    ran = cli(*fastmcp4, "probe", *safe)
    assert ran.code == 0, ran.stderr
    assert ran.last["generation"] == "2026-07-28"
    assert ran.last["verdicts"]["fail"] == 0
    assert ran.last["verdicts"]["pass"] > 0


# -- input ---------------------------------------------------------------------------------------


def test_input_without_inputs_exits_5_saying_how_to_answer(
    ts1: list[str], fastmcp4: list[str]
) -> None:
    ran = cli(*ts1, "call", "confirm", "--args", '{"text": "go"}', "--task", "--wait")
    assert ran.code == ExitCode.INPUT, ran.stderr
    assert ran.last["status"] == "input_required"
    assert ran.last["error"]["type"] == "InputNotHandled"
    assert "--inputs FILE.json or --inputs interactive" in ran.stderr
    ran = cli(*fastmcp4, "call", "confirm_delete", "--task", "--wait")
    assert ran.code == ExitCode.INPUT, ran.stderr
    assert "--inputs FILE.json or --inputs interactive" in ran.last["hint"]
    ran = cli(*fastmcp4, "call", "confirm_delete")  # MRTR: the plain call needs input first
    assert ran.code == ExitCode.INPUT, ran.stderr
    assert ran.last["error"]["type"] == "InputRequired"


def test_inputs_file_answers_an_elicitation_by_its_message(gen1: list[str], tmp_path: Path) -> None:
    inputs = answers_file(tmp_path, {"Confirm: deploy?": {"content": {"ok": True}}})
    ran = cli(
        *gen1, "--inputs", inputs, "call", "confirm", "--args", '{"text": "deploy"}', "--task",
        "--wait",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    assert ran.last["status"] == "completed"
    assert "action=accept" in texts(ran.last["result"])
    assert "onfirmed=" in texts(ran.last["result"])
    kinds = [(e["kind"], e["method"]) for e in ran.of("input")]
    assert ("answered", "elicitation/create") in kinds


def test_inputs_file_default_answer(ts1: list[str], tmp_path: Path) -> None:
    inputs = answers_file(tmp_path, {"Confirm: deploy?": {}, "*": {"action": "decline"}})
    ran = cli(
        *ts1, "--inputs", inputs, "call", "confirm", "--args", '{"text": "wipe"}', "--task",
        "--wait",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    assert texts(ran.last["result"]) == "confirmed=false action=decline"


def test_inputs_file_answers_sampling(mcp1: list[str], tmp_path: Path) -> None:
    inputs = answers_file(tmp_path, {"sampling/createMessage": "short and sweet"})
    ran = cli(
        *mcp1, "--inputs", inputs, "call", "summarize", "--args", '{"text": "notes"}', "--task",
        "--wait",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    assert texts(ran.last["result"]) == "model mcp-tasks-cli said: short and sweet"


def test_inputs_file_answers_2026_questions(fastmcp4: list[str], tmp_path: Path) -> None:
    inputs = answers_file(
        tmp_path,
        {
            "Delete a.txt?": {"content": {"confirm": True}},
            "First name?": {"content": {"value": "Ada"}},
            "Last name?": {"content": {"value": "Lovelace"}},
        },
    )
    ran = cli(
        *fastmcp4, "--inputs", inputs, "call", "confirm_delete", "--args", '{"filename": "a.txt"}',
        "--task", "--wait",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    assert texts(ran.last["result"]) == "deleted a.txt"
    ran = cli(*fastmcp4, "--inputs", inputs, "call", "multi_input", "--task", "--wait")
    assert ran.code == 0, ran.stderr
    assert "first={'value': 'Ada'}" in texts(ran.last["result"])
    # MRTR on a plain call: answered by its input key too.
    by_key = answers_file(tmp_path, {"name": {"content": {"name": "Grace"}}})
    ran = cli(*fastmcp4, "--inputs", by_key, "call", "ask_plain")
    assert ran.code == 0, ran.stderr
    assert texts(ran.last["result"]) == "Hi Grace"


def test_a_question_the_file_does_not_answer_exits_5_naming_the_file(
    mcp1: list[str], tmp_path: Path
) -> None:
    inputs = answers_file(tmp_path, {"Something else?": {"content": {}}})
    ran = cli(*mcp1, "--inputs", inputs, "call", "confirm", "--task", "--wait")
    assert ran.code == ExitCode.INPUT, ran.stderr
    assert inputs in ran.last["hint"]
    assert "'Confirm: hello?'" in ran.last["hint"]


def test_an_unusable_inputs_file_is_a_usage_error(mcp1: list[str], tmp_path: Path) -> None:
    for content in ("not json", "[1, 2]", '{"x": {"action": "maybe"}}'):
        path = tmp_path / "bad.json"
        path.write_text(content, encoding="utf-8")
        ran = cli(*mcp1, "--inputs", str(path), "call", "confirm", "--task")
        assert ran.code == ExitCode.USAGE, (content, ran.stderr)
        assert str(path) in ran.last["error"]["message"]


# -- what breaks ---------------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


def test_a_refused_connection_or_a_dead_child_exits_6() -> None:
    ran = cli("--url", f"http://127.0.0.1:{closed_port()}/mcp", "tools")
    assert ran.code == ExitCode.CONNECTION
    assert ran.last["event"] == "error"
    assert ran.last["status"] is None
    ran = cli("--stdio", shlex.join([sys.executable, "-c", "pass"]), "tools")
    assert ran.code == ExitCode.CONNECTION
    ran = cli("--url", f"http://127.0.0.1:{closed_port()}/mcp", "probe")
    assert ran.code == ExitCode.CONNECTION
    assert ran.last["generations"] == []


def test_a_server_that_breaks_the_protocol_exits_7() -> None:
    garbage = shlex.join([sys.executable, str(REPO / "tests" / "faulty" / "stdio_garbage.py")])
    ran = cli("--stdio", garbage, "tools")
    assert ran.code == ExitCode.PROTOCOL
    assert ran.last["error"]["type"] == "DecodeError"
    assert ran.last["error"]["path"].startswith("$.result.tools")
    ran = cli("--stdio", garbage, "status", "t-1")
    assert ran.code == ExitCode.PROTOCOL


# -- the terminal --------------------------------------------------------------------------------


@attrs.frozen
class Screen:
    code: int
    text: str
    """Everything written to the terminal, escape sequences removed."""


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def in_terminal(args: Sequence[str], replies: Sequence[tuple[str, str]] = ()) -> Screen:
    """Run the CLI on a pseudo-terminal (120x40); each ``(prompt, reply)`` is typed once the
    prompt text appears on the screen after the previous reply was typed."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(
        [*CLI, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env(TERM="xterm-256color", COLUMNS="120", LINES="40"),
        cwd=REPO,
        close_fds=True,
    )
    os.close(slave)
    pending = list(replies)
    raw = b""
    mark = 0  # where the screen stood when the last reply was typed
    deadline = time.monotonic() + RUN_TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            raw += chunk
            screen = ANSI.sub("", raw.decode("utf-8", "replace"))
            if pending and pending[0][0] in screen[mark:]:
                os.write(master, pending.pop(0)[1].encode())
                mark = len(screen)
        proc.wait(timeout=10)
    finally:
        os.close(master)
        stop_process(proc)
    return Screen(proc.returncode, ANSI.sub("", raw.decode("utf-8", "replace")))


def test_the_live_display_shows_the_status_then_the_outcome(mcp1: list[str]) -> None:
    # 3 s of work: the live line is redrawn every 0.1 s, and a line naming the next poll needs
    # the task tracked first; at load 10-14 a 1 s task once ended before such a redraw.
    args = '{"text": "on a terminal", "seconds": 3}'
    screen = in_terminal([*mcp1, "call", "need_task", "--args", args, "--task", "--wait"])
    assert screen.code == 0, screen.text
    assert "task created:" in screen.text
    assert "working" in screen.text
    assert "elapsed" in screen.text
    assert "next poll" in screen.text or "polling" in screen.text
    assert "completed" in screen.text
    assert "echo (task): on a terminal" in screen.text
    assert '"event"' not in screen.text  # a terminal gets the display, not JSON lines


def test_interactive_input_asks_each_field_typed_by_its_schema(mcp1: list[str]) -> None:
    screen = in_terminal(
        [*mcp1, "--inputs", "interactive", "call", "confirm", "--args", '{"text": "ship it"}',
         "--task", "--wait"],
        replies=[("(accept):", "\n"), ("[y/n]", "y\n")],
    )  # fmt: skip
    assert screen.code == 0, screen.text
    assert "asks: Confirm: ship it?" in screen.text
    assert "confirmed=True action=accept" in screen.text


def test_interactive_input_answers_2026_questions_one_at_a_time(fastmcp4: list[str]) -> None:
    accept = ("(accept):", "\n")
    replies = [accept, ("value", "Ada\n"), accept, ("value", "Lovelace\n")]
    screen = in_terminal(
        [*fastmcp4, "--inputs", "interactive", "call", "multi_input", "--task", "--wait"],
        replies=replies,
    )
    assert screen.code == 0, screen.text
    assert "asks: First name?" in screen.text
    assert "asks: Last name?" in screen.text
    assert "{'value': 'Ada'}" in screen.text
    assert "{'value': 'Lovelace'}" in screen.text


def test_tables_on_a_terminal(mcp1: list[str]) -> None:
    screen = in_terminal([*mcp1, "tools"])
    assert screen.code == 0, screen.text
    assert re.search(r"need_task\s+required", screen.text)
    screen = in_terminal([*mcp1, "probe"])
    assert screen.code == 0, screen.text
    assert re.search(r"runs tasks in\s+2025-11-25", screen.text)
    assert re.search(r"V-01\s+MUST\s+pass", screen.text)


# -- nox -s serve --------------------------------------------------------------------------------


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    require_peer("mcp1")
    require_peer("fastmcp4")
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "peers" / "serve.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env(),
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("serving"):
                break
        yield proc, lines
    finally:
        stop_process(proc)  # type: ignore[arg-type]


def test_serve_starts_the_bundled_servers_and_prints_commands_that_work(
    served: tuple[subprocess.Popen[str], list[str]],
) -> None:
    proc, lines = served
    urls = dict(re.findall(r"^(\w+) \(.*\): (http://127\.0\.0\.1:\d+/mcp)$", "".join(lines), re.M))
    assert set(urls) == {"mcp1", "fastmcp4"}
    samples = [line.strip() for line in lines if line.strip().startswith("mcp-tasks ")]
    assert f"mcp-tasks --url {urls['mcp1']} tools" in samples
    ran = cli("--url", urls["mcp1"], "tools")
    assert ran.code == 0, ran.stderr
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    assert proc.wait(timeout=30) == 0
