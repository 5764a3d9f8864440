"""Idempotent installer for the real MCP peer servers used by the test suite.

Usage::

    python tests/peers/install.py [--root DIR]

The default root is ``$MCP_TASKS_PEERS_DIR`` if set, else ``<repo>/.peers``
(git-ignored). It creates, each with a stamp file holding the pinned version:

* ``<root>/venv-mcp1``: a venv (made with the interpreter running this script) with
  ``mcp==1.30.0`` (official Python SDK, lowlevel ``Server``, 2025-11-25 tasks);
* ``<root>/npm-sdk1``: an npm folder with ``@modelcontextprotocol/sdk@1.32.2``
  (TypeScript SDK v1, 2025-11-25 tasks), plus copies of ``ts1_tasks_server.mjs`` and
  ``ts1_client.mjs`` (its client under the client-side suite) next to its
  ``node_modules`` (node resolves ESM imports relative to the script file);
* ``<root>/venv-fastmcp4``: a venv with ``fastmcp[tasks]==4.1.4`` (pulls mcp 2.3.0,
  fastmcp-tasks, pydocket; 2026-07-28 protocol, ``io.modelcontextprotocol/tasks``);
* ``<root>/venv-mcp2``: a venv with ``mcp==2.3.0`` (official Python SDK v2, 2026-07-28,
  no tasks of either generation: the negative peer);
* ``<root>/venv-fastmcp3``: a venv with ``fastmcp[tasks]==3.4.11`` (2025-11-25 tasks through
  docket; the peer whose early ``tasks/result`` and untagged in-task questions the probe
  must catch, issue 23);
* ``<root>/npm-ext-tasks``: an npm folder with ``@modelcontextprotocol/ext-tasks@0.2.2`` on
  ``@modelcontextprotocol/client@2.4.0`` (a task *client* library, measured by the
  client-side conformance suite), plus a copy of ``ext_tasks_client.mjs`` next to its
  ``node_modules``.

A second run with matching stamps does nothing (well under a second). A stamp that
differs from the pin triggers a clean reinstall. Standard library only: it must run
before anything else is installed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PEERS_DIR_ENV = "MCP_TASKS_PEERS_DIR"
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
STAMP_NAME = ".peer-stamp"
TS1_SCRIPT = "ts1_tasks_server.mjs"
TS1_CLIENT_SCRIPT = "ts1_client.mjs"
MCP1_SCRIPT = "mcp1_tasks_server.py"
FASTMCP4_SCRIPT = "fastmcp_tasks_server.py"
MCP2_SCRIPT = "mcp2_plain_server.py"
FASTMCP3_SCRIPT = "fastmcp3_tasks_server.py"
EXT_TASKS_SCRIPT = "ext_tasks_client.mjs"


@dataclasses.dataclass(frozen=True)
class PeerSpec:
    """What one peer pins and where it lives under the root."""

    name: str
    kind: str  # "python" (own venv) or "node" (own npm folder)
    package: str
    version: str
    dirname: str
    extras: str = ""  # pip extras, e.g. "tasks" => fastmcp[tasks]==4.1.4
    also: tuple[str, ...] = ()  # further pinned npm packages installed beside the main one
    scripts: tuple[str, ...] = ()  # files of this folder copied next to node_modules

    @property
    def requirement(self) -> str:
        """The pinned requirement, as written into the stamp file."""
        sep = "==" if self.kind == "python" else "@"
        extras = f"[{self.extras}]" if self.extras else ""
        main = f"{self.package}{extras}{sep}{self.version}"
        return " ".join((main, *self.also))


# What the SDK-host venvs hold besides the SDK: this library's runtime dependencies and what
# its tests there need (the library itself is imported from the checkout, PYTHONPATH). Kept
# equal to pyproject.toml's by tests/test_sdk_hosts.py.
LIBRARY_DEPS: tuple[str, ...] = (
    "attrs>=24.2",
    "cattrs>=24.1",
    "httpx>=0.27",
    "httpx-sse>=0.4.3,<0.5",
    "h11>=0.14",
    "anyio>=4.4",
    "trio>=0.26",
    "sniffio>=1.3",
    "pytest>=8",
    "pytest-timeout>=2.3",
    "hypothesis>=6.100",
    "opentelemetry-api>=1.20",
    "opentelemetry-sdk>=1.20",
)

SPECS: dict[str, PeerSpec] = {
    "mcp1": PeerSpec("mcp1", "python", "mcp", "1.30.0", "venv-mcp1"),
    "ts1": PeerSpec(
        "ts1",
        "node",
        "@modelcontextprotocol/sdk",
        "1.32.2",
        "npm-sdk1",
        scripts=(TS1_SCRIPT, TS1_CLIENT_SCRIPT),
    ),
    # Pinned exactly: an unpinned fastmcp[tasks] makes pip backtrack for minutes.
    "fastmcp4": PeerSpec("fastmcp4", "python", "fastmcp", "4.1.4", "venv-fastmcp4", "tasks"),
    "mcp2": PeerSpec("mcp2", "python", "mcp", "2.3.0", "venv-mcp2"),
    "fastmcp3": PeerSpec("fastmcp3", "python", "fastmcp", "3.4.11", "venv-fastmcp3", "tasks"),
    # The official SDK as hosts hold it (issue 38): a host's venv, with this library's
    # dependencies beside the SDK, where the SDK-host tests run (the two majors cannot share
    # one venv). fastmcp 3 sits on mcp 1.30, fastmcp 4 on mcp 2.3.
    "sdk1": PeerSpec(
        "sdk1", "python", "mcp", "1.30.0", "venv-sdk1", also=("fastmcp==3.4.11", *LIBRARY_DEPS)
    ),
    "sdk2": PeerSpec(
        "sdk2", "python", "mcp", "2.3.0", "venv-sdk2", also=("fastmcp==4.1.4", *LIBRARY_DEPS)
    ),
    "ext-tasks": PeerSpec(
        "ext-tasks",
        "node",
        "@modelcontextprotocol/ext-tasks",
        "0.2.2",
        "npm-ext-tasks",
        also=("@modelcontextprotocol/client@2.4.0",),
        scripts=(EXT_TASKS_SCRIPT,),
    ),
}


class InstallError(RuntimeError):
    """An install step failed."""


def default_root() -> Path:
    """``$MCP_TASKS_PEERS_DIR`` if set, else ``<repo>/.peers``."""
    env = os.environ.get(PEERS_DIR_ENV)
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".peers"


def peer_dir(spec: PeerSpec, root: Path) -> Path:
    return root / spec.dirname


def stamp_path(spec: PeerSpec, root: Path) -> Path:
    return peer_dir(spec, root) / STAMP_NAME


def venv_python(venv: Path) -> Path:
    if os.name == "nt":  # pragma: no cover - not used on the project's machines
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def stamp_ok(spec: PeerSpec, root: Path) -> bool:
    """True if the peer's stamp names exactly the pinned requirement."""
    try:
        return stamp_path(spec, root).read_text(encoding="utf-8").strip() == spec.requirement
    except OSError:
        return False


