"""Ctrl-C: how a run is interrupted, and what it says afterwards.

While a command runs, SIGINT does not raise KeyboardInterrupt wherever the interpreter happens
to be (inside a background poll, between creating a coroutine and starting it): it cancels the
command's scope (:func:`cancel_on_interrupt`), so the Poller, the Client and the transport
unwind as a cancellation unwinds them, and the run then ends as interrupted. A second Ctrl-C
while that unwinds stops at once. Before the loop runs and after it ends, Python's own
KeyboardInterrupt is caught by ``main`` (bare or inside an exception group).

After an interrupt the task the run started or followed keeps running on the server: the run
says so, with the command that cancels it (``--url`` or ``--stdio``, ``--generation``, and
``--journal`` when given; header values are never printed), and with ``--json`` the last
line is ``{"event": "interrupted", ...}``.
"""

from __future__ import annotations

import shlex
import signal

import anyio
import anyio.abc

from .._drivers import driver_for
from ._options import Options
from ._output import Output

__all__ = ["Interrupted", "cancel_command", "cancel_on_interrupt", "report_interrupt"]


class Interrupted:
    """Whether SIGINT came while the command ran. (A plain class: an attrs class compiles its
    generated methods on every command's start, issue 34.)"""

    __slots__ = ("seen",)

    def __init__(self, seen: bool = False) -> None:
        self.seen = seen


async def cancel_on_interrupt(
    scope: anyio.CancelScope,
    flag: Interrupted,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Turn the first SIGINT into a cancel of ``scope`` (and note it in ``flag``); a second
    one raises KeyboardInterrupt here, ending the run at once.

    A SIGINT the process was started with ignored (a shell's ``mcp-tasks ... &`` in a script)
    stays ignored: Ctrl-C at the terminal is not for a background job."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        task_status.started()
        return
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        task_status.started()
        async for _ in signals:
            if flag.seen:
                raise KeyboardInterrupt
            flag.seen = True
            scope.cancel()


def cancel_command(options: Options, task_id: str) -> str:
    """The ``mcp-tasks`` command that cancels ``task_id`` on the run's server."""
    words = ["mcp-tasks"]
    server = options.server
    if server.url is not None:
        words += ["--url", server.url]
        for name, _ in server.headers:
            words += ["--header", f"{name}: <value>"]
    else:
        assert server.stdio is not None
        words += ["--stdio", shlex.join(server.stdio)]
    words += ["--generation", options.generation.value]
    if options.journal is not None:
        words += ["--journal", options.journal]
    words += ["cancel", f"--id={task_id}"]
    return shlex.join(words)


def caveat(options: Options) -> str | None:
    """Why the cancel command may find nothing, when the run's connection was the task's."""
    if options.server.stdio is not None:
        return "over --stdio the server process stopped with this run, and the task may have too"
    if driver_for(options.generation).tasks_bound_to_session and options.journal is None:
        return (
            f"a {options.generation.value} server may bind the task to this run's session, "
            "which has ended (use --journal to keep a session)"
        )
    return None


def report_interrupt(output: Output, options: Options) -> None:
    """Say that the run was interrupted, and what became of its task."""
    task_id = output.open_task
    if task_id is None:
        output.interrupted(None, None, None, None)
        return
    output.interrupted(
        task_id, output.open_status, cancel_command(options, task_id), caveat(options)
    )
