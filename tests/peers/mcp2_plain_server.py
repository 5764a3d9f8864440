"""mcp==2.3.0 MCPServer with one slow tool: a server with no tasks of either generation.

Runs in its own venv (``<peers root>/venv-mcp2``, see ``install.py``): the negative peer
(2026-07-28, no ``io.modelcontextprotocol/tasks`` extension, no 2025-11-25 tasks).

Usage:
  python mcp2_plain_server.py stdio
  python mcp2_plain_server.py http PORT      # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import MCPServer  # type: ignore[import-not-found, unused-ignore]

mcp = MCPServer("mcp2-plain")


@mcp.tool()
async def slow_echo(text: str = "hi", seconds: float = 0.2) -> str:
    await anyio.sleep(seconds)
    return f"echo: {text}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("stdio")
