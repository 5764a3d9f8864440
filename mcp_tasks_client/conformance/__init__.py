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

Hypothesis strategies of valid traffic, and mutators that break exactly one rule, are in
``mcp_tasks_client.testing`` (the ``testing`` extra).
"""

from __future__ import annotations

from .._io.base import HttpExchange
from .live import PROBE_CLIENT_INFO, ProbeReport, ProbeVerdict, RuleResult, probe
from .rules import RULES, Level, Rule, Verdict, render_markdown, rule, unique_rules
from .transport import ConformancePolicy, ConformanceViolation, ValidatingTransport
from .validator import Finding, Validator

__all__ = [
    "PROBE_CLIENT_INFO",
    "RULES",
    "ConformancePolicy",
    "ConformanceViolation",
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
    "probe",
    "render_markdown",
    "rule",
    "unique_rules",
]
