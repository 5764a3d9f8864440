"""Generation-1 session reuse against the real peers (mcp 1.30, TypeScript SDK 1.32) over HTTP:
a session one client kept is resumed by another, explicitly, without ``initialize``; a session
the server no longer knows is SessionExpired, never a silent new session."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest
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
from mcp_tasks_client.errors import SessionExpired, TaskNotFound, UsageError
from mcp_tasks_client.models import Implementation, InitializeResult, TaskStatus

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


@pytest.fixture(params=["mcp1", "ts1"])
def url(request: pytest.FixtureRequest) -> str:
    value: str = request.getfixturevalue(f"{request.param}_http_url")
    return value


async def _kept_session(url: str, seconds: float) -> tuple[str, InitializeResult, str]:
    """Start a task on a session kept open on close; return (session id, what it agreed, task)."""
    transport = HttpTransport(url, delete_session_on_close=False)
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        call = ToolCall("slow_echo", {"text": "kept", "seconds": seconds})
        created = task_created(await client.start(call.as_task(ttl=dt.timedelta(minutes=2))))
        initialize = client.initialize_result
    assert transport.session_id is not None
    return transport.session_id, initialize, created.task.task_id


async def test_a_kept_session_is_resumed_and_its_task_is_still_there(url: str) -> None:
    """The task is bound to its session (both peers): a new client on the same session id,
    with the initialize result it agreed, polls it to its result without a new initialize."""
    session_id, initialize, task_id = await _kept_session(url, seconds=0.5)
    transport = HttpTransport(url, session_id=session_id)
    async with Client(
        transport, generation=Generation.V2025_11_25, client_info=INFO, resume=initialize
    ) as client:
        assert client.initialize_result == initialize
        assert client.protocol_version == initialize.protocol_version
        task = await client.get_task(task_id)
        assert task.task_id == task_id
        async with Poller(client, FAST) as poller:
            with anyio.fail_after(20):
                outcome = await poller.wait(task_id)
    assert isinstance(outcome, Completed)
    assert outcome.task is not None
    assert outcome.task.status is TaskStatus.COMPLETED


async def test_a_new_session_does_not_see_the_kept_sessions_task(url: str) -> None:
    """Why resume exists: the peers bind a task to its session, so a fresh session cannot
    find it (the failure a new user met before session reuse)."""
    _, _, task_id = await _kept_session(url, seconds=0.2)
    async with Client(
        HttpTransport(url), generation=Generation.V2025_11_25, client_info=INFO
    ) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task(task_id)


async def test_a_session_the_server_forgot_is_session_expired(url: str) -> None:
    """Deleted on close (the default), the session is gone: resuming it raises SessionExpired
    on the first request, and no initialize is sent behind the caller's back."""
    transport = HttpTransport(url)  # deletes its session on close
    async with Client(transport, generation=Generation.V2025_11_25, client_info=INFO) as client:
        initialize = client.initialize_result
    assert transport.session_id is not None
    resumed = HttpTransport(url, session_id=transport.session_id)
    async with Client(
        resumed, generation=Generation.V2025_11_25, client_info=INFO, resume=initialize
    ) as client:
        with anyio.fail_after(20), pytest.raises(SessionExpired) as caught:
            await client.list_tasks_page()
    assert caught.value.session_id == transport.session_id
    assert resumed.session_id == transport.session_id  # not replaced by a new one


def test_resume_needs_a_session_and_a_session_generation() -> None:
    initialize = InitializeResult.__new__(InitializeResult)
    with pytest.raises(UsageError, match="session_id"):
        Client(
            HttpTransport("http://127.0.0.1:9/mcp"),
            generation=Generation.V2025_11_25,
            client_info=INFO,
            resume=initialize,
        )
    with pytest.raises(UsageError, match="no session"):
        Client(
            HttpTransport("http://127.0.0.1:9/mcp", session_id="abc"),
            generation=Generation.V2026_07_28,
            client_info=INFO,
            resume=initialize,
        )
    with pytest.raises(UsageError, match="visible ASCII"):
        HttpTransport("http://127.0.0.1:9/mcp", session_id="a b")
