"""A plain script for test_sync_peers' Ctrl-C test: start a long task, wait for it, be
interrupted.

    python tests/sync_child.py URL GENERATION BACKEND TOOL ARGS_JSON wait|watch

Prints ``created <task id>``, then ``waiting`` once the main thread is blocked inside
``SyncPoller.wait`` (or in the ``watch`` iterator: its second item, the task's next snapshot,
never comes), seen from a helper thread in the main thread's stack, so the test's SIGINT
lands in the wait and not before it. On KeyboardInterrupt it prints ``interrupted in wait``
(or ``interrupted elsewhere``), asks the server for the task (``status <status>``) with the same
client, and ``cancels_sent <n>``; the client is closed on the way out.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback

from mcp_tasks_client import Generation, HttpTransport, PollPolicy, ToolCall
from mcp_tasks_client.models import CreateTaskResult, Implementation
from mcp_tasks_client.sync import SyncClient, SyncPoller


def blocked_in_wait(main: int) -> bool:
    """Whether thread ``main`` is inside sync.py, waiting on the loop's answer."""
    frame = sys._current_frames().get(main)
    names = []
    while frame is not None:
        names.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    in_sync = any(f.endswith("sync.py") and n == "run" for f, n in names)
    return in_sync and any(n in ("wait", "result") for _, n in names[:3])


def announce_when_waiting(main: int) -> None:
    while not blocked_in_wait(main):
        time.sleep(0.005)
    print("waiting", flush=True)


def main() -> None:
    url, generation, backend, tool, arguments, how = sys.argv[1:]
    with SyncClient(
        HttpTransport(url),
        generation=Generation(generation),
        client_info=Implementation("sync-child", "0"),
        backend="asyncio" if backend == "asyncio" else "trio",
    ) as client:
        created = client.start(ToolCall(tool, json.loads(arguments)).as_task())
        assert isinstance(created, CreateTaskResult)
        task_id = created.task.task_id
        print("created", task_id, flush=True)
        with SyncPoller(client, PollPolicy(floor=0.05)) as poller:
            watcher = threading.Thread(
                target=announce_when_waiting, args=(threading.get_ident(),), daemon=True
            )
            watcher.start()
            try:
                if how == "watch":
                    for _ in poller.watch(created):
                        pass  # the first snapshot at once; the next after the task ends
                else:
                    poller.wait(created)
            except KeyboardInterrupt as exc:
                frames = traceback.extract_tb(exc.__traceback__)
                waits = {"wait", "iterate"}  # SyncPoller.wait, or a watch's next item
                where = "wait" if any(f.name in waits for f in frames) else "elsewhere"
                print("interrupted in", where, flush=True)
                print("status", client.get_task(task_id).status.value, flush=True)
                print("cancels_sent", poller.aio.cancels_sent, flush=True)
                return
            print("not interrupted", flush=True)


if __name__ == "__main__":
    main()
