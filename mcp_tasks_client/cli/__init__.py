"""The ``mcp-tasks`` command line (``python -m mcp_tasks_client.cli`` runs it too).

Its terminal display needs the ``cli`` extra (``pip install 'mcp-tasks-client[cli]'``, which
brings rich); the library itself never imports rich. Parsing is argparse; the run is on trio.
``mcp-tasks --help`` lists the subcommands, the options and the exit codes (:class:`ExitCode`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._exit import ExitCode

__all__ = ["ExitCode", "main"]

MISSING_EXTRA = (
    "mcp-tasks: the command line needs the 'cli' extra (it brings rich): "
    "pip install 'mcp-tasks-client[cli]'\n"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mcp-tasks`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        import rich  # noqa: F401 - the extra's presence, checked before anything else
    except ImportError:
        sys.stderr.write(MISSING_EXTRA)
        return int(ExitCode.USAGE)

    import anyio

    from ._commands import run
    from ._options import parse
    from ._output import JsonOutput, Output

    try:
        options, command, ns = parse(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else int(ExitCode.USAGE)
    output: Output
    if options.json or not sys.stdout.isatty():
        output = JsonOutput(options.generation)
    else:
        from ._tty import RichOutput

        output = RichOutput(options.generation)
    try:
        return int(anyio.run(run, options, command, ns, output, backend="trio"))
    except KeyboardInterrupt:
        sys.stderr.write("mcp-tasks: interrupted\n")
        return int(ExitCode.INTERRUPTED)
