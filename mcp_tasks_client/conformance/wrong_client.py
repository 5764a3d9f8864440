"""A deliberately wrong task client: each scenario of the client suite must fail it.

``python -m mcp_tasks_client.conformance.wrong_client URL`` speaks raw JSON-RPC over HTTP
(httpx, no library Client) under the suite's contract, and breaks the rule the scenario
judges: asks for a task it was not asked for (``opt-in``), polls as fast as it can
(``poll-interval``), cancels with ``notifications/cancelled`` (``cancel``), never calls
``tasks/result`` on ``input_required`` (``input-required-result``), drops a task whose
created answer it cannot decode (``odd-create``), leaves the caller's ttl out and gives up a
task whose ttl is null (``ttl``), answers every ``inputRequests`` key each
time a poll shows it (``input-requests-once``), and retries an MRTR call with its
``requestState`` trimmed under the same id (``request-state``), answers a task's question
without its related-task ``_meta`` (``related-task``), refuses a question that names no task
(``untagged-question``), sends no ``Mcp-Name`` header (``routing-headers``), and gives its
task up when the server refuses its ``subscriptions/listen`` (``listen-fallback``), and
declares it serves task-augmented questions, then answers one plainly and refuses every
``tasks/*`` (``receiver``). It exists to show each check can fail.

With ``MCP_WRONG_CLIENT_MISTAKE`` set to a name of :data:`MISTAKES` it makes that one mistake
instead, and otherwise keeps the rules: each is a mistake only one check of its scenario
catches (a check that judged by a proxy once let it pass).

May import: ``models`` (the extension's name).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import httpx

from ..models import TASKS_EXTENSION

JSON = dict[str, Any]
_ASKED = frozenset({"related-task", "untagged-question", "input-required-result"})
_RELATED = "io.modelcontextprotocol/related-task"
MISTAKE_ENV = "MCP_WRONG_CLIENT_MISTAKE"
MISTAKES: dict[str, tuple[str, str]] = {
    "cancel-other-task": ("cancel", "its tasks/cancel names a task the server never created"),
    "cancel-no-name": ("cancel", "its tasks/cancel carries no Mcp-Name (2026-07-28)"),
    "update-no-name": ("input-requests-once", "its tasks/update carries no Mcp-Name"),
    "poll-once": ("odd-create", "it polls the created task once, then gives it up"),
    "answer-wrong-id": (
        "input-required-result",
        "it answers the question under its own tasks/result's id, not the question's",
    ),
    "retry-drops-task": (
        "request-state",
        "its MRTR retry leaves out the task opt-in the original call declared",
    ),
}
"""The single mistakes, by name: (the scenario that shows it, what the client does)."""


class Wire:
    """Raw JSON-RPC over Streamable HTTP, one generation's headers."""

    def __init__(
        self,
        url: str,
        version: str,
        *,
        name_header: bool = True,
        omit_name: frozenset[str] = frozenset(),
    ) -> None:
        self.url, self.version = url, version
        self.name_header, self.omit_name = name_header, omit_name
        self.http = httpx.Client(timeout=10)
        self.ids = iter(range(1, 10_000))
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }

    def post(
        self,
        method: str,
        params: JSON | None = None,
        *,
        notify: bool = False,
        rid: int | None = None,
    ) -> Any:
        body: JSON = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            body["id"] = next(self.ids) if rid is None else rid
        headers = {**self.headers, "MCP-Protocol-Version": self.version}
        if self.version != "2025-11-25":
            headers["Mcp-Method"] = method
            name = body["params"].get("name" if method == "tools/call" else "taskId")
            if self.name_header and method not in self.omit_name and isinstance(name, str):
                headers["Mcp-Name"] = name
            body["params"].setdefault("_meta", {})["io.modelcontextprotocol/protocolVersion"] = (
                self.version
            )
        response = self.http.post(self.url, json=body, headers=headers)
        if sid := response.headers.get("mcp-session-id"):
            self.headers["Mcp-Session-Id"] = sid
        if notify or not response.content:
            return None
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if message.get("id") == body["id"] and "method" not in message:
                        return message
            return None
        return response.json()

    def reply(self, answer: JSON) -> None:
        """POST a JSON-RPC response (an answer to the server's question)."""
        headers = {**self.headers, "MCP-Protocol-Version": self.version}
        self.http.post(self.url, json={"jsonrpc": "2.0", **answer}, headers=headers)

    def questions(self, task_id: str) -> tuple[Any, JSON | None]:
        """Open tasks/result as a stream: its id, and the first question on it (then close
        it)."""
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tasks/result"}
        body["params"] = {"taskId": task_id}
        headers = {**self.headers, "MCP-Protocol-Version": self.version}
        with self.http.stream("POST", self.url, json=body, headers=headers) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if "method" in message and "id" in message:
                        return body["id"], dict(message)
        return body["id"], None


