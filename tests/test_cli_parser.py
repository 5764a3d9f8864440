"""Issue 34: the command line builds the global options only into the subcommand a run names.

Each subcommand takes the global options after its name too, so the parser held 13 of them
for each of its 12 subcommands: about 5 ms of ``mcp-tasks status``, most of the parser's
cost. Now only the subcommand the words name gets them (``build_parser(words)``). Whatever
the words, the parser a run builds must read them exactly as the parser with every
subcommand built does: the same namespace, or the same exit and the same message.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_tasks_client.cli._options import build_parser

WORDS = [
    "status", "wait", "result", "cancel", "call", "tools", "list", "probe", "resume", "explore",
    "conformance-client", "monitor", "nosuch", "t-1", "-t-1", "--id", "--url",
    "http://127.0.0.1:9/mcp", "--url=http://127.0.0.1:9/mcp", "--header", "A:b", "--stdio",
    "srv", "--generation", "2026-07-28", "--gen", "--json", "--timeout", "5", "--timeout=x",
    "--deadline", "--task", "--ttl", "--args", "{}", "--journal", "j.db", "--inputs", "--",
    "-h", "--output", "out.json", "--ask-server", "--workers", "2", "--client-name",
]  # fmt: skip


def read(parser_words: Sequence[str] | None, words: list[str]) -> tuple[str, Any, str, str]:
    """What the parser built for ``parser_words`` makes of ``words``: ("ok", the namespace)
    or ("exit", the code), and what it printed."""
    from mcp_tasks_client.cli._options import _protect_ids

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        parser = build_parser(parser_words)
        try:
            ns = parser.parse_args(_protect_ids(parser, words))
        except SystemExit as exc:
            return "exit", exc.code, out.getvalue(), err.getvalue()
    return "ok", vars(ns), out.getvalue(), err.getvalue()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8))
@example(["--url", "http://127.0.0.1:9/mcp", "status", "t-1", "--json"])
@example(["status", "--url", "http://127.0.0.1:9/mcp", "-t-1"])
@example(["--client-name", "call", "status", "t-1", "--timeout", "5"])
@example(["--gen", "2026-07-28", "status", "t-1", "--deadline", "5"])
@example(["status", "-h"])
@example(["--header", "A:b", "wait", "--header", "A:b", "t-1"])
def test_a_run_s_parser_reads_every_word_as_the_whole_parser_does(words: list[str]) -> None:
    assert read(words, words) == read(None, words)


def test_only_the_named_subcommand_holds_the_global_options() -> None:
    import argparse

    parser = build_parser(["--url", "http://127.0.0.1:9/mcp", "status", "t-1"])
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    with_globals = {
        name for name, sub in subparsers.choices.items() if "--url" in sub._option_string_actions
    }
    assert with_globals == {"status"}
    whole = build_parser()
    (every,) = [a for a in whole._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(every.choices) == set(subparsers.choices)
