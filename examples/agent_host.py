"""An agent host's view: several tasks in flight, each task's questions routed to the
conversation that started it, outcomes reported as they come.

    python3 examples/agent_host.py             # starts the bundled peer server itself
    python3 examples/agent_host.py --url URL   # or talk to a 2025-11-25 tasks server

Against the bundled server (mcp==1.30.0, tests/peers): two `confirm` tasks ask their user to
confirm (one conversation says yes, the other no) and one `summarize` task asks the host's
model for a completion. Each question reaches only the handler of its own task.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from mcp_tasks_client import (
    Client,
    Completed,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Generation,
    HttpTransport,
    Implementation,
    InputContext,
    InputRouter,
    MCPTasksError,
    Poller,
    PollPolicy,
    SamplingCapability,
    TaskToolCall,
    TextContent,
    ToolCall,
)

REPO = Path(__file__).resolve().parent.parent


class Conversation:
    """Stands in for one chat with one user: it answers only its own task's questions."""

    def __init__(self, name: str, approves: bool) -> None:
        self.name = name
        self.approves = approves

    async def confirm(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        print(f"  [{self.name}] asked: {params.message} -> {'yes' if self.approves else 'no'}")
        if self.approves:
            return ElicitResult(ElicitAction.ACCEPT, {"ok": True})
        return ElicitResult(ElicitAction.DECLINE)


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


async def main(url: str) -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}), sampling=SamplingCapability())
    async with Client(
        HttpTransport(url),
        generation=Generation.V2025_11_25,
        client_info=Implementation("agent-host-example", "0.1"),
        capabilities=router.capabilities(),
    ) as client:
        router.attach(client)
        alice = Conversation("alice", approves=True)
        bob = Conversation("bob", approves=False)
        deploy, wipe, digest = [
            await start_task(client, ToolCall(tool, {"text": text}).as_task())
            for tool, text in [
                ("confirm", "deploy to prod"),
                ("confirm", "wipe the cache"),
                ("summarize", "release notes"),
            ]
        ]
        router.on_elicitation(deploy.task.task_id, alice.confirm)
        router.on_elicitation(wipe.task.task_id, bob.confirm)
        router.on_sampling(digest.task.task_id, host_model)
        names = {
            deploy.task.task_id: "deploy",
            wipe.task.task_id: "wipe",
            digest.task.task_id: "digest",
        }
        print(f"3 tasks started; polling with {PollPolicy(floor=0.1)}")
        async with Poller(client, PollPolicy(floor=0.1), inputs=router) as poller:
            async for task_id, ended in poller.as_completed([deploy, wipe, digest], deadline=60):
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
    args = parser.parse_args()
    try:
        if args.url:
            trio.run(main, args.url)
            return
        sys.path.insert(0, str(REPO / "tests"))
        from peers.harness import PEERS, peer_available, running_http_peer

        peer = PEERS["mcp1"]
        if not peer_available(peer):
            raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
        with running_http_peer(peer) as url:
            trio.run(main, url)
    except MCPTasksError as exc:
        raise SystemExit(f"example failed: {type(exc).__name__}: {exc}") from exc


if __name__ == "__main__":
    run()
