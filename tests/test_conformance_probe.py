"""The live probe (``conformance.probe``): against the public FaultServer, clean and breaking
one rule at a time, and against the real peers (mcp 1.30, TypeScript SDK 1.32, fastmcp 4.1.4,
over HTTP and stdio), where every known deviation is reported under its rule and nothing else
fails or warns."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from conftest import require_peer
from peers.harness import Peer, stdio_command, stdio_env

from mcp_tasks_client import Generation, StdioTransport
from mcp_tasks_client.conformance import ProbeReport, ProbeVerdict, probe, unique_rules
from mcp_tasks_client.testing import DROP, PRESETS, FaultServer
from mcp_tasks_client.transports import Transport

pytestmark = pytest.mark.anyio

G1, G2 = Generation.V2025_11_25, Generation.V2026_07_28
FAULT_SAFE = ["echo", "need_task", "fail", "protocol_error", "plain", "ask", "confirm"]
MCP1_SAFE: dict[str, dict[str, Any]] = {
    "slow_echo": {"text": "hi", "seconds": 0.3},
    "need_task": {"text": "x", "seconds": 0.2},
    "fail": {},
    "confirm": {"text": "go"},
}
FASTMCP4_SAFE: dict[str, dict[str, Any]] = {
    "slow_compute": {"seconds": 0.3},
    "failing_job": {},
    "greet": {},
    "protocol_error_job": {},
    "test_tool_with_task": {},
    "confirm_delete": {},
}


def flagged(report: ProbeReport) -> set[tuple[str, str]]:
    """(rule, verdict) of every fail and warn."""
    return {
        (r.rule_id, r.verdict.value)
        for r in report.with_verdict(ProbeVerdict.FAIL, ProbeVerdict.WARN)
    }


def check_shape(report: ProbeReport) -> None:
    """One result per rule of the generation; the JSON objects have exactly the four keys."""
    ids = [r.id for r in unique_rules() if report.generation in r.generations]
    assert [r.rule_id for r in report.results] == ids
    objects = json.loads(json.dumps(report.to_json()))
    assert all(set(o) == {"rule", "level", "verdict", "evidence"} for o in objects)
    table = report.render_table()
    assert all(rule_id in table for rule_id in ids)
    for r in report.with_verdict(ProbeVerdict.NOT_APPLICABLE):
        assert r.evidence  # every result is explained


async def probe_fault(generation: Generation, **kw: Any) -> ProbeReport:
    server = FaultServer(generation, **kw)
    with anyio.fail_after(60):
        async with server.memory() as transport:
            return await probe(lambda: transport, generation, safe_tools=FAULT_SAFE, timeout=10)


@pytest.mark.parametrize("generation", [G1, G2])
async def test_a_conforming_server_has_nothing_flagged(generation: Generation) -> None:
    report = await probe_fault(generation)
    check_shape(report)
    assert flagged(report) == set()
    passed = {r.rule_id for r in report.with_verdict(ProbeVerdict.PASS)}
    if generation is G1:
        # the probe's own checks, and the in-task input of ask (V-21, V-22, V-25)
        expected = {"V-19", "C-41", "V-02", "V-11", "V-21", "V-22", "V-25", "V-26"}
    else:
        # ask's inputRequests and tasks/update (E S13, E S14); confirm's MRTR (E S21)
        expected = {"E S2", "E S3", "E S5", "E S7", "E S13", "E S14", "E S21", "V-26"}
    assert expected <= passed


@pytest.mark.parametrize(
    ("generation", "rule_id", "verdict"),
    [
        (G1, "V-08", "fail"),
        (G1, "V-16", "fail"),
        (G1, "V-19", "fail"),
        (G1, "C-41", "fail"),  # and V-09 (a cancelled task stays cancelled): see below
        (G1, "V-13", "warn"),
        (G1, "V-02", "warn"),  # a roots/list before the initialize answer
        (G1, "V-11", "fail"),  # -32602 from tasks/result while the task works on
        (G1, "V-21", "fail"),  # the in-task elicitation without related-task
        (G1, "V-22", "warn"),  # working while its question is open
        (G1, "V-26", "warn"),
        (G2, "E S2", "fail"),
        (G2, "E S7", "fail"),  # isError ended failed
        (G2, "E S13", "fail"),
        (G2, "E S14", "fail"),
        (G2, "E S21", "warn"),  # a task-only tool asking inside its task, not by MRTR first
        (G2, "V-26", "warn"),
        (G2, "E S3", "fail"),
        (G2, "E S5", "fail"),
        (G2, "E S16", "fail"),
        (G2, "E S17", "fail"),
        (G2, "E A-23", "warn"),  # -32003 for -32021: read as it (E S3 passes), warned
        (G2, "E H1", "fail"),  # discover and tools/list without caching hints (SEP-2549)
    ],
)
async def test_a_server_breaking_one_rule_fails_exactly_that_rule(
    generation: Generation, rule_id: str, verdict: str
) -> None:
    report = await probe_fault(generation, breaks={rule_id})
    check_shape(report)
    also = {("V-09", "fail")} if rule_id == "C-41" else set()  # V-09 covers T:496 too
    assert flagged(report) == {(rule_id, verdict)} | also
    assert report.result(rule_id).evidence
    if rule_id not in ("V-22", "E S21", "V-02"):  # those quote a message where they can
        assert report.result(rule_id).messages


async def test_the_deviating_2025_server_is_reported_under_its_three_rules() -> None:
    """The third-party server the issue describes, as a preset: tasks/result of an unfinished
    task answers -32602 instead of blocking (V-11, a MUST: the next poll shows the task still
    working, so the probe is sure), its in-task elicitation has no related-task _meta (V-21),
    and createdAt moves between snapshots (V-26, a SHOULD): each under its rule, with the
    message as evidence, and nothing else flagged."""
    server = FaultServer.preset("deviating-2025")
    with anyio.fail_after(60):
        async with server.memory() as transport:
            report = await probe(lambda: transport, G1, safe_tools=FAULT_SAFE, timeout=10)
    check_shape(report)
    assert set(PRESETS["deviating-2025"][1]) == {"V-11", "V-21", "V-26"}
    assert flagged(report) == {("V-11", "fail"), ("V-21", "fail"), ("V-26", "warn")}
    v11 = report.result("V-11")
    # the snapshot after the early answer (a tasks/get, or a tasks/list of the V-19 step)
    snapshots = [m["result"] for m in v11.messages]
    snapshots += [t for s in snapshots for t in s.get("tasks", ())]
    still = {s["taskId"] for s in snapshots if s.get("status") == "working"}
    assert still & {m.group(1) for m in re.finditer(r"task (task-\d+)\)", v11.evidence)}
    early = [
        m
        for m in server.received
        if m.get("method") == "tasks/result" and m["params"]["taskId"] in still
    ]
    assert early  # the probe did call tasks/result on the unfinished task
    (v21, *_) = report.result("V-21").messages
    assert v21["method"] == "elicitation/create"
    assert "_meta" not in v21["params"]
    (v26, *_) = report.result("V-26").messages
    assert "createdAt" in report.result("V-26").evidence
    assert v26["result"]["createdAt"] != server.tasks[v26["result"]["taskId"]].created_at


async def test_the_deviating_2025_server_over_http() -> None:
    with anyio.fail_after(60):
        async with FaultServer.preset("deviating-2025").http() as http:
            report = await probe(http.url, G1, safe_tools=["echo", "ask"], timeout=10)
    assert flagged(report) == {("V-11", "fail"), ("V-21", "fail"), ("V-26", "warn")}


async def test_v28_opens_the_second_session_again_when_the_server_forgets_it() -> None:
    """mcp 1.30 under load discards a new session whose opening request it had not finished
    (its next request is answered 404). V-28 opens one more, as the spec answers a 404, and
    its evidence says so; without that V-28 ended not measured (SessionExpired)."""
    initializes = 0

    async def forget_the_second_session(message: dict[str, Any]) -> None:
        nonlocal initializes
        if message.get("method") == "initialize":
            initializes += 1
            if initializes == 2:  # the probe's second session: V-28's (V-27's comes after)
                server.ended_sessions.add("fault-2")

    server = FaultServer(G1, on_message=forget_the_second_session)
    with anyio.fail_after(60):
        async with server.http() as http:
            report = await probe(http.url, G1, safe_tools=["echo"], timeout=10)
    result = report.result("V-28")
    assert result.verdict is ProbeVerdict.PASS, result
    assert "'fault-3'" in result.evidence
    assert "forgot the first one at once" in result.evidence
    assert initializes >= 3


async def test_the_asking_tool_over_http_passes() -> None:
    """Over HTTP the question comes on the SSE stream of the blocking tasks/result."""
    with anyio.fail_after(60):
        async with FaultServer(G1).http() as http:
            report = await probe(http.url, G1, safe_tools=["ask"], timeout=10)
    assert flagged(report) == set()
    for rule_id in ("V-21", "V-22", "V-25"):
        assert report.result(rule_id).verdict is ProbeVerdict.PASS


async def test_the_forbidden_tool_probe_is_opt_in() -> None:
    """V-17: a task for a task-forbidden tool breaks a client rule, so only with negative."""
    server = FaultServer(G1, breaks={"V-17"})
    with anyio.fail_after(60):
        async with server.memory() as transport:
            quiet = await probe(lambda: transport, G1, safe_tools=["plain"], timeout=10)
        async with server.memory() as transport:
            loud = await probe(lambda: transport, G1, safe_tools=["plain"], negative=True)
    assert quiet.result("V-17").verdict is ProbeVerdict.NOT_APPLICABLE
    assert "opt in" in quiet.result("V-17").evidence
    assert flagged(loud) == {("V-17", "warn")}


async def test_read_only_by_default_calls_no_tool() -> None:
    server = FaultServer(G1)
    with anyio.fail_after(60):
        async with server.memory() as transport:
            report = await probe(lambda: transport, G1, timeout=10)
    assert "tools/call" not in {m.get("method") for m in server.received}
    assert flagged(report) == set()
    assert report.result("V-04").verdict is ProbeVerdict.NOT_APPLICABLE


async def test_a_dropped_answer_is_explained_not_raised() -> None:
    """A server that never answers tasks/list: the probe goes on; the rules it would have
    exercised say why they were not."""

    async def hook(message: dict[str, Any]) -> Any:
        return DROP if message.get("method") == "tasks/list" else None

    server = FaultServer(G1, on_message=hook)
    with anyio.fail_after(60):
        async with server.http() as http:
            report = await probe(http.url, G1, safe_tools=["echo"], timeout=1)
    assert flagged(report) == set()
    assert "tasks/list" in report.result("V-19").evidence  # the connection was closed on it


async def test_a_server_that_is_not_there_is_a_report() -> None:
    async with FaultServer(G1).http() as http:
        url = http.url
    report = await probe(url, G1, timeout=2)
    assert report.error is not None
    assert {r.verdict for r in report.results} == {ProbeVerdict.NOT_APPLICABLE}


async def test_fault_server_over_http_in_2026() -> None:
    with anyio.fail_after(60):
        async with FaultServer(G2, breaks={"E S16"}).http() as http:
            report = await probe(http.url, G2, safe_tools=FAULT_SAFE, timeout=10)
    assert flagged(report) == {("E S16", "fail")}
    for rule_id in ("E C7", "E S24"):  # the HTTP facts: no session id; -32601 with 404
        assert report.result(rule_id).verdict is ProbeVerdict.PASS


HTTP_1 = ("V-27a", "V-27b", "V-27c")


async def test_over_http_the_transport_rules_and_v28_pass() -> None:
    """The FaultServer over HTTP gives each session its own Mcp-Session-Id and lists only its
    tasks: a second session does not see the first one's task (V-28 pass)."""
    with anyio.fail_after(60):
        async with FaultServer(G1).http() as http:
            report = await probe(http.url, G1, safe_tools=FAULT_SAFE, timeout=10)
    check_shape(report)
    assert flagged(report) == set()
    for rule_id in (*HTTP_1, "V-27", "V-28", "V-19"):
        assert report.result(rule_id).verdict is ProbeVerdict.PASS, report.result(rule_id)
    assert "did not list" in report.result("V-28").evidence
    # the GET stream, opened before any call (a task's question may come there)
    assert report.result("V-27d").verdict is ProbeVerdict.PASS
    assert report.result("V-27d").exchanges == ("HTTP get 200",)


