"""Rewrite ``from mcp_tasks_client import ...`` lines to each name's public home.

    python tools/move_imports.py FILE...

For code written against the old 181-name top level (issue 20): each name imported from the top
level that now lives in ``mcp_tasks_client.models``, ``.errors``, ``.transports``, ``.protocol``
or ``.wire`` is imported from there instead. The homes are read from the installed package's
``__all__`` lists, so the tool never disagrees with the library. Python files and the
```python blocks of Markdown files are rewritten in place (a statement that needs no change is
left as it is); run ``ruff check --fix`` and ``ruff format`` afterwards to sort the lines. A name
with no public home (``Dialect``) stops the tool with its name and file.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

PACKAGE = "mcp_tasks_client"
HOMES = ("models", "errors", "transports", "protocol", "wire")
IMPORT = re.compile(
    rf"^(?P<indent>[ \t]*)from {PACKAGE} import "
    r"(?:\((?P<multi>[^)]*)\)|(?P<single>[^\n(#]*[^\s(#]))(?P<comment>[ \t]*#[^\n]*)?$",
    flags=re.MULTILINE,
)
LINE_LENGTH = 100


def public_homes() -> dict[str, str]:
    """Each public name -> the module to import it from."""
    top = importlib.import_module(PACKAGE)
    homes = dict.fromkeys(top.__all__, PACKAGE)
    for home in HOMES:
        module = importlib.import_module(f"{PACKAGE}.{home}")
        for name in module.__all__:
            homes.setdefault(name, module.__name__)
    return homes


def _order(name: str) -> tuple[int, str]:
    """isort's order within one statement: CONSTANTS, Classes, functions; case folded."""
    base = name.split(" ")[0]
    kind = 0 if base.isupper() and len(base) > 1 else 1 if base[:1].isupper() else 2
    return kind, base.lower()


def _statement(indent: str, module: str, names: list[str]) -> str:
    names = sorted(set(names), key=_order)
    one = f"{indent}from {module} import {', '.join(names)}"
    if len(one) <= LINE_LENGTH:
        return one
    body = "".join(f"{indent}    {name},\n" for name in names)
    return f"{indent}from {module} import (\n{body}{indent})"


def rewrite(text: str, homes: dict[str, str], where: str) -> str:
    def moved(match: re.Match[str]) -> str:
        raw = match["multi"] if match["multi"] is not None else match["single"]
        names = [" ".join(part.split()) for part in re.sub(r"#[^\n]*", "", raw).split(",")]
        groups: dict[str, list[str]] = {}
        for name in filter(None, names):
            base = name.split(" as ")[0]
            if importlib.util.find_spec(f"{PACKAGE}.{base}") is not None:
                home = PACKAGE  # a submodule: `from mcp_tasks_client import models`
            elif base in homes:
                home = homes[base]
            else:
                raise SystemExit(f"{where}: {base} has no public home (see CHANGELOG.md)")
            groups.setdefault(home, []).append(name)
        if set(groups) == {PACKAGE}:
            return match[0]
        lines = [_statement(match["indent"], home, groups[home]) for home in sorted(groups)]
        return "\n".join(lines) + (match["comment"] or "")

    return IMPORT.sub(moved, text)


def main(paths: list[str]) -> None:
    homes = public_homes()
    block = re.compile(r"(```python\n)(.*?)(^```)", flags=re.DOTALL | re.MULTILINE)
    for path in map(Path, paths):
        text, where = path.read_text(), str(path)
        if path.suffix == ".md":
            new = block.sub(lambda m, w=where: m[1] + rewrite(m[2], homes, w) + m[3], text)
        else:
            new = rewrite(text, homes, where)
        if new != text:
            path.write_text(new)
            print(f"rewrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
