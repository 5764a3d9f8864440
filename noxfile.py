"""Developer and CI sessions. `python3 -m nox` runs lint, typecheck and tests (what CI runs).

Every session installs what it needs itself, peers included: nothing installed by hand counts.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
TEST_DEPS = ["pytest>=8", "pytest-timeout>=2.3", "hypothesis>=6.100"]
LINT_DEPS = ["ruff==0.17.6"]
TYPE_DEPS = ["mypy==2.4.1"]


def _install_peers(session: nox.Session) -> None:
    # The installer is standard-library only and idempotent (a warm run takes < 1 s).
    session.run("python", "tests/peers/install.py")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole suite, real peers included, on trio and asyncio."""
    session.install("-e", ".", *TEST_DEPS)
    _install_peers(session)
    session.run("pytest", *(session.posargs or ["-q"]))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install(*LINT_DEPS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library, the tests and the examples (config: pyproject.toml)."""
    session.install("-e", ".", *TEST_DEPS, *TYPE_DEPS)
    session.run("mypy")


@nox.session(python=PYTHON)
def peers(session: nox.Session) -> None:
    """Install the pinned peer servers into .peers/ (git-ignored)."""
    _install_peers(session)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Start a real local task-capable MCP server and drive it with the client."""
    session.install("-e", ".")
    _install_peers(session)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Client CPU per tasks/get and memory per tracked task (results: benchmarks/RESULTS.md)."""
    session.install("-e", ".")
    _install_peers(session)
    session.run("python", "benchmarks/bench_polling.py", *session.posargs)
