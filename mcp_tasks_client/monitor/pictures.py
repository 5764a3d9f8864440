"""The page's two pictures, as inline SVG text (no script, no build step): one task's timeline,
and the counts by status over the last hour.

Pure functions of what the board read; every text that came from a journal is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from .board import Event, TaskRow

__all__ = ["COLOURS", "counts_by_status", "hour_buckets", "timeline"]

COLOURS = {
    "recorded": "#9aa5b1",
    "working": "#2f80ed",
    "input_required": "#f2994a",
    "completed": "#27ae60",
    "failed": "#eb5757",
    "cancelled": "#828282",
    "expired": "#bb6bd9",
    "lost": "#000000",
}
_MARKS: dict[
    str, tuple[int, str | None]
] = {  # the timeline's marks by event kind: (row, shape colour)
    "created": (0, "#4f4f4f"),
    "leased": (1, "#56ccf2"),
    "takeover": (1, "#eb5757"),
    "status": (2, None),
    "input": (3, "#f2994a"),
    "answered": (3, "#27ae60"),
    "outcome": (4, None),
}
_ROWS = ("created", "lease", "status (polls)", "inputs", "outcome")


def timeline(task: TaskRow, events: Sequence[Event], now: float) -> str:
    """One task from its creation to its outcome (or ``now``): a band coloured by status, a
    mark for each event on its row (lease changes and takeovers, status changes, inputs, the
    outcome). A poll shows where it saw a change (a status mark): a poll that saw nothing new
    is not recorded (it would cost each worker a write per poll)."""
    width, left, row_h = 720, 80, 22
    start = min([task.created_at, *(e.at for e in events)])
    end = max([task.ended_at or now, *(e.at for e in events), start + 1e-3])
    span = end - start

    def x(at: float) -> float:
        return left + (width - left - 10) * (at - start) / span

    height = row_h * len(_ROWS) + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
        f'height="{height}" role="img" aria-label="timeline of task {escape(task.task_id)}">'
    ]
    for i, name in enumerate(_ROWS):
        y = 10 + row_h * i
        parts.append(f'<text x="4" y="{y + 14}" font-size="11">{name}</text>')
        parts.append(
            f'<line x1="{left}" y1="{y + 10}" x2="{width - 10}" y2="{y + 10}" stroke="#e0e0e0"/>'
        )
    # The status band: each status from the event that showed it to the next one.
    changes = [(e.at, e.status or "recorded") for e in events if e.kind in ("created", "status")]
    changes += [(e.at, e.status or "lost") for e in events if e.kind == "outcome"]
    changes.sort()
    y = 10 + row_h * 2
    for n, (at, status) in enumerate(changes):
        until = changes[n + 1][0] if n + 1 < len(changes) else end
        colour = COLOURS.get(status, "#bdbdbd")
        parts.append(
            f'<rect x="{x(at):.1f}" y="{y + 3}" width="{max(2.0, x(until) - x(at)):.1f}" '
            f'height="14" fill="{colour}" opacity="0.35"><title>{escape(status)}</title></rect>'
        )
    for event in events:
        row, mark = _MARKS.get(event.kind, (2, "#333"))
        colour = mark or COLOURS.get(event.status or "", "#333")
        label = " ".join(
            escape(str(v)) for v in (event.kind, event.status, event.detail, event.owner) if v
        )
        cy = 10 + row_h * row + 10
        parts.append(
            f'<circle class="mark mark-{escape(event.kind)}" cx="{x(event.at):.1f}" cy="{cy}" '
            f'r="5" fill="{colour}"><title>{label}</title></circle>'
        )
    parts.append(
        f'<text x="{left}" y="{height - 2}" font-size="10">0 s</text>'
        f'<text x="{width - 60}" y="{height - 2}" font-size="10">{span:.1f} s</text></svg>'
    )
    return "".join(parts)


def hour_buckets(recent: Sequence[Event], now: float, *, buckets: int = 12) -> list[dict[str, int]]:
    """For each of ``buckets`` equal slices of the last hour (oldest first): how many tasks
    entered each status in it (created, a status change, an outcome), each task counted once
    per status and slice."""
    size = 3600 / buckets
    seen: list[dict[str, set[tuple[str, str]]]] = [{} for _ in range(buckets)]
    for event in recent:
        n = math.floor((event.at - (now - 3600)) / size)
        if 0 <= n < buckets:
            status = event.status or ("recorded" if event.kind == "created" else "lost")
            seen[n].setdefault(status, set()).add((event.server, event.task_id))
    return [{status: len(tasks) for status, tasks in slot.items()} for slot in seen]


def counts_by_status(recent: Sequence[Event], now: float) -> str:
    """A stacked bar per five minutes of the last hour (see :func:`hour_buckets`)."""
    slots = hour_buckets(recent, now)
    width, height, bar = 480, 120, 480 / len(slots)
    top = max([sum(slot.values()) for slot in slots] + [1])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="counts" width="{width}" '
        f'height="{height + 16}" role="img" aria-label="tasks by status, last hour">'
    ]
    for n, slot in enumerate(slots):
        y = float(height)
        for status in COLOURS:
            count = slot.get(status, 0)
            if not count:
                continue
            h = height * count / top
            y -= h
            parts.append(
                f'<rect x="{n * bar + 1:.1f}" y="{y:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                f'fill="{COLOURS[status]}"><title>{count} {status}</title></rect>'
            )
    parts.append(
        f'<text x="0" y="{height + 14}" font-size="10">60 min ago</text>'
        f'<text x="{width - 30}" y="{height + 14}" font-size="10">now</text></svg>'
    )
    return "".join(parts)
