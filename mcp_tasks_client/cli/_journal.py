"""``--journal``: a file (the SQLite journal) or a ``postgresql://`` URL (the PostgreSQL one).

The same command line works on both. A file is created (owner-only) on first use; so is a
PostgreSQL journal (its schema, ``mcp_tasks``, in the database the URL names). Credentials
come from the URL or libpq's environment (``PGPASSWORD``, ``PGPASSFILE``, ...) and are never
shown: the journal is named by :func:`journal_name`, the URL without its password.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from .._exceptions import UsageError

_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(spec: str) -> bool:
    return spec.startswith(_SCHEMES)


def open_journal(spec: str, reconnect: float = 0.0) -> AbstractContextManager[Any]:
    """The journal ``spec`` names, to open with ``with`` (it connects or opens the file);
    ``reconnect``: seconds a PostgreSQL journal keeps trying to reach a lost database (0:
    none)."""
    if not is_postgres(spec):
        from ..journal import SQLiteJournal

        return SQLiteJournal(spec)
    try:
        from ..journal_postgres import PostgresJournal, Reconnect
    except ImportError:
        raise UsageError(
            "a postgresql:// journal needs the postgres extra: "
            "pip install 'mcp-tasks-client[postgres]'"
        ) from None
    again = Reconnect(within=reconnect) if reconnect > 0 else None
    return PostgresJournal(spec, create=True, reconnect=again)


def journal_name(spec: str) -> str:
    """``spec`` as the command may print it: a URL loses its password."""
    if not is_postgres(spec):
        return spec
    try:
        from ..journal_postgres import display_name
    except ImportError:
        return spec.split("://", 1)[0] + "://..."
    try:
        return display_name(spec)
    except UsageError:
        return spec.split("://", 1)[0] + "://..."
