"""Related task ids against the real peers: a server MAY ignore the draft's ``_meta`` key
(agents-wg PR 28), and these do: a call naming an earlier task of theirs runs as any other.

mcp 1.30 (2025-11-25, over HTTP) and fastmcp 4.1.4 (2026-07-28 with the tasks extension): the
first task runs to its end, the second names it with ``related_to`` and is created and
completed; what was sent carries the ids (recorded on the wire, beside the generation's own
``_meta``).
"""

from __future__ import annotations

import anyio
import pytest
from recording import RecordingTransport
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.builders import RELATED_TASK_IDS
from mcp_tasks_client.models import Implementation, JSONRPCRequest

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
CALLS = {
    Generation.V2025_11_25: ("mcp1_http_url", ToolCall("slow_echo", {"text": "a", "seconds": 0.2})),
    Generation.V2026_07_28: (
        "fastmcp4_http_url",
        ToolCall("slow_compute", {"seconds": 0.2, "label": "a"}),
    ),
}


@pytest.mark.parametrize("generation", list(CALLS), ids=["mcp1", "fastmcp4"])
async def test_a_peer_runs_a_call_naming_its_earlier_task(
    generation: Generation, request: pytest.FixtureRequest
) -> None:
    fixture, call = CALLS[generation]
    url: str = request.getfixturevalue(fixture)
    transport = RecordingTransport(HttpTransport(url))
    with anyio.fail_after(30):
        async with (
            Client(transport, generation=generation, client_info=INFO) as client,
            Poller(client, FAST) as poller,
        ):
            first = task_created(await client.start(call.as_task()))
            assert isinstance(await poller.wait(first), Completed)
            second = task_created(await client.start(call.related_to(first).as_task()))
            outcome = await poller.wait(second)
    assert isinstance(outcome, Completed)
    assert second.task.task_id != first.task.task_id
    calls = [
        m for m in transport.sent if isinstance(m, JSONRPCRequest) and m.method == "tools/call"
    ]
    assert [(m.params or {}).get("_meta", {}).get(RELATED_TASK_IDS) for m in calls] == [
        None,
        [first.task.task_id],
    ]
