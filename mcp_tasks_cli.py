"""The ``mcp-tasks`` command's entry point. It lives outside the ``mcp_tasks_client`` package
so that it runs before the package is imported: a Ctrl-C during those imports (most of a
second) ends the process as the signal does, exit status 130 in a shell, with no traceback.
:func:`mcp_tasks_client.cli.main` takes Ctrl-C over from its first line.
"""

from __future__ import annotations

import signal


def main() -> int:
    """Run ``mcp-tasks`` (its arguments from ``sys.argv``); returns the exit code."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # until the command line handles it
    from mcp_tasks_client.cli import main as run

    return run()


if __name__ == "__main__":
    raise SystemExit(main())
