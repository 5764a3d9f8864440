"""Transports: the I/O shell that moves JSON-RPC messages, and nothing else.

Job: bytes in and out. ``base.py`` is the interface every transport implements (and the
wrapper for observing one); ``http.py`` is Streamable HTTP (its SSE streams in
``_http_sse.py``) on one of two engines behind ``_http_engine.py``: ``_h1_engine.py``, the
default, a hand-written HTTP/1.1 connection pool (``_h1.py``, ``_aio.py``), or
``_httpx_engine.py``, an httpx client; ``lean.py`` pins the first; ``stdio.py`` a child
process, ``memory.py`` an in-process pair for tests; ``_sse_httpx.py`` (httpx-sse under the
library's bound) and ``_framing.py`` are their shared readers, ``_sse.py`` the hand-written SSE
decoder kept as the reference the SSE properties and the bench compare it with. A transport
never decides what a message means: whether a request may be held open by the server is its
sender's argument (``held=``), what headers a message carries its driver's (the hook
``Transport.use_message_headers(headers)``).

May import: ``_codec``, ``models``, ``_exceptions``, ``_limits``, ``observability``; httpx,
httpx-sse, h11, anyio. Never ``_sansio``, the drivers, the session or the Client.
"""
