"""The monitor's web application (Starlette, on anyio: it runs under trio and asyncio alike).

Routes: ``GET /`` the board (filters as query parameters), ``GET /task?server=&id=`` one task,
``GET /changes`` Server-Sent Events (one ``data:`` line each time the journal changes, and a
``tick`` every ``tick`` seconds so ages stay current), ``POST /cancel`` (see below). A page asked
with ``?part=live`` is only its live part.

Read-only unless the run says otherwise: ``POST /cancel`` is refused (403) unless the app was
made with a ``cancel`` function, and then it needs this run's token (a random value made at
start, in the task page's form, or in the ``X-Monitor-Token`` header) compared in constant
time; a wrong or missing token is 403. A page from another site cannot read the token (the
same-origin rule), so it cannot make a browser cancel (CSRF). A request whose ``Host`` is not
one of ``allowed_hosts`` is refused (400): a DNS rebinding page cannot reach the app either.

Reading needs a token too when the app is made with ``access_token`` (``mcp-tasks monitor``
always makes one): the page lists task ids, which are bearer capabilities, and 127.0.0.1 is
reachable by every user of the machine. The URL the command prints carries it
(``?token=...``); a request with it gets an HttpOnly, SameSite=Strict cookie (named after the
port, so two monitors on one host keep theirs), and every later request needs that cookie or
the token again (else 403), as Jupyter does.

One background task watches the journal for the whole app (its lifespan) and wakes every
``/changes`` stream; the streams themselves read nothing.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from .. import observability as _obs
from ..journal import JournalError
from .board import BoardReader
from .pages import FILTERS, PageSettings, board_live, board_page, task_live, task_page

__all__ = ["Changes", "make_app"]

log = _obs.get_logger("monitor")

Cancel = Callable[[str, str], Awaitable[str]]
"""Cancels a task (server, task id) through its server; returns what to tell the user."""


class Changes:
    """A counter of journal changes that any number of streams wait on."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    def bump(self) -> None:
        self.count += 1
        self._event.set()
        self._event = anyio.Event()

    async def wait(self, seen: int, timeout: float) -> int:
        """The count once it differs from ``seen``, or after ``timeout`` seconds.
        Deadline: ``timeout``. Cancelled: at once."""
        with anyio.move_on_after(timeout):
            while self.count == seen:
                await self._event.wait()
        return self.count


class AccessToken:
    """ASGI middleware: every HTTP request needs the run's access token, in the query
    (``?token=``, which sets the cookie) or in the cookie; else 403."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        cookie = f"mcp_tasks_monitor_{request.url.port or 80}"
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given.encode(), self.token):

            async def with_cookie(message: Any) -> None:
                if message["type"] == "http.response.start":
                    value = (
                        f"{cookie}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
                    ).encode()
                    message = {**message, "headers": [*message["headers"], (b"set-cookie", value)]}
                await send(message)

            await self.app(scope, receive, with_cookie)
            return
        kept = request.cookies.get(cookie, "")
        if kept and hmac.compare_digest(kept.encode(), self.token):
            await self.app(scope, receive, send)
            return
        refused = PlainTextResponse(
            "open the URL `mcp-tasks monitor` printed: it carries this run's token", 403
        )
        await refused(scope, receive, send)


async def _form(request: Request) -> dict[str, str]:
    """A urlencoded form's fields (the first value of each; at most 64 KiB read)."""
    if request.headers.get("content-type", "").split(";")[0] != (
        "application/x-www-form-urlencoded"
    ):
        return {}
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > 65536:
            return {}
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


async def _watch(reader: BoardReader, changes: Changes, tick: float) -> None:
    """Wake the streams on each change. A journal that cannot be read (a database restart) is
    logged and looked at again a tick later: the page stays up and catches up."""
    while True:
        try:
            changed = await reader.wait_change(tick)
        except JournalError as exc:
            log.warning("monitor: %s; looking again in %.0f s", exc, tick)
            await reader.reset_watch()
            await anyio.sleep(tick)
            changed = True
        if changed:
            changes.bump()


def make_app(
    reader: BoardReader,
    settings: PageSettings,
    *,
    cancel: Cancel | None = None,
    allowed_hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    tick: float = 5.0,
    access_token: str | None = None,
) -> Starlette:
    """The app over ``reader``. ``cancel`` (with ``settings.cancel_token``) enables cancelling;
    without both, the app is read-only."""
    if (cancel is None) != (settings.cancel_token is None):
        raise ValueError("cancel and settings.cancel_token go together")
    changes = Changes()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            group.start_soon(_watch, reader, changes, tick)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def chosen(request: Request) -> dict[str, str]:
        return {name: request.query_params.get(name, "") for name in FILTERS}

    async def board(request: Request) -> Response:
        current = await reader.board()
        if request.query_params.get("part") == "live":
            return HTMLResponse(board_live(current, chosen(request), settings))
        return HTMLResponse(board_page(current, chosen(request), settings))

    async def task(request: Request) -> Response:
        server = request.query_params.get("server", "")
        task_id = request.query_params.get("id", "")
        found = await reader.task(server, task_id)
        if found is None:
            return PlainTextResponse(f"no task {task_id!r} of {server!r} in the journal", 404)
        row, events = found
        now = await reader.now()
        if request.query_params.get("part") == "live":
            return HTMLResponse(task_live(row, events, now, settings))
        return HTMLResponse(task_page(row, events, now, settings))

    async def stream(request: Request) -> Response:
        async def lines() -> AsyncIterator[str]:
            seen = changes.count
            yield "retry: 2000\n\n"
            while True:
                count = await changes.wait(seen, tick)
                yield f"data: {'change' if count != seen else 'tick'}\n\n"
                seen = count

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(lines(), media_type="text/event-stream", headers=headers)

    async def cancel_task(request: Request) -> Response:
        if cancel is None or settings.cancel_token is None:
            return PlainTextResponse(
                "this monitor is read-only: start it with --allow-cancel to cancel tasks", 403
            )
        form = await _form(request)
        token = form.get("token") or request.headers.get("x-monitor-token") or ""
        if not hmac.compare_digest(token.encode(), settings.cancel_token.encode()):
            return PlainTextResponse("wrong or missing token: cancel refused", 403)
        server, task_id = form.get("server", ""), form.get("id", "")
        found = await reader.task(server, task_id)
        if found is None:
            return PlainTextResponse(f"no task {task_id!r} of {server!r} in the journal", 404)
        if not found[0].is_open:
            return PlainTextResponse(f"task {task_id!r} has ended ({found[0].status})", 409)
        said = await cancel(server, task_id)
        if "text/html" in request.headers.get("accept", ""):
            target = request.url_for("task").include_query_params(server=server, id=task_id)
            return RedirectResponse(str(target), 303)
        return PlainTextResponse(said)

    routes = [
        Route("/", board, name="board"),
        Route("/task", task, name="task"),
        Route("/changes", stream, name="changes"),
        Route("/cancel", cancel_task, methods=["POST"], name="cancel"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    if access_token is not None:
        middleware.append(Middleware(AccessToken, token=access_token))
    app: Any = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    return app  # type: ignore[no-any-return]
