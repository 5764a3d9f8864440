"""The command line, parsed (argparse) into typed options."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import attrs

from .._generation import Generation
from ._exit import epilog

__all__ = ["Formatter", "Options", "Server", "columns", "parse"]

DESCRIPTION = """\
Drive MCP Tasks from a shell: call tools (as tasks, or plainly), watch a task's status live,
answer the input it asks for, fetch its result, cancel it, list tasks, probe a server.

Nothing happens that you did not ask for: a call is a task only with --task, it is waited on
only with --wait, input is answered only with --inputs (and only then does the client declare
elicitation), and the protocol generation is the one you name (--generation, default
2025-11-25; `probe` tells which ones a server speaks). Runs on trio (status, cancel,
tools and list on asyncio: they start faster).

On a terminal, a live line shows the task's status, message, elapsed time and next poll, and
at most 256 KiB of a result (--output FILE writes all of it). Server text is shown with its
control characters escaped (\\x1b), never run. With --json, and whenever stdout is not a
terminal, every line of stdout is one JSON object with an "event" key ("created", "status",
"input", "outcome", "tool", "task", "cancel", "probe", "error", "interrupted"; a "status"
line each time the status or its message changes); the last line
for a waited task is the "outcome": its "status" and its "result" (the CallToolResult as wire
JSON) or its "error" ({"type", "message", ...}), and "exit_code". Ctrl-C exits 130 and prints
the command that cancels the task left running.

