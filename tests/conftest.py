"""Shared fixtures: anyio backends and the real MCP peer servers (``tests/peers``)."""

from __future__ import annotations

import os
import signal
import zlib
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from peers.harness import (
    PEERS,
    Peer,
    peer_available,
    running_http_peer,
    stdio_command,
    stdio_env,
)

from mcp_tasks_client import HttpTransport, LeanHttpTransport, StdioTransport
from mcp_tasks_client.transports import Transport

# The 2025-11-25 tasks peers; fastmcp4 and mcp2 (2026-07-28) have their own fixtures.
PEER_NAMES = ["mcp1", "ts1"]

# These machines are shared and noisy: no per-example deadline, no "too slow" health check.
# Timing is measured in `nox -s bench`, never asserted in tests.
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# `nox -s fuzz`: the codec and SSE properties, long (MCP_TASKS_HYPOTHESIS_PROFILE=fuzz);
# MCP_TASKS_FUZZ_EXAMPLES sets how long (20,000 examples per property by default: hours).
settings.register_profile(
    "fuzz",
    parent=settings.get_profile("shared-machine"),
    max_examples=int(os.environ.get("MCP_TASKS_FUZZ_EXAMPLES", "20000")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("MCP_TASKS_HYPOTHESIS_PROFILE", "shared-machine"))

# A suite started in the background of a script (`python3 -m nox > log &`) inherits SIGINT
# ignored, and every process it spawns would too: the Ctrl-C tests' commands would then
# rightly ignore the signal (see test_cli_interrupt). The suite's children start as from a
# terminal: SIGINT at its default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


SDK_HOST = "MCP_TASKS_SDK_HOST"
"""Set (by tests/test_sdk_hosts.py) when the suite runs inside a host's SDK venv: only then are
the tests of ``tests/sdk_hosts`` collected (they import the official SDK)."""
collect_ignore = [] if os.environ.get(SDK_HOST) else ["sdk_hosts"]

FULL_MATRIX = "MCP_TASKS_FULL_MATRIX"
"""Set to 1 (``nox -s full-matrix``) to run every stdio test on both loops."""


def _over_stdio(item: pytest.Item) -> bool:
    """Whether a parametrized test talks to its peer over stdio (a transport parameter
    ``stdio`` or ``<peer>-stdio``, or the ``peer_stdio`` fixture), and is not a test of
    stdio itself (one whose name says stdio)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "stdio" in getattr(item, "originalname", item.name):
        return False  # not parametrized, or a test of stdio itself: on both loops
    if "peer_stdio" in getattr(item, "fixturenames", ()):
        return True
    return any(
        isinstance(value, str) and (value == "stdio" or value.endswith("-stdio"))
        for value in callspec.params.values()
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first; and a peer test over stdio runs on one loop, not both: trio for
    some tests, asyncio for
    the others, chosen per test by a stable hash of its name and other parameters (so each
    loop still runs about half of them, and the same half every run).

    Starting a peer over stdio is most of such a test (a Python peer imports its whole SDK:
    up to 3 s), and the stdio tests on both loops were a fifth of the suite's time. What the
    loop changes over stdio (the child process, its pipes, stopping it) is the transport's,
    and the transport's own tests (test_stdio_faults, and every test whose name says stdio)
    still run on both loops; the behaviour the peer tests check is the client's, the same
    over either loop and shown on both by their HTTP variants. ``MCP_TASKS_FULL_MATRIX=1``
    (``nox -s full-matrix``) runs every combination."""
    # The slow tests (a minute or two each) first: started last, one of them would be the
    # only thing running at the end while the other workers sit idle.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable
    if os.environ.get(FULL_MATRIX) == "1":
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("anyio_backend") if callspec is not None else None
        if backend is None or not _over_stdio(item):
            keep.append(item)
            continue
        assert callspec is not None
        others = sorted((k, str(v)) for k, v in callspec.params.items() if k != "anyio_backend")
        name = f"{item.nodeid.split('::')[0]}::{getattr(item, 'originalname', item.name)}"
        chosen = ("trio", "asyncio")[zlib.crc32(repr((name, others)).encode()) % 2]
        (keep if backend == chosen else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(params=["trio", "asyncio"], scope="session")
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both trio and asyncio.

    Session scope, so async fixtures of any scope may depend on it.
    """
    backend: str = request.param
    return backend


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require_peer(name: str) -> Peer:
    """The named peer; fails under CI=true, skips elsewhere, if it is not installed."""
    peer = PEERS[name]
    if not peer_available(peer):
        msg = (
            f"peer {peer.name} ({peer.requirement}) is not installed; "
            "run `python tests/peers/install.py`"
        )
        if _in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return peer


@pytest.fixture(scope="session")
def mcp1_http_url() -> Iterator[str]:
    """URL of one mcp==1.30.0 Streamable HTTP server shared by the whole session."""
    with running_http_peer(require_peer("mcp1")) as url:
        yield url


@pytest.fixture(scope="session")
def ts1_http_url() -> Iterator[str]:
    """URL of one @modelcontextprotocol/sdk@1.32.2 HTTP server for the session."""
    with running_http_peer(require_peer("ts1")) as url:
        yield url


@pytest.fixture(scope="session")
def fastmcp4_http_url() -> Iterator[str]:
    """URL of one fastmcp[tasks]==4.1.4 HTTP server (2026-07-28 tasks) for the session."""
    with running_http_peer(require_peer("fastmcp4")) as url:
        yield url


@pytest.fixture(scope="session")
def fastmcp3_http_url() -> Iterator[str]:
    """URL of one fastmcp[tasks]==3.4.11 HTTP server (2025-11-25 tasks) for the session."""
    with running_http_peer(require_peer("fastmcp3")) as url:
        yield url


@pytest.fixture(scope="session")
def mcp2_http_url() -> Iterator[str]:
    """URL of one mcp==2.3.0 HTTP server (2026-07-28, no tasks) for the session."""
    with running_http_peer(require_peer("mcp2")) as url:
        yield url


@pytest.fixture(scope="session", params=PEER_NAMES)
def peer_http(request: pytest.FixtureRequest) -> tuple[Peer, str]:
    """``(peer, "http://127.0.0.1:PORT/mcp")`` for each 2025-11-25 tasks peer."""
    name: str = request.param
    peer = require_peer(name)
    url: str = request.getfixturevalue(f"{name}_http_url")
    return peer, url


@pytest.fixture(scope="session", params=PEER_NAMES)
def peer_stdio(request: pytest.FixtureRequest) -> tuple[Peer, list[str]]:
    """``(peer, argv)``: the argv starts the peer as an MCP server over stdio."""
    name: str = request.param
    peer = require_peer(name)
    return peer, stdio_command(peer)


@pytest.fixture(
    params=["mcp1-http", "mcp1-lean", "mcp1-stdio", "ts1-http", "ts1-lean", "ts1-stdio"]
)
def transport(request: pytest.FixtureRequest) -> Transport:
    """A fresh, unopened transport to each peer over each transport kind (``lean``: the opt-in
    LeanHttpTransport, which must pass what HttpTransport passes)."""
    name, kind = str(request.param).split("-")
    peer = require_peer(name)
    if kind in ("http", "lean"):
        url: str = request.getfixturevalue(f"{name}_http_url")
        return HttpTransport(url, engine="httpx") if kind == "http" else LeanHttpTransport(url)
    return StdioTransport(stdio_command(peer))


@pytest.fixture(params=["http", "lean", "stdio"])
def gen2(request: pytest.FixtureRequest) -> Transport:
    """A fresh transport to the fastmcp 4.1.4 peer (2026-07-28 tasks), HTTP (httpx or lean) or
    stdio."""
    peer = require_peer("fastmcp4")
    if request.param in ("http", "lean"):
        url: str = request.getfixturevalue("fastmcp4_http_url")
        return (
            HttpTransport(url, engine="httpx")
            if request.param == "http"
            else LeanHttpTransport(url)
        )
    return StdioTransport(stdio_command(peer), env=stdio_env(peer))
