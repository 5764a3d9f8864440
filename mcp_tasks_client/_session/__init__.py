"""The session: one conversation with one server, under the Client.

Job: moving JSON-RPC messages between the caller's requests and the transport. It
correlates requests with their answers, bounds every wait by its deadline, runs the reader,
dispatches what arrives (answers, server->client requests, notifications), serves the server's
requests with the handlers registered for them, and watches a task call whose caller stopped
waiting (the orphan watch). What a message means in a generation is its driver's business
(``_drivers``); what the caller may ask for, typed, is the Client's (``_client.py``).

May import: ``_drivers``, ``_sansio``, ``_io.base``, ``models``, ``_exceptions``,
``_limits``, ``observability``. Never the Client, the Poller or the InputRouter.

Its parts, one job each (each module's header says more). The Session owns them; a part reaches
the Session only through what it was given at construction (``warn``, give up, exchange)::

    Session (conversation.py)  life, requests out, answers back, the reader
      |-- RequestObserver (request_spans.py)  records, spans, metrics: only when observed
      |-- ServerRequests (serving.py)         the server's requests, within their bounds
      |     `-- RequestObserver.handled       a served request's span
      |-- NotificationFanOut (fan_out.py)     notifications and progress to the callbacks
      `-- OrphanWatch (orphans.py)            a task call read after its caller left
    terms.py: the values they share (states, Timeouts, RequestOptions, AwaitedAnswer ...)

Tracing and redaction are the client's own (``Client(tracing=..., redaction=...)``, or the
process default's copied at construction): no part reads process-wide state per request.

Theory of operation. :meth:`Session.open` enters the transport and starts one reader task in a
task group the session owns. The reader feeds every incoming message to the sans-I/O
:class:`RPCConnection` and acts on the event it returns: a response wakes the one caller
waiting for it; a server->client request goes to the handler registered for its method (or is
answered with a JSON-RPC error saying no handler was registered: the library never answers on
the caller's behalf, except ``ping``, which the spec requires every party to answer); a
notification goes to the registered callbacks.

If the connection breaks (the child process exits, the server sends a response for an id never
used, stdout carries something that is not JSON-RPC), every waiting request fails with that
error, and so does every later one: nothing hangs, nothing reconnects on its own.

Every send is bounded: a request's by its deadline, a notification's by ``Timeouts.request``
(or its own ``timeout=``), an answer to the server by ``Timeouts.request``. At most
``Limits.max_server_requests`` server->client requests are handled at once; one beyond that
is answered at once with a JSON-RPC error, so a flood costs no memory; so is one whose string
id is longer than ``Limits.max_request_id_chars`` (-32600, ``"id": null``). Requests whose
handler was registered ``held`` (it waits by design: the receiver's blocking ``tasks/result``)
have their own bound, ``Limits.max_held_server_requests``, as the transports have their own
pool for the client's held requests: however many are held, every other request is answered.

:meth:`Session.close` cancels everything the session started, ends every pending request (and
every Poller wait on its client) with :class:`~mcp_tasks_client.errors.ClientClosed`, and
closes the transport.

The session's life is :class:`SessionState`, moved only along ``MOVES`` (as the task machine's
table); its reader's is :class:`ReaderState`.
"""

from typing import TYPE_CHECKING

from .conversation import Session
from .terms import (
    NotificationHandler,
    OrphanedTask,
    ReaderState,
    RequestHandler,
    RequestOptions,
    SessionState,
    Timeouts,
)

if TYPE_CHECKING:
    from .terms import ProgressHandler
else:  # a type checker sees the import above

    def __getattr__(name: str) -> object:
        if name != "ProgressHandler":  # (built on first use: see terms.py)
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import terms

        return terms.ProgressHandler


__all__ = [
    "NotificationHandler",
    "OrphanedTask",
    "ProgressHandler",
    "ReaderState",
    "RequestHandler",
    "RequestOptions",
    "Session",
    "SessionState",
    "Timeouts",
]
