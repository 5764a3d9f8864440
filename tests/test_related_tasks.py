"""Related task ids, explicitly (issue 37, part 1): ``ToolCall.related_to``.

A draft (agents-wg PR 28): ``_meta["io.modelcontextprotocol/relatedTaskIds"]`` on a
``tools/call`` names earlier tasks of the same server; a client SHOULD name only ids that
server returned and SHOULD NOT let a language model fill the field in. The builder takes task
handles or ids (never text); the Client checks each id before sending (read from its server,
or a journal entry recorded for it) and refuses any other with UnknownRelatedTask unless the
caller vouches for it (``from_elsewhere=True``). Checked on the wire of the suite's
FaultServer in both generations, on both loops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tasks_client import (
    Client,
    Generation,
    HttpTransport,
    Limits,
    RelatedTask,
    SQLiteJournal,
    ToolCall,
)
from mcp_tasks_client.builders import RELATED_TASK_IDS
from mcp_tasks_client.errors import UnknownRelatedTask
from mcp_tasks_client.models import CreateTaskResult, Implementation
from mcp_tasks_client.testing import FaultServer

G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
GENERATIONS = pytest.mark.parametrize("generation", [G1, G2], ids=["2025", "2026"])
INFO = Implementation("related-test", "0")
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


# -- the builder --------------------------------------------------------------------------


def test_related_to_names_ids_in_order_once_each() -> None:
    call = ToolCall("echo", meta={"progressToken": "p"}).related_to("a", "b", "a")
    call = call.related_to("c", from_elsewhere=True).related_to("b")
    assert call.related_task_ids == ["a", "b", "c"]
    assert call.related == (RelatedTask("a"), RelatedTask("b"), RelatedTask("c", None, True))
    again = call.related_to("a", from_elsewhere=True)  # the same id, vouched another way
    assert again.related_task_ids == ["a", "b", "c"]
    assert again.related[-1] == RelatedTask("a", None, True)
    meta = call.params()["_meta"]
    assert meta == {"progressToken": "p", RELATED_TASK_IDS: ["a", "b", "c"]}
    task_call = ToolCall("echo").as_task().related_to("a")
    assert task_call.params()["_meta"] == {RELATED_TASK_IDS: ["a"]}
    assert task_call.related == (RelatedTask("a"),)


def test_a_call_naming_nothing_sends_no_related_key() -> None:
    assert "_meta" not in ToolCall("echo").params()
    assert ToolCall("echo").related_to().params().get("_meta") is None


@pytest.mark.parametrize("bad", [7, None, b"id", {"taskId": "a"}, ["a"]])
def test_related_to_takes_handles_and_ids_not_other_values(bad: Any) -> None:
    with pytest.raises(TypeError, match="CreateTaskResult, a Task, a JournalEntry"):
        ToolCall("echo").related_to(bad)


def test_an_empty_id_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        ToolCall("echo").related_to("")


# -- on the wire ----------------------------------------------------------------------------


def calls_sent(server: FaultServer) -> list[dict[str, Any]]:
    return [m for m in server.received if m.get("method") == "tools/call"]


@asynccontextmanager
async def client_of(server: FaultServer, url: str, **kw: Any) -> AsyncIterator[Client]:
    async with Client(
        HttpTransport(url), generation=server.generation, client_info=INFO, **kw
    ) as client:
        yield client


async def created(client: Client, text: str = "hi") -> CreateTaskResult:
    start = await client.start(ToolCall("echo", {"text": text}).as_task())
    assert isinstance(start, CreateTaskResult)
    return start


pytestmark = pytest.mark.anyio


@GENERATIONS
async def test_related_ids_go_on_the_wire_in_meta(generation: Generation) -> None:
    """Ids this client read from its server (a created task; a snapshot it polled) are sent as
    ``_meta["io.modelcontextprotocol/relatedTaskIds"]`` on a task call and on a plain call,
    beside what else the generation puts in ``_meta`` (2026-07-28: the extension, declared on
    the task call only, E C20)."""
    server = FaultServer(generation)
    with anyio.fail_after(20):
        async with server.http() as http, client_of(server, http.url) as client:
            first = await created(client, "one")
            second = await created(client, "two")
            snapshot = await client.get_task(second.task.task_id)
            call = ToolCall("echo", {"text": "three"}).related_to(first, snapshot)
            await client.start(call.as_task())
            await client.call_tool(ToolCall("echo", {"text": "four"}).related_to(first))
    *_, task_call, plain_call = calls_sent(server)
    ids = [first.task.task_id, second.task.task_id]
    assert task_call["params"]["_meta"][RELATED_TASK_IDS] == ids
    assert plain_call["params"]["_meta"][RELATED_TASK_IDS] == [first.task.task_id]
    if generation is G1:
        assert "task" in task_call["params"]
        assert "task" not in plain_call["params"]
    else:  # the extension's way (and a generation built on it: test_third_generation)
        assert TASKS_EXTENSION in str(task_call["params"]["_meta"])
        assert TASKS_EXTENSION not in str(plain_call["params"]["_meta"])


@GENERATIONS
async def test_an_id_from_another_server_is_refused_before_sending(
    generation: Generation,
) -> None:
    """A task id another server returned (here: a second FaultServer), or text that is no
    id this server gave, raises UnknownRelatedTask naming it; no ``tools/call`` is sent.
    With ``from_elsewhere=True`` the caller vouches for it and it is sent as it is."""
    ours, theirs = FaultServer(generation), FaultServer(generation)
    with anyio.fail_after(20):
        async with (
            ours.http() as ours_http,
            theirs.http() as theirs_http,
            client_of(ours, ours_http.url) as client,
            client_of(theirs, theirs_http.url) as other,
        ):
            foreign = await created(other)
            before = len(calls_sent(ours))
            for named in (foreign, foreign.task, "the task the model said"):
                with pytest.raises(UnknownRelatedTask) as caught:
                    await client.start(ToolCall("echo", {"text": "x"}).related_to(named).as_task())
                assert caught.value.server == ours_http.url
                with pytest.raises(UnknownRelatedTask):
                    await client.call_tool(ToolCall("echo", {"text": "x"}).related_to(named))
            assert caught.value.task_ids == ["the task the model said"]
            assert len(calls_sent(ours)) == before  # nothing was sent
            vouched = ToolCall("echo", {"text": "x"}).related_to(foreign, from_elsewhere=True)
            await client.call_tool(vouched)
    assert calls_sent(ours)[-1]["params"]["_meta"][RELATED_TASK_IDS] == [foreign.task.task_id]


@GENERATIONS
async def test_a_journal_entry_vouches_for_its_own_server_only(
    generation: Generation, tmp_path: Path
) -> None:
    """A fresh client never read the id; the journal entry an earlier client recorded for the
    same server (its URL) is accepted and sent; an entry recorded for another server is
    refused, with ``elsewhere`` naming it (both FaultServers number their tasks alike: the
    same id, from another server, is still refused)."""
    server, other = FaultServer(generation), FaultServer(generation)
    with SQLiteJournal(tmp_path / "j.db") as journal, anyio.fail_after(20):
        async with server.http() as http, other.http() as other_http:
            async with client_of(server, http.url) as first:
                start = await first.start(
                    ToolCall("echo", {"text": "a"}).as_task(), journal=journal
                )
                assert isinstance(start, CreateTaskResult)
            async with client_of(other, other_http.url) as elsewhere:
                away = await elsewhere.start(
                    ToolCall("echo", {"text": "b"}).as_task(), journal=journal
                )
                assert isinstance(away, CreateTaskResult)
            entry = await journal.get(http.url, start.task.task_id)
            away_entry = await journal.get(other_http.url, away.task.task_id)
            assert entry is not None
            assert away_entry is not None
            async with client_of(server, http.url) as fresh:
                with pytest.raises(UnknownRelatedTask):  # this client never read it
                    await fresh.call_tool(ToolCall("echo").related_to(start.task.task_id))
                with pytest.raises(UnknownRelatedTask) as caught:
                    await fresh.call_tool(ToolCall("echo").related_to(entry, away_entry))
                assert caught.value.elsewhere == [away.task.task_id]
                await fresh.call_tool(ToolCall("echo", {"text": "c"}).related_to(entry))
    assert calls_sent(server)[-1]["params"]["_meta"][RELATED_TASK_IDS] == [start.task.task_id]


async def test_the_oldest_ids_read_are_forgotten_past_the_limit() -> None:
    """``Limits.max_known_task_ids``: the record of ids read from the server is bounded; a
    forgotten id is refused like a foreign one."""
    server = FaultServer(G2)
    with anyio.fail_after(20):
        async with (
            server.http() as http,
            client_of(server, http.url, limits=Limits(max_known_task_ids=1)) as client,
        ):
            first = await created(client, "one")
            second = await created(client, "two")
            with pytest.raises(UnknownRelatedTask) as caught:
                await client.call_tool(ToolCall("echo").related_to(first, second))
    assert caught.value.task_ids == [first.task.task_id]
