"""Check that the built documentation site works from disk: every link is to a file.

    python tools/check_site_links.py site      # what `nox -s docs` runs after the build

Opened as ``file://.../site/index.html``, a link to a folder (``tasks/``) shows a folder
listing, not the page: mkdocs.yml sets ``use_directory_urls: false`` so that pages link to
``tasks.html``. This walks every HTML file of the site and checks each relative ``href`` and
``src`` (its query and fragment taken off) names an existing file inside the site, and each
fragment of a link to a page of the site names an ``id`` on that page. Links with a scheme
(``https:``, ``mailto:``, ``data:``, ...) and pure ``#fragment`` links to the page itself are
checked only for the fragment. ``404.html`` is left out: a web server shows it, with links
from the site's root (``/tasks.html``); from disk there is no 404 to show. Standard library
only. Exits 1 with one line per broken link.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    """The links and the ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)
            elif (name == "href" and tag in {"a", "link", "area"}) or (
                name == "src" and tag in {"img", "script", "iframe", "source"}
            ):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    page.close()
    return page


def broken_links(site: Path) -> Iterator[str]:
    """One line per link of ``site``'s pages that does not resolve to a file (and id) in it."""
    site = site.resolve()
    pages = {path: _parse(path) for path in sorted(site.rglob("*.html"))}
    for path, page in pages.items():
        if path == site / "404.html":
            continue  # a server's page, linked from the root: never shown from disk
        where = path.relative_to(site)
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue  # another site, or data:/mailto:/javascript:
            if not parts.path:
                target = path
            else:
                target = (path.parent / unquote(parts.path)).resolve()
                if site not in target.parents and target != site:
                    yield f"{where}: {link} leaves the site"
                    continue
                if not target.is_file():
                    what = "a folder (no page from disk)" if target.is_dir() else "missing"
                    yield f"{where}: {link} -> {target.relative_to(site)} is {what}"
                    continue
            fragment = unquote(parts.fragment)
            if fragment and target in pages and fragment not in pages[target].ids:
                yield f"{where}: {link}: no id {fragment!r} on {target.relative_to(site)}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_site_links.py SITE_DIR", file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "index.html").is_file():
        print(f"{site}: no index.html: build the site first (python3 -m nox -s docs)")
        return 1
    broken = list(broken_links(site))
    for line in broken:
        print(line)
    pages = sum(1 for _ in site.rglob("*.html"))
    if broken:
        print(f"{len(broken)} broken links in {pages} pages of {site}", file=sys.stderr)
        return 1
    print(f"{pages} pages of {site}: every link resolves to a file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
