"""Generation drivers. Job: what each protocol generation means, one module per generation;
the registry here is the only place a generation is mapped to its behaviour.

Each protocol generation is one module here behind the :class:`~.base.Driver` interface (see
``base.py`` for the rules of this package). Code outside this package gets a driver from
:func:`driver_for` and asks it; it never branches on a generation.

May import: this package's modules (and what they may import).

Theory of operation: the registry names each generation's driver by where it lives
(``module:Class``); a generation's module (its driver, its codec, its converter) is
imported the first time that generation is asked for, and the class then replaces its name in
the registry. A program speaking one generation never loads the other's (issue 34: ``mcp-tasks
status`` on 2025-11-25 loads no 2026-07-28 code). The lookup happens when a Client is made,
never per request: the Client keeps its driver.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

from .._exceptions import UsageError
from .._generation import Generation
from ..models import ClientCapabilities, Implementation
from .base import Driver, Link, StartAnswer, TaskFollow, TaskLink

if TYPE_CHECKING:
    from .._codec._converter import WireConverter

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


class DriverRegistry(MutableMapping[Generation, type[Driver]]):
    """Generation -> driver class, each class imported from its ``module:Class`` name on first
    lookup (then kept). Otherwise a plain mutable mapping: a test may add a generation's row
    (a class) and remove it."""

    def __init__(self, homes: dict[Generation, str]) -> None:
        self._rows: dict[Generation, type[Driver] | str] = dict(homes)

    def __getitem__(self, generation: Generation) -> type[Driver]:
        row = self._rows[generation]
        if isinstance(row, str):
            module, _, name = row.partition(":")
            driver: type[Driver] = getattr(importlib.import_module(module, __package__), name)
            self._rows[generation] = row = driver
        return row

    def __setitem__(self, generation: Generation, driver: type[Driver]) -> None:
        self._rows[generation] = driver

    def __delitem__(self, generation: Generation) -> None:
        del self._rows[generation]

    def __iter__(self) -> Iterator[Generation]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


DRIVERS = DriverRegistry(
    {
        Generation.V2025_11_25: ".v2025_11_25:Driver2025",
        Generation.V2026_07_28: ".v2026_07_28:Driver2026",
    }
)
"""Every generation this library speaks, with its driver (the registry); a generation's
module is imported when that generation is first asked for."""


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
