"""The library's layout, checked from its source: floors of imports, and the generation seam.

Two rules a reader can rely on (see each package's module header):

- **Floors.** Every module sits on a floor (``FLOORS`` below); it may import from its own floor
  and the floors beneath, never from one above. A lower floor is what a higher one is built on,
  so a module can be read knowing only what is beneath it.
- **One seam per generation.** Outside ``mcp_tasks_client/_drivers/`` nothing branches on a
  protocol generation or on a flag of one (``is Generation.X``, ``== Generation.X``,
  ``.stateless``, ``.inline_results``, ``.lists_tasks``, an ``isinstance`` on a driver class):
  it asks the generation's driver. The registry in ``_drivers/__init__.py`` is the only map
  from a generation to the protocol's behaviour. The tools on the top floor that speak as, or
  judge, one generation's server keep one module per generation too, each chosen by a registry
  of its own (a dict lookup, never a branch): the validator's rules (``conformance.validator.
  CHECKS``), the probe's script (``conformance.live.PROBES``) and the FaultServer's dialect
  (``testing._fault_server.DIALECTS``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_tasks_client"

FLOORS: list[tuple[str, ...]] = [
    # 0: values: models, errors, limits, the generation names, outcomes, logging/tracing hooks
    ("models", "_exceptions", "_limits", "_generation", "observability", "outcomes"),
    # 1: codecs: models to and from each generation's JSON, header codecs
    ("_codec",),
    # 2: sans-I/O protocol pieces: correlation, task machine, scheduler, books; call builders;
    # the result cache
    ("_sansio", "builders", "_cache"),
    # 3: transports: bytes in and out
    ("_io",),
    # 4: generation drivers: what each generation means (the only generation branches)
    ("_drivers",),
    # 5: the session under the Client; journal records; the public codec facade
    ("_session", "journal", "journal_postgres", "wire"),
    # 6: the typed Client
    ("_client", "_client_base", "_features", "_task_api"),
    # 7: services built on a Client: the Poller, input routing, the task receiver, the probe
    ("engine", "_poller", "inputs", "_routing", "receiver", "probe"),
    # 8: resuming journaled tasks (opens Clients and Pollers)
    ("resume",),
    # 9: tools and the front door: conformance kit, testing kit, CLI, the package itself
    (
        "conformance",
        "sdk",
        "testing",
        "_hypothesis",
        "cli",
        "monitor",
        "sync",
        "__init__",
        "errors",
        "protocol",
        "transports",
    ),
]


def _floor_of(module: str) -> int:
    """``module`` is a dotted path below the package ("_codec.headers", "__init__")."""
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
    re.compile(r"(?:\bis|\bis not|==|!=)\s+G[12]\b"),  # a generation under a short alias
    re.compile(r"\bself\._(?:gen2|g2)\b"),  # a property that is a generation flag
    re.compile(r"\.(?:stateless|inline_results|lists_tasks)\b"),
    re.compile(
        r"isinstance\([^)]*\b(?:Driver|Checks|Probe|Dialect)20\d\d\b"
        r"|isinstance\([^)]*\b(?:Legacy|Stateless)\b"
    ),
]


def _branches(path: Path) -> list[str]:
    hits = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0]
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
    assert hits == [], f"{where} branches on a generation:\n" + "\n".join(hits)


def test_the_branch_finder_finds_branches() -> None:
    """The grep above would see each form of branch (so a clean tree is not a blind one)."""
    for line in [
        "if generation is Generation.V2025_11_25:",
        "x = a if self.generation == Generation.V2026_07_28 else b",
        "if client.dialect.stateless:",
        "seed = client.driver.inline_results and ok",
        "if isinstance(dialect, Stateless):",
        "case Generation.V2026_07_28:",
        "if self.generation is G1:",
        "if isinstance(checks, Checks2025):",
        "if isinstance(server._dialect, Dialect2026):",
    ]:
        assert any(p.search(line) for p in _BRANCHES), line


def test_the_registry_knows_every_generation_and_refuses_others() -> None:
    from mcp_tasks_client import Generation
    from mcp_tasks_client._drivers import DRIVERS, driver_class
    from mcp_tasks_client.errors import UsageError

    assert set(DRIVERS) == set(Generation)
    for generation, driver in DRIVERS.items():
        assert driver.generation is generation
    with pytest.raises(UsageError, match="no driver for generation"):
        driver_class("2099-01-01")  # type: ignore[arg-type]


def test_the_tools_registries_know_every_generation_and_refuse_others() -> None:
    """The conformance kit's and the testing kit's own registries: one entry per generation,
    each of its generation, and an unknown generation a typed error (never another's rules)."""
    from mcp_tasks_client import Generation
    from mcp_tasks_client.conformance import Validator
    from mcp_tasks_client.conformance.live import PROBES, probe_class
    from mcp_tasks_client.conformance.validator import CHECKS
    from mcp_tasks_client.errors import UsageError
    from mcp_tasks_client.testing import FaultServer, valid_traffic
    from mcp_tasks_client.testing._fault_server import DIALECTS

    for registry in (CHECKS, PROBES, DIALECTS):
        assert set(registry) == set(Generation)
        for generation, kind in registry.items():
            assert kind.generation is generation
    with pytest.raises(UsageError, match="no checks for generation"):
        Validator("2099-01-01")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no FaultServer speaks"):
        FaultServer("2099-01-01")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no traffic of generation"):
        valid_traffic("2099-01-01")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no probe for generation"):
        probe_class("2099-01-01")  # type: ignore[arg-type]


_GENERATION_MODULE = re.compile(r"v\d{4}_\d\d_\d\d")
_TOOLS = ("cli", "conformance", "testing")


def _stem(module: str) -> str:
    """A module's name as a reader hears it: no leading underscore, no plural."""
    name = module.rsplit(".", 1)[-1].lstrip("_")
    return name[:-1] if name.endswith("s") and len(name) > 3 else name


def test_no_two_modules_of_the_library_share_a_name() -> None:
    """A reader never meets ``inputs.py`` beside ``models/inputs.py``, ``wire.py`` beside
    ``_wire/``, ``errors.py`` beside ``_errors.py``: one name, one module. Exempt are the
    one-module-per-generation names (each layer has one per generation), a package's ``base``,
    and the tools built on the library (``cli``, ``conformance``, ``testing``: applications with
    their own modules)."""
    seen: dict[str, str] = {}
    clashes = []
    for module in _modules():
        if module == "__init__" or module.split(".", 1)[0] in _TOOLS:
            continue
        stem = _stem(module)
        if _GENERATION_MODULE.fullmatch(stem) or stem == "base":
            continue
        if stem in seen:
            clashes.append(f"{seen[stem]} and {module}")
        seen[stem] = module
    assert clashes == []


def test_every_package_says_its_job_and_what_it_may_import() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if init.parent == PACKAGE or init.parent.name in _TOOLS or init.parent.name == "models":
            continue  # the front door, the tools and the models say what they offer instead
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, init.relative_to(PACKAGE)
        assert "Job" in doc or "job" in doc, init.relative_to(PACKAGE)
