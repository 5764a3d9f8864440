"""The monitor's HTML: the board page and a task's page, as text (no template engine).

Pure functions of what the board read and of the run's settings. Every value that came from a
journal (server URLs, tool names, messages, worker names) is escaped; links carry their
values URL-encoded. The live part of each page is one element (``#live``) that the page's few
lines of script replace with the same URL's ``?part=live`` when the server says the journal
changed (Server-Sent Events on ``/changes``), so a page without script still works (reload).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import quote, urlencode

import attrs

from .board import Board, Event, TaskRow
from .pictures import COLOURS, counts_by_status, timeline

__all__ = ["FILTERS", "PageSettings", "board_page", "filtered", "task_page"]

FILTERS = ("server", "tool", "status", "worker")
"""The board's filters (query parameters), each an exact match."""


@attrs.frozen
class PageSettings:
    """What a page needs of the run: the journal's display name, the trace URL template (with
    ``{trace_id}``), and the cancel token when cancelling is allowed (None: read-only)."""

    journal: str
    trace_url: str | None = None
    cancel_token: str | None = None


_STYLE = """
body{font:14px system-ui,sans-serif;margin:1em 2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f5f7}.mono{font-family:ui-monospace,monospace;font-size:12px}
.status{padding:1px 6px;border-radius:8px;color:#fff;font-size:12px}
.ro{color:#555}.warn{color:#b00}form.filters{margin:.5em 0}
"""
_SCRIPT = """
<script>
(function () {
  if (!window.EventSource) return;
  var live = document.getElementById('live');
  var source = new EventSource('/changes');
  source.onmessage = function () {
    var url = new URL(window.location.href);
    url.searchParams.set('part', 'live');
    fetch(url).then(function (r) { return r.text(); }).then(function (html) {
      live.innerHTML = html;
      live.dataset.updates = String(Number(live.dataset.updates || '0') + 1);
    });
  };
})();
</script>
"""


def _page(title: str, settings: PageSettings, body: str) -> str:
    mode = (
        '<span class="warn">cancel enabled</span>'
        if settings.cancel_token is not None
        else '<span class="ro">read-only</span>'
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>journal <b>{escape(settings.journal)}</b> · {mode} · "
        f'<a href="/">all tasks</a></p>{body}{_SCRIPT}</body></html>'
    )


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _when(at: float | None) -> str:
    if at is None:
        return ""
    return dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def _status(status: str) -> str:
    colour = COLOURS.get(status, "#bdbdbd")
    return f'<span class="status" style="background:{colour}">{escape(status)}</span>'


def _task_link(server: str, task_id: str) -> str:
    query = urlencode({"server": server, "id": task_id})
    return f'<a class="mono" href="/task?{query}">{escape(task_id)}</a>'


def _trace(task: TaskRow, settings: PageSettings) -> str:
    trace_id = task.trace_id
    if trace_id is None:
        return ""
    if settings.trace_url is None:
        return f'<span class="mono">{trace_id}</span>'
    href = settings.trace_url.replace("{trace_id}", quote(trace_id))
    return f'<a class="mono" href="{escape(href)}">{trace_id}</a>'


def _lease(task: TaskRow, now: float) -> str:
    if task.owner is None or task.lease_until is None:
        return ""
    left = task.lease_until - now
    state = f"{left:.0f} s left" if left >= 0 else f"ran out {-left:.0f} s ago"
    return f"{escape(task.owner)} <small>({state}, token {task.lease_token})</small>"


def filtered(board: Board, chosen: Mapping[str, str]) -> list[TaskRow]:
    """The board's tasks that match every filter chosen (an empty value: any)."""
    fields = {"server": "server", "tool": "tool", "status": "status", "worker": "owner"}
    return [
        task
        for task in board.tasks
        if all(
            not chosen.get(name) or getattr(task, field) == chosen[name]
            for name, field in fields.items()
        )
    ]


def _filters(board: Board, chosen: Mapping[str, str]) -> str:
    values = {
        "server": sorted({t.server for t in board.tasks}),
        "tool": sorted({t.tool for t in board.tasks}),
        "status": sorted({t.status for t in board.tasks}),
        "worker": sorted(
            {w.owner for w in board.workers} | {t.owner for t in board.tasks if t.owner}
        ),
    }
    selects = []
    for name in FILTERS:
        options = [f'<option value="">any {name}</option>']
        for value in values[name]:
            mark = " selected" if chosen.get(name) == value else ""
            options.append(f'<option value="{escape(value)}"{mark}>{escape(value)}</option>')
        selects.append(f'<select name="{name}" id="filter-{name}">{"".join(options)}</select>')
    return (
        f'<form class="filters" method="get" action="/">{" ".join(selects)} '
        '<button type="submit">filter</button> <a href="/">clear</a></form>'
    )


