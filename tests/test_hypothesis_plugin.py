"""The ``hypothesis`` entry point (``mcp_tasks_client._hypothesis:setup_hypothesis``):
``st.from_type`` of the wire types of both generations draws the values of the public
strategies, which round-trip through the codec; the entry point is declared, and loads when
the installed metadata has it."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client import models
from mcp_tasks_client._codec import v2025_11_25, v2026_07_28
from mcp_tasks_client._hypothesis import setup_hypothesis
from mcp_tasks_client.testing import MODEL_STRATEGIES

ROOT = Path(__file__).resolve().parent.parent
TARGET = "mcp_tasks_client._hypothesis:setup_hypothesis"

setup_hypothesis()  # what the entry point does at hypothesis' import, when installed

GEN1 = [
    models.Task,
    models.CreateTaskResult,
    models.ListTasksResult,
    models.CallToolResult,
    models.Tool,
    models.InitializeResult,
    models.ElicitResult,
]
GEN2 = [models.DiscoverResult, models.InputRequiredResult]


@pytest.mark.parametrize("cls", GEN1, ids=lambda c: c.__name__)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_from_type_round_trips_in_2025(cls: type, data: st.DataObject) -> None:
    value = data.draw(st.from_type(cls))
    assert isinstance(value, cls)
    converter = v2025_11_25.converter
    assert converter.decode(converter.encode(value), cls) == value


@pytest.mark.parametrize("cls", GEN2, ids=lambda c: c.__name__)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_from_type_round_trips_in_2026(cls: type, data: st.DataObject) -> None:
    value = data.draw(st.from_type(cls))
    assert isinstance(value, cls)
    converter = v2026_07_28.converter
    assert converter.decode(converter.encode(value), cls) == value


def test_every_model_with_a_strategy_is_registered() -> None:
    """from_type(cls) is the public strategy itself for every model class that has one."""
    from hypothesis.strategies._internal.types import _global_type_lookup

    for cls in MODEL_STRATEGIES:
        assert cls in _global_type_lookup, cls.__name__


def test_the_hook_is_idempotent_and_quiet() -> None:
    setup_hypothesis()
    setup_hypothesis()


def test_the_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.entry-points.hypothesis]", 1)[1].split("\n[", 1)[0]
    lines = [line for line in section.splitlines() if line and not line.startswith("#")]
    assert lines == [f'mcp_tasks_client = "{TARGET}"']


def test_the_installed_entry_point_loads() -> None:
    found = [ep for ep in importlib.metadata.entry_points(group="hypothesis") if ep.value == TARGET]
    if not found:
        pytest.skip("the installed metadata predates the entry point (reinstall the package)")
    (entry,) = found
    assert entry.load() is setup_hypothesis


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


def test_the_library_never_runs_the_hook_by_itself() -> None:
    """Importing the library imports no hypothesis; the hook is hypothesis' to call."""
    run = _run("import sys, mcp_tasks_client; print('hypothesis' in sys.modules)")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"


def test_the_hook_without_the_strategies_leaves_inference_to_hypothesis() -> None:
    """A resolver that cannot import the strategies answers NotImplemented."""
    code = (
        "import sys; sys.modules['mcp_tasks_client.testing'] = None\n"
        "from mcp_tasks_client._hypothesis import _resolve\n"
        "from mcp_tasks_client.models import Task\n"
        "print(_resolve(Task) is NotImplemented)"
    )
    run = _run(code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"
