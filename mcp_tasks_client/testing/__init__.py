"""Hypothesis strategies for property tests of MCP task traffic (the ``testing`` extra).

- Valid instances of every wire model of both generations (:data:`MODEL_STRATEGIES`,
  :func:`strategy_for`, one function per model: :func:`tasks`, :func:`create_task_results`,
  :func:`detailed_tasks`, ...), as the codec reads and writes them.
- Raw JSON and near misses for robustness tests (:func:`json_values`, :func:`mutated`,
  :func:`wild_numbers`, :func:`timestamp_like_strings`).
- Whole conversations a conforming server could have with a client (:func:`valid_traffic`),
  legal status sequences (:func:`status_sequences`), and :func:`mutations`: the same traffic
  with exactly one server rule broken, as ``(rule_id, traffic)``, for the strict
  :class:`~mcp_tasks_client.conformance.Validator` or your own client.

- Scripted servers for fault tests: :class:`FaultServer` (a tasks server of either
  generation, in process or on 127.0.0.1, that breaks the rules you name and lets a hook
  answer any request: illegal transitions, dropped or slow answers, malformed messages, an
  HTTP 429/503 (:class:`Busy`); its
  ``ask`` tool sends the client requests for input in its task; :data:`PRESETS` names servers
  with several deviations at once),
  :class:`HostileHTTPServer` (raw HTTP/1.1 on 127.0.0.1, every byte scripted) and
  :func:`scripted_client` (a client wired to an in-memory server end you write).
- The client cache's rules (2026-07-28 caching hints, ``E H3``-``E H7``,
  :data:`CACHE_RULES`): :func:`check_cache` runs :class:`CacheRuleMachine` (a hypothesis state
  machine on simulated time) against any cache wrapped as a :class:`CacheUnderTest`, and raises
  :class:`CacheRuleViolation` naming the rule it broke (:class:`ResultCacheUnderTest` wraps the
  library's own ``ResultCache``).

Importing this module needs ``hypothesis`` (``pip install mcp-tasks-client[testing]``);
``import mcp_tasks_client`` never imports it.
"""

from __future__ import annotations

from . import _extra  # noqa: F401 - first: a missing extra is named, not a bare module
from ._cache_rules import (
    CACHE_RULES,
    CacheRuleMachine,
    CacheRuleViolation,
    CacheUnderTest,
    ResultCacheUnderTest,
    check_cache,
)
from ._fault_server import BREAKABLE, DROP, PRESETS, Busy, FaultServer, Hook, raw_json
from ._http import HOSTILE_INIT_RESULT, Conn, Handler, HostileHTTPServer, Received, sse_event
from ._models import *  # noqa: F403 - the model strategies are this module's API
from ._models import __all__ as _model_names
from ._scripted import SCRIPTED_CLIENT_INFO, TASK_CALLS, handshake, scripted_client
from ._traffic import (
    MUTATORS,
    Traffic,
    mutations,
    status_sequences,
    valid_traffic,
)

__all__ = [
    *_model_names,
    "BREAKABLE",
    "CACHE_RULES",
    "CacheRuleMachine",
    "CacheRuleViolation",
    "CacheUnderTest",
    "ResultCacheUnderTest",
    "check_cache",
    "DROP",
    "HOSTILE_INIT_RESULT",
    "PRESETS",
    "SCRIPTED_CLIENT_INFO",
    "TASK_CALLS",
    "Busy",
    "Conn",
    "FaultServer",
    "Handler",
    "Hook",
    "HostileHTTPServer",
    "Received",
    "handshake",
    "raw_json",
    "scripted_client",
    "sse_event",
    "MUTATORS",
    "Traffic",
    "mutations",
    "status_sequences",
    "valid_traffic",
]
