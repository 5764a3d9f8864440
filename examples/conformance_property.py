"""A property test of your own, with the conformance kit: it needs the `testing` extra
(hypothesis), which the `cli` extra of README's first steps does not bring:
`python3 -m pip install -e '.[testing]'` in a clone (`'mcp-tasks-client[testing]'` otherwise).
Without it, this example says so and exits 2.

`valid_traffic()` draws whole conversations a conforming server could have with a client;
`mutations()` draws the same with exactly one server rule broken, and names the rule. Here the
code under test is the library's own strict Validator; put your client, proxy or recorder in
its place. Run: `python3 examples/conformance_property.py` (or collect it with pytest).
"""

from __future__ import annotations

import sys

try:
    from hypothesis import given, settings
except ImportError:  # pragma: no cover - run without the extra (tests/test_examples.py)
    print(
        "examples/conformance_property.py needs the `testing` extra (hypothesis): "
        "python3 -m pip install -e '.[testing]'",
        file=sys.stderr,
    )
    sys.exit(2)

from mcp_tasks_client import Generation
from mcp_tasks_client.conformance import RULES, Validator
from mcp_tasks_client.testing import Traffic, mutations, valid_traffic

GEN = Generation.V2025_11_25


@settings(max_examples=50, deadline=None)
@given(valid_traffic(GEN, input_required=True))
def test_a_conforming_server_breaks_no_rule(traffic: Traffic) -> None:
    assert Validator(GEN).feed(traffic) == []


@settings(max_examples=100, deadline=None)
@given(mutations(GEN))
def test_each_broken_rule_is_reported_under_its_id(case: tuple[str, Traffic]) -> None:
    rule_id, traffic = case
    findings = Validator(GEN).feed(traffic)
    assert {f.rule_id for f in findings} == {rule_id}, RULES[rule_id].failure


if __name__ == "__main__":
    test_a_conforming_server_breaks_no_rule()
    test_each_broken_rule_is_reported_under_its_id()
    print("ok: valid traffic breaks no rule; each mutation breaks exactly its own")
