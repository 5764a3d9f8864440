"""The exit codes of ``mcp-tasks``: one per way a run can end, stable for scripts."""

from __future__ import annotations

import enum
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..outcomes import Outcome

__all__ = ["ExitCode", "epilog", "for_error", "for_outcome"]


class ExitCode(enum.IntEnum):
    """How ``mcp-tasks`` ended (its process exit status)."""

    COMPLETED = 0
    """The command did what was asked; a waited task (or a plain call) completed."""
    FAILED = 1
    """The task failed, the tool's result has ``isError`` (also a task call the server
    refused in one, making no task), or the server refused the request with a JSON-RPC
    error."""
    USAGE = 2
    """Bad arguments (argparse's own code), or a request the library refuses as asked (a
    task-only tool called without ``--task``, ``list`` in 2026-07-28, the ``cli`` extra
    missing)."""
    CANCELLED = 3
    """The waited task ended ``cancelled``."""
    EXPIRED = 4
    """The task's ttl ran out, or ``--deadline`` was reached (the task may still run)."""
    INPUT = 5
    """The task asked for input and nothing answered it (no ``--inputs``, or no answer in
    the file for that question), or failed because the client declared no way to answer."""
    CONNECTION = 6
    """The server could not be reached or the connection broke (refused, HTTP error,
    the stdio child exited, a request got no answer within ``--timeout``)."""
    PROTOCOL = 7
    """The server broke the protocol (undecodable answers, an illegal status change)."""
    LOST = 8
    """The server does not know the task (unknown id, expired and deleted, or another
    session's task), or ``resume`` found it lost (its session expired or ended)."""
    JOURNAL = 9
    """The ``--journal`` file cannot be used (not a journal, corrupt, not the current
    user's, open to group or others); it was left as it is."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C)."""
    BROKEN_PIPE = 141
    """The reader of standard output went away (``mcp-tasks ... | head``): the run stops
    quietly, as a process the shell sees killed by SIGPIPE (128 + 13). A task it started
    keeps running on the server."""


def for_outcome(outcome: Outcome) -> ExitCode:
    """The exit code of a task's (or a plain call's) outcome."""
    # Imported here: `mcp-tasks --version` and `--help` need this module, not the models.
    from ..outcomes import Cancelled, Completed, Expired, Failed

    if isinstance(outcome, Completed):
        return ExitCode.FAILED if outcome.result.is_error else ExitCode.COMPLETED
    if isinstance(outcome, Failed):
        return ExitCode.FAILED
    if isinstance(outcome, Cancelled):
        return ExitCode.CANCELLED
    assert isinstance(outcome, Expired)
    return ExitCode.EXPIRED


def for_error(error: BaseException) -> ExitCode:
    """The exit code of the error that ended a run (most specific first)."""
    from .._exceptions import (
        DeadlineExceeded,
        InputNotHandled,
        InputRequired,
        InputStuck,
        MCPTasksError,
        ProtocolError,
        RequestTimeout,
        TaskNotFound,
        TransportError,
        UnexpectedPlainResult,
        UsageError,
    )

    # A JournalError exists only once the journal module is loaded: a run without --journal
    # never loads it for this check.
    journal = sys.modules.get("mcp_tasks_client.journal")
    if journal is not None and isinstance(error, journal.JournalError):
        return ExitCode.JOURNAL
    if isinstance(error, DeadlineExceeded):
        return ExitCode.EXPIRED
    if isinstance(error, (InputNotHandled, InputRequired, InputStuck)):
        return ExitCode.INPUT
    if isinstance(error, TaskNotFound):
        return ExitCode.LOST
    if isinstance(error, UsageError):
        return ExitCode.USAGE
    if isinstance(error, UnexpectedPlainResult) and error.refused:
        return ExitCode.FAILED  # the server refused the call in an isError result
    if isinstance(error, ProtocolError):
        return ExitCode.PROTOCOL
    if isinstance(error, (TransportError, RequestTimeout, OSError)):
        return ExitCode.CONNECTION
    if isinstance(error, MCPTasksError):
        return ExitCode.FAILED  # RPCError: the server refused the request
    return ExitCode.FAILED


def epilog() -> str:
    """The exit-code table for ``--help``."""
    words = {
        ExitCode.COMPLETED: "completed (the command did what was asked)",
        ExitCode.FAILED: "failed: the task failed, the result has isError, or a JSON-RPC error",
        ExitCode.USAGE: "usage error (bad arguments, or a call the library refuses as asked)",
        ExitCode.CANCELLED: "the task was cancelled",
        ExitCode.EXPIRED: "the task expired (ttl), or --deadline was reached",
        ExitCode.INPUT: "the task asked for input that nothing answered",
        ExitCode.CONNECTION: "connection or transport error (or no answer within --timeout)",
        ExitCode.PROTOCOL: "protocol error: the server sent what the protocol does not allow",
        ExitCode.LOST: "task not found (unknown, expired, another session's) or lost",
        ExitCode.JOURNAL: "the --journal file cannot be used (left as it is)",
        ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
        ExitCode.BROKEN_PIPE: "standard output's reader went away (| head); a task keeps running",
    }
    lines = [f"  {code.value:>3}  {words[code]}" for code in ExitCode]
    return "exit codes:\n" + "\n".join(lines)
