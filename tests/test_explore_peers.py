"""The published table of ``explore`` findings (``docs/explore.md``) is what the explorer
measures against the bundled peers (issue 35, item 1). Three checks:

- (the default suite, no peer needed) the published table is the one rendered from
  ``tests/peers/explore_findings.json``, what the last ``explore_peers.py --write`` measured:
  nobody edited a row by hand, and every row's rules come with the sequence that broke them;
- (``nox -s explore``, ``MCP_TASKS_EXPLORE_PEERS=1``: minutes) each installed peer explored
  again with the same budget breaks a rule if and only if the published row has one, only
  rules published, and the SHOULD rules published (a run reports the first failure it
  shrinks: a peer with two published bugs may show either, and a new rule fails the check);
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
    broken_rules,
    measure,
    published_table,
    render_findings,
    replayed,
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


PUBLISHED = [
    pytest.param(t, entry, id=f"{t.peer}-{'-'.join(entry['rules'])}")
    for t in TARGETS
    for entry in findings()[t.peer]["found"]
]
"""Each published finding with its peer."""


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
        for entry in found["found"]:
            assert entry["rules"], peer
            assert entry["steps"], peer  # every rule comes with the sequence that broke it


@LIVE
@pytest.mark.anyio
@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.peer)
async def test_a_new_run_finds_what_is_published(target: Target) -> None:
    needs(target)
    published = findings()[target.peer]
    report = await measure(target)
    assert bool(report.rule_ids) == bool(published["found"]), report.to_json()
    assert set(report.rule_ids) <= set(broken_rules(published)), report.to_json()
    assert list(report.warned) == published["should"], report.to_json()


@LIVE
@pytest.mark.anyio
@pytest.mark.parametrize(("target", "entry"), PUBLISHED)
async def test_the_published_sequence_still_breaks_its_rules(
    target: Target, entry: dict[str, Any]
) -> None:
    needs(target)
    assert await replayed(target, entry["steps"], entry.get("known", [])) == entry["rules"]
