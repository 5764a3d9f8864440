"""Instructions per poll under callgrind: a figure a loaded, shared machine does not move.

    python benchmarks/instructions.py [--small 100] [--large 400] ROW_ARGS...
    python benchmarks/instructions.py --burst [--tasks 200] [--small 2] [--large 4] ROW_ARGS...

Runs ``rows.py ROW_ARGS`` (one row, as ``ab.py`` takes it: ``lib --transport lean``,
``floor``, ``httpx``, ``lib-burst``, ``httpx-burst``) twice under ``valgrind --tool=callgrind``
against ``benchmarks/server.py`` (its own process, not counted), with ``--calls`` (sequential
rows) or ``--polls`` per task (``--burst``: ``--tasks`` at once) set to ``--small`` and then
``--large``, and prints the difference in instructions executed divided by the difference in
``tasks/get`` sent: the marginal instructions of one poll, without the process's start-up,
imports and handshake. Instructions are not CPU time (a cache miss costs no instruction), but
they are the same run after run whatever else the machine does, where CPU time on a shared
machine is not. Issue 39 (RESULTS.md has the figures).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import HERE, _server, _stats

_TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.M)


def _instructions(base: str, row: list[str]) -> int:
    _stats(base, reset=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                str(HERE / "rows.py"),
                *row,
                "--url",
                f"{base}/mcp",
            ],
            check=True,
            capture_output=True,
            timeout=3600,
        )
        found = _TOTALS.findall(out.read_bytes())
    return int(found[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=None)
    parser.add_argument("--large", type=int, default=None)
    parser.add_argument("--burst", action="store_true")
    parser.add_argument("--tasks", type=int, default=200)
    a, row = parser.parse_known_args()
    small = a.small if a.small is not None else (2 if a.burst else 100)
    large = a.large if a.large is not None else (4 if a.burst else 400)
    with _server() as base:
        counts = []
        for n in (small, large):
            args = (
                [*row, "--tasks", str(a.tasks), "--polls", str(n)]
                if a.burst
                else [*row, "--calls", str(n)]
            )
            counts.append(_instructions(base, args))
    polls = (large - small) * (a.tasks if a.burst else 1)
    per_poll = (counts[1] - counts[0]) / polls
    print(
        f"{' '.join(row)}{' (burst of ' + str(a.tasks) + ')' if a.burst else ''}: "
        f"{per_poll / 1e3:.1f} k instructions per tasks/get "
        f"({counts[0]:,} at {small}, {counts[1]:,} at {large})"
    )


if __name__ == "__main__":
    main()
