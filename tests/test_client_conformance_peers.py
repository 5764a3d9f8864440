"""The published client table (``docs/client-conformance.md``) is what the client-side suite
measures against the real clients (issue 23, item 3): each installed client is run through
every scenario of its generations, and its rows must be the published ones, deviations and
their evidence included. A client whose peer is missing fails under CI=true, else skips.

The default suite measures this library's rows only: the other four clients are their projects'
conformance, not ours, and take ten minutes of the 2-core budget. ``nox -s client-conformance``
sets MCP_TASKS_ALL_CLIENTS=1 and measures all five."""

from __future__ import annotations

import os

import pytest
from conftest import _in_ci
from peers.client_conformance import BEGIN, CLIENTS, DOC, END, TaskClient, measure, row_text

from mcp_tasks_client.conformance.clients import CLIENT_RULES, SCENARIOS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "trio"  # the clients run as processes: one backend is enough


def published() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return {line for line in table.splitlines() if line.startswith("| ") and "---" not in line}


MEASURED = (
    CLIENTS
    if os.environ.get("MCP_TASKS_ALL_CLIENTS") == "1"
    else tuple(c for c in CLIENTS if c.peer is None)
)


@pytest.mark.parametrize("client", MEASURED, ids=lambda c: c.peer or "library")
async def test_the_published_rows_are_what_the_suite_measures(client: TaskClient) -> None:
    if not client.available():
        msg = f"{client.name} is not installed; run `python tests/peers/install.py`"
        if _in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    rows = await measure(client)
    assert rows
    if client.peer is None:  # this library passes every scenario, each check citing its rule
        for name, _, check in rows:
            assert check.status == "SUCCESS", check
            assert check.rule in CLIENT_RULES
            assert check.rule in SCENARIOS[name].cites()
    measured = {row_text(client, n, g, c) for n, g, c in rows}
    mine = {line for line in published() if line.startswith(f"| {client.name} |")}
    assert measured == mine
