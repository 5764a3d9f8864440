"""Issue 34: an example that needs an extra names it, on its page and in the error.

A newcomer in the README's venv (no ``testing`` extra) met a bare ``No module named
'hypothesis'`` from the guides' ``FaultServer`` and ``check_cache`` examples, and
docs/client-conformance.md did not say ``conformance-client`` needs the extra either.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
NEEDS_TESTING = re.compile(r"mcp_tasks_client\.testing|mcp_tasks_client\.conformance\.clients|"
                           r"conformance-client")  # fmt: skip
NAMES_TESTING = re.compile(r"pip install '?mcp-tasks-client\[(?:[a-z]+,)*testing")


def test_every_page_whose_example_needs_the_testing_extra_names_it() -> None:
    needing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if any(NEEDS_TESTING.search(block) for block in FENCE.findall(text)):
            needing.append(page)
            assert NAMES_TESTING.search(text), f"{page.relative_to(REPO)} does not name the extra"
    names = {p.name for p in needing}
    assert {"errors.md", "caching.md", "client-conformance.md", "cli.md"} <= names, names


def test_importing_the_kit_without_the_extra_names_it() -> None:
    missing = "hypothesis"
    code = (
        "import sys\n"
        f"sys.modules[{missing!r}] = None  # as if the extra were not installed\n"
        "try:\n"
        "    from mcp_tasks_client.testing import FaultServer\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n"
        "    print(exc)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    name, message = ran.stdout.splitlines()
    assert name == missing  # as Python's own error has it
    assert message == (
        f"mcp_tasks_client.testing needs the `testing` extra ({missing} is not installed): "
        "pip install 'mcp-tasks-client[testing]'"
    )
