"""Paired start-up of ``mcp-tasks status`` between checkouts (issue 34, on a busy machine).

    python benchmarks/startup_ab.py NAME=DIR [NAME=DIR ...] [--rounds 15]

Each ``DIR`` holds ``mcp_tasks_client/`` and ``mcp_tasks_cli.py`` (``git archive COMMIT |
tar -x -C DIR``, or a worktree). Every round runs, one after the other, a Python importing
httpx and rich (the target's baseline) and ``mcp-tasks status`` from each checkout, through
the entry script as installed (``python -m mcp_tasks_cli``) against a port nothing listens
on (the server's answer excluded), after one warm-up round. Each row's figure is the median
of its rounds: CPU (user + system of the process, from ``wait4``: what a load that spans a
round changes least) and wall time, each also as a ratio to the baseline. The bytecode of
every checkout is compiled first, as an install does.

``--live`` adds, for each checkout, ``mcp-tasks status`` of a working task answered by
``benchmarks/server.py`` (started here, in its own process, and stopped by its PID at the
end): the whole path a status takes (the handshake, the Task decoded and printed as JSON).
Its CPU is the client process's alone; its wall time includes the server's answers.

``--tty`` adds, for each checkout, the refused ``mcp-tasks status`` with its stdout and stderr
on a pseudo-terminal, as typed at a shell: the terminal display's path (rich), which the
captured rows never take. The terminal is read by this process as the run writes to it.
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REFUSED = 6
"""``mcp-tasks status``'s exit code for the refused connection (ExitCode.CONNECTION)."""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


def _run(
    command: list[str], tree: Path | None, *, terminal: bool = False
) -> tuple[float, float, int]:
    """One process: its CPU (user + system) and wall seconds, and its exit code. With
    ``terminal``, its stdout and stderr are a pseudo-terminal, read to its end."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    controller, out = os.openpty() if terminal else (-1, subprocess.DEVNULL)
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=tree or Path.cwd(),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
    )
    if terminal:
        os.close(out)
        _drain(controller)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - started
    return usage.ru_utime + usage.ru_stime, took, os.waitstatus_to_exitcode(status)


def _drain(controller: int) -> None:
    """Read a pseudo-terminal until its last other end is closed (the run has exited)."""
    try:
        while True:
            select.select([controller], [], [], 60)
            try:
                if not os.read(controller, 65536):
                    return
            except OSError:  # EIO: nothing holds the terminal any more
                return
    finally:
        os.close(controller)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--live", action="store_true", help="also status against a server")
    parser.add_argument("--tty", action="store_true", help="also status on a pseudo-terminal")
    a = parser.parse_args()
    python = sys.executable
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    rows: dict[str, tuple[list[str], Path | None]] = {
        "a Python that imports httpx and rich": ([python, "-c", "import httpx, rich"], None)
    }
    server: subprocess.Popen[str] | None = None
    if a.live:
        here = Path(__file__).resolve().parent
        server = subprocess.Popen(
            [python, str(here / "server.py"), "0"], stdout=subprocess.PIPE, text=True
        )
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        live_url: str | None = f"http://127.0.0.1:{port}/mcp"
    else:
        live_url = None
    try:
        _measure(a, python, url, rows, live_url)
    finally:
        if server is not None:
            server.terminate()
            server.wait()


def _measure(
    a: argparse.Namespace,
    python: str,
    url: str,
    rows: dict[str, tuple[list[str], Path | None]],
    live_url: str | None,
) -> None:
    live_rows: set[str] = set()
    terminal_rows: set[str] = set()
    for spec in a.trees:
        name, _, directory = spec.partition("=")
        tree = Path(directory).resolve()
        targets = [str(tree / "mcp_tasks_client"), str(tree / "mcp_tasks_cli.py")]
        subprocess.run(
            [python, "-m", "compileall", "-q", *targets], check=True, capture_output=True
        )
        command = [python, "-m", "mcp_tasks_cli", "--url", url, "status", "t-1"]
        rows[f"`mcp-tasks status`, {name}"] = (command, tree)
        if a.tty:
            terminal_name = f"`mcp-tasks status` on a terminal, {name}"
            rows[terminal_name] = (command, tree)
            terminal_rows.add(terminal_name)
        if live_url is not None:
            status = [python, "-m", "mcp_tasks_cli", "--url", live_url, "status"]
            live_name = f"`mcp-tasks status` of a live task (server included), {name}"
            rows[live_name] = ([*status, "seeded-60000-1"], tree)
            live_rows.add(live_name)
    expected = {
        name: (0 if where is None or name in live_rows else REFUSED)
        for name, (_, where) in rows.items()
    }
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    wall: dict[str, list[float]] = {name: [] for name in rows}
    for round_ in range(a.rounds + 1):
        for name, (command, where) in rows.items():
            used, took, code = _run(command, where, terminal=name in terminal_rows)
            if code != expected[name]:  # a run that failed otherwise measured nothing
                raise SystemExit(f"{name}: exit code {code}, not {expected[name]}")
            if round_:  # round 0 warms the OS's caches
                cpu[name].append(used)
                wall[name].append(took)
    base_cpu = statistics.median(next(iter(cpu.values())))
    base_wall = statistics.median(next(iter(wall.values())))
    print(f"median of {a.rounds} rounds; load average {os.getloadavg()[0]:.2f}")
    print("| row | CPU ms | CPU ratio | wall ms | wall ratio |")
    print("|---|---|---|---|---|")
    for name in rows:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        figures = f"{c * 1000:.1f} | {c / base_cpu:.2f} | {w * 1000:.1f} | {w / base_wall:.2f}"
        print(f"| {name} | {figures} |")


if __name__ == "__main__":
    main()
