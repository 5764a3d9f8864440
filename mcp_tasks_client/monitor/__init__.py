"""``mcp-tasks monitor``: a live web page over a journal (SQLite or PostgreSQL).

Job: show operators what a fleet of workers is doing (tasks by server, tool, status, worker and
lease; workers and their heartbeats; inputs waiting; failures, expiries and Lost outcomes; each
task's history and timeline; counts by status over the last hour), updated live, read-only
unless the run allows cancelling. Needs the ``monitor`` extra (Starlette and hypercorn, both on
anyio: trio and asyncio).

May import: the journals (``journal``, ``journal_postgres``), ``resume`` (a cancel opens the
client the journal names), ``models``; never the CLI (``mcp-tasks`` hands it its arguments).

Theory of operation: :mod:`.board` reads the journal with connections of its own (the history
is written by the journal's triggers, so the page costs the workers nothing) and waits for it
to change; :mod:`.pages` and :mod:`.pictures` turn what it read into HTML and SVG (pure
functions); :mod:`.web` is the Starlette app (routes, Server-Sent Events, the cancel token);
:mod:`.command` binds the socket and serves the app with hypercorn.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Run ``mcp-tasks monitor`` with the words after ``monitor``; the exit code."""
    from .command import main as run

    return run(argv)