async def test_a_bogus_version_served_and_an_ended_session_alive_fail_v27() -> None:
    """V-27's probe-only parts, on a session of the probe's own: a request with a bogus
    MCP-Protocol-Version must get 400, one in a session the server let the client DELETE 404."""
    server = FaultServer(G1, breaks={"V-27"})
    with anyio.fail_after(60):
        async with server.http() as http:
            report = await probe(http.url, G1, safe_tools=FAULT_SAFE, timeout=10)
    assert flagged(report) == {("V-27", "fail")}
    result = report.result("V-27")
    assert "1999-01-01" in result.evidence
    assert "not 404" in result.evidence
    assert {m["status"] for m in result.messages} == {200}


async def test_a_server_that_refuses_delete_leaves_the_ended_session_part_out() -> None:
    """A 405 to DELETE: the server does not let clients end sessions (allowed), so only the
    version part is checked."""

    async def refuse_delete(request: Any, conn: Any) -> None:
        await conn.head(405, {"Content-Length": "0"})

    server = FaultServer(G1)
    with anyio.fail_after(60):
        async with server.http() as http:
            http.on_delete = refuse_delete
            report = await probe(http.url, G1, safe_tools=FAULT_SAFE, timeout=10)
    result = report.result("V-27")
    assert result.verdict is ProbeVerdict.PASS
    assert "405" in result.evidence
    assert server.ended_sessions == set()


