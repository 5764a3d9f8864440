"""An endpoint URL as HttpTransport reads it: httpx's reading, without httpx for a plain one.

Job: split an ``http(s)://`` URL into what the transport and the lean engine need (scheme,
credentials, host, port, authority, request target, the URL shown without credentials or
query) exactly as ``httpx.URL`` reads it. A plain URL (lower-case ASCII host name or IPv4
address, a port without leading zeros, a path of unreserved characters without dot segments
or escapes, a query of unreserved characters, ``=`` and ``&``, no credentials, no fragment)
is read here; any other goes to ``httpx.URL`` itself (httpx imported then), so every URL
reads as it did when httpx read them all (a hypothesis property in the tests compares the
two). A program on the lean engine with a plain URL never loads httpx.

May import: nothing of the library; httpx (for a URL that is not plain, on first use).

Theory of operation: one regular expression decides what is plain; what httpx would change
about a plain URL (a default port dropped, an empty path) is done here the same way. An
unusable URL is a ValueError (httpx's InvalidURL, re-raised), a non-string a TypeError.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

__all__ = ["Url", "parse"]

_DEFAULT_PORTS = {"http": 80, "https": 443}

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_PLAIN = re.compile(
    r"(?P<scheme>https?)://"
    rf"(?P<host>{_LABEL}(?:\.{_LABEL})*)"
    r"(?::(?P<port>[1-9][0-9]{0,4}))?"
    r"(?P<path>(?:/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*)?)*)"
    r"(?:\?(?P<query>[A-Za-z0-9._~=&-]+))?"
)
_DOTTED_DIGITS = re.compile(r"[0-9.]+")


class Url:
    """What the transport reads of its endpoint URL (``httpx.URL``'s names and values)."""

    __slots__ = ("host", "netloc", "port", "raw_path", "scheme", "shown", "userinfo")

    def __init__(
        self,
        scheme: str,
        userinfo: bytes,
        host: str,
        port: int | None,
        netloc: bytes,
        raw_path: bytes,
        shown: str,
    ) -> None:
        self.scheme = scheme
        self.userinfo = userinfo  # credentials in the URL (b"": none)
        self.host = host
        self.port = port  # None: the scheme's default
        self.netloc = netloc  # host[:port], the port only when not the default
        self.raw_path = raw_path  # path and query, as sent in the request line
        self.shown = shown  # the URL without credentials, query or fragment (repr, logs)


def parse(url: Any) -> Url:
    """``url`` read as ``httpx.URL`` reads it. Raises ValueError for an unusable URL (httpx's
    message), TypeError for one that is not a string."""
    plain = _PLAIN.fullmatch(url) if isinstance(url, str) else None
    if plain is not None and _plain_host(plain.group("host")):
        scheme, host = plain.group("scheme"), plain.group("host")
        port: int | None = int(plain.group("port")) if plain.group("port") else None
        if port is None or port <= 65535:
            if port == _DEFAULT_PORTS[scheme]:
                port = None
            netloc = host if port is None else f"{host}:{port}"
            path = plain.group("path")
            query = plain.group("query")
            target = (path or "/") if query is None else f"{path or '/'}?{query}"
            return Url(
                scheme,
                b"",
                host,
                port,
                netloc.encode("ascii"),
                target.encode("ascii"),
                f"{scheme}://{netloc}{path}",
            )
    return _by_httpx(url)


def _plain_host(host: str) -> bool:
    """A host name read the same by both: no IDNA label, and one that looks like an IPv4
    address must be one."""
    if "xn--" in host:
        return False  # httpx shows an IDNA host decoded
    if not _DOTTED_DIGITS.fullmatch(host):
        return True
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def _by_httpx(url: Any) -> Url:
    import httpx  # a URL that is not plain: httpx reads it

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(str(exc)) from None
    shown = parsed.copy_with(userinfo=b"", query=None, fragment=None)
    return Url(
        parsed.scheme,
        parsed.userinfo,
        parsed.host,
        parsed.port,
        parsed.netloc,
        parsed.raw_path,
        str(shown),
    )
