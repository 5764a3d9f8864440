"""``python -m mcp_tasks_client.cli``: the same as the ``mcp-tasks`` command."""

from . import main

raise SystemExit(main())
