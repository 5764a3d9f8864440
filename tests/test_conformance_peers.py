"""The strict validator on a live Client against the real peers (mcp 1.30, TypeScript SDK
1.32, fastmcp 4.1.4): a tour of every task operation, and the findings are exactly each peer's
known deviations, under the right rule; nothing the peer does right is flagged."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest
from started import task_created

from mcp_tasks_client import (
    Client,
    Completed,
    Failed,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    Poller,
    PollPolicy,
    ToolCall,
)
from mcp_tasks_client.conformance import (
    ConformancePolicy,
    ConformanceViolation,
    Finding,
    ValidatingTransport,
    Validator,
)
from mcp_tasks_client.errors import RPCError, TaskNotCancellable
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
)

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
FAST = PollPolicy(floor=0.05, jitter=0.0)


async def accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(ElicitAction.ACCEPT, {"ok": True, "confirm": True})


def validating(url: str, generation: Generation) -> tuple[Validator, ValidatingTransport]:
    validator = Validator(generation)
    transport = ValidatingTransport(HttpTransport(url), validator, policy=ConformancePolicy.RECORD)
    assert transport.sees_http  # so V-27a-d (2025-11-25), E C7 and E S24 (2026) are checked too
    return validator, transport


async def tour_2025(url: str) -> list[Finding]:
    """Every 2025-11-25 task operation the client has, on one connection."""
    validator, transport = validating(url, Generation.V2025_11_25)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = Client(
        transport,
        generation=Generation.V2025_11_25,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    looked: list[str] = []

    async def look_and_accept(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        # a tasks/get while the task's question is open: what V-22 is checked on
        if ctx.task_id is not None:
            looked.append((await client.get_task(ctx.task_id)).status.value)
        return await accept(ctx, params)

    with anyio.fail_after(60):
        async with client:
            router.attach(client)
            router.default_elicitation(look_and_accept)
            _ = [tool async for tool in client.list_tools()]
            async with Poller(client, FAST, inputs=router) as poller:
                echo = task_created(
                    await client.start(
                        ToolCall("slow_echo", {"text": "hi", "seconds": 0.3}).as_task(
                            ttl=dt.timedelta(minutes=1)
                        )
                    )
                )
                assert isinstance(await poller.wait(echo), Completed)
                await client.get_task(echo.task.task_id)  # after terminal: still completed
                await client.task_result(echo.task.task_id)  # again
                fail = task_created(await client.start(ToolCall("fail").as_task()))
                assert isinstance(await poller.wait(fail), Failed)
                confirm = task_created(
                    await client.start(ToolCall("confirm", {"text": "go"}).as_task())
                )
                assert isinstance(await poller.wait(confirm), Completed)
            slow = task_created(await client.start(ToolCall("slow_echo", {"seconds": 5}).as_task()))
            await client.cancel_task(slow.task.task_id)
            await client.get_task(slow.task.task_id)
            with pytest.raises(TaskNotCancellable):  # V-14: -32602 for a terminal task
                await client.cancel_task(slow.task.task_id)
            _ = [task async for task in client.list_tasks()]
            # A task-required tool called plainly, past the client's own pre-flight check:
            try:
                await client.request("tools/call", {"name": "need_task", "arguments": {}})
            except RPCError:
                pass
    assert looked, "confirm's question was never asked in its task"
    return validator.findings


async def tour_2026(url: str) -> list[Finding]:
    validator, transport = validating(url, Generation.V2026_07_28)
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    client = Client(
        transport,
        generation=Generation.V2026_07_28,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    with anyio.fail_after(60):
        async with client:
            await client.discover()
            router.attach(client)
            router.default_elicitation(accept)
            _ = [tool async for tool in client.list_tools()]
            for policy in (FAST, PollPolicy(floor=0.05, jitter=0.0, listen=True)):
                async with Poller(client, policy, inputs=router) as poller:
                    for call in (
                        ToolCall("slow_compute", {"seconds": 0.3}),
                        ToolCall("failing_job"),
                        ToolCall("protocol_error_job"),
                        ToolCall("confirm_delete", {"filename": "a.txt"}),
                        ToolCall("multi_input"),
                    ):
                        started = await client.start(call.as_task())
                        await poller.wait(started)
            slow = task_created(
                await client.start(ToolCall("slow_compute", {"seconds": 5}).as_task())
            )
            await client.cancel_task(slow.task.task_id)
            async with Poller(client, FAST) as poller:
                await poller.wait(slow)
            await client.get_task(slow.task.task_id)
            await client.cancel_task(slow.task.task_id)  # terminal: acked (E A-5)
    return validator.findings


def rules_of(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule_id, f.verdict.value) for f in findings}


async def test_mcp1_deviations(mcp1_http_url: str) -> None:
    """mcp 1.30: leaves ``ttl`` out of tasks/get when it is null (V-08, A-06), answers
    tasks/result of a failed task with only ``_meta`` (V-12), and answers a task-required
    tool's plain call with an isError result instead of -32601 (V-16). Nothing else (V-22
    kept: the tour's look while confirm asks sees input_required)."""
    findings = await tour_2025(mcp1_http_url)
    assert rules_of(findings) == {("V-08", "fail"), ("V-12", "fail"), ("V-16", "fail")}
    for f in findings:
        if f.rule_id == "V-08":  # only the tasks started without a ttl (ttl null)
            assert "ttl" not in f.evidence["result"]
            assert f.evidence["result"]["taskId"] != ""
        if f.rule_id == "V-12":
            assert set(f.evidence["result"]) == {"_meta"}


