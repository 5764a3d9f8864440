"""The command line's layout (issues 33 and 34): no class past 600 lines, one job each.

The CLI's ``Run`` grew to 627 lines (every command's code and every message's hint in one
class); it keeps one invocation's state and the dispatch now, and each command's code lives in
a module of its own, imported when that command runs (``tests/test_startup.py`` pins what
``status`` loads).
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parent.parent / "mcp_tasks_client" / "cli"
LIMIT = 600


def _classes() -> dict[str, int]:
    """Every class of the command line's modules, with its length in lines."""
    found = {}
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                found[f"{path.stem}.{node.name}"] = node.end_lineno - node.lineno + 1
    return found


def test_no_class_of_the_command_line_is_past_600_lines() -> None:
    classes = _classes()
    assert "_commands.Run" in classes
    assert "_next_steps.NextSteps" in classes
    assert {name: n for name, n in classes.items() if n > LIMIT} == {}


def test_each_command_s_code_is_in_a_module_of_its_own() -> None:
    """``Run`` dispatches; the commands' code is elsewhere (one job each)."""
    run = ast.parse((CLI / "_commands.py").read_text(encoding="utf-8"))
    (cls,) = [n for n in run.body if isinstance(n, ast.ClassDef) and n.name == "Run"]
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    moved = {"probe", "follow", "resume", "call", "check_call", "hint_for", "lost_hint"}
    assert methods & moved == set(), methods & moved
    for module in ("_call", "_follow", "_journaled", "_probe", "_next_steps"):
        assert (CLI / f"{module}.py").exists(), module


def test_every_registered_command_resolves_to_its_runner() -> None:
    """``OWN_COMMANDS`` (one line per command that opens no client of the run's): each names
    an async function taking the run and the parsed arguments, and a subparser of its name."""
    import argparse
    import importlib
    import inspect

    from mcp_tasks_client.cli import _commands, _options

    parser = _options.build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    known = set(subparsers.choices)
    for command, where in _commands.OWN_COMMANDS.items():
        module, _, name = where.partition(":")
        function = getattr(importlib.import_module(module, "mcp_tasks_client.cli"), name)
        assert inspect.iscoroutinefunction(function), command
        assert list(inspect.signature(function).parameters) == ["run", "ns"], command
        assert command in known, command
