"""`python3 -m nox` runs no more pytest workers than there are cores (issue 21, item 11).

Four workers on two cores made the suite fail under load. noxfile.py is run here with a
stand-in for the ``nox`` module (nox is not installed in the test environment), on machines
of 1, 2 and 8 cores, and its default pytest arguments read back.
"""

from __future__ import annotations

import os
import runpy
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _stand_in_nox() -> types.ModuleType:
    def session(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # @nox.session

        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            return function  # @nox.session(...)

        return decorate

    nox = types.ModuleType("nox")
    nox.options = types.SimpleNamespace()  # type: ignore[attr-defined]
    nox.session = session  # type: ignore[attr-defined]
    nox.Session = object  # type: ignore[attr-defined]
    return nox


@pytest.mark.parametrize("cores", [1, 2, 8])
def test_the_default_run_uses_one_worker_per_core_at_most(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nox", _stand_in_nox())
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    noxfile = runpy.run_path(str(ROOT / "noxfile.py"))
    args: list[str] = noxfile["PYTEST_DEFAULT"]
    workers = int(args[args.index("-n") + 1])
    assert workers == cores


def test_a_process_confined_to_fewer_cores_gets_fewer_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A container or ``taskset`` that allows 2 of 8 cores: 2 workers."""
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this system")
    monkeypatch.setitem(sys.modules, "nox", _stand_in_nox())
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    noxfile = runpy.run_path(str(ROOT / "noxfile.py"))
    args: list[str] = noxfile["PYTEST_DEFAULT"]
    assert int(args[args.index("-n") + 1]) == 2
