"""Issue 34, item 4: start-up imports only what the call at hand needs.

Each check runs a fresh interpreter and reads ``sys.modules``: what an import loads, not how
long it takes (the time is measured by ``nox -s bench``, ``--only startup``, on a quiet
machine). Before: a bare ``import mcp_tasks_client`` loaded 376 modules (its dependencies,
sqlite3, subprocess, asyncio, h11...), and ``mcp-tasks --version`` the whole command line.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_tasks_client.cli import ExitCode

STDLIB = set(sys.stdlib_module_names)


def loaded(code: str) -> list[str]:
    """The modules ``code`` loads beyond what a bare interpreter has."""
    script = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    names: list[str] = json.loads(ran.stdout.splitlines()[-1])
    return names


def in_the_tree(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter in this tree (its ``mcp_tasks_cli`` entry script
    first on the path, not an installed copy)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip


def third_party(names: list[str]) -> set[str]:
    return {n.split(".")[0] for n in names} - STDLIB - {"mcp_tasks_client"}


def test_a_bare_import_loads_the_package_alone() -> None:
    names = loaded("import mcp_tasks_client")
    assert [n for n in names if n.startswith("mcp_tasks_client")] == ["mcp_tasks_client"]
    assert third_party(names) == set()  # not even httpx, attrs, cattrs, anyio
    assert len(names) <= 40, names  # the interpreter's own few (typing, enum, re...)


def test_a_top_level_name_imports_its_module_on_first_use() -> None:
    names = loaded("from mcp_tasks_client import Generation")
    assert [n for n in names if n.startswith("mcp_tasks_client")] == [
        "mcp_tasks_client",
        "mcp_tasks_client._generation",
    ]


@pytest.mark.parametrize(
    "absent",
    ["sqlite3", "subprocess", "asyncio", "h11", "rich", "hypothesis", "psycopg",
     "mcp_tasks_client.conformance", "mcp_tasks_client._io.stdio", "mcp_tasks_client._io.lean",
     "mcp_tasks_client.journal_postgres"],
)  # fmt: skip
def test_a_client_program_loads_no_part_it_does_not_use(absent: str) -> None:
    """What a first program imports (README's): no journal file, no stdio child, no other
    transport, no conformance kit, no terminal display."""
    names = loaded(
        "from mcp_tasks_client import Client, HttpTransport, InputRouter, Poller, ToolCall"
    )
    assert absent not in names


def test_mcp_tasks_version_loads_neither_the_library_nor_its_dependencies() -> None:
    code = (
        "import contextlib, io\n"
        "from mcp_tasks_client.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--version']) == 0\n"
    )
    names = loaded(code)
    assert third_party(names) <= {"attr", "attrs", "rich"}, third_party(names)
    ours = {n for n in names if n.startswith("mcp_tasks_client")}
    assert ours == {
        "mcp_tasks_client",
        "mcp_tasks_client._generation",
        "mcp_tasks_client.cli",
        "mcp_tasks_client.cli._exit",
        "mcp_tasks_client.cli._options",
    }


STATUS = (
    "import contextlib, io\n"
    "from mcp_tasks_client.cli import main\n"
    "out, err = io.StringIO(), io.StringIO()\n"
    "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
    "    main(['--url', 'http://127.0.0.1:9/mcp', 'status', 't-1'])\n"
)
"""``mcp-tasks status`` against a port nothing listens on (the benchmark's run): the refused
connection ends it, after everything the command imports before it sends."""

STATUS_CLI_MODULES = {
    "mcp_tasks_client.cli",
    "mcp_tasks_client.cli._commands",
    "mcp_tasks_client.cli._connect",
    "mcp_tasks_client.cli._exit",
    "mcp_tasks_client.cli._interrupt",
    "mcp_tasks_client.cli._journal",  # (journal_name, for the hints: no journal module)
    "mcp_tasks_client.cli._next_steps",
    "mcp_tasks_client.cli._options",
    "mcp_tasks_client.cli._output",
    "mcp_tasks_client.cli._safe",
}
"""The command line's own modules ``status`` loads: not ``call``'s, the follower's, the journal
commands', the probe's, nor the ``--inputs`` answerers."""

STATUS_THIRD_PARTY = {"anyio", "attr", "attrs", "rich", "sniffio", "typing_extensions"}
"""The packages beside ours ``status`` loads (and exceptiongroup on Python 3.10, for anyio):
no httpx (the lean engine), no cattrs (the codecs' own dispatch, issue 34)."""

NOT_FOR_STATUS = [
    # what only other commands or options use: following a task (the Poller), answering input,
    # the task receiver, resume and the journal (--journal), the probe and the conformance kit,
    # stdio (--stdio), the lean transport, the terminal display's live line
    "mcp_tasks_client.engine", "mcp_tasks_client._poller", "mcp_tasks_client.inputs",
    "mcp_tasks_client.receiver", "mcp_tasks_client.resume", "mcp_tasks_client.journal",
    "mcp_tasks_client.journal_postgres", "mcp_tasks_client.probe",
    "mcp_tasks_client.conformance", "mcp_tasks_client._io.stdio", "mcp_tasks_client._io.lean",
    "mcp_tasks_client._sansio.scheduler", "sqlite3", "hypothesis", "psycopg", "rich.live",
    # trio: a quick command runs on asyncio; opentelemetry: no provider can reach the run
    "trio", "opentelemetry",
]  # fmt: skip


STATUS_NEEDS_NONE_OF = [
    # issue 34, per use: the other generation (its driver, codec and header codec), the wire
    # models a status never reads (tools, content, input requests, prompts and resources)
    "mcp_tasks_client._drivers.v2026_07_28", "mcp_tasks_client._codec.v2026_07_28",
    "mcp_tasks_client._codec.headers", "mcp_tasks_client.models.tools",
    "mcp_tasks_client.models.content", "mcp_tasks_client.models.client_requests",
    "mcp_tasks_client.models.catalog",
    # nor how a task ended (a status follows no task): the outcomes and their classifier
    "mcp_tasks_client.outcomes", "mcp_tasks_client._sansio.classify",
    # nor cattrs: the codecs find their hooks themselves (_codec/_dispatch.py); nor
    # urllib.request (read only when a *_proxy variable is set) and the email package (only
    # an HTTP-date Retry-After needs it)
    "cattrs", "urllib.request", "email",
]  # fmt: skip


def attrs_classes(code: str) -> list[str]:
    """The attrs classes of this package that ``code`` builds (each costs its generated
    methods' compilation at import: about 0.4 ms here)."""
    script = (
        f"{code}\n"
        "import json, sys, attrs\n"
        "found = sorted(f'{name}.{value.__qualname__}'\n"
        "    for name, module in list(sys.modules.items())\n"
        "    if name.startswith('mcp_tasks_client') and module is not None\n"
        "    for value in vars(module).values()\n"
        "    if isinstance(value, type) and attrs.has(value) and value.__module__ == name)\n"
        "print(json.dumps(found))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    found: list[str] = json.loads(ran.stdout.splitlines()[-1])
    return found


def test_a_command_over_http_loads_no_conformance_kit_nor_journal_file() -> None:
    """``mcp-tasks status`` and the like (a script may call them in a loop): the command
    line's modules, the client's, not the probe's nor sqlite3 (no --journal) nor subprocess
    (no --stdio). A refused connection ends the run: nothing else is needed here."""
    names = loaded(STATUS)
    # (subprocess itself comes with asyncio's loop: our stdio module does not)
    for absent in ("sqlite3", "mcp_tasks_client._io.stdio", "mcp_tasks_client.conformance"):
        assert absent not in names, absent
    assert "mcp_tasks_client.cli._commands" in names


def test_mcp_tasks_status_loads_the_client_and_its_own_command_alone() -> None:
    """Issue 34, item 4: ``mcp-tasks status`` imports per command. Before, it loaded every
    command's code (the Poller, input routing, the receiver, resume, the journal: 73 of the
    package's modules); now the client, its HTTP transport and the command line's modules
    that ``status`` uses. Pinned so it does not creep back: a new module on this path is a
    decision (raise the count here, saying why), never a side effect."""
    names = loaded(STATUS)
    ours = {n for n in names if n.startswith("mcp_tasks_client")}
    assert {n for n in ours if n.startswith("mcp_tasks_client.cli")} == STATUS_CLI_MODULES
    for absent in NOT_FOR_STATUS + STATUS_NEEDS_NONE_OF:
        assert not any(n == absent or n.startswith(absent + ".") for n in names), absent
    # 46 of the client's now (no builders, result cache, progress book, task machine nor
    # answer book: STATUS_LOADS_NONE_OF), the command line's 10: 56. Before that 61: 51 of
    # the client's (with __init__; _codec._dispatch, the codecs' own dispatch, is
    # one, in place of cattrs' 20; no outcomes nor their classifier; _io._http_answers, the
    # statuses and error bodies HttpTransport was split by), the command line's 10;
    # 68 in all before issue 34's last step loaded each generation and each models module per
    # use. Before that: the
    # client's 59 (with __init__; 47 before Session was split by job into the _session
    # package, six modules where one was, and HttpTransport by job into its two engines, the
    # engines' interface, the SSE streams and the lean reader; one more since status runs on
    # asyncio: the lean engine's asyncio protocol, _io._aio), the command line's 10.
    assert len(ours) <= 56, sorted(ours)
    # Beyond the package, its dependencies and rich: no trio (nor its outcome and
    # sortedcontainers), no opentelemetry. 381 modules in all before, 321 now (Python 3.11).
    assert third_party(names) - {"exceptiongroup"} <= STATUS_THIRD_PARTY, third_party(names)


def test_mcp_tasks_status_builds_only_the_attrs_classes_it_uses() -> None:
    """Issue 34: the attrs classes were most of the library's own import (each compiles its
    generated methods): 97 on ``status``'s path before the models and the generations were
    loaded per use. Pinned: a new class on this path is a decision, never a side effect."""
    built = attrs_classes(STATUS)
    # 37: 61 before the builders, the result cache, the progress book, the task machine and
    # the answer book left status's path and _Link, CallArgs, the SSE stream's two state
    # classes, the live line's TaskView, the run's Interrupted and NextSteps and the
    # converter's Family stopped being attrs classes (or moved); 97 before (884606a),
    # counted the same way
    assert len(built) <= 37, built
    for module in STATUS_NEEDS_NONE_OF + STATUS_LOADS_NONE_OF:
        assert not any(name.startswith(module + ".") for name in built), module


STATUS_LOADS_NONE_OF = [
    # the builders (a call, a prompt, a resource is built by what makes one), the result
    # cache (a caller's Client(cache=...) only), the progress book and the task machine (made
    # with the first progress token, a followed task), the answer book (input routing, a
    # span of a server's request); secrets (with hmac, random: a resumed session's first id)
    # and hashlib (OpenSSL's set-up: a redacted task id); shutil (with bz2, lzma: argparse's
    # terminal width, found by cli._options.columns instead)
    "mcp_tasks_client.builders", "mcp_tasks_client._cache", "mcp_tasks_client._sansio.progress",
    "mcp_tasks_client._sansio.task_machine", "mcp_tasks_client._sansio.answer_book",
    "secrets", "hmac", "random", "hashlib", "shutil", "bz2", "lzma",
]  # fmt: skip


@pytest.mark.parametrize("absent", STATUS_LOADS_NONE_OF)
def test_a_status_loads_none_of_what_only_a_call_a_cache_or_a_followed_task_uses(
    absent: str,
) -> None:
    """Issue 34, item 4: each of these was on ``status``'s path (61 modules then) though a
    status sends one ``tasks/get`` and reads one Task: each now loads where it is used."""
    names = loaded(STATUS)
    assert not any(n == absent or n.startswith(absent + ".") for n in names), absent


@pytest.mark.parametrize(
    "name",
    ["mcp_tasks_client._client._Link", "mcp_tasks_client.cli._options.CallArgs",
     "mcp_tasks_client._io._http_sse.ListenOpening", "mcp_tasks_client._io._http_sse.StreamState",
     "mcp_tasks_client.cli._output.TaskView", "mcp_tasks_client.cli._interrupt.Interrupted",
     "mcp_tasks_client.cli._next_steps.NextSteps", "mcp_tasks_client._codec._converter.Family"],
)  # fmt: skip
def test_a_status_builds_no_attrs_class_for_a_value_it_never_compares(name: str) -> None:
    """The handshake's link, the SSE stream's state, the live line's view, the run's interrupt
    flag and hints and the converter's families are plain classes (never compared nor
    printed: an attrs class compiles its generated methods at import, about 0.5 ms each);
    ``call``'s arguments live with the ``call`` command."""
    assert name not in attrs_classes(STATUS)


def test_the_terminal_display_imports_no_other_commands_parts() -> None:
    """On a terminal ``status`` shows its answer with rich: the display module itself loads
    neither the Poller, the journal, resume nor input routing (each command that needs one
    imports it), nor rich's live line (only a followed task shows one)."""
    names = loaded("import mcp_tasks_client.cli._tty")
    for absent in NOT_FOR_STATUS:
        assert not any(n == absent or n.startswith(absent + ".") for n in names), absent


def type_checking_imports(path: str | None) -> dict[str, str]:
    """Each name a lazy package imports under ``TYPE_CHECKING``, with the module (relative)
    it imports it from: what a type checker sees, to hold against what runs (``_HOMES``)."""
    import ast

    assert path is not None
    checked: dict[str, str] = {}
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                for alias in stmt.names:
                    checked[alias.name] = "." * stmt.level + (stmt.module or "")
    return checked


def test_every_top_level_name_has_one_home_and_is_the_same_object() -> None:
    """The lazy ``__init__`` keeps two lists, what a type checker sees (the imports under
    ``TYPE_CHECKING``) and what runs (``_HOMES``): they must agree with each other and with
    ``__all__``, and every name must be the object its module defines."""
    import importlib

    import mcp_tasks_client

    checked = type_checking_imports(mcp_tasks_client.__file__)
    homes = mcp_tasks_client._HOMES
    assert checked == homes
    assert set(homes) == set(mcp_tasks_client.__all__) - {"__version__"}
    for name, home in homes.items():
        module = importlib.import_module(home, "mcp_tasks_client")
        assert getattr(mcp_tasks_client, name) is getattr(module, name), name
    assert callable(mcp_tasks_client.resume)  # the function, though a submodule shares its name
    submodule = importlib.import_module("mcp_tasks_client.resume")
    assert submodule.resume is mcp_tasks_client.resume  # its import did not replace it
    assert set(mcp_tasks_client.__all__) <= set(dir(mcp_tasks_client))


def test_a_public_submodule_is_an_attribute_after_a_bare_import() -> None:
    """``import mcp_tasks_client`` then ``mcp_tasks_client.observability.tracer()`` worked when
    the package imported its modules eagerly (a side effect a program may rely on): every
    public submodule is still reached so, imported on first use."""
    package = Path(__file__).resolve().parent.parent / "mcp_tasks_client"
    public = sorted(
        p.stem if p.is_file() else p.name
        for p in package.iterdir()
        if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").exists())
    )
    assert {"models", "errors", "observability", "engine", "resume", "wire"} <= set(public)
    code = (
        "import types, mcp_tasks_client\n"
        f"for name in {public!r}:\n"
        "    value = getattr(mcp_tasks_client, name)\n"
        "    assert isinstance(value, types.ModuleType) or name == 'resume', name\n"
        "print('ok')\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.stdout.strip() == "ok", ran.stderr


@pytest.mark.parametrize("command", ["status", "cancel", "tools", "list"])
def test_a_quick_command_runs_on_asyncio_and_never_imports_trio(command: str) -> None:
    """Issue 34, item 4: the commands that send a request or two and end run on asyncio,
    whose loop comes with the interpreter: importing trio was about a seventh of ``mcp-tasks
    status``'s start-up (measured: benchmarks/RESULTS.md)."""
    from mcp_tasks_client.cli import QUICK_COMMANDS

    assert command in QUICK_COMMANDS
    words = ["--url", "http://127.0.0.1:9/mcp", command] + (["t-1"] if command in TASK else [])
    names = loaded(_quietly(words))
    assert "anyio._backends._asyncio" in names
    assert not any(n == "trio" or n.startswith("trio.") for n in names)


def test_a_command_that_follows_a_task_stays_on_trio() -> None:
    """``wait`` (and ``call``, ``result``, ``resume``...) still run on trio, the reference
    backend: only the quick commands moved."""
    from mcp_tasks_client.cli import QUICK_COMMANDS

    assert "wait" not in QUICK_COMMANDS
    names = loaded(_quietly(["--url", "http://127.0.0.1:9/mcp", "wait", "t-1"]))
    assert "anyio._backends._trio" in names
    assert "anyio._backends._asyncio" not in names


TASK = {"status", "cancel"}


def _quietly(words: list[str]) -> str:
    """Code running ``mcp-tasks WORDS`` in the process, its output swallowed."""
    return (
        "import contextlib, io\n"
        "from mcp_tasks_client.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        f"    main({words!r})\n"
    )


def test_a_run_that_no_provider_can_reach_imports_no_opentelemetry() -> None:
    """opentelemetry-api is installed here (the suite's venv has the otel extra), so before
    this change ``status`` imported it to make spans that went to the API's no-op tracer.
    Nothing imported it before the run and no environment variable names a provider: the
    run's Client has spans off (the same on the wire: a no-op span puts no trace context in
    ``_meta``), and opentelemetry is never imported."""
    pytest.importorskip("opentelemetry.trace")
    names = loaded(STATUS)
    assert not any(n.startswith("opentelemetry") for n in names)


def test_a_provider_named_by_the_environment_still_gets_the_runs_spans() -> None:
    """``OTEL_PYTHON_TRACER_PROVIDER`` makes the API load a provider itself: the run keeps
    the process default (spans on), and the SDK's provider is loaded."""
    pytest.importorskip("opentelemetry.sdk.trace")
    code = "import os\nos.environ['OTEL_PYTHON_TRACER_PROVIDER'] = 'sdk_tracer_provider'\n" + STATUS
    names = loaded(code)
    assert "opentelemetry.sdk.trace" in names


def test_a_host_that_configured_opentelemetry_still_gets_the_runs_spans() -> None:
    """A program that set a tracer provider before calling ``main`` (or
    ``opentelemetry-instrument`` before the command line) gets the run's request spans, as
    before: the refused ``initialize`` is a span with its error."""
    pytest.importorskip("opentelemetry.sdk.trace")
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import (\n"
        "    InMemorySpanExporter)\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n" + STATUS + "import json\n"
        "print(json.dumps([[s.name, s.status.status_code.name] "
        "for s in exporter.get_finished_spans()]))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    spans = json.loads(ran.stdout.splitlines()[-1])
    assert ["initialize", "ERROR"] in spans, spans


def test_the_command_freezes_the_heap_only_as_its_process_exits() -> None:
    """The ``mcp-tasks`` script moves every object out of the collector's reach once the run
    has ended (``gc.freeze``: the collections at exit were about 15% of ``status``'s CPU), and
    the ``atexit`` handlers still run after it; ``mcp_tasks_client.cli.main``, which a program
    may call and then go on, freezes nothing."""
    quiet = "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
    code = (
        "import atexit, contextlib, gc, io, sys\n"
        "err = io.StringIO()\n"
        "atexit.register(lambda: print('atexit', gc.get_freeze_count() > 0, file=sys.stderr))\n"
        "from mcp_tasks_client.cli import main\n"
        f"{quiet}    main(['--url', 'http://127.0.0.1:9/mcp', 'status', 't-1'])\n"
        "print('in a program', gc.get_freeze_count())\n"
        "sys.argv = ['mcp-tasks', '--url', 'http://127.0.0.1:9/mcp', 'status', 't-1']\n"
        "import mcp_tasks_cli\n"
        f"{quiet}    exit_code = mcp_tasks_cli.main()\n"
        "print('script', exit_code, gc.get_freeze_count() > 0)\n"
    )
    ran = in_the_tree(code)
    assert ran.stdout.splitlines()[-2:] == ["in a program 0", "script 6 True"], ran.stdout
    assert ran.stderr.splitlines()[-1] == "atexit True", ran.stderr


URL = ["--url", "http://127.0.0.1:9/mcp"]


@pytest.mark.parametrize(
    ("words", "after"),
    [
        # A quick command: the collector off from the script's start to its end.
        ([*URL, "status", "t-1"], "collections 0 enabled False frozen False"),
        # A command that follows a task: off while it imports, then the imported heap
        # frozen and the collector on for the run.
        ([*URL, "wait", "t-1"], "enabled True frozen True"),
        # The monitor, a web server (here ended at once: no journal where it is told).
        (["monitor", "--journal", "/no/such/dir/tasks.db"], "enabled True frozen True"),
    ],
)
def test_the_script_collects_no_garbage_while_it_imports(words: list[str], after: str) -> None:
    """Issue 34, item 4: the ``mcp-tasks`` script turns the garbage collector off before its
    first import. Its imports triggered 66 collections in a ``status`` (about 8 ms of its
    start-up, measured: benchmarks/RESULTS.md), every one walking modules, classes and
    functions that all stay alive. Counted by ``gc.callbacks`` up to the process's
    ``atexit`` (before ``leaving()`` froze the heap, so the freeze seen is the run's own)."""
    code = (
        "import atexit, contextlib, gc, io, sys\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: seen.append(phase == 'start'))\n"
        "import mcp_tasks_cli\n"
        "def report():\n"
        "    ran = sum(seen[:mark])\n"
        "    print('collections', ran, 'enabled', gc.isenabled(), 'frozen', frozen[0],\n"
        "          file=sys.__stderr__)\n"
        "frozen = [False]\n"
        "mark = 0\n"
        "original = mcp_tasks_cli.leaving\n"
        "def leaving():\n"
        "    global mark\n"
        "    mark = len(seen)\n"
        "    frozen[0] = gc.get_freeze_count() > 0\n"
        "    report()\n"
        "    original()\n"
        "mcp_tasks_cli.leaving = leaving\n"
        f"sys.argv = ['mcp-tasks', *{words!r}]\n"
        "quiet = contextlib.redirect_stderr(io.StringIO())\n"
        "with contextlib.redirect_stdout(io.StringIO()), quiet:\n"
        "    mcp_tasks_cli.main()\n"
    )
    ran = in_the_tree(code)
    assert ran.stderr.splitlines()[-1].endswith(after), ran.stderr


def test_a_program_calling_main_keeps_its_own_collector() -> None:
    """``mcp_tasks_client.cli.main``, which a program may call and then go on, leaves the
    collector as it found it: on (and nothing frozen), or off."""
    code = (
        "import contextlib, gc, io\n"
        "from mcp_tasks_client.cli import main\n"
        "quiet = lambda: contextlib.redirect_stderr(io.StringIO())\n"
        "for command in ('status', 'wait'):\n"
        "    for state in (True, False):\n"
        "        (gc.enable if state else gc.disable)()\n"
        "        with contextlib.redirect_stdout(io.StringIO()), quiet():\n"
        "            main(['--url', 'http://127.0.0.1:9/mcp', command, 't-1'])\n"
        "        print(command, state, gc.isenabled(), gc.get_freeze_count())\n"
    )
    ran = in_the_tree(code)
    assert ran.stdout.splitlines()[-4:] == [
        "status True True 0",
        "status False False 0",
        "wait True True 0",
        "wait False False 0",
    ], ran.stdout


def test_the_models_package_imports_each_module_on_first_use() -> None:
    """Issue 34: ``from mcp_tasks_client.models import Task`` builds the task models (and the
    JSON-RPC ones they name), not the tool, content, input-request, prompt nor resource
    classes: each ``models`` name's module is imported when the name is first used."""
    names = loaded("from mcp_tasks_client.models import Task")
    assert {n for n in names if n.startswith("mcp_tasks_client.models")} == {
        "mcp_tasks_client.models",
        "mcp_tasks_client.models._base",
        "mcp_tasks_client.models.tasks",
        "mcp_tasks_client.models.jsonrpc",
    }


def test_every_model_name_has_one_home_and_is_the_same_object() -> None:
    """The lazy ``models`` package keeps two lists, what a type checker sees (the imports
    under ``TYPE_CHECKING``) and what runs (``_HOMES``): they agree with each other and with
    ``__all__``, and every name is the object its module defines."""
    import importlib

    from mcp_tasks_client import models

    checked = type_checking_imports(models.__file__)
    assert checked == models._HOMES
    eager = {"MAX_DURATION_MS", "UNSET", "CacheScope", "JSONObject", "JSONValue", "Unset"}
    assert set(models._HOMES) == set(models.__all__) - eager
    for name, home in models._HOMES.items():
        module = importlib.import_module(home, "mcp_tasks_client.models")
        assert getattr(models, name) is getattr(module, name), name
    assert set(models.__all__) <= set(dir(models))
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        getattr(models, "Nothing")  # noqa: B009 - the lookup is the test


DEFERRED_MODELS = [
    "mcp_tasks_client.models.tools", "mcp_tasks_client.models.content",
    "mcp_tasks_client.models.client_requests", "mcp_tasks_client.models.catalog",
]  # fmt: skip


def test_a_generation_is_loaded_when_first_asked_for_and_its_codec_defers_models() -> None:
    """Issue 34: a driver of one generation loads neither the other generation nor the models
    it has not met; its codec's hooks for those models (content blocks by ``type``,
    elicitation params by ``mode``, the caching hints of the lists) are installed when the
    converter first meets one of their classes, and then read exactly as before (A-09, C-49,
    SEP-2549: 2025-11-25 leaves the hints in ``extra``, 2026-07-28 reads them leniently)."""
    code = (
        "import sys\n"
        "from mcp_tasks_client import Generation\n"
        "from mcp_tasks_client._drivers import driver_for\n"
        "old = driver_for(Generation.V2025_11_25)\n"
        f"print(sorted(n for n in {DEFERRED_MODELS!r} if n in sys.modules))\n"
        "print('v2026' in str(sorted(sys.modules)))\n"
        "from mcp_tasks_client import models\n"
        "result = old.converter.decode({'content': [{'type': 'text', 'text': 'hi'},\n"
        "    {'type': 'image', 'data': 'AA==', 'mimeType': 'image/png'}, {'type': 'x-new'}]},\n"
        "    models.CallToolResult)\n"
        "print([type(block).__name__ for block in result.content])\n"
        "print(old.converter.encode(result)['content'][2])\n"
        "asked = old.converter.decode({'mode': 'url', 'message': 'm', 'url': 'https://x',\n"
        "    'elicitationId': 'e'}, models.ElicitRequestParams)\n"
        "print(type(asked).__name__)\n"
        "page = old.converter.decode({'prompts': [], 'ttlMs': 5}, models.ListPromptsResult)\n"
        "print(page.ttl_ms, dict(page.extra))\n"
        "new = driver_for(Generation.V2026_07_28)\n"
        "tool = new.converter.decode({'name': 't', 'inputSchema': {}}, models.Tool)\n"
        "print(tool.task_support_listed)\n"
        "tools = new.converter.decode({'tools': [], 'ttlMs': 'soon'}, models.ListToolsResult)\n"
        "print(tools.ttl_ms, tools.cache_scope.value)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.splitlines() == [
        "[]",  # no tool, content, input-request nor catalog model built yet
        "False",  # nor the other generation
        "['TextContent', 'ImageContent', 'UnknownContent']",
        "{'type': 'x-new'}",
        "ElicitRequestURLParams",
        "None {'ttlMs': 5}",
        "False",
        "0 private",
    ], ran.stdout


SSE_READER = {"mcp_tasks_client._io._sse", "mcp_tasks_client._io._sse_httpx"}
"""What a server answering ``text/event-stream`` adds (with httpx-sse's decoder, hence httpx)."""


@pytest.mark.parametrize(
    ("peer", "generation", "sse"),
    [
        ("mcp1", "2025-11-25", True),  # answers every POST as an event stream
        ("fastmcp4", "2026-07-28", False),  # answers JSON
    ],
)
def test_a_status_a_live_server_answers_loads_what_the_refused_one_does(
    peer: str, generation: str, sse: bool, request: pytest.FixtureRequest
) -> None:
    """The start-up benchmark times ``status`` against a refused port (the server's answer
    excluded). Loading per use must not move work out of what it times: a status a real server
    answers (the handshake read, then the answer decoded and printed) loads the modules the
    refused one does, on either generation, and the SSE reader when the server answers in
    events (mcp 1.30 does; fastmcp 4.1.4 and the benchmark's server answer JSON). fastmcp is
    stateless, so its status reads a task another process started; mcp 1.30 binds a task to
    its session, so its status is of an id it does not know (TaskNotFound, its error read)."""
    url: str = request.getfixturevalue(f"{peer}_http_url")
    words = ["--url", url, "--generation", generation]
    task_id, expected = "no-such-task", int(ExitCode.LOST)
    if not sse:
        started = subprocess.run(
            [sys.executable, "-m", "mcp_tasks_client.cli", *words, "call", "slow_compute",
             "--task", "--args", '{"seconds": 1}'],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        task_id, expected = json.loads(started.stdout.splitlines()[-1])["task_id"], 0
    code = _quietly([*words, "status", task_id]).replace("    main(", "    code = main(")
    live = set(loaded(code + f"assert code == {expected}, (code, err.getvalue())\n"))
    refused = ["--url", "http://127.0.0.1:9/mcp", "--generation", generation, "status", "t-1"]
    more = live - set(loaded(_quietly(refused)))
    assert {n for n in more if n.startswith("mcp_tasks_client")} == (SSE_READER if sse else set())
    assert third_party(sorted(more)) <= ({"httpx", "httpx_sse", "h11", "idna"} if sse else set())
    assert not any(n == "cattrs" or n.startswith("mcp_tasks_client.models.tools") for n in live)


def on_a_terminal(code: str, tmp_path: Path) -> tuple[list[str], str]:
    """Run ``code`` with its stdout and stderr on a pseudo-terminal (as ``mcp-tasks`` typed at
    a shell has them): the modules it loads beyond a bare interpreter's, and what the terminal
    showed. The child writes its module list to a file; the terminal is read to its end."""
    listed = tmp_path / "modules.json"
    script = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        f"{code}\n"
        "with open(sys.argv[1], 'w', encoding='utf-8') as f:\n"
        "    f.write(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    controller, terminal = os.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", script, str(listed)],
            stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
        )  # fmt: skip
    finally:
        os.close(terminal)
    shown = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal's last end
                break
            if not data:
                break
            shown += data
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
        child.wait(timeout=60)
    text = shown.decode("utf-8", errors="replace")
    assert child.returncode == 0, text
    names: list[str] = json.loads(listed.read_text(encoding="utf-8"))
    return names, text


REFUSED_STATUS = ["--url", "http://127.0.0.1:9/mcp", "status", "t-1"]
TERMINAL_STATUS = f"assert main({REFUSED_STATUS!r}) == {int(ExitCode.CONNECTION)}\n"
"""``STATUS`` with nothing redirected: the refused connection's exit code (CONNECTION)."""

ON_A_TERMINAL_NEVER = [
    # the display's parts a status does not show: tables (listings; they bring fractions and
    # decimal), rich's JSON view (a result's blocks), the live line (a followed task)
    "rich.table", "rich.json", "rich.live", "rich.spinner", "rich.progress_bar", "fractions",
    "decimal",
]  # fmt: skip


def test_a_status_on_a_terminal_loads_what_the_captured_one_does_and_the_display(
    tmp_path: Path,
) -> None:
    """Issue 34: on a terminal ``status`` shows its answer with rich (``_tty``), which loaded
    the tool, content and outcome classes, rich's tables and its JSON view up front (the
    benchmark's captured run never took that path). Now it loads what the captured run does,
    plus the display module and rich's console and text: a refused connection's error line
    is all it shows."""
    code = "from mcp_tasks_client.cli import main\n" + TERMINAL_STATUS
    names, shown = on_a_terminal(code, tmp_path)
    assert "error: TransportError" in shown, shown
    more = set(names) - set(loaded(STATUS))
    assert {n for n in more if n.startswith("mcp_tasks_client")} == {"mcp_tasks_client.cli._tty"}
    assert third_party(sorted(more)) == {"rich"}
    assert "rich.console" in more
    for absent in NOT_FOR_STATUS + STATUS_NEEDS_NONE_OF + ON_A_TERMINAL_NEVER:
        assert not any(n == absent or n.startswith(absent + ".") for n in names), absent


def test_a_live_status_on_a_terminal_loads_what_the_refused_one_does(
    fastmcp4_http_url: str, tmp_path: Path
) -> None:
    """The task line a status prints on a terminal (a fastmcp 4.1.4 task another process
    started) needs nothing the refused run's error line did not load."""
    words = ["--url", fastmcp4_http_url, "--generation", "2026-07-28"]
    started = subprocess.run(
        [sys.executable, "-m", "mcp_tasks_client.cli", *words, "call", "slow_compute",
         "--task", "--args", '{"seconds": 1}'],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    task_id = json.loads(started.stdout.splitlines()[-1])["task_id"]
    head = "from mcp_tasks_client.cli import main\n"
    live, shown = on_a_terminal(
        head + f"assert main({[*words, 'status', task_id]!r}) == 0\n", tmp_path
    )
    assert task_id in shown, shown
    assert "working" in shown or "completed" in shown, shown
    refused = ["--url", "http://127.0.0.1:9/mcp", "--generation", "2026-07-28", "status", "t-1"]
    before, _ = on_a_terminal(head + f"main({refused!r})\n", tmp_path)
    assert set(live) - set(before) == set()
