"""The seam between protocol generations.

Everything generation-specific that the client facade needs (the protocol version string, the
converter for wire shapes, the handshake) is reached through a :class:`Dialect`. The client is
written against this seam only, so the 2026-07-28 extension slots in as a second dialect
without touching caller code.
"""

from __future__ import annotations

import enum

import attrs

from ._wire import v2025_11_25
from ._wire._converter import WireConverter

__all__ = ["Dialect", "Generation", "dialect_for"]


class Generation(enum.Enum):
    """A protocol generation the caller chooses explicitly."""

    V2025_11_25 = "2025-11-25"
    """The 2025-11-25 specification with its experimental tasks (stateful, ``initialize``)."""

    @property
    def protocol_version(self) -> str:
        return self.value


@attrs.frozen
class Dialect:
    generation: Generation
    converter: WireConverter
    supported_versions: frozenset[str]


_DIALECTS = {
    Generation.V2025_11_25: Dialect(
        Generation.V2025_11_25,
        v2025_11_25.converter,
        frozenset({v2025_11_25.PROTOCOL_VERSION}),
    )
}


def dialect_for(generation: Generation) -> Dialect:
    return _DIALECTS[generation]
