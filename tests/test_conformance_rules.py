"""The rule registry: every server rule id the package cites is registered, docs/rules.md is
rendered from the registry, and importing the library never imports hypothesis."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mcp_tasks_client.conformance import RULES, Level, render_markdown, rule, unique_rules

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mcp_tasks_client"

# 2026-07-28 client-section rules that bind the server (the rest of E Cnn bind the client).
SERVER_E_C = {"E C15", "E C17", "E C19", "E C27", "E C40", "E C41", "E C42", "E C43"}
# 2025-11-25 receiver rules the registry carries (the client as receiver is bound by the rest).
SERVER_C = {"C-41"}


def cited_server_rules() -> dict[str, set[str]]:
    """Server rule ids cited anywhere in the package's code and docstrings -> where."""
    cited: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "conformance" in path.parts or "testing" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        for match in re.finditer(r"\bV-\d{2}\b", text):
            cited.setdefault(match.group(), set()).add(where)
        for match in re.finditer(r"(?<![\w-])(?:E )?S(\d{1,2})\b", text):
            cited.setdefault(f"E S{match.group(1)}", set()).add(where)
        for match in re.finditer(r"\bE C\d{1,2}\b", text):
            if match.group() in SERVER_E_C:
                cited.setdefault(match.group(), set()).add(where)
        # Violation(task_id, "<rule>", ...) and rule="<rule>" name rules by their id.
        for match in re.finditer(r'Violation\(\s*[\w.]+,\s*"([^"]+)"', text):
            cited.setdefault(match.group(1), set()).add(where)
    return cited


def test_every_server_rule_the_code_cites_is_registered() -> None:
    missing = {rid: sorted(w) for rid, w in cited_server_rules().items() if rid not in RULES}
    assert missing == {}


def test_the_scan_sees_the_rules_it_must() -> None:
    cited = cited_server_rules()
    for rid in ("V-26", "T:404-407", "T:465", "E S6", "E C41"):
        assert rid in cited


def test_docs_rules_md_is_rendered_from_the_registry() -> None:
    """Regenerate with ``python -m mcp_tasks_client.conformance``."""
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == render_markdown()


def test_every_rule_is_well_formed() -> None:
    for r in unique_rules():
        assert r.summary
        assert r.failure
        assert r.generations
        assert isinstance(r.level, Level)
        assert rule(r.id) is r
        for alias in r.aliases:
            assert rule(alias) is r
    assert set(RULES) >= SERVER_C


def test_importing_the_library_never_imports_hypothesis() -> None:
    code = (
        "import sys, mcp_tasks_client, mcp_tasks_client.conformance; "
        "print('hypothesis' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"
