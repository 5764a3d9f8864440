"""Shared fixtures: anyio backends and the real MCP peer servers (``tests/peers``)."""

from __future__ import annotations

import os
import signal
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
        return HttpTransport(url) if kind == "http" else LeanHttpTransport(url)
    return StdioTransport(stdio_command(peer))


@pytest.fixture(params=["http", "lean", "stdio"])
def gen2(request: pytest.FixtureRequest) -> Transport:
    """A fresh transport to the fastmcp 4.1.4 peer (2026-07-28 tasks), HTTP (httpx or lean) or
    stdio."""
    peer = require_peer("fastmcp4")
    if request.param in ("http", "lean"):
        url: str = request.getfixturevalue("fastmcp4_http_url")
        return HttpTransport(url) if request.param == "http" else LeanHttpTransport(url)
    return StdioTransport(stdio_command(peer), env=stdio_env(peer))
