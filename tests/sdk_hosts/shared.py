"""What the SDK-host tests share: a real peer server that logs the requests it receives
(``tests/peers/request_log.py``), and reading that log from where a test began.

One server of each peer serves a whole host run (``conftest.py`` here: starting one takes
seconds, and a run holds a dozen tests); each test reads only the log lines written since it
began (:class:`RequestLogView`), so what one test sent never counts in another's checks. The
tests of one run go one after another (no xdist in a host's venv), and none leaves a client
behind that could still send."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
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

__all__ = ["RequestLogView", "confirming", "lines", "serving_logged", "text_of"]


@attrs.frozen
class RequestLogView:
    """A server's request log from one test's start on: its file, and the size it had then."""

    path: Path
    start: int

    @classmethod
    def from_now(cls, path: Path) -> RequestLogView:
        return cls(path, path.stat().st_size if path.exists() else 0)


@contextmanager
def serving_logged(name: str, where: Path) -> Iterator[tuple[str, Path]]:
    """The real peer ``name`` on 127.0.0.1, logging its requests into a file in ``where``:
    its URL and the log's path. The server is stopped by its own pid on exit."""
    log = where / f"requests-{name}.jsonl"
    before = os.environ.get(ENV)
    os.environ[ENV] = str(log)  # read once, by the server process at its start
    try:
        with running_http_peer(require_peer(name)) as url:
            if before is None:
                del os.environ[ENV]
            else:
                os.environ[ENV] = before
            yield url, log
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def lines(log: RequestLogView) -> list[dict[str, Any]]:
    """The log's entries since the view's test began, oldest first."""
    if not log.path.exists():
        return []
    with log.path.open("rb") as file:
        file.seek(log.start)
        text = file.read().decode("utf-8")
    return [json.loads(line) for line in text.splitlines()]


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
