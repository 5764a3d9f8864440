"""Every buffer a server can fill is bounded: the limits, in one value the caller sets.

A :class:`Limits` is given to the :class:`~mcp_tasks_client.Client`, which hands it to its
transport when it opens. Printing it shows every default. A server that goes past a limit gets
a typed :class:`~mcp_tasks_client.LimitExceeded` naming the limit and its value (or, for
server->client requests, a JSON-RPC error answer); nothing beyond a limit is buffered.
"""

from __future__ import annotations

import attrs

__all__ = ["Limits"]


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"Limits.{attribute.name} must be a positive integer, got {value!r}")


@attrs.frozen
class Limits:
    """How much a server may make this client hold. Sizes in bytes (ids in characters)."""

    max_message_bytes: int = attrs.field(default=16 * 1024 * 1024, validator=_positive)
    """One JSON-RPC message: an HTTP JSON body, one SSE line or event, one stdio line. Its
    decoded form may take up to ~30 times this in Python objects (a body of tiny ``{}``
    items is the worst case); lower it where that is too much."""
    max_error_body_bytes: int = attrs.field(default=64 * 1024, validator=_positive)
    """What is kept of an HTTP error body (or of a body that is not the protocol's)."""
    max_server_requests: int = attrs.field(default=32, validator=_positive)
    """Server->client requests being handled at once; beyond it each one is answered at once
    with a JSON-RPC error (-32000, "too many concurrent requests"), and no handler runs.
    Held requests (below) are not counted here."""
    max_held_server_requests: int = attrs.field(default=1024, validator=_positive)
    """Server->client requests the server holds open by design, handled at once: the
    blocking ``tasks/result`` a :class:`~mcp_tasks_client.TaskReceiver` answers when its task
    ends. They have their own bound, so held ones never keep the client from answering
    anything else (``tasks/get``, new requests); beyond it each one is answered at once with
    a JSON-RPC error (-32000, "too many held requests"). Each held one costs one waiting task
    (a few KB)."""
    max_warnings: int = attrs.field(default=100, validator=_positive)
    """Warnings kept in ``Client.warnings`` / ``Poller.warnings`` (the oldest are dropped;
    pass ``on_warning=`` to see every one)."""
    max_watch_backlog: int = attrs.field(default=256, validator=_positive)
    """Unread items one ``Poller.watch()`` holds; snapshots are folded into the latest (so
    are progress events), and past this many the oldest item is dropped."""
    max_known_tools: int = attrs.field(default=10_000, validator=_positive)
    """Tools remembered from the caller's ``list_tools`` for the pre-flight checks (the oldest
    are forgotten first; a forgotten tool is simply not checked before sending)."""
    max_known_task_ids: int = attrs.field(default=10_000, validator=_positive)
    """Task ids this client read from its server (created, polled, listed, cancelled),
    remembered so that a call's related task ids (``ToolCall.related_to``) can be checked
    before sending; the oldest are forgotten first (one forgotten is refused like a foreign
    id: name it by its journal entry, or vouch for it with ``from_elsewhere=True``)."""
    max_input_rounds: int = attrs.field(default=16, validator=_positive)
    """MRTR rounds one call answered with ``inputs=`` may take (a server asking forever)."""
    max_inputs_per_round: int = attrs.field(default=256, validator=_positive)
    """Input requests one MRTR round (an ``input_required`` answer to a call made with
    ``inputs=``) may carry; past it the call fails with ``LimitExceeded`` before any handler
    runs and nothing is sent back (a server asking thousands of questions at once)."""
    max_answered_inputs: int = attrs.field(default=10_000, validator=_positive)
    """Answered input requests an InputRouter remembers, to refuse their re-deliveries, for
    questions about tasks no Poller tracks (a request naming no task, or a task nobody
    follows, and those of a task after its tracking ended): the oldest are forgotten first.
    A tracked task's keys are never forgotten (``max_inputs_per_task`` bounds them). The same
    number bounds the ended tasks a Poller remembers (a later wait gets their outcome with no
    poll) and the ``tasks/cancel`` it sent."""
    max_inputs_per_task: int = attrs.field(default=10_000, validator=_positive)
    """Input requests one tracked task may ask over its tracking (2026-07-28 ``inputRequests``
    keys; 2025-11-25 requests naming it): each is remembered until the tracking ends, so none
    is answered twice. Past it the task's wait fails with ``LimitExceeded`` (2026-07-28; none
    of the snapshot's new keys is taken), or the request is answered -32000 (2025-11-25)."""
    max_request_id_chars: int = attrs.field(default=1024, validator=_positive)
    """Characters in the string id of a server->client request (every id is remembered while
    the request is unanswered, and an InputRouter keeps answered ones). A longer one is
    answered at once with JSON-RPC -32600 Invalid Request and ``"id": null`` (JSON-RPC 2.0,
    section 5: the id could not be taken), with a ``LimitExceeded`` warning; no handler runs."""
    max_progress_tokens: int = attrs.field(default=10_000, validator=_positive)
    """Progress tokens the client keeps (C-46: a task's token is valid until the task is
    terminal): those of requests in flight and of tasks, live or ended. Past it the one that
    ended first is forgotten, else the oldest (its later progress is then tied only by the
    related-task ``_meta``, or counted as unknown)."""
