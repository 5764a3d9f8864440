"""Docs that run: every ```python block of the documentation site (``docs/**/*.md``) is
executed here, against the real peer servers, on trio and asyncio.

How a block says how it runs (an HTML comment on the line before it; the site does not show
it):

- ``<!-- docs: main(url=mcp1_http_url) -->``: the block is a complete program whose entry
  point is ``async def main(url)``; the test executes the block as a module (its
  ``if __name__ == "__main__"`` part does not run) and awaits ``main`` with each argument taken
  from the named pytest fixture (``mcp1_http_url``, ``ts1_http_url``, ``fastmcp4_http_url``...).
- ``<!-- docs: run -->``: the block runs as a module, top to bottom, with no server.
- ``<!-- docs: compile-only (why) -->``: the block is intentionally not runnable here (it
  needs a server the suite does not start, or it is a fragment); it is still compiled.

A block with no mark fails the test: each one says which of the three it is.
"""

from __future__ import annotations

import inspect
import linecache
import re
import types
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

BLOCK = re.compile(
    r"(?:<!-- docs: (?P<mark>[^\n]*?) -->\n)?```python\n(?P<code>.*?)^```",
    flags=re.DOTALL | re.MULTILINE,
)
MAIN = re.compile(r"main\((?P<args>[^)]*)\)")


class Block:
    def __init__(self, page: Path, index: int, mark: str | None, code: str) -> None:
        self.page = page
        self.index = index
        self.mark = mark
        self.code = code

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(DOCS)}#{self.index}"

    def fixtures(self) -> dict[str, str]:
        """``main``'s parameters and the fixture each is taken from."""
        assert self.mark is not None
        found = MAIN.fullmatch(self.mark)
        assert found, f"{self.name}: unknown mark {self.mark!r}"
        pairs = [p.strip() for p in found["args"].split(",") if p.strip()]
        return dict(p.split("=", 1) for p in pairs)


def blocks() -> list[Block]:
    found: list[Block] = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        for index, match in enumerate(BLOCK.finditer(text), start=1):
            found.append(Block(page, index, match["mark"], match["code"]))
    return found


BLOCKS = blocks()


def test_the_docs_have_runnable_blocks_and_each_says_how_it_runs() -> None:
    assert len(BLOCKS) >= 10
    for block in BLOCKS:
        assert block.mark is not None, f"{block.name}: mark it main(...), run or compile-only"
    runnable = [b for b in BLOCKS if not b.mark or not b.mark.startswith("compile-only")]
    assert len(runnable) >= len(BLOCKS) - 3  # compile-only is the exception, not the rule


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_every_block_compiles(block: Block) -> None:
    compile(block.code, block.name, "exec")


def _module(block: Block) -> types.ModuleType:
    module = types.ModuleType(f"docs_block_{block.index}")
    module.__file__ = str(block.page)
    lines = block.code.splitlines(keepends=True)
    linecache.cache[block.name] = (len(block.code), None, lines, block.name)  # for tracebacks
    exec(compile(block.code, block.name, "exec"), module.__dict__)
    return module


RUNNABLE = [b for b in BLOCKS if b.mark and not b.mark.startswith("compile-only")]


@pytest.mark.anyio
@pytest.mark.parametrize("block", RUNNABLE, ids=[b.name for b in RUNNABLE])
async def test_every_block_runs(block: Block, request: pytest.FixtureRequest) -> None:
    assert block.mark is not None
    if block.mark == "run":
        _module(block)
        return
    arguments = {name: request.getfixturevalue(f) for name, f in block.fixtures().items()}
    module = _module(block)
    main: Callable[..., Coroutine[Any, Any, None]] = module.main
    assert inspect.iscoroutinefunction(main), f"{block.name}: main must be async"
    assert list(inspect.signature(main).parameters) == list(arguments), block.name
    with anyio.fail_after(60):
        await main(**arguments)


def test_every_exported_name_has_a_reference_entry() -> None:
    """The API reference is generated per name: a name exported but not listed has no page.

    Each public module's names (the top level, models, errors, transports, protocol, wire) are
    listed under their public path; a name exported twice (the root error) needs one entry."""
    import importlib

    text = "".join(p.read_text() for p in (REPO / "docs" / "api").glob("*.md"))
    documented = set(re.findall(r"^::: (mcp_tasks_client(?:\.\w+)+)$", text, flags=re.M))
    objects = {id(_resolve(path)) for path in documented}
    missing = []
    for home in ("", ".models", ".errors", ".transports", ".protocol", ".wire"):
        module = importlib.import_module(f"mcp_tasks_client{home}")
        for name in set(module.__all__) - {"__version__"}:
            path = f"{module.__name__}.{name}"
            value = getattr(module, name)
            # A type alias or constant is documented by its path; a class or function by identity.
            if path not in documented and (not callable(value) or id(value) not in objects):
                missing.append(path)
    assert not missing, f"add these to a page under docs/api/: {sorted(missing)}"


def _resolve(path: str) -> object:
    """The object a ``:::`` path names (a module, or a name in one)."""
    import importlib

    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        module_path, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module_path), name)
