"""The live probe's script for a 2025-11-25 server.

The opening (V-02), ``tools/list``, ``tasks/list`` (V-19), an unknown task id (V-14); over
HTTP the standalone GET stream opened before any call, since a server may send a task's
question there (V-21, V-27d); each safe tool called plainly where it must be a task (V-16) and,
if the caller allows, as a task where it must not (V-17), then as a task: an early
``tasks/result`` sent at once while the task is not terminal, and a ``tasks/get`` right after
its answer (V-11: it must block, not answer early), waited on (V-04 to V-13), its questions
answered with V-21 and V-22 checked while they are open, read with ``tasks/result``, cancelled
once ended (V-14); one more task cancelled while it runs (C-41, V-15). Last, a second session
lists tasks (V-28) and a session of the probe's own checks V-27's probe-only parts.

A question that names no task is tied to one only when that task was the probe's only open
work (no ``tools/call`` or other request of its own pending): then its missing related-task
``_meta`` fails V-21, and the task's ``tasks/get`` while it is open is V-22's evidence.

May import what ``_probe.py`` may, and ``_probe``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import httpx

from .._client import Client, Timeouts
from .._exceptions import (
    GetStreamUnavailable,
    MCPTasksError,
    RPCError,
    SessionExpired,
    TaskNotCancellable,
    TaskNotFound,
)
from .._generation import Generation
from .._sansio.scheduler import PollPolicy
from ..builders import ToolCall
from ..engine import Poller
from ..inputs import InputContext, InputRouter
from ..models import CreateTaskResult, TaskSupport, Tool
from ..outcomes import Failed
from ._probe import TERMINAL, UNKNOWN_TASK, Probe, Tap, describe, error_of
from ._report import ProbeVerdict
from .validator import Validator

__all__ = ["Probe2025"]

JSON = dict[str, Any]
_BOGUS_VERSION = "1999-01-01"


class Probe2025(Probe):
    """The probe of a 2025-11-25 server."""

    generation = Generation.V2025_11_25

    async def script(self, client: Client, router: InputRouter) -> None:
        self._v02()
        await self._run(client, router)

    async def input_asked(self, ctx: InputContext) -> None:
        question = self._question(ctx)
        what = f"{ctx.method} id {ctx.request_id!r}"
        self.exercise("elicited", describe("received", question) if question else what)
        task_id = ctx.task_id
        if task_id is not None:
            self.check("V-21", ProbeVerdict.PASS, f"{what} named task {task_id}", question)
        else:
            task_id, pending = self._sole_task()
            if task_id is None:
                self.note(
                    ("V-21", "V-22"),
                    f"{what} named no task while other work was open ({pending}): not tied to one",
                )
                return
            self.check(
                "V-21",
                ProbeVerdict.FAIL,
                f"{what} carries no related-task _meta, yet it arrived while task {task_id} "
                f"was the probe's only open work (pending: {pending or 'nothing'})",
                question,
            )
        if self.client is not None:
            await self._v22(self.client, task_id, tagged=ctx.task_id is not None)

    def _question(self, ctx: InputContext) -> JSON:
        for direction, raw in reversed(self.log):
            if direction == "received" and raw.get("id") == ctx.request_id and "method" in raw:
                return raw
        return {}

    def _sole_task(self) -> tuple[str | None, str]:
        """The probe's one open task, when nothing else of its own is pending (else None),
        and what is pending."""
        first = self.first
        if first is None:
            return None, "unknown"
        pending = sorted(set(first.pending.values()))
        busy = [m for m in pending if not m.startswith("tasks/")]
        open_tasks = [t for t in self.task_tools if first.status.get(t) not in TERMINAL]
        if busy or len(open_tasks) != 1:
            return None, ", ".join(pending) + f"; open tasks {sorted(open_tasks)}"
        return open_tasks[0], ", ".join(pending)

    def _v02(self) -> None:
        for direction, raw in self.log:
            if direction == "sent" and raw.get("method") == "notifications/initialized":
                break
            method = raw.get("method")
            if direction == "received" and "id" in raw and method not in (None, "ping"):
                self.check(
                    "V-02",
                    ProbeVerdict.WARN,
                    f"{method} arrived before notifications/initialized was sent",
                    raw,
                )
        else:
            return
        if "V-02" not in self.checks:
            self.check("V-02", ProbeVerdict.PASS, "nothing but the answer before initialized")

    async def _v22(self, client: Client, task_id: str, *, tagged: bool = True) -> None:
        task = await self._step(("V-22",), client.get_task(task_id))
        if task is None:
            return
        answer = self.last_answer("tasks/get") or {}
        how = "" if tagged else " (its untagged question, tied to it as the only open task)"
        if task.status.value == "input_required":
            self.check(
                "V-22",
                ProbeVerdict.PASS,
                f"task {task_id} was input_required while asked{how}",
                answer,
            )
        else:
            self.check(
                "V-22",
                ProbeVerdict.WARN,
                f"task {task_id} was {task.status.value} while its question was open{how}",
                answer,
            )

    async def _run(self, client: Client, router: InputRouter) -> None:
        caps = client.server_capabilities.tasks
        lists = caps is not None and caps.list
        cancels = caps is not None and caps.cancel
        calls = caps is not None and caps.tools_call
        tools = await self._tools(client)
        if lists:
            await self._step(("V-19",), self._list_ids(client))
        else:
            self.note(("V-19",), "the server does not declare tasks.list")
        await self._unknown_task(client)
        if self.first is not None and self.first.sees_http:
            await self._step(("V-21", "V-27d"), self._listen(client))
        policy = PollPolicy(floor=0.05, initial=0.05, jitter=0.0)
        async with Poller(client, policy, inputs=router) as poller:
            for tool, arguments in self._safe(tools):
                support = tool.task_support
                call = ToolCall(tool.name, dict(arguments))
                if support is TaskSupport.REQUIRED:
                    self.exercise("plain_required", f"{tool.name!r} called without a task")
                    await self._step(("V-16",), self._raw_call(client, call, task=False))
                if support is TaskSupport.FORBIDDEN:
                    await self._v17(client, call)
                    continue
                if not calls:
                    self.exercise("undeclared_task_call", f"{tool.name!r} called as a task")
                    await self._step(("V-18",), self._raw_call(client, call, task=True))
                    continue
                await self._step(
                    ("V-04", "V-19"), self._task(client, poller, tool, call, lists, cancels)
                )
            if calls and cancels:
                await self._cancel(client, tools)
            elif not cancels:
                self.note(("C-41", "V-15", "V-14"), "the server does not declare tasks.cancel")
        if lists and self.v28_task is not None:
            # Last: a second session's end must not disturb the steps of the first (mcp 1.30
            # stops task support of every session when one ends).
            await self._step(("V-28",), self._v28(client, self.v28_task))
        elif not lists:
            self.note(("V-28",), "the server does not declare tasks.list")
        await self._step(("V-27",), self._v27())

    async def _listen(self, client: Client) -> None:
        """Open the standalone GET stream before any call: a server may send a task's
        question there, and sends nothing while no stream is open."""
        try:
            await client.open_listen_stream(timeout=self.timeout)
        except GetStreamUnavailable:
            self.note(("V-27d",), "the server refused the GET stream (405), which it may")

    async def _early_result(self, client: Client, task_id: str) -> None:
        """V-11: ``tasks/result`` while the task is not terminal must block until it is; a
        ``tasks/get`` right after its answer shows whether it answered early."""
        try:
            with anyio.fail_after(self.timeout):
                await client.request("tasks/result", {"taskId": task_id})
        except RPCError:
            pass  # an early error is judged by the tasks/get below (the validator, V-11)
        except (MCPTasksError, TimeoutError) as exc:
            self.note(("V-11",), f"an early tasks/result of task {task_id}: {exc!r}")
            return
        await self._step(("V-11",), client.get_task(task_id))

    async def _v27(self) -> None:
        """V-27's probe-only parts, on a session of the probe's own, after every other step
        (ending a session may disturb the others: mcp 1.30 stops task support for all)."""
        url = self.url
        if url is None:
            self.note(("V-27",), "needs a URL (its parts are Streamable HTTP's)")
            return
        version = self.generation.value
        base = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **self.headers,
        }
        info = {"name": self.client_info.name, "version": self.client_info.version}
        opening = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": opening}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

        def seen(response: httpx.Response, sent: Mapping[str, Any]) -> JSON:
            return {
                "request": dict(sent),
                "status": response.status_code,
                "body": response.text[:300],
            }

        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
            opened = await http.post(url, json=initialize, headers=base)
            if opened.status_code != 200:
                self.note(("V-27",), f"a session of its own did not open ({opened.status_code})")
                return
            session = opened.headers.get("mcp-session-id")
            headers = {**base, "MCP-Protocol-Version": version}
            if session is not None:
                headers["Mcp-Session-Id"] = session
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=ready, headers=headers)
            sent = {**ping, "headers": {"MCP-Protocol-Version": _BOGUS_VERSION}}
            bogus = await http.post(
                url, json=ping, headers={**headers, "MCP-Protocol-Version": _BOGUS_VERSION}
            )
            if bogus.status_code == 400:
                self.check("V-27", ProbeVerdict.PASS, "a bogus MCP-Protocol-Version got 400")
            else:
                self.check(
                    "V-27",
                    ProbeVerdict.FAIL,
                    f"a request with MCP-Protocol-Version {_BOGUS_VERSION} got "
                    f"{bogus.status_code}, not 400",
                    seen(bogus, sent),
                )
            if session is None:
                self.check(
                    "V-27", ProbeVerdict.PASS, "no Mcp-Session-Id: no ended session to check"
                )
                return
            ended = await http.delete(url, headers=headers)
            if ended.status_code == 405:
                self.check(
                    "V-27",
                    ProbeVerdict.PASS,
                    "DELETE answered 405 (the server does not let clients end a session, "
                    "which it may): no ended session to check",
                )
                return
            if not 200 <= ended.status_code < 300:
                self.note(("V-27",), f"DELETE of its session answered {ended.status_code}")
                return
            after = await http.post(url, json={**ping, "id": 3}, headers=headers)
            if after.status_code == 404:
                self.check("V-27", ProbeVerdict.PASS, "a request in an ended session got 404")
            else:
                self.check(
                    "V-27",
                    ProbeVerdict.FAIL,
                    f"a request in a session the server ended (DELETE answered "
                    f"{ended.status_code}) got {after.status_code}, not 404",
                    seen(after, {**ping, "id": 3, "headers": {"Mcp-Session-Id": session}}),
                )

    async def _v17(self, client: Client, call: ToolCall) -> None:
        if not self.negative:
            self.note(("V-17",), "calling a task-forbidden tool with a task breaks C-17: opt in")
            return
        answer = await self._step(("V-17",), self._raw_call(client, call, task=True))
        raw = self.last_answer("tools/call") or {}
        if answer is None and "error" in raw:
            code = raw["error"].get("code")
            verdict = ProbeVerdict.PASS if code == -32601 else ProbeVerdict.WARN
            self.check("V-17", verdict, f"{call.name!r} with a task: error {code}", raw)
        elif isinstance(answer, dict) and isinstance(answer.get("task"), dict):
            self.check("V-17", ProbeVerdict.WARN, f"{call.name!r} accepted a task", raw)
        elif answer is not None:
            self.check("V-17", ProbeVerdict.WARN, f"{call.name!r} ran plainly, not -32601", raw)

    async def _list_ids(self, client: Client) -> set[str]:
        return {task.task_id async for task in client.list_tasks()}

    async def _unknown_task(self, client: Client) -> None:
        try:
            with anyio.fail_after(self.timeout):
                await client.get_task(UNKNOWN_TASK)
        except TaskNotFound:
            self.check("V-14", ProbeVerdict.PASS, "tasks/get of an unknown id: -32602")
            return
        except RPCError as exc:
            raw = self.last_answer("tasks/get") or {}
            self.check(
                "V-14", ProbeVerdict.WARN, f"tasks/get of an unknown id: {error_of(exc)}", raw
            )
            return
        except (MCPTasksError, TimeoutError) as exc:
            self.note(("V-14",), f"tasks/get of an unknown id: {exc!r}")
            return
        raw = self.last_answer("tasks/get") or {}
        self.check("V-14", ProbeVerdict.FAIL, "tasks/get of an unknown id answered a task", raw)

    async def _task(
        self,
        client: Client,
        poller: Poller,
        tool: Tool,
        call: ToolCall,
        lists: bool,
        cancels: bool,
    ) -> None:
        started = await client.start(call.as_task())
        if not isinstance(started, CreateTaskResult):
            return
        task_id = started.task.task_id
        answer = describe("received", self.last_answer("tools/call") or {})
        self.exercise("created", f"task {task_id} created by {tool.name!r} ({answer})")
        self.task_tools[task_id] = tool
        error: Exception | None = None
        async with anyio.create_task_group() as group:
            if started.task.status.value not in TERMINAL:
                group.start_soon(self._early_result, client, task_id)
            try:
                if lists:
                    await self._v19(client, task_id)
                    self.v28_task = self.v28_task or task_id
                outcome = await poller.wait(started, deadline=self.timeout)
            except (MCPTasksError, TimeoutError, OSError) as exc:
                error = exc  # raised below, as itself (not in the group's ExceptionGroup)
                group.cancel_scope.cancel()
        if error is not None:
            raise error
        if isinstance(outcome, Failed):
            self.exercise("failed", f"task {task_id} failed")
        await client.get_task(task_id)
        self.exercise("terminal_get", f"tasks/get of ended task {task_id}")
        try:
            await client.task_result_raw(task_id)
            if "error" not in (self.last_answer("tasks/result") or {}):
                self.exercise("result_ok", f"tasks/result of task {task_id}")
        except RPCError:
            pass
        if cancels:
            self.exercise("cancel_terminal", f"tasks/cancel of ended task {task_id}")
            try:
                await client.cancel_task(task_id)
            except TaskNotCancellable:
                pass

    async def _v19(self, client: Client, task_id: str) -> None:
        await client.get_task(task_id)
        listed = await self._list_ids(client)
        if task_id in listed:
            self.check("V-19", ProbeVerdict.PASS, f"task {task_id} is in tasks/list")
            return
        try:
            await client.get_task(task_id)
        except TaskNotFound:
            return  # gone in between: nothing to say
        self.check(
            "V-19",
            ProbeVerdict.FAIL,
            f"task {task_id} is retrievable by tasks/get but missing from tasks/list "
            f"(all pages: {sorted(listed)})",
            self.last_answer("tasks/list") or {},
        )

    async def _v28(self, client: Client, task_id: str) -> None:
        """A second session with the same headers lists tasks: does it see ``task_id``?"""
        first = self.first
        if first is None or self.connect is None or not first.sees_http:
            self.note(("V-28",), "needs HTTP (another stdio connection is another server)")
            return
        # A server may forget a session it just opened (mcp 1.30 under load discards one whose
        # opening request it had not finished when the client read its answer): the spec's
        # answer to a 404 is a new session, so one more is opened, and the note says so.
        reopened = ""
        for attempt in (1, 2):
            inner = self.connect()
            if inner is first.inner:
                self.note(("V-28",), "the transport factory gave the same transport again")
                return
            tap = Tap(inner, Validator(self.generation), self)
            timeouts = Timeouts(request=self.timeout, initialize=self.timeout, orphan_watch=1.0)
            second = Client(
                tap, generation=self.generation, client_info=self.client_info, timeouts=timeouts
            )
            try:
                async with second:
                    sessions = (
                        f"sessions {first.session!r} and {second.transport.session!r}{reopened}"
                    )
                    listed = await self._list_ids(second)
                    seen = task_id in listed
                    if not seen:
                        # Asked while the second session is open: its end may disturb the
                        # first (mcp 1.30 ends task support of every session when one ends).
                        try:
                            await client.get_task(task_id)
                        except TaskNotFound:
                            gone = f"task {task_id} was gone before the second session listed"
                            self.note(("V-28",), gone)
                            return
            except SessionExpired as exc:
                if attempt == 2:
                    raise
                reopened = (
                    f" (the server forgot the first one at once: {exc}; a new one was opened)"
                )
                continue
            break
        credentials = sorted(getattr(inner, "headers", None) or {})
        evidence = [a for a in tap.answers if isinstance(a.get("result"), dict)][-1:]
        if credentials:
            self.note(
                ("V-28",),
                f"both sessions carried the caller's headers {credentials} (one requestor), "
                f"so the second {'listing' if seen else 'not listing'} task {task_id} is "
                "correct; telling requestors apart needs a second credential",
            )
        elif seen:
            self.check(
                "V-28",
                ProbeVerdict.WARN,
                f"a second session without credentials ({sessions}) listed task {task_id} of "
                "the first: the server tells no requestor apart, yet declares tasks.list",
                *evidence,
            )
        else:
            self.check(
                "V-28",
                ProbeVerdict.PASS,
                f"a second session without credentials ({sessions}) did not list task "
                f"{task_id} of the first",
            )

    async def _cancel(self, client: Client, tools: Mapping[str, Tool]) -> None:
        for tool, arguments in self._safe(tools):
            if tool.task_support is TaskSupport.FORBIDDEN:
                continue
            started = await self._step(
                ("C-41",), client.start(ToolCall(tool.name, dict(arguments)).as_task())
            )
            if not isinstance(started, CreateTaskResult):
                continue
            task_id = started.task.task_id
            self.task_tools[task_id] = tool
            try:
                with anyio.fail_after(self.timeout):
                    await client.cancel_task(task_id)
            except TaskNotCancellable:
                self.note(("C-41",), f"task {task_id} had ended before tasks/cancel")
                continue
            except (MCPTasksError, TimeoutError) as exc:
                self.note(("C-41",), f"tasks/cancel failed: {exc!r}")
                continue
            self.exercise("cancel_ok", f"tasks/cancel of working task {task_id}")
            after = await self._step(("C-41",), client.get_task(task_id))
            if after is None:
                return
            raw = self.last_answer("tasks/get") or {}
            if after.status.value == "cancelled":
                self.check("C-41", ProbeVerdict.PASS, f"task {task_id} stayed cancelled")
            else:
                self.check(
                    "C-41",
                    ProbeVerdict.FAIL,
                    f"tasks/cancel answered, then tasks/get showed {after.status.value}",
                    raw,
                )
            return
        self.note(("C-41",), "no safe task-capable tool to cancel")
