"""`nox -s fuzz` fuzzes: no module it runs pins fewer examples than the fuzz profile asks for.

An explicit ``@settings(max_examples=N)`` overrides the loaded profile, so a module listed in
``FUZZ_TESTS`` (noxfile.py) that pins its counts ran them, not the profile's 20,000. The test
imports each listed module under the fuzz profile, in a fresh interpreter as the session
would, and reads the example count every property would run with.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import importlib, json, sys
from pathlib import Path
sys.path[:0] = ["tests", "."]
import conftest  # registers the profiles, loads the one MCP_TASKS_HYPOTHESIS_PROFILE names
from hypothesis import is_hypothesis_test, settings
counts = {}
for path in sys.argv[1:]:
    module = importlib.import_module(Path(path).stem)
    for name, test in sorted(vars(module).items()):
        if callable(test) and is_hypothesis_test(test):
            used = test._hypothesis_internal_use_settings
            counts[f"{path}::{name}"] = used.max_examples
print(json.dumps({"profile": settings.default.max_examples, "counts": counts}))
"""


def fuzz_tests() -> list[str]:
    """``FUZZ_TESTS`` as noxfile.py spells it (read, not imported: nox is not installed here)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FUZZ_TESTS" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(v) for v in value]
    raise AssertionError("noxfile.py defines no FUZZ_TESTS")


def test_no_fuzzed_property_pins_fewer_examples_than_the_fuzz_profile() -> None:
    modules = fuzz_tests()
    env = {**os.environ, "MCP_TASKS_HYPOTHESIS_PROFILE": "fuzz"}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *modules],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(probe.stdout)
    assert found["profile"] == 20_000  # what README.md and CHANGELOG.md say the fuzz run does
    for module in modules:  # every listed module exists and holds properties
        assert any(test.startswith(f"{module}::") for test in found["counts"]), module
    pinned = {test: n for test, n in found["counts"].items() if n < found["profile"]}
    assert pinned == {}
