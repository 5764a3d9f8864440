"""The newcomer path, run: every shell block of README.md, as written, in a fresh clone; and the
built wheel installed in a clean venv.

SLOW (marked ``slow``; about a minute each here): they make virtual environments and install
into them as a new user would. They reuse only what a user's machine would already have:
pip's cache and the local package indexes pip is configured with, and the installed peer
servers (``MCP_TASKS_PEERS_DIR``). The clone is of the committed HEAD of this checkout:
uncommitted edits are not what a new user gets.

Every shell block in README.md is listed in ``BLOCKS`` (and each line of the command-line
block in ``CLI_LINES``) with how it is covered, so a new command in README without a test
fails ``test_every_readme_shell_block_is_covered``. The one block not run here is the whole
suite (``python3 -m nox``): it cannot run inside itself; it is what ``.ci/run`` runs
(``tests/test_readme.py`` checks that).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import require_peer
from peers.harness import peers_root, run_in_group, stop_group
from test_docs import PROGRAMS, command_line

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()

RUN = "run here"
FIRST_LOOK_RUNS = "".join(
    f'python3 first_look.py "$MCP1_URL"{how}\n' for how in ("", " asyncio", " sync", " notebook")
)
SUITE = "the whole suite: what .ci/run runs (tests/test_readme.py)"
CLI = "line by line: CLI_LINES"

# Each README shell block, whole, and how it is covered.
BLOCKS: dict[str, str] = {
    "python3 -m pip install nox && python3 -m nox -s demo\n": RUN,
    "python3 -m pip install nox && python3 -m nox\n": SUITE,
    (
        "python3 -m venv .venv && . .venv/bin/activate\n"
        "python3 -m pip install -e '.[cli]' nox\n"
        "python3 -m nox -s serve > serve.log 2>&1 &\n"
    ): RUN,
    "python3 tests/peers/serve_env.py --wait && . ./serve.env\n": RUN,
    FIRST_LOOK_RUNS: RUN,
}
# The command-line block has placeholders (URL, ID, a server.py of yours): the lines run here
# get the served URLs and a task id put in; the others are run by the tests named.
CLI_LINES: dict[str, str] = {
    'mcp-tasks --url "$MCP1_URL" tools': RUN,
    'mcp-tasks --url "$MCP1_URL" call need_task --args \'{"text": "hi", "seconds": 5}\' --task '
    "--wait": RUN,
    'mcp-tasks --stdio "python server.py stdio" --inputs answers.json call confirm --task --wait': (
        "tests/test_cli.py::test_inputs_file_answers_an_elicitation_by_its_message"
    ),
    'mcp-tasks --url "$FASTMCP4_URL" --generation 2026-07-28 call slow_compute --task'
    "  # prints its id": RUN,
    'mcp-tasks --url "$FASTMCP4_URL" --generation 2026-07-28 status ID'
    "  # also: wait, result, cancel ID": RUN,
    'mcp-tasks --url "$MCP1_URL" list': RUN,
    'mcp-tasks --url "$MCP1_URL" probe --safe-tool \'slow_echo={"text": "x"}\''
    "  # one verdict per rule": (
        "tests/test_cli.py::test_probe_reports_a_peers_known_deviations_under_their_rules"
    ),
    'mcp-tasks --url "$MCP1_URL" --journal tasks.db call slow_echo --args \'{"seconds": 60}\' '
    "--task": ("tests/test_cli_journal.py::test_a_task_started_by_one_run_is_followed_by_the_next"),
    'mcp-tasks --url "$MCP1_URL" --journal tasks.db wait ID  # another run: the session resumed': (
        "tests/test_cli_journal.py::test_a_task_started_by_one_run_is_followed_by_the_next"
    ),
    "mcp-tasks --journal tasks.db resume"
    "              # every open task of the journal, to its end": (
        "tests/test_cli_journal.py::test_resume_after_the_waiting_run_was_killed"
    ),
}
AGENT_HOST = "python3 examples/agent_host.py"  # given inline, in "Progress, per task"


def shell_blocks() -> list[str]:
    """README's fenced blocks without a language, or marked as shell."""
    blocks: list[str] = []
    fence: str | None = None  # the language of the open block
    lines: list[str] = []
    for line in README.splitlines(keepends=True):
        if line.startswith("```"):
            if fence is None:
                fence, lines = line[3:].strip(), []
                continue
            if fence in {"", "sh", "bash", "shell", "console"}:
                blocks.append("".join(lines))
            fence = None
        elif fence is not None:
            lines.append(line)
    return blocks


