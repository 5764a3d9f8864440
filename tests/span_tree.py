"""The span tree of a run, drawn: from the spans an in-memory exporter holds, one Mermaid
flowchart (``docs/tracing.md`` shows one made from a real run, and a test keeps it true).

Each span is a node (its name, and its kind when it is not INTERNAL); an edge goes from parent
to child; a span whose parent is in another process (a remote parent: resume) hangs under a
node for that parent. Every poll under one parent is one node, ``tasks/get xN``, at the first
poll's place, so the picture does not depend on how many polls a run made.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

__all__ = ["mermaid"]


def _label(span: ReadableSpan) -> str:
    name = span.name
    attributes = span.attributes or {}
    if name == "mcp_tasks.task":
        outcome = attributes.get("mcp_tasks.outcome")
        if attributes.get("mcp_tasks.resumed"):
            name += " (resumed)"
        if outcome:
            name += f"<br/>outcome: {outcome}"
    if span.kind in (SpanKind.CLIENT, SpanKind.SERVER):
        name += f"<br/><i>{span.kind.name}</i>"
    if span.links:
        name += "<br/>link: server's span"
    return name


def mermaid(spans: Sequence[ReadableSpan]) -> str:
    """A ``flowchart TD`` of ``spans`` (children in start order; polls in a row folded)."""
    ids = {s.context.span_id for s in spans if s.context is not None}
    children: dict[int | None, list[ReadableSpan]] = {}
    remote: dict[int, int] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        if parent is not None and parent not in ids:
            remote.setdefault(parent, len(remote))
        children.setdefault(parent, []).append(span)
    lines = ["flowchart TD"]
    counter = [0]

    def node(label: str) -> str:
        counter[0] += 1
        name = f"n{counter[0]}"
        lines.append(f'    {name}["{label}"]')
        return name

    def walk(parent: int | None, at: str | None) -> None:
        kids = children.get(parent, [])
        polls = [kid for kid in kids if kid.name == "tasks/get"]
        for span in kids:
            if span.name == "tasks/get" and span is not polls[0]:
                continue  # folded into the first
            label = "tasks/get xN<br/><i>CLIENT</i>" if span.name == "tasks/get" else _label(span)
            made = node(label)
            if at is not None:
                lines.append(f"    {at} --> {made}")
            for folded in polls if span.name == "tasks/get" else [span]:
                assert folded.context is not None
                walk(folded.context.span_id, made)

    walk(None, None)
    for parent in remote:
        at = node("the task's span, in the process that started it (remote parent)")
        walk(parent, at)
    return "\n".join(lines)