def _tasks_table(tasks: Sequence[TaskRow], board: Board, settings: PageSettings, ident: str) -> str:
    if not tasks:
        return f'<p id="{ident}">none</p>'
    rows = []
    for t in tasks:
        progress = f"{t.changes} changes" + (
            f", last {_age(board.now - t.changed_at)} ago" if t.changed_at else ""
        )
        rows.append(
            f'<tr data-task="{escape(t.task_id)}" data-status="{escape(t.status)}">'
            f"<td>{_task_link(t.server, t.task_id)}</td><td>{escape(t.server)}</td>"
            f"<td>{escape(t.tool)}</td>"
            f"<td>{_status(t.status)}</td><td>{escape(t.message or '')}</td><td>{progress}</td>"
            f"<td>{_age(board.now - t.created_at)}</td><td>{_lease(t, board.now)}</td>"
            f"<td>{_trace(t, settings)}</td></tr>"
        )
    return (
        f'<table id="{ident}"><tr><th>task</th><th>server</th><th>tool</th><th>status</th>'
        "<th>message</th><th>progress</th><th>age</th><th>worker and lease</th><th>trace</th>"
        f"</tr>{''.join(rows)}</table>"
    )


def board_live(board: Board, chosen: Mapping[str, str], settings: PageSettings) -> str:
    """The part of the board page that live updates replace."""
    tasks = filtered(board, chosen)
    counts: dict[str, int] = {}
    for task in board.tasks:
        counts[task.status] = counts.get(task.status, 0) + 1
    summary = " ".join(f"{_status(s)} {n}" for s, n in sorted(counts.items()))
    workers = "".join(
        f'<tr data-worker="{escape(w.owner)}"><td>{escape(w.owner)}</td>'
        f"<td>{_age(board.now - w.seen_at)} ago</td><td>{w.lease:g} s</td>"
        f"<td>{len(w.held)}: "
        + " ".join(f'<span class="mono">{escape(t)}</span>' for t in w.held)
        + "</td></tr>"
        for w in board.workers
    )
    inputs = "".join(
        f"<tr><td>{_task_link(i.server, i.task_id)}</td><td>{escape(i.server)}</td>"
        f'<td class="mono">{escape(i.key)}</td><td>{escape(i.method)}</td>'
        f"<td>{escape(i.queued_by or '')}</td><td>{_age(board.now - i.at)} ago</td></tr>"
        for i in board.inputs
    )
    asking = [t for t in board.tasks if t.is_open and t.status == "input_required"]
    bad = [t for t in board.tasks if t.status in ("failed", "expired", "lost")]
    return (
        f'<p id="summary" data-tasks="{len(board.tasks)}">{summary or "no tasks yet"}</p>'
        f"<h2>Counts by status, last hour</h2>{counts_by_status(board.recent, board.now)}"
        f"<h2>Tasks ({len(tasks)} shown)</h2>{_tasks_table(tasks, board, settings, 'tasks')}"
        f'<h2>Workers</h2><table id="workers"><tr><th>worker</th><th>last heartbeat</th>'
        f"<th>lease</th><th>tasks held</th></tr>{workers}</table>"
        f"<h2>Inputs waiting</h2><p>Tasks asking for input now: {len(asking)}.</p>"
        '<table id="inputs"><tr><th>task</th><th>server</th><th>key</th><th>method</th>'
        f"<th>queued by</th><th>waiting</th></tr>{inputs}</table>"
        f"<h2>Failures, expiries and Lost outcomes</h2>"
        f"{_tasks_table(bad, board, settings, 'failures')}"
    )


def board_page(board: Board, chosen: Mapping[str, str], settings: PageSettings) -> str:
    body = f'{_filters(board, chosen)}<div id="live">{board_live(board, chosen, settings)}</div>'
    return _page("Tasks", settings, body)


def task_live(task: TaskRow, events: Sequence[Event], now: float, settings: PageSettings) -> str:
    """The part of a task's page that live updates replace."""
    history = "".join(
        f'<tr class="event" data-kind="{escape(e.kind)}"><td>{_when(e.at)}</td>'
        f"<td>{escape(e.kind)}</td><td>{_status(e.status) if e.status else ''}</td>"
        f"<td>{escape(e.detail or '')}</td><td>{escape(e.owner or '')}</td></tr>"
        for e in events
    )
    cancel = ""
    if settings.cancel_token is not None and task.is_open:
        cancel = (
            '<form method="post" action="/cancel" id="cancel">'
            f'<input type="hidden" name="token" value="{escape(settings.cancel_token)}">'
            f'<input type="hidden" name="server" value="{escape(task.server)}">'
            f'<input type="hidden" name="id" value="{escape(task.task_id)}">'
            '<button type="submit">Cancel this task</button></form>'
        )
    facts = [
        ("status", _status(task.status)),
        ("message", escape(task.message or "")),
        ("server", escape(task.server)),
        ("tool", escape(task.tool)),
        ("generation", escape(task.generation)),
        ("created", f"{_when(task.created_at)} ({_age(now - task.created_at)} ago)"),
        ("status changes seen", str(task.changes)),
        ("worker and lease", _lease(task, now)),
        ("trace", _trace(task, settings)),
    ]
    rows = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in facts)
    return (
        f'<table id="facts">{rows}</table>{cancel}<h2>Timeline</h2>'
        f"{timeline(task, events, now)}<h2>History</h2>"
        '<table id="history"><tr><th>at (UTC)</th><th>event</th><th>status</th>'
        f"<th>detail</th><th>by</th></tr>{history}</table>"
    )


def task_page(task: TaskRow, events: Sequence[Event], now: float, settings: PageSettings) -> str:
    body = f'<div id="live">{task_live(task, events, now, settings)}</div>'
    return _page(f"Task {task.task_id}", settings, body)
