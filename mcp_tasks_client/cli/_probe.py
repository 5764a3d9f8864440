"""The commands that judge a server or a client: ``probe``, ``conformance-client`` and
``explore``. Imported only when one of them runs: the others never load the conformance kit
(nor hypothesis, which ``conformance-client`` and ``explore`` need: the ``testing`` extra)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._exceptions import UsageError
from .._io.base import Transport
from ..conformance import ProbeVerdict
from ..conformance import probe as conformance_probe
from ..probe import probe_server
from ._connect import client_info, make_transport
from ._exit import ExitCode, for_error

if TYPE_CHECKING:
    from ._commands import Run

__all__ = ["conformance_client", "explore", "probe"]


async def probe(run: Run, ns: argparse.Namespace) -> ExitCode:
    """Which generations the server speaks; then, when it speaks ``--generation``, one
    verdict per rule of that generation (the conformance probe): exit 1 if any fails."""
    options, out = run.options, run.out
    report = await probe_server(
        lambda: make_transport(options.server),
        client_info=client_info(options),
        timeout=options.timeout,
    )
    code = ExitCode.COMPLETED
    if not report.generations:
        said = (report.initialize_error, report.discover_error)
        errors = [e for e in said if e is not None]
        codes = [for_error(e) for e in errors]
        code = ExitCode.CONNECTION if ExitCode.CONNECTION in codes else ExitCode.PROTOCOL
    out.probe(report, code)
    if code is not ExitCode.COMPLETED:
        out.note("the server answered neither generation's opening")
        return code
    if options.generation not in report.generations:
        out.note(
            f"the server does not speak {options.generation.value}: no rules checked "
            "(choose --generation from the generations above)"
        )
        return code
    # A URL goes to the probe as a URL: the checks of a session of its own (V-27) need
    # it, and the Python API reaches them with one (issue 23).
    server = options.server
    target: str | Callable[[], Transport] = (
        server.url if server.url is not None else lambda: make_transport(server)
    )
    rules = await conformance_probe(
        target,
        options.generation,
        headers=dict(server.headers) if server.url is not None else None,
        safe_tools=dict(ns.safe_tool),
        negative=ns.negative,
        client_info=client_info(options),
        timeout=options.timeout,
    )
    failed = rules.with_verdict(ProbeVerdict.FAIL)
    code = ExitCode.FAILED if failed else ExitCode.COMPLETED
    out.rules(rules, code)
    return code


async def conformance_client(run: Run, ns: argparse.Namespace) -> ExitCode:
    """``conformance-client``: its scripted servers come from the ``testing`` extra
    (hypothesis), imported only for this command; without the extra, a usage error naming
    it (the other commands never need it)."""
    try:
        from ._conformance_client import conformance_client as run_suite
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise UsageError(
            "conformance-client needs the `testing` extra: pip install 'mcp-tasks-client[testing]'"
        ) from None
    json_lines = run.options.json or not sys.stdout.isatty()
    return await run_suite(ns, run.options.timeout, json_lines=json_lines)


async def explore(run: Run, ns: argparse.Namespace) -> ExitCode:
    """``explore``: needs the ``testing`` extra (hypothesis), imported only for it."""
    try:
        from ._explore import explore as run_explorer
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise UsageError(
            "explore needs the `testing` extra: pip install 'mcp-tasks-client[testing]'"
        ) from None
    return await run_explorer(ns, run.options)
