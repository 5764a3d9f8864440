"""Issue 22, a new user's first hour with ``mcp-tasks``: each stumble reported, as a test of
the stderr line the user reads and the exit code a script reads.

Against the real peers (mcp1: the official Python SDK, 2025-11-25; fastmcp4: 2026-07-28) where
they show the stumble, else a scripted server on 127.0.0.1. Each test names the item of the
issue it covers; every one of them failed before the change it tests.
"""

from __future__ import annotations

import itertools
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from conftest import require_peer
from peers.harness import stdio_command, stop_process
from rich.console import Console
from test_cli import GEN2, REPO, Ran, cli, env, in_terminal

import mcp_tasks_client
from mcp_tasks_client import Client, Generation, HttpTransport, ToolCall, errors
from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.cli._tty import RichOutput
from mcp_tasks_client.errors import DecodeError, UnexpectedPlainResult
from mcp_tasks_client.models import Implementation, TaskSupport, Tool, ToolExecution
from mcp_tasks_client.wire import decode, encode


@pytest.fixture
def mcp1(mcp1_http_url: str) -> list[str]:
    return ["--url", mcp1_http_url]


@pytest.fixture
def fastmcp4(fastmcp4_http_url: str) -> list[str]:
    return ["--url", fastmcp4_http_url, *GEN2]


def lines(ran: Ran) -> list[str]:
    """The stderr lines of a run (each starts ``mcp-tasks: ``)."""
    return ran.stderr.splitlines()


# -- item 1: a refused 2025-11-25 task call shows the server's reason, exit 1 --------------------


def test_a_task_call_with_bad_arguments_shows_the_servers_reason_and_exits_1(
    mcp1: list[str],
) -> None:
    """Was: ``UnexpectedPlainResult: ... got a plain result, not a task``, exit 7."""
    args = '{"seconds": "abc"}'
    ran = cli(*mcp1, "call", "slow_echo", "--args", args, "--task", "--wait")
    assert ran.code == ExitCode.FAILED, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: the server refused the call of 'slow_echo' and made no task: "
        "Input validation error: 'abc' is not of type 'number'"
    ]
    outcome = ran.last
    assert outcome["event"] == "outcome"
    assert outcome["exit_code"] == 1
    assert outcome["result"]["isError"] is True


def test_a_misspelt_tool_reads_alike_in_both_generations(
    mcp1: list[str], fastmcp4: list[str]
) -> None:
    for server in (mcp1, fastmcp4):
        ran = cli(*server, "call", "slow_ehco", "--task", "--wait")
        assert ran.code == ExitCode.FAILED, ran.stderr
        line, hint = lines(ran)  # and the hint that names `tools` (issue 34)
        assert "lists the server's tools" in hint
        assert line.startswith(
            "mcp-tasks: the server refused the call of 'slow_ehco' and made no task: "
        )
        assert "slow_ehco" in line.split("made no task: ", 1)[1]  # the server's own words


@pytest.mark.anyio
async def test_the_library_error_carries_the_servers_reason(mcp1_http_url: str) -> None:
    """``Client.start`` still raises UnexpectedPlainResult (a ProtocolError), now saying why."""
    info = Implementation("mcp-tasks-client-tests", "0")
    transport = HttpTransport(mcp1_http_url)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=info) as client:
        call = ToolCall("slow_echo", {"seconds": "abc"}).as_task()
        with pytest.raises(UnexpectedPlainResult) as caught:
            await client.start(call)
    error = caught.value
    assert error.refused
    assert error.server_said == "Input validation error: 'abc' is not of type 'number'"
    assert str(error).endswith(": Input validation error: 'abc' is not of type 'number'")


