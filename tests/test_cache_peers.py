"""The result cache against real servers (2026-07-28, SEP-2549): requests counted on the wire.

The bundled 2026-07-28 peer (fastmcp 4.1.4) sends the hints on every cacheable result. As
installed it sends ``ttlMs: 0`` (``cacheScope: "private"``): stale at once, so the cache never
serves one and every ``tools/list`` reaches the server, cache on or off. Started with a TTL
(fastmcp's ``cache_ttl``, set by the peer script's environment), repeated ``tools/list``
requests stay off the wire while fresh with the cache on, and all go out with it off. The
FaultServer (spec-faithful, over real HTTP on 127.0.0.1) shows the same, counted by what the
server received, and that a ``list_changed`` it pushes drops the entry. Rule ids: E H1 (the
server's hints), E H3-E H7 (the client's cache)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import anyio
import attrs
import pytest
from conftest import require_peer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from peers.harness import running_http_peer
from recording import RecordingTransport

from mcp_tasks_client import (
    CacheHints,
    Client,
    Generation,
    HttpTransport,
    InputContext,
    InputRouter,
    ResultCache,
    observability,
    probe_server,
)
from mcp_tasks_client.errors import InvalidToolAnnotation, LenientCacheHint
from mcp_tasks_client.models import (
    CacheScope,
    ElicitAction,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    Implementation,
    JSONRPCRequest,
    TextResourceContents,
)
from mcp_tasks_client.observability import _Tracing
from mcp_tasks_client.testing import FaultServer
from mcp_tasks_client.transports import Transport, memory_transport_pair

pytestmark = pytest.mark.anyio

INFO = Implementation("mcp-tasks-client-tests", "0")
G2 = Generation.V2026_07_28
ROUNDS = 5


@pytest.fixture(scope="module", params=["public", "private"])
def hinted_fastmcp4_url(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A second fastmcp 4.1.4 server whose cacheable results carry ttlMs 600000 (10 min) and
    the scope of the param."""
    peer = require_peer("fastmcp4")
    env = (*peer.env, ("MCP_TASKS_PEER_CACHE_TTL", "600"))
    env = (*env, ("MCP_TASKS_PEER_CACHE_SCOPE", request.param))
    with running_http_peer(attrs.evolve(peer, env=env)) as url:
        yield url, request.param


def tools_lists_sent(recorder: RecordingTransport) -> int:
    return sum(
        1 for m in recorder.sent if isinstance(m, JSONRPCRequest) and m.method == "tools/list"
    )


async def list_tools_rounds(client: Client, rounds: int = ROUNDS) -> list[Any]:
    out = []
    for _ in range(rounds):
        out.append([tool.name async for tool in client.list_tools()])
    return out


async def test_fastmcp4_as_installed_sends_ttl_0_and_nothing_is_served(gen2: Transport) -> None:
    """E H3: ttlMs 0 is stale at once: the cache on changes nothing on the wire."""
    recorder = RecordingTransport(gen2)
    cache = ResultCache()
    async with Client(recorder, generation=G2, client_info=INFO, cache=cache) as client:
        page = await client.list_tools_page()
        assert CacheHints.of(page) == CacheHints(0, CacheScope.PRIVATE)
        names = await list_tools_rounds(client)
        assert all(n == names[0] for n in names)
        discovered = await client.discover()
        assert CacheHints.of(discovered) == CacheHints(0, CacheScope.PRIVATE)
    assert tools_lists_sent(recorder) == ROUNDS + 1  # every one went out
    assert len(cache) == 0
    assert cache.hits == 0
    assert not [w for w in client.warnings if isinstance(w, LenientCacheHint)]


@pytest.mark.parametrize("cached", [True, False], ids=["cache-on", "cache-off"])
async def test_fastmcp4_with_a_ttl_fewer_tools_list_on_the_wire_only_with_the_cache(
    hinted_fastmcp4_url: tuple[str, str], cached: bool
) -> None:
    url, scope = hinted_fastmcp4_url
    recorder = RecordingTransport(HttpTransport(url))
    cache = ResultCache() if cached else None
    async with Client(recorder, generation=G2, client_info=INFO, cache=cache) as client:
        page = await client.list_tools_page()
        assert CacheHints.of(page) == CacheHints(600_000, CacheScope(scope))
        names = await list_tools_rounds(client)
        assert all(n == names[0] for n in names)
        assert "greet" in names[0]
    if cached:
        assert cache is not None
        assert tools_lists_sent(recorder) == 1  # the first page; the rest were fresh
        assert cache.hits == ROUNDS
        # the peer's badly annotated tool was reported once, when its page came, not per hit
        bad = [w for w in client.warnings if isinstance(w, InvalidToolAnnotation)]
        assert len(bad) == 1
    else:
        assert tools_lists_sent(recorder) == ROUNDS + 1


