"""Resources and prompts, plain, against real peers of both generations (mcp 1.30 for
2025-11-25, fastmcp 4.1.4 for 2026-07-28), HTTP and stdio; MRTR on resources/read and
prompts/get in 2026-07-28 (E C45-C48: the methods besides tools/call that take input first)."""

from __future__ import annotations

import pytest
from conftest import require_peer
from peers.harness import stdio_command, stdio_env

from mcp_tasks_client import (
    Client,
    Generation,
    GetPrompt,
    HttpTransport,
    InputContext,
    InputRouter,
    StdioTransport,
)
from mcp_tasks_client.errors import InputRequired, InvalidParams, RPCError
from mcp_tasks_client.models import (
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    TextContent,
    TextResourceContents,
)
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
GENERATIONS = {"mcp1": Generation.V2025_11_25, "fastmcp4": Generation.V2026_07_28}


@pytest.fixture(params=[f"{p}-{k}" for p in GENERATIONS for k in ("http", "stdio")])
def peer(request: pytest.FixtureRequest) -> tuple[Generation, Transport]:
    name, kind = str(request.param).split("-")
    found = require_peer(name)
    if kind == "http":
        url: str = request.getfixturevalue(f"{name}_http_url")
        return GENERATIONS[name], HttpTransport(url)
    return GENERATIONS[name], StdioTransport(stdio_command(found), env=stdio_env(found))


def client_for(generation: Generation, transport: Transport, router: InputRouter) -> Client:
    return Client(
        transport,
        generation=generation,
        client_info=INFO,
        capabilities=router.capabilities(),
    )


async def test_resources_are_listed_and_read(peer: tuple[Generation, Transport]) -> None:
    generation, transport = peer
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with client_for(generation, transport, router) as client:
        listed = {resource.uri: resource async for resource in client.list_resources()}
        assert "note://greeting" in listed
        assert listed["note://greeting"].mime_type == "text/plain"
        read = await client.read_resource("note://greeting")
    (content,) = read.contents
    assert isinstance(content, TextResourceContents)
    assert content.text == "hello from a resource"
    assert content.uri == "note://greeting"


async def test_prompts_are_listed_and_got(peer: tuple[Generation, Transport]) -> None:
    generation, transport = peer
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with client_for(generation, transport, router) as client:
        prompts = {prompt.name: prompt async for prompt in client.list_prompts()}
        assert [a.name for a in prompts["summary"].arguments or ()] == ["topic"]
        got = await client.get_prompt(GetPrompt("summary", {"topic": "MCP"}))
    assert got.description == "A plain prompt."
    (message,) = got.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert message.content.text == "Summarize MCP in one line."


async def test_an_unknown_resource_is_a_typed_error(peer: tuple[Generation, Transport]) -> None:
    """The server's error, typed and kept: fastmcp answers -32602 naming the uri; mcp 1.30's
    lowlevel server turns the handler's exception into code 0 with its message."""
    generation, transport = peer
    router = InputRouter(elicitation=ElicitationCapability(form={}))
    async with client_for(generation, transport, router) as client:
        with pytest.raises(RPCError) as caught:
            await client.read_resource("note://nothing-here")
    assert caught.value.method == "resources/read"
    if generation is Generation.V2026_07_28:
        assert isinstance(caught.value, InvalidParams)
    assert "note://nothing-here" in caught.value.message


async def test_mrtr_on_resources_and_prompts(gen2: Transport) -> None:
    """E C45-C47: by hand (InputRequired, answering) and through inputs= for the call."""
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def answer(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        assert ctx.task_id is None
        return ElicitResult(ElicitAction.ACCEPT, {ctx.key: "1234" if ctx.key == "pin" else "tasks"})

    router.default_elicitation(answer)
    async with client_for(Generation.V2026_07_28, gen2, router) as client:
        router.attach(client)
        with pytest.raises(InputRequired) as caught:
            await client.get_prompt(GetPrompt("ask_topic"))
        needed = caught.value.answer
        assert set(needed.input_requests or {}) == {"topic"}
        retry = GetPrompt("ask_topic").answering(
            needed, {"topic": ElicitResult(ElicitAction.ACCEPT, {"topic": "by hand"})}
        )
        by_hand = await client.get_prompt(retry)
        routed = await client.get_prompt(GetPrompt("ask_topic"), inputs=router)
        secret = await client.read_resource("note://secret", inputs=router)
    assert [m.content.text for m in by_hand.messages if isinstance(m.content, TextContent)] == [
        "Write about by hand."
    ]
    assert [m.content.text for m in routed.messages if isinstance(m.content, TextContent)] == [
        "Write about tasks."
    ]
    (content,) = secret.contents
    assert isinstance(content, TextResourceContents)
    assert content.text == "secret for pin 1234"