async def test_a_server_listing_every_session_warns_v28() -> None:
    """tasks/list across sessions, no credentials: the server tells no requestor apart yet
    declares tasks.list (V-28, a SHOULD), with the second session's listing as evidence."""
    with anyio.fail_after(60):
        async with FaultServer(G1, breaks={"V-28"}).http() as http:
            report = await probe(http.url, G1, safe_tools=FAULT_SAFE, timeout=10)
    check_shape(report)
    assert flagged(report) == {("V-28", "warn")}
    result = report.result("V-28")
    assert "fault-1" in result.evidence
    assert "fault-2" in result.evidence
    (listing,) = result.messages
    assert {t["taskId"] for t in listing["result"]["tasks"]} >= {"task-1"}


async def test_with_credentials_v28_is_not_applicable() -> None:
    """Both sessions carry the caller's headers: one requestor, so listing is correct."""
    with anyio.fail_after(60):
        async with FaultServer(G1, breaks={"V-28"}).http() as http:
            headers = {"Authorization": "Bearer probe"}
            report = await probe(http.url, G1, safe_tools=["echo"], timeout=10, headers=headers)
            assert all(r.headers.get("authorization") == "Bearer probe" for r in http.received)
    assert flagged(report) == set()
    result = report.result("V-28")
    assert result.verdict is ProbeVerdict.NOT_APPLICABLE
    assert "['Authorization']" in result.evidence
    assert "one requestor" in result.evidence


