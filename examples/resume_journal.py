"""Resume from a journal: a waiting process is killed, a new one picks its task up.

    python3 examples/resume_journal.py                             # the bundled server
    python3 examples/resume_journal.py --generation 2026-07-28     # the 2026 bundled server
    python3 examples/resume_journal.py --url URL [--generation ...] # a server you started

Phase one runs as a child process: it starts a long task with a journal (for 2025-11-25 over
HTTP, keeping its session on close, because the task is bound to it), starts waiting, and is
killed with SIGKILL. Phase two, here, opens the same journal, resumes every open task and
prints how each ended. The journal file is created owner-only; delete it when done.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_tasks_client import (
    Client,
    Completed,
    Generation,
    HttpTransport,
    Lost,
    Poller,
    PollPolicy,
    SQLiteJournal,
    ToolCall,
    client_for,
    resume,
)
from mcp_tasks_client.models import CreateTaskResult, Implementation, TextContent

REPO = Path(__file__).resolve().parent.parent
INFO = Implementation("mcp-tasks-resume-example", "0.1")
CALLS = {
    Generation.V2025_11_25: ToolCall("slow_echo", {"text": "survived a crash", "seconds": 3}),
    Generation.V2026_07_28: ToolCall("slow_compute", {"seconds": 3, "label": "after a crash"}),
}
PEERS = {Generation.V2025_11_25: "mcp1", Generation.V2026_07_28: "fastmcp4"}


@contextlib.contextmanager
def bundled_server(generation: Generation) -> Iterator[str]:
    sys.path.insert(0, str(REPO / "tests"))
    from peers.harness import PEERS as INSTALLED
    from peers.harness import peer_available, running_http_peer

    peer = INSTALLED[PEERS[generation]]
    if not peer_available(peer):
        raise SystemExit(
            "the bundled server is not installed: run `python3 tests/peers/install.py`"
        )
    with running_http_peer(peer) as url:
        yield url


async def start_and_wait(url: str, generation: Generation, journal_path: str) -> None:
    """Phase one (the child): start, journal, wait forever (until killed)."""
    with SQLiteJournal(journal_path) as journal:
        transport = HttpTransport(url, delete_session_on_close=False)
        async with Client(transport, generation=generation, client_info=INFO) as client:
            ttl = dt.timedelta(minutes=10) if generation is Generation.V2025_11_25 else None
            created = await client.start(CALLS[generation].as_task(ttl=ttl), journal=journal)
            assert isinstance(created, CreateTaskResult)
            async with Poller(client, PollPolicy(floor=0.2), journal=journal) as poller:
                print(f"waiting {created.task.task_id}", flush=True)
                await poller.wait(created)


async def crash_then_resume(url: str, generation: Generation, journal_path: str) -> None:
    child = [sys.executable, __file__, "--phase", "start", "--url", url]
    child += ["--generation", generation.value, "--journal", journal_path]
    async with await anyio.open_process(child) as process:
        assert process.stdout is not None
        line = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 4096)
        print(f"child {process.pid}: {line.decode()}; killing it (SIGKILL)")
        process.send_signal(signal.SIGKILL)
        await process.wait()

    with SQLiteJournal(journal_path) as journal:
        for entry in await journal.entries(open_only=True):
            session = f", session {entry.session.session_id}" if entry.session else ""
            print(f"journal: {entry.task_id} on {entry.server}{session}, open")
        opener = functools.partial(client_for, client_info=INFO)
        for resumed in await resume(journal, opener, policy=PollPolicy(floor=0.2), deadline=60):
            match resumed.ended:
                case Completed(result=result):
                    texts = [b.text for b in result.content if isinstance(b, TextContent)]
                    print(f"resumed {resumed.entry.task_id}: completed -> {texts}")
                case Lost(reason=reason):
                    print(f"resumed {resumed.entry.task_id}: lost ({reason})")
                case other:
                    print(f"resumed {resumed.entry.task_id}: {other!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--generation", default=Generation.V2025_11_25.value)
    parser.add_argument("--journal")
    parser.add_argument("--phase", choices=["all", "start"], default="all")
    args = parser.parse_args()
    generation = Generation(args.generation)
    if args.phase == "start":
        anyio.run(start_and_wait, args.url, generation, args.journal)
        return
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(bundled_server(generation))
        journal = args.journal
        if journal is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            journal = str(Path(folder) / "tasks.db")
        anyio.run(crash_then_resume, url, generation, journal)


if __name__ == "__main__":
    main()
