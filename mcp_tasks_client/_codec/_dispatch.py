"""Which hook reads or writes a type: the converters' dispatch, and nothing else.

Job: map a type to the function that structures a JSON value into it (or unstructures an
object of it), from what a converter registered: a hook for a class (which also serves its
subclasses, the nearest class in the method resolution order first), a hook for every type a
predicate accepts, or a factory that makes the hook of each type a predicate accepts. Among
predicates the one registered last is asked first, so a converter refines what it registered
earlier. The hook found for a type is kept until the next registration.

May import: the standard library only.

Theory of operation: the converters (``_converter.WireConverter``) register every hook a
model needs themselves; this class only finds them. It keeps the registration interface of
cattrs' ``Converter`` (``register_structure_hook``, ``..._func``, ``..._factory``, and their
unstructure twins; ``structure``, ``unstructure``, ``get_structure_hook``), which the codecs
were written against, without importing cattrs: cattrs and the typing_extensions it loads
were about a tenth of ``mcp-tasks status``'s start-up (issue 34), and the codecs used none of
its own hooks. Unstructuring what no hook was registered for follows cattrs' defaults, which
the codecs relied on: a mapping becomes a dict and a list or tuple a list, their items
unstructured; sets keep their type; anything else (str, int, float, bool, None...) is
returned as it is. Structuring a type no hook serves is a TypeError: a modelling mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Dispatch", "StructureHook", "UnstructureHook"]

StructureHook = Callable[[Any, Any], Any]
"""``hook(value, type)``: ``value`` (parsed JSON) as ``type``."""
UnstructureHook = Callable[[Any], Any]
"""``hook(obj)``: ``obj`` as JSON-ready values."""

_Rule = tuple[Callable[[Any], bool], Callable[..., Any], bool]
"""(predicate, hook or factory, whether it is a factory)."""


class Dispatch:
    """The hooks a converter registered, found by type (cached until a registration)."""

    def __init__(self) -> None:
        self._structure_classes: dict[Any, StructureHook] = {}
        self._structure_rules: list[_Rule] = []
        self._structure_found: dict[Any, StructureHook] = {}
        self._unstructure_classes: dict[Any, UnstructureHook] = {}
        self._unstructure_rules: list[_Rule] = []
        self._unstructure_found: dict[Any, UnstructureHook] = {}

    # -- registering -----------------------------------------------------------------------

    def register_structure_hook(self, cls: Any, hook: StructureHook) -> None:
        self._structure_classes[cls] = hook
        self._structure_found.clear()

    def register_structure_hook_func(
        self, predicate: Callable[[Any], bool], hook: StructureHook
    ) -> None:
        self._structure_rules.append((predicate, hook, False))
        self._structure_found.clear()

    def register_structure_hook_factory(
        self, predicate: Callable[[Any], bool], factory: Callable[[Any], StructureHook]
    ) -> None:
        self._structure_rules.append((predicate, factory, True))
        self._structure_found.clear()

    def register_unstructure_hook(self, cls: Any, hook: UnstructureHook) -> None:
        self._unstructure_classes[cls] = hook
        self._unstructure_found.clear()

    def register_unstructure_hook_func(
        self, predicate: Callable[[Any], bool], hook: UnstructureHook
    ) -> None:
        self._unstructure_rules.append((predicate, hook, False))
        self._unstructure_found.clear()

    def register_unstructure_hook_factory(
        self, predicate: Callable[[Any], bool], factory: Callable[[Any], UnstructureHook]
    ) -> None:
        self._unstructure_rules.append((predicate, factory, True))
        self._unstructure_found.clear()

    # -- finding ---------------------------------------------------------------------------

    def get_structure_hook(self, tp: Any) -> StructureHook:
        hook = self._structure_found.get(tp)
        if hook is None:
            hook = _find(tp, self._structure_classes, self._structure_rules)
            if hook is None:
                raise TypeError(f"no structure hook for {tp!r}")
            self._structure_found[tp] = hook
        return hook

    def get_unstructure_hook(self, tp: Any) -> UnstructureHook:
        hook = self._unstructure_found.get(tp)
        if hook is None:
            found = _find(tp, self._unstructure_classes, self._unstructure_rules)
            hook = found if found is not None else self._default_unstructure(tp)
            self._unstructure_found[tp] = hook
        return hook

    def structure(self, value: Any, tp: Any) -> Any:
        return self.get_structure_hook(tp)(value, tp)

    def unstructure(self, obj: Any) -> Any:
        return self.get_unstructure_hook(obj.__class__)(obj)

    def _default_unstructure(self, cls: Any) -> UnstructureHook:
        """What cattrs' Converter does for a class no hook serves (see the module header)."""
        if isinstance(cls, type):
            if issubclass(cls, Mapping):
                return self._unstructure_mapping
            if issubclass(cls, (list, tuple)):
                return self._unstructure_sequence
            if issubclass(cls, (set, frozenset)):
                return self._unstructure_set
        return _identity

    def _unstructure_mapping(self, obj: Mapping[Any, Any]) -> dict[Any, Any]:
        unstructure = self.unstructure
        return {unstructure(k): unstructure(v) for k, v in obj.items()}

    def _unstructure_sequence(self, obj: list[Any] | tuple[Any, ...]) -> list[Any]:
        unstructure = self.unstructure
        return [unstructure(item) for item in obj]

    def _unstructure_set(self, obj: set[Any] | frozenset[Any]) -> Any:
        unstructure = self.unstructure
        return obj.__class__(unstructure(item) for item in obj)


def _find(tp: Any, classes: dict[Any, Any], rules: list[_Rule]) -> Any:
    """The hook of ``tp``: registered for it (or, for a class, its nearest registered base),
    else from the last registered rule whose predicate accepts it; None if there is none."""
    hook = classes.get(tp)
    if hook is not None:
        return hook
    for base in getattr(tp, "__mro__", ())[1:] if isinstance(tp, type) else ():
        hook = classes.get(base)
        if hook is not None:
            return hook
    for predicate, found, is_factory in reversed(rules):
        if predicate(tp):
            return found(tp) if is_factory else found
    return None


def _identity(obj: Any) -> Any:
    return obj
