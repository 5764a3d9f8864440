"""The 2025-11-25 wire format: every generation-specific shape lives here and nowhere else.

The generic rules are in ``_converter``; this module adds what does not fit them:
content blocks and elicitation params carry a discriminator key (``type``, ``mode``) that is
not a field of the model; task capabilities are nested ``{}`` objects read as flags (A-09);
JSON-RPC envelopes are classified by their keys (B:27-108).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .. import models
from .._exceptions import DecodeError
from ..models import ClientTasksCapability, ServerTasksCapability, Task
from ._converter import Family, WireConverter, _kind_of
from ._fast_task import task_decoder_2025
from ._hints import install_ignored

PROTOCOL_VERSION = "2025-11-25"

__all__ = ["PROTOCOL_VERSION", "converter", "decode_task", "install_common", "strict_task"]


def _flag(value: Any, key: str) -> bool:
    """A capability flag: an object (or ``true``) is present, ``false``/``null`` absent (A-09)."""
    if isinstance(value, dict) or value is True:
        return True
    if value is None or value is False:
        return False
    raise DecodeError(f"$.{key}", f"expected an object, got {_kind_of(value)}", value)


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(path, f"expected an object, got {_kind_of(value)}", value)
    return value


def _split_nested(value: Mapping[str, Any], path: tuple[str, ...]) -> tuple[bool, dict[str, Any]]:
    """Read the flag at ``path`` inside ``value``; return it and what is left besides it."""
    head, *rest = path
    inner = value.get(head)
    remainder = {k: v for k, v in value.items() if k != head}
    if not rest:
        return _flag(inner, head), remainder
    inner_obj = _object(inner, f"$.{head}")
    try:
        present, inner_rest = _split_nested(inner_obj, tuple(rest))
    except DecodeError as exc:
        raise exc.under(f"$.{head}") from None
    if inner_rest:
        remainder[head] = inner_rest
    return present, remainder


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _tasks_capability_hooks(
    conv: WireConverter, cls: Any, nested: Mapping[str, tuple[str, ...]]
) -> None:
    def structure(value: Any, _: Any) -> Any:
        if value is True:
            value = {}
        body = _object(value, "$")
        flags: dict[str, bool] = {}
        remainder: dict[str, Any] = dict(body)
        for name, path in nested.items():
            flags[name], remainder = _split_nested(remainder, path)
        return cls(**flags, extra=remainder)

    def unstructure(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, path in nested.items():
            if getattr(obj, name):
                node = out
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                node[path[-1]] = {}
        return _deep_merge(out, obj.extra)

    conv.register_structure_hook(cls, structure)
    conv.register_unstructure_hook(cls, unstructure)


def _tagged_hooks(conv: WireConverter, cls: Any, key: str, tag: str | None) -> None:
    """``cls`` is written with ``key: tag``; the key is not a model field."""
    generic_structure = conv._attrs_structure_hook(cls)
    generic_unstructure = conv._attrs_unstructure_hook(cls)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
        return generic_structure({k: v for k, v in value.items() if k != key}, cls)

    def unstructure(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = generic_unstructure(obj)
        if tag is not None:
            out[key] = tag
        return out

    conv.register_structure_hook(cls, structure)
    conv.register_unstructure_hook(cls, unstructure)


def _pick_content(value: Mapping[str, Any]) -> type:
    tag = value.get("type")
    if not isinstance(tag, str):
        raise DecodeError("$.type", "content block needs a string 'type'", tag)
    content = models.content
    return content.CONTENT_TYPES.get(tag, content.UnknownContent)


def _structure_unknown_content(value: Any, _: Any) -> models.UnknownContent:
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
    tag = value.get("type")
    if not isinstance(tag, str):
        raise DecodeError("$.type", "content block needs a string 'type'", tag)
    return models.UnknownContent(type=tag, raw=dict(value))


def _pick_elicit(value: Mapping[str, Any]) -> type:
    mode = value.get("mode", "form")  # a missing mode is form mode (C-49)
    if mode == "form":
        return models.ElicitRequestFormParams
    if mode == "url":
        return models.ElicitRequestURLParams
    raise DecodeError("$.mode", f"unknown elicitation mode {mode!r}", mode)


def install_common(conv: WireConverter) -> None:
    """The shapes both generations write alike: capability flags, content blocks (by
    ``type``), elicitation params (by ``mode``), resource contents. The content and
    elicitation hooks are deferred until the converter meets a class of their module (a
    program that reads no tool result nor input request never imports those models)."""
    _tasks_capability_hooks(
        conv,
        ServerTasksCapability,
        {"list": ("list",), "cancel": ("cancel",), "tools_call": ("requests", "tools", "call")},
    )
    _tasks_capability_hooks(
        conv,
        ClientTasksCapability,
        {
            "list": ("list",),
            "cancel": ("cancel",),
            "sampling_create_message": ("requests", "sampling", "createMessage"),
            "elicitation_create": ("requests", "elicitation", "create"),
        },
    )
    conv.defer("mcp_tasks_client.models.content", lambda: _install_content(conv))
    conv.defer("mcp_tasks_client.models.client_requests", lambda: _install_elicit(conv))


def _install_content(conv: WireConverter) -> None:
    """Content blocks (by ``type``) and resource contents (text or blob)."""
    content = models.content
    for tag, cls in content.CONTENT_TYPES.items():
        _tagged_hooks(conv, cls, "type", tag)
    unknown = content.UnknownContent
    conv.register_structure_hook(unknown, _structure_unknown_content)
    conv.register_unstructure_hook(unknown, lambda obj: {**obj.raw, "type": obj.type})
    conv.add_family(Family(frozenset([*content.CONTENT_TYPES.values(), unknown]), _pick_content))
    text, blob = content.TextResourceContents, content.BlobResourceContents
    conv.add_family(Family(frozenset([text, blob]), lambda v: blob if "blob" in v else text))


def _install_elicit(conv: WireConverter) -> None:
    """Elicitation params (by ``mode``)."""
    form, url = models.ElicitRequestFormParams, models.ElicitRequestURLParams
    _tagged_hooks(conv, form, "mode", "form")
    _tagged_hooks(conv, url, "mode", "url")
    conv.add_family(Family(frozenset([form, url]), _pick_elicit))


_LATER_TASK_KEYS = ("result", "error", "inputRequests")
"""Keys a 2026-07-28 task inlines; under 2025-11-25 they are not fields but ``extra``."""


def _task_hooks(conv: WireConverter) -> Callable[[Any], Task]:
    """Register the Task hook (the fast path, else the strict one); return the strict one."""
    generic = conv._attrs_structure_hook(Task)

    def strict(value: Any) -> Task:
        body = _object_or_fail(value)
        later = {k: body[k] for k in _LATER_TASK_KEYS if k in body}
        task: Task = generic({k: v for k, v in body.items() if k not in later}, Task)
        return attrs.evolve(task, extra={**task.extra, **later}) if later else task

    decode = task_decoder_2025(strict)

    def structure(value: Any, _: Any) -> Task:
        return decode(value)

    conv.register_structure_hook(Task, structure)
    return strict


def _object_or_fail(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
    return value


def _build() -> tuple[WireConverter, Callable[[Any], Task]]:
    conv = WireConverter()
    install_common(conv)
    strict = _task_hooks(conv)
    install_ignored(conv)  # no caching hints in this generation (SEP-2549 is 2026-07-28)
    return conv, strict


converter, strict_task = _build()
"""``strict_task``: the Task hook without the fast path (what the fast path must agree with)."""


decode_task = task_decoder_2025(strict_task)  # shared: no timestamp cache (see 2026's)
"""A Task snapshot: the fast path for the common shape, else the strict hook (its
DecodeError); the same as ``converter.decode(value, Task)``, without the converter's dispatch."""
