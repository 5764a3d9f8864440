"""The 2026-07-28 wire format with the ``io.modelcontextprotocol/tasks`` extension (E).

What differs from 2025-11-25 at the level of shapes (the rest is shared, ``install_common``):

- a task's durations are ``ttlMs`` and ``pollIntervalMs`` (E 3.1); the models keep the
  generation-neutral names ``ttl`` and ``poll_interval`` (milliseconds in both). A legacy
  ``ttl`` / ``pollInterval`` key is not read as the field: it stays in ``extra`` (S4);
- a task inlines ``result`` (completed), ``error`` (failed) and ``inputRequests``
  (input_required), E 3.2;
- ``CreateTaskResult`` is flat: ``{"resultType": "task", ...Task}`` (E 3.3), read into the same
  :class:`~mcp_tasks_client.CreateTaskResult` (``.task``) as 2025-11-25's nested form;
- ``clientCapabilities`` never carries the legacy ``tasks`` key (E A-24);
- a tool's listing carries no ``execution.taskSupport`` (E 4): a tool read here says so
  (``Tool.task_support_listed``), and its ``task_support`` is UNKNOWN, never FORBIDDEN.
- the cacheable results carry ``ttlMs`` and ``cacheScope`` (SEP-2549), read leniently
  (``_hints.py``).

Decode errors name the wire keys (``$.ttlMs``), never the model's names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .. import models
from .._exceptions import DecodeError
from ..models import ClientCapabilities, CreateTaskResult, Task
from ._converter import WireConverter, _kind_of
from ._fast_task import task_decoder_2026
from ._hints import install_lenient
from .v2025_11_25 import install_common

if TYPE_CHECKING:
    from ..models import Tool

PROTOCOL_VERSION = "2026-07-28"

__all__ = ["PROTOCOL_VERSION", "converter", "decode_task", "strict_task"]

_WIRE_OF = {"ttl": "ttlMs", "pollInterval": "pollIntervalMs"}
"""The model's JSON key (as the generic hooks write it) -> the 2026-07-28 key."""
_MODEL_OF = {wire: model for model, wire in _WIRE_OF.items()}


def _object(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
    return value


def _wire_path(exc: DecodeError) -> DecodeError:
    """``exc`` with a renamed key at the head of its path written as on the wire."""
    for model, wire in _WIRE_OF.items():
        head = f"$.{model}"
        if exc.path == head or exc.path.startswith((head + ".", head + "[")):
            return type(exc)(f"$.{wire}" + exc.path[len(head) :], exc.problem, exc.value)
    return exc


def _task_hooks(conv: WireConverter) -> Callable[[Any], Task]:
    """Register the Task hooks (decoding: the fast path, else the strict one); return the
    strict one."""
    generic_structure = conv._attrs_structure_hook(Task)
    generic_unstructure = conv._attrs_unstructure_hook(Task)

    def strict(value: Any) -> Task:
        body = _object(value)
        legacy = {k: body[k] for k in _WIRE_OF if k in body}
        renamed = {_MODEL_OF.get(k, k): v for k, v in body.items() if k not in legacy}
        try:
            task: Task = generic_structure(renamed, Task)
        except DecodeError as exc:
            raise _wire_path(exc) from None
        return attrs.evolve(task, extra={**task.extra, **legacy}) if legacy else task

    def unstructure(task: Task) -> dict[str, Any]:
        fields = generic_unstructure(attrs.evolve(task, extra={}))
        out: dict[str, Any] = dict(task.extra)  # legacy keys included: nothing is dropped
        out.update({_WIRE_OF.get(k, k): v for k, v in fields.items()})
        return out

    decode = task_decoder_2026(strict)

    def structure(value: Any, _: Any) -> Task:
        return decode(value)

    conv.register_structure_hook(Task, structure)
    conv.register_unstructure_hook(Task, unstructure)
    return strict


def _create_task_hooks(conv: WireConverter) -> None:
    def structure(value: Any, _: Any) -> CreateTaskResult:
        body = _object(value)
        meta = body.get("_meta")
        if meta is not None and not isinstance(meta, dict):
            raise DecodeError("$._meta", f"expected an object, got {_kind_of(meta)}", meta)
        fields = {k: v for k, v in body.items() if k not in ("_meta", "resultType")}
        task = conv.structure(fields, Task)
        return CreateTaskResult(task, meta=meta)

    def unstructure(created: CreateTaskResult) -> dict[str, Any]:
        out: dict[str, Any] = {**conv.unstructure(created.task), **created.extra}
        out["resultType"] = "task"  # whatever a snapshot's extra said (tasks/get: complete)
        if created.meta is not None:
            out["_meta"] = dict(created.meta)
        return out

    conv.register_structure_hook(CreateTaskResult, structure)
    conv.register_unstructure_hook(CreateTaskResult, unstructure)


def _client_capabilities_hooks(conv: WireConverter) -> None:
    generic = conv._attrs_unstructure_hook(ClientCapabilities)

    def unstructure(capabilities: ClientCapabilities) -> dict[str, Any]:
        out: dict[str, Any] = generic(capabilities)
        out.pop("tasks", None)  # the 2025-11-25 receiver capability has no 2026 meaning
        return out

    conv.register_unstructure_hook(ClientCapabilities, unstructure)


def _tool_hooks(conv: WireConverter) -> None:
    """A tool read here says its listing does not carry task support (E 4): its
    ``task_support`` is then UNKNOWN, never the 2025-11-25 default FORBIDDEN. (Installed when
    the converter first meets a tool model: ``models.tools`` is imported by then.)"""
    tool_model = models.Tool
    generic_structure = conv._attrs_structure_hook(tool_model)

    def structure(value: Any, _: Any) -> Tool:
        tool: Tool = generic_structure(value, tool_model)
        return attrs.evolve(tool, task_support_listed=False)

    conv.register_structure_hook(tool_model, structure)


def _build() -> tuple[WireConverter, Callable[[Any], Task]]:
    conv = WireConverter()
    install_common(conv)
    strict = _task_hooks(conv)
    _create_task_hooks(conv)
    _client_capabilities_hooks(conv)
    conv.defer("mcp_tasks_client.models.tools", lambda: _tool_hooks(conv))
    install_lenient(conv)
    return conv, strict


converter, strict_task = _build()
"""``strict_task``: the Task hook without the fast path (what the fast path must agree with)."""


decode_task = task_decoder_2026(strict_task)
"""A Task snapshot: the fast path for the common shape, else the strict hook (its
DecodeError); the same as ``converter.decode(value, Task)``, without the converter's
dispatch. Shared by the process, so it keeps no timestamp cache: a driver makes its own decoder
(``task_decoder_2026(strict_task, cached=True)``) for its client's polls."""
