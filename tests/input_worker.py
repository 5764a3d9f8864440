"""A worker process of ``test_inputs_shared.py``: one task's input on a shared PostgreSQL journal.

``python input_worker.py MODE URL SCHEMA SERVER TASK_ID NAME GATE``, on trio, its client sending
``X-Worker: NAME`` (the peer's request log names who sent what), its InputRouter taking input
in the journal as NAME:

- ``wait-answering``: waits on the task with a Poller, with a handler for it;
- ``wait-silent``: waits on the task with a Poller, with no handler (its input is queued);
- ``serve``: no Poller; answers the journal's queued input (``InputRouter.answer_queued``) with
  a handler for the task, until the task's outcome is in the journal.

A handler answers once the file GATE exists (the test makes it when every worker it expects
to see the question has said so). One JSON line per InputEvent (``{"event": kind}``), then
``{"outcome": text}`` or ``{"answered": n}``.
"""

from __future__ import annotations

import json
import sys

import anyio

from mcp_tasks_client import (
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    client_for,
)
from mcp_tasks_client.journal_postgres import PostgresJournal
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
)
from mcp_tasks_client.outcomes import Completed

INFO = Implementation("input-worker", "0")


def _say(**line: object) -> None:
    print(json.dumps(line), flush=True)


async def main(
    mode: str, url: str, schema: str, server: str, task_id: str, name: str, gate: str
) -> None:
    async def _accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        with anyio.fail_after(60):
            while not await anyio.Path(gate).exists():
                await anyio.sleep(0.05)
        _say(handled=ctx.key)
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})

    async with PostgresJournal(url, schema=schema) as journal:
        entry = await journal.get(server, task_id)
        assert entry is not None
        router = InputRouter(
            elicitation=ElicitationCapability(form={}), journal=journal, worker=name
        )
        router.subscribe(lambda event: _say(event=event.kind.value))
        if mode != "wait-silent":
            router.on_elicitation(task_id, _accept)
        opened = client_for(
            entry, client_info=INFO, headers={"X-Worker": name}, capabilities=router.capabilities()
        )
        async with opened as client:
            router.attach(client)
            if mode == "serve":
                answered = 0
                with anyio.fail_after(60):
                    while True:
                        answered += await router.answer_queued()
                        now = await journal.get(server, task_id)
                        if now is None or not now.is_open:
                            break
                        await anyio.sleep(0.1)
                _say(answered=answered)
                return
            policy = PollPolicy(floor=0.1, jitter=0.0)
            async with Poller(client, policy, inputs=router, journal=journal) as poller:
                ref = await client.get_task(task_id)
                outcome = await poller.wait(ref, deadline=60)
            text = ""
            if isinstance(outcome, Completed):
                text = " ".join(
                    c.text for c in outcome.result.content if isinstance(c, TextContent)
                )
            _say(outcome=type(outcome).__name__, text=text)


if __name__ == "__main__":
    mode, url, schema, server, task_id, name, gate = sys.argv[1:8]
    anyio.run(main, mode, url, schema, server, task_id, name, gate, backend="trio")
