"""The protocol generations a caller chooses between (explicitly: never guessed).

What each one means is the business of its driver (``mcp_tasks_client._drivers``, the one
registry that maps a generation to its behaviour); nothing else branches on a generation.
"""

from __future__ import annotations

import enum

__all__ = ["Generation"]


class Generation(enum.Enum):
    """A protocol generation the caller chooses explicitly."""

    V2025_11_25 = "2025-11-25"
    """The 2025-11-25 specification with its experimental tasks (stateful, ``initialize``)."""
    V2026_07_28 = "2026-07-28"
    """The stateless 2026-07-28 core with the ``io.modelcontextprotocol/tasks`` extension."""

    @property
    def protocol_version(self) -> str:
        return self.value
