"""``mcp-tasks monitor``: serve the page over a journal until Ctrl-C (hypercorn, on trio).

    mcp-tasks monitor --journal FILE|postgresql://... [--schema NAME] [--host 127.0.0.1]
        [--port 0] [--trace-url 'https://tracing.example/trace/{trace_id}'] [--allow-cancel]

It binds ``--host`` (127.0.0.1 unless told) on ``--port`` (0: a free one), prints the page's URL
with the run's access token (``?token=``: every user of the machine reaches 127.0.0.1, and the
page lists task ids) on its first line (with ``--allow-cancel``, the cancel token on the next:
the page carries it in its forms), and serves until interrupted. Cancelling sends
``tasks/cancel`` to the task's server (HTTP servers only: a stdio server's command is never
started by the page), as the client the journal says the task was started with; the worker
that follows the task records the outcome as usual.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from .board import BoardReader, open_reader
from .pages import PageSettings

__all__ = ["main", "serve"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-tasks monitor",
        description="a live web page over a journal (read-only unless --allow-cancel)",
    )
    parser.add_argument("--journal", required=True, help="an SQLite file or a postgresql:// URL")
    parser.add_argument("--schema", default="mcp_tasks", help="the PostgreSQL journal's schema")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the port (0: a free one)")
    parser.add_argument(
        "--trace-url",
        help="link each trace id to a tracing backend: a URL with {trace_id} in it",
    )
    parser.add_argument(
        "--allow-cancel",
        action="store_true",
        help="let the page cancel tasks (each cancel needs this run's token)",
    )
    return parser


def check_trace_url(template: str | None) -> str | None:
    """``template`` when it is an http(s) URL with ``{trace_id}`` in it; else ValueError."""
    if template is None:
        return None
    if not template.startswith(("http://", "https://")) or "{trace_id}" not in template:
        raise ValueError("--trace-url: an http:// or https:// URL with {trace_id} in it")
    return template


def cancel_through_server(journal: str, schema: str) -> Callable[[str, str], Any]:
    """The page's cancel: ``tasks/cancel`` to the task's server, as the client the journal
    says the task was made with (its generation-1 session resumed)."""

    async def cancel(server: str, task_id: str) -> str:
        from .. import __version__
        from ..journal import SQLiteJournal
        from ..models import Implementation
        from ..resume import client_for

        store: Any
        if journal.startswith(("postgresql://", "postgres://")):
            from ..journal_postgres import PostgresJournal

            store = PostgresJournal(journal, schema=schema, max_size=1)
            await store.__aenter__()
        else:
            store = SQLiteJournal(journal)
        try:
            entry = await store.get(server, task_id)
        finally:
            if hasattr(store, "__aexit__"):
                await store.__aexit__(None, None, None)
            else:
                store.close()
        if entry is None:
            return f"task {task_id} is not in the journal"
        if entry.server.startswith("stdio:"):
            return f"task {task_id} runs on a stdio server: cancel it from the command line"
        info = Implementation("mcp-tasks-monitor", __version__)
        async with client_for(entry, client_info=info) as client:
            await client.cancel_task(task_id)
        return f"tasks/cancel sent for {task_id}"

    return cancel


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


async def serve(
    reader: BoardReader,
    sock: socket.socket,
    settings: PageSettings,
    *,
    cancel: Callable[[str, str], Any] | None = None,
    tick: float = 5.0,
    access_token: str | None = None,
    task_status: Any = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the page on ``sock`` (a listening socket; hypercorn takes it over) until
    cancelled; ``task_status.started()`` once serving. Runs on trio or asyncio.
    Deadline: none (until cancelled). Cancelled: hypercorn shuts down (open requests get
    ``graceful_timeout``, half a second) before the cancellation is raised."""
    import sniffio
    from hypercorn.config import Config

    from .web import make_app

    host = sock.getsockname()[0]
    loopback = host in ("127.0.0.1", "::1", "localhost")
    hosts = ["127.0.0.1", "localhost", "[::1]"] if loopback else ["*"]
    app: Any = make_app(
        reader,
        settings,
        cancel=cancel,
        allowed_hosts=hosts,
        tick=tick,
        access_token=access_token,
    )
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.5
    if sniffio.current_async_library() == "trio":
        from hypercorn.trio import serve as hypercorn_serve
    else:
        from hypercorn.asyncio import serve as hypercorn_serve  # type: ignore[assignment]
    stop = anyio.Event()

    async def run() -> None:
        # Shielded: a cancelled serve() stops hypercorn by its own shutdown (the trigger),
        # which closes the connections in order, instead of cancelling it mid-request.
        with anyio.CancelScope(shield=True):
            await hypercorn_serve(app, config, shutdown_trigger=stop.wait)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()


def main(argv: Sequence[str]) -> int:
    """Run ``mcp-tasks monitor`` with ``argv`` (the words after ``monitor``)."""
    ns = _parser().parse_args(list(argv))
    try:
        trace_url = check_trace_url(ns.trace_url)
        import hypercorn  # noqa: F401 - the extra's presence
        import starlette  # noqa: F401
    except ValueError as exc:
        print(f"mcp-tasks monitor: {exc}", file=sys.stderr)
        return 2
    except ImportError:
        print(
            "mcp-tasks monitor: needs the 'monitor' extra: pip install 'mcp-tasks-client[monitor]'",
            file=sys.stderr,
        )
        return 2
    from ..journal import JournalError

    try:
        reader = open_reader(ns.journal, schema=ns.schema)
    except JournalError as exc:
        print(f"mcp-tasks monitor: {exc}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(24) if ns.allow_cancel else None
    settings = PageSettings(reader.name, trace_url=trace_url, cancel_token=token)
    sock = bind(ns.host, ns.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    access = secrets.token_urlsafe(24)
    print(f"monitor: http://{shown}:{port}/?token={access}", flush=True)
    if token is not None:
        print(f"cancel token: {token}", flush=True)
    cancel = cancel_through_server(ns.journal, ns.schema) if ns.allow_cancel else None

    async def run() -> None:
        try:
            await serve(reader, sock, settings, cancel=cancel, access_token=access)
        finally:
            with anyio.CancelScope(shield=True):
                await reader.aclose()

    try:
        anyio.run(run, backend="trio")
    except KeyboardInterrupt:
        return 130
    return 0