def serve_wrongly(wire: Wire, params: JSON, content: JSON) -> None:
    """The ``receiver`` scenario: call the tool with its stream read as it comes, and answer
    the server's task-augmented question plainly (its ``task`` ignored, though the client
    declared it serves such tasks), and every ``tasks/*`` with -32601."""
    body = {"jsonrpc": "2.0", "id": next(wire.ids), "method": "tools/call", "params": params}
    headers = {**wire.headers, "MCP-Protocol-Version": wire.version}
    with wire.http.stream("POST", wire.url, json=body, headers=headers) as response:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if "method" not in message or "id" not in message:
                if message.get("id") == body["id"]:
                    return
                continue
            if message["method"] == "elicitation/create":
                result = {"action": "accept", "content": content}
                wire.reply({"id": message["id"], "result": result})
            else:
                error = {"code": -32601, "message": f"{message['method']} not served"}
                wire.reply({"id": message["id"], "error": error})


def answer(wire: Wire, wrong: str | None, mistake: str | None, task_id: str, content: JSON) -> None:
    """The question on tasks/result, answered: without related-task _meta (``related-task``),
    refused because it names no task (``untagged-question``), under the wrong id
    (``answer-wrong-id``), else as the rules say (its related-task _meta echoed)."""
    stream_id, question = wire.questions(task_id)
    if question is None:
        return
    meta = (question.get("params") or {}).get("_meta") or {}
    if wrong == "untagged-question" and _RELATED not in meta:
        error = {"code": -32600, "message": "a question naming no task: dropped"}
        wire.reply({"id": question["id"], "error": error})
        return
    result: JSON = {"action": "accept", "content": content}
    if wrong != "related-task" and _RELATED in meta:
        result["_meta"] = {_RELATED: meta[_RELATED]}
    reply_id = stream_id if mistake == "answer-wrong-id" else question["id"]
    wire.reply({"id": reply_id, "result": result})


