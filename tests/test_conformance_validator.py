"""The strict validator against the public strategies: valid traffic of both generations
produces no finding; each mutator's traffic produces exactly the rule it breaks."""

from __future__ import annotations

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
