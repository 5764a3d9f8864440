"""A server-side log of task requests, for tests that check who polled what and when.

Opt-in: with ``MCP_TASKS_PEER_REQUEST_LOG=PATH`` in its environment, a Python peer wraps its
HTTP app in :class:`RequestLog`, which appends one JSON line per ``initialize``, ``tasks/get``,
``tasks/result``, ``tasks/cancel`` and ``tasks/update`` it receives, and per JSON-RPC response
the client POSTs (an answer to the server's own request: ``"method": "response"``, its task the
related-task of the answer's ``_meta``): the time it arrived, the ``X-Worker`` header of the
request, the method and the task id (its ``Mcp-Name`` header too, if any; and, for an answer,
the keys or id it answers). The request is passed on unchanged. Without the variable nothing
is wrapped. Standard library only (it runs in each peer's venv).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

ENV = "MCP_TASKS_PEER_REQUEST_LOG"
LOGGED = frozenset({"initialize", "tasks/get", "tasks/result", "tasks/cancel", "tasks/update"})
RELATED = "io.modelcontextprotocol/related-task"


class RequestLog:
    """ASGI middleware: logs the task requests of each POST, then hands it to ``app``."""

    def __init__(self, app: Any, path: str | None = None) -> None:
        self.app = app
        self.path = path or os.environ[ENV]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        received: list[dict[str, Any]] = []
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in received if m["type"] == "http.request")
        self._log(scope, body)

        async def replay() -> Any:
            if received:
                return received.pop(0)
            return await receive()

        await self.app(scope, replay, send)

    def _log(self, scope: Any, body: bytes) -> None:
        try:
            parsed = json.loads(body)
        except ValueError:
            return
        headers = dict(scope.get("headers") or [])
        worker = headers.get(b"x-worker", b"").decode("latin-1")
        mcp_name = headers.get(b"mcp-name")
        lines = []
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(message, dict):
                continue
            entry: dict[str, Any] = {"t": time.time(), "worker": worker}
            if message.get("method") in LOGGED:
                params = message.get("params") or {}
                task_id = params.get("taskId") if isinstance(params, dict) else None
                entry.update(method=message["method"], task=task_id)
                if mcp_name is not None:
                    entry["mcp_name"] = mcp_name.decode("latin-1")
                if message["method"] == "tasks/update" and isinstance(params, dict):
                    entry["keys"] = sorted(params.get("inputResponses") or {})
            elif "method" not in message and "id" in message and "result" in message:
                result = message["result"] if isinstance(message["result"], dict) else {}
                related = (result.get("_meta") or {}).get(RELATED) or {}
                entry.update(method="response", task=related.get("taskId"), id=message["id"])
            else:
                continue
            lines.append(json.dumps(entry) + "\n")
        if lines:
            with open(self.path, "a", encoding="utf-8") as log:
                log.write("".join(lines))


def wrapped(app: Any) -> Any:
    """``app`` in a RequestLog when the environment asks for one, else ``app`` itself."""
    return RequestLog(app) if os.environ.get(ENV) else app
