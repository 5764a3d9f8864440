"""``mcp-tasks monitor`` in a real browser: the distribution's Chromium (``/usr/bin/chromium``,
headless, a fresh profile) driven by Playwright, against the real ``mcp-tasks monitor``
process, real workers (``mcp-tasks resume --workers``) and a real peer server (mcp 1.30).

The default suite runs the smoke test only (a journal written by the library, one live update:
a few seconds); ``nox -s browser`` (``MCP_TASKS_BROWSER=1``) runs the rest, on both journals:
the page lists tasks as workers run them, updates arrive without a reload, the task page shows
the history and timeline, cancel is refused without the flag and the token and works with
them, and the screenshots in docs/images/ are written. A missing browser (or Playwright) fails
under CI=true, and skips elsewhere.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from conftest import _in_ci
from pg import new_schema, postgres_url
from test_cli import CLI, REPO, cli, env
from test_journal_protocol import entry_of

from mcp_tasks_client.cli import ExitCode
from mcp_tasks_client.journal import SQLiteJournal

__all__ = ["postgres_url"]

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IMAGES = REPO / "docs" / "images"
WAIT_MS = 30_000  # the longest a page waits for what it should show (a loaded machine)
full = pytest.mark.skipif(
    os.environ.get("MCP_TASKS_BROWSER") != "1",
    reason="the browser tests beyond the smoke run in `nox -s browser`",
)


def _missing(what: str) -> None:
    if _in_ci():
        pytest.fail(f"{what} (CI=true: .ci/run installs it)", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A Chromium context with a fresh profile (a temporary folder), closed after the module."""
    if not Path(CHROMIUM).exists():
        _missing(f"{CHROMIUM} is missing: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is missing: pip install playwright (never `playwright install`)")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS
        )
        context.set_default_timeout(WAIT_MS)
        try:
            yield context
        finally:
            context.close()