--inputs FILE.json answers input requests from a JSON object: each question is looked up by
its 2026-07-28 input key, then by the elicitation's message, then by its method
("elicitation/create", "sampling/createMessage"), then "*" (any elicitation). An elicitation
answer is an ElicitResult as JSON ({"action": "accept", "content": {...}}; "action" defaults
to "accept"); a sampling answer is a CreateMessageResult as JSON, or a string (the model's
text reply). Sampling is declared only when the file answers "sampling/createMessage".
--inputs interactive asks on the terminal, each form field typed by its JSON schema.
With --inputs, the server's GET stream (2025-11-25 over HTTP) is opened before the first call,
so a question the server sends there right after making the task is answered.
"""

GENERATIONS = [g.value for g in Generation]
TASK_COMMANDS = {
    "status": "print a task's current status (one tasks/get)",
    "wait": "watch a task until it ends, then print its outcome",
    "result": "print a task's outcome once it has one (no live display)",
    "cancel": "cancel a task (tasks/cancel)",
}
COMMANDS = (
    "tools", "monitor", "call", *TASK_COMMANDS, "list", "probe", "conformance-client", "explore",
    "resume",
)  # fmt: skip
"""The subcommands, in the order ``--help`` lists them (tests/test_cli_parser.py holds this
to the parser)."""
SUBCOMMAND_OPTIONS = frozenset({
    "--args", "--ask-server", "--command", "--concurrency", "--examples", "--id", "--lease",
    "--list", "--negative", "--output", "--protocol-version", "--related",
    "--related-from-elsewhere", "--replay-file", "--safe-tool", "--scenario", "--sessions",
    "--steps", "--task", "--ttl", "--wait", "--wall-time", "--workers",
})  # fmt: skip
"""Every subcommand's own option strings (beside the global options and ``-h``/``--help``):
what a task id that starts with '-' is told apart from (:func:`_protect_ids`) when a run's
parser holds one subcommand. tests/test_cli_parser.py holds this to the whole parser."""


@attrs.frozen
class Server:
    """Which server, and how to reach it: an HTTP URL (with headers) or a stdio command."""

    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    stdio: tuple[str, ...] | None = None


@attrs.frozen
class Options:
    """The global options, typed."""

    server: Server
    generation: Generation = Generation.V2025_11_25
    client_name: str = "mcp-tasks"
    timeout: float = 30.0
    """Seconds each request may take."""
    deadline: float | None = None
    """Seconds a wait may take (None: no deadline)."""
    json: bool = False
    interval: float | None = None
    """Poll no more often than every this many seconds (the server's pollInterval still
    holds when it is longer)."""
    on_busy: str = "fail"
    """``--on-busy``: what a 429/503 to a poll or an input answer does (``fail``: the wait
    ends with it; ``back-off``: sent again after max(pollInterval, Retry-After, 1 s growing))."""
    inputs: str | None = None
    """``"interactive"``, a path to an answers file, or None (input is not answered)."""
    journal: str | None = None
    """A journal file (SQLite) or a ``postgresql://`` URL: tasks started are recorded, and a
    2025-11-25 session is kept on close so that ``status``/``wait``/``result``/``cancel``/
    ``resume`` can come back."""
    output: str | None = None
    """``--output FILE`` (``call``, ``wait``, ``result``): the result is written there."""
    reconnect: float = 30.0
    """``--reconnect-within``: seconds a PostgreSQL journal keeps trying to reach its database
    (a restart, a dropped connection) before a statement fails; 0: it fails at once."""


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _not_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text!r}")
    return value


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"a header is NAME:VALUE, got {text!r}")
    return name.strip(), value.strip()


def _arguments(text: str, option: str = "--args") -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{option} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{option} must be a JSON object")
    return value


def _safe_tool(text: str) -> tuple[str, dict[str, Any]]:
    name, sep, raw = text.partition("=")
    if not name.strip():
        raise argparse.ArgumentTypeError(f"--safe-tool is NAME or NAME=JSON, got {text!r}")
    return name.strip(), _arguments(raw, f"--safe-tool {name.strip()}=") if sep else {}


def _global_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """The global options, on the main parser (with defaults) and on every subcommand
    (suppressed when absent), so they may come before or after the subcommand."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    server = parser.add_argument_group("server (one of)")
    server.add_argument("--url", default=default(None), help="a Streamable HTTP endpoint")
    server.add_argument(
        "--header",
        action="append",
        type=_header,
        # After the subcommand its own list (argparse would replace the main one's).
        dest="header" if defaults else "header_after",
        default=default([]),
        metavar="NAME:VALUE",
        help="an HTTP header sent with every request to --url, and to no other server "
        "(repeatable; with --url)",
    )
    server.add_argument(
        "--stdio",
        default=default(None),
        metavar='"CMD ARGS"',
        help="start the server as a child process and talk over its stdin/stdout",
    )
    # Not "options": argparse's own group (-h, --version) has that title already.
    opts = parser.add_argument_group("run options")
    opts.add_argument(
        "--generation",
        choices=GENERATIONS,
        default=default(Generation.V2025_11_25.value),
        help="the protocol generation to speak (default: 2025-11-25; never guessed)",
    )
    opts.add_argument(
        "--client-name",
        default=default("mcp-tasks"),
        help="the client name the server is told (default: mcp-tasks)",
    )
    opts.add_argument(
        "--timeout",
        type=_positive,
        default=default(30.0),
        metavar="SECONDS",
        help="deadline of each request; for conformance-client, the limit of each client run "
        "(the client is then killed and judged on what it sent) (default: 30)",
    )
    opts.add_argument(
        "--deadline",
        type=_positive,
        default=default(None),
        metavar="SECONDS",
        help="deadline of a wait; reaching it exits 4, the task keeps running (default: none)",
    )
    opts.add_argument(
        "--interval",
        type=_positive,
        default=default(None),
        metavar="SECONDS",
        help="poll a task no more often than this (the server's pollInterval, when longer, "
        "still holds; default: the library's PollPolicy backoff from 1 s)",
    )
    opts.add_argument(
        "--on-busy",
        choices=("fail", "back-off"),
        default=default("fail"),
        help="when the server answers a poll (tasks/get) or an input answer (tasks/update) with "
        "HTTP 429 or 503: fail (exit with the error; the default) or back-off (send it again "
        "after the server's Retry-After, its pollInterval and a backoff from 1 s, whichever is "
        "longest, within --deadline; a warning each time). A busy tools/call is never sent "
        "again",
    )
    opts.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="JSON lines on stdout (also whenever stdout is not a terminal)",
    )
    opts.add_argument(
        "--inputs",
        default=default(None),
        metavar="FILE.json|interactive",
        help="answer the input a task asks for from FILE.json, or by asking on the terminal "
        "(default: not answered; a task that asks exits 5)",
    )
    opts.add_argument(
        "--journal",
        default=default(None),
        metavar="PATH|URL",
        help="record tasks in this journal, a file (created owner-only) or a postgresql:// URL "
        "(the postgres extra); a 2025-11-25 session is then kept on close, so a later run can "
        "follow the task (default: nothing is recorded)",
    )
    opts.add_argument(
        "--reconnect-within",
        dest="reconnect",
        type=_not_negative,
        default=default(30.0),
        metavar="SECONDS",
        help="a postgresql:// journal whose database is lost (a restart, a dropped "
        "connection) is reached again, with backoff, for this long before a statement fails "
        "(0: fail at once; default: 30)",
    )


def _output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the whole result to FILE, as JSON (the CallToolResult; FILE is emptied "
        "first): on a terminal only the first 256 KiB of a result is shown",
    )


def version_line() -> str:
    """``mcp-tasks --version``: the package's version and the generations it speaks."""
    from .. import __version__

    return (
        f"mcp-tasks {__version__} (mcp-tasks-client; protocol generations {', '.join(GENERATIONS)})"
    )


def columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` finds it (``$COLUMNS``
    when a positive number, else standard output's terminal, else 80), without importing
    ``shutil``, which brings bz2, lzma and fnmatch: argparse asks for the width each time it
    makes a formatter, once per option a parser adds (issue 34: 1.3% of ``mcp-tasks status``'s
    start-up, in instructions). tests/test_cli_parser.py holds it to shutil's."""
    try:
        wanted = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        wanted = 0
    if wanted > 0:
        return wanted
    stdout = sys.__stdout__  # None without one (pythonw): 80, as shutil says
    try:
        return (stdout is not None and os.get_terminal_size(stdout.fileno()).columns) or 80
    except (AttributeError, ValueError, OSError):
        return 80


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter for a description and epilog kept as written, its width from
    :func:`columns` (argparse's own default, less 2, as argparse takes it)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, columns() - 2 if width is None else width
        )


def build_parser(words: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``words`` (the arguments it will parse), it holds the
    subcommand they name alone, with the global options after its name too (the main
    parser's usage and errors are the same with one subcommand or all: ``COMMAND``): a run
    does not pay for 11 subcommands, and 11 copies of the global options, it cannot reach
    (most of the parser's cost: issue 34). Without ``words``, when which subcommand they name
    is uncertain (see :func:`_command_named`) or when they may ask for help (the main
    ``--help`` lists every subcommand), it holds every subcommand, the named one alone with
    the global options (all of them when none is certain)."""
    parser = argparse.ArgumentParser(
        prog="mcp-tasks",
        description=DESCRIPTION,
        epilog=epilog(),
        formatter_class=Formatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_line(),
        help="print the version of mcp-tasks (the mcp-tasks-client package) and exit",
    )
    _global_options(parser, defaults=True)
    named = None if words is None else _command_named(parser, words)
    # A run that names a subcommand (and asks for no help: the main parser's lists them all)
    # builds that one alone: a parse of its words never reaches another.
    only = named if named in COMMANDS and not _asks_help(words or ()) else None
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def wanted(name: str) -> bool:
        return only is None or only == name

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=epilog(),
            formatter_class=Formatter,
        )
        if named is None or named == name:
            _global_options(sub, defaults=False)
        return sub

    if wanted("tools"):
        command("tools", "list the server's tools and their task support")
    if wanted("monitor"):
        # Listed here for --help only: main() hands `monitor` its own arguments before this
        # parser runs (its options and its extra are its own: `mcp-tasks monitor --help`).
        commands.add_parser(
            "monitor", help="a live web page over a journal (see: mcp-tasks monitor --help)"
        )
    if wanted("call"):
        call = command("call", "call a tool, plainly or (--task) as a task")
        call.add_argument("tool", metavar="TOOL")
        call.add_argument(
            "--args",
            type=_arguments,
            default={},
            metavar="JSON",
            help="the tool's arguments, a JSON object (default: {})",
        )
        call.add_argument("--task", action="store_true", help="call it as a task (task-augmented)")
        call.add_argument(
            "--ttl",
            type=_positive,
            metavar="SECONDS",
            help="with --task: how long the server should keep the task (2025-11-25 only)",
        )
        call.add_argument(
            "--wait",
            action="store_true",
            help="with --task: watch the task until it ends, then print its outcome",
        )
        call.add_argument(
            "--related",
            nargs="+",
            action="extend",
            default=[],
            metavar="ID",
            help="name earlier tasks of this server the call builds on, sent as the draft "
            "_meta io.modelcontextprotocol/relatedTaskIds (the server may ignore it). Each id "
            "must be recorded for this server in --journal; any other is refused (exit 2) "
            "unless --related-from-elsewhere",
        )
        call.add_argument(
            "--related-from-elsewhere",
            action="store_true",
            help="send the --related ids though the journal does not hold them for this server: "
            "you vouch they came from it",
        )
        _output_option(call)
    for name, help_text in TASK_COMMANDS.items():
        if not wanted(name):
            continue
        sub = command(name, help_text)
        if name in ("wait", "result"):
            _output_option(sub)
            sub.add_argument(
                "--ask-server",
                action="store_true",
                help="with --journal: poll the server for the task's word even while a live "
                "worker holds it (default: a task the journal holds, or a worker holds, is "
                "read from the journal and the server is not asked)",
            )
        sub.add_argument("task_id", metavar="ID", nargs="?", help="the task id")
        sub.add_argument(
            "--id",
            dest="task_id_option",
            metavar="ID",
            help="the task id, as an option (an id that starts with '-' is read as this)",
        )
    if wanted("list"):
        command(
            "list",
            "list the server's tasks (tasks/list; 2025-11-25 only); with --journal, the tasks the "
            "journal holds instead (of --url/--stdio when given; the server is not asked)",
        )
    if wanted("probe"):
        probe = command(
            "probe",
            "ask the server which protocol generations it speaks (and runs tasks in), then check "
            "it against the rules of --generation (read-only unless --safe-tool names a tool "
            "the probe may call); one verdict per rule",
        )
        probe.add_argument(
            "--safe-tool",
            action="append",
            type=_safe_tool,
            default=[],
            metavar="NAME[=JSON]",
            help="a tool the probe may call (plainly and as a task), with these arguments "
            "(repeatable; default: no tool is called)",
        )
        probe.add_argument(
            "--negative",
            action="store_true",
            help="also send what a client must not (a task for a task-forbidden tool, V-17)",
        )
    if wanted("conformance-client"):
        client_suite = command(
            "conformance-client",
            "judge a task CLIENT: run --command (the server URL appended as its last argument, "
            "MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and "
            "MCP_CONFORMANCE_CONTEXT in its environment) against the client suite's scripted "
            "servers; one JSON line per check, then a table; exit 1 if a check fails (needs no "
            "--url or --stdio)",
        )
        client_suite.add_argument(
            "--command",
            dest="client_command",
            metavar="CMD",
            help="the client to judge, as a shell-like command line",
        )
        client_suite.add_argument(
            "--scenario",
            action="append",
            default=[],
            metavar="NAME",
            help="run only this scenario (repeatable; default: every one; --list names them)",
        )
        client_suite.add_argument(
            "--protocol-version",
            dest="protocol_version",
            choices=[g.value for g in Generation],
            default=None,
            help="run only in this generation (default: every generation a scenario speaks)",
        )
        client_suite.add_argument(
            "--list", action="store_true", help="print the scenarios, one a line, and exit"
        )
    if wanted("explore"):
        explorer = command(
            "explore",
            "explore a live server (--url) in --generation: sequences of operations drawn by "
            "hypothesis, every answer judged; a failure is shrunk to the shortest sequence and "
            "written as a replayable pytest file (read-only unless --safe-tool names a tool; needs "
            "the testing extra); exit 1 if a rule broke",
        )
        explorer.add_argument(
            "--safe-tool",
            action="append",
            type=_safe_tool,
            default=[],
            metavar="NAME[=JSON]",
            help="a tool it may call as a task, with these base arguments (repeatable; default: "
            "no tool is called)",
        )
        explorer.add_argument(
            "--examples", type=_workers, default=25, metavar="N", help="sequences to draw (25)"
        )
        explorer.add_argument(
            "--steps", type=_workers, default=12, metavar="N", help="operations per sequence (12)"
        )
        explorer.add_argument(
            "--wall-time",
            type=_positive,
            default=120.0,
            metavar="SECONDS",
            help="stop drawing new sequences after this long (a failure found still shrinks) (120)",
        )
        explorer.add_argument(
            "--concurrency",
            type=_workers,
            default=3,
            metavar="N",
            help="tasks alive at once in a sequence (3)",
        )
        explorer.add_argument(
            "--sessions",
            type=_workers,
            default=1,
            metavar="N",
            help="client sessions open at once on the server in a sequence (1); with 2 or more, "
            "what one session may see of another's tasks is judged too",
        )
        explorer.add_argument(
            "--replay-file",
            default=None,
            metavar="PATH",
            help="where to write the replay script of a failure (default: printed on stderr)",
        )
    if wanted("resume"):
        resume = command(
            "resume",
            "follow every open task of --journal to its end (servers and sessions from the "
            "journal); --header values are sent only to the server named by --url, the tasks of "
            "every other server are followed without them",
        )
        resume.add_argument(
            "--workers",
            type=_workers,
            default=None,
            metavar="N",
            help="work as one of many processes sharing the journal: follow up to N tasks at once, "
            "take more as they end (and those of workers that died), until none is open",
        )
        resume.add_argument(
            "--lease",
            type=_positive,
            default=60.0,
            metavar="SECONDS",
            help="how long a lease on a task lasts (renewed every third of it while the task is "
            "followed; a worker that stops renewing loses its tasks to the others this long "
            "after; default: 60)",
        )
    return parser


def _command_named(parser: argparse.ArgumentParser, words: Sequence[str]) -> str | None:
    """The subcommand ``words`` name, when that is certain: their first word that is neither
    an option of ``parser`` (the global options) nor such an option's value. None when an
    option before it is not spelled out exactly (argparse takes abbreviations: ``--gen X``)
    or there is no such word (``--help``, ``--version``)."""
    known: dict[str, bool] = {}
    for action in parser._actions:
        for option in action.option_strings:
            known[option] = action.nargs != 0  # whether it takes a value
    value_next = False
    for word in words:
        if value_next:
            value_next = False
        elif word.startswith("-"):
            name, equals, _ = word.partition("=")
            if name not in known:
                return None
            value_next = known[name] and not equals
        else:
            return word
    return None


def _asks_help(words: Sequence[str]) -> bool:
    """Whether ``words`` may ask for help (``-h``, ``--help`` or an abbreviation of it): the
    main parser's help lists every subcommand, so such a run builds them all."""
    return any(word.startswith(("-h", "--h")) for word in words)


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found


def _protect_ids(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """Task ids may start with '-' (base64url ids do): after a task subcommand, a word that
    starts with '-' and is no option of ours is the id, passed on as ``--id=WORD``. Ours:
    every subcommand's, whether ``parser`` holds them all or the one a run names."""
    known = _option_strings(parser) | SUBCOMMAND_OPTIONS
    out: list[str] = []
    command: str | None = None
    rest_positional = False
    for word in argv:
        if command is None and word in TASK_COMMANDS:
            command = word
        elif command is not None and not rest_positional:
            if word == "--":
                rest_positional = True
            elif word.startswith("-") and word.split("=", 1)[0] not in known:
                word = f"--id={word}"
        out.append(word)
    return out


def parse(argv: Sequence[str] | None) -> tuple[Options, str, argparse.Namespace]:
    """The options, the subcommand and its namespace; argparse exits 2 on a usage error."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    ns = parser.parse_args(_protect_ids(parser, words))
    url: str | None = ns.url
    stdio_text: str | None = ns.stdio
    headers = tuple(ns.header) + tuple(getattr(ns, "header_after", ()))
    if ns.command == "resume":
        if ns.journal is None:
            parser.error("resume needs --journal PATH")
        if stdio_text is not None:
            parser.error("resume takes its servers from the journal: no --stdio")
        if headers and url is None:
            # Credentials go only to the server they were given for (a planted journal entry
            # must not receive them): name it.
            parser.error("resume --header needs --url URL: the server the headers are for")
        if url is not None and not headers:
            parser.error("resume --url names the server the --header values are for: add them")
    elif ns.command == "list" and ns.journal is not None and url is None and stdio_text is None:
        pass  # list --journal: every task the journal holds, whatever its server
    elif ns.command == "conformance-client":
        if url is not None or stdio_text is not None:
            parser.error("conformance-client serves its own servers: no --url or --stdio")
        if not ns.list and not ns.client_command:
            parser.error('conformance-client needs --command "CMD" (or --list)')
        if ns.client_command:
            try:
                ns.client_command = shlex.split(ns.client_command)
            except ValueError as exc:
                parser.error(f"--command: {exc}")
    elif ns.command == "explore" and url is None:
        parser.error("explore needs --url URL (it opens a session per sequence)")
    else:
        if (url is None) == (stdio_text is None):
            parser.error('name the server: exactly one of --url URL or --stdio "CMD ARGS"')
        if headers and url is None:
            parser.error("--header goes with --url")
    stdio: tuple[str, ...] | None = None
    if stdio_text is not None:
        try:
            stdio = tuple(shlex.split(stdio_text))
        except ValueError as exc:
            parser.error(f"--stdio: {exc}")
        if not stdio:
            parser.error("--stdio needs a command")
    if ns.command in TASK_COMMANDS:
        given = [i for i in (ns.task_id, ns.task_id_option) if i is not None]
        if len(given) != 1:
            parser.error(f"{ns.command} needs one task id (ID, or --id ID)")
        ns.task_id = given[0]
    if ns.command == "call":
        if ns.ttl is not None and not ns.task:
            parser.error("--ttl goes with --task")
        if ns.wait and not ns.task:
            parser.error("--wait goes with --task (a plain call always waits for its answer)")
        if ns.related_from_elsewhere and not ns.related:
            parser.error("--related-from-elsewhere goes with --related ID ...")
    options = Options(
        server=Server(url=url, headers=headers, stdio=stdio),
        generation=Generation(ns.generation),
        client_name=ns.client_name,
        timeout=ns.timeout,
        deadline=ns.deadline,
        json=ns.json,
        interval=ns.interval,
        on_busy=ns.on_busy,
        inputs=ns.inputs,
        journal=ns.journal,
        output=getattr(ns, "output", None),
        reconnect=ns.reconnect,
    )
    return options, ns.command, ns
