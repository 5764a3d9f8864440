"""``LeanHttpTransport``: :class:`HttpTransport` held to the lean engine (kept for callers who
named it before the lean engine became the default).

Job: the name only. ``HttpTransport(url)`` is the same engine now (``_h1_engine.py``); this
class pins it (``engine="lean"`` whatever the environment's proxy settings say), refuses an
httpx client, and keeps its old default of 16 connections.

May import: ``http``, ``_exceptions``.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from .._exceptions import UsageError
from .http import HttpTransport, StreamResumption

__all__ = ["LeanHttpTransport"]


class LeanHttpTransport(HttpTransport):
    """:class:`HttpTransport` on the lean engine, always (``engine="lean"``).

    The same behaviour and arguments as :class:`HttpTransport` (JSON and SSE answers, the
    session, the GET stream, resumption, DELETE on close, Limits), except:

    Args:
        max_connections: The most connections open at once (default 16: size it to
            ``PollPolicy.max_in_flight``); idle ones are kept alive and reused.

    ``http_client`` is refused (UsageError): there is no httpx client to inject. No proxy,
    no HTTP/2: for those, ``HttpTransport(url, http_client=...)``.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 10.0,
        write_timeout: float = 30.0,
        max_connections: int = 16,
        max_held_connections: int = 64,
        resumption: StreamResumption | None = None,
        delete_session_on_close: bool = True,
        session_id: str | None = None,
        http_client: Any = None,
    ) -> None:
        if http_client is not None:
            raise UsageError("LeanHttpTransport has no httpx client to inject; use HttpTransport")
        super().__init__(
            url,
            headers=headers,
            engine="lean",
            ssl_context=ssl_context,
            connect_timeout=connect_timeout,
            write_timeout=write_timeout,
            max_connections=max_connections,
            max_held_connections=max_held_connections,
            resumption=resumption,
            delete_session_on_close=delete_session_on_close,
            session_id=session_id,
        )