def block(text: str) -> str:
    assert text in shell_blocks(), f"README no longer has this block:\n{text}"
    return text


def first_look_code() -> str:
    code = re.search(r"Save this as `first_look.py`.*?```python\n(.*?)```", README, re.S)
    assert code is not None
    return code.group(1)


def test_every_readme_shell_block_is_covered() -> None:
    found = shell_blocks()
    cli_blocks = [b for b in found if b.startswith("mcp-tasks ")]
    assert len(cli_blocks) == 1
    assert set(found) - set(cli_blocks) == set(BLOCKS), "a README shell block is not covered"
    assert cli_blocks[0].splitlines() == list(CLI_LINES)
    for where in CLI_LINES.values():
        if where != RUN:
            path, name = where.split("::")
            assert f"def {name}(" in (REPO / path).read_text()
    assert f"`{AGENT_HOST}`" in README
    ci = (REPO / ".ci" / "run").read_text()  # the SUITE block: what CI runs, as README gives it
    assert re.search(r"^python3 -m pip install .*\bnox\b", ci, re.M)
    assert re.search(r"^python3 -m nox( |$)", ci, re.M)


def test_the_repository_cites_only_files_it_contains() -> None:
    """Every `examples/...`, `tests/...`, `docs/...` path README and the guides name exists
    (the CHANGELOG may name what a change removed)."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]:
        text = doc.read_text()
        pattern = r"(?<![\w/.])((?:examples|tests|docs|benchmarks|\.ci)/[\w./-]*[\w/])"
        for path in re.findall(pattern, text):
            assert (REPO / path).exists(), f"{doc.name} names {path}, not in the repository"


# -- the slow part --------------------------------------------------------------------------------


def user_env(python_bin: Path) -> dict[str, str]:
    """A new user's shell: ``python_bin`` first on PATH, no venv of this suite's active."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    ours = str(Path(sys.prefix) / "bin")
    rest = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join([str(python_bin), *rest])
    env["MCP_TASKS_PEERS_DIR"] = str(peers_root())
    return env


def bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 180) -> str:
    run = run_in_group(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, timeout=timeout
    )
    assert run.returncode == 0, f"{script}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run.stdout


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    clone = tmp_path_factory.mktemp("newcomer") / "mcp-tasks-client"
    cloned = run_in_group(["git", "clone", "--quiet", str(REPO), str(clone)], timeout=60)
    assert cloned.returncode == 0, cloned.stderr
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head], check=True)
    return clone


@pytest.fixture(scope="module")
def user_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new user's ``python3``: a fresh venv (so the suite installs nothing globally)."""
    where = tmp_path_factory.mktemp("user-python")
    made = run_in_group([sys.executable, "-m", "venv", str(where)], timeout=120)
    assert made.returncode == 0, made.stderr
    return where / "bin"


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            kids += [int(c) for c in (task / "children").read_text().split()]
    return kids


