"""A known gap (issue 12's pool, recorded as a strict xfail so that fixing it shows): over
HTTP, 2025-11-25 questions come on the stream of a blocking ``tasks/result``, so the Poller
holds one open per task that waits for input. Those held calls share the connection pool (64 by
default) with polls and are not counted against ``PollPolicy.max_in_flight``: with 64 or more
tasks waiting for answers, no poll gets a connection, and a task that has long completed is
not seen until a held call ends (here: never, within the wait's deadline)."""

from __future__ import annotations

import anyio
import pytest

from mcp_tasks_client import (
    Client,
    Completed,
    DeadlineExceeded,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Generation,
    HttpTransport,
    Implementation,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.testing import FaultServer

pytestmark = pytest.mark.anyio

G1 = Generation.V2025_11_25


@pytest.mark.xfail(
    strict=True,
    raises=DeadlineExceeded,
    reason="held tasks/result calls take every pooled connection: polls starve (known gap)",
)
async def test_a_completed_task_is_seen_while_more_tasks_than_the_pool_wait_for_input() -> None:
    server = FaultServer(G1)
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def unanswered(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    router.default_elicitation(unanswered)
    info = Implementation("pool-starvation", "0")
    with anyio.fail_after(60):
        async with server.http() as http:
            transport = HttpTransport(http.url)  # pool 64, the default
            async with Client(
                transport, generation=G1, client_info=info, capabilities=router.capabilities()
            ) as client:
                router.attach(client)
                asking = [await client.start(ToolCall("ask", {}).as_task()) for _ in range(70)]
                plain = await client.start(ToolCall("echo", {"text": "x"}).as_task())
                policy = PollPolicy(floor=0.05, initial=0.05, jitter=0.0)
                async with (
                    Poller(client, policy, inputs=router) as poller,
                    anyio.create_task_group() as group,
                ):
                    for ref in asking:
                        group.start_soon(poller.wait, ref)
                    held = 0
                    while held < 64:  # every pooled connection holds a tasks/result
                        await anyio.sleep(0.05)
                        held = sum(m.get("method") == "tasks/result" for m in server.received)
                    got: object
                    try:
                        got = await poller.wait(plain, deadline=10)
                    except DeadlineExceeded as exc:
                        got = exc
                    group.cancel_scope.cancel()
    if isinstance(got, DeadlineExceeded):
        raise got  # the gap: the completed task was never polled
    assert isinstance(got, Completed)
