"""Conformance: the rules a client can observe of a server, and a strict validator of them.

- :data:`RULES` (and :func:`rule`): every registered server rule by its id, with its level,
  generations, verdict and the text a user sees; ``docs/rules.md`` is rendered from it.
- :class:`Validator`: sans-I/O; fed the messages a client sends and receives (raw JSON-RPC
  objects), it returns :class:`Finding` s naming the rule each message broke.
- :class:`ValidatingTransport` and :class:`ConformancePolicy`: the seam into a live
  ``Client``; findings are recorded, made warnings, or fail the request they answer. Over
  HTTP it also shows the validator each exchange's :class:`HttpExchange` (status, content
  type, ``Mcp-Session-Id``).

- :func:`probe`: scripted checks against a live server (read-only unless the caller names
  tools safe to call), a :class:`ProbeReport` with one :class:`RuleResult` per rule (pass,
  fail, warn, not applicable, with evidence), as JSON (``to_json()``) or a table.

- :func:`explore` (the ``testing`` extra: hypothesis): stateful, shrinking testing of a live
  server; sequences of operations drawn, every answer judged by a model of what the spec lets
  a task do, a failure shrunk and given back as a replayable pytest file (:func:`replay`);
  :func:`server_machine` is its ``RuleBasedStateMachine`` for pytest. Imported on first use.

Hypothesis strategies of valid traffic, and mutators that break exactly one rule, are in
``mcp_tasks_client.testing`` (the ``testing`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._io.base import HttpExchange
from .live import PROBE_CLIENT_INFO, ProbeReport, ProbeVerdict, RuleResult, probe
from .rules import RULES, Level, Rule, Verdict, render_markdown, rule, unique_rules
from .transport import ConformancePolicy, ConformanceViolation, ValidatingTransport
from .validator import Finding, Validator

if TYPE_CHECKING:
    from ._explore import ExploreBudget, ExploreReport, explore, replay, server_machine
    from ._explore_model import Broken

_EXPLORE = frozenset(
    {"Broken", "ExploreBudget", "ExploreReport", "explore", "replay", "server_machine"}
)


def __getattr__(name: str) -> Any:
    """The explorer's names, imported on first use (they need hypothesis: ``testing``)."""
    if name in _EXPLORE:
        from . import _explore, _explore_model

        return getattr(_explore, name, None) or getattr(_explore_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROBE_CLIENT_INFO",
    "RULES",
    "Broken",
    "ConformancePolicy",
    "ConformanceViolation",
    "ExploreBudget",
    "ExploreReport",
    "Finding",
    "HttpExchange",
    "Level",
    "ProbeReport",
    "ProbeVerdict",
    "Rule",
    "RuleResult",
    "ValidatingTransport",
    "Validator",
    "Verdict",
    "explore",
    "probe",
    "render_markdown",
    "replay",
    "rule",
    "server_machine",
    "unique_rules",
]
