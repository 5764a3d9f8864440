"""The FaultServer's server->client requests, through a real Client, Poller and InputRouter
with the strict validator on the wire (``ValidatingTransport``): the in-task input of both
generations fires exactly the rule the server is scripted to break (V-21, V-22, V-11, V-26,
E S13, E S14, E S7), and nothing when it behaves; the deviating-2025 preset fires exactly its
three rules. V-22 needs a client that polls while a question is open: the handler ``look`` s."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_tasks_client import Client, Generation, HttpTransport, Poller, PollPolicy, ToolCall
from mcp_tasks_client.conformance import ConformancePolicy, ValidatingTransport, Validator
from mcp_tasks_client.inputs import InputContext, InputRouter
from mcp_tasks_client.models import (
    CreateMessageResult,
    CreateTaskResult,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    SamplingCapability,
    TaskStatus,
    TextContent,
)
from mcp_tasks_client.outcomes import Completed, Failed, Outcome
from mcp_tasks_client.testing import BREAKABLE, PRESETS, FaultServer
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
INFO = Implementation("fault-inputs-tests", "0")


class Asked:
    """An elicitation handler that accepts, and records where each question came from.

    ``look``: before answering a question of a task, it asks the server how the task is (a
    ``tasks/get`` while the question is open, as a client showing the status would)."""

    def __init__(self, *, look: bool = False) -> None:
        self.task_ids: list[str | None] = []
        self.arrived = anyio.Event()
        self.look = look
        self.client: Client | None = None
        self.seen: list[TaskStatus] = []
        """What each look saw."""

    async def __call__(self, ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        self.task_ids.append(ctx.task_id)
        self.arrived.set()
        await self._look(ctx)
        return ElicitResult(ElicitAction.ACCEPT, {"ok": True})

    async def sample(self, ctx: InputContext, params: Any) -> CreateMessageResult:
        self.task_ids.append(ctx.task_id)
        await self._look(ctx)
        return CreateMessageResult("assistant", TextContent("ok"), "test-model")

    async def _look(self, ctx: InputContext) -> None:
        if self.look and self.client is not None and ctx.task_id is not None:
            self.seen.append((await self.client.get_task(ctx.task_id)).status)


@asynccontextmanager
async def validated(
    server: FaultServer, connect: Callable[[], Transport], *, look: bool = False
) -> AsyncIterator[tuple[Client, Poller, InputRouter, Validator, Asked]]:
    validator = Validator(server.generation)
    transport = ValidatingTransport(connect(), validator, policy=ConformancePolicy.RECORD)
    asked = Asked(look=look)
    router = InputRouter(elicitation=ElicitationCapability(form={}), sampling=SamplingCapability())
    router.default_elicitation(asked)
    router.default_sampling(asked.sample)
    client = Client(
        transport,
        generation=server.generation,
        client_info=INFO,
        capabilities=router.capabilities(),
    )
    asked.client = client
    policy = PollPolicy(floor=0.01, initial=0.01, jitter=0.0)
    async with client:
        router.attach(client)
        if server.generation is G2:
            await client.discover()
        async with Poller(client, policy, inputs=router) as poller:
            yield client, poller, router, validator, asked


async def run(
    server: FaultServer,
    tool: str = "ask",
    arguments: dict[str, Any] | None = None,
    *,
    look: bool = False,
) -> tuple[set[str], Outcome, Asked]:
    """One task of ``tool`` waited on in process; the rule ids the validator found."""
    with anyio.fail_after(30):
        async with server.memory() as inner, validated(server, lambda: inner, look=look) as opened:
            client, poller, router, v, asked = opened
            call = ToolCall(tool, arguments or {}).as_task()
            started = await client.start(call, inputs=router)
            outcome = await poller.wait(started, deadline=20)
    return {f.rule_id for f in v.findings}, outcome, asked


@pytest.mark.parametrize("generation", [G1, G2])
@pytest.mark.parametrize("arguments", [{}, {"sampling": True}], ids=["elicit", "sample"])
async def test_a_behaving_server_asks_in_its_task_and_nothing_fires(
    generation: Generation, arguments: dict[str, Any]
) -> None:
    server = FaultServer(generation)
    found, outcome, asked = await run(server, "ask", arguments)
    assert found == set()
    assert isinstance(outcome, Completed)
    (task,) = server.tasks.values()
    if generation is G1:
        (request,) = server.sent_requests
        method = "sampling/createMessage" if arguments else "elicitation/create"
        assert request["method"] == method
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/related-task"] == {"taskId": task.task_id}
    else:
        assert server.sent_requests == []  # 2026-07-28: inputRequests, not requests
        updates = [m for m in server.received if m.get("method") == "tasks/update"]
        keys = [k for m in updates for k in m["params"]["inputResponses"]]
        assert keys == ["q1", "q2"]  # the first question, then the second
    assert asked.task_ids == [task.task_id] * len(task.answers)
    assert task.answers  # the answers reached the server, and the result says so
    assert "ok" in str(outcome.result.content)


async def test_a_behaving_2025_task_is_input_required_while_asked_and_working_after() -> None:
    """V-22 as the server plays it, step by step: input_required once it has a question, the
    question on the blocking tasks/result, working again once answered, and the tasks/result
    answers only when polls have ended the task."""
    server = FaultServer(G1, steps=2)
    with anyio.fail_after(30):
        async with server.memory() as inner, validated(server, lambda: inner) as opened:
            client, _, _, v, asked = opened
            started = await client.start(ToolCall("ask", {}).as_task())
            assert isinstance(started, CreateTaskResult)
            task_id = started.task.task_id
            assert (await client.get_task(task_id)).status is TaskStatus.INPUT_REQUIRED
            results: list[dict[str, Any]] = []
            async with anyio.create_task_group() as group:

                async def blocking_result() -> None:
                    results.append(dict(await client.task_result_raw(task_id)))

                group.start_soon(blocking_result)
                await asked.arrived.wait()
                await anyio.wait_all_tasks_blocked()  # the answer went out and was read
                statuses = [(await client.get_task(task_id)).status for _ in range(2)]
            assert statuses == [TaskStatus.WORKING, TaskStatus.COMPLETED]
    assert asked.task_ids == [task_id]
    assert "ok" in str(results[0]["content"])
    assert v.findings == []


@pytest.mark.parametrize(
    ("generation", "rule_id", "tool"),
    [
        (G1, "V-21", "ask"),
        (G1, "V-11", "ask"),
        (G1, "V-26", "echo"),
        (G2, "V-26", "echo"),
        (G2, "E S13", "ask"),
        (G2, "E S14", "ask"),
        (G2, "E S7", "fail"),
    ],
)
async def test_each_scripted_break_fires_exactly_its_rule(
    generation: Generation, rule_id: str, tool: str
) -> None:
    assert rule_id in BREAKABLE
    found, outcome, _ = await run(FaultServer(generation, breaks={rule_id}), tool)
    assert found == {rule_id}
    assert isinstance(outcome, Failed if rule_id == "E S7" else Completed)


@pytest.mark.parametrize("arguments", [{}, {"sampling": True}], ids=["elicit", "sample"])
async def test_a_look_at_an_asking_task_fires_nothing_on_a_behaving_server(
    arguments: dict[str, Any],
) -> None:
    """V-22 kept: the tasks/get the handler sends while its question is open says
    input_required."""
    server = FaultServer(G1)
    found, outcome, asked = await run(server, "ask", arguments, look=True)
    assert found == set()
    assert isinstance(outcome, Completed)
    assert asked.seen == [TaskStatus.INPUT_REQUIRED]


async def test_v22_broken_a_look_while_the_question_is_open_says_working() -> None:
    """The server asks on a poll's stream and its task goes on saying working: the validator
    sees the handler's tasks/get (sent after the question arrived, answered before the client
    answered it) say working, V-22 and nothing else; the client still answers and the task
    ends."""
    server = FaultServer(G1, breaks={"V-22"})
    found, outcome, asked = await run(server, look=True)
    assert found == {"V-22"}
    assert isinstance(outcome, Completed)
    (task,) = server.tasks.values()
    assert asked.task_ids == [task.task_id]
    assert asked.seen == [TaskStatus.WORKING]
    assert "input_required" not in str(server.received)  # never said so: nothing to quote


async def test_v22_broken_but_answered_at_once_the_validator_cannot_tell() -> None:
    """Without a look between the question and its answer, no poll provably saw the question
    open: the validator stays silent (sound, not complete; the probe looks)."""
    server = FaultServer(G1, breaks={"V-22"})
    found, outcome, _ = await run(server)
    assert "V-22" not in found
    assert found == set()
    assert isinstance(outcome, Completed)


async def test_the_deviating_2025_preset_through_the_validator() -> None:
    generation, breaks, _ = PRESETS["deviating-2025"]
    server = FaultServer.preset("deviating-2025")
    assert (server.generation, server.breaks) == (generation, breaks)
    found, outcome, asked = await run(server)
    assert found == {"V-11", "V-21", "V-26"}
    assert isinstance(outcome, Completed)  # the client got there anyway
    assert asked.task_ids == [None]  # untagged: the router's default answered it
    (request,) = server.sent_requests
    assert "_meta" not in request["params"]


async def test_over_http_the_question_comes_on_the_result_stream() -> None:
    """Over HTTP the blocking tasks/result answers as an SSE stream: the question, then (after
    the client POSTed its answer) the result."""
    server = FaultServer(G1)
    with anyio.fail_after(30):
        async with server.http() as http:

            def connect() -> Transport:
                return HttpTransport(http.url)

            async with validated(server, connect) as (client, poller, _, v, asked):
                started = await client.start(ToolCall("ask", {}).as_task())
                outcome = await poller.wait(started, deadline=20)
    assert v.findings == []
    assert isinstance(outcome, Completed)
    (task,) = server.tasks.values()
    assert asked.task_ids == [task.task_id]
    answers = [r for r in http.received if r.json and "result" in r.json]
    assert [a.json["id"] for a in answers] == [server.sent_requests[0]["id"]]


def test_a_preset_that_does_not_exist() -> None:
    with pytest.raises(ValueError, match="PRESETS"):
        FaultServer.preset("polite")


@pytest.mark.parametrize(
    ("breaks", "expected"),
    [((), set()), (("V-21",), {"V-21"}), (("V-22",), {"V-22"})],
    ids=["behaving", "V-21", "V-22"],
)
async def test_over_http_the_question_comes_on_the_get_stream(
    breaks: tuple[str, ...], expected: set[str]
) -> None:
    """``ask_on="get"``: the question goes out on the GET SSE stream the client opened when
    asked (``open_listen_stream``), not on a POST's response; the InputRouter answers it
    there and the validator sees it (the breaks it carries fire, each alone)."""
    server = FaultServer(G1, breaks=breaks, ask_on="get")
    with anyio.fail_after(30):
        async with server.http() as http:

            def connect() -> Transport:
                return HttpTransport(http.url)

            async with validated(server, connect, look=True) as (client, poller, _, v, asked):
                await client.open_listen_stream()
                started = await client.start(ToolCall("ask", {}).as_task())
                outcome = await poller.wait(started, deadline=20)
    assert {f.rule_id for f in v.findings} == expected
    assert isinstance(outcome, Completed)
    assert "ok" in str(outcome.result.content)  # the answer reached the server
    (task,) = server.tasks.values()
    assert server.get_streams_opened == 1
    assert [r.http_method for r in http.received].count("GET") == 1
    (question,) = server.sent_requests
    answers = [r for r in http.received if r.json and "result" in r.json]
    assert [a.json["id"] for a in answers] == [question["id"]]
    if "V-21" in breaks:
        assert asked.task_ids == [None]  # untagged: the router's default answered it
    else:
        assert asked.task_ids == [task.task_id]
        kept = "V-22" not in breaks
        assert asked.seen == [TaskStatus.INPUT_REQUIRED if kept else TaskStatus.WORKING]


def test_ask_on_is_checked() -> None:
    with pytest.raises(ValueError, match="ask_on"):
        FaultServer(G1, ask_on="post")
    with pytest.raises(ValueError, match="GET stream"):
        FaultServer(G2, ask_on="get")


async def test_over_http_a_question_for_the_get_stream_waits_until_the_client_opens_one() -> None:
    """The client opens no GET stream unless asked: until it does, the blocking tasks/result
    brings no question (the server holds it); once it does, the question arrives there, is
    answered, and the polls end the task."""
    result_arrived = anyio.Event()

    async def hook(message: dict[str, Any]) -> None:
        if message.get("method") == "tasks/result":
            result_arrived.set()

    server = FaultServer(G1, ask_on="get", on_message=hook)
    with anyio.fail_after(30):
        async with server.http() as http:

            def connect() -> Transport:
                return HttpTransport(http.url)

            async with validated(server, connect) as (client, _, _, v, asked):
                started = await client.start(ToolCall("ask", {}).as_task())
                assert isinstance(started, CreateTaskResult)
                task_id = started.task.task_id
                assert (await client.get_task(task_id)).status is TaskStatus.INPUT_REQUIRED
                results: list[dict[str, Any]] = []
                async with anyio.create_task_group() as group:

                    async def blocking_result() -> None:
                        results.append(dict(await client.task_result_raw(task_id)))

                    group.start_soon(blocking_result)
                    await result_arrived.wait()
                    await anyio.wait_all_tasks_blocked()  # the server holds its question
                    assert server.sent_requests == []
                    assert server.tasks[task_id].asked == "sending"
                    await client.open_listen_stream()
                    await asked.arrived.wait()
                    status = TaskStatus.INPUT_REQUIRED  # until the answer is in, and polls
                    while status is not TaskStatus.COMPLETED:
                        status = (await client.get_task(task_id)).status
    assert asked.task_ids == [task_id]
    assert "ok" in str(results[0]["content"])
    assert v.findings == []
