"""Docs that run: every ```python block of the documentation site (``docs/**/*.md``) is
executed here, against the real peer servers, on trio and asyncio.

How a block says how it runs (an HTML comment on the line before it; the site does not show
it):

- ``<!-- docs: main(url=mcp1_http_url) -->``: the block is a complete program whose entry
  point is ``async def main(url)`` (or a plain ``def main(url)``, docs/sync.md's, called in
  the thread of the test's running loop, as a notebook cell calls it); the test executes the
  block as a module (its ``if __name__ == "__main__"`` part does not run) and awaits ``main``
  with each argument taken from the named pytest fixture (``mcp1_http_url`` or
  ``fastmcp4_http_url``: the servers ``nox -s serve`` runs). Its ``__main__`` part takes the
  same URLs from its command line, in that order, and says so:
  ``# python3 example.py "$MCP1_URL"`` (the variables ``serve.env`` sets);
  tests/test_newcomer.py runs each block so against ``nox -s serve``.
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
    compiled = [b for b in BLOCKS if b.mark and b.mark.startswith("compile-only")]
    # A compile-only block whose reason names the test that runs the same calls (a PostgreSQL
    # server, say) is run there; the rest are the exception, not the rule.
    backed = [b for b in compiled if re.search(r"tests/test_\w+\.py", b.mark or "")]
    for block in backed:
        named = re.search(r"tests/test_\w+\.py", block.mark or "")
        assert named is not None
        assert (REPO / named[0]).is_file(), block.name
    assert len(compiled) - len(backed) <= 3, [b.name for b in compiled]


# The URL a fixture gives, as `nox -s serve` gives it to a user (its serve.env's variables).
SERVED_AS = {"mcp1_http_url": "MCP1_URL", "fastmcp4_http_url": "FASTMCP4_URL"}


def command_line(block: Block) -> list[str]:
    """The variables a program block's ``__main__`` takes from its command line, in order."""
    found = re.search(
        r'^if __name__ == "__main__":  # python3 example\.py(?P<args>(?: "\$\w+")*)\n'
        r"    (?:(?:trio|anyio)\.run\(main(?P<argv>(?:, sys\.argv\[\d\])*)\)"
        r"|main\((?P<plain>sys\.argv\[\d\](?:, sys\.argv\[\d\])*)?\))\n\Z",
        block.code,
        flags=re.M,
    )
    assert found, (
        f'{block.name}: end it with `if __name__ == "__main__":  # python3 example.py ...`'
    )
    names = re.findall(r'"\$(\w+)"', found["args"])
    called = found["argv"] if found["argv"] is not None else found["plain"] or ""
    argv = [int(i) for i in re.findall(r"\[(\d)\]", called)]
    assert argv == list(range(1, len(names) + 1)), block.name
    return names


PROGRAMS = [b for b in BLOCKS if b.mark and b.mark.startswith("main(")]


@pytest.mark.parametrize("block", PROGRAMS, ids=[b.name for b in PROGRAMS])
def test_every_program_takes_its_urls_from_its_command_line(block: Block) -> None:
    """As a script, a block runs against `nox -s serve` unchanged: no port of ours in it."""
    fixtures = block.fixtures()
    for fixture in fixtures.values():
        assert fixture in SERVED_AS, f"{block.name}: {fixture} is not a server `nox -s serve` runs"
    assert command_line(block) == [SERVED_AS[f] for f in fixtures.values()]
    assert "127.0.0.1" not in block.code, block.name
    assert "localhost" not in block.code, block.name


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
    main: Callable[..., Coroutine[Any, Any, None] | None] = module.main
    assert list(inspect.signature(main).parameters) == list(arguments), block.name
    if not inspect.iscoroutinefunction(main):
        # A synchronous program (docs/sync.md): called right here, in the thread of a running
        # event loop, as a notebook cell calls it; its own waits carry their deadlines.
        main(**arguments)
        return
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
