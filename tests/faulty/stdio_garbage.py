"""A stdio MCP server that answers the handshake politely and every other request with a
result no MCP schema allows (``tools`` a string, a task without a status): for the CLI's
protocol-error exit code.

    python tests/faulty/stdio_garbage.py
"""

from __future__ import annotations

import json
import sys

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {}}},
    "serverInfo": {"name": "garbage", "version": "0"},
}
GARBAGE = {"tools": "not a list", "taskId": 7, "status": ["not", "a", "status"]}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # notifications/initialized
        result = INIT if message.get("method") == "initialize" else GARBAGE
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)


if __name__ == "__main__":
    main()
