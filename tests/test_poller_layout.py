"""The Poller's layout (issue 20): ``engine.py`` composes, ``_poller/`` holds one job per
module, each module says its job and what it may import, the modules import each other only
downwards, and one module alone asks the client's generation driver."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "mcp_tasks_client"
PIECES = ROOT / "_poller"
# Lowest floor first, as _poller/__init__.py lists them.
ORDER = [
    "parking",
    "port",
    "registry",
    "observing",
    "journal_sink",
    "relays",
    "scheduling",
    "waits",
    "following",
    "figures",
]


def _tree(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _runtime_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """The ``from ... import`` statements run at import time (not under TYPE_CHECKING)."""
    found: list[ast.ImportFrom] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        found.extend(n for n in ast.walk(node) if isinstance(n, ast.ImportFrom))
    return found


def test_every_piece_is_listed_and_the_list_is_the_packages() -> None:
    modules = {p.stem for p in PIECES.glob("*.py")} - {"__init__"}
    assert modules == set(ORDER)
    listed = (PIECES / "__init__.py").read_text(encoding="utf-8")
    positions = [listed.index(f"- ``{name}``") for name in ORDER]
    assert positions == sorted(positions)


@pytest.mark.parametrize("name", ORDER)
def test_each_piece_says_its_job_and_what_it_may_import(name: str) -> None:
    doc = ast.get_docstring(_tree(PIECES / f"{name}.py")) or ""
    assert "Job" in doc
    assert "May import" in doc


@pytest.mark.parametrize("name", ORDER)
def test_pieces_import_only_pieces_below_them_and_never_the_engine(name: str) -> None:
    for node in _runtime_imports(_tree(PIECES / f"{name}.py")):
        module = node.module or ""
        if node.level == 1:  # another piece
            assert module in ORDER[: ORDER.index(name)], f"{name} imports {module}"
        if node.level == 2:  # the library
            assert module != "engine", f"{name} imports the engine"
            if module in ("_client", "_drivers", "_io.base"):
                assert name == "following", f"{name} imports {module}"


def test_only_the_following_piece_asks_the_driver() -> None:
    readers = []
    for path in [ROOT / "engine.py", *sorted(PIECES.glob("*.py"))]:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Attribute) and node.attr in ("driver", "dialect"):
                readers.append(path.name)
    assert readers
    assert set(readers) == {"following.py"}


def test_the_engine_fits_in_500_lines() -> None:
    assert len((ROOT / "engine.py").read_text(encoding="utf-8").splitlines()) <= 500
