"""Start-up (issue 34, item 4): what importing the library and starting ``mcp-tasks`` cost,
each beside the baseline its target names, measured in one run (``bench.py --only startup``).

Every sample is a fresh interpreter; rows are interleaved (A, B, C, A, B, C...) so the
machine's load touches them alike, and a row's figure is the median of its rounds. The
package's bytecode is compiled first, as installing it does (pip compiles what it installs,
and the baselines' packages were): a tree run with ``PYTHONDONTWRITEBYTECODE`` set would
otherwise compile the library's source in every sample, and the baselines' never.

- import rows: the time of the ``import`` statement itself, inside the process
  (``time.perf_counter`` around it): the library's runtime dependencies (httpx, httpx-sse,
  attrs, anyio), a bare ``import mcp_tasks_client``, and what a first program imports
  (``Client``, ``HttpTransport``, ``InputRouter``, ``Poller``, ``ToolCall``);
- command rows: the wall time of a whole process (interpreter start included): a Python that
  imports httpx and rich, ``mcp-tasks --version``, and ``mcp-tasks status`` against a port
  nothing listens on (the server's answer excluded: the run ends at the refused connection).

Targets (issue 34): ``import mcp_tasks_client`` <= 1.3x the dependencies; ``mcp-tasks
--version`` and ``mcp-tasks status`` <= 1.5x the httpx-and-rich Python.

    python benchmarks/startup.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

IMPORTS = {
    "deps": "import httpx, httpx_sse, attrs, anyio",
    "bare": "import mcp_tasks_client",
    "program": "from mcp_tasks_client import Client, HttpTransport, InputRouter, Poller, ToolCall",
}
LABELS = {
    "deps": "runtime dependencies (httpx, httpx-sse, attrs, anyio)",
    "bare": "`import mcp_tasks_client`",
    "program": "a first program's names (`Client`, `HttpTransport`, `InputRouter`, `Poller`, "
    "`ToolCall`)",
    "httpx_rich": "a Python that imports httpx and rich",
    "version": "`mcp-tasks --version`",
    "status": "`mcp-tasks status` (connection refused: the server's answer excluded)",
}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


def _mcp_tasks(python: str) -> list[str]:
    """The installed ``mcp-tasks`` script beside ``python``, else its module."""
    script = Path(python).parent / "mcp-tasks"
    return [str(script)] if script.exists() else [python, "-m", "mcp_tasks_cli"]


def _import_seconds(python: str, statement: str) -> float:
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)\n"
    ran = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, timeout=120
    )
    return float(ran.stdout.split()[-1])


def _wall_seconds(command: list[str]) -> float:
    # This tree's package first: the installed script's directory, not the tree, is its
    # sys.path[0], so a venv with another checkout installed (editable) would run that one.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), _PATH]))}
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, cwd=REPO, env=env, timeout=120, check=False)
    return time.perf_counter() - started


_PATH = os.environ.get("PYTHONPATH", "")


def compile_package(python: str) -> None:
    """The package's bytecode, as an install leaves it (``compileall``: written whatever
    ``PYTHONDONTWRITEBYTECODE`` says)."""
    targets = [str(REPO / "mcp_tasks_client"), str(REPO / "mcp_tasks_cli.py")]
    subprocess.run(
        [python, "-m", "compileall", "-q", *targets],
        capture_output=True,
        check=True,
        cwd=REPO,
        timeout=300,
    )


def measure(python: str, rounds: int) -> dict[str, list[float]]:
    """Every row's samples (seconds), the rows interleaved within each round."""
    compile_package(python)
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    cli = _mcp_tasks(python)
    rows: dict[str, Callable[[], float]] = {
        **{
            name: (lambda statement=statement: _import_seconds(python, statement))
            for name, statement in IMPORTS.items()
        },
        "httpx_rich": lambda: _wall_seconds([python, "-c", "import httpx, rich"]),
        "version": lambda: _wall_seconds([*cli, "--version"]),
        "status": lambda: _wall_seconds([*cli, "--url", url, "status", "t-1"]),
    }
    for row in rows.values():  # one warm-up each: the first run fills the OS's caches
        row()
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(rounds):
        for name, row in rows.items():
            samples[name].append(row())
    return samples


def run(rounds: int, say: Callable[[str], None], python: str | None = None) -> dict[str, float]:
    """Measure and write the table (markdown lines through ``say``); the ratios by row."""
    samples = measure(python or sys.executable, rounds)
    median = {name: statistics.median(values) for name, values in samples.items()}
    ratios = {
        "bare": median["bare"] / median["deps"],
        "program": median["program"] / median["deps"],
        "version": median["version"] / median["httpx_rich"],
        "status": median["status"] / median["httpx_rich"],
    }
    say(
        f"**Start-up** (issue 34): median of {rounds} rounds, each sample a fresh interpreter, "
        f"rows interleaved, the package's bytecode compiled; load average "
        f"{os.getloadavg()[0]:.2f}. Import rows time the `import` statement inside the "
        "process; command rows time the whole process."
    )
    say("")
    say("| row | ms | ratio | target |")
    say("|---|---|---|---|")
    targets = {"bare": "<= 1.3", "version": "<= 1.5", "status": "<= 1.5"}
    for name in ("deps", "bare", "program", "httpx_rich", "version", "status"):
        ratio = f"{ratios[name]:.2f}" if name in ratios else "1 (baseline)"
        say(f"| {LABELS[name]} | {median[name] * 1000:.1f} | {ratio} | {targets.get(name, '')} |")
    say("")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    a = parser.parse_args()
    if not (Path(sys.executable).parent / "mcp-tasks").exists():
        print("(mcp-tasks is not installed beside this Python: its module runs instead)")
    run(a.rounds, print)


if __name__ == "__main__":
    main()