async def test_fastmcp4_a_private_result_stays_in_its_authorization_context(
    hinted_fastmcp4_url: tuple[str, str],
) -> None:
    """E H4: two clients of one server share a cache; a private list is served again only to
    a client with the same auth_context, a public one to both."""
    url, scope = hinted_fastmcp4_url
    cache = ResultCache()
    sent: dict[str, list[int]] = {}
    for who in ("alice", "alice", "bob"):
        recorder = RecordingTransport(HttpTransport(url))
        async with Client(
            recorder, generation=G2, client_info=INFO, cache=cache, auth_context=who
        ) as client:
            await list_tools_rounds(client, 1)
        sent.setdefault(who, []).append(tools_lists_sent(recorder))
    assert sent["alice"] == [1, 0]  # the second alice was served from the cache
    assert sent["bob"] == ([0] if scope == "public" else [1])


@pytest.mark.parametrize("cached", [True, False], ids=["cache-on", "cache-off"])
async def test_fault_server_counts_the_tools_list_it_received(cached: bool) -> None:
    server = FaultServer(G2, cache_hints=(600_000, "public"))
    cache = ResultCache() if cached else None
    async with server.http() as http:
        transport = HttpTransport(http.url)
        async with Client(transport, generation=G2, client_info=INFO, cache=cache) as client:
            await list_tools_rounds(client)
            await client.discover()
            await client.discover()
    lists = [m for m in server.received if m.get("method") == "tools/list"]
    discovers = [m for m in server.received if m.get("method") == "server/discover"]
    assert len(lists) == (1 if cached else ROUNDS)
    assert len(discovers) == (1 if cached else 2)


async def test_fault_server_without_hints_is_never_served() -> None:
    """E H1 broken: no hints at all read as ttlMs 0; nothing is cached, nothing warned."""
    server = FaultServer(G2, breaks={"E H1"})
    cache = ResultCache()
    async with (
        server.http() as http,
        Client(HttpTransport(http.url), generation=G2, client_info=INFO, cache=cache) as client,
    ):
        await list_tools_rounds(client)
    assert len([m for m in server.received if m.get("method") == "tools/list"]) == ROUNDS
    assert len(cache) == 0


@pytest.mark.parametrize("breaks", [set(), {"E H1"}], ids=["hints", "no-hints"])
async def test_probe_server_reports_a_discover_without_hints(breaks: set[str]) -> None:
    """E H1: a server MUST put the hints on a complete cacheable result; probe_server says
    when its server/discover answer has none (and the answer is still read)."""
    async with FaultServer(G2, breaks=breaks).http() as http:
        report = await probe_server(lambda: HttpTransport(http.url), client_info=INFO)
    assert report.discover is not None
    if breaks:
        assert report.discover_hint_problems == (
            "ttlMs missing (E H1)",
            "cacheScope missing (E H1)",
        )
    else:
        assert report.discover_hint_problems == ()


async def test_probe_server_reports_malformed_hints() -> None:
    """E H2: a malformed hint is named (and read the safe way: ttl 0, private)."""
    server = FaultServer(G2, cache_hints=(-5, "everyone"))
    async with server.http() as http:
        report = await probe_server(lambda: HttpTransport(http.url), client_info=INFO)
    assert report.discover is not None
    assert CacheHints.of(report.discover) == CacheHints(0, CacheScope.PRIVATE)
    assert len(report.discover_hint_problems) == 2
    assert all(p.endswith("(E H2)") for p in report.discover_hint_problems)


async def test_fastmcp4_mrtr_retries_always_reach_the_server(
    hinted_fastmcp4_url: tuple[str, str],
) -> None:
    """E H5: note://secret asks a pin first. Its retries (carrying inputResponses) reach the
    server every time and are never kept; a plain resource is read once and then served."""
    url, _ = hinted_fastmcp4_url
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def answer(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {"pin": "1234"})

    router.default_elicitation(answer)
    recorder = RecordingTransport(HttpTransport(url))
    cache = ResultCache()
    async with Client(
        recorder,
        generation=G2,
        client_info=INFO,
        capabilities=router.capabilities(),
        cache=cache,
    ) as client:
        router.attach(client)
        for _ in range(2):
            secret = await client.read_resource("note://secret", inputs=router)
            (content,) = secret.contents
            assert isinstance(content, TextResourceContents)
            assert content.text == "secret for pin 1234"
        greetings = [await client.read_resource("note://greeting") for _ in range(3)]
    reads = [
        m.params or {}
        for m in recorder.sent
        if isinstance(m, JSONRPCRequest) and m.method == "resources/read"
    ]
    secret_reads = [p for p in reads if p.get("uri") == "note://secret"]
    retries = [p for p in secret_reads if "inputResponses" in p or "requestState" in p]
    assert len(secret_reads) == 4  # each read: the first round and its retry, both sent
    assert len(retries) == 2
    assert len([p for p in reads if p.get("uri") == "note://greeting"]) == 1
    assert greetings[0] == greetings[2]
    # kept: only the greeting (the secret's first round asked for input: not a result)
    assert len(cache) == 1


