"""``mcp-tasks resume`` sends ``--header`` values only to the server they were given for
(``--url``): a journal entry naming another server (planted there, say) is followed without
them, and a line on stderr says so. Two scripted 2026-07-28 servers on 127.0.0.1, a real
journal file, the command as a subprocess."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import pytest
from test_cli import CLI, REPO, RUN_TIMEOUT, env

from mcp_tasks_client._generation import Generation
from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.journal import JournalEntry, SQLiteJournal
from mcp_tasks_client.testing import Conn, HostileHTTPServer, Received

GEN2 = Generation.V2026_07_28
NOW = "2026-08-01T00:00:00Z"
SECRET = "Bearer s3cret"


async def serve(request: Received, conn: Conn) -> None:
    if request.rpc_method == "tasks/get":
        task_id = request.params["taskId"]
        done = {"content": [{"type": "text", "text": f"done {task_id}"}]}
        await conn.result(
            request,
            {
                "taskId": task_id,
                "status": "completed",
                "createdAt": NOW,
                "lastUpdatedAt": NOW,
                "ttlMs": 60000,
                "pollIntervalMs": 10,
                "result": {**done, "resultType": "complete"},
            },
        )
    else:
        await conn.error(request, -32601, "not here")


@pytest.fixture
def servers() -> Iterator[tuple[HostileHTTPServer, HostileHTTPServer]]:
    with (
        anyio.from_thread.start_blocking_portal("trio") as portal,
        portal.wrap_async_context_manager(HostileHTTPServer(serve)) as mine,
        portal.wrap_async_context_manager(HostileHTTPServer(serve)) as planted,
    ):
        yield mine, planted


def journal_with(path: Path, *entries: tuple[str, str]) -> None:
    async def write() -> None:
        with SQLiteJournal(path) as journal:
            for server, task_id in entries:
                await journal.record(
                    JournalEntry(
                        server=server,
                        task_id=task_id,
                        generation=GEN2,
                        protocol_version=GEN2.protocol_version,
                        tool="job",
                        created_at=dt.datetime.now(dt.timezone.utc),
                    )
                )

    anyio.run(write)


def mcp_tasks(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    run = subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        env=env(),
        cwd=REPO,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return run.returncode, [json.loads(line) for line in run.stdout.splitlines()], run.stderr


def test_resume_sends_the_headers_only_to_the_server_they_were_given_for(
    servers: tuple[HostileHTTPServer, HostileHTTPServer], tmp_path: Path
) -> None:
    mine, planted = servers
    journal = tmp_path / "tasks.db"
    journal_with(journal, (mine.url, "t-mine"), (planted.url, "t-planted"))
    code, lines, stderr = mcp_tasks(
        "--journal", str(journal), "--json", "--interval", "0.05", "resume",
        "--url", mine.url, "--header", f"Authorization: {SECRET}",
    )  # fmt: skip
    assert code == ExitCode.COMPLETED, stderr
    ended = {line["task_id"]: line for line in lines}
    assert ended["t-mine"]["status"] == ended["t-planted"]["status"] == "completed"
    got = [r for r in mine.received if r.http_method == "POST"]
    assert got
    assert all(r.headers.get("authorization") == SECRET for r in got)
    leaked = [r for r in planted.received if r.http_method == "POST"]
    assert leaked  # it was followed, without the headers
    assert not any("authorization" in r.headers for r in leaked)
    assert f"the tasks of {planted.url} are followed without --header" in stderr
    assert SECRET not in stderr


def test_resume_headers_need_the_url_they_are_for(tmp_path: Path) -> None:
    journal = tmp_path / "tasks.db"
    journal_with(journal)
    code, _, stderr = mcp_tasks("--journal", str(journal), "--header", "X-Key: k", "resume")
    assert code == ExitCode.USAGE
    assert "resume --header needs --url URL" in stderr
    code, _, stderr = mcp_tasks("--journal", str(journal), "--stdio", "x", "resume")
    assert code == ExitCode.USAGE
