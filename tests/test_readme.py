"""Docs that run: the README's code is valid Python whose imports exist; its commands are the
ones nox and .ci/run use."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()


def test_readme_python_blocks_compile_and_import() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert len(blocks) >= 2
    for block in blocks:
        tree = ast.parse(block)
        imports: list[ast.stmt] = [
            node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
        ]
        exec(compile(ast.Module(body=imports, type_ignores=[]), "README.md", "exec"), {})


def test_readme_commands_are_what_ci_and_nox_run() -> None:
    assert "python3 -m pip install nox && python3 -m nox -s demo" in README
    assert "python3 -m pip install nox && python3 -m nox\n" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^python3 -m nox( |$)", ci, flags=re.MULTILINE)  # the plain default run