async def test_a_hit_is_visible_in_the_log_and_as_a_span(
    hinted_fastmcp4_url: tuple[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = (_Tracing.decided, _Tracing.tracer)
    observability.tracing(True, tracer_provider=provider)
    try:
        url, _ = hinted_fastmcp4_url
        caplog.set_level(logging.DEBUG, logger="mcp_tasks_client.client")
        async with Client(
            HttpTransport(url), generation=G2, client_info=INFO, cache=ResultCache()
        ) as client:
            await client.list_tools_page()
            await client.list_tools_page()
    finally:
        _Tracing.decided, _Tracing.tracer = saved
        provider.shutdown()
    hits = [
        s
        for s in exporter.get_finished_spans()
        if s.attributes and s.attributes.get("mcp_tasks.cache.hit")
    ]
    assert len(hits) == 1
    assert hits[0].name == "tools/list"
    assert hits[0].attributes is not None
    assert hits[0].attributes["mcp.method.name"] == "tools/list"
    records = [r for r in caplog.records if "served from the result cache" in r.getMessage()]
    assert len(records) == 1


async def test_list_changed_drops_the_entry() -> None:
    """E H6: a 2026-07-28 server (scripted in memory) pushes
    notifications/tools/list_changed; the next tools/list reaches it again."""
    transport, end = memory_transport_pair()
    received: list[dict[str, Any]] = []

    async def serve() -> None:
        while True:
            try:
                message = await end.receive()
            except anyio.EndOfStream:  # the client closed
                return
            received.append(message)
            if message.get("method") == "tools/list":
                version = len([m for m in received if m.get("method") == "tools/list"])
                tools = [{"name": f"v{version}", "inputSchema": {"type": "object"}}]
                result = {"tools": tools, "ttlMs": 600_000, "cacheScope": "public"}
                await end.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    cache = ResultCache()
    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        async with Client(transport, generation=G2, client_info=INFO, cache=cache) as client:
            assert [t.name for t in (await client.list_tools_page()).tools] == ["v1"]
            assert [t.name for t in (await client.list_tools_page()).tools] == ["v1"]  # cached
            arrived = anyio.Event()
            client.on_notification("notifications/tools/list_changed", lambda _: arrived.set())
            await end.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            await arrived.wait()
            assert [t.name for t in (await client.list_tools_page()).tools] == ["v2"]
        group.cancel_scope.cancel()
    assert len([m for m in received if m.get("method") == "tools/list"]) == 2


async def test_2025_results_are_never_cached() -> None:
    """2025-11-25 has no hints: a ResultCache changes nothing on the wire, even when the
    server sends ttlMs anyway (kept in extra, not read)."""
    server = FaultServer(Generation.V2025_11_25)

    async def hinted(message: dict[str, Any]) -> Any:
        if message.get("method") == "tools/list":
            result = {"tools": [], "ttlMs": 600_000, "cacheScope": "public"}
            return {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return None

    server.on_message = hinted
    cache = ResultCache()
    async with (
        server.memory() as transport,
        Client(
            transport, generation=Generation.V2025_11_25, client_info=INFO, cache=cache
        ) as client,
    ):
        for _ in range(3):
            page = await client.list_tools_page()
            assert page.ttl_ms is None
            assert page.extra["ttlMs"] == 600_000
    assert len([m for m in server.received if m.get("method") == "tools/list"]) == 3
    assert len(cache) == 0
    assert cache.misses == 0  # not even asked: the generation has no cacheable methods


@pytest.mark.parametrize("with_cache", [True, False])
async def test_a_miss_is_marked_on_its_request_span(with_cache: bool) -> None:
    """A cacheable request the cache missed carries mcp_tasks.cache.hit = false on its
    request span; the hit that follows is a span of its own with true; without a cache the
    attribute is absent (the FaultServer sends ttlMs 60000, public, on tools/list)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = (_Tracing.decided, _Tracing.tracer)
    observability.tracing(True, tracer_provider=provider)
    server = FaultServer(G2)
    try:
        async with (
            server.memory() as transport,
            Client(
                transport,
                generation=G2,
                client_info=INFO,
                cache=ResultCache() if with_cache else None,
            ) as client,
        ):
            await client.list_tools_page()
            await client.list_tools_page()
    finally:
        _Tracing.decided, _Tracing.tracer = saved
        provider.shutdown()
    spans = [s for s in exporter.get_finished_spans() if s.name == "tools/list"]
    marks = [(s.attributes or {}).get("mcp_tasks.cache.hit") for s in spans]
    requests = [s for s in spans if "jsonrpc.request.id" in (s.attributes or {})]
    if with_cache:
        assert marks == [False, True]
        assert len(requests) == 1
        assert (requests[0].attributes or {}).get("mcp_tasks.cache.hit") is False
    else:
        assert marks == [None, None]
        assert len(requests) == 2
    assert len([m for m in server.received if m.get("method") == "tools/list"]) == len(requests)


class Clock:
    """Simulated monotonic time (seconds), for the client's ResultCache."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def two_page_server(generation: Generation) -> FaultServer:
    """tools/list and prompts/list in two pages: the first public for a minute, the second
    private for a second (hints sent in both generations; 2025-11-25 does not read them)."""
    server = FaultServer(generation)

    async def paged(message: dict[str, Any]) -> Any:
        method = message.get("method")
        if method not in ("tools/list", "prompts/list"):
            return None
        field = "tools" if method == "tools/list" else "prompts"
        second = (message.get("params") or {}).get("cursor") == "2"
        item: dict[str, Any] = {"name": "b" if second else "a"}
        if field == "tools":
            item["inputSchema"] = {"type": "object"}
        result: dict[str, Any] = {field: [item]}
        if second:
            result.update(ttlMs=1000, cacheScope="private")
        else:
            result.update(ttlMs=60_000, cacheScope="public", nextCursor="2")
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    server.on_message = paged
    return server


async def test_an_all_pages_helper_reports_the_whole_lists_hints() -> None:
    """SEP-2549: a list read page by page has the shortest TTL of its pages and is private if
    one page is; list_tools() (and the other helpers) report it, with how many pages came
    from the cache, which can be part of the list."""
    clock = Clock()
    cache = ResultCache(clock=clock)
    server = two_page_server(G2)
    async with (
        server.memory() as transport,
        Client(transport, generation=G2, client_info=INFO, cache=cache) as client,
    ):
        tools = client.list_tools()
        assert (tools.hints, tools.pages) == (None, 0)  # nothing read yet
        assert [t.name async for t in tools] == ["a", "b"]
        assert tools.hints == CacheHints(1000, CacheScope.PRIVATE)
        assert (tools.pages, tools.cached_pages) == (2, 0)
        again = client.list_tools()
        assert [t.name async for t in again] == ["a", "b"]
        assert (again.pages, again.cached_pages) == (2, 2)
        assert again.hints == CacheHints(1000, CacheScope.PRIVATE)
        clock.now += 2.0  # the second page is stale, the first still fresh
        half = client.list_tools()
        assert [t.name async for t in half] == ["a", "b"]
        assert (half.pages, half.cached_pages) == (2, 1)
        assert half.hints == CacheHints(1000, CacheScope.PRIVATE)
        prompts = client.list_prompts()
        assert [p.name async for p in prompts] == ["a", "b"]
        assert prompts.hints == CacheHints(1000, CacheScope.PRIVATE)
    sent = [m.get("params") or {} for m in server.received if m.get("method") == "tools/list"]
    assert [p.get("cursor") for p in sent] == [None, "2", "2"]


async def test_a_2025_list_has_no_hints() -> None:
    server = two_page_server(Generation.V2025_11_25)
    async with (
        server.memory() as transport,
        Client(
            transport, generation=Generation.V2025_11_25, client_info=INFO, cache=ResultCache()
        ) as client,
    ):
        tools = client.list_tools()
        assert [t.name async for t in tools] == ["a", "b"]
        assert (tools.hints, tools.pages, tools.cached_pages) == (None, 2, 0)


async def test_a_retry_is_no_miss_on_its_span(hinted_fastmcp4_url: tuple[str, str]) -> None:
    """E H5: an MRTR retry is no cacheable request, so its span carries no
    mcp_tasks.cache.hit; its first round, a miss, carries false."""
    url, _ = hinted_fastmcp4_url
    router = InputRouter(elicitation=ElicitationCapability(form={}))

    async def answer(ctx: InputContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(ElicitAction.ACCEPT, {"pin": "1234"})

    router.default_elicitation(answer)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = (_Tracing.decided, _Tracing.tracer)
    observability.tracing(True, tracer_provider=provider)
    try:
        async with Client(
            HttpTransport(url),
            generation=G2,
            client_info=INFO,
            capabilities=router.capabilities(),
            cache=ResultCache(),
        ) as client:
            router.attach(client)
            await client.read_resource("note://secret", inputs=router)
    finally:
        _Tracing.decided, _Tracing.tracer = saved
        provider.shutdown()
    reads = [s for s in exporter.get_finished_spans() if s.name == "resources/read"]
    assert [(s.attributes or {}).get("mcp_tasks.cache.hit", "absent") for s in reads] == [
        False,
        "absent",
    ]
