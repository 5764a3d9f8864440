"""The client-side conformance suite (issue 23, item 2): every scenario passes this library's
own client (``examples/conformance_client.py``) in every generation it speaks, and fails the
deliberately wrong client (``conformance.wrong_client``) on the rule it judges; the command
line runs it under the official suite's client contract. And the probe from the command line
gives the verdicts ``probe(url)`` gives (item 1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tasks_client import Generation
from mcp_tasks_client.conformance import probe
from mcp_tasks_client.conformance.clients import (
    CLIENT_RULES,
    SCENARIOS,
    ClientRule,
    _client_rules,
    render_client_rules,
    run_scenario,
)
from mcp_tasks_client.testing import FaultServer

REPO = Path(__file__).resolve().parent.parent
LIBRARY = [sys.executable, str(REPO / "examples" / "conformance_client.py")]
WRONG = [sys.executable, "-m", "mcp_tasks_client.conformance.wrong_client"]
CLI = [sys.executable, "-m", "mcp_tasks_client.cli"]
CASES = [
    pytest.param(name, g, id=f"{name}-{g.value}")
    for name, s in SCENARIOS.items()
    for g in sorted(s.generations, key=lambda g: g.value)
]

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the suite runs clients as processes: one backend is enough


# This library passes every scenario on both generations: tests/test_client_conformance_peers.py
# (its rows of the published table, every check a success citing its registered rule).


@pytest.mark.parametrize(("name", "generation"), CASES)
async def test_every_scenario_fails_its_wrong_client(name: str, generation: Generation) -> None:
    with anyio.fail_after(90):
        checks = await run_scenario(WRONG, name, generation, timeout=60)
    failed = [c for c in checks if c.status == "FAILURE"]
    assert failed, checks
    for check in failed:
        assert check.error_message
        assert check.to_json()["specReferences"] == [{"id": check.rule}]
    assert SCENARIOS[name].rule(generation) in {c.rule for c in failed}


def test_the_client_rule_registry() -> None:
    """Client rules (C-nn, E Cnn, A-nn) have a registry of their own, as the server rules
    have ``RULES``: each id once, each cited by a scenario, each in docs/rule-ids.md, each
    scenario's rules registered and of the scenario's generations."""
    cited = {rid for s in SCENARIOS.values() for rid in s.cites()}
    assert cited == set(CLIENT_RULES)
    doc = (REPO / "docs" / "rule-ids.md").read_text(encoding="utf-8")
    for rid, rule in CLIENT_RULES.items():
        assert rule.id == rid
        assert rule.summary
        assert f"| `{rid}` |" in doc, rid
    assert render_client_rules() in doc  # the page's table is the registry's
    for s in SCENARIOS.values():
        for generation in s.generations:
            assert generation in CLIENT_RULES[s.rule(generation)].generations


def test_a_client_rule_registered_twice_is_refused() -> None:
    twice = ClientRule("C-15", "SHOULD", frozenset({Generation.V2025_11_25}), "opt in")
    with pytest.raises(ValueError, match="C-15"):
        _client_rules(twice, twice)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=300, cwd=REPO, check=False
    )


def test_list_prints_the_scenarios_one_a_line() -> None:
    ran = run_cli("conformance-client", "--list")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == list(SCENARIOS)


def test_the_command_runs_the_contract_and_exits_1_on_a_failure() -> None:
    """One JSON line per check on stdout, the table on stderr (stdout is a pipe); the wrong
    client fails the cancel scenario: exit 1."""
    command = " ".join(WRONG)
    ran = run_cli(
        "conformance-client",
        "--command",
        command,
        "--scenario",
        "cancel",
        "--protocol-version",
        "2025-11-25",
    )
    assert ran.returncode == 1, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert {(line["scenario"], line["protocolVersion"]) for line in lines} == {
        ("cancel", "2025-11-25")
    }
    assert {line["status"] for line in lines} == {"FAILURE"}
    assert all(line["event"] == "check" for line in lines)
    assert "cancel-not-notification" in ran.stderr  # the table
    library = run_cli("conformance-client", "--command", " ".join(LIBRARY), "--scenario", "opt-in")
    assert library.returncode == 0, library.stderr
    assert len(library.stdout.splitlines()) == 2  # both generations


def test_an_unknown_scenario_is_a_usage_error() -> None:
    ran = run_cli("conformance-client", "--command", "true", "--scenario", "nope")
    assert ran.returncode == 2
    assert "nope" in ran.stderr


async def test_the_cli_probe_and_probe_url_give_the_same_verdicts() -> None:
    """``mcp-tasks --url URL probe`` hands the probe the URL: V-27 (a session of its own) is
    checked there too, and every verdict is the one ``probe(url)`` gives (issue 23)."""
    safe: dict[str, dict[str, Any]] = {"echo": {}, "ask": {}}
    with anyio.fail_after(120):
        async with FaultServer.preset("deviating-2025").http() as http:
            report = await probe(http.url, Generation.V2025_11_25, safe_tools=safe, timeout=10)
            args = [
                "--url",
                http.url,
                "probe",
                "--safe-tool",
                "echo",
                "--safe-tool",
                "ask",
            ]
            ran = await anyio.run_process([*CLI, *args], check=False, cwd=REPO)
    rules = [json.loads(line) for line in ran.stdout.decode().splitlines()]
    verdicts = {r["rule"]: r["verdict"] for r in rules if r.get("event") == "rule"}
    assert verdicts == {r.rule_id: r.verdict.value for r in report.results}
    assert verdicts["V-27"] == "pass"
    assert {k for k, v in verdicts.items() if v == "fail"} == {"V-11", "V-21"}
