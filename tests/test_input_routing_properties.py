"""Routing of input requests by related-task id, under any interleaving (hypothesis).

A scripted in-memory server sends elicitations for several tasks in a drawn order, some of
them delivered again after their answer (a re-issued tasks/result may do that). Whatever the
order: each request reaches exactly its task's handler (or the default, or nobody), once; each
is answered exactly once; every answer to a task's request carries that task's related-task
meta (C-25); a re-delivery is neither handled nor answered again.
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_tasks_client import Client, Generation, InputContext, InputRouter
from mcp_tasks_client.models import (
    RELATED_TASK_META,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)
from mcp_tasks_client.transports import MemoryServerEnd, memory_transport_pair

TASKS = ["t0", "t1", "t2", "t3"]

requests_strategy = st.lists(
    st.tuples(st.sampled_from([*TASKS, None]), st.booleans()),  # (task or untagged, redeliver)
    min_size=1,
    max_size=12,
)


async def scenario(
    plan: list[tuple[str | None, bool]], handled_tasks: set[str], with_default: bool
) -> tuple[dict[str, list[Any]], dict[str | None, list[Any]]]:
    transport, server = memory_transport_pair()
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    calls: dict[str | None, list[Any]] = {}

    def handler_for(name: str | None) -> Any:
        async def handle(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            calls.setdefault(name, []).append((ctx.task_id, ctx.request_id))
            return ElicitResult(ElicitAction.ACCEPT, {"by": name or "default"})

        return handle

    for task in handled_tasks:
        router.on_elicitation(task, handler_for(task))
    if with_default:
        router.default_elicitation(handler_for(None))
    answers: dict[str, list[Any]] = {}

    async def serve(end: MemoryServerEnd) -> None:
        init = await end.receive()
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "router-test", "version": "0"},
        }
        await end.send({"jsonrpc": "2.0", "id": init["id"], "result": result})
        await end.receive()  # notifications/initialized
        for index, (task, redeliver) in enumerate(plan):
            params: dict[str, Any] = {"message": f"q{index}", "requestedSchema": {}}
            if task is not None:
                params["_meta"] = {RELATED_TASK_META: {"taskId": task}}
            request: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": f"r{index}",
                "method": "elicitation/create",
                "params": params,
            }
            for _ in range(2 if redeliver else 1):
                await end.send(request)
                answer = await end.receive()
                answers.setdefault(answer["id"], []).append(answer)
                if redeliver:
                    break  # the copy sent next must not be answered: checked below
            if redeliver:
                await end.send(request)
        # A last request proves every earlier copy was read (and not answered).
        await end.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
        answers.setdefault("last", []).append(await end.receive())

    client = Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=Implementation("t", "0"),
        capabilities=router.capabilities(),
    )
    router.attach(client)  # before connecting: no request may arrive unrouted
    done = anyio.Event()

    async def run_server() -> None:
        await serve(server)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_server)
        with anyio.fail_after(10):
            async with client:
                await done.wait()
        tg.cancel_scope.cancel()
    return answers, calls


@settings(max_examples=60, deadline=None)
@given(
    plan=requests_strategy,
    handled=st.sets(st.sampled_from(TASKS)),
    with_default=st.booleans(),
    backend=st.sampled_from(["trio", "asyncio"]),
)
def test_every_request_reaches_its_tasks_handler_once_and_is_answered_once(
    plan: list[tuple[str | None, bool]], handled: set[str], with_default: bool, backend: str
) -> None:
    answers, calls = anyio.run(scenario, plan, handled, with_default, backend=backend)
    assert answers.pop("last")[0]["result"] == {}
    assert set(answers) == {f"r{i}" for i in range(len(plan))}
    for index, (task, _) in enumerate(plan):
        (answer,) = answers[f"r{index}"]  # answered exactly once, re-delivery included
        owner = task if task in handled else (None if with_default else "nobody")
        if owner == "nobody":
            assert answer["error"]["code"] == -32601
            assert "no handler registered" in answer["error"]["message"]
            continue
        assert answer["result"]["content"] == {"by": owner or "default"}
        if task is not None:
            assert answer["result"]["_meta"][RELATED_TASK_META] == {"taskId": task}
        else:
            assert "_meta" not in answer["result"]
    expected: dict[str | None, list[Any]] = {}
    for index, (task, _) in enumerate(plan):
        owner = task if task in handled else (None if with_default else "nobody")
        if owner != "nobody":
            expected.setdefault(owner, []).append((task, f"r{index}"))
    assert calls == expected  # each handler saw exactly its own requests, once, in order


def test_forgetting_a_task_drops_its_handlers_and_records() -> None:
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def handle(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.DECLINE)  # pragma: no cover - never called

    router.on_elicitation("t0", handle).on_elicitation("t1", handle)
    assert router.book.arrived("t0", "r1", "elicitation/create")
    router.book.answered("t0", "r1")
    assert router.book.arrived("t1", "r2", "elicitation/create")
    router.forget("t0")
    assert router.book.state("t0", "r1") is None
    assert router.book.pending("t1") == [("r2", "elicitation/create")]
    assert router.handlers.keys("elicitation/create") == {"t1"}
