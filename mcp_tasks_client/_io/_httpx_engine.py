"""The httpx engine under HttpTransport: every exchange through an ``httpx.AsyncClient``.

Job: serve what only httpx gives a caller, by the caller's explicit choice (an injected
``http_client`` with its auth flow, proxies and mounts, HTTP/2, event hooks; or
``engine="httpx"``, which makes a client the way httpx would, honouring the environment's
proxy settings). Nothing here knows MCP.

May import: ``_http_engine``; httpx.

Theory of operation: an injected client (or a URL with credentials in it, which httpx turns
into an ``Authorization`` header) goes through ``AsyncClient.send``, so its whole client layer
runs: auth, event hooks, mounts. A client the engine made itself has none of that layer
configured, so each request goes straight to the connection pool that client would pick for
the URL (a proxy's when the environment names one), with the header lines built once per
session: the bytes on the wire are those ``send`` would write. Requests held open by the
server by design get a second client of their own (``max_held``), made on first use, so a poll
never waits behind them; an injected client serves both. Redirects are never followed and no
cookie is kept, whatever the client's defaults; the transport's timeouts go on every request.
"""

from __future__ import annotations

import http.cookiejar
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from ._http_engine import HttpEngine, HTTPError, InlineExchange

__all__ = ["HttpxEngine"]


class _Lines(dict[str, str]):
    """A request's headers with the header lines the direct path sends (``raw``: what
    ``build_request`` would write before ``Content-Length``; ``names``: their names, lower
    case). Built once per session for a POST; nothing downstream changes either."""

    raw: list[tuple[bytes, bytes]] = []  # noqa: RUF012 - always replaced, never appended to
    names: frozenset[bytes] | set[bytes] = frozenset()


class HttpxEngine(HttpEngine):
    """Exchanges through an ``httpx.AsyncClient`` (see the module header)."""

    name = "httpx"

    errors = (httpx.HTTPError, HTTPError)

    def __init__(
        self,
        url: str,
        *,
        client: httpx.AsyncClient | None,
        ssl_context: ssl.SSLContext | None,
        connect_timeout: float,
        write_timeout: float,
        max_connections: int,
        max_held: int,
        why: str,
    ) -> None:
        super().__init__(why)
        timeout = httpx.Timeout(connect=connect_timeout, read=None, write=write_timeout, pool=None)
        self.url = url
        self._url = httpx.URL(url)
        self._timeout = timeout
        self._verify: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._extensions = {"timeout": timeout.as_dict()}
        self.owns_client = client is None
        # Pool sized to the concurrency (measured: the default 20 idle connections churned
        # ~1,100 TCP connections for 100 in flight; a pool of 100 under the Poller's 64 polls
        # in flight opened up to 122 in a 200-task burst, a pool of 64 at most 63).
        self.client = client or self._new_client(max_connections)
        self.direct = self._direct_transport(self.client) if self.owns_client else None
        self._max_held = max_held
        self.held_client: httpx.AsyncClient | None = None if self.owns_client else self.client
        self._held_direct: httpx.AsyncBaseTransport | None = None

    def _new_client(self, max_connections: int) -> httpx.AsyncClient:
        # No cookie is kept: MCP carries its session in a header, and a server could otherwise
        # grow the jar without bound.
        return httpx.AsyncClient(
            timeout=self._timeout,
            verify=self._verify,
            follow_redirects=False,
            cookies=_no_cookies(),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
        )

    def _direct_transport(self, client: httpx.AsyncClient) -> httpx.AsyncBaseTransport | None:
        """The pool our own ``client`` would send the URL through (a proxy's when the
        environment names one), to send to it directly; None keeps the client's full ``send``:
        a URL with credentials in it (httpx turns them into an Authorization header), a client
        without that lookup (another httpx)."""
        url = self._url
        pick = getattr(client, "_transport_for_url", None)
        if not isinstance(client, httpx.AsyncClient) or pick is None or url.userinfo:
            return None
        try:
            transport = pick(url)
        except Exception:  # pragma: no cover - another httpx: the full path works anyway
            return None
        return transport if isinstance(transport, httpx.AsyncBaseTransport) else None

    def _held_pool(self) -> tuple[httpx.AsyncClient, httpx.AsyncBaseTransport | None]:
        """The client (and its direct pool) for held requests: made on first use."""
        client = self.held_client
        if client is None:
            client = self.held_client = self._new_client(self._max_held)
            self._held_direct = self._direct_transport(client) if self.direct is not None else None
        return client, self._held_direct

    async def aclose(self) -> None:
        if self.owns_client:
            try:
                await self.client.aclose()
            finally:
                if self.held_client is not None:
                    await self.held_client.aclose()

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        held: bool,
        inline: InlineExchange | None,
    ) -> AsyncIterator[httpx.Response]:
        """One exchange with the transport's timeouts (httpx's write timeout: ``inline`` is not
        needed) and never a redirect followed, whatever the (possibly injected) client's
        defaults say."""
        client, direct = self._held_pool() if held else (self.client, self.direct)
        if direct is not None:
            raw = headers.raw if isinstance(headers, _Lines) else self._raw_headers(headers)
            if content is not None or method == "POST":
                raw = [*raw, (b"Content-Length", str(len(content or b"")).encode("ascii"))]
            request = httpx.Request(
                method,
                self._url,
                headers=raw,
                stream=httpx.ByteStream(content or b""),
                extensions=self._extensions,
            )
            response = await direct.handle_async_request(request)
        else:
            request = client.build_request(
                method, self.url, content=content, headers=headers, timeout=self._timeout
            )
            response = await client.send(request, stream=True, follow_redirects=False)
        try:
            yield response
        finally:
            if id(response) in self.handed_off:
                self.handed_off.discard(id(response))
            else:
                await response.aclose()

    def _raw_headers(self, headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
        """The header lines ``build_request`` would send (the client's defaults updated with
        ``headers``, ``Host`` first; the body's ``Content-Length`` goes last)."""
        merged = httpx.Headers(self.client.headers)
        merged.update(headers)
        return [(b"Host", self._url.netloc), *merged.raw]

    def chunks(self, response: Any) -> AsyncIterator[bytes]:
        """Only identity encoding is accepted (the transport checks), so a direct response's
        raw stream is its content."""
        if self.direct is not None:
            return aiter(response.stream)
        return response.aiter_bytes()  # type: ignore[no-any-return]

    def prepare(self, headers: dict[str, str]) -> dict[str, str]:
        lines = _Lines(headers)
        if self.direct is not None:
            lines.raw = self._raw_headers(lines)
            lines.names = {name.lower() for name, _ in lines.raw}
        return lines

    def extend(self, base: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
        if self.direct is None or not isinstance(base, _Lines):
            return super().extend(base, extra)
        lines = _Lines(base)
        lines.update(extra)
        if any(name.lower().encode("ascii") in base.names for name in extra):
            lines.raw = self._raw_headers(lines)  # one replaces a line: merge as httpx does
        else:  # new lines go after the others, as httpx's merge puts them
            encoded = [(k.encode("ascii"), v.encode("ascii")) for k, v in extra.items()]
            lines.raw = [*base.raw, *encoded]
        return lines


def _no_cookies() -> http.cookiejar.CookieJar:
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
