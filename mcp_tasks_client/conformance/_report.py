"""What a probe reports: one verdict per rule, with what showed it.

May import: ``models``, ``_generation``, this package's ``rules``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

from .._generation import Generation
from .rules import Rule

__all__ = ["RANK", "ProbeReport", "ProbeVerdict", "RuleResult"]

JSON = dict[str, Any]


class ProbeVerdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    NOT_APPLICABLE = "not_applicable"


RANK = {ProbeVerdict.FAIL: 3, ProbeVerdict.WARN: 2, ProbeVerdict.PASS: 1}
"""How bad a verdict is: the worst one a rule got is its result."""


@attrs.frozen
class RuleResult:
    """The probe's verdict on one rule, with what showed it."""

    rule: Rule
    verdict: ProbeVerdict
    evidence: str
    """What the probe saw (or why the rule does not apply)."""
    messages: tuple[Mapping[str, Any], ...] = ()
    """The messages that broke it, as they arrived (at most three)."""
    exchanges: tuple[str, ...] = ()
    """For a pass: the exchanges on the wire that exercised the rule (message ids, HTTP
    exchanges), so every pass names what could have broken it."""

    @property
    def rule_id(self) -> str:
        return self.rule.id

    def to_json(self) -> JSON:
        """``{"rule", "level", "verdict", "evidence": {"detail", "messages", "exchanges"}}``."""
        return {
            "rule": self.rule.id,
            "level": self.rule.level.value,
            "verdict": self.verdict.value,
            "evidence": {
                "detail": self.evidence,
                "messages": [dict(m) for m in self.messages],
                "exchanges": list(self.exchanges),
            },
        }


@attrs.frozen
class ProbeReport:
    """One result per rule of ``generation``, in registry order."""

    generation: Generation
    results: tuple[RuleResult, ...]
    error: str | None = None
    """Why the probe could not connect at all (every rule is then not applicable)."""

    def result(self, rule_id: str) -> RuleResult:
        for r in self.results:
            if rule_id == r.rule.id or rule_id in r.rule.aliases:
                return r
        raise KeyError(rule_id)

    def verdicts(self) -> dict[str, ProbeVerdict]:
        """Rule id -> verdict."""
        return {r.rule.id: r.verdict for r in self.results}

    def with_verdict(self, *verdicts: ProbeVerdict) -> list[RuleResult]:
        return [r for r in self.results if r.verdict in verdicts]

    def to_json(self) -> list[JSON]:
        """One object per rule: ``rule``, ``level``, ``verdict``, ``evidence``."""
        return [r.to_json() for r in self.results]

    def render_table(self, *, width: int = 100) -> str:
        """A plain-text table: rule, level, verdict, evidence (cut to fit ``width``)."""
        rows = [("RULE", "LEVEL", "VERDICT", "EVIDENCE")]
        rows += [(r.rule.id, r.rule.level.value, r.verdict.value, r.evidence) for r in self.results]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        room = max(20, width - sum(widths) - 6)
        lines = []
        for row in rows:
            text = " ".join(row[3].split())
            if len(text) > room:
                text = text[: room - 3] + "..."
            cells = [row[i].ljust(widths[i]) for i in range(3)]
            lines.append("  ".join([*cells, text]).rstrip())
        if self.error is not None:
            lines.append(f"probe error: {self.error}")
        return "\n".join(lines) + "\n"
