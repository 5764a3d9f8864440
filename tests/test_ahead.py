"""Issue 34, item 4: attrs' methods for the classes ``mcp-tasks status`` builds, compiled ahead.

The table (``mcp_tasks_client/cli/_ahead_methods.py``) must hold exactly what the attrs
installed writes, and each held method must be the one attrs' compile gives; the
``mcp-tasks`` script must then compile none of those classes' methods at start-up, and a
program that imports the library must never meet the step. Every check of attrs' own step
runs in a fresh interpreter: the test process's attrs is left as it is.
"""

from __future__ import annotations
import __future__

import json
import subprocess
import sys
import types
from pathlib import Path

import attrs
import pytest

from mcp_tasks_client.cli import _ahead
from mcp_tasks_client.cli._ahead_methods import HELD

REPO = Path(__file__).resolve().parent.parent
CO_NESTED = 0x10
FUTURE: int = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)


def _attrs_flags() -> int:
    """The ``__future__`` flags attrs' compile gives the methods it writes (its own module's:
    ``compile`` passes its caller's on)."""

    @attrs.frozen
    class Probe:
        x: int

    flags: int = Probe.__init__.__code__.co_flags
    return flags & FUTURE


def _run(code: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
        cwd=REPO,
    )  # fmt: skip
    return ran.stdout


def test_the_table_holds_what_attrs_writes_for_a_status() -> None:
    """Fails when a class a status builds changed, a class joined or left its path, or attrs
    writes its methods otherwise: regenerate with ``python -m mcp_tasks_client.cli._ahead``."""
    written = _ahead.render(_ahead.recorded())
    assert _ahead.table().read_text(encoding="utf-8") == written, (
        "the table is stale: run `python -m mcp_tasks_client.cli._ahead`"
    )
    assert len(HELD) >= 30  # the status classes, all held (none left to attrs for its text)


def _functions(code: types.CodeType) -> dict[str, types.CodeType]:
    return {c.co_name: c for c in code.co_consts if isinstance(c, types.CodeType)}


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """What a function's code does: bytecode, names, constants, arguments, relative lines."""
    lines = [line - code.co_firstlineno for _, _, line in code.co_lines() if line is not None]
    consts = tuple(c for c in code.co_consts if not isinstance(c, types.CodeType))
    return (
        code.co_code,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags & ~CO_NESTED,
        consts,
        lines,
    )


@pytest.mark.parametrize("filename", sorted(HELD))
def test_each_held_method_is_the_one_attrs_compiles(filename: str) -> None:
    """The held function's methods against attrs' compile of the same text, with a seed put
    back as :func:`_ahead._made` puts it: the same code in all but the file it came from."""
    text, held = HELD[filename]
    seed = 1_234_567_890_123
    theirs = compile(
        text.replace(str(_ahead.PLACEHOLDER), str(seed)),
        filename,
        "exec",
        flags=_attrs_flags(),
        dont_inherit=True,
    )
    ours = _functions(held.__code__)
    if "__hash__" in ours:
        code = ours["__hash__"]
        consts = tuple(seed if c == _ahead.PLACEHOLDER else c for c in code.co_consts)
        ours["__hash__"] = code.replace(co_consts=consts)
    assert {n: _shape(c) for n, c in ours.items()} == {
        n: _shape(c) for n, c in _functions(theirs).items()
    }
    # The defaults are evaluated from the same names (attrs' namespace for the class).
    defined = set(_functions(theirs))
    assert set(theirs.co_names) - defined == set(held.__code__.co_names) - {"locals"}


def test_held_text_takes_the_seed_out_of_hash_alone() -> None:
    script = (
        "def __hash__(self):\n        return hash((\n                -42,\n"
        + " " * 16
        + "self.a,\n"
    )
    text, seed = _ahead.held_text(script)
    assert seed == -42
    assert text == script.replace("-42", str(_ahead.PLACEHOLDER))
    assert _ahead.held_text("def __init__(self, a):\n    self.a = a\n") == (
        "def __init__(self, a):\n    self.a = a\n",
        None,
    )


