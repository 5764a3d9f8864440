"""Typed models to and from their wire JSON, for either generation, without a Client.

For callers who build or read protocol values by hand (tests, proxies, a server of their own):
``encode(model, Generation.V2025_11_25)`` is the JSON that generation writes for it (plain
``dict``/``list``/scalars, ready for ``json.dumps``); ``decode(raw, Task, generation)`` reads
it back, strictly, with a DecodeError naming the JSON path of the first problem. A connected
Client does the same with ``client.encode`` / ``client.decode`` for its own generation.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ._drivers import converter_of
from ._generation import Generation

__all__ = ["decode", "encode"]

T = TypeVar("T")


def encode(value: Any, generation: Generation) -> Any:
    """``value`` (any model of ``mcp_tasks_client``) as ``generation``'s wire JSON."""
    return converter_of(generation).encode(value)


def decode(raw: Any, cls: type[T], generation: Generation) -> T:
    """``raw`` (parsed JSON) as ``cls``, read the way ``generation`` writes it."""
    return converter_of(generation).decode(raw, cls)
