"""The published table of ``explore`` findings (``docs/explore.md``) is what the explorer
measures against the bundled peers (issue 35, item 1). Three checks:

- (the default suite, no peer needed) the published table is the one rendered from
  ``tests/peers/explore_findings.json``, what the last ``explore_peers.py --write`` measured:
  nobody edited a row by hand, and every row's rules come with the sequence that broke them;
- (``nox -s explore``, ``MCP_TASKS_EXPLORE_PEERS=1``: minutes) each installed peer explored
  again with the same budget finds the published rules, MUST and SHOULD alike;
- (the same session) each published shortest sequence, replayed against a fresh peer, breaks
  the rules published beside it, so a reader can reproduce every finding in seconds.

A peer that is missing fails under CI=true, else skips. The explorer's own fast tests are
``tests/test_explore.py``."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from conftest import _in_ci
from peers.explore_peers import (
    FINDINGS,
    TARGETS,
    Target,
    finding,
    measure,
    published_table,
    render_findings,
    replayed,
    row,
    rules_cell,
)
from peers.harness import PEERS, peer_available

LIVE = pytest.mark.skipif(
    os.environ.get("MCP_TASKS_EXPLORE_PEERS") != "1",
    reason="the explorer against the peers runs in `nox -s explore`",
)


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the explorer runs its own loops in threads: one backend is enough


def findings() -> dict[str, Any]:
    data = json.loads(FINDINGS.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


BROKE = [t for t in TARGETS if findings()[t.peer]["steps"]]
"""The peers a published sequence broke a rule of."""


def published_rows() -> dict[str, str]:
    """The published rows by server label."""
    rows = [line for line in published_table().splitlines() if line.startswith("| ")]
    return {line.split("|")[1].strip(): line for line in rows[1:] if "---" not in line}


def needs(target: Target) -> None:
    if not peer_available(PEERS[target.peer]):
        msg = f"{target.peer} is not installed; run `python tests/peers/install.py`"
        if _in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


def test_the_published_table_is_rendered_from_the_measured_findings() -> None:
    measured = findings()
    assert published_table() == render_findings(measured)
    assert set(measured) == {t.peer for t in TARGETS}  # every peer measured
    for peer, found in measured.items():
        assert bool(found["rules"]) == bool(found["steps"]), peer  # rules come with a sequence


@LIVE
@pytest.mark.anyio
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.peer)
async def test_the_published_row_is_what_explore_measures(target: Target) -> None:
    needs(target)
    report = await measure(target)
    measured = rules_cell(row(target, finding(report)))
    assert measured == rules_cell(published_rows()[target.label]), report.to_json()


@LIVE
@pytest.mark.anyio
@pytest.mark.parametrize("target", BROKE, ids=lambda t: t.peer)
async def test_the_published_sequence_still_breaks_its_rules(target: Target) -> None:
    needs(target)
    found = findings()[target.peer]
    assert await replayed(target, found["steps"]) == found["rules"]