class Monitor:
    """A ``mcp-tasks monitor`` process (stopped by its pid): its URL and cancel token."""

    def __init__(self, journal: str, *options: str) -> None:
        self.process = subprocess.Popen(
            [*CLI, "monitor", "--journal", journal, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
            cwd=REPO,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        match = re.fullmatch(r"monitor: (http://127\.0\.0\.1:\d+/)(\?token=\S+)\n", first)
        if match is None:
            self.stop()
            said = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(f"no URL: {first!r} {said!r}")
        self.url = match.group(1)
        self.entry = self.url + match.group(2)
        """The printed URL, with the run's access token (sets the page's cookie)."""
        self.token: str | None = None
        if "--allow-cancel" in options:
            self.token = self.process.stdout.readline().split(": ", 1)[1].strip()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _entry(task_id: str, order: int) -> Any:
    import attrs

    moment = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=30 - order)
    return attrs.evolve(entry_of(task_id, order=order), created_at=moment)


def _record(path: str, entry: Any) -> None:
    """Record ``entry`` in the journal at ``path`` (in a thread of its own: Playwright's sync
    API keeps an event loop running in this one)."""

    def record() -> None:
        with SQLiteJournal(path) as journal:
            anyio.run(journal.record, entry)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(record).result()


def test_smoke_the_page_lists_a_journals_tasks_and_updates_live(
    browser: Any, tmp_path: Path
) -> None:
    """The suite's browser smoke: Chromium shows the tasks of a journal, and a task recorded
    while the page is open appears without a reload."""
    path = str(tmp_path / "j.db")
    _record(path, _entry("first", 0))
    monitor = Monitor(path)
    try:
        page = browser.new_page()
        page.goto(monitor.entry)
        page.wait_for_selector('tr[data-task="first"]')
        page.evaluate("window.sameDocument = true")
        _record(path, _entry("second", 1))
        page.wait_for_selector('tr[data-task="second"]')
        assert page.evaluate("window.sameDocument") is True  # no reload
        assert page.text_content("h1") == "Tasks"
        page.close()
    finally:
        monitor.stop()


# -- the full browser tests (nox -s browser) ------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A journal of the test's own: a file, or a database of its own on the session's
    PostgreSQL (the CLI's journal is the schema mcp_tasks in it)."""
    if request.param == "sqlite":
        return str(tmp_path / "j.db")
    url: str = request.getfixturevalue("postgres_url")
    name = new_schema()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, query = url.split("?", 1)
    return f"{base.rsplit('/', 1)[0]}/{name}?{query}"


def _start(url: str, journal: str, seconds: float, n: int) -> str:
    args = json.dumps({"text": f"job {n}", "seconds": seconds})
    ran = cli("--url", url, "--journal", journal, "call", "slow_echo", "--args", args, "--task")
    assert ran.code == 0, ran.stderr
    task_id: str = ran.of("created")[0]["task_id"]
    return task_id


def _workers(journal: str, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "--journal", journal, "--interval", "0.2", "resume", "--workers", str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=REPO,
    )


def _row_status(page: Any, task_id: str) -> str:
    status: str = page.get_attribute(f'#tasks tr[data-task="{task_id}"]', "data-status")
    return status


@full
def test_the_page_follows_workers_live_and_cancels_only_with_flag_and_token(
    browser: Any, journal: str, mcp1_http_url: str, request: pytest.FixtureRequest
) -> None:
    kind = request.node.callspec.params["journal"]
    quick = [_start(mcp1_http_url, journal, 3.0, n) for n in range(3)]
    slow = _start(mcp1_http_url, journal, 120.0, 9)  # cancelled from the page
    read_only = Monitor(journal)
    writable = Monitor(journal, "--allow-cancel")
    workers = _workers(journal, 2)
    try:
        page = browser.new_page()
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(read_only.entry)
        page.evaluate("window.sameDocument = true")
        for task_id in [*quick, slow]:  # listed as the workers run them
            page.wait_for_selector(f'#tasks tr[data-task="{task_id}"][data-status="working"]')
        page.wait_for_selector("#workers tr[data-worker]")
        # Live: the quick tasks complete while the page stays the same document.
        for task_id in quick:
            page.wait_for_selector(f'#tasks tr[data-task="{task_id}"][data-status="completed"]')
        assert page.evaluate("window.sameDocument") is True
        assert int(page.get_attribute("#live", "data-updates") or "0") >= 1
        # The filters: only the open task.
        page.select_option("#filter-status", "working")
        page.click("form.filters button")
        page.wait_for_selector(f'#tasks tr[data-task="{slow}"]')
        assert page.locator("#tasks tr[data-task]").count() == 1
        page.goto(read_only.url)
        page.wait_for_selector(f'#tasks tr[data-task="{quick[0]}"][data-status="completed"]')
        if kind == "sqlite":
            page.screenshot(path=str(IMAGES / "monitor-board.png"), full_page=True)

        # A task's page: its history and timeline.
        page.click(f'#tasks tr[data-task="{quick[0]}"] a')
        page.wait_for_selector('#history tr[data-kind="outcome"]')
        kinds = page.eval_on_selector_all(
            "#history tr.event", "rows => rows.map(r => r.dataset.kind)"
        )
        assert kinds[0] == "created"
        assert "leased" in kinds
        assert kinds[-1] == "outcome"
        assert page.locator("svg.timeline circle.mark-outcome").count() == 1
        assert page.locator("#cancel").count() == 0  # read-only: no cancel form
        if kind == "sqlite":
            page.screenshot(path=str(IMAGES / "monitor-task.png"), full_page=True)

        # Refused: the read-only monitor (whatever the form says), then no token, a wrong one.
        form = {"server": mcp1_http_url, "id": slow}
        said = page.request.post(read_only.url + "cancel", form={**form, "token": "x"})
        assert said.status == 403
        assert "read-only" in said.text()
        page.goto(writable.entry)  # this page's access cookie: the cancel token is what is judged
        said = page.request.post(writable.url + "cancel", form=form)
        assert said.status == 403
        assert "token" in said.text()
        said = page.request.post(writable.url + "cancel", form={**form, "token": "wrong"})
        assert said.status == 403
        assert "token" in said.text()
        # Without the access token (another user of the machine), not even the page is shown.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(writable.url, timeout=30)
        assert refused.value.code == 403
        page.goto(f"{writable.url}task?server={mcp1_http_url}&id={slow}")
        assert _row_text(page, "status") == "working"

        # With both: the page's own form (its token) cancels through the server, and the
        # worker following the task records the outcome, which the page shows live.
        page.click("#cancel button")
        page.wait_for_selector('#history tr[data-kind="outcome"]')
        assert _row_text(page, "status") == "cancelled"
        assert workers.wait(60) == ExitCode.CANCELLED  # the worst outcome it followed
        out = workers.stdout.read() if workers.stdout else ""
        outcomes = {
            line["task_id"]: line["status"]
            for line in map(json.loads, out.splitlines())
            if line.get("event") == "outcome"
        }
        assert outcomes == {**dict.fromkeys(quick, "completed"), slow: "cancelled"}
        page.close()
    finally:
        for process in (read_only, writable):
            process.stop()
        if workers.poll() is None:
            workers.terminate()
            workers.wait(10)


def _row_text(page: Any, name: str) -> str:
    text: str = page.inner_text(f'#facts tr:has(th:text-is("{name}")) td').strip()
    return text


def test_screenshots_are_kept_in_the_docs() -> None:
    """The screenshots docs/monitor.md shows are files the browser tests wrote."""
    for name in ("monitor-board.png", "monitor-task.png"):
        assert (IMAGES / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
