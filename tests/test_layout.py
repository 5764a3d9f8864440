"""The library's layout, checked from its source: floors of imports, and the generation seam.

Two rules a reader can rely on (see each package's module header):

- **Floors.** Every module sits on a floor (``FLOORS`` below); it may import from its own floor
  and the floors beneath, never from one above. A lower floor is what a higher one is built on,
  so a module can be read knowing only what is beneath it.
- **One seam per generation.** Outside ``mcp_tasks_client/_drivers/`` nothing branches on a
  protocol generation or on a flag of one (``is Generation.X``, ``== Generation.X``,
  ``.stateless``, ``.inline_results``, ``.lists_tasks``, an ``isinstance`` on a driver class):
  it asks the generation's driver. The registry in ``_drivers/__init__.py`` is the only map
  from a generation to its behaviour.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_tasks_client"

FLOORS: list[tuple[str, ...]] = [
    # 0: values: models, errors, limits, the generation names, outcomes, logging/tracing hooks
    ("models", "_errors", "_limits", "_generation", "observability", "outcomes"),
    # 1: codecs: models to and from each generation's JSON, header codecs
    ("_wire",),
    # 2: sans-I/O protocol pieces: correlation, task machine, scheduler, books; call builders
    ("_protocol", "builders"),
    # 3: transports: bytes in and out
    ("_transports",),
    # 4: generation drivers: what each generation means (the only generation branches)
    ("_drivers",),
    # 5: the session under the Client; journal records; the public codec facade
    ("_session", "journal", "wire"),
    # 6: the typed Client
    ("_client", "_client_base", "_features", "_task_api"),
    # 7: services built on a Client: the Poller, input routing, the task receiver, the probe
    ("engine", "_poller", "inputs", "receiver", "probe"),
    # 8: resuming journaled tasks (opens Clients and Pollers)
    ("resume",),
    # 9: tools and the front door: conformance kit, testing kit, CLI, the package itself
    ("conformance", "testing", "_hypothesis", "cli", "__init__"),
]


def _floor_of(module: str) -> int:
    """``module`` is a dotted path below the package ("_wire.headers", "__init__")."""
    head = module.split(".", 1)[0]
    for floor, names in enumerate(FLOORS):
        if head in names:
            return floor
    raise AssertionError(f"{module}: on no floor; add it to FLOORS in tests/test_layout.py")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts == ["__init__"]:
            found["__init__"] = path
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path) -> set[str]:
    """The package modules ``module`` imports (dotted paths below the package)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if module == "__init__":
        package = []
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                stem = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith("mcp_tasks_client"):
                stem = node.module.split(".")[1:]
            else:
                continue
            targets = [".".join([*stem, alias.name]) for alias in node.names]
            if stem:
                targets.append(".".join(stem))
        elif isinstance(node, ast.Import):
            targets = [
                ".".join(a.name.split(".")[1:])
                for a in node.names
                if a.name.startswith("mcp_tasks_client.")
            ]
        found.update(t for t in targets if t)
    return found


def test_no_module_imports_from_a_floor_above_it() -> None:
    modules = _modules()
    upward = []
    for module, path in modules.items():
        mine = _floor_of(module)
        for target in sorted(_imports(module, path)):
            if target not in modules:
                continue  # a name imported from a module, not a module
            theirs = _floor_of(target)
            if theirs > mine:
                upward.append(f"{module} (floor {mine}) imports {target} (floor {theirs})")
    assert upward == []


def test_every_module_is_on_a_floor() -> None:
    for module in _modules():
        _floor_of(module)


_BRANCHES = [
    re.compile(r"(?:\bis|\bis not|==|!=)\s+Generation\.V\d"),
    re.compile(r"Generation\.V\d\w*\s+(?:is|is not|==|!=|in)\b"),
    re.compile(r"\bcase\s+Generation\."),
    re.compile(r"\bself\._(?:gen2|g2)\b"),  # a property that is a generation flag
    re.compile(r"\.(?:stateless|inline_results|lists_tasks)\b(?!\()"),
    re.compile(r"isinstance\([^)]*\b(?:Driver2025|Driver2026|Legacy|Stateless)\b"),
]

# Branches on a generation that remain outside the drivers, pinned so that none is added: the
# conformance validator and probe check each generation's own rules, and the testing kit's
# FaultServer is a server of either generation; they are next to be split into one module per
# generation (issue 20). The transports' ``stateless`` is the name of the hook a driver calls
# (``Transport.stateless(headers)``), not a flag.
_KNOWN = {
    "testing/_fault_server.py": 28,
}
_NOT_A_FLAG = re.compile(r"def stateless\(|\.stateless\(|inner\.stateless\(")


def _branches(path: Path) -> list[str]:
    hits = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0]
        if _NOT_A_FLAG.search(code):
            continue
        if any(pattern.search(code) for pattern in _BRANCHES):
            hits.append(f"{number}: {line.strip()}")
    return hits


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(PACKAGE.rglob("*.py")) if "_drivers" not in p.parts],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_nothing_outside_the_drivers_branches_on_a_generation(path: Path) -> None:
    where = path.relative_to(PACKAGE).as_posix()
    hits = _branches(path)
    assert len(hits) == _KNOWN.get(where, 0), "\n".join(hits)


def test_the_branch_finder_finds_branches() -> None:
    """The grep above would see each form of branch (so a clean tree is not a blind one)."""
    for line in [
        "if generation is Generation.V2025_11_25:",
        "x = a if self.generation == Generation.V2026_07_28 else b",
        "if client.dialect.stateless:",
        "seed = client.driver.inline_results and ok",
        "if isinstance(dialect, Stateless):",
        "case Generation.V2026_07_28:",
    ]:
        assert any(p.search(line) for p in _BRANCHES), line
    assert not _NOT_A_FLAG.search("if client.driver.stateless:")


def test_the_registry_knows_every_generation_and_refuses_others() -> None:
    from mcp_tasks_client import Generation, UsageError
    from mcp_tasks_client._drivers import DRIVERS, driver_class

    assert set(DRIVERS) == set(Generation)
    for generation, driver in DRIVERS.items():
        assert driver.generation is generation
    with pytest.raises(UsageError, match="no driver for generation"):
        driver_class("2099-01-01")  # type: ignore[arg-type]
