"""``call``: a tool called plainly or as a task (``--task``), followed with ``--wait``; what
the generation refuses of it is said before anything is sent. Imported only for ``call``."""

from __future__ import annotations

import argparse
import datetime as dt
import shlex
import uuid
from typing import TYPE_CHECKING, Any

import attrs

from .._client import Client
from .._drivers import driver_for
from .._drivers.refusals import error_text
from .._exceptions import UnexpectedPlainResult, UsageError
from ..builders import TaskHandle, ToolCall
from ..models import CallToolResult
from ..outcomes import Completed
from ._exit import ExitCode
from ._follow import follow

if TYPE_CHECKING:
    from ._commands import Run

__all__ = ["CallArgs", "call", "call_args", "check_call"]


@attrs.frozen
class CallArgs:
    tool: str
    arguments: dict[str, Any]
    task: bool
    ttl: dt.timedelta | None
    wait: bool
    related: tuple[str, ...] = ()
    """``--related ID ...``: task ids sent as the call's related task ids (a draft)."""
    related_from_elsewhere: bool = False
    """``--related-from-elsewhere``: vouch for the ``--related`` ids though neither this run
    nor the journal got them from this server."""


def call_args(ns: argparse.Namespace) -> CallArgs:
    ttl = None if ns.ttl is None else dt.timedelta(seconds=ns.ttl)
    return CallArgs(
        ns.tool,
        ns.args,
        ns.task,
        ttl,
        ns.wait,
        tuple(ns.related),
        ns.related_from_elsewhere,
    )


def check_call(run: Run, ns: argparse.Namespace) -> None:
    """What the generation refuses of a call, in the command line's words, before anything
    is sent; and, for a task not waited on, whether a later run can reach it."""
    args = call_args(ns)
    options = run.options
    generation = options.generation.value
    driver = driver_for(options.generation)
    if args.ttl is not None:
        ttl_ms = int(args.ttl.total_seconds() * 1000)
        try:
            driver.task_call_params({}, ttl_ms)
        except UsageError:
            raise UsageError(
                f"--ttl: a {generation} client cannot ask for a ttl (the server picks how "
                "long it keeps a task): drop --ttl"
            ) from None
    if not args.task or args.wait:
        return
    if options.server.stdio is not None:  # a journal cannot keep a process
        run.out.warn(
            "over --stdio the server process ends with this run, and its tasks with it: "
            "add --wait to follow the task to its end"
        )
    elif options.journal is None and driver.unknown_task_hint():
        run.out.warn(
            f"a {generation} server may bind the task to this run's session, which "
            "ends with this run: later status, wait, result and cancel may not find "
            "it; add --journal FILE to keep the session (or --wait)"
        )


async def call(run: Run, client: Client, ns: argparse.Namespace) -> ExitCode:
    args = call_args(ns)
    out = run.out
    made = await related(run, client, ToolCall(args.tool, args.arguments), args)
    timeout = run.options.timeout
    if not args.task:
        result = await client.call_tool(made, timeout=timeout, inputs=run.router)
        return run.finished(None, Completed(None, result))
    task_call = made.as_task(args.ttl)
    if args.wait:
        # Ask for the task's progress to show it, where the generation reports it by token.
        token = f"mcp-tasks-{uuid.uuid4().hex}"
        task_call = client.driver.with_task_progress(task_call, token)
    try:
        started = await client.start(
            task_call, timeout=timeout, inputs=run.router, journal=run.journal
        )
    except UnexpectedPlainResult as exc:  # 2025-11-25: refused in an isError result
        if not exc.refused or not isinstance(exc.result, CallToolResult):
            raise
        return refused(run, args.tool, exc.result)
    if isinstance(started, CallToolResult):  # 2026-07-28: the server answered inline
        if started.is_error:
            return refused(run, args.tool, started)
        out.note("the server ran the call inline: no task was made")
        return out.outcome(None, Completed(None, started))
    out.created(started.task)
    if run.journal is not None:
        run.journaled.add(started.task.task_id)
    out.open_task, out.open_status = started.task.task_id, started.task.status.value
    if not args.wait:
        return ExitCode.COMPLETED
    return await follow(run, client, started, render=True)


async def related(run: Run, client: Client, made: ToolCall, args: CallArgs) -> ToolCall:
    """``made`` naming the ``--related`` ids: each as its journal entry for this server
    when the journal holds one (the Client checks the server), else as the bare id (which
    the Client refuses, UnknownRelatedTask, unless ``--related-from-elsewhere``)."""
    if args.related_from_elsewhere:
        return made.related_to(*args.related, from_elsewhere=True)
    named: list[TaskHandle] = []
    for task_id in args.related:
        entry = None
        if run.journal is not None:
            entry = await run.journal.get(client.transport.identity, task_id)
        named.append(task_id if entry is None else entry)
    return made.related_to(*named)


def refused(run: Run, tool: str, result: CallToolResult) -> ExitCode:
    """A task call answered with an error and no task (a misspelt tool, arguments the tool
    refuses): the server's reason on stderr, the result as the outcome, exit 1 (the same
    in both generations)."""
    said = error_text(result) or "(no text)"
    run.out.warn(f"the server refused the call of {tool!r} and made no task: {said}")
    hint = None
    if tool in said:  # the server names the tool it does not know (both peers do)
        steps = run.next_steps
        listing = shlex.join([*steps.server_words(), *steps.generation_words(), "tools"])
        hint = f"is {tool!r} the tool's name? `{listing}` lists the server's tools"
    return run.out.outcome(None, Completed(None, result), hint=hint, refused=True)
