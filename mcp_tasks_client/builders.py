"""What the caller asks for, as values built before anything is sent."""

from __future__ import annotations

from typing import Any

import attrs

from .models import JSONObject

__all__ = ["ToolCall"]


@attrs.frozen
class ToolCall:
    """A plain ``tools/call``: never augmented with a task (T:113-117).

    ``meta`` goes to ``params._meta`` as given (a ``progressToken``, for instance).
    """

    name: str
    arguments: JSONObject = attrs.field(factory=dict)
    meta: JSONObject | None = None

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        if self.meta is not None:
            params["_meta"] = dict(self.meta)
        return params
