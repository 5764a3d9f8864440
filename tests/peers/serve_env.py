"""``serve.env``: how `nox -s serve` tells the next command its servers answer.

    python3 -m nox -s serve > serve.log 2>&1 &
    python3 tests/peers/serve_env.py --wait && . ./serve.env

``tests/peers/serve.py`` writes ``serve.env`` in the repository root once every server answers
(never before), atomically (a temporary file renamed over it): shell lines that set
``MCP1_URL``, ``FASTMCP4_URL`` (``JOURNAL_URL`` with PostgreSQL), ``SERVE_PID``,
``SERVE_STATE=ready`` and ``SERVE_TIME``. It removes the file when it stops. A run that fails
before it serves leaves ``SERVE_STATE=failed`` with a ``SERVE_REASON`` (serve.py when it can
say why, the nox session when installing failed).

``--wait`` starts nothing: it says on stderr what it waits for, at once and every 5 s, and
blocks until the file says ready with a live ``SERVE_PID``
(exit 0, the URLs printed), says failed after the wait began (exit 1: an earlier run's failure
is only noted, since a new run may be on its way), or ``--timeout`` passes (exit 1). So
README's next step, pasted at once, waits out the first run's minutes of installing instead of
racing it; a file left by a run killed hard (its pid gone) is not taken for this one's.

Standard library only: it runs in any shell, the project's venv active or not.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

ENV_FILE = Path(__file__).resolve().parent.parent.parent / "serve.env"
WAIT_TIMEOUT = 900.0  # the first run installs the servers: minutes on a slow network
SAY_EVERY = 5.0  # seconds between the lines that say what --wait waits for


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


def waiting_line(path: Path, waited: float, values: dict[str, str]) -> str:
    """What ``--wait`` is waiting for, said every ``SAY_EVERY`` seconds (stderr)."""
    if values.get("SERVE_STATE") == "ready":  # its pid is gone: a run killed hard
        what = f"{path.name} names a server that is gone (pid {values.get('SERVE_PID')})"
    elif values:
        what = f"{path.name} does not say ready yet"
    else:
        what = f"no {path.name} yet"
    return (
        f"waiting {waited:.0f} s for `python3 -m nox -s serve` to say its servers answer "
        f"({what}; its first run installs them, which takes minutes; is it running?)"
    )


def wait_until_served(
    path: Path,
    timeout: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Block until ``path`` says ready (0), or failed after we began, or ``timeout`` (1);
    every ``SAY_EVERY`` seconds (and at once) it says on stderr what it waits for."""
    began = time.time()
    start = clock()
    deadline = start + timeout
    next_say = start
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
        now = clock()
        if now >= next_say and now < deadline:
            print(waiting_line(path, now - start, values), file=sys.stderr, flush=True)
            next_say = now + SAY_EVERY
        if now >= deadline:
            print(
                f"no servers after {timeout:.0f} s: is `python3 -m nox -s serve` running? "
                "(its output says why not)",
                file=sys.stderr,
            )
            return 1
        sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Wait until `nox -s serve` answers.")
    parser.add_argument(
        "--wait",
        action="store_true",
        required=True,
        help="block until serve.env says the servers answer, then print their URLs",
    )
    parser.add_argument("--timeout", type=float, default=WAIT_TIMEOUT, help="seconds (900)")
    parser.add_argument("--env-file", type=Path, default=ENV_FILE, help="default: serve.env")
    args = parser.parse_args(argv)
    return wait_until_served(args.env_file, args.timeout)


if __name__ == "__main__":
    raise SystemExit(main())
