"""``python -m mcp_tasks_client.conformance [PATH]``: write the rule table (docs/rules.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from .rules import render_markdown


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("docs/rules.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
