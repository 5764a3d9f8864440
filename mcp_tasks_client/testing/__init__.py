"""Hypothesis strategies for property tests of MCP task traffic (the ``testing`` extra).

- Valid instances of every wire model of both generations (:data:`MODEL_STRATEGIES`,
  :func:`strategy_for`, one function per model: :func:`tasks`, :func:`create_task_results`,
  :func:`detailed_tasks`, ...), as the codec reads and writes them.
- Raw JSON and near misses for robustness tests (:func:`json_values`, :func:`mutated`,
  :func:`wild_numbers`, :func:`timestamp_like_strings`).
- Whole conversations a conforming server could have with a client (:func:`valid_traffic`),
  legal status sequences (:func:`status_sequences`), and :func:`mutations`: the same traffic
  with exactly one server rule broken, as ``(rule_id, traffic)``, for the strict
  :class:`~mcp_tasks_client.conformance.Validator` or your own client.

Importing this module needs ``hypothesis`` (``pip install mcp-tasks-client[testing]``);
``import mcp_tasks_client`` never imports it.
"""

from __future__ import annotations

from ._models import *  # noqa: F403 - the model strategies are this module's API
from ._models import __all__ as _model_names
from ._traffic import (
    MUTATORS,
    Traffic,
    mutations,
    status_sequences,
    valid_traffic,
)

__all__ = [
    *_model_names,
    "MUTATORS",
    "Traffic",
    "mutations",
    "status_sequences",
    "valid_traffic",
]
