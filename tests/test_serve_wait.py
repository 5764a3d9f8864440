"""`nox -s serve` and the step after it in README: `serve_env.py --wait` returns only once the
servers answer (serve.env says ready, with a live pid), fails at once when this run failed,
and never takes an earlier run's file for this one's.

The nox sessions install only what they run: `serve` its two peers, `demo` the one of its
generation (noxfile's SERVED_PEERS, DEMO_PEERS, demo_peer).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from peers.harness import run_in_group
from peers.serve import SAMPLES
from peers.serve_env import (
    SAY_EVERY,
    read_env_file,
    wait_until_served,
    waiting_line,
    write_env_file,
)

REPO = Path(__file__).resolve().parent.parent
SERVE_ENV = REPO / "tests" / "peers" / "serve_env.py"


def waiter(env_file: Path, timeout: float = 30) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(SERVE_ENV),
            "--wait",
            "--env-file",
            str(env_file),
            "--timeout",
            str(timeout),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_the_file_is_shell_lines_read_back_as_written(tmp_path: Path) -> None:
    env = tmp_path / "serve.env"
    values = {"MCP1_URL": "http://127.0.0.1:1/mcp", "JOURNAL_URL": "postgresql://p@/d?host=/t x"}
    write_env_file(env, "ready", {**values, "SERVE_PID": "1"})
    read = read_env_file(env)
    assert {k: read[k] for k in values} == values
    assert read["SERVE_STATE"] == "ready"
    assert not list(tmp_path.glob(".*.tmp"))  # renamed over, nothing left behind
    shell = run_in_group(
        ["bash", "-c", f'. {env} && printf \'%s\\n\' "$JOURNAL_URL" "$SERVE_STATE"'], timeout=30
    )
    assert shell.stdout.splitlines() == [values["JOURNAL_URL"], "ready"]


def test_the_waiter_blocks_until_the_file_says_ready_with_a_live_pid(tmp_path: Path) -> None:
    env = tmp_path / "serve.env"
    proc = waiter(env)
    try:
        # An earlier run killed hard left its file: its pid is gone, so it is not this one.
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        write_env_file(env, "ready", {"MCP1_URL": "http://127.0.0.1:1/mcp", "SERVE_PID": dead})
        time.sleep(1.5)  # the waiter polls every 0.5 s: it saw the stale file and goes on
        assert proc.poll() is None
        url = "http://127.0.0.1:2/mcp"
        write_env_file(env, "ready", {"MCP1_URL": url, "SERVE_PID": str(os.getpid())})
        code, out, _ = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0
    assert f"MCP1_URL={url}" in out


def test_the_waiter_fails_at_once_when_this_run_failed(tmp_path: Path) -> None:
    env = tmp_path / "serve.env"
    write_env_file(env, "failed", {"SERVE_REASON": "an earlier run's"})  # before the waiter
    proc = waiter(env)
    try:
        time.sleep(1.5)
        assert proc.poll() is None  # an earlier failure: a new run may be on its way
        write_env_file(env, "failed", {"SERVE_REASON": "not installed: mcp1"})
        code, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 1
    assert "earlier" in out
    assert "`nox -s serve` failed: not installed: mcp1" in err


def test_the_waiter_gives_up_at_its_timeout_and_says_what_to_check(tmp_path: Path) -> None:
    code, _, err = finish(waiter(tmp_path / "serve.env", timeout=0.5))
    assert code == 1
    assert "is `python3 -m nox -s serve` running?" in err


def test_the_waiter_says_what_it_waits_for_every_few_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 34: it waited silently for up to 900 s when nothing was serving. On simulated
    time: a line at once, then one per ``SAY_EVERY`` seconds, each naming the command it
    waits for and what it sees."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    env = tmp_path / "serve.env"
    code = wait_until_served(env, 12.0, clock=lambda: now[0], sleep=sleep)
    assert code == 1
    said = capsys.readouterr().err.splitlines()
    waiting = [line for line in said if line.startswith("waiting ")]
    assert [line.split(" s ")[0] for line in waiting] == ["waiting 0", "waiting 5", "waiting 10"]
    assert SAY_EVERY == 5.0
    for line in waiting:
        assert "`python3 -m nox -s serve` to say its servers answer (no serve.env yet;" in line
        assert line.endswith("is it running?)")
    assert said[-1].startswith("no servers after 12 s")


def test_a_file_of_a_server_gone_is_named_while_waiting(tmp_path: Path) -> None:
    env = tmp_path / "serve.env"
    write_env_file(env, "ready", {"SERVE_PID": "999999999"})
    line = waiting_line(env, 5.0, read_env_file(env))
    assert "serve.env names a server that is gone (pid 999999999)" in line


def _noxfile() -> ast.Module:
    return ast.parse((REPO / "noxfile.py").read_text())


def _constant(name: str) -> Any:
    for node in _noxfile().body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py has no {name}")


def test_serve_installs_the_peers_it_serves_and_no_other() -> None:
    assert set(_constant("SERVED_PEERS")) == set(SAMPLES)  # not mcp2, not ts1
    text = (REPO / "noxfile.py").read_text()
    serve = text[text.index("def serve(") : text.index("def bench(")]
    assert "_install_peers(session, *SERVED_PEERS)" in serve


def _demo_peer() -> Callable[[list[str]], str | None]:
    """noxfile's ``demo_peer``, compiled alone (the test venv has no nox to import it with)."""
    (node,) = [
        n for n in _noxfile().body if isinstance(n, ast.FunctionDef) and n.name == "demo_peer"
    ]
    namespace: dict[str, Any] = {"DEMO_PEERS": _constant("DEMO_PEERS")}
    exec(compile(ast.Module(body=[node], type_ignores=[]), "noxfile.py", "exec"), namespace)
    function: Callable[[list[str]], str | None] = namespace["demo_peer"]
    return function


def test_demo_installs_the_one_peer_it_runs() -> None:
    spec = importlib.util.spec_from_file_location("demo_example", REPO / "examples" / "demo.py")
    assert spec is not None
    assert spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    runs = {generation.value: setup.peer for generation, setup in demo.SETUPS.items()}
    assert _constant("DEMO_PEERS") == runs
    demo_peer = _demo_peer()
    assert demo_peer([]) == runs["2025-11-25"]
    assert demo_peer(["--generation", "2026-07-28"]) == runs["2026-07-28"]
    assert demo_peer(["--generation=2026-07-28"]) == runs["2026-07-28"]
    assert demo_peer(["--url", "http://127.0.0.1:1/mcp", "--generation", "2026-07-28"]) is None
    text = (REPO / "noxfile.py").read_text()
    session = text[text.index("def demo(") : text.index("def serve(")]
    assert "_install_peers(session, peer)" in session
    assert "_install_peers(session)" not in session
