"""The lean engine's quick inline POST, run without a cancel scope (issue 39).

An inline exchange (``HttpTransport.exchange``) whose only wait is for the answer's bytes on an
idle connection runs without a cancel scope of its own: what may end it (its deadline, the
transport's close) wakes that wait instead (``InlineExchange.cancel``: our asyncio protocol's
reader, trio's ``wait_readable`` through ``notify_closing``). Each way it may end is checked
here over real HTTP on both loops, with the exchange seen waiting without a scope first: its
deadline (TimeoutError), the transport's close (a TransportClosed fault), the caller's own
cancellation; each time the connection it waited on is closed, never reused, and nothing of
the exchange is left behind. Anything else runs in a scope, as before (tests/test_lean_http.py:
a wait for a connection, a send that must wait, an answer that is not the common one).
"""

from __future__ import annotations

import math

import anyio
import pytest
from test_lean_http import KeepAliveServer, lean_of, running

from mcp_tasks_client import LeanHttpTransport
from mcp_tasks_client._io._http_engine import InlineExchange
from mcp_tasks_client.errors import TransportClosed
from mcp_tasks_client.models import JSONRPCRequest, JSONRPCResponse
from mcp_tasks_client.transports import TransportFault

pytestmark = pytest.mark.anyio


def _get(request_id: int) -> JSONRPCRequest:
    return JSONRPCRequest(request_id, "tasks/get", {"taskId": f"t-{request_id}"})


def _release(server: KeepAliveServer) -> None:
    """The held answers go out."""
    assert server.hold is not None
    server.hold.set()


async def _primed(server: KeepAliveServer) -> LeanHttpTransport:
    """A transport open on ``server`` with one request answered: its connection idle, so the
    next request takes the quick way; from then on the server holds every answer."""
    transport = LeanHttpTransport(server.url, delete_session_on_close=False)
    await transport.__aenter__()
    answered = await transport.exchange(_get(1))
    assert type(answered) is JSONRPCResponse
    assert len(lean_of(transport).conns.idle) == 1
    server.hold = anyio.Event()
    return transport


def _waiting_without_a_scope(transport: LeanHttpTransport, request_id: int) -> None:
    """The exchange waits for its answer on the quick way: no scope, a wait to wake."""
    inline = transport._scopes[request_id]
    assert isinstance(inline, InlineExchange)
    assert inline.scope is None
    assert inline.wake is not None


async def test_its_deadline_ends_the_wait_and_closes_the_connection() -> None:
    async with running(KeepAliveServer()) as server:
        with anyio.fail_after(20):
            transport = await _primed(server)
            try:
                seen: list[None] = []

                async def look() -> None:
                    await anyio.wait_all_tasks_blocked()
                    _waiting_without_a_scope(transport, 2)
                    seen.append(None)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(look)
                    with pytest.raises(TimeoutError):
                        await transport.exchange(_get(2), deadline=anyio.current_time() + 0.3)
                assert seen == [None]  # it was seen waiting without a scope
                assert transport._scopes == {}
                assert lean_of(transport).conns.idle == []  # half an exchange: closed
                assert lean_of(transport).conns.open == 0
                _release(server)
                answered = await transport.exchange(_get(3))
                assert type(answered) is JSONRPCResponse
                assert answered.result["taskId"] == "t-3"
                assert transport.connections_opened == 2
            finally:
                await transport.__aexit__(None, None, None)


async def test_the_transports_close_ends_the_wait_with_transport_closed() -> None:
    async with running(KeepAliveServer()) as server:
        with anyio.fail_after(20):
            got: list[object] = []
            async with anyio.create_task_group() as tg:
                transport = await _primed(server)  # opened (and closed) inside the group

                async def ask() -> None:
                    got.append(await transport.exchange(_get(2)))

                tg.start_soon(ask)
                await anyio.wait_all_tasks_blocked()
                _waiting_without_a_scope(transport, 2)
                await transport.__aexit__(None, None, None)
            [fault] = got
            assert isinstance(fault, TransportFault)
            assert fault.request_id == 2
            assert isinstance(fault.error, TransportClosed)
            assert transport._scopes == {}
            assert lean_of(transport).conns.idle == []


async def test_the_callers_own_cancellation_ends_the_wait() -> None:
    """The caller's scope, not the transport's: the cancellation is the caller's (nothing is
    returned), the connection closed; the next request is answered on a new one."""
    async with running(KeepAliveServer()) as server:
        with anyio.fail_after(20):
            transport = await _primed(server)
            try:
                returned: list[object] = []
                with anyio.CancelScope() as caller:

                    async def cancel_once_waiting() -> None:
                        await anyio.wait_all_tasks_blocked()
                        _waiting_without_a_scope(transport, 2)
                        caller.cancel()

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(cancel_once_waiting)
                        returned.append(await transport.exchange(_get(2), deadline=math.inf))
                assert caller.cancelled_caught
                assert returned == []
                assert transport._scopes == {}
                assert lean_of(transport).conns.open == 0
                _release(server)
                answered = await transport.exchange(_get(3))
                assert type(answered) is JSONRPCResponse
                assert transport.connections_opened == 2
            finally:
                await transport.__aexit__(None, None, None)


async def test_a_wait_for_a_connection_runs_in_a_scope() -> None:
    """No idle connection (the one there is, busy): the exchange runs in its scope, and its
    deadline ends it there as before."""
    async with running(KeepAliveServer()) as server:
        with anyio.fail_after(20):
            transport = LeanHttpTransport(
                server.url, max_connections=1, delete_session_on_close=False
            )
            await transport.__aenter__()
            try:
                server.hold = anyio.Event()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(transport.exchange, _get(1))
                    await anyio.wait_all_tasks_blocked()
                    scopes: list[object] = []

                    async def look() -> None:
                        await anyio.wait_all_tasks_blocked()
                        inline = transport._scopes[2]
                        assert isinstance(inline, InlineExchange)
                        scopes.append(inline.scope)

                    tg.start_soon(look)
                    with pytest.raises(TimeoutError):
                        await transport.exchange(_get(2), deadline=anyio.current_time() + 0.3)
                    assert len(scopes) == 1
                    assert scopes[0] is not None
                    server.hold.set()
            finally:
                await transport.__aexit__(None, None, None)
