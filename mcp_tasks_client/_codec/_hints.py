"""Caching hints (SEP-2549): ``ttlMs`` and ``cacheScope`` on the cacheable results.

In 2026-07-28 a server MUST put them on every complete result of ``server/discover``,
``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list`` and
``resources/read``. They are read leniently, because a bad hint must never cost the caller the
result it came with; the reading only ever makes a result *less* reusable:

- ``ttlMs`` absent: 0 (stale at once, SEP-2549). Not a whole number (a string, a fraction,
  ``true``), negative, or past :data:`~mcp_tasks_client.models.MAX_DURATION_MS`: 0;
- ``cacheScope`` absent, or not ``"public"``/``"private"``: ``PRIVATE`` (shared with no other
  authorization context).

:func:`hint_problems` names what was read that way, for the driver to warn about
(``LenientCacheHint``). 2025-11-25 has no hints: its codec leaves both keys in ``extra`` and
writes neither (:func:`install_ignored`), on every cacheable result it has.

May import: ``models``, ``_exceptions``, this package's ``_converter``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .. import models
from .._exceptions import DecodeError
from ..models import MAX_DURATION_MS, CacheScope
from ._converter import WireConverter, _kind_of

__all__ = [
    "CACHEABLE",
    "HINT_KEYS",
    "hint_problems",
    "install_ignored",
    "install_lenient",
    "missing_hints",
    "read_hints",
]

CACHEABLE: dict[str, tuple[str, ...]] = {
    "mcp_tasks_client.models.lifecycle": ("DiscoverResult",),
    "mcp_tasks_client.models.tools": ("ListToolsResult",),
    "mcp_tasks_client.models.catalog": (
        "ListPromptsResult",
        "ListResourcesResult",
        "ListResourceTemplatesResult",
        "ReadResourceResult",
    ),
}
"""The result models that carry the hints (SEP-2549), by their module and name: their hooks
are installed when the converter first meets a class of that module (``WireConverter.defer``),
so a program that reads no prompt nor resource never imports their models."""

HINT_KEYS = ("ttlMs", "cacheScope")


def _ttl(value: Any) -> int | None:
    """``ttlMs`` as a valid whole number of ms, or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    if not 0 <= value <= MAX_DURATION_MS:
        return None
    return int(value)


def read_hints(body: Mapping[str, Any]) -> tuple[int, CacheScope]:
    """The hints of a 2026-07-28 cacheable result, read leniently (see the module)."""
    ttl = _ttl(body.get("ttlMs", 0))
    scope = body.get("cacheScope")
    return (
        0 if ttl is None else ttl,
        CacheScope(scope) if scope in ("public", "private") else CacheScope.PRIVATE,
    )


def hint_problems(body: Mapping[str, Any]) -> list[str]:
    """What :func:`read_hints` read leniently in ``body``: a hint that is present but
    malformed, one line each (empty: nothing). An absent hint is the spec's own default, not
    a lenient reading (the conformance probe reports it: :func:`missing_hints`)."""
    problems = []
    if "ttlMs" in body and _ttl(body["ttlMs"]) is None:
        shown = _shown(body["ttlMs"])
        problems.append(f"ttlMs {shown} is not a whole number of ms in range: read as 0")
    if "cacheScope" in body and body["cacheScope"] not in ("public", "private"):
        shown = _shown(body["cacheScope"])
        problems.append(f"cacheScope {shown} is neither 'public' nor 'private': read as 'private'")
    return problems


def missing_hints(body: Mapping[str, Any]) -> list[str]:
    """The hint keys a complete cacheable 2026-07-28 result lacks (a server MUST send both)."""
    return [key for key in HINT_KEYS if key not in body]


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, int, float, bool)) else _kind_of(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _object(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
    return value


def install_lenient(conv: WireConverter) -> None:
    """2026-07-28: the hints are fields, read leniently; always written."""
    for module, names in CACHEABLE.items():
        conv.defer(module, _installer(conv, names, _lenient))


def _installer(
    conv: WireConverter, names: tuple[str, ...], hooks: Callable[[WireConverter, Any], None]
) -> Callable[[], None]:
    """What registers ``hooks`` for each model named, once the converter meets their module."""

    def install() -> None:
        for name in names:
            hooks(conv, getattr(models, name))

    return install


def _lenient(conv: WireConverter, cls: Any) -> None:
    generic_structure = conv._attrs_structure_hook(cls)

    def structure(value: Any, _: Any) -> Any:
        body = _object(value)
        ttl, scope = read_hints(body)
        rest = {k: v for k, v in body.items() if k not in HINT_KEYS}
        return generic_structure({**rest, "ttlMs": ttl, "cacheScope": scope.value}, cls)

    conv.register_structure_hook(cls, structure)


def install_ignored(conv: WireConverter) -> None:
    """2025-11-25: no hints. On the results this generation has (the lists,
    ``resources/read``) both keys stay in ``extra`` as sent and the fields are never written
    (a model's hints mean nothing here). ``DiscoverResult`` is 2026-07-28's alone: this
    generation never reads one, and its codec maps it as any model."""
    for module, names in CACHEABLE.items():
        kept = tuple(n for n in names if n != "DiscoverResult")
        if kept:
            conv.defer(module, _installer(conv, kept, _ignored))


def _ignored(conv: WireConverter, cls: Any) -> None:
    generic_structure = conv._attrs_structure_hook(cls)
    generic_unstructure = conv._attrs_unstructure_hook(cls)

    def structure(value: Any, _: Any) -> Any:
        body = _object(value)
        hints = {k: body[k] for k in HINT_KEYS if k in body}
        if not hints:
            return generic_structure(body, cls)
        result = generic_structure({k: v for k, v in body.items() if k not in hints}, cls)
        return _with_extra(result, hints)

    def unstructure(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = generic_unstructure(obj)
        for key in HINT_KEYS:
            if key not in obj.extra:
                out.pop(key, None)
        return out

    conv.register_structure_hook(cls, structure)
    conv.register_unstructure_hook(cls, unstructure)


def _with_extra(result: Any, more: Mapping[str, Any]) -> Any:
    return attrs.evolve(result, extra={**result.extra, **more})
