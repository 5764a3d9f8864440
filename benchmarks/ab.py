"""Paired A/B runs of benchmark rows between two checkouts (a change's claim, on a busy machine).

    python benchmarks/ab.py A_DIR B_DIR [--rounds 7] [--calls 1000] ROW_ARGS...

``A_DIR`` and ``B_DIR`` each hold ``mcp_tasks_client/`` and ``benchmarks/`` (``git archive
COMMIT mcp_tasks_client benchmarks | tar -x -C DIR``). Against one server, each round runs the
row from A then from B (then B, A the next round, so neither always goes first), and the
figure is the median over rounds of B/A: a load change that spans a pair touches both sides.
ROW_ARGS is one row, as ``rows.py`` takes it: ``lib --backend trio`` or ``lib-poller``.
``--b-row "httpx --backend trio"`` runs that row for B instead (a row against another row,
paired the same way: ``ab.py DIR DIR lib --b-row httpx`` is the library over the bare loop).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import _row, _server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--key", default="cpu_us")
    parser.add_argument("--b-row", default=None, help="B runs this row instead")
    a, row = parser.parse_known_args()
    b_row = row if a.b_row is None else shlex.split(a.b_row)
    pairs: list[tuple[float, float]] = []
    with _server() as base:
        for n in range(a.rounds):
            order = ["a", "b"] if n % 2 == 0 else ["b", "a"]
            got = {
                side: _row(
                    sys.executable, base, row if side == "a" else b_row, a.a if side == "a" else a.b
                )[a.key]
                for side in order
            }
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
