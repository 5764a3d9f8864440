"""Building blocks shared by every model: JSON aliases, the ``Unset`` sentinel, field helpers.

The models are plain frozen attrs values. How they map to JSON lives in ``mcp_tasks_client._codec``;
the only wire hints kept here are field metadata: ``wire`` (the JSON key when it is not the
camelCase of the attribute name), ``nullable`` (a required key whose value may be ``null``) and
``range`` (the inclusive ``(low, high)`` bounds of a numeric field, see :func:`ranged`).
Every model that the spec lets grow has ``extra``: the unknown keys the server sent, kept so
nothing is lost and so forward-compatible fields survive a round trip.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

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


class CacheScope(enum.Enum):
    """Who may reuse a cacheable 2026-07-28 result (``cacheScope``, SEP-2549): anyone
    (``PUBLIC``) or only the authorization context it was fetched in (``PRIVATE``)."""

    PUBLIC = "public"
    PRIVATE = "private"


def wire(name: str, **kwargs: Any) -> Any:
    """An attrs field whose JSON key is ``name``."""
    metadata = dict(kwargs.pop("metadata", {}))
    metadata["wire"] = name
    return attrs.field(metadata=metadata, **kwargs)


MAX_DURATION_MS: Final = 10**15
"""The largest duration in milliseconds the client accepts from a server (``ttl``,
``pollInterval``): 10**15 ms, about 31,700 years.

Why this bound: the library turns these values into ``datetime.timedelta(milliseconds=x)``
(whose limit is 999,999,999 days, about 8.6e16 ms) and into seconds with ``x / 1000.0``
(whose limit is the float maximum, about 1.8e308). Both are safe up to here with a wide margin,
and no real task lives, nor polls, anywhere near this long. Adding such a duration to a
timestamp can still leave the years ``datetime`` can hold (1 to 9999): that arithmetic belongs
to whoever does it (the engine), not to the codec.
"""

RANGE: Final = "range"
"""The field metadata key holding a numeric field's inclusive ``(low, high)`` bounds."""


def ranged(low: int, high: int, **kwargs: Any) -> Any:
    """An attrs field whose numbers must lie in ``low <= x <= high`` when decoded.

    The codec refuses a server value outside the bounds with a DecodeError naming the field,
    so no later arithmetic on it (a timedelta, a division) can raise. ``None`` and ``UNSET``
    are not numbers and are not bounded. Encoding is unchanged: the bounds guard what the
    client reads, not what its caller asks it to send.
    """
    metadata = dict(kwargs.pop("metadata", {}))
    metadata[RANGE] = (low, high)
    return attrs.field(metadata=metadata, **kwargs)
