"""Where the CLI builds its connection and its poller: one function each, from the options.

Everything that changes how a run connects or polls (a resumed session, a journal) belongs in
:func:`make_client` and :func:`make_poller`; the commands only call them.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import attrs

from .._client import Client, Timeouts
from .._io.base import Transport
from .._io.http import HttpTransport
from ..models import ClientCapabilities, Implementation
from ._options import Options, Server

if TYPE_CHECKING:  # imported where used: `status` needs none of them
    from .._sansio.scheduler import PollPolicy
    from ..engine import Poller
    from ..inputs import InputRouter
    from ..journal import Journal, JournalEntry

__all__ = [
    "client_info",
    "identity_of",
    "make_client",
    "make_policy",
    "make_poller",
    "make_transport",
]


def client_info(options: Options) -> Implementation:
    from .. import __version__

    return Implementation(options.client_name, __version__)


def make_transport(server: Server, *, keep_session: bool = False) -> Transport:
    """A fresh, unopened transport to the server the options name (an HTTP session kept on
    close with ``keep_session``: a journaled 2025-11-25 task is bound to it)."""
    if server.url is not None:
        return HttpTransport(
            server.url, headers=dict(server.headers), delete_session_on_close=not keep_session
        )
    assert server.stdio is not None
    from .._io.stdio import StdioTransport  # here: a run over --url never loads subprocess

    return StdioTransport(list(server.stdio))


def identity_of(server: Server) -> str:
    """The server's identity as its transport gives it (what a journal is keyed by)."""
    if server.url is not None:
        return server.url
    assert server.stdio is not None
    return "stdio:" + shlex.join(server.stdio)


def make_client(
    options: Options, router: InputRouter | None, entry: JournalEntry | None = None
) -> Client:
    """The run's Client: the generation, name and per-request deadline the options give, and
    exactly the capabilities ``router`` serves (none without ``--inputs``). For a journaled
    task (``entry``), the client the journal says it was made with: its generation-1 session
    resumed without ``initialize``, or its server anew."""
    capabilities = router.capabilities() if router is not None else ClientCapabilities()
    timeouts = Timeouts(request=options.timeout, initialize=options.timeout)
    if entry is not None and entry.session is not None:
        from ..resume import client_for

        return client_for(
            entry,
            client_info=client_info(options),
            capabilities=capabilities,
            headers=dict(options.server.headers),
            timeouts=timeouts,
        )
    return Client(
        make_transport(options.server, keep_session=options.journal is not None),
        generation=options.generation,
        client_info=client_info(options),
        capabilities=capabilities,
        timeouts=timeouts,
    )


def make_policy(options: Options, *, answers_input: bool) -> PollPolicy:
    """PollPolicy's defaults, each ``tasks/get`` bounded by ``--timeout``; ``--interval``
    as floor and fixed cadence (the server's longer pollInterval still holds, C-19). With
    nothing to answer input, no ``tasks/result`` is held open on ``input_required``;
    ``--on-busy`` as ``on_busy``."""
    from .._sansio.scheduler import BusyPolicy, PollPolicy

    policy = PollPolicy(
        request_timeout=options.timeout,
        open_result_on_input_required=answers_input,
        on_busy=BusyPolicy.BACK_OFF if options.on_busy == "back-off" else BusyPolicy.FAIL,
    )
    if options.interval is not None:
        every = options.interval
        policy = attrs.evolve(policy, floor=every, initial=every, backoff=1.0, ceiling=every)
    return policy


def make_poller(
    client: Client,
    options: Options,
    router: InputRouter | None,
    journal: Journal | None = None,
) -> Poller:
    """The run's Poller on ``client``, answering input through ``router`` (if any), and
    recording into ``journal`` (if any)."""
    from ..engine import Poller

    policy = make_policy(options, answers_input=router is not None)
    return Poller(client, policy, inputs=router, journal=journal)
