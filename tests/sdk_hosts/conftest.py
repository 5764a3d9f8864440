"""One logged server of each peer for a whole host run (``shared.py`` says why that is safe).

``logged_fastmcp4`` and ``logged_mcp1`` give each test the server's URL and a view of its
request log that starts with the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sdk_hosts.shared import RequestLogView, serving_logged


@pytest.fixture(scope="session")
def _fastmcp4_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with serving_logged("fastmcp4", tmp_path_factory.mktemp("fastmcp4")) as served:
        yield served


@pytest.fixture(scope="session")
def _mcp1_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with serving_logged("mcp1", tmp_path_factory.mktemp("mcp1")) as served:
        yield served


@pytest.fixture
def logged_fastmcp4(_fastmcp4_server: tuple[str, Path]) -> tuple[str, RequestLogView]:
    """The run's real fastmcp 4 tasks server (2026-07-28) and its log from this test on."""
    url, log = _fastmcp4_server
    return url, RequestLogView.from_now(log)


@pytest.fixture
def logged_mcp1(_mcp1_server: tuple[str, Path]) -> tuple[str, RequestLogView]:
    """The run's real mcp 1.30 server (2025-11-25) and its log from this test on."""
    url, log = _mcp1_server
    return url, RequestLogView.from_now(log)