async def test_v28_needs_http() -> None:
    report = await probe_fault(G1)  # in memory: a second connection would be another server
    assert report.result("V-28").verdict is ProbeVerdict.NOT_APPLICABLE
    assert "needs HTTP" in report.result("V-28").evidence


async def test_v02_over_http_a_request_on_the_initialize_response_stream() -> None:
    """V-02 broken over HTTP: the initialize answer is an SSE stream carrying a roots/list
    request before the answer, so before the client could send notifications/initialized.
    The probe warns under V-02 (and nothing else); the client answered the request (it
    declared no roots: an error) and went on."""
    server = FaultServer(G1, breaks={"V-02"})
    with anyio.fail_after(60):
        async with server.http() as http:
            report = await probe(http.url, G1, safe_tools=FAULT_SAFE, timeout=10)
    check_shape(report)
    assert flagged(report) == {("V-02", "warn")}
    assert "roots/list" in report.result("V-02").evidence
    (asked, *_) = server.sent_requests
    assert asked["method"] == "roots/list"
    posted = [r.json for r in http.received if r.http_method == "POST" and r.json]
    assert posted[0]["method"] == "initialize"
    (answer,) = [m for m in posted if m.get("id") == asked["id"] and "method" not in m]
    assert "error" in answer


# -- the real peers ----------------------------------------------------------------------------

