"""An agent host's view: several tasks in flight, each task's questions routed to the
conversation that started it, outcomes reported as they come.

    python3 examples/agent_host.py                           # 2025-11-25, bundled server
    python3 examples/agent_host.py --generation 2026-07-28   # 2026-07-28, bundled server
    python3 examples/agent_host.py --url URL [--generation ...]

Against the bundled 2025-11-25 server (mcp==1.30.0, tests/peers): two `confirm` tasks ask
their user to confirm (one conversation says yes, the other no) and one `summarize` task asks
the host's model for a completion. Against the bundled 2026-07-28 server (fastmcp 4.1.4): two
`confirm_delete` tasks ask the same way, and a third asks its user's name. Each question
reaches only the handler of its own task; the routing code is the same for both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    MCPTasksError,
    Poller,
    PollPolicy,
    TaskToolCall,
    ToolCall,
)
from mcp_tasks_client.models import (
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    SamplingCapability,
    TextContent,
)

REPO = Path(__file__).resolve().parent.parent


class Conversation:
    """Stands in for one chat with one user: it answers only its own task's questions (a
    yes/no field with its opinion, a text field with its name)."""

    def __init__(self, name: str, approves: bool) -> None:
        self.name = name
        self.approves = approves

    async def answer(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        fields = getattr(params, "requested_schema", {}).get("properties", {})
        if all(spec.get("type") == "boolean" for spec in fields.values()):
            print(f"  [{self.name}] asked: {params.message} -> {'yes' if self.approves else 'no'}")
            if not self.approves:
                return ElicitResult(ElicitAction.DECLINE)
            return ElicitResult(ElicitAction.ACCEPT, dict.fromkeys(fields, True))
        print(f"  [{self.name}] asked: {params.message} -> {self.name}")
        return ElicitResult(ElicitAction.ACCEPT, dict.fromkeys(fields, self.name))


async def host_model(ctx: InputContext, params: CreateMessageRequestParams) -> CreateMessageResult:
    prompt = " ".join(m.content.text for m in params.messages if isinstance(m.content, TextContent))
    print(f"  [model] asked to complete: {prompt!r}")
    return CreateMessageResult("assistant", TextContent(prompt.upper()[:40]), "host-model-1")


async def start_task(client: Client, call: TaskToolCall) -> CreateTaskResult:
    """Start ``call``; this example needs a task (its input is asked for mid-flight)."""
    started = await client.start(call)
    if not isinstance(started, CreateTaskResult):
        raise SystemExit(f"the server answered {call.name} inline; this example needs a task")
    return started


CALLS = {
    Generation.V2025_11_25: [
        ("deploy", ToolCall("confirm", {"text": "deploy to prod"})),
        ("wipe", ToolCall("confirm", {"text": "wipe the cache"})),
        ("digest", ToolCall("summarize", {"text": "release notes"})),
    ],
    Generation.V2026_07_28: [
        ("deploy", ToolCall("confirm_delete", {"filename": "prod.db"})),
        ("wipe", ToolCall("confirm_delete", {"filename": "cache"})),
        ("greet", ToolCall("test_tool_with_task")),
    ],
}
PEER = {Generation.V2025_11_25: "mcp1", Generation.V2026_07_28: "fastmcp4"}


async def main(url: str, generation: Generation) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}), sampling=SamplingCapability())
    async with Client(
        HttpTransport(url),
        generation=generation,
        client_info=Implementation("agent-host-example", "0.1"),
        capabilities=router.capabilities(),
    ) as client:
        router.attach(client)
        alice = Conversation("alice", approves=True)
        bob = Conversation("bob", approves=False)
        carol = Conversation("carol", approves=True)
        started = {
            label: await start_task(client, call.as_task()) for label, call in CALLS[generation]
        }
        deploy, wipe, third = started.values()
        router.on_elicitation(deploy.task.task_id, alice.answer)
        router.on_elicitation(wipe.task.task_id, bob.answer)
        router.on_sampling(third.task.task_id, host_model)  # whichever the third task asks
        router.on_elicitation(third.task.task_id, carol.answer)
        names = {created.task.task_id: label for label, created in started.items()}
        print(f"3 tasks started; polling with {PollPolicy(floor=0.1)}")
        async with Poller(client, PollPolicy(floor=0.1), inputs=router) as poller:
            async for task_id, ended in poller.as_completed(list(started.values()), deadline=60):
                router.forget(task_id)
                if isinstance(ended, Completed):
                    text = " ".join(
                        b.text for b in ended.result.content if isinstance(b, TextContent)
                    )
                    print(f"{names[task_id]}: completed -> {text}")
                else:
                    print(f"{names[task_id]}: {ended!r}")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an MCP endpoint; default: start the bundled server")
    parser.add_argument(
        "--generation",
        choices=[g.value for g in Generation],
        default=Generation.V2025_11_25.value,
        help="the protocol generation to speak (default: %(default)s)",
    )
    args = parser.parse_args()
    generation = Generation(args.generation)
    try:
        if args.url:
            trio.run(main, args.url, generation)
            return
        sys.path.insert(0, str(REPO / "tests"))
        from peers.harness import PEERS, peer_available, running_http_peer

        peer = PEERS[PEER[generation]]
        if not peer_available(peer):
            raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
        with running_http_peer(peer) as url:
            trio.run(main, url, generation)
    except MCPTasksError as exc:
        raise SystemExit(f"example failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