def _runs_nox(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return argv[1:3] == [b"-m", b"nox"]  # not `pip install ... nox` before it


def _serve_pid(log: Path) -> int | None:
    found = re.search(r"^serving \(pid (\d+)\)", log.read_text() if log.exists() else "", re.M)
    return int(found.group(1)) if found else None


VENV = ". .venv/bin/activate\n"  # the same terminal as README's blocks before
SERVED = ". ./serve.env\n"  # ... after its `serve.py --wait && . ./serve.env`


@contextlib.contextmanager
def serving(clone: Path, env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Run the block that installs and starts `nox -s serve` in the background, then at once
    (copy-paste speed) the block that waits for it; yield the URLs serve.env holds; stop
    serve.py by its pid (it stops the servers, then nox ends)."""
    script = block(
        "python3 -m venv .venv && . .venv/bin/activate\n"
        "python3 -m pip install -e '.[cli]' nox\n"
        "python3 -m nox -s serve > serve.log 2>&1 &\n"
    )
    log = clone / "serve.log"
    proc = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", script + "wait\n"],  # wait: bash stays our child
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a group of its own: stopped whole, however the test ends
    )
    try:
        # The user pastes the next block once the first one gives the prompt back: when nox
        # is started in the background (pip ran in the foreground). That block does the
        # waiting, not this test: no look at the log.
        deadline = time.monotonic() + 240
        while not any(_runs_nox(child) for child in _children(proc.pid)):
            assert proc.poll() is None, f"{proc.stdout.read() if proc.stdout else ''}"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        waited = bash(
            VENV
            + block("python3 tests/peers/serve_env.py --wait && . ./serve.env\n")
            + 'printf "%s %s\\n" "$MCP1_URL" "$FASTMCP4_URL"\n',
            clone,
            env,
            timeout=900,
        )
        mcp1, fastmcp4 = waited.splitlines()[-1].split()
        assert _serve_pid(log) is not None, log.read_text()  # serve said so before the file
        installed = set(re.findall(r"^(\w+): \S+ (?:up to date|installed)", log.read_text(), re.M))
        assert installed == {"mcp1", "fastmcp4"}, log.read_text()  # not mcp2, not ts1
        for url in (mcp1, fastmcp4):
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url), waited
        yield {"mcp1": mcp1, "fastmcp4": fastmcp4}
    finally:
        pid = _serve_pid(log)
        if pid is None:  # not up yet: serve.py is the child of nox, the child of bash
            for nox in _children(proc.pid):
                for child in _children(nox):
                    pid = child
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)  # serve.py stops both servers by their pids
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - serve did not stop
            pass
        finally:
            stop_group(proc)  # bash, pip, nox and what is left of them (pytest's timeout too)
            if proc.stdout is not None:
                proc.stdout.close()


@pytest.mark.slow
def test_readme_commands_work_as_written_in_a_fresh_clone(
    fresh_clone: Path, user_python: Path
) -> None:
    require_peer("mcp1")
    require_peer("fastmcp4")
    env = user_env(user_python)

    # "Two commands": the demo.
    out = bash(block("python3 -m pip install nox && python3 -m nox -s demo\n"), fresh_clone, env)
    assert "outcome: completed -> ['progressed 4 steps" in out
    installed = set(re.findall(r"^(\w+): \S+ (?:up to date|installed)", out, re.M))
    assert installed == {"mcp1"}, out  # the one server it runs, not all four

    # "A first look": install into .venv, serve, the README's code saved as first_look.py.
    (fresh_clone / "first_look.py").write_text(first_look_code())
    bash("python3 -m nox -s lint", fresh_clone, env)  # saved where README says: lint passes
    with serving(fresh_clone, env):
        venv = VENV + SERVED
        out = bash(venv + block(FIRST_LOOK_RUNS), fresh_clone, env)
        # A task started, its question answered, its outcome waited for: on trio, on asyncio,
        # blocking in a plain script, and blocking inside a running loop (a notebook cell).
        assert out.count("the task asks: Confirm: ship it?") == 4, out
        assert out.count("completed: confirmed=True action=accept") == 4, out

        out = bash(venv + AGENT_HOST, fresh_clone, env)
        assert "deploy: completed -> confirmed=True action=accept" in out

        # The command line block, as written (serve.env's URLs), an id it printed for ID.
        task_id = ""
        for line, where in CLI_LINES.items():
            if where != RUN:
                continue
            gen2 = "--generation 2026-07-28" in line
            command = re.sub(r"\bID\b", task_id, line)
            out = bash(venv + command, fresh_clone, env)  # exit code 0, or it fails
            events = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
            kinds = {e["event"] for e in events}
            if "list" not in command.split()[:5]:  # list: a new session of its own, no task
                assert kinds, f"{command}: {out}"
            if " call " in command and " --wait" in command:
                assert events[-1]["event"] == "outcome", out
                assert events[-1]["status"] == "completed", out
            created = [e for e in events if e["event"] == "created"]
            if created and gen2:
                task_id = created[0]["task_id"]
        assert task_id

        # Every program of the guides, saved as README says (scratch/ is the clone's place
        # for them) and run with the command line its last lines give, unchanged.
        (fresh_clone / "scratch").mkdir()
        ran, extra = 0, 0
        for program in PROGRAMS:
            if "mcp_tasks_client.testing" in program.code:
                extra += 1  # the `testing` extra, not in README's venv: test_docs.py runs them
                continue
            saved = fresh_clone / "scratch" / "example.py"
            saved.write_text(program.code)
            args = " ".join(f'"${name}"' for name in command_line(program))
            bash(venv + f"python3 scratch/example.py {args}\n", fresh_clone, env, timeout=120)
            ran += 1
        assert extra <= 3  # api/conformance.md's probe, errors.md's retry, tasks.md's busy server
        assert ran == len(PROGRAMS) - extra


@pytest.mark.slow
def test_the_wheel_installs_in_a_clean_venv(fresh_clone: Path, tmp_path: Path) -> None:
    """`python -m build`, then the wheel alone (no extras), then with the cli extra."""
    env = user_env(Path(sys.base_prefix) / "bin")
    tools, clean, dist = tmp_path / "build-venv", tmp_path / "clean-venv", tmp_path / "dist"
    for venv in (tools, clean):
        made = run_in_group([sys.executable, "-m", "venv", str(venv)], timeout=120)
        assert made.returncode == 0, made.stderr
    bash(f"{tools}/bin/python -m pip install -q build", fresh_clone, env)
    bash(f"{tools}/bin/python -m build --outdir {dist} .", fresh_clone, env)
    (wheel,) = dist.glob("*.whl")
    assert len(list(dist.glob("*.tar.gz"))) == 1
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("py.typed", "cli/__init__.py", "conformance/__init__.py", "testing/__init__.py"):
        assert f"mcp_tasks_client/{needed}" in names
    assert not any(n.startswith(("tests/", "examples/")) for n in names)
    meta = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        .decode()
    )
    assert "Classifier: Programming Language :: Python :: 3.10" in meta
    assert "Provides-Extra: test" in meta

    py = clean / "bin" / "python"
    bash(f"{py} -m pip install -q {wheel}", tmp_path, env)
    out = bash(
        f"{py} -c 'import importlib.util, mcp_tasks_client, mcp_tasks_client.conformance;"
        ' print(mcp_tasks_client.__file__, importlib.util.find_spec("rich"))\'',
        tmp_path,
        env,
    )
    assert str(clean) in out
    assert out.strip().endswith("None")  # no extras: rich is not installed
    no_extra = subprocess.run(
        [str(clean / "bin" / "mcp-tasks"), "--help"], capture_output=True, text=True, check=False
    )
    assert no_extra.returncode == 2  # the cli extra is missing, and it says so
    assert "cli" in no_extra.stderr + no_extra.stdout

    bash(f"{py} -m pip install -q '{wheel}[cli]'", tmp_path, env)
    out = bash(f"{clean}/bin/mcp-tasks --help", tmp_path, env)
    assert "usage: mcp-tasks" in out


def test_the_test_extra_holds_everything_the_suite_needs() -> None:
    """pyproject's `test` extra >= nox's TEST_DEPS, the `cli` and the `testing` extras."""
    tomllib = pytest.importorskip("tomllib")  # 3.11+

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    noxfile = (REPO / "noxfile.py").read_text()
    deps = re.search(r"^TEST_DEPS = \[(.*?)^\]", noxfile, re.M | re.S)
    assert deps is not None
    test_deps = re.findall(r'"([^"]+)"', deps.group(1))

    def name(req: str) -> str:
        return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower()

    have = {name(r) for r in extras["test"]}
    for need in [*test_deps, *extras["cli"], *extras["testing"]]:
        assert name(need) in have, f"the test extra lacks {need}"
    assert "urls" not in project  # no real project URL yet (CHANGELOG says so)
