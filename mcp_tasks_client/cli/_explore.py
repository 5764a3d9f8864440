"""``mcp-tasks explore``: stateful, shrinking conformance testing of a live server.

One JSON line on stdout (``"event": "explore"``: the generation, the sequences run, the rules
broken, the shrunk steps and the SHOULD rules broken as warnings), then a summary, on stdout
when it is a terminal, else on stderr. A failure's replay script (a pytest file) goes to
``--replay-file``, else to stderr. Exit 1 when a MUST rule broke (a SHOULD rule: a warning).

May import: ``conformance``, ``_generation``, this package's ``_exit`` and ``_options``.
"""

from __future__ import annotations

import argparse
import json
import sys

import anyio

from ..conformance import ExploreBudget
from ..conformance import explore as explore_server
from ._exit import ExitCode
from ._options import Options

__all__ = ["explore"]


async def explore(ns: argparse.Namespace, options: Options) -> ExitCode:
    """Explore ``options.server.url`` within the budget ``ns`` gives.
    Deadline: ``--wall-time`` for drawing sequences, then the shrinking of a failure (each
    request bounded by ``--timeout``). Cancelled: the exploring stops after its current
    example."""
    assert options.server.url is not None  # the parser requires --url
    budget = ExploreBudget(
        examples=ns.examples,
        steps=ns.steps,
        wall_time=ns.wall_time,
        concurrency=ns.concurrency,
        sessions=ns.sessions,
        request_timeout=options.timeout,
    )
    report = await explore_server(
        options.server.url, options.generation, safe_tools=dict(ns.safe_tool), budget=budget
    )
    sys.stdout.write(json.dumps({"event": "explore", **report.to_json()}) + "\n")
    sys.stdout.flush()
    human = sys.stdout if sys.stdout.isatty() else sys.stderr
    if report.warnings:  # SHOULD rules: noted, never the exit code
        human.write(f"SHOULD rules broken (warnings): {', '.join(report.warned)}\n")
    if report.ok:
        human.write(f"explored {report.examples} sequences: no rule broken\n")
        return ExitCode.COMPLETED
    human.write(
        f"explored {report.examples} sequences: {', '.join(report.rule_ids)} broken by "
        f"{len(report.steps)} steps\n"
    )
    script = report.replay_script()
    if ns.replay_file is not None:
        await anyio.Path(ns.replay_file).write_text(script, encoding="utf-8")
        human.write(f"replay: pytest {ns.replay_file}\n")
    else:
        sys.stderr.write(script)
    return ExitCode.FAILED
