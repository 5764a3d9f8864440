"""An asyncio agent host: each task's questions reach the conversation that started it, and
each task's outcome its own handler, keyed by the task's id.

    python3 examples/asyncio_host.py                    # the bundled server, over stdio
    python3 examples/asyncio_host.py --stdio "CMD ARGS" # a 2025-11-25 server of yours

``examples/agent_host.py`` runs on trio over HTTP and registers a task's handler once
``start()`` has returned. This host runs under ``asyncio.run`` and talks to a child process
over stdio, where a server may ask before ``start()`` even returns: the bundled server's
``immediate_ask`` elicits the moment it has created its task. So each conversation's handler
is bound with ``start(call, on_created=router.binding(...))``, which the client calls with the
new task's id as soon as it reads the answer naming it, before it reads the next message.

Every conversation is an ``asyncio.Task`` with an inbox (``asyncio.Queue``): the elicitation
handler of its tasks posts the question with an ``asyncio.Future`` and awaits it; the
conversation (standing in for a person) resolves it. Outcomes go to a per-task callback.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from pathlib import Path

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    InputContext,
    InputRouter,
    MCPTasksError,
    Outcome,
    Poller,
    PollPolicy,
    StdioTransport,
    ToolCall,
)
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
)

REPO = Path(__file__).resolve().parent.parent


class Conversation:
    """One user's chat. Questions arrive in its inbox; it answers yes or no."""

    def __init__(self, name: str, approves: bool) -> None:
        self.name = name
        self.approves = approves
        self.inbox: asyncio.Queue[tuple[str, asyncio.Future[bool]]] = asyncio.Queue()

    async def run(self) -> None:
        """The user's side: read each question, think, answer."""
        while True:
            question, reply = await self.inbox.get()
            await asyncio.sleep(0.05)
            print(f"  [{self.name}] asked {question!r} -> {'yes' if self.approves else 'no'}")
            reply.set_result(self.approves)

    async def ask(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        """The elicitation handler of this conversation's tasks (bound per task id)."""
        reply: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        await self.inbox.put((params.message, reply))
        if not await reply:
            return ElicitResult(ElicitAction.DECLINE)
        fields: dict[str, object] = {}
        if isinstance(params, ElicitRequestFormParams):
            fields = params.requested_schema.get("properties") or {}
        return ElicitResult(ElicitAction.ACCEPT, dict.fromkeys(fields, True))

    def finished(self, task_id: str, ended: Outcome | MCPTasksError) -> None:
        """The outcome handler of this conversation's tasks."""
        if isinstance(ended, Completed):
            text = " ".join(b.text for b in ended.result.content if isinstance(b, TextContent))
            print(f"{self.name}: task done -> {text}")
        else:
            print(f"{self.name}: task ended -> {ended!r}")


JOBS = [
    ("alice", True, ToolCall("immediate_ask")),  # asks the moment its task exists
    ("bob", False, ToolCall("confirm", {"text": "drop the table"})),
    ("carol", True, ToolCall("confirm", {"text": "ship v2"})),
]


async def main(command: list[str]) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with Client(
        StdioTransport(command),
        generation=Generation.V2025_11_25,
        client_info=Implementation("asyncio-host-example", "0.1"),
        capabilities=router.capabilities(),  # elicitation, and nothing else
    ) as client:
        router.attach(client)
        people = {name: Conversation(name, approves) for name, approves, _ in JOBS}
        users = [asyncio.create_task(person.run()) for person in people.values()]
        on_outcome = {}
        tasks: list[CreateTaskResult] = []
        for name, _, call in JOBS:
            person = people[name]
            started = await client.start(
                call.as_task(), on_created=router.binding(elicitation=person.ask)
            )
            assert isinstance(started, CreateTaskResult)  # 2025-11-25: always a task
            on_outcome[started.task.task_id] = person.finished
            tasks.append(started)
        print(f"{len(tasks)} tasks started, each bound to its conversation")
        async with Poller(client, PollPolicy(floor=0.1), inputs=router) as poller:
            async for task_id, ended in poller.as_completed(tasks, deadline=60):
                router.forget(task_id)
                on_outcome.pop(task_id)(task_id, ended)
        for user in users:
            user.cancel()
        await asyncio.gather(*users, return_exceptions=True)


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stdio",
        metavar='"CMD ARGS"',
        help="a 2025-11-25 MCP server to start over stdio; default: the bundled one",
    )
    args = parser.parse_args()
    if args.stdio:
        command = shlex.split(args.stdio)
    else:
        sys.path.insert(0, str(REPO / "tests"))
        from peers.harness import PEERS, peer_available, stdio_command

        if not peer_available(PEERS["mcp1"]):
            raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
        command = stdio_command(PEERS["mcp1"])
    try:
        asyncio.run(main(command))
    except MCPTasksError as exc:
        raise SystemExit(f"example failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
