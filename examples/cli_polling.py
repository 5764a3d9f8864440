"""A script that drives a long-running tool with the ``mcp-tasks`` command, as cron jobs and CI
steps do: it reads the command's JSON lines and branches on its exit codes.

    python3 examples/cli_polling.py                          # the bundled server (2026-07-28)
    python3 examples/cli_polling.py --url URL --generation G --tool T --args JSON

Two ways, both plain subprocesses (``python -m mcp_tasks_client.cli`` is ``mcp-tasks``):

1. One process follows the task: ``call TOOL --task --wait`` prints a "created" line, a
   "status" line per change and, last, the "outcome". Works with every server.
2. Separate commands, one per step, the task id kept in between: ``call TOOL --task``, then
   ``status ID`` on the script's own schedule, then ``result ID``. This needs a server whose
   tasks outlive a connection (2026-07-28 servers; a 2025-11-25 server may bind a task to the
   session that made it, and the second command then exits 8, "task not found"). In shell::

       id=$(mcp-tasks --url "$URL" --generation 2026-07-28 call slow_compute --task \\
            --args '{"seconds": 3}' | jq -r .task_id)
       while [ "$(mcp-tasks --url "$URL" --generation 2026-07-28 status "$id" \\
                  | jq -r .status)" = working ]; do sleep 1; done
       mcp-tasks --url "$URL" --generation 2026-07-28 result "$id"; echo "exit code $?"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MCP_TASKS = [sys.executable, "-m", "mcp_tasks_client.cli"]
EXIT_WORDS = {0: "completed", 1: "failed", 3: "cancelled", 4: "expired or deadline"}


def texts(result: dict[str, Any]) -> str:
    return " ".join(b["text"] for b in result.get("content", []) if b.get("type") == "text")


def streamed(server: list[str], tool: str, args: str) -> int:
    """Way 1: one command; each JSON line is read as it arrives."""
    command = [*MCP_TASKS, *server, "call", tool, "--args", args, "--task", "--wait"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "created":
                print(f"[1] started {event['task_id']}")
            elif event["event"] == "status":
                print(f"[1] status {event['status']}")
            elif event["event"] == "outcome":
                said = texts(event["result"]) if "result" in event else event["error"]["message"]
                print(f"[1] outcome {event['status']}: {said}")
    return proc.returncode


def lines(*args: str) -> Iterator[dict[str, Any]]:
    run = subprocess.run([*MCP_TASKS, *args], capture_output=True, text=True, check=False)
    for line in run.stdout.splitlines():
        yield json.loads(line)
    if run.returncode not in EXIT_WORDS:
        sys.stderr.write(run.stderr)
        raise SystemExit(run.returncode)


def stepwise(server: list[str], tool: str, args: str, every: float) -> int:
    """Way 2: one command per step; the script polls on its own schedule."""
    (created,) = lines(*server, "call", tool, "--args", args, "--task")
    task_id = created["task_id"]
    print(f"[2] started {task_id}")
    while True:
        (status,) = lines(*server, "status", task_id)
        print(f"[2] status {status['status']}")
        if status["status"] not in ("working", "input_required"):
            break
        time.sleep(every)
    run = subprocess.run(
        [*MCP_TASKS, *server, "result", task_id], capture_output=True, text=True, check=False
    )
    outcome = json.loads(run.stdout.splitlines()[-1])
    said = texts(outcome["result"]) if "result" in outcome else outcome["error"]["message"]
    print(f"[2] result: {said} (exit code {run.returncode}: {EXIT_WORDS.get(run.returncode)})")
    return run.returncode


def main(url: str, generation: str, tool: str, args: str, every: float) -> int:
    server = ["--url", url, "--generation", generation]
    first = streamed(server, tool, args)
    if generation == "2025-11-25":
        print("[2] skipped: a 2025-11-25 server may bind its tasks to one session")
        return first
    return first or stepwise(server, tool, args, every)


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an MCP endpoint; default: start the bundled server")
    parser.add_argument("--generation", default="2026-07-28", choices=["2025-11-25", "2026-07-28"])
    parser.add_argument("--tool", default="slow_compute")
    parser.add_argument("--args", default='{"seconds": 2, "label": "report"}')
    parser.add_argument("--every", type=float, default=0.5, help="seconds between status calls")
    opts = parser.parse_args()
    if opts.url:
        raise SystemExit(main(opts.url, opts.generation, opts.tool, opts.args, opts.every))
    sys.path.insert(0, str(REPO / "tests"))
    from peers.harness import PEERS, peer_available, running_http_peer

    peer = PEERS["fastmcp4"]
    if not peer_available(peer):
        raise SystemExit("the example server is not installed: python3 tests/peers/install.py")
    with running_http_peer(peer) as url:
        code = main(url, "2026-07-28", opts.tool, opts.args, opts.every)
    raise SystemExit(code)


if __name__ == "__main__":
    run()
