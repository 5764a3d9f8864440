"""The ``hypothesis`` entry point: ``st.from_type(Task)`` draws valid wire values.

Installed with the package, pyproject declares :func:`setup_hypothesis` in the entry-point
group ``hypothesis``, which hypothesis runs when it is imported (never otherwise: a program
that does not import hypothesis pays nothing). It registers a resolver for every model class
of :mod:`mcp_tasks_client.models` (the wire types of both generations); the strategies of
``mcp_tasks_client.testing`` are imported and built only when ``st.from_type`` first asks
for one of them. Without the ``testing`` extra's dependencies it does nothing, and a
resolver that cannot import the strategies answers ``NotImplemented`` (hypothesis then
infers the type as it would have). ``HYPOTHESIS_NO_PLUGINS=1`` turns every such hook off.
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["setup_hypothesis"]

_done = False


def setup_hypothesis() -> None:
    """Register ``st.from_type`` strategies for the wire types (once; harmless to repeat)."""
    global _done
    if _done or importlib.util.find_spec("hypothesis") is None:
        return
    try:
        from hypothesis import strategies as st
    except ImportError:  # pragma: no cover - find_spec said it is there
        return
    from . import models

    for name in models.__all__:
        cls = getattr(models, name)
        if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
            st.register_type_strategy(cls, _resolve)
    _done = True


def _resolve(cls: type) -> Any:
    """The strategy of ``cls`` from ``mcp_tasks_client.testing``, built on first use."""
    try:
        from .testing._models import MODEL_STRATEGIES, strategy_for
    except ImportError:
        return NotImplemented
    if cls not in MODEL_STRATEGIES:
        return NotImplemented
    return strategy_for(cls)
