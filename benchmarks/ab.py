"""Paired A/B runs of benchmark rows between two checkouts (a change's claim, on a busy machine).

    python benchmarks/ab.py A_DIR B_DIR [--rounds 7] [--calls 1000] ROW_ARGS...

``A_DIR`` and ``B_DIR`` each hold ``mcp_tasks_client/`` and ``benchmarks/`` (``git archive
COMMIT mcp_tasks_client benchmarks | tar -x -C DIR``). Against one server, each round runs the
row from A then from B (then B, A the next round, so neither always goes first), and the
figure is the median over rounds of B/A: a load change that spans a pair touches both sides.
ROW_ARGS is one row, as ``rows.py`` takes it: ``lib --backend trio`` or ``lib-poller``.
``--b-row "httpx --backend trio"`` runs that row for B instead (a row against another row,
paired the same way: ``ab.py DIR DIR lib --b-row httpx`` is the library over the bare loop).
``--rows rows2026.py --server server2026.py`` runs a 2026-07-28 row instead (``lib seq``,
``floor seq``, ``lib burst --tasks 200 --polls 20``), each checkout's own ``rows2026.py``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import _row, _server


def _script_row(script: str, base: str, args: list[str], checkout: Path) -> dict[str, Any]:
    """One row of ``checkout``'s own ``script`` (a rows module other than rows.py)."""
    done = subprocess.run(
        [sys.executable, str(checkout / "benchmarks" / script), *args, "--url", f"{base}/mcp"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=checkout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"row {args} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--key", default="cpu_us")
    parser.add_argument("--b-row", default=None, help="B runs this row instead")
    parser.add_argument("--rows", default="rows.py", help="the rows script (rows2026.py)")
    parser.add_argument("--server", default="server.py", help="its server (server2026.py)")
    a, row = parser.parse_known_args()
    b_row = row if a.b_row is None else shlex.split(a.b_row)
    pairs: list[tuple[float, float]] = []
    with _server(a.server) as base:
        for n in range(a.rounds):
            order = ["a", "b"] if n % 2 == 0 else ["b", "a"]
            got = {}
            for side in order:
                args, tree = (row, a.a) if side == "a" else (b_row, a.b)
                if a.rows == "rows.py":
                    got[side] = _row(sys.executable, base, args, tree)[a.key]
                else:
                    got[side] = _script_row(a.rows, base, args, tree)[a.key]
            pairs.append((got["a"], got["b"]))
    ratios = sorted(b / x for x, b in pairs)
    label = " ".join(row) if a.b_row is None else f"{' '.join(row)} vs {a.b_row}"
    print(
        f"{label}: A median {statistics.median(p[0] for p in pairs):.1f}, "
        f"B median {statistics.median(p[1] for p in pairs):.1f}, "
        f"B/A median {statistics.median(ratios):.3f} "
        f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()
