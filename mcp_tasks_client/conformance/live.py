"""A live probe: scripted checks against a running server, one verdict per registered rule.

:func:`probe` opens one connection in the generation asked for, with the strict
:class:`~mcp_tasks_client.conformance.Validator` watching every message, and runs a script
that only reads unless told otherwise: the opening, ``tools/list``, ``tasks/list``, unknown
task ids, the methods 2026-07-28 removed. A tool is called only when the caller names it in
``safe_tools`` (with its arguments); then it is called plainly and as a task, waited on,
read, cancelled, and its questions answered (each required property of a form gets a plain
value). Tools the server advertises are never called unasked.

Over HTTP the validator also sees each exchange's status, content type and session id
(V-27a-d, E C7, E S24). For V-28 (2025-11-25, HTTP, ``tasks.list`` declared, a safe
task-capable tool) the probe opens a second session with the same headers and lists tasks:
without credentials, seeing the first session's task means the server tells no requestor
apart (a warning); with credentials both sessions are one requestor, so it says nothing.
Last (2025-11-25, a URL), V-27's two probe-only parts on a session of the probe's own: a
request with a bogus ``MCP-Protocol-Version`` must get 400, and once the server accepted a
``DELETE`` of that session, a request in it must get 404 (a 405 to the DELETE: the server does
not let clients end sessions, so not applicable).

The :class:`ProbeReport` has one :class:`RuleResult` per rule of the generation: ``fail`` or
``warn`` with the evidence (the validator's finding, or the probe's own check and the answer
it got), ``pass`` when the probe exercised the rule and nothing broke it, ``not_applicable``
with the reason otherwise. A check that cannot be sure says ``warn`` or ``not_applicable``,
never ``fail``; a step that goes wrong (a timeout, a refused call) is noted in the evidence
of the rules it would have exercised, never raised.

Each generation's script is one module (``_probe_v2025_11_25.py``, ``_probe_v2026_07_28.py``)
on a shared base (``_probe.py``: recording, steps, the report); :data:`PROBES` is the only map
from a generation to its script.

May import: this package's ``_probe*`` modules, ``_report`` and ``rules``; ``_exceptions``,
``_generation``, ``_io`` and ``models``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio

from .._exceptions import MCPTasksError, UsageError
from .._generation import Generation
from .._io.base import Transport
from .._io.http import HttpTransport
from ..models import Implementation
from ._probe import PROBE_CLIENT_INFO, Probe, error_of
from ._probe_v2025_11_25 import Probe2025
from ._probe_v2026_07_28 import Probe2026
from ._report import ProbeReport, ProbeVerdict, RuleResult
from .rules import unique_rules

__all__ = ["PROBES", "PROBE_CLIENT_INFO", "ProbeReport", "ProbeVerdict", "RuleResult", "probe"]

PROBES: dict[Generation, type[Probe]] = {
    Generation.V2025_11_25: Probe2025,
    Generation.V2026_07_28: Probe2026,
}
"""Every generation the probe speaks, with its script (the registry)."""


def probe_class(generation: Generation) -> type[Probe]:
    """The probe of ``generation``; UsageError for one it does not speak."""
    try:
        return PROBES[generation]
    except (KeyError, TypeError):
        known = ", ".join(g.value for g in PROBES)
        raise UsageError(f"no probe for generation {generation!r} (known: {known})") from None


async def probe(
    server: str | Callable[[], Transport],
    generation: Generation,
    *,
    safe_tools: Mapping[str, Mapping[str, Any]] | Iterable[str] = (),
    negative: bool = False,
    listen: bool = False,
    client_info: Implementation = PROBE_CLIENT_INFO,
    timeout: float = 30.0,
    headers: Mapping[str, str] | None = None,
) -> ProbeReport:
    """Probe the server at ``server`` (a URL, or a factory of fresh transports, e.g. for stdio)
    in ``generation``; see the module docstring.

    ``safe_tools``: the tools the probe may call, with their arguments (a plain list of names
    calls each with no arguments). ``negative``: also send what a client must not (a task for
    a task-forbidden tool, V-17). ``listen``: wait on 2026-07-28 tasks with a listen stream.
    ``timeout`` bounds each step. ``headers``: sent with every request to a URL ``server``
    (credentials: then V-28 cannot tell requestors apart and says so). Never raises for what
    the server does.
    Deadline: ``timeout`` for each step (a step that runs out is noted in the report, and the
    probe goes on). Cancelled: stops at once; the clients it opened are closed.
    """
    if isinstance(safe_tools, Mapping):
        safe: Mapping[str, Mapping[str, Any]] = safe_tools
    else:
        safe = {name: {} for name in safe_tools}
    if isinstance(server, str):
        url = server

        def connect() -> Transport:
            return HttpTransport(url, headers=headers)

    else:
        connect = server
    runner = probe_class(generation)(safe, negative=negative, listen=listen, timeout=timeout)
    if isinstance(server, str):
        runner.url, runner.headers = server, dict(headers or {})
    error: str | None = None
    try:
        with anyio.fail_after(max(timeout * (4 + 4 * len(safe)), timeout)):
            await runner.run(connect, client_info)
    except MCPTasksError as exc:
        error = error_of(exc)
    except TimeoutError:
        error = "the probe as a whole timed out"
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    if error is not None and "initialize" in runner.tags:
        runner.note([r.id for r in unique_rules()], f"the connection ended: {error}")
        error = None
    return runner.report(error)
