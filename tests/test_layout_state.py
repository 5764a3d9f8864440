"""The library's state, checked from its source: no process-wide state on the request path.

Issue 33 (per-client state instead of process state):

- **No module-level mutable state on the request path.** A module-level dict, list, set or
  deque that a function of the library changes (a cache, a registry filled at run time) is
  state every client of the process shares. Each one found must be on the short list below,
  with the reason it is still there; a new one fails.
- **No ContextVar** carries data down the request path (it was a side channel of the lean
  transport).
- **No module reaches into another's private attributes**: ``obj._name`` is read only where
  ``_name`` is defined (the module that owns it), or on an object of a third-party library the
  module adapts (named below).

The tools built on the library (``conformance``, ``sdk``, ``testing``, ``cli``, ``monitor``)
are applications with their own rules and are not checked here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_tasks_client"
TOOLS = frozenset({"conformance", "sdk", "testing", "_hypothesis", "cli", "monitor"})

KNOWN_CACHES: dict[tuple[str, str], str] = {}
"""The module-level caches still on the request path, each with its reason: none. The last
ones, the HTTP/1.1 head codec's (header lines written, heads, status lines and header lines
read), are each lean engine's own (``_h1.HeadCache``), as the Task decoder's timestamp cache
is each client's driver's."""

FOREIGN_PRIVATE = frozenset(
    {
        "_replace",  # namedtuple's public API, underscore and all
        "_attrs_structure_hook",  # cattrs' converter: the codecs extend its attrs hooks
        "_attrs_unstructure_hook",
    }
)

_CONTAINERS = frozenset(
    {"dict", "list", "set", "OrderedDict", "deque", "defaultdict", "Counter", "WeakSet"}
    | {"WeakValueDictionary", "WeakKeyDictionary"}
)
_MUTATORS = frozenset(
    {"clear", "update", "setdefault", "pop", "popitem", "append", "extend", "add", "discard"}
    | {"remove", "insert", "appendleft", "popleft", "move_to_end", "__setitem__"}
)
_READERS = frozenset(
    {"len", "sorted", "list", "tuple", "frozenset", "dict", "set", "any", "all", "isinstance"}
    | {"iter", "enumerate", "min", "max", "sum", "zip", "reversed", "repr", "str", "next"}
)


def _library_modules() -> list[Path]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        head = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        if head not in TOOLS:
            found.append(path)
    return found


def _is_container(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return name in _CONTAINERS
    return False


def module_level_state(source: str) -> set[str]:
    """The module-level containers ``source``'s functions change (a mutating method, an item
    stored or deleted, the container handed to another function), and its ``global``s."""
    tree = ast.parse(source)
    containers: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _is_container(statement.value):
            containers.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
            and _is_container(statement.value)
        ):
            containers.add(statement.target.id)
    changed: set[str] = set()
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ]
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed.update(f"global {name}" for name in node.names)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in containers
                and node.attr in _MUTATORS
            ):
                changed.add(node.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
                for target in targets:
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in containers
                    ):
                        changed.add(target.value.id)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) not in _READERS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(arg, ast.Name) and arg.id in containers:
                        changed.add(arg.id)
    return changed


def test_no_new_module_level_mutable_state_on_the_request_path() -> None:
    found = {
        (str(path.relative_to(PACKAGE)), name)
        for path in _library_modules()
        for name in module_level_state(path.read_text(encoding="utf-8"))
    }
    assert found - set(KNOWN_CACHES) == set(), "module-level state: keep it on an instance"


def test_the_state_finder_finds_state() -> None:
    """The finder sees each way a function changes a module-level container, and no more."""
    source = """
import collections
_A = {}
_B: list[int] = []
_C = collections.OrderedDict()
_D = set()
_E = {}
_F = {"x": 1}
_G = 0
_TABLE = {"read": 1}

def f(key):
    _A[key] = 1
    _B.append(key)
    _C.move_to_end(key)
    remember(_D, key)
    global _G
    return _TABLE.get(key), len(_E), sorted(_F)
"""
    assert module_level_state(source) == {"_A", "_B", "_C", "_D", "global _G"}


def _names_context_var(source: str) -> bool:
    """Whether ``source``'s code (not its prose) names ``ContextVar``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "ContextVar":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "ContextVar":
            return True
        if isinstance(node, ast.alias) and node.name.rsplit(".", 1)[-1] == "ContextVar":
            return True
    return False


def test_no_context_var_on_the_request_path() -> None:
    users = [
        str(path.relative_to(PACKAGE))
        for path in _library_modules()
        if _names_context_var(path.read_text(encoding="utf-8"))
    ]
    assert users == []
    assert _names_context_var("import contextvars\nX = contextvars.ContextVar('x')")
    assert _names_context_var("from contextvars import ContextVar")
    assert not _names_context_var('"""nothing is kept in a ContextVar"""')


def private_reaches(source: str) -> list[str]:
    """``obj._name`` where ``obj`` is not ``self`` or ``cls`` and nothing in ``source`` defines
    ``_name`` (a def, a class, an attribute or name stored, an argument, an import, a
    ``__slots__`` entry): a reach into another module's private attribute."""
    tree = ast.parse(source)
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.alias):
            defined.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            defined.add(node.value)  # a __slots__ entry (and any other string: lenient)
    reaches = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__") or name in FOREIGN_PRIVATE:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if name not in defined:
            reaches.append(f"{node.lineno}: {ast.unparse(node)}")
    return reaches


def test_no_module_reaches_into_another_modules_private_attributes() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{reach}"
        for path in _library_modules()
        for reach in private_reaches(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_reach_finder_finds_reaches() -> None:
    source = """
class Own:
    def __init__(self):
        self._mine = 1
        self._other = None

    def go(self, client, own):
        client._driver.decode()
        own._mine += 1
        return self._other, options._replace(a=1)
"""
    assert private_reaches(source) == ["8: client._driver"]


SNAPSHOTS = {
    "2025-11-25": {"ttl": 60000, "pollInterval": 500},
    "2026-07-28": {"ttlMs": 60000, "pollIntervalMs": 500},
}


def test_each_clients_driver_keeps_its_own_timestamps_and_the_shared_decoders_none() -> None:
    """The Task decoder's timestamp cache (was module-level) is each client's driver's own:
    a timestamp one driver read is kept for its next poll, and never shared with another
    client's; the module's shared decoders keep none."""
    from mcp_tasks_client import Generation
    from mcp_tasks_client._codec import v2025_11_25, v2026_07_28
    from mcp_tasks_client._drivers import driver_for

    shared = {"2025-11-25": v2025_11_25.decode_task, "2026-07-28": v2026_07_28.decode_task}
    for generation in (Generation.V2025_11_25, Generation.V2026_07_28):
        raw = {
            "taskId": "t1",
            "status": "working",
            "createdAt": "2026-08-01T00:00:00Z",
            "lastUpdatedAt": "2026-08-01T00:00:01Z",
            **SNAPSHOTS[generation.value],
        }
        one, other = driver_for(generation), driver_for(generation)
        first = one.read_task(raw).created_at
        assert one.read_task(raw).created_at is first  # kept by this client's driver
        assert other.read_task(raw).created_at is not first  # another client's: its own
        assert other.read_task(raw).created_at == first
        decode = shared[generation.value]
        assert decode(raw).created_at is not decode(raw).created_at  # shared: keeps none
