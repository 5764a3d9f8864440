"""The blocking API (``mcp_tasks_client.sync``) against the real peers, in both generations
(mcp 1.30 for 2025-11-25, fastmcp 4.1.4 for 2026-07-28, over HTTP): a task with an input handler
answered by a plain function in a worker thread, waits on one, any and all, watch as an
iterator, cancel, journal and resume; called from a running asyncio loop's thread (a notebook
cell) and from several threads at once; Ctrl-C (a real SIGINT to a script) raising
KeyboardInterrupt in the wait and leaving the task running on the server; the loop's thread
stopped and joined on close.

These tests are plain functions (no ``@pytest.mark.anyio``): the caller of a SyncClient is
synchronous code.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import trio
from conftest import require_peer
from peers.harness import stdio_command, stop_process

from mcp_tasks_client import (
    Cancelled,
    Completed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    MCPTasksError,
    Outcome,
    PollPolicy,
    SQLiteJournal,
    StdioTransport,
    ToolCall,
    client_for,
)
from mcp_tasks_client.errors import DeadlineExceeded, UsageError
from mcp_tasks_client.models import (
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    Task,
    TaskStatus,
    TextContent,
)
from mcp_tasks_client.sync import Backend, SyncClient, SyncPoller, resume, threaded

HERE = Path(__file__).parent
INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)
GEN1, GEN2 = Generation.V2025_11_25, Generation.V2026_07_28
PEER = {GEN1: "mcp1", GEN2: "fastmcp4"}
ASKING = {  # a task that asks its client a yes/no question
    GEN1: ToolCall("confirm", {"text": "ship it"}),
    GEN2: ToolCall("confirm_delete", {"filename": "a.txt"}),
}
ANSWERED = {GEN1: "confirmed=True action=accept", GEN2: "deleted a.txt"}


def quick(generation: Generation, label: str, seconds: float = 0.2) -> ToolCall:
    """A task that takes ``seconds`` and says ``label``."""
    if generation is GEN1:
        return ToolCall("slow_echo", {"text": label, "seconds": seconds})
    return ToolCall("slow_compute", {"seconds": seconds, "label": label})


def text_of(ended: Outcome | MCPTasksError) -> str:
    assert isinstance(ended, Completed), ended
    return " ".join(b.text for b in ended.result.content if isinstance(b, TextContent))


@pytest.fixture(params=[GEN1, GEN2], ids=["mcp1", "fastmcp4"])
def server(request: pytest.FixtureRequest) -> tuple[str, Generation]:
    generation: Generation = request.param
    url: str = request.getfixturevalue(f"{PEER[generation]}_http_url")
    return url, generation


def loop_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("mcp-tasks-")]


class Asked:
    """A plain elicitation handler that says yes, and records the thread it ran in."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.messages: list[str] = []

    def __call__(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        self.threads.append(threading.current_thread())
        self.messages.append(params.message)
        fields = getattr(params, "requested_schema", {}).get("properties", {})
        return ElicitResult(ElicitAction.ACCEPT, dict.fromkeys(fields, True))


def run_asking_task(url: str, generation: Generation, backend: Backend) -> tuple[str, Asked]:
    """Start the asking task with a plain handler, wait; its text and the handler."""
    asked = Asked()
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    with SyncClient(
        HttpTransport(url),
        generation=generation,
        client_info=INFO,
        capabilities=router.capabilities(),
        backend=backend,
    ) as client:
        client.attach(router)
        created = client.start(
            ASKING[generation].as_task(), on_created=router.binding(elicitation=threaded(asked))
        )
        with SyncPoller(client, FAST, inputs=router) as poller:
            outcome = poller.wait(created, deadline=60)
        assert loop_threads() != []  # the loop runs while the client is open
    return text_of(outcome), asked


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_plain_handler_answers_in_a_worker_thread_and_the_wait_returns_the_outcome(
    server: tuple[str, Generation], backend: Backend
) -> None:
    """C-21/C-25 (2025-11-25: the elicitation tagged with the task), E C28-C33 (2026-07-28:
    inputRequests answered with tasks/update): the same plain handler serves both."""
    url, generation = server
    text, asked = run_asking_task(url, generation, backend)
    assert text == ANSWERED[generation]
    [thread] = asked.threads
    assert thread is not threading.main_thread()
    assert not thread.name.startswith("mcp-tasks-")  # never the loop's own thread
    assert loop_threads() == []  # closed: the loop's thread was joined


def test_it_runs_inside_a_running_event_loop_like_a_notebook_cell(
    server: tuple[str, Generation],
) -> None:
    """A Jupyter cell: this thread's asyncio loop is running, and blocking calls still work
    (ours is in another thread); both backends, the asyncio one included. So too under a
    running trio loop (trio refuses a blocking call into a trio loop from a trio thread: the
    SyncClient hops through a thread of its own there)."""
    url, generation = server

    async def cell() -> list[str]:
        return [run_asking_task(url, generation, backend)[0] for backend in ("trio", "asyncio")]

    assert asyncio.run(cell()) == [ANSWERED[generation]] * 2
    assert trio.run(cell) == [ANSWERED[generation]] * 2


def test_several_threads_start_and_wait_on_one_client(server: tuple[str, Generation]) -> None:
    url, generation = server
    results: dict[int, str] = {}
    errors: list[BaseException] = []
    with (
        SyncClient(HttpTransport(url), generation=generation, client_info=INFO) as client,
        SyncPoller(client, FAST) as poller,
    ):

        def worker(i: int) -> None:
            try:
                created = client.start(quick(generation, f"thread {i}").as_task())
                results[i] = text_of(poller.wait(created, deadline=60))
            except BaseException as exc:  # reported below, with the thread's number
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert errors == []
    assert sorted(results) == [0, 1, 2, 3]
    for i, text in results.items():
        assert f"thread {i}" in text


def test_wait_any_wait_all_and_as_completed(server: tuple[str, Generation]) -> None:
    url, generation = server
    with (
        SyncClient(HttpTransport(url), generation=generation, client_info=INFO) as client,
        SyncPoller(client, FAST) as poller,
    ):
        short = client.start(quick(generation, "short", 0.1).as_task())
        long = client.start(quick(generation, "long", 1.5).as_task())
        assert isinstance(short, CreateTaskResult)
        assert isinstance(long, CreateTaskResult)
        first, ended = poller.wait_any([long, short], deadline=60)
        assert first == short.task.task_id
        assert "short" in text_of(ended)
        both = poller.wait_all([short, long], deadline=60)
        assert set(both) == {short.task.task_id, long.task.task_id}
        assert "long" in text_of(both[long.task.task_id])
        order = [task_id for task_id, _ in poller.as_completed([long, short], deadline=60)]
        assert sorted(order) == sorted(both)  # both ended before: each reported once


def test_watch_is_an_iterator_of_snapshots_ending_with_the_terminal_one(
    server: tuple[str, Generation],
) -> None:
    url, generation = server
    with (
        SyncClient(HttpTransport(url), generation=generation, client_info=INFO) as client,
        SyncPoller(client, FAST) as poller,
    ):
        created = client.start(quick(generation, "watched", 0.3).as_task())
        assert isinstance(created, CreateTaskResult)
        snapshots = [item for item in poller.watch(created, deadline=60) if isinstance(item, Task)]
        assert snapshots[-1].status is TaskStatus.COMPLETED
        assert all(not s.status.is_terminal for s in snapshots[:-1])
        assert "watched" in text_of(poller.wait(created))  # answered at once, as async
        # Leaving a watch early stops it and leaves the task alone; the client still works.
        other = client.start(quick(generation, "left", 0.3).as_task())
        assert isinstance(other, CreateTaskResult)
        for _ in poller.watch(other, deadline=60):
            break
        assert "left" in text_of(poller.wait(other, deadline=60))
        assert poller.aio.cancels_sent == 0


def test_cancel_and_a_deadline(server: tuple[str, Generation]) -> None:
    """A deadline raises DeadlineExceeded and cancels nothing (no cancel_on_abandon); the
    caller's cancel_task does (T: tasks/cancel, E: the empty ack), and the wait says so."""
    url, generation = server
    with (
        SyncClient(HttpTransport(url), generation=generation, client_info=INFO) as client,
        SyncPoller(client, FAST) as poller,
    ):
        created = client.start(quick(generation, "slow", 30).as_task())
        assert isinstance(created, CreateTaskResult)
        with pytest.raises(DeadlineExceeded):
            poller.wait(created, deadline=dt.timedelta(seconds=0.2))
        task_id = created.task.task_id
        assert client.get_task(task_id).status is TaskStatus.WORKING
        client.cancel_task(task_id)
        assert isinstance(poller.wait(created, deadline=60), Cancelled)


def test_journal_and_resume(server: tuple[str, Generation], tmp_path: Path) -> None:
    """A task journaled by one SyncClient, left unwaited, followed to its end by the blocking
    resume (2025-11-25: its session kept, not DELETEd)."""
    url, generation = server
    with SQLiteJournal(tmp_path / "journal.db") as journal:
        transport = HttpTransport(url, delete_session_on_close=False)
        with SyncClient(transport, generation=generation, client_info=INFO) as client:
            created = client.start(quick(generation, "journaled", 0.3).as_task(), journal=journal)
            assert isinstance(created, CreateTaskResult)
        seen: list[str] = []
        [resumed] = resume(
            journal,
            functools.partial(client_for, client_info=INFO),
            policy=FAST,
            deadline=60,
            on_resumed=lambda r: seen.append(r.entry.task_id),
        )
        assert resumed.entry.task_id == created.task.task_id == seen[0]
        assert "journaled" in text_of(resumed.ended)  # type: ignore[arg-type]
        assert resume(journal, functools.partial(client_for, client_info=INFO)) == []
    assert loop_threads() == []


def test_lifetime_and_misuse_are_typed_errors(fastmcp4_http_url: str) -> None:
    client = SyncClient(HttpTransport(fastmcp4_http_url), generation=GEN2, client_info=INFO)
    with pytest.raises(UsageError, match="not open"):
        client.get_task("t")
    with client:
        with pytest.raises(UsageError, match="opened only once"):
            client.open()
        # A blocking call from the loop's own thread would wait for itself.
        with pytest.raises(UsageError, match="inside the client's event loop"):
            client.call(lambda: client.get_task("t"))
        # What the blocking API has no method for runs through call().
        discovered = client.call(client.aio.discover)
        assert discovered.supported_versions
    client.close()  # idempotent
    assert loop_threads() == []
    with pytest.raises(UsageError):
        client.get_task("t")
    with pytest.raises(UsageError, match="plain function"):

        async def already(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
            raise AssertionError

        threaded(already)
    with pytest.raises(UsageError, match="backend"):
        SyncClient(
            HttpTransport(fastmcp4_http_url),
            generation=GEN2,
            client_info=INFO,
            backend="curio",  # type: ignore[arg-type]
        )


def test_a_stdio_server_started_and_stopped_by_the_sync_client() -> None:
    """StdioTransport as in async code: the server process is the client's, started in its
    loop and stopped when the client closes."""
    command = stdio_command(require_peer("mcp1"))
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    asked = Asked()
    with SyncClient(
        StdioTransport(command),
        generation=GEN1,
        client_info=INFO,
        capabilities=router.capabilities(),
    ) as client:
        client.attach(router)
        assert "confirm" in [tool.name for tool in client.list_tools()]  # a plain iterator
        created = client.start(
            ASKING[GEN1].as_task(), on_created=router.binding(elicitation=threaded(asked))
        )
        with SyncPoller(client, FAST, inputs=router) as poller:
            assert text_of(poller.wait(created, deadline=60)) == ANSWERED[GEN1]
    assert asked.messages == ["Confirm: ship it?"]
    assert loop_threads() == []


def test_leaving_the_with_ends_a_wait_in_another_thread(fastmcp4_http_url: str) -> None:
    """As ``async with Poller`` ends a wait still running: UsageError, in the waiting thread;
    then the client closes, the loop stops and its thread is joined."""
    ended: list[BaseException] = []
    client = SyncClient(HttpTransport(fastmcp4_http_url), generation=GEN2, client_info=INFO)
    with client, SyncPoller(client, FAST) as poller:
        created = client.start(quick(GEN2, "slow", 30).as_task())
        assert isinstance(created, CreateTaskResult)

        def waiter() -> None:
            try:
                poller.wait(created)
            except BaseException as exc:  # what the wait ended with
                ended.append(exc)

        thread = threading.Thread(target=waiter)
        thread.start()
        for _ in range(6000):  # until the wait holds the task (it is then tracked)
            if poller.snapshot(created.task.task_id) is not None:
                break
            time.sleep(0.01)
        assert poller.snapshot(created.task.task_id) is not None
    thread.join(timeout=60)
    assert not thread.is_alive()
    [error] = ended
    assert isinstance(error, UsageError), error
    assert "the poller was closed" in str(error)
    assert loop_threads() == []
    with SyncClient(HttpTransport(fastmcp4_http_url), generation=GEN2, client_info=INFO) as c:
        c.cancel_task(created.task.task_id)  # tidy up the server


@pytest.mark.parametrize(
    ("backend", "how"), [("trio", "wait"), ("asyncio", "wait"), ("trio", "watch")]
)
def test_ctrl_c_in_a_blocking_wait_raises_keyboard_interrupt_and_leaves_the_task_running(
    server: tuple[str, Generation], backend: str, how: str
) -> None:
    """A real SIGINT to a plain script blocked in ``SyncPoller.wait``: KeyboardInterrupt in
    the wait, no tasks/cancel sent, the task still working on the server (asked by the same
    client after the interrupt, and, in stateless 2026-07-28, by this process after the
    script ended), as the mcp-tasks command leaves it."""
    url, generation = server
    tool = quick(generation, "interrupted", 60)
    command = [sys.executable, str(HERE / "sync_child.py"), url, generation.value, backend,
               tool.name, json.dumps(tool.arguments), how]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        created = proc.stdout.readline()
        assert created.startswith("created "), (created, proc.stderr)
        task_id = created.split()[1]
        assert proc.stdout.readline() == "waiting\n"
        proc.send_signal(signal.SIGINT)  # this child, by its own pid
        out, err = proc.communicate(timeout=60)
    finally:
        stop_process(proc)  # type: ignore[arg-type]
    assert proc.returncode == 0, err
    assert out.splitlines() == ["interrupted in wait", "status working", "cancels_sent 0"], err
    if generation is GEN2:  # stateless: any client reaches the task
        with SyncClient(HttpTransport(url), generation=generation, client_info=INFO) as client:
            assert client.get_task(task_id).status is TaskStatus.WORKING
            client.cancel_task(task_id)  # tidy up the server