async def test_ts1_deviations(ts1_http_url: str) -> None:
    """TypeScript SDK 1.32: creates the eliciting task already input_required (V-05, a
    warning: A-07), a failed task has no statusMessage (V-13, SHOULD), and a task-required
    tool's plain call is an isError result (V-16). Nothing else (V-22 kept, as on mcp 1.30)."""
    findings = await tour_2025(ts1_http_url)
    assert rules_of(findings) == {("V-05", "warn"), ("V-13", "warn"), ("V-16", "fail")}
    (created,) = [f for f in findings if f.rule_id == "V-05"]
    assert created.evidence["result"]["task"]["status"] == "input_required"


async def test_fastmcp4_has_no_findings(fastmcp4_http_url: str) -> None:
    """fastmcp 4.1.4 keeps every rule the validator checks (its one known gap, MRTR before a
    task of a required tool, E S21, needs a probe)."""
    assert await tour_2026(fastmcp4_http_url) == []


async def failed_task_result(url: str, policy: ConformancePolicy) -> tuple[Client, Validator]:
    """mcp 1.30's tasks/result of a failed task (only ``_meta``: V-12), under ``policy``."""
    validator = Validator(Generation.V2025_11_25)
    client = Client(
        ValidatingTransport(HttpTransport(url), validator, policy=policy),
        generation=Generation.V2025_11_25,
        client_info=INFO,
    )
    return client, validator


async def test_raise_policy_fails_the_request_that_broke_a_rule(mcp1_http_url: str) -> None:
    client, validator = await failed_task_result(mcp1_http_url, ConformancePolicy.RAISE)
    with anyio.fail_after(30):
        async with client:
            created = task_created(
                await client.start(ToolCall("fail").as_task(ttl=dt.timedelta(minutes=1)))
            )
            async with Poller(client, FAST) as poller:
                with pytest.raises(ConformanceViolation) as caught:  # its tasks/result broke V-12
                    await poller.wait(created, deadline=dt.timedelta(seconds=20))
            assert caught.value.finding.rule_id == "V-12"
            assert caught.value.finding.evidence["result"].keys() == {"_meta"}
            task = await client.get_task(created.task.task_id)  # the connection goes on
            assert task.task_id == created.task.task_id
    assert [f.rule_id for f in validator.findings].count("V-12") >= 1


async def test_warn_policy_makes_findings_client_warnings(mcp1_http_url: str) -> None:
    client, validator = await failed_task_result(mcp1_http_url, ConformancePolicy.WARN)
    with anyio.fail_after(30):
        async with client:
            created = task_created(
                await client.start(ToolCall("fail").as_task(ttl=dt.timedelta(minutes=1)))
            )
            async with Poller(client, FAST) as poller:
                assert isinstance(await poller.wait(created), Failed)
            raw = await client.task_result_raw(created.task.task_id)  # delivered as it came
            assert raw.keys() == {"_meta"}
    warned = [w for w in client.warnings if isinstance(w, ConformanceViolation)]
    assert {w.finding.rule_id for w in warned} == {f.rule_id for f in validator.findings}
    assert "V-12" in {w.finding.rule_id for w in warned}