MCP1 = {("V-08", "fail"), ("V-12", "fail"), ("V-16", "fail")}
TS1 = {("V-05", "warn"), ("V-13", "warn"), ("V-16", "fail")}


async def test_mcp1(mcp1_http_url: str) -> None:
    """mcp 1.30: V-08 (no ttl for a task started without one), V-12 (a failed task's
    tasks/result holds only _meta), V-16; and, on the GET stream the probe opens before any
    call, notifications/tasks/status without ttl (V-23, as over stdio); everything else
    passes or is explained."""
    with anyio.fail_after(120):
        report = await probe(mcp1_http_url, G1, safe_tools=MCP1_SAFE, timeout=20)
    check_shape(report)
    assert flagged(report) == MCP1 | {("V-23", "fail")}
    (note, *_) = report.result("V-23").messages
    assert note["method"] == "notifications/tasks/status"
    assert "ttl" not in note["params"]
    assert set(report.result("V-12").messages[0]["result"]) == {"_meta"}
    for rule_id in ("V-19", "V-22", "C-41", "V-02", *HTTP_1, "V-27", "V-28"):
        assert report.result(rule_id).verdict is ProbeVerdict.PASS, report.result(rule_id)


# V-28 on the peers: mcp 1.30 and the TypeScript SDK 1.32 both list only the session's own
# tasks, so a second session without credentials does not see the first one's task: pass.
# (mcp 1.30 itself stops task support of every session once any session ends, which the peer
# script works around; against a plain mcp 1.30 server the probe runs V-28 and V-27 last, so
# the sessions they end disturb no other step.)


async def test_ts1(ts1_http_url: str) -> None:
    """TypeScript SDK 1.32: V-05 and V-13 warnings, V-16."""
    with anyio.fail_after(120):
        report = await probe(ts1_http_url, G1, safe_tools=MCP1_SAFE, timeout=20)
    check_shape(report)
    assert flagged(report) == TS1
    for rule_id in (*HTTP_1, "V-27", "V-28"):
        assert report.result(rule_id).verdict is ProbeVerdict.PASS, report.result(rule_id)


async def test_fastmcp4(fastmcp4_http_url: str) -> None:
    """fastmcp 4.1.4: its one gap, a task-only tool asking its MRTR input inside the task
    (E S21, a SHOULD: warn); the removed methods, -32021 and durable create pass."""
    with anyio.fail_after(120):
        report = await probe(fastmcp4_http_url, G2, safe_tools=FASTMCP4_SAFE, timeout=20)
    check_shape(report)
    assert flagged(report) == {("E S21", "warn")}
    for rule_id in ("E S2", "E S3", "E S5", "E S7", "E S16", "E S17", "E C7", "E S24"):
        assert report.result(rule_id).verdict is ProbeVerdict.PASS


