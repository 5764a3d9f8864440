"""The seam into a live Client: a transport that shows every message to a Validator.

``Client(ValidatingTransport(HttpTransport(url), validator), ...)`` hands the validator every
message the client sends and every message it receives, in order, and applies a
:class:`ConformancePolicy` to what it finds. Nothing else changes: the inner transport does the
I/O, the client does the protocol. The Client itself knows nothing of it, so a client without
a validator pays nothing.

Over HTTP (``HttpTransport``, ``LeanHttpTransport``, or a wrapper of one) it also installs
itself as the transport's HTTP observer (``observe_http``), so the validator sees each
exchange's status, content type and ``Mcp-Session-Id`` (V-27a-d, E C7, E S24). A finding of a
request's exchange is applied with the request's answer (RAISE fails that request); one of a
POSTed notification or response is recorded at once and, under WARN or RAISE, becomes a client
warning with the next incoming message.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from .._codec.messages import encode_message
from .._exceptions import ProtocolError
from .._io.base import (
    HttpExchange,
    Incoming,
    Transport,
    TransportFault,
    TransportWrapper,
)
from ..models import JSONRPCError, JSONRPCMessage, JSONRPCResponse, RequestId
from .rules import Verdict
from .validator import Finding, Validator

__all__ = ["ConformancePolicy", "ConformanceViolation", "ValidatingTransport"]


class ConformancePolicy(enum.Enum):
    """What a Client does with the validator's findings; the caller chooses."""

    RECORD = "record"
    """Only recorded: ``validator.findings`` and ``on_finding``; the traffic flows on."""
    WARN = "warn"
    """Also each one a client warning (``Client.warnings``, ``on_warning``)."""
    RAISE = "raise"
    """A failed rule in an answer fails the request it answers (ConformanceViolation); the
    rest (warnings, and findings in notifications and server requests) are client warnings."""


class ConformanceViolation(ProtocolError):
    """The server broke a rule the strict validator checks: ``finding`` says which."""

    def __init__(self, finding: Finding) -> None:
        self.finding = finding
        super().__init__(str(finding))


class ValidatingTransport(TransportWrapper):
    """Wraps ``inner``; the validator sees every message, the policy acts on findings."""

    def __init__(
        self,
        inner: Transport,
        validator: Validator,
        *,
        policy: ConformancePolicy = ConformancePolicy.WARN,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        super().__init__(inner)
        self.validator = validator
        self.policy = policy
        self._on_finding = on_finding
        self._queued: list[Incoming] = []
        self._held: dict[RequestId, list[Finding]] = {}
        observe = getattr(inner, "observe_http", None)
        self.sees_http = callable(observe)
        """Whether the inner transport shows this wrapper its HTTP exchanges."""
        if callable(observe):
            observe(self._http_exchange)

    def _http_exchange(self, exchange: HttpExchange) -> None:
        findings = self.validator.http(exchange)
        if not findings:
            return
        for finding in findings:
            if self._on_finding is not None:
                self._on_finding(finding)
        if self.policy is ConformancePolicy.RECORD:
            return
        if exchange.kind == "request" and exchange.request_id is not None:
            self._held.setdefault(exchange.request_id, []).extend(findings)
        else:
            self._queued.extend(
                TransportFault(None, ConformanceViolation(f), fatal=False) for f in findings
            )

    async def __aenter__(self) -> ValidatingTransport:
        await self.inner.__aenter__()
        return self

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        self.validator.sent(encode_message(message))
        await self.inner.send(message, held=held)

    async def receive(self) -> Incoming:
        if self._queued:
            return self._queued.pop(0)
        item = await self.inner.receive()
        answer_id: RequestId | None = None
        if isinstance(item, (JSONRPCResponse, JSONRPCError)):
            answer_id = item.id
        elif isinstance(item, TransportFault):
            answer_id = item.request_id
        held = self._held.pop(answer_id, []) if self._held and answer_id is not None else []
        if isinstance(item, TransportFault):
            return self._fault(item, held)
        findings = self.validator.received(encode_message(item))
        for finding in findings:
            if self._on_finding is not None:
                self._on_finding(finding)
        findings = held + findings
        if not findings or self.policy is ConformancePolicy.RECORD:
            return item
        out: list[Incoming] = []
        failed: ConformanceViolation | None = None
        for finding in findings:
            error = ConformanceViolation(finding)
            raise_it = (
                self.policy is ConformancePolicy.RAISE
                and answer_id is not None
                and finding.verdict is Verdict.FAIL
            )
            if raise_it and failed is None:
                failed = error
            else:
                out.append(TransportFault(None, error, fatal=False))
        if failed is not None:
            out.append(TransportFault(answer_id, failed))
        else:
            out.append(item)
        self._queued.extend(out[1:])
        return out[0]

    def _fault(self, fault: TransportFault, held: list[Finding]) -> Incoming:
        """A request the transport failed, whose exchange broke a rule (held findings): under
        RAISE a failed rule is the request's error (its cause the transport's); the rest are
        warnings before the fault."""
        if not held:
            return fault
        out: list[Incoming] = []
        replaced = fault
        for finding in held:
            error = ConformanceViolation(finding)
            if (
                self.policy is ConformancePolicy.RAISE
                and finding.verdict is Verdict.FAIL
                and replaced is fault
            ):
                error.__cause__ = fault.error
                replaced = TransportFault(fault.request_id, error, fault.fatal)
            else:
                out.append(TransportFault(None, error, fatal=False))
        out.append(replaced)
        self._queued.extend(out[1:])
        return out[0]
