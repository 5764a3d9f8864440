"""A strict, sans-I/O validator of the server's side of task traffic.

Feed it every message in the order the client saw it: :meth:`Validator.sent` for what the
client sends (it pairs answers with their requests), :meth:`Validator.received` for what
arrives; or :meth:`Validator.exchange` for a (request, response) pair and
:meth:`Validator.notification` / :meth:`Validator.server_request` for the rest. Each call
returns the :class:`Finding` s the message produced: the rule it broke (from
:data:`~mcp_tasks_client.conformance.RULES`), the verdict, a detail and the offending message.

Over HTTP it can also be fed the HTTP facts of each exchange (:meth:`Validator.http`, an
:class:`~mcp_tasks_client.conformance.HttpExchange` the transport gives ValidatingTransport):
status, content type and ``Mcp-Session-Id`` for the rules below JSON-RPC (V-27a-d, E C7,
E S24); feed an exchange before the messages its body carries.

Messages are raw JSON-RPC objects (``{"jsonrpc": "2.0", "id": ..., "result": ...}``), so a
malformed answer is a finding, never a decode error. The validator keeps what the rules across
messages need: the server's capabilities, the tools' ``taskSupport``, each task's last
snapshot, the open ``tasks/result`` calls, progress tokens, input request keys, listens.

Each generation's rules are one module (``_checks_v2025_11_25.py``, ``_checks_v2026_07_28.py``)
on a shared base (``_checks.py``: pairing and the sequence rules); :data:`CHECKS` is the only
map from a generation to its checks.

May import: this package's ``_checks*`` modules and ``rules``, ``_generation``, ``_exceptions``,
``_io.base``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._exceptions import UsageError
from .._generation import Generation
from .._io.base import HttpExchange
from ._checks import Checks, Finding
from ._checks_v2025_11_25 import Checks2025
from ._checks_v2026_07_28 import Checks2026

__all__ = ["CHECKS", "Finding", "Validator"]

CHECKS: dict[Generation, type[Checks]] = {
    Generation.V2025_11_25: Checks2025,
    Generation.V2026_07_28: Checks2026,
}
"""Every generation the validator checks, with its checks (the registry)."""


def checks_class(generation: Generation) -> type[Checks]:
    """The checks of ``generation``; UsageError for one the validator does not know (never
    another generation's rules)."""
    try:
        return CHECKS[generation]
    except (KeyError, TypeError):
        known = ", ".join(g.value for g in CHECKS)
        raise UsageError(f"no checks for generation {generation!r} (known: {known})") from None


class Validator:
    """The strict checks of one connection's server, for one generation.

    ``client_capabilities`` are what the client declared (2025-11-25: read from the
    ``initialize`` request when it is sent; give them when the validator does not see it).
    A generation the validator has no checks for is a UsageError.
    """

    def __init__(
        self, generation: Generation, *, client_capabilities: Mapping[str, Any] | None = None
    ) -> None:
        self._checks = checks_class(generation)(client_capabilities)
        self.generation = generation
        self.findings: list[Finding] = []
        """Every finding so far, in order."""

    # -- feeding ----------------------------------------------------------------------------

    def sent(self, message: Mapping[str, Any]) -> list[Finding]:
        """A message the client sent (requests are remembered to pair their answers)."""
        self._checks.sent(dict(message))
        return []

    def received(self, message: Mapping[str, Any]) -> list[Finding]:
        """A message from the server: an answer, a request or a notification."""
        found = self._checks.received(dict(message))
        self.findings.extend(found)
        return found

    def http(self, exchange: HttpExchange | Mapping[str, Any]) -> list[Finding]:
        """The HTTP facts of one exchange (an :class:`HttpExchange`, or its ``to_json()``):
        fed when the response's headers are in, before the messages of its body."""
        if not isinstance(exchange, HttpExchange):
            exchange = HttpExchange(**exchange)
        found = self._checks.http(exchange)
        self.findings.extend(found)
        return found

    def exchange(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> list[Finding]:
        """A request and its answer, one after the other."""
        return [*self.sent(request), *self.received(response)]

    def notification(self, notification: Mapping[str, Any]) -> list[Finding]:
        return self.received(notification)

    def server_request(self, request: Mapping[str, Any]) -> list[Finding]:
        return self.received(request)

    def feed(self, traffic: Iterable[tuple[str, Mapping[str, Any]]]) -> list[Finding]:
        """``(direction, message)`` pairs, direction ``"sent"``, ``"received"`` or ``"http"``
        (an :class:`HttpExchange`'s ``to_json()``)."""
        found: list[Finding] = []
        for direction, message in traffic:
            if direction == "sent":
                found.extend(self.sent(message))
            elif direction == "received":
                found.extend(self.received(message))
            elif direction == "http":
                found.extend(self.http(message))
            else:
                raise ValueError(
                    f"direction must be 'sent', 'received' or 'http', not {direction!r}"
                )
        return found
