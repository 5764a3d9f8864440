"""What the SDK-host tests share: a real peer server of the test's own that logs the
requests it receives (``tests/peers/request_log.py``), and reading that log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import require_peer
from peers.harness import running_http_peer
from peers.request_log import ENV

from mcp_tasks_client import Client, Completed, InputContext, InputRouter
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    TextContent,
)

__all__ = ["confirming", "lines", "logged_peer", "text_of"]


@contextmanager
def logged_peer(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, Path]]:
    """The real peer ``name`` on 127.0.0.1, logging its requests: its URL and the log."""
    log = tmp_path / f"requests-{name}.jsonl"
    monkeypatch.setenv(ENV, str(log))
    with running_http_peer(require_peer(name)) as url:
        yield url, log


def lines(log: Path) -> list[dict[str, Any]]:
    """The log's entries, oldest first (none before the first request)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def text_of(outcome: object) -> str:
    """A Completed outcome's text blocks, joined."""
    assert isinstance(outcome, Completed), outcome
    return " ".join(b.text for b in outcome.result.content if isinstance(b, TextContent))


def confirming(answers: list[str]) -> Any:
    """The input router a TasksExtension makes for each task's client: it answers the
    ``confirm`` key of any task it is bound to, once."""

    def make(client: Client) -> InputRouter:
        router = InputRouter(elicitation=ElicitationCapability(form={}))

        async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            assert ctx.task_id is not None
            answers.append(ctx.task_id)
            return ElicitResult(ElicitAction.ACCEPT, {"confirm": True})

        router.default_elicitation(accept)
        return router

    return make
