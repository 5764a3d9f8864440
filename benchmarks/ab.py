"""Paired A/B runs of benchmark rows between two checkouts (a change's claim, on a busy machine).

    python benchmarks/ab.py A_DIR B_DIR [--rounds 7] [--calls 1000] ROW_ARGS...

``A_DIR`` and ``B_DIR`` each hold ``mcp_tasks_client/`` and ``benchmarks/`` (``git archive
COMMIT mcp_tasks_client benchmarks | tar -x -C DIR``). Against one server, each round runs the
row from A then from B (then B, A the next round, so neither always goes first), and the
figure is the median over rounds of B/A: a load change that spans a pair touches both sides.
ROW_ARGS is one row, as ``rows.py`` takes it: ``lib --backend trio`` or ``lib-poller``.
"""

from __future__ import annotations

import argparse
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
    a, row = parser.parse_known_args()
    pairs: list[tuple[float, float]] = []
    with _server() as base:
        for n in range(a.rounds):
            order = [a.a, a.b] if n % 2 == 0 else [a.b, a.a]
            got = {d: _row(sys.executable, base, row, d)[a.key] for d in order}
            pairs.append((got[a.a], got[a.b]))
    ratios = sorted(b / x for x, b in pairs)
    print(
        f"{' '.join(row)}: A median {statistics.median(p[0] for p in pairs):.1f}, "
        f"B median {statistics.median(p[1] for p in pairs):.1f}, "
        f"B/A median {statistics.median(ratios):.3f} "
        f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()
