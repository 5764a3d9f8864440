"""``python -m mcp_tasks_client.cli``: the same as the ``mcp-tasks`` command."""

import gc

from . import main

code = main()
gc.freeze()  # the process exits next: its last collections need not walk the run's objects
raise SystemExit(code)
