"""The endpoint URL as HttpTransport reads it (``_io/_url.py``): httpx's reading, without httpx.

The transport used to read every URL with ``httpx.URL``; now a plain URL is read by the
library's own small reader (so a program on the lean engine never imports httpx), any other by
httpx as before. The property: for any string, the reading is httpx's, field for field, and a
URL httpx refuses is refused (ValueError, the same message). A subprocess shows the point of
it: a whole exchange on the lean engine loads no httpx.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_lean_http import KeepAliveServer, running

from mcp_tasks_client import HttpTransport
from mcp_tasks_client._io import _url
from mcp_tasks_client.errors import UsageError

REPO = Path(__file__).resolve().parent.parent


def httpx_reading(url: str) -> tuple[object, ...] | str:
    """What httpx makes of ``url``: the fields the transport reads, or its refusal."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"refused: {exc}"
    shown = str(parsed.copy_with(userinfo=b"", query=None, fragment=None))
    return (
        parsed.scheme,
        parsed.userinfo,
        parsed.host,
        parsed.port,
        parsed.netloc,
        parsed.raw_path,
        shown,
    )


def our_reading(url: str) -> tuple[object, ...] | str:
    try:
        got = _url.parse(url)
    except ValueError as exc:
        return f"refused: {exc}"
    return (got.scheme, got.userinfo, got.host, got.port, got.netloc, got.raw_path, got.shown)


_PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        "ftp://",
        "user:pw@",
        "@",
        "localhost",
        "127.0.0.1",
        "999.1.1.1",
        "1.2.3",
        "Example.COM",
        "example.com",
        "a-b.c",
        "-a.b",
        "xn--bcher-kva.de",
        "b\u00fccher.de",
        "[::1]",
        ":",
        ":80",
        ":443",
        ":8080",
        ":0",
        ":080",
        ":65535",
        ":65536",
        ":99999",
        "/",
        "/mcp",
        "/a/../b",
        "/./x",
        "/a%20b",
        "/a b",
        "/~u_x-y.z",
        "//",
        "?",
        "?a=1&b=2",
        "?q=%41",
        "#frag",
        "/mcp/",
        "\t",
        ".",
        "..",
        "_",
        "a",
    ]
)


@given(st.lists(_PIECES, min_size=1, max_size=7).map("".join))
def test_every_url_reads_as_httpx_reads_it(url: str) -> None:
    assert our_reading(url) == httpx_reading(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/mcp",
        "http://localhost/mcp",
        "https://example.com",
        "http://example.com:80/mcp",  # the default port: dropped
        "https://example.com:443/a/b?x=1&y=2",
        "http://a.b:65535/",
        "http://a.b:65536/",  # not plain (httpx takes it)
        "http://999.0.0.1/",  # refused
        "http://Example.com/",  # not plain: httpx reads it
        "http://user:pw@example.com/mcp",
        "http://xn--bcher-kva.de/",
        "http://example.com/a/../mcp",
        "http://example.com/mcp#frag",
    ],
)
def test_plain_and_other_urls_read_as_httpx_reads_them(url: str) -> None:
    assert our_reading(url) == httpx_reading(url)


def test_a_plain_url_is_read_without_httpx_and_a_bad_one_is_a_usage_error() -> None:
    got = _url.parse("http://127.0.0.1:8000/mcp?x=1")
    assert (got.host, got.port, got.netloc, got.raw_path) == (
        "127.0.0.1",
        8000,
        b"127.0.0.1:8000",
        b"/mcp?x=1",
    )
    assert got.shown == "http://127.0.0.1:8000/mcp"
    with pytest.raises(TypeError):
        _url.parse(b"http://127.0.0.1/mcp")
    with pytest.raises(UsageError, match="not a usable URL"):
        HttpTransport("http://999.0.0.1/mcp")  # httpx: not an IPv4 address
    with pytest.raises(UsageError, match="not a usable URL"):
        HttpTransport(b"http://127.0.0.1/mcp")  # type: ignore[arg-type]


_NO_HTTPX = textwrap.dedent(
    """
    import json, sys
    import anyio
    from mcp_tasks_client import Client, Generation, HttpTransport
    from mcp_tasks_client.models import Implementation

    async def main(backend_url):
        transport = HttpTransport(backend_url)
        async with Client(transport, generation=Generation.V2025_11_25,
                          client_info=Implementation("t", "0")) as client:
            task = await client.get_task("t-1")
        return transport.engine, task.task_id, repr(transport)

    engine, task_id, shown = anyio.run(main, sys.argv[1], backend=sys.argv[2])
    print(json.dumps([engine, task_id, shown, sorted(
        m for m in sys.modules if m.split(".")[0] in ("httpx", "httpcore", "httpx_sse"))]))
    """
)


@pytest.mark.anyio
async def test_an_exchange_on_the_lean_engine_loads_no_httpx(anyio_backend: str) -> None:
    """A whole session (initialize, a tasks/get, the DELETE) on ``HttpTransport(url)``, in a
    fresh interpreter: httpx, httpcore and httpx-sse are never imported."""
    async with running(KeepAliveServer()) as server:
        done = await _run_child(server.url, anyio_backend)
    engine, task_id, shown, loaded = json.loads(done.splitlines()[-1])
    assert (engine, task_id) == ("lean", "t-1")
    assert shown.startswith(f"HttpTransport('{server.url}', engine='lean'")
    assert loaded == []


async def _run_child(url: str, backend: str) -> str:
    import anyio

    # No proxy variables: a URL the environment's proxy covers would go through httpx.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    result = await anyio.run_process(
        [sys.executable, "-c", _NO_HTTPX, url, backend], cwd=REPO, env=env, check=False
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


_STATUS = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from mcp_tasks_client.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--url", "http://127.0.0.1:9/mcp", "status", "t-1"])
        except SystemExit:
            pass
    print(json.dumps([err.getvalue(), sorted(
        m for m in sys.modules if m.split(".")[0] in ("httpx", "httpcore", "httpx_sse"))]))
    """
)


def test_mcp_tasks_status_loads_no_httpx() -> None:
    """Issue 34's start-up: ``mcp-tasks status`` on the lean engine (a refused connection ends
    it, after everything it imports before it sends) never imports httpx."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, "-c", _STATUS], cwd=REPO, env=env, capture_output=True, check=True
    )
    err, loaded = json.loads(done.stdout.decode().splitlines()[-1])
    assert "ConnectError" in err  # it did try to connect: the whole path ran
    assert loaded == []