_COUNT = """
import builtins, contextlib, io, sys
compiled = []
original = builtins.compile
def counting(source, filename, *args, **kwargs):
    if str(filename).startswith("<attrs generated methods mcp_tasks_client."):
        compiled.append(filename)
    return original(source, filename, *args, **kwargs)
builtins.compile = counting
import mcp_tasks_cli
mcp_tasks_cli.leaving = lambda: None
sys.argv = ["mcp-tasks", "--url", "http://127.0.0.1:9/mcp", "status", "t-1"]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = mcp_tasks_cli.main()
from attr import _make
print(code, len(compiled), getattr(_make._compile_and_eval, "held_ahead", False))
"""


def test_the_script_compiles_no_method_of_a_status_class() -> None:
    """The ``mcp-tasks`` script's status takes every held class's methods from the table:
    attrs compiles none of ours (before: 36 compiles, 13.7 ms of its start-up)."""
    assert _run(_COUNT).split() == ["6", "0", "True"]  # 6: the refused connection


def test_a_program_calling_main_never_meets_the_table() -> None:
    """:func:`mcp_tasks_client.cli.main`, which a program may call, leaves attrs as it is:
    the classes compile as attrs compiles them."""
    code = _COUNT.replace(
        "import mcp_tasks_cli\nmcp_tasks_cli.leaving = lambda: None\n", ""
    ).replace(
        "code = mcp_tasks_cli.main()", "from mcp_tasks_client.cli import main\n    code = main()"
    )
    out = _run(code).split()
    assert out[0] == "6"
    assert int(out[1]) >= 30  # every status class compiled by attrs
    assert out[2] == "False"


_BEHAVIOUR = """
import json, sys
if sys.argv[1] == "held":
    from mcp_tasks_client.cli._ahead import install
    install()
from mcp_tasks_client.models import Task, TaskStatus
from mcp_tasks_client.models.tasks import TaskMetadata
import datetime as dt
when = dt.datetime(2026, 12, 6, tzinfo=dt.timezone.utc)
a = Task(task_id="t-1", status=TaskStatus.WORKING, created_at=when, last_updated_at=when)
b = Task(task_id="t-1", status=TaskStatus.WORKING, created_at=when, last_updated_at=when)
c = Task(task_id="t-2", status=TaskStatus.WORKING, created_at=when, last_updated_at=when)
def hashed(x, y):
    try:
        return hash(x) == hash(y)
    except TypeError as exc:  # a Task holds dicts (extra): attrs' __hash__ says so
        return str(exc)
try:
    Task(task_id="t-1")
    missing = None
except TypeError as exc:
    missing = str(exc)
print(json.dumps({
    "held": Task.__init__.__code__.co_filename.endswith("_ahead_methods.py"),
    "repr": repr(a), "meta": repr(TaskMetadata(ttl=5)),
    "eq": [a == b, a == c, a != c], "hash": hashed(a, b), "missing": missing,
}))
"""


def test_a_held_class_behaves_as_the_class_attrs_compiles() -> None:
    """The same answers from a held Task as from attrs' own (repr, ==, hash, a missing
    argument), in two processes: one with the table, one without. (A Task is not hashable:
    its ``extra`` is a dict; attrs' ``__hash__`` says so, and so does the held one.)"""
    held, plain = (
        json.loads(_run(_BEHAVIOUR.replace("sys.argv[1]", repr(which))))
        for which in ("held", "plain")
    )
    assert held.pop("held") is True
    assert plain.pop("held") is False
    assert held == plain
    assert held["eq"] == [True, False, True]
    assert held["hash"] == "unhashable type: 'dict'"


def test_a_changed_class_is_compiled_by_attrs() -> None:
    """A class whose text is no longer the held one (here: a held name given other fields)
    gets attrs' own methods: a stale table costs speed, never behaviour."""
    code = (
        "import attrs, sys\n"
        "from mcp_tasks_client.cli._ahead import install\n"
        "install()\n"
        "Implementation = type('Implementation', (), {'__annotations__': {'other': 'int'}})\n"
        "Implementation.__module__ = 'mcp_tasks_client.models.lifecycle'\n"
        "made = attrs.frozen(Implementation)\n"
        "print(made(other=3), made.__init__.__code__.co_filename.startswith('<attrs'))\n"
    )
    assert _run(code).split() == ["Implementation(other=3)", "True"]