def sync_scripts(spec: PeerSpec, root: Path) -> list[Path]:
    """Copy the node peer's scripts next to its ``node_modules`` where they differ.

    Written atomically (temp file + rename): no caller ever sees a partial file.
    """
    out: list[Path] = []
    for name in spec.scripts:
        src = HERE / name
        dst = peer_dir(spec, root) / name
        data = src.read_bytes()
        try:
            if dst.read_bytes() == data:
                out.append(dst)
                continue
        except OSError:
            pass
        tmp = dst.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, dst)
        out.append(dst)
    return out


def sync_ts1_script(root: Path) -> Path:
    """Copy ``ts1_tasks_server.mjs`` next to ``node_modules`` if it differs."""
    return sync_scripts(SPECS["ts1"], root)[0]


def _run(argv: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-4000:]
        raise InstallError(f"command failed (exit {proc.returncode}): {' '.join(argv)}\n{tail}")


def _fresh_dir(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)


def _install_python(spec: PeerSpec, root: Path) -> None:
    venv = peer_dir(spec, root)
    _fresh_dir(venv)
    _run([sys.executable, "-m", "venv", str(venv)])
    py = str(venv_python(venv))
    _run(
        [
            py,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            *spec.requirement.split(" "),
        ]
    )
    probe = subprocess.run(
        [
            py,
            "-c",
            f"import importlib.metadata as m; print(m.version({spec.package!r}))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    got = probe.stdout.strip()
    if probe.returncode != 0 or got != spec.version:
        raise InstallError(f"{spec.package}: expected {spec.version}, found {got!r}")


def _install_node(spec: PeerSpec, root: Path) -> None:
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        raise InstallError("node and npm must be on PATH to install the TypeScript SDK peer")
    folder = peer_dir(spec, root)
    _fresh_dir(folder)
    folder.mkdir()
    _run([npm, "init", "-y"], cwd=folder)
    _run(
        [npm, "install", "--no-audit", "--no-fund", "--save-exact", *spec.requirement.split(" ")],
        cwd=folder,
    )
    manifest = folder / "node_modules" / spec.package / "package.json"
    try:
        got = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError) as exc:
        raise InstallError(f"{spec.package}: cannot read {manifest}: {exc}") from exc
    if got != spec.version:
        raise InstallError(f"{spec.package}: expected {spec.version}, found {got!r}")


def install(spec: PeerSpec, root: Path) -> str:
    """Install one peer unless its stamp already matches; return a one-line summary."""
    where = peer_dir(spec, root)
    if stamp_ok(spec, root):
        if spec.kind == "node":
            sync_scripts(spec, root)
        return f"{spec.name}: {spec.requirement} up to date ({where})"
    start = time.monotonic()
    stamp_path(spec, root).unlink(missing_ok=True)
    if spec.kind == "python":
        _install_python(spec, root)
    else:
        _install_node(spec, root)
        sync_scripts(spec, root)
    stamp_path(spec, root).write_text(spec.requirement + "\n", encoding="utf-8")
    took = time.monotonic() - start
    return f"{spec.name}: installed {spec.requirement} in {took:.1f} s ({where})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install the real MCP peer servers for tests.")
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help=f"install root (default: ${PEERS_DIR_ENV} or <repo>/.peers)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(SPECS),
        help="install only this peer (repeatable; default: all of them)",
    )
    args = parser.parse_args(argv)
    root: Path = args.root.expanduser().resolve() if args.root else default_root()
    root.mkdir(parents=True, exist_ok=True)
    failed = False
    for spec in SPECS.values():
        if args.only and spec.name not in args.only:
            continue
        try:
            print(install(spec, root), flush=True)
        except (InstallError, OSError) as exc:
            failed = True
            print(
                f"{spec.name}: INSTALL FAILED for {spec.requirement}: {exc}",
                file=sys.stderr,
            )
    if failed:
        print("peer install failed; see the messages above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
