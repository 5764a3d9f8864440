"""Conformance: the rules a client can observe of a server, and a strict validator of them.

- :data:`RULES` (and :func:`rule`): every registered server rule by its id, with its level,
  generations, verdict and the text a user sees; ``docs/rules.md`` is rendered from it.
- :class:`Validator`: sans-I/O; fed the messages a client sends and receives (raw JSON-RPC
  objects), it returns :class:`Finding` s naming the rule each message broke.
- :class:`ValidatingTransport` and :class:`ConformancePolicy`: the seam into a live
  ``Client``; findings are recorded, made warnings, or fail the request they answer.

Hypothesis strategies of valid traffic, and mutators that break exactly one rule, are in
``mcp_tasks_client.testing`` (the ``testing`` extra).
"""

from __future__ import annotations

from .rules import RULES, Level, Rule, Verdict, render_markdown, rule, unique_rules
from .transport import ConformancePolicy, ConformanceViolation, ValidatingTransport
from .validator import Finding, Validator

__all__ = [
    "RULES",
    "ConformancePolicy",
    "ConformanceViolation",
    "Finding",
    "Level",
    "Rule",
    "ValidatingTransport",
    "Validator",
    "Verdict",
    "render_markdown",
    "rule",
    "unique_rules",
]
