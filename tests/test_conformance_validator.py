"""The strict validator against the public strategies: valid traffic of both generations
produces no finding; each mutator's traffic produces exactly the rule it breaks."""

from __future__ import annotations

from typing import Any

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tasks_client import Generation
from mcp_tasks_client.conformance import RULES, Validator, Verdict, unique_rules
from mcp_tasks_client.testing import MUTATORS, Traffic, mutations, valid_traffic

GENERATIONS = [Generation.V2025_11_25, Generation.V2026_07_28]
SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def findings_of(generation: Generation, traffic: Traffic) -> set[str]:
    return {f.rule_id for f in Validator(generation).feed(traffic)}


@pytest.mark.parametrize("generation", GENERATIONS, ids=lambda g: g.value)
@SETTINGS
@given(data=st.data())
def test_valid_traffic_breaks_no_rule(generation: Generation, data: st.DataObject) -> None:
    traffic = data.draw(valid_traffic(generation))
    findings = Validator(generation).feed(traffic)
    assert findings == [], [str(f) for f in findings]


@pytest.mark.parametrize(
    "mutator", MUTATORS, ids=lambda m: f"{m.generation.value}-{m.rule_id}-{m.apply.__name__}"
)
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_each_mutator_breaks_exactly_its_rule(mutator: object, data: st.DataObject) -> None:
    from mcp_tasks_client.testing._traffic import Mutator, _mutated

    assert isinstance(mutator, Mutator)
    rule_id, traffic = data.draw(_mutated(mutator))
    assert findings_of(mutator.generation, traffic) == {rule_id}


@pytest.mark.parametrize("generation", GENERATIONS, ids=lambda g: g.value)
@SETTINGS
@given(data=st.data())
def test_mutations_name_the_rule_that_fires(generation: Generation, data: st.DataObject) -> None:
    rule_id, traffic = data.draw(mutations(generation))
    assert findings_of(generation, traffic) == {rule_id}


def test_every_checked_rule_has_a_mutator_in_each_of_its_generations() -> None:
    """The done-when of the kit: no rule the validator checks goes untested."""
    for rule in unique_rules():
        for generation in rule.generations:
            mutators = [m for m in MUTATORS if m.rule_id == rule.id and m.generation is generation]
            if rule.checked:
                assert mutators, f"{rule.id} ({generation.value}) has no mutator"
    for mutator in MUTATORS:
        rule = RULES[mutator.rule_id]
        assert rule.checked, mutator
        assert mutator.generation in rule.generations, mutator


def test_a_should_is_a_warning_and_a_must_a_failure() -> None:
    for rule in unique_rules():
        if rule.verdict is None:
            expected = Verdict.FAIL if rule.level.value == "MUST" else Verdict.WARN
            assert rule.default_verdict is expected


def test_the_readme_property_example_runs() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}  # this checkout's package, installed or not
    run = subprocess.run(
        [sys.executable, str(root / "examples" / "conformance_property.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok: ")


def _asking_validator() -> Validator:
    return Validator(Generation.V2025_11_25, client_capabilities={"elicitation": {}})


def _v22_traffic(order: str, *, tagged: bool = True, status: str = "working") -> Traffic:
    """A 2025-11-25 task asking one question, and one tasks/get placed by ``order``: the
    letters q (the question arrives), g (the get is sent), a (the client answers), r (the
    get's answer arrives)."""
    task = {
        "taskId": "t-1",
        "createdAt": "2026-08-01T00:00:00Z",
        "lastUpdatedAt": "2026-08-01T00:00:01Z",
        "ttl": None,
    }
    meta = {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}} if tagged else {}
    question: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": "s-1",
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "ok?", "requestedSchema": {}, "_meta": meta},
    }
    steps: dict[str, tuple[str, dict[str, Any]]] = {
        "q": ("received", question),
        "g": ("sent", {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": task}),
        "a": ("sent", {"jsonrpc": "2.0", "id": "s-1", "result": {"action": "accept"}}),
        "r": ("received", {"jsonrpc": "2.0", "id": 9, "result": {**task, "status": status}}),
    }
    head: Traffic = (
        ("sent", {"jsonrpc": "2.0", "id": 1, "method": "tasks/result", "params": task}),
    )
    return (*head, *(steps[c] for c in order))


@pytest.mark.parametrize(
    ("order", "tagged", "status", "fires"),
    [
        ("qgra", True, "working", True),  # asked, polled, told working, then answered
        ("gqra", True, "working", False),  # the poll was sent before the question arrived
        ("qgar", True, "working", False),  # the answer may have reached the server first
        ("qagr", True, "working", False),  # answered: leaving input_required is not checked
        ("qgra", True, "input_required", False),
        ("qgra", True, "cancelled", False),  # ended: it waits for nothing
        ("qgra", False, "working", False),  # untagged (V-21's business): no task to blame
    ],
)
def test_v22_fires_only_when_the_poll_provably_saw_the_open_question(
    order: str, tagged: bool, status: str, fires: bool
) -> None:
    findings = _asking_validator().feed(_v22_traffic(order, tagged=tagged, status=status))
    # the untagged question is V-21 (tasks/result is open), and only that
    assert [f.rule_id for f in findings] == (["V-22"] if fires else [] if tagged else ["V-21"])
    if fires:
        (finding,) = findings
        assert finding.task_id == "t-1"
        assert finding.evidence["result"]["status"] == "working"


def test_v22_a_question_the_server_withdrew_is_not_open() -> None:
    withdrawn = (
        "received",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s-1"}},
    )
    traffic = (*_v22_traffic("q"), withdrawn, *_v22_traffic("gr")[1:])
    assert _asking_validator().feed(traffic) == []