# -- item 5: transport errors a person can read --------------------------------------------------


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[str]:
    """A plain web server (Python's http.server) on 127.0.0.1: POST is answered with its HTML
    error page (501)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(_wait_for_port, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


async def _wait_for_port(port: int) -> None:
    with anyio.fail_after(30):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


def test_an_html_error_page_is_one_line_not_the_page(web_server: str) -> None:
    """Was: the whole page, 13 lines, on stderr and in the JSON message."""
    ran = cli("--url", web_server, "tools")
    assert ran.code == ExitCode.CONNECTION, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: HTTPStatusError: HTTP 501 to initialize: an HTML page titled "
        "'Error response' (is this an MCP endpoint?)"
    ]
    message = ran.last["error"]["message"]
    assert "\n" not in message
    assert "<" not in message


def test_the_wrong_generation_points_at_probe(mcp1: list[str]) -> None:
    """A 2025-11-25-only server asked in 2026-07-28 (HTTP 400 "Missing session ID")."""
    ran = cli(*mcp1, *GEN2, "tools")
    assert ran.code == ExitCode.CONNECTION, ran.stderr
    said = lines(ran)
    assert said[0].startswith("mcp-tasks: HTTPStatusError: HTTP 400")
    assert said[1] == (
        "mcp-tasks: if the server does not speak 2026-07-28 (--generation), "
        f"`mcp-tasks --url {mcp1[1]} probe` says which generations it does"
    )
    assert ran.last["hint"] == said[1].removeprefix("mcp-tasks: ")


def test_a_missing_stdio_command_is_named() -> None:
    """Was: ``FileNotFoundError(2, 'No such file or directory')``."""
    ran = cli("--stdio", "no-such-cmd --flag", "tools")
    assert ran.code == ExitCode.CONNECTION, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: FileNotFoundError: No such file or directory: 'no-such-cmd'",
        "mcp-tasks: --stdio runs 'no-such-cmd': is it installed, and on PATH (or a path to it)?",
    ]


# -- item 6: the command line's words -----------------------------------------------------------


def test_a_plain_call_of_a_task_only_tool_says_add_task(mcp1: list[str]) -> None:
    ran = cli(*mcp1, "call", "need_task", "--args", '{"text": "x"}')
    assert ran.code == ExitCode.USAGE, ran.stderr
    [line] = lines(ran)
    assert line.startswith(
        "mcp-tasks: TaskAugmentationRequired: tool 'need_task' must be called as a task: add --task"
    )
    assert "as_task" not in ran.stderr + ran.stdout


def test_a_task_call_of_a_task_forbidden_tool_says_without_task(mcp1: list[str]) -> None:
    ran = cli(*mcp1, "call", "plain_echo", "--args", '{"text": "x"}', "--task", "--wait")
    assert ran.code == ExitCode.USAGE, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: TaskAugmentationNotAllowed: tool 'plain_echo' does not run as a task: "
        "call it without --task; the server said: This tool does not support task-augmented "
        "invocation"
    ]


def test_the_input_hint_gives_a_cancel_command_that_can_be_pasted(fastmcp4: list[str]) -> None:
    """Was: ``mcp-tasks cancel ID``, which fails pasted (no server, no generation)."""
    ran = cli(*fastmcp4, "call", "confirm_delete", "--task", "--wait")
    assert ran.code == ExitCode.INPUT, ran.stderr
    task_id = ran.last["task_id"]
    command = f"mcp-tasks --url {fastmcp4[1]} --generation 2026-07-28 cancel --id={task_id}"
    assert lines(ran)[-1].endswith(f"(it still waits on the server: {command})")
    pasted = cli(*shlex.split(command)[1:])
    assert pasted.code == ExitCode.COMPLETED, pasted.stderr
    assert pasted.last["event"] == "cancel"


def test_ttl_in_2026_is_refused_in_cli_words_before_anything_is_sent(
    fastmcp4: list[str],
) -> None:
    ran = cli(*fastmcp4, "call", "slow_compute", "--task", "--ttl", "5")
    assert ran.code == ExitCode.USAGE, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: UsageError: --ttl: a 2026-07-28 client cannot ask for a ttl (the server "
        "picks how long it keeps a task): drop --ttl"
    ]
    assert "as_task" not in ran.stdout


def test_the_cancel_hint_can_be_pasted(fastmcp4: list[str]) -> None:
    """The hint at ``--deadline`` names the server and generation: pasted, it cancels."""
    args = '{"seconds": 30}'
    ran = cli(
        *fastmcp4, "--deadline", "0.5", "call", "slow_compute", "--args", args, "--task", "--wait"
    )
    assert ran.code == ExitCode.EXPIRED, ran.stderr
    hint = lines(ran)[-1]
    task_id = ran.last["task_id"]
    command = f"mcp-tasks --url {fastmcp4[1]} --generation 2026-07-28 cancel --id={task_id}"
    assert f"({command})" in hint
    pasted = cli(*shlex.split(command)[1:])
    assert pasted.code == ExitCode.COMPLETED, pasted.stderr
    assert pasted.last["event"] == "cancel"


# -- item 7: a 2025-11-25 server that elicits without --inputs exits 5 ------------------------


def test_an_elicitation_refused_for_want_of_inputs_exits_5_with_a_hint(mcp1: list[str]) -> None:
    """mcp 1.30 fails the task ("Client does not support elicitation capability"): was exit 1
    with no hint."""
    ran = cli(*mcp1, "call", "confirm", "--args", '{"text": "x"}', "--task", "--wait")
    assert ran.code == ExitCode.INPUT, ran.stderr
    task_id = ran.last["task_id"]
    assert lines(ran) == [
        f"mcp-tasks: task {task_id} asked for elicitation, which this run does not offer "
        "without --inputs: use --inputs FILE.json or --inputs interactive"
    ]
    assert ran.last["exit_code"] == ExitCode.INPUT
    assert ran.last["status"] == "failed"


# -- item 4: a task id the user can use ---------------------------------------------------------

SESSION_WARNING = (
    "mcp-tasks: a 2025-11-25 server may bind the task to this run's session, which ends with "
    "this run: later status, wait, result and cancel may not find it; add --journal FILE to "
    "keep the session (or --wait)"
)


def test_a_task_not_waited_on_says_at_start_that_later_runs_may_not_reach_it(
    mcp1: list[str], tmp_path: Path
) -> None:
    args = '{"seconds": 0.5}'
    ran = cli(*mcp1, "call", "slow_echo", "--args", args, "--task")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert lines(ran) == [SESSION_WARNING]
    # Said before the call is sent: a call the server refuses still gets it first.
    refused = cli(*mcp1, "call", "slow_ehco", "--task")
    assert lines(refused)[0] == SESSION_WARNING
    # Not said where a later run can reach the task: --journal, or --wait.
    journal = str(tmp_path / "tasks.db")
    kept = cli(*mcp1, "--journal", journal, "call", "slow_echo", "--args", args, "--task")
    assert kept.code == ExitCode.COMPLETED, kept.stderr
    assert kept.stderr == ""
    waited = cli(*mcp1, "call", "slow_echo", "--args", args, "--task", "--wait")
    assert waited.code == ExitCode.COMPLETED, waited.stderr
    assert waited.stderr == ""


def test_a_task_not_waited_on_over_stdio_says_the_server_ends_with_the_run() -> None:
    server = ["--stdio", shlex.join(stdio_command(require_peer("mcp1")))]
    ran = cli(*server, "call", "slow_echo", "--args", '{"seconds": 0.5}', "--task")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: over --stdio the server process ends with this run, and its tasks with "
        "it: add --wait to follow the task to its end"
    ]


def test_list_with_a_journal_lists_what_the_journal_holds(mcp1: list[str], tmp_path: Path) -> None:
    """Was: nothing (tasks/list in a new session)."""
    journal = str(tmp_path / "tasks.db")
    args = '{"seconds": 0.2}'
    started = cli(*mcp1, "--journal", journal, "call", "slow_echo", "--args", args, "--task")
    assert started.code == ExitCode.COMPLETED, started.stderr
    task_id = started.of("created")[0]["task_id"]
    waited = cli(*mcp1, "--journal", journal, "wait", task_id)  # ends it, in the journal too
    assert waited.code == ExitCode.COMPLETED, waited.stderr
    other = cli(*mcp1, "--journal", journal, "call", "slow_echo", "--args", args, "--task")
    open_id = other.of("created")[0]["task_id"]

    listed = cli(*mcp1, "--journal", journal, "list")
    assert listed.code == ExitCode.COMPLETED, listed.stderr
    assert listed.stderr == ""
    found = {e["task_id"]: e for e in listed.of("task")}
    assert set(found) == {task_id, open_id}
    assert found[task_id]["status"] == "completed"
    assert found[task_id]["open"] is False
    assert found[open_id]["open"] is True
    assert all(e["journaled"] and e["tool"] == "slow_echo" for e in found.values())
    # Without a server named: every server's; another server's: none.
    assert {e["task_id"] for e in cli("--journal", journal, "list").of("task")} == set(found)
    elsewhere = cli("--url", "http://127.0.0.1:9/mcp", "--journal", journal, "list")
    assert elsewhere.code == ExitCode.COMPLETED
    assert elsewhere.stdout == ""


def test_an_empty_list_without_a_journal_says_where_the_tasks_are(mcp1: list[str]) -> None:
    ran = cli(*mcp1, "list")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert lines(ran) == [
        "mcp-tasks: a 2025-11-25 server may list only the tasks of the session asking, and "
        "this run's is new: tasks started with --journal FILE are listed by list --journal FILE"
    ]


# -- item 8: one status line per change -------------------------------------------------------


def test_json_status_lines_come_one_per_change_not_one_per_poll(fastmcp4: list[str]) -> None:
    """fastmcp changes ``lastUpdatedAt`` at every poll: that was a line per poll (about 300 a
    minute). Now a line per change of status or status message."""
    args = '{"seconds": 2}'
    ran = cli(
        *fastmcp4, "--interval", "0.1", "call", "slow_compute", "--args", args, "--task", "--wait"
    )
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert ran.stderr == ""
    said = [(e["status"], e["task"].get("statusMessage")) for e in ran.of("status")]
    assert said, ran.stdout
    assert all(a != b for a, b in itertools.pairwise(said)), said  # each line a change
    assert said[-1][0] == "completed"
    assert len(said) <= 3, said  # working (maybe with a message), completed


# -- item 3: 2026-07-28 task support is unknown, never forbidden ---------------------------------


@pytest.mark.anyio
async def test_a_2026_listing_reads_task_support_as_unknown(fastmcp4_http_url: str) -> None:
    """E 4: the listing does not carry task support. Was: FORBIDDEN for every tool, while
    ``start()`` made tasks of them."""
    info = Implementation("mcp-tasks-client-tests", "0")
    transport = HttpTransport(fastmcp4_http_url)
    async with Client(transport, generation=Generation.V2026_07_28, client_info=info) as client:
        tools = {tool.name: tool async for tool in client.list_tools()}
    assert tools
    assert {tool.task_support for tool in tools.values()} == {TaskSupport.UNKNOWN}
    listed = tools["slow_compute"]
    assert not listed.task_support_listed
    wire = encode(listed, Generation.V2026_07_28)
    assert "taskSupportListed" not in wire  # not a wire field
    assert "execution" not in wire
    # The same tool read in 2025-11-25 (whose listings carry it): absent is forbidden, C-17.
    assert decode(wire, Tool, Generation.V2025_11_25).task_support is TaskSupport.FORBIDDEN
    assert decode(wire, Tool, Generation.V2026_07_28) == listed


def test_unknown_is_a_reading_never_a_wire_value() -> None:
    with pytest.raises(ValueError, match="not a wire value"):
        ToolExecution(task_support=TaskSupport.UNKNOWN)
    raw = {"name": "t", "inputSchema": {}, "execution": {"taskSupport": "unknown"}}
    for generation in Generation:
        with pytest.raises(DecodeError):
            decode(raw, Tool, generation)


def test_tools_shows_unknown_and_warns_of_a_tool_left_out(fastmcp4: list[str]) -> None:
    """Was: ``-`` on a terminal, and ``badly_annotated`` (an x-mcp-header on a number, E C60)
    dropped without a word although the library recorded an InvalidToolAnnotation."""
    ran = cli(*fastmcp4, "tools")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    support = {e["name"]: e["task_support"] for e in ran.of("tool")}
    assert "badly_annotated" not in support
    assert set(support.values()) == {"unknown"}
    [line] = lines(ran)
    assert line.startswith("mcp-tasks: tool 'badly_annotated' not listed: ")


def test_the_terminal_table_says_unknown_in_2026_and_the_listing_in_2025() -> None:
    console = Console(record=True, width=200)
    tool = {"name": "job", "inputSchema": {}}
    for generation, expected in (
        (Generation.V2026_07_28, "unknown"),
        (Generation.V2025_11_25, "forbidden"),
    ):
        out = RichOutput(generation)
        out.console = console
        out.tools([decode(tool, Tool, generation)])
        row = console.export_text().splitlines()[-1].split()
        assert row[:2] == ["job", expected]


# -- item 11: small things ----------------------------------------------------------------------


def test_version() -> None:
    ran = cli("--version")
    assert ran.code == ExitCode.COMPLETED, ran.stderr
    assert ran.stdout == (
        f"mcp-tasks {mcp_tasks_client.__version__} "
        "(mcp-tasks-client; protocol generations 2025-11-25, 2026-07-28)\n"
    )


def test_the_package_summary_does_not_call_2026_07_28_next() -> None:
    found = re.search(r'^description = "(.*)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert found is not None
    summary = found.group(1)
    assert "next" not in summary
    assert "2025-11-25" in summary
    assert "2026-07-28" in summary


def test_a_traceback_names_the_public_module_of_every_error() -> None:
    """Checked on main before issue 22's change (``errors.py`` sets ``__module__``): a
    traceback names ``mcp_tasks_client.errors.X``, an import that works, never a private one."""
    code = (
        "from mcp_tasks_client.cli import ExitCode\n"  # what the CLI imports, first
        "from mcp_tasks_client._exceptions import TaskNotFound\n"
        "raise TaskNotFound(-32602, 'no such task')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60
    )
    assert run.returncode == 1
    last = run.stderr.splitlines()[-1]
    assert last == "mcp_tasks_client.errors.TaskNotFound: JSON-RPC error -32602: no such task"
    todo: list[type[BaseException]] = [errors.MCPTasksError]
    seen: set[type[BaseException]] = set()
    while todo:
        cls = todo.pop()
        seen.add(cls)
        todo.extend(cls.__subclasses__())
    public = {c for c in seen if c.__module__.startswith("mcp_tasks_client")}
    assert len(public) >= 40
    for cls in public:
        parts = cls.__module__.split(".")
        assert not any(p.startswith("_") for p in parts), (cls, cls.__module__)


def test_the_interactive_prompt_takes_y_and_yes(mcp1: list[str]) -> None:
    """Was: the answer prompt took only accept/decline/cancel (``y`` refused), a yes/no field
    only y/n (``yes`` refused)."""
    screen = in_terminal(
        [*mcp1, "--inputs", "interactive", "call", "confirm", "--args", '{"text": "ship it"}',
         "--task", "--wait"],
        replies=[("(accept):", "y\n"), ("[y/n]", "Yes\n")],
    )  # fmt: skip
    assert screen.code == 0, screen.text
    assert "confirmed=True action=accept" in screen.text
    declined = in_terminal(
        [*mcp1, "--inputs", "interactive", "call", "confirm", "--args", '{"text": "ship it"}',
         "--task", "--wait"],
        replies=[("(accept):", "n\n")],
    )  # fmt: skip
    assert declined.code == 0, declined.text
    assert "action=decline" in declined.text