def main(url: str) -> None:
    scenario = os.environ["MCP_CONFORMANCE_SCENARIO"]
    version = os.environ["MCP_CONFORMANCE_PROTOCOL_VERSION"]
    context: JSON = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    mistake = os.environ.get(MISTAKE_ENV) or None
    if mistake is not None and mistake not in MISTAKES:
        sys.exit(f"no mistake {mistake!r} (known: {', '.join(MISTAKES)})")
    wrong = scenario if mistake is None else None  # the scenario's own mistake, or none
    omit = {"cancel-no-name": "tasks/cancel", "update-no-name": "tasks/update"}.get(mistake or "")
    wire = Wire(
        url,
        version,
        name_header=wrong != "routing-headers",
        omit_name=frozenset({omit} if omit else ()),
    )
    g1 = version == "2025-11-25"
    if g1:
        info = {"name": "wrong-client", "version": "0"}
        capabilities: JSON = {}
        if scenario == "receiver":  # declared, and then not kept
            elicit: JSON = {"elicitation": {"create": {}}}
            capabilities = {"elicitation": {}, "tasks": {"requests": elicit}}
        if scenario in _ASKED:
            capabilities["elicitation"] = {}
        opening = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": info}
        wire.post("initialize", opening)
        wire.post("notifications/initialized", notify=True)
    params: JSON = {"name": context["tool"], "arguments": context.get("arguments") or {}}
    if context.get("task") or wrong == "opt-in":  # opt-in: a task nobody asked for
        if g1:
            ttl = context.get("ttl")  # ttl: the caller's ttl left out
            params["task"] = {"ttl": ttl} if ttl is not None and wrong != "ttl" else {}
        else:
            caps: JSON = {"extensions": {TASKS_EXTENSION: {}}}
            params["_meta"] = {"io.modelcontextprotocol/clientCapabilities": caps}
    if scenario == "receiver":
        serve_wrongly(wire, params, context.get("answer") or {})
        return
    created = wire.post("tools/call", dict(params)) or {}
    result = created.get("result") or {}
    accept = {"action": "accept", "content": context.get("answer") or {}}
    if result.get("resultType") == "input_required":  # MRTR
        keys = result.get("inputRequests") or {}
        retry = {**params, "inputResponses": dict.fromkeys(keys, accept)}
        retry["requestState"] = result.get("requestState")
        rid = None
        if wrong == "request-state":  # trimmed, under the same id
            retry["requestState"] = str(result.get("requestState", "")).strip()
            rid = created.get("id")
        if mistake == "retry-drops-task":
            retry.pop("_meta", None)
        created = wire.post("tools/call", retry, rid=rid) or {}
        result = created.get("result") or {}
    task = result.get("task") if g1 else result
    if not isinstance(task, dict) or "taskId" not in task:
        return
    task_id = task["taskId"]
    if wrong == "odd-create" and ("ttl" not in task and "ttlMs" not in task):
        sys.exit("the created task did not decode: no ttl")  # and its id is lost
    if wrong == "ttl" and task.get("ttl", task.get("ttlMs")) is None:
        sys.exit("a task without a ttl: given up")
    if context.get("listen"):
        listen = {"notifications": {"taskIds": [task_id]}}
        if "error" in (wire.post("subscriptions/listen", listen) or {}) and wrong:
            return  # the listen refused, the task is given up: no polls
    if context.get("cancel"):
        if wrong == "cancel":
            wire.post("notifications/cancelled", {"requestId": created.get("id")}, notify=True)
        else:
            named = f"{task_id}-other" if mistake == "cancel-other-task" else task_id
            wire.post("tasks/cancel", {"taskId": named})
        return
    follow(wire, wrong, mistake, task_id, context, accept)


def follow(
    wire: Wire, wrong: str | None, mistake: str | None, task_id: str, context: JSON, accept: JSON
) -> None:
    """Poll the task to its end, answering what it asks, with the mistake chosen."""
    answered: set[str] = set()
    asked_on_stream = False
    for _ in range(50):
        got = (wire.post("tasks/get", {"taskId": task_id}) or {}).get("result") or {}
        if got.get("status") in ("completed", "failed", "cancelled"):
            break
        if mistake == "poll-once":
            return  # named once more, then given up
        if got.get("status") == "input_required" and wrong == "input-required-result":
            break  # never asks tasks/result: the question is never delivered
        on_stream = got.get("status") == "input_required" and "inputRequests" not in got
        if on_stream and not asked_on_stream:  # 2025-11-25: the question comes on tasks/result
            asked_on_stream = True
            answer(wire, wrong, mistake, task_id, context.get("answer") or {})
        asked = got.get("inputRequests")
        if isinstance(asked, dict) and asked:
            # wrong: every key, every time it is shown; else each key once
            keys = set(asked) if wrong == "input-requests-once" else set(asked) - answered
            if keys:
                responses = dict.fromkeys(sorted(keys), accept)
                wire.post("tasks/update", {"taskId": task_id, "inputResponses": responses})
                answered |= keys
        if wrong != "poll-interval":
            time.sleep(max(got.get("pollInterval") or got.get("pollIntervalMs") or 50, 50) / 1000)


if __name__ == "__main__":
    main(sys.argv[-1])
