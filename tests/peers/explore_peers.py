"""``explore`` against the bundled peer servers: the published table of findings.

``python tests/peers/explore_peers.py [--write]`` starts each task-capable peer over HTTP on
127.0.0.1 (installed by ``install.py``; one that is missing is left out with a note),
explores it in its generation with the tools its probe test names safe (:data:`TARGETS`),
within :data:`BUDGET`, prints the Markdown table and with ``--write`` keeps what it measured
in :data:`FINDINGS`: a run reports the first failure it shrinks, so each peer gets up to
:data:`ROUNDS` runs, each not judging the rules the ones before found, and a finding (an
earlier one, or a new one) is kept only while its sequence, replayed, still breaks its
rules; and it puts the table rendered from it into ``docs/explore.md`` between its markers.
``nox -s explore`` runs ``tests/test_explore_peers.py`` (``MCP_TASKS_EXPLORE_PEERS=1``): a
new run finds only published rules, and each published sequence still breaks its rules; the
default suite checks the table is the one rendered from :data:`FINDINGS`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from mcp_tasks_client import Generation  # noqa: E402
from mcp_tasks_client.conformance import (  # noqa: E402
    ExploreBudget,
    ExploreReport,
    explore,
    replay,
)
from peers.harness import PEERS, peer_available, running_http_peer  # noqa: E402

DOC = REPO / "docs" / "explore.md"
FINDINGS = HERE / "explore_findings.json"
"""What the last ``--write`` measured, by peer: the rules broken, the shortest sequence (as
``conformance.replay`` takes it), the SHOULD rules broken; the docs table is rendered from it."""
BEGIN, END = "<!-- table: begin -->", "<!-- table: end -->"
G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
BUDGET = ExploreBudget(
    examples=50, steps=8, wall_time=120, request_timeout=20, result_wait=2, sessions=2
)
"""What each peer gets (fits CI: two minutes each at most, then the shrinking of a failure):
two sessions at once, each drawing its own operations."""

_MCP1_SAFE: Mapping[str, Mapping[str, Any]] = {
    "slow_echo": {"text": "hi", "seconds": 0.3},
    "need_task": {"text": "x", "seconds": 0.2},
    "fail": {},
}


@attrs.frozen
class Target:
    label: str
    peer: str
    generation: Generation
    safe_tools: Mapping[str, Mapping[str, Any]]


TARGETS = (
    Target("mcp 1.30 (Python SDK)", "mcp1", G1, _MCP1_SAFE),
    Target("TypeScript SDK 1.32", "ts1", G1, _MCP1_SAFE),
    Target("fastmcp 3.4.11 (docket in memory)", "fastmcp3", G1, _MCP1_SAFE),
    Target(
        "fastmcp 4.1.4 (fastmcp_tasks)",
        "fastmcp4",
        G2,
        {"slow_compute": {"seconds": 0.3}, "failing_job": {}, "greet": {}},
    ),
)


ROUNDS = 3
"""Runs of ``--write`` per peer: each round does not judge the rules the rounds before found,
so it finds the next failure (a run reports one)."""


async def measure(target: Target, known: Sequence[str] = ()) -> ExploreReport:
    with running_http_peer(PEERS[target.peer]) as url:
        return await explore(
            url, target.generation, safe_tools=target.safe_tools, budget=BUDGET, known=known
        )


async def measure_rounds(target: Target) -> list[ExploreReport]:
    """Up to :data:`ROUNDS` runs, each not judging what the ones before found; the last
    found nothing or was the last round."""
    reports: list[ExploreReport] = []
    known: list[str] = []
    for _ in range(ROUNDS):
        report = await measure(target, known)
        reports.append(report)
        if report.ok:
            break
        known += report.rule_ids
    return reports


async def replayed(target: Target, steps: Sequence[Any], known: Sequence[str] = ()) -> list[str]:
    """The rules ``steps`` (a published shortest sequence, found with ``known`` not judged)
    break on a fresh ``target``."""
    with running_http_peer(PEERS[target.peer]) as url:
        broken = await anyio.to_thread.run_sync(
            lambda: replay(url, target.generation, steps, safe_tools=target.safe_tools, known=known)
        )
    return sorted({b.rule for b in broken})


def finding(
    reports: Sequence[ExploreReport], kept: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """What the table shows of one peer (``FINDINGS`` keeps it by peer): ``found``, each
    failure with its rules, its shortest sequence and the rules not judged when it was found
    (``kept``: earlier ones whose sequence still breaks their rules, then each of these
    rounds' whose rules are new), and the SHOULD rules these rounds broke."""
    found = [{"known": [], **entry} for entry in kept]  # "known": written since (none before)
    known: list[str] = []
    for report in reports:
        rules = list(report.rule_ids)
        if rules and all(entry["rules"] != rules for entry in found):
            steps = [[name, dict(args)] for name, args in report.steps]
            found.append({"rules": rules, "steps": steps, "known": list(known)})
        known += rules
    should = sorted({rule for report in reports for rule in report.warned})
    return {"found": found, "should": should, "examples": sum(r.examples for r in reports)}


def broken_rules(found: Mapping[str, Any]) -> list[str]:
    """Every rule a peer's published findings broke."""
    return sorted({rule for entry in found["found"] for rule in entry["rules"]})


def row(target: Target, found: Mapping[str, Any]) -> str:
    rules = ", ".join(f"`{r}`" for r in broken_rules(found)) or "none"
    warned = ", ".join(f"`{r}`" for r in found["should"]) or "none"
    entries = found["found"]
    sequences = [" → ".join(_step(name, args) for name, args in e["steps"]) for e in entries]
    if len(entries) > 1:  # each sequence with the rules it broke
        sequences = [
            f"{', '.join(f'`{r}`' for r in e['rules'])}: {seq}"
            for e, seq in zip(entries, sequences, strict=True)
        ]
    cells = (
        target.label,
        target.generation.value,
        ", ".join(sorted(target.safe_tools)),
        rules,
        "; ".join(sequences),
        warned,
    )
    return "| " + " | ".join(cells) + " |"


def _step(name: str, args: Mapping[str, Any]) -> str:
    where = f" (session {args['session'] + 1})" if args.get("session") else ""
    if name == "start":
        return f"start `{args['tool']}`{where}"
    if name in ("poll", "fetch", "cancel", "answer", "race"):
        return f"{name} {'an unknown id' if args.get('unknown') else 'it'}{where}"
    if name == "wait":
        return f"wait {args['ms']} ms"
    return f"{name}{where}"


def render(rows: Sequence[str]) -> str:
    head = "| Server | Version | Safe tools | Rules broken | Shortest sequence | SHOULD broken |\n"
    return head + "|---|---|---|---|---|---|\n" + "".join(r + "\n" for r in rows)


def render_findings(findings: Mapping[str, Mapping[str, Any]]) -> str:
    """The table of ``findings`` (by peer), in the order of :data:`TARGETS`."""
    return render([row(t, findings[t.peer]) for t in TARGETS if t.peer in findings])


def published_table() -> str:
    return DOC.read_text(encoding="utf-8").split(BEGIN, 1)[1].split(END, 1)[0].lstrip("\n")


def write(findings: Mapping[str, Mapping[str, Any]]) -> None:
    FINDINGS.write_text(json.dumps(findings, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{render_findings(findings)}{END}{tail}", encoding="utf-8")


async def main_async(args: argparse.Namespace) -> int:
    before = json.loads(FINDINGS.read_text(encoding="utf-8")) if FINDINGS.exists() else {}
    findings: dict[str, dict[str, Any]] = {}
    for target in TARGETS:
        if not peer_available(PEERS[target.peer]):
            print(f"{target.label}: not installed; run tests/peers/install.py", file=sys.stderr)
            continue
        reports = await measure_rounds(target)
        for report in reports:
            print(report.to_json(), file=sys.stderr)
        kept = []
        if args.write:  # earlier findings stay while their sequence still breaks their rules
            for entry in before.get(target.peer, {}).get("found", []):
                known = entry.get("known", [])
                if await replayed(target, entry["steps"], known) == entry["rules"]:
                    kept.append(entry)
                else:
                    print(f"{target.label}: {entry['rules']} no longer replays", file=sys.stderr)
        measured = finding(reports, kept)
        if args.write:  # a new finding is published only if its sequence replays
            fresh = measured["found"][len(kept) :]
            for entry in fresh:
                if await replayed(target, entry["steps"], entry["known"]) != entry["rules"]:
                    print(f"{target.label}: {entry['rules']} does not replay", file=sys.stderr)
                    measured["found"].remove(entry)
        findings[target.peer] = measured
    print(render_findings(findings))
    if args.write:
        write(findings)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true", help="update docs/explore.md")
    return anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
