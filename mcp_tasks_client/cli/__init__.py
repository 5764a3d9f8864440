"""The ``mcp-tasks`` command line (``python -m mcp_tasks_client.cli`` runs it too).

Its terminal display needs the ``cli`` extra (``pip install 'mcp-tasks-client[cli]'``, which
brings rich); the library itself never imports rich. Parsing is argparse; the run is on trio,
but for the quick commands (:data:`QUICK_COMMANDS`), which run on asyncio.
``mcp-tasks --help`` lists the subcommands, the options and the exit codes (:class:`ExitCode`).
"""

from __future__ import annotations

import contextlib
import gc
import signal
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._exit import ExitCode

if TYPE_CHECKING:
    from ._options import Options
    from ._output import Output

__all__ = ["QUICK_COMMANDS", "ExitCode", "main"]

QUICK_COMMANDS = frozenset({"status", "cancel", "tools", "list"})
"""The commands that send a request or two and end, which a script may call in a loop: they run
on asyncio, whose loop comes with the interpreter, and so never import trio (about a seventh of
``mcp-tasks status``'s start-up, measured). Every other command (one that follows a task,
answers input for long, resumes or runs servers) runs on trio, the reference backend. Both
loops end a Ctrl-C the same way (exit 130, the cancel hint)."""

MISSING_EXTRA = (
    "mcp-tasks: the command line needs the 'cli' extra (it brings rich): "
    "pip install 'mcp-tasks-client[cli]'\n"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mcp-tasks`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    Ctrl-C, wherever it lands, ends the run with exit code 130 and no traceback: while a
    command runs it cancels the command's scope (so everything it started unwinds as a
    cancellation does), and a task started or followed is said to keep running, with the
    command that cancels it (with ``--json``, in a final "interrupted" line). The garbage
    collector is the calling program's: left as it is.
    """
    return run_then_exit(argv, exiting=False)


def run_then_exit(argv: Sequence[str] | None = None, *, exiting: bool = True) -> int:
    """:func:`main` for the ``mcp-tasks`` script, whose process ends when this returns: it
    is called with the garbage collector off (the script turns it off before its first
    import) and owns it from there.

    Collections during the imports walk modules, classes and functions that all stay alive,
    and free nothing. So the collector stays off while the command's modules load; a quick
    command (:data:`QUICK_COMMANDS`: a request or two, then the end) runs with it off to its
    end, what it allocates freed by reference counting, a cycle it leaves living until the
    process ends a moment later. Any other command, which may follow a task for hours, has
    the imported heap moved out of the collector's reach (``gc.freeze``: none of it is
    garbage) and then the collector on, as usual. The classes a status builds take their
    attrs methods from a table compiled with the package (:mod:`._ahead`) instead of having
    attrs compile them. Measured: benchmarks/RESULTS.md (issue 34). With ``exiting=False``
    (:func:`main`) neither the collector nor attrs is touched.
    """
    if list(sys.argv[1:] if argv is None else argv)[:1] == ["monitor"]:
        from ..monitor import main as monitor  # its own options and extra

        _collecting(exiting)  # a web server, for hours
        return monitor(list(sys.argv[1:] if argv is None else argv)[1:])
    output: Output | None = None
    options: Options | None = None
    try:
        # From here a Ctrl-C is a KeyboardInterrupt, caught below (the mcp-tasks entry point
        # lets the signal end the process while the package is imported). A handler of the
        # program that called main() is left alone.
        with contextlib.suppress(ValueError):  # ValueError: not the main thread
            if signal.getsignal(signal.SIGINT) is signal.SIG_DFL:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            import rich  # noqa: F401 - the extra's presence, checked before anything else
        except ImportError:
            sys.stderr.write(MISSING_EXTRA)
            return int(ExitCode.USAGE)
        if exiting:  # attrs' methods for the status classes, compiled ahead (cli/_ahead.py)
            from ._ahead import install

            install()
        from ._options import parse

        try:
            options, command, ns = parse(argv)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            return exc.code if isinstance(exc.code, int) else int(ExitCode.USAGE)
        # Only now the library and the run: --version, --help and a usage error need neither
        # (a script calling `mcp-tasks` in a loop pays for what the command uses).
        import anyio

        from .._exceptions import UsageError
        from ._commands import run
        from ._output import JsonOutput

        if options.json or not sys.stdout.isatty():
            output = JsonOutput(options.generation)
        else:
            from ._tty import RichOutput

            output = RichOutput(options.generation)
        if options.output is not None:
            try:
                output.keep_result(options.output)
            except UsageError as exc:
                return int(output.error(exc))
        if command in QUICK_COMMANDS:
            return int(anyio.run(run, options, command, ns, output, backend="asyncio"))
        _collecting(exiting)
        return int(anyio.run(run, options, command, ns, output, backend="trio"))
    except BaseException as exc:
        if _matches(exc, BrokenPipeError):
            # stdout's reader left (`| head`): nothing more can be said there, and the
            # interpreter's own flush at exit must not fail again with a traceback.
            from ._output import quiet_stdout

            quiet_stdout()
            return int(ExitCode.BROKEN_PIPE)
        if not _interrupted(exc):
            raise
        # Whatever was underway (imports, the loop's start, a second Ctrl-C while the
        # first unwound) is abandoned; the process ends here.
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        if output is None or options is None:
            sys.stderr.write("mcp-tasks: interrupted\n")
        else:
            from ._interrupt import report_interrupt

            report_interrupt(output, options)
        return int(ExitCode.INTERRUPTED)


def _collecting(exiting: bool) -> None:
    """A long run starts (the script's process): the imported heap out of the collector's
    reach (``gc.freeze``: none of it is garbage), and the collector on."""
    if exiting:
        gc.freeze()
        gc.enable()


def _interrupted(error: BaseException) -> bool:
    """A Ctrl-C: a KeyboardInterrupt, bare or inside an exception group (one that landed in a
    background task of a task group)."""
    return _matches(error, KeyboardInterrupt)


def _matches(error: BaseException, kind: type[BaseException]) -> bool:
    """``error`` is a ``kind``, bare or inside an exception group."""
    if isinstance(error, kind):
        return True
    # BaseExceptionGroup: the builtin (3.11+) or the backport's (3.10), named alike.
    is_group = any(cls.__name__ == "BaseExceptionGroup" for cls in type(error).__mro__)
    inner = getattr(error, "exceptions", None)
    return is_group and isinstance(inner, tuple) and any(_matches(e, kind) for e in inner)
