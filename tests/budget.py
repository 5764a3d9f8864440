"""Example counts that follow the loaded Hypothesis profile (conftest.py registers them).

A property pins its count with ``@settings(max_examples=examples(N))``: ``N`` in the default
run, which keeps the suite's time; under a profile that asks for more than Hypothesis's
default (``nox -s fuzz``: 20,000) the profile's count, which an explicit ``max_examples=N``
would override (``tests/test_fuzz_budget.py`` checks it).
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]


def examples(default_run: int) -> int:
    """``default_run``, or the loaded profile's count when that profile asks for more than
    Hypothesis's default (read when the test module is imported, after the profile loads)."""
    loaded = settings().max_examples  # a settings() inherits from the loaded profile
    if loaded > settings.get_profile("default").max_examples:
        return max(default_run, loaded)
    return default_run