async def test_gen1_peers_over_stdio(peer_stdio: tuple[Peer, list[str]]) -> None:
    """Over stdio mcp 1.30 also pushes notifications/tasks/status, and leaves ``ttl`` out of
    them as it does of tasks/get (the Task schema requires it): V-23 fails there too, with
    the notification as evidence. Over HTTP they come on the GET stream (see test_mcp1)."""
    peer, argv = peer_stdio

    def connect() -> Transport:
        return StdioTransport(argv)

    with anyio.fail_after(120):
        report = await probe(connect, G1, safe_tools=MCP1_SAFE, timeout=20)
    if peer.name == "mcp1":
        assert flagged(report) == MCP1 | {("V-23", "fail")}
        (note, *_) = report.result("V-23").messages
        assert note["method"] == "notifications/tasks/status"
        assert "ttl" not in note["params"]
    else:
        assert flagged(report) == TS1


async def test_fastmcp4_over_stdio() -> None:
    peer = require_peer("fastmcp4")

    def connect() -> Transport:
        return StdioTransport(stdio_command(peer), env=stdio_env(peer))

    with anyio.fail_after(120):
        report = await probe(connect, G2, safe_tools=FASTMCP4_SAFE, timeout=20)
    assert flagged(report) == {("E S21", "warn")}


# -- fastmcp 3.4.11: the probe's passes are earned (issue 23) ---------------------------------

FASTMCP3_SAFE: dict[str, dict[str, Any]] = {
    "slow_echo": {"text": "hi", "seconds": 0.5},
    "fail": {},
    "confirm": {"text": "go"},
}


def check_fastmcp3(report: ProbeReport) -> None:
    """fastmcp 3.4.11 answers an early tasks/result with -32602 (V-11), asks its task's
    question with no related-task _meta (V-21) and says working while it is open (V-22, a
    SHOULD: warn): each under its rule, with the messages that show it."""
    check_shape(report)
    v11 = report.result("V-11")
    assert v11.verdict is ProbeVerdict.FAIL
    assert "still 'working'" in v11.evidence
    v21 = report.result("V-21")
    assert v21.verdict is ProbeVerdict.FAIL
    asked = [m for m in v21.messages if m.get("method") == "elicitation/create"]
    assert asked
    assert all("_meta" not in m["params"] for m in asked)
    v22 = report.result("V-22")
    assert v22.verdict is ProbeVerdict.WARN
    assert "was working while its question was open" in v22.evidence
    (get,) = v22.messages
    assert get["result"]["status"] == "working"
    for r in report.with_verdict(ProbeVerdict.PASS):  # every pass names what exercised it
        assert r.exchanges or r.rule_id in ("V-02", "V-01", "V-28", "V-27", "C-41"), r


async def test_fastmcp3_over_http(fastmcp3_http_url: str) -> None:
    """Over HTTP its question comes on the GET stream, which the probe opens first."""
    with anyio.fail_after(120):
        report = await probe(fastmcp3_http_url, G1, safe_tools=FASTMCP3_SAFE, timeout=20)
    check_fastmcp3(report)
    assert report.result("V-27d").verdict is ProbeVerdict.PASS


async def test_fastmcp3_over_stdio() -> None:
    """Over stdio its question comes inline, with no tasks/result open."""
    peer = require_peer("fastmcp3")

    def connect() -> Transport:
        return StdioTransport(stdio_command(peer), env=stdio_env(peer))

    with anyio.fail_after(120):
        report = await probe(connect, G1, safe_tools=FASTMCP3_SAFE, timeout=20)
    check_fastmcp3(report)


@pytest.mark.parametrize("generation", [G1, G2])
async def test_every_pass_names_its_exchanges_on_a_conforming_server(
    generation: Generation,
) -> None:
    """A pass found by the validator names the exchanges that could have broken the rule."""
    report = await probe_fault(generation)
    for r in report.with_verdict(ProbeVerdict.PASS):
        if r.evidence.startswith("exercised"):
            assert r.exchanges, r
            assert "seen:" in r.evidence
