"""``mcp-tasks conformance-client``: the client-side conformance suite from the command line.

One JSON line per check on stdout (the official suite's check object, with ``"event":
"check"``, ``scenario`` and ``protocolVersion``) with ``--json`` and whenever stdout is not a
terminal (each of its lines is then one JSON object, as for every command), and the table on
stderr; on a terminal without ``--json``, the table alone, on stdout. The client's own stdout
and stderr never reach either: their tails are in a failed check's ``details``, with the
client's ``exitCode`` (in every check). ``--timeout`` limits each client run. Exit 1 when a
check failed, 2 for an unknown scenario.

May import: ``conformance``, ``_generation``, ``_exceptions``, this package's ``_exit``.
"""

from __future__ import annotations

import argparse
import json
import sys

from .._exceptions import UsageError
from .._generation import Generation
from ..conformance.clients import SCENARIOS, Check, render_table, run_scenario, scenario
from ._exit import ExitCode

__all__ = ["conformance_client"]


async def conformance_client(
    ns: argparse.Namespace, timeout: float, *, json_lines: bool
) -> ExitCode:
    """Run the chosen scenarios against ``ns.client_command``; see the module docstring.
    Deadline: ``timeout`` per client run (then the client is killed and judged).
    Cancelled: the running client is killed and its server stopped."""
    if ns.list:
        for name in SCENARIOS:
            sys.stdout.write(name + "\n")
        return ExitCode.COMPLETED
    try:
        chosen = [scenario(name) for name in ns.scenario] or list(SCENARIOS.values())
    except UsageError as exc:
        sys.stderr.write(f"mcp-tasks: {exc}\n")
        return ExitCode.USAGE
    rows: list[tuple[str, str, Check]] = []
    for s in chosen:
        generations = sorted(s.generations, key=lambda g: g.value)
        if ns.protocol_version is not None:
            generations = [g for g in generations if g is Generation(ns.protocol_version)]
        for generation in generations:
            checks = await run_scenario(ns.client_command, s.name, generation, timeout=timeout)
            for check in checks:
                line = {"event": "check", "scenario": s.name}
                line["protocolVersion"] = generation.value
                if json_lines:
                    sys.stdout.write(json.dumps({**line, **check.to_json()}) + "\n")
                rows.append((s.name, generation.value, check))
            sys.stdout.flush()
    (sys.stderr if json_lines else sys.stdout).write(render_table(rows))
    failed = any(c.status == "FAILURE" for _, _, c in rows)
    return ExitCode.FAILED if failed else ExitCode.COMPLETED
