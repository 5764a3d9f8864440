"""The sans-I/O core: protocol bookkeeping driven by events and a clock, with no sockets and no
sleeping (in the manner of h11), tested with hypothesis and simulated time.

Job, one module each: ``connection.py`` JSON-RPC correlation (ids, pending requests, late and
duplicate answers); ``task_machine.py`` the task status machine as a transition table;
``scheduler.py`` poll deadlines on a heap (``PollPolicy``); ``progress.py`` progress tokens and
status messages; ``answer_book.py`` which input keys were taken and answered, by task;
``receiver_book.py`` the tasks this client runs for a server; ``classify.py`` how a terminal
task's outcome is read; ``tracker.py`` every per-task decision of a Poller (events in, actions
out), built on the task machine and the scheduler; ``pace.py`` whether a poll loop keeps pace
(lateness, round trips) and the in-flight bound that may follow latency.

May import: ``models``, ``outcomes``, ``_exceptions`` (and each other). Never ``_codec``, I/O,
the drivers or anything above them.
"""
