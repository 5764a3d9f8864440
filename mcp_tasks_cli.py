"""The ``mcp-tasks`` command's entry point. It lives outside the ``mcp_tasks_client`` package
so that it runs before the package is imported: a Ctrl-C during those imports (most of a
second) ends the process as the signal does, exit status 130 in a shell, with no traceback.
:func:`mcp_tasks_client.cli.main` takes Ctrl-C over from its first line.
"""

from __future__ import annotations

# First, before any import that takes time: a Ctrl-C from here on ends the process as the
# signal does (``_signal`` is built in; ``signal`` would import ``enum`` first, long enough to
# be interrupted in with a traceback).
import _signal  # type: ignore[import-not-found]  # no stub; the C module under `signal`

# A SIGINT the process was started with ignored (a background job of a script) stays ignored.
if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # until the command line handles it

import gc  # built in, as quick as _signal


def main() -> int:
    """Run ``mcp-tasks`` (its arguments from ``sys.argv``); returns the exit code, for the
    process to exit with at once (the installed script's ``sys.exit(main())``)."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)  # (again: main may be called directly)
    # The process's garbage collector is the command line's from here: off while it imports
    # (collections then walk what all stays alive), on again for a long command's run
    # (mcp_tasks_client.cli.run_then_exit says when).
    gc.disable()
    from mcp_tasks_client.cli import run_then_exit

    code = run_then_exit()
    leaving()
    return code


def leaving() -> None:
    """The process exits next: every object it holds is moved out of the garbage collector's
    reach (``gc.freeze``), so the interpreter's collections at exit do not walk the modules,
    classes and functions the run imported. That walk was about 15% of ``mcp-tasks status``'s
    CPU (measured: benchmarks/RESULTS.md, 2026-12-06 at the end of issue 34). Nothing is lost:
    the ``atexit`` handlers still run (logging's flush, an OpenTelemetry exporter's), and Python
    never promised a finalizer to an object still alive at exit. Only here, never in
    :func:`mcp_tasks_client.cli.main`, which a program may call and then go on."""
    gc.freeze()


if __name__ == "__main__":
    raise SystemExit(main())
