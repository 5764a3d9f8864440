"""Generation drivers. Job: what each protocol generation means, one module per generation;
the registry here is the only place a generation is mapped to its behaviour.

Each protocol generation is one module here behind the :class:`~.base.Driver` interface (see
``base.py`` for the rules of this package). Code outside this package gets a driver from
:func:`driver_for` and asks it; it never branches on a generation.

May import: this package's modules (and what they may import).
"""

from __future__ import annotations

from .._codec._converter import WireConverter
from .._exceptions import UsageError
from .._generation import Generation
from ..models import ClientCapabilities, Implementation
from .base import Driver, Link, StartAnswer, TaskFollow, TaskLink
from .v2025_11_25 import Driver2025
from .v2026_07_28 import Driver2026

__all__ = [
    "DRIVERS",
    "Driver",
    "Link",
    "StartAnswer",
    "TaskFollow",
    "TaskLink",
    "converter_of",
    "driver_class",
    "driver_for",
]

DRIVERS: dict[Generation, type[Driver]] = {
    Generation.V2025_11_25: Driver2025,
    Generation.V2026_07_28: Driver2026,
}
"""Every generation this library speaks, with its driver (the registry)."""


def driver_class(generation: Generation) -> type[Driver]:
    """The driver of ``generation``; UsageError for one this library does not speak (never a
    fall-through to another generation's behaviour)."""
    try:
        return DRIVERS[generation]
    except (KeyError, TypeError):
        known = ", ".join(g.value for g in DRIVERS)
        raise UsageError(f"no driver for generation {generation!r} (known: {known})") from None


def driver_for(
    generation: Generation,
    capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
    client_info: Implementation = Implementation("mcp-tasks-client", "0"),  # noqa: B008
) -> Driver:
    """A new driver of ``generation`` for a client declaring ``capabilities`` as ``client_info``."""
    return driver_class(generation)(capabilities, client_info)


def converter_of(generation: Generation) -> WireConverter:
    """The wire codec of ``generation``."""
    return driver_class(generation).converter
