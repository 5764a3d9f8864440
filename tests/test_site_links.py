"""The documentation site works from disk (issue 22, item 10): mkdocs.yml makes pages link to
files (``use_directory_urls: false``), and ``tools/check_site_links.py``, which `nox -s docs`
runs after the build, fails a site with a link to a folder, a missing file or a missing id."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHECKER = REPO / "tools" / "check_site_links.py"


def check(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), str(site)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def page(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!doctype html><html><body>{body}</body></html>")


def test_mkdocs_links_pages_as_files_and_nox_checks_the_built_site() -> None:
    config = (REPO / "mkdocs.yml").read_text()
    assert re.search(r"^use_directory_urls: false$", config, re.M)
    noxfile = (REPO / "noxfile.py").read_text()
    docs = noxfile[noxfile.index("def docs(") : noxfile.index("def peers(")]
    assert docs.index('"mkdocs", "build"') < docs.index('"tools/check_site_links.py", "site"')


def test_a_site_whose_links_are_files_and_ids_passes(tmp_path: Path) -> None:
    page(
        tmp_path / "index.html",
        '<a href="tasks.html#polling">t</a><a href="api/client.html">c</a><a href="#top">^</a>'
        '<h1 id="top">x</h1><a href="https://example.org/x/">out</a>'
        '<img src="assets/logo.png"><a href="mailto:a@b">m</a>',
    )
    page(tmp_path / "tasks.html", '<h2 id="polling">p</h2><a href="index.html?q=1">home</a>')
    page(tmp_path / "api" / "client.html", '<a href="../tasks.html">up</a>')
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "logo.png").write_bytes(b"\x89PNG")
    page(tmp_path / "404.html", '<a href="/tasks.html">from the root, for a server</a>')
    run = check(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 pages" in run.stdout  # 404.html counted, its root links not checked


def test_a_folder_link_a_missing_file_a_missing_id_and_an_escape_fail(tmp_path: Path) -> None:
    page(
        tmp_path / "index.html",
        '<a href="tasks/">folder</a><a href="gone.html">missing</a>'
        '<a href="inputs.html#nowhere">no id</a><a href="../secret.html">out</a>'
        '<script src="assets/gone.js"></script>',
    )
    page(tmp_path / "tasks" / "index.html", "")
    page(tmp_path / "inputs.html", '<h2 id="somewhere">s</h2>')
    run = check(tmp_path)
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert "index.html: tasks/ -> tasks is a folder (no page from disk)" in lines
    assert "index.html: gone.html -> gone.html is missing" in lines
    assert "index.html: inputs.html#nowhere: no id 'nowhere' on inputs.html" in lines
    assert "index.html: ../secret.html leaves the site" in lines
    assert "index.html: assets/gone.js -> assets/gone.js is missing" in lines
    assert len(lines) == 5
    assert "5 broken links" in run.stderr


def test_no_site_built_is_said_not_passed(tmp_path: Path) -> None:
    run = check(tmp_path)
    assert run.returncode == 1
    assert "build the site first" in run.stdout
