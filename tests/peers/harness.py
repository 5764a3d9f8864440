"""Start the real MCP peer servers (installed by ``install.py``) for tests.

``import peers.harness`` works when ``tests/`` is on ``sys.path`` (pytest
``pythonpath = ["tests"]``). The peers root is ``$MCP_TASKS_PEERS_DIR`` if set, else
``<repo>/.peers``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

import attrs

from .install import (
    FASTMCP3_SCRIPT,
    FASTMCP4_SCRIPT,
    HERE,
    MCP1_SCRIPT,
    MCP2_SCRIPT,
    SPECS,
    default_root,
    peer_dir,
    stamp_ok,
    sync_ts1_script,
    venv_python,
)

__all__ = [
    "PEERS",
    "Peer",
    "PeerStartError",
    "peer_available",
    "peers_root",
    "run_in_group",
    "running_http_peer",
    "stdio_command",
    "stdio_env",
    "stop_process",
]

HOST = "127.0.0.1"
START_TIMEOUT = 20.0  # seconds until the HTTP port must accept connections
STOP_TIMEOUT = 5.0  # seconds between SIGTERM and SIGKILL


# fastmcp: no startup banner on stdout/stderr, no update check over the network.
FASTMCP_ENV = (("FASTMCP_SHOW_SERVER_BANNER", "false"), ("FASTMCP_CHECK_FOR_UPDATES", "off"))


@attrs.frozen
class Peer:
    """One third-party MCP server: 2025-11-25 tasks, 2026-07-28 tasks, or none (mcp2)."""

    name: Literal["mcp1", "ts1", "fastmcp4", "mcp2", "fastmcp3"]
    version: str  # the pinned package version
    package: str  # "mcp", "fastmcp" (PyPI) or "@modelcontextprotocol/sdk" (npm)
    kind: Literal["python", "node"]
    protocol_version: str = "2025-11-25"
    script: str = MCP1_SCRIPT  # python peers: the server script in tests/peers/
    env: tuple[tuple[str, str], ...] = ()  # extra environment for every start (HTTP, stdio)

    @property
    def requirement(self) -> str:
        return SPECS[self.name].requirement


PEERS: dict[str, Peer] = {
    "mcp1": Peer(name="mcp1", version=SPECS["mcp1"].version, package="mcp", kind="python"),
    "ts1": Peer(
        name="ts1",
        version=SPECS["ts1"].version,
        package=SPECS["ts1"].package,
        kind="node",
    ),
    # 2026-07-28 with the io.modelcontextprotocol/tasks extension (SEP-2663).
    "fastmcp4": Peer(
        name="fastmcp4",
        version=SPECS["fastmcp4"].version,
        package="fastmcp",
        kind="python",
        protocol_version="2026-07-28",
        script=FASTMCP4_SCRIPT,
        env=FASTMCP_ENV,
    ),
    # 2026-07-28 without tasks of either generation (the negative peer).
    "mcp2": Peer(
        name="mcp2",
        version=SPECS["mcp2"].version,
        package="mcp",
        kind="python",
        protocol_version="2026-07-28",
        script=MCP2_SCRIPT,
    ),
    # 2025-11-25 tasks on fastmcp 3 (docket in memory): not one of the probe's clean peers;
    # the one whose early tasks/result and untagged in-task question it must catch.
    "fastmcp3": Peer(
        name="fastmcp3",
        version=SPECS["fastmcp3"].version,
        package="fastmcp",
        kind="python",
        script=FASTMCP3_SCRIPT,
        env=FASTMCP_ENV,
    ),
}


class PeerStartError(RuntimeError):
    """A peer server did not come up (its log is in the message)."""


def peers_root() -> Path:
    """``$MCP_TASKS_PEERS_DIR`` if set, else ``<repo>/.peers``."""
    return default_root()


def peer_available(peer: Peer) -> bool:
    """True if the peer is installed (stamp matches the pin) and can be started."""
    root = peers_root()
    spec = SPECS[peer.name]
    if not stamp_ok(spec, root):
        return False
    if peer.kind == "python":
        return venv_python(peer_dir(spec, root)).exists()
    pkg = peer_dir(spec, root) / "node_modules" / spec.package / "package.json"
    return shutil.which("node") is not None and pkg.exists()


def _server_argv(peer: Peer, *mode: str) -> list[str]:
    root = peers_root()
    spec = SPECS[peer.name]
    if peer.kind == "python":
        py = venv_python(peer_dir(spec, root))
        # -W: the mcp 1.x experimental tasks API warns on import; keep stderr quiet.
        script = HERE / peer.script
        return [str(py), "-W", "ignore::DeprecationWarning", str(script), *mode]
    node = shutil.which("node")
    if node is None:
        raise PeerStartError("node is not on PATH")
    # Run the copy next to node_modules (ESM imports resolve relative to the script);
    # re-copied whenever the source differs.
    return [node, str(sync_ts1_script(root)), *mode]


def stdio_command(peer: Peer) -> list[str]:
    """The argv that starts ``peer`` as an MCP server on stdin/stdout.

    Start it with ``env=stdio_env(peer)`` (fastmcp4 needs its environment variables).
    """
    return _server_argv(peer, "stdio")


def stdio_env(peer: Peer) -> dict[str, str] | None:
    """The environment to start ``stdio_command(peer)`` with; None: inherit this one.

    A full environment (``os.environ`` plus the peer's variables), so it suits both
    ``subprocess.Popen(env=...)`` and ``StdioTransport(env=...)``.
    """
    if not peer.env:
        return None
    return {**os.environ, **dict(peer.env)}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


def _read_log(log: IO[bytes]) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")[-8000:]


def _leads_group(proc: subprocess.Popen[Any]) -> bool:
    """Whether ``proc`` was started in a process group of its own (``start_new_session``)."""
    try:
        return os.getpgid(proc.pid) == proc.pid
    except ProcessLookupError:
        return False


def _signal(proc: subprocess.Popen[Any], sig: int, group: bool) -> None:
    try:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):  # gone in between
        pass


def stop_process(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """Stop ``proc``: SIGTERM, wait up to ``timeout`` s, then SIGKILL.

    A process started in a group of its own (``start_new_session=True``, as every server this
    harness starts) is stopped with its whole group, so what it started (npx's node, a
    server's workers) goes with it; SIGKILL reaches the group's leftovers even when the leader
    exited on SIGTERM. Any other process is signalled by its own pid only.
    """
    group = _leads_group(proc)
    if proc.poll() is None:
        _signal(proc, signal.SIGTERM, group)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _signal(proc, signal.SIGKILL, group)
            proc.wait()
    if group:
        _signal(proc, signal.SIGKILL, group)  # what is left of the group after its leader


def stop_group(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """Stop the whole process group ``proc`` leads (started with ``start_new_session=True``),
    whether or not ``proc`` itself is still running: SIGTERM, up to ``grace`` s for ``proc``,
    then SIGKILL to whatever is left of the group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):  # the group is empty
            break
        if sig == signal.SIGTERM:
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
    proc.wait()


def run_in_group(
    argv: list[str],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True, timeout=timeout)``, but in a
    process group of its own that is stopped whole however the wait ends: its timeout,
    pytest's timeout (raised inside the wait), or its end (leftover background jobs).

    ``subprocess.run`` kills only the process it started on a timeout: what that started
    (nox, pip, a server) lived on with no parent.
    """
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            stop_group(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


_PR_SET_PDEATHSIG = 1
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def die_with_parent(parent: int) -> None:
    """``preexec_fn`` (Linux): the child is killed when ``parent``, the process that started
    it, dies (``functools.partial(die_with_parent, os.getpid())``).

    A test process killed outright (a timeout's group kill, a crashed worker) runs no cleanup:
    without this its servers lived on with no parent (an mcp1 server 49 minutes after a
    timeout). Elsewhere it does nothing.
    """
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGKILL)


def _start(peer: Peer, port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    env = {**os.environ, **dict(peer.env)}
    if peer.kind == "python":
        env["PYTHONWARNINGS"] = "ignore::DeprecationWarning"
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.Popen(
        _server_argv(peer, "http", str(port)),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        preexec_fn=functools.partial(die_with_parent, os.getpid()),  # only prctl: fork-safe
    )


def _wait_until_listening(
    peer: Peer, proc: subprocess.Popen[bytes], port: int, log: IO[bytes]
) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise PeerStartError(
                f"{peer.name} HTTP server exited with code {proc.returncode} "
                f"before listening on port {port}; log:\n{_read_log(log)}"
            )
        if _port_open(port):
            return
        time.sleep(0.05)
    raise PeerStartError(
        f"{peer.name} HTTP server not listening on port {port} after "
        f"{START_TIMEOUT:.0f} s; log:\n{_read_log(log)}"
    )


@contextmanager
def running_http_peer(peer: Peer) -> Iterator[str]:
    """Run ``peer`` over Streamable HTTP on a free 127.0.0.1 port; yield its URL.

    The URL is ``http://127.0.0.1:PORT/mcp``. The process is stopped by its own pid on
    exit (SIGTERM, then SIGKILL after 5 s).
    """
    attempts = 3  # the free port may be taken between probing and the server's bind
    with tempfile.TemporaryFile(prefix=f"peer-{peer.name}-") as log:
        for attempt in range(1, attempts + 1):
            port = _free_port()
            log.seek(0)
            log.truncate()
            proc = _start(peer, port, log)
            try:
                _wait_until_listening(peer, proc, port, log)
            except PeerStartError:
                stop_process(proc)
                text = _read_log(log).lower()
                in_use = "address already in use" in text or "eaddrinuse" in text
                if attempt < attempts and in_use:
                    continue
                raise
            try:
                yield f"http://{HOST}:{port}/mcp"
            finally:
                stop_process(proc)
            return


if __name__ == "__main__":  # manual check: python -m peers.harness (from tests/)
    for _peer in PEERS.values():
        if not peer_available(_peer):
            print(f"{_peer.name}: not installed (run python tests/peers/install.py)")
            continue
        with running_http_peer(_peer) as _url:
            _env = "".join(f"{k}={v} " for k, v in _peer.env)
            print(f"{_peer.name}: {_url}  stdio: {_env}{' '.join(stdio_command(_peer))}")
