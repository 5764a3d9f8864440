"""What the caller asks for, as values built before anything is sent.

A plain call and a task call are different types, so a type checker catches passing one where
the other belongs: ``Client.call_tool`` takes a :class:`ToolCall`, ``Client.start`` takes the
:class:`TaskToolCall` that only ``ToolCall.as_task`` makes. Nothing ever augments a call the
caller did not build with ``as_task`` (T:113-117).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from .models import JSONObject

__all__ = ["TaskToolCall", "ToolCall"]


@attrs.frozen
class ToolCall:
    """A plain ``tools/call``. ``meta`` goes to ``params._meta`` as given (a progressToken...)."""

    name: str
    arguments: JSONObject = attrs.field(factory=dict)
    meta: JSONObject | None = None

    def as_task(self, ttl: dt.timedelta | None = None) -> TaskToolCall:
        """This call, task-augmented; ``ttl`` is how long the server should keep the task
        (C-18, whole milliseconds; ``None`` leaves it to the server)."""
        return TaskToolCall(self, ttl)

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        if self.meta is not None:
            params["_meta"] = dict(self.meta)
        return params


def _positive_ttl(instance: object, attribute: object, value: dt.timedelta | None) -> None:
    if value is not None and value <= dt.timedelta(0):
        raise ValueError(f"ttl must be positive, got {value}")


@attrs.frozen
class TaskToolCall:
    """A ``tools/call`` with ``params.task`` (T:128): made by :meth:`ToolCall.as_task`."""

    call: ToolCall
    ttl: dt.timedelta | None = attrs.field(default=None, validator=_positive_ttl)

    @property
    def name(self) -> str:
        return self.call.name

    def params(self) -> dict[str, Any]:
        params = self.call.params()
        task: dict[str, Any] = {}
        if self.ttl is not None:
            task["ttl"] = max(1, round(self.ttl.total_seconds() * 1000))  # send integers
        params["task"] = task
        return params
