"""Issue 34: the command line builds the global options only into the subcommand a run names.

Each subcommand takes the global options after its name too, so the parser held 13 of them
for each of its 12 subcommands: about 5 ms of ``mcp-tasks status``, most of the parser's
cost. Now only the subcommand the words name gets them (``build_parser(words)``), and a run
that names one (asking for no help) builds that subcommand alone (3.7 ms -> 0.7 ms). Whatever
the words, the parser a run builds must read them exactly as the parser with every
subcommand built does: the same namespace, or the same exit and the same message.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_tasks_client.cli._options import (
    COMMANDS,
    SUBCOMMAND_OPTIONS,
    _option_strings,
    build_parser,
)

WORDS = [
    "status", "wait", "result", "cancel", "call", "tools", "list", "probe", "resume", "explore",
    "conformance-client", "monitor", "nosuch", "t-1", "-t-1", "--id", "--url",
    "http://127.0.0.1:9/mcp", "--url=http://127.0.0.1:9/mcp", "--header", "A:b", "--stdio",
    "srv", "--generation", "2026-07-28", "--gen", "--json", "--timeout", "5", "--timeout=x",
    "--deadline", "--task", "--ttl", "--args", "{}", "--journal", "j.db", "--inputs", "--",
    "-h", "--output", "out.json", "--ask-server", "--workers", "2", "--client-name", "--he",
    "--safe-tool", "--lease",
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
@example(["--url", "http://127.0.0.1:9/mcp", "-h", "status", "t-1"])
@example(["--json", "--he", "status"])
@example(["status", "--workers", "2"])  # another subcommand's option: a usage error, no id
@example(["status", "--id", "-t-1", "--safe-tool"])
def test_a_run_s_parser_reads_every_word_as_the_whole_parser_does(words: list[str]) -> None:
    assert read(words, words) == read(None, words)


def test_only_the_named_subcommand_holds_the_global_options() -> None:
    parser = build_parser(["--url", "http://127.0.0.1:9/mcp", "status", "t-1"])
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    with_globals = {
        name for name, sub in subparsers.choices.items() if "--url" in sub._option_string_actions
    }
    assert with_globals == {"status"}


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices)


def test_a_run_that_names_a_subcommand_builds_it_alone() -> None:
    """Issue 34: ``mcp-tasks status`` builds the status parser, not the 11 others (before:
    all 12, each with its arguments and help)."""
    assert list(
        subcommands(build_parser(["--url", "http://127.0.0.1:9/mcp", "status", "t-1"]))
    ) == ["status"]
    assert list(subcommands(build_parser(["--json", "call", "echo"]))) == ["call"]


@pytest.mark.parametrize(
    "words",
    [[], ["--url", "http://127.0.0.1:9/mcp"], ["nosuch", "t-1"], ["--gen", "x", "status"],
     ["--url", "http://127.0.0.1:9/mcp", "-h", "status"], ["status", "--help"],
     ["status", "--he"]],
)  # fmt: skip
def test_help_a_usage_error_or_an_uncertain_command_builds_every_subcommand(
    words: list[str],
) -> None:
    """The main parser's help and its errors list the subcommands: those runs build all."""
    assert list(subcommands(build_parser(words))) == list(COMMANDS)


def test_the_subcommand_lists_hold_to_the_whole_parser() -> None:
    """``COMMANDS`` and ``SUBCOMMAND_OPTIONS`` (what a task id starting with '-' is told
    apart from, whichever subcommands a run's parser holds) are the whole parser's."""
    whole = build_parser()
    assert list(subcommands(whole)) == list(COMMANDS)
    main_options = {o for action in whole._actions for o in action.option_strings}
    assert _option_strings(whole) - main_options == SUBCOMMAND_OPTIONS


@pytest.mark.parametrize("env", [None, "", "0", "-3", "wide", "120", "7"])
def test_the_terminal_width_is_the_one_shutil_finds(
    env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``columns()`` (argparse's width without importing shutil, issue 34) answers as
    ``shutil.get_terminal_size().columns`` does, whatever ``$COLUMNS`` holds."""
    import shutil

    from mcp_tasks_client.cli._options import columns

    if env is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", env)
    monkeypatch.setenv("LINES", "40")  # shutil asks the terminal only without a usable pair
    assert columns() == shutil.get_terminal_size().columns
    monkeypatch.delenv("LINES")
    assert columns() == shutil.get_terminal_size().columns
