"""Following a task to its end (``wait``, ``result``, ``call --task --wait``), and the server's
GET stream a 2025-11-25 run opens to hear its questions and progress. Imported only by the
commands that follow a task or answer input: ``status``, ``cancel``, ``tools`` and ``list``
never load the Poller."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

from .._client import Client
from .._exceptions import (
    BackedOff,
    DeadlineExceeded,
    GetStreamUnavailable,
    InputNotHandled,
    MCPTasksError,
    RequestTimeout,
    TransportError,
    UnsupportedInGeneration,
)
from .._io.http import HttpTransport
from ..engine import WatchItem
from ..models import CreateTaskResult, Task, TaskStatus
from ._connect import make_poller
from ._exit import ExitCode

if TYPE_CHECKING:
    from ._commands import Run

__all__ = ["follow", "listen_for_input"]


async def follow(
    run: Run, client: Client, ref: CreateTaskResult | str, *, render: bool
) -> ExitCode:
    """Watch the task to its end (the live line or JSON lines when ``render``), then
    report its outcome, or the error or deadline that ended the wait."""
    out = run.out
    task_id = ref.task.task_id if isinstance(ref, CreateTaskResult) else ref
    last = ref.task if isinstance(ref, CreateTaskResult) else None
    out.open_task = task_id
    deadline = run.options.deadline
    unanswered: InputNotHandled | None = None
    await listen_for_progress(run, client)
    async with make_poller(client, run.options, run.router, run.journal) as poller:
        try:
            async with (
                out.following(task_id, poller, show=render) as view,
                contextlib.aclosing(_generator(poller.watch(ref, deadline=deadline))) as items,
            ):
                async for item in items:
                    if render:
                        out.item(view, item)
                    if not isinstance(item, Task):
                        continue
                    last = item
                    out.open_status = item.status.value
                    if item.status is TaskStatus.INPUT_REQUIRED and run.router is None:
                        # Nothing here can answer (and nothing was declared): say how.
                        requests = item.input_requests or {}
                        asked = next(iter(requests), None)
                        method = "input" if asked is None else requests[asked].method
                        unanswered = InputNotHandled(task_id, method, asked)
                        break
            if unanswered is not None:  # reported once the live line has stopped
                return run.failed(unanswered, task_id, last, waited=True)
            # The watch ended at the terminal snapshot: its outcome, without a new poll.
            outcome = await poller.wait(last if last is not None else ref)
        except DeadlineExceeded as exc:
            seen = exc.snapshots.get(task_id)
            seen = seen if isinstance(seen, Task) else last
            return run.failed(exc, task_id, seen, waited=True)
        except MCPTasksError as exc:
            return run.failed(exc, task_id, last, waited=True)
        finally:  # --on-busy back-off: every backoff said, never silent
            for warning in poller.warnings:
                if isinstance(warning, BackedOff):
                    out.warn(str(warning))
    return run.finished(task_id, outcome)


async def listen(run: Run, client: Client) -> None:
    """2025-11-25 over HTTP: open the server's standalone GET stream, once per run (when
    the server offers one); what kept it from opening is kept in ``run.listen_error``."""
    if run.listen_tried or not isinstance(client.transport, HttpTransport):
        return
    run.listen_tried = True
    try:
        await client.open_listen_stream(timeout=run.options.timeout)
    except UnsupportedInGeneration:
        return  # the generation has no such stream (its status comes by listen)
    except (GetStreamUnavailable, TransportError, RequestTimeout) as exc:
        run.listen_error = exc


async def listen_for_input(run: Run, client: Client) -> None:
    """With ``--inputs``: the GET stream is open before the first call, so a question the
    server sends there as soon as it has made a task (fastmcp does, untagged) is heard:
    a server sends nothing on a stream that is not open. A server that offers none
    (HTTP 405) asks elsewhere, so only another failure is worth a note."""
    await listen(run, client)
    error = run.listen_error
    if error is not None and not isinstance(error, GetStreamUnavailable):
        run.out.note(
            f"questions the server sends on its GET stream go unanswered: it did not open ({error})"
        )


async def listen_for_progress(run: Run, client: Client) -> None:
    """2025-11-25 over HTTP: a task's progress and status notifications come on the
    standalone GET stream, which is opened (when the server offers one) to show them."""
    await listen(run, client)
    if run.listen_error is not None:
        run.out.note(
            f"no progress shown: the server's GET stream did not open ({run.listen_error})"
        )


def _generator(
    items: AsyncIterator[WatchItem],
) -> AsyncGenerator[WatchItem, None]:
    """``Poller.watch()``'s items as the async generator they are (closed when left early)."""
    assert isinstance(items, AsyncGenerator)
    return items
