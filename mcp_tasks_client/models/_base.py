"""Building blocks shared by every model: JSON aliases, the ``Unset`` sentinel, field helpers.

The models are plain frozen attrs values. How they map to JSON lives in ``mcp_tasks_client._wire``;
the only wire hints kept here are field metadata: ``wire`` (the JSON key when it is not the
camelCase of the attribute name) and ``nullable`` (a required key whose value may be ``null``).
Every model that the spec lets grow has ``extra``: the unknown keys the server sent, kept so
nothing is lost and so forward-compatible fields survive a round trip.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, TypeAlias

import attrs

JSONValue: TypeAlias = Any
"""Any value ``json.loads`` can return."""

JSONObject: TypeAlias = Mapping[str, Any]
"""A JSON object."""


class Unset(enum.Enum):
    """A key the server left out, where leaving it out means something else than ``null``."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset.UNSET


def meta_field() -> Any:
    """The ``_meta`` object of a request, result or notification (``None`` when absent)."""
    return attrs.field(default=None, kw_only=True, metadata={"wire": "_meta"})


def extra_field() -> Any:
    """Unknown keys the server sent, preserved verbatim."""
    return attrs.field(factory=dict, kw_only=True, metadata={"extra": True})


def wire(name: str, **kwargs: Any) -> Any:
    """An attrs field whose JSON key is ``name``."""
    metadata = dict(kwargs.pop("metadata", {}))
    metadata["wire"] = name
    return attrs.field(metadata=metadata, **kwargs)
