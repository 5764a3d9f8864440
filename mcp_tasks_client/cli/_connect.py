"""Where the CLI builds its connection and its poller: one function each, from the options.

Everything that changes how a run connects or polls (a resumed session, a journal) belongs in
:func:`make_client` and :func:`make_poller`; the commands only call them.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import TYPE_CHECKING

import attrs

from .._client import Client, Timeouts
from .._io.base import Transport
from .._io.http import HttpTransport
from ..models import ClientCapabilities, Implementation
from ..observability import Tracing
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
    "run_tracing",
]

PROVIDER_VARIABLES = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
"""The environment variables through which opentelemetry-api loads a provider itself."""


def run_tracing() -> Tracing | None:
    """The run's span settings: the process default (None: spans on when opentelemetry-api is
    installed) when an OpenTelemetry provider can reach this process, else :data:`Tracing.OFF`.

    A provider reaches a process only if something set it (which imports ``opentelemetry``
    first: a program calling ``cli.main``, or ``opentelemetry-instrument`` before the command
    line; the command line itself sets none) or if an environment variable names one for the
    API to load. Without either every span would go to the API's no-op tracer, which records
    nothing and puts no trace context on the wire: the same as no spans, less the import of
    opentelemetry (about 4% of ``mcp-tasks status``'s start-up, measured)."""
    if "opentelemetry" in sys.modules or any(os.environ.get(v) for v in PROVIDER_VARIABLES):
        return None
    return Tracing.OFF


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
        tracing=run_tracing(),
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
