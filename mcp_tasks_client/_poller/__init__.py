"""The Poller's pieces, one job per module; ``mcp_tasks_client.engine.Poller`` composes them.

Private: nothing here is imported by a user, and nothing here imports ``engine``.

May import: the modules of this package as below, and the library's lower floors; never
``engine``. Modules, lowest floor first. A module imports only those above it in this list
(``parking`` names ``registry.Tracked`` for type checking only), plus the library's lower floors:
``models``, ``outcomes``, ``_exceptions``, ``_sansio``, ``observability``, ``inputs``,
``journal``. None imports the ``Client``: the Poller is given a ``port.PollPort`` (the Client
is one), the one interface to its connection; only ``following`` imports the drivers. Every
per-task decision is the sans-I/O ``_sansio.tracker.Tracker``'s; the pieces here carry out its
actions. ``tests/test_poller_layout.py`` checks these rules.

- ``parking``: the per-loop wakeup primitives a wait parks on (a task's done wakeup, a
  watch's queue, an ``as_completed`` inbox);
- ``port``: ``PollPort``, everything the Poller asks of its connection, in one interface;
- ``registry``: the tracked tasks' waiters' side (who waits and watches, how they are told);
  each task's lifecycle and the memory of tasks that ended are the Tracker's, read there;
- ``observing``: the logs and spans of a task's tracking;
- ``journal_sink``: what the poller writes to a Journal (snapshots, answered keys, outcomes);
- ``relays``: the push (2026-07-28 ``subscriptions/listen``), progress and input-event relays;
- ``scheduling``: ``PollLoop``, which sends the polls the Tracker says are due (at most the
  in-flight bound at once, kept by ``_sansio.pace.Pace``) and hands their answers back to it;
- ``waits``: ``wait``, ``as_completed`` and ``watch``, over a small interface to the poller;
- ``following``: each task followed through its generation's driver (input, the outcome's
  fetch, the seed rule, listen's precondition, all decided by the driver): the only module
  that asks ``client.driver``; 2026-07-28 input keys handed to the InputRouter.
- ``figures``: the Poller's read-only counters and pace figures (its base class), reading the
  pieces above for type checking only.
"""
