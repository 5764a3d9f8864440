"""The ``testing`` extra's check: importing the kit without it names the extra to install.

Job: turn a bare ``No module named 'hypothesis'`` into the command that fixes it.
May import: the standard library only.
Theory of operation: imported first by ``mcp_tasks_client.testing``; it raises
``ModuleNotFoundError`` (``name`` set to the missing module, as Python's own) before any module
of the kit imports hypothesis.
"""

from __future__ import annotations

import importlib.util

INSTALL = "pip install 'mcp-tasks-client[testing]'"

# hypothesis only: h11, the extra's other module, is a dependency of the library (and httpx).
try:
    _found = importlib.util.find_spec("hypothesis") is not None
except ValueError:  # in sys.modules as None: blocked, as if not installed
    _found = False
if not _found:
    raise ModuleNotFoundError(
        "mcp_tasks_client.testing needs the `testing` extra (hypothesis is not installed): "
        f"{INSTALL}",
        name="hypothesis",
    )
