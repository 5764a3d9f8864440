"""The input router's parts: what ``inputs.InputRouter`` is made of.

Job: one job per module, behind the router's front (``inputs.py``): ``events`` (the values a
handler and a listener are given, and the one error-to-event table), ``handlers`` (which
handler answers which task's requests), ``shared_journal`` (answering once across workers),
``batching`` (a task's ready answers in one ``tasks/update``). Users never import from here:
``mcp_tasks_client.inputs`` re-exports every public name.

May import: ``_client`` (types only), ``receiver``, ``journal``, ``_sansio``, ``models``,
``_exceptions``, ``_limits``, ``observability``; never ``inputs`` (the front is built on the
parts), never the Poller.
"""
