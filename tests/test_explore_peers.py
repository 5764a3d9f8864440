"""The published table of ``explore`` findings (``docs/explore.md``) is what the explorer
measures against the bundled peers (issue 35, item 1): each installed peer is explored again
with the same budget and the rules it finds must be the published ones (the sequence shown
beside them is not compared: on a live server, timing decides which of several equally short
sequences the shrinking keeps). Runs in ``nox -s explore``
(``MCP_TASKS_EXPLORE_PEERS=1``: about six minutes); a peer that is missing fails under
CI=true, else skips. The default suite's smoke test is ``tests/test_explore.py``."""

from __future__ import annotations

import os

import pytest
from conftest import _in_ci
from peers.explore_peers import BEGIN, DOC, END, TARGETS, Target, measure, row, rules_cell
from peers.harness import PEERS, peer_available

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        os.environ.get("MCP_TASKS_EXPLORE_PEERS") != "1",
        reason="the explorer against the peers runs in `nox -s explore`",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the explorer runs its own loops in threads: one backend is enough


def published() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return {line for line in table.splitlines() if line.startswith("| ") and "---" not in line}


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.peer)
async def test_the_published_row_is_what_explore_measures(target: Target) -> None:
    if not peer_available(PEERS[target.peer]):
        msg = f"{target.peer} is not installed; run `python tests/peers/install.py`"
        if _in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    report = await measure(target)
    assert rules_cell(row(target, report)) in {rules_cell(line) for line in published()}
