"""The explorer's model: what the spec lets each task do, judged answer by answer.

:class:`TaskModel` is sans-I/O. The explorer feeds it what the server answered (a created
task, a snapshot, a cancel's answer, a listing, a ``tasks/result``'s end, an error code) and it
returns the :class:`Broken` rules each answer shows, citing rule ids of
:data:`~mcp_tasks_client.conformance.RULES`. What it judges, across answers (the strict
Validator judges each message alone):

- a terminal status never changes (V-09, E S22), and a task cancelled by ``tasks/cancel``
  stays cancelled (C-41; 2026-07-28's ack is eventually consistent, E C36: not judged);
- ``createdAt`` never moves and ``lastUpdatedAt`` never goes backwards (V-26);
- ``tasks/cancel`` of a task already seen terminal, or of an unknown id, answers -32602
  (V-14); a successful one answers the task ``cancelled`` (V-15);
- ``tasks/list`` lists every task of the session ``tasks/get`` can retrieve (V-19): a task it
  leaves out is asked for by ``tasks/get`` at once, and a violation only if that finds it;
- a ``tasks/result`` that answered means the task had ended: no later snapshot says it runs
  (V-11);
- a task just created is found by ``tasks/get`` (E S5);
- an input request key names one request for the task's whole life (E S14), also after it
  was answered (the next snapshot may still show it, E C33);
- a session's ``tasks/list`` names no task another session created (V-28: a server that
  cannot tell requestors apart must not list);
- a listen pushes only tasks its acknowledgement agreed to, and acknowledges only tasks it
  was asked for (E C40). Each listen's pushes are judged in their order by a model of their
  own (all of the above that a snapshot shows); against the session's answers, whose order
  relative to a push is unknown, only what holds in any order (:meth:`TaskModel.seen_elsewhere`).

Answers of requests in flight at once (a cancel racing a poll) are judged by
:meth:`TaskModel.in_some_order`: a finding only when no order the server could have served
them in explains them.

Which of these a generation has is :data:`JUDGED` (a rule id per generation, or none).

May import: ``_generation``.
"""

from __future__ import annotations

import copy
import datetime as dt
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._generation import Generation

__all__ = ["JUDGED", "Broken", "TaskModel"]

TERMINAL = frozenset({"completed", "failed", "cancelled"})
INVALID_PARAMS = -32602

_BOTH = {Generation.V2025_11_25, Generation.V2026_07_28}
JUDGED: Mapping[str, Mapping[Generation, str]] = {
    "terminal-stays": {Generation.V2025_11_25: "V-09", Generation.V2026_07_28: "E S22"},
    "cancelled-stays": {Generation.V2025_11_25: "C-41"},
    "stamps": dict.fromkeys(_BOTH, "V-26"),
    "cancel-ended": {Generation.V2025_11_25: "V-14"},
    "cancel-answer": {Generation.V2025_11_25: "V-15"},
    "list-has-get": {Generation.V2025_11_25: "V-19"},
    "result-at-end": {Generation.V2025_11_25: "V-11"},
    "found-when-created": {Generation.V2026_07_28: "E S5"},
    "key-one-request": {Generation.V2026_07_28: "E S14"},
    "list-own-session": {Generation.V2025_11_25: "V-28"},
    "pushed-agreed": {Generation.V2026_07_28: "E C40"},
}
"""What the model judges, by what it is, with the rule id it cites in each generation (a
generation absent: not judged there)."""


@attrs.frozen
class Broken:
    """One rule an answer broke: its id, and what the answer showed."""

    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


@attrs.define
class _Task:
    created_at: dt.datetime
    last_updated_at: dt.datetime
    status: str
    ended: str | None = None
    """The terminal status first seen (None: not seen ended)."""
    cancelled: bool = False
    """``tasks/cancel`` answered it cancelled (2025-11-25)."""
    result_answered: bool = False
    found: bool = False
    gone: bool = False
    """``tasks/get`` refused it once (expired or deleted: no longer retrievable)."""
    requests: dict[str, str] = attrs.Factory(dict)
    """Each input request key with the request it first named (canonical JSON)."""


class TaskModel:
    """The tasks of one session as the spec lets them move; see the module docstring."""

    def __init__(self, generation: Generation) -> None:
        self.generation = generation
        self.tasks: dict[str, _Task] = {}

    def in_some_order(
        self,
        judges: Sequence[Callable[[TaskModel], list[Broken]]],
        serious: Callable[[Broken], bool] = lambda found: True,
    ) -> list[Broken]:
        """Judge the answers of requests that were in flight at once (each judge feeds one
        answer to the model it is given): the server may have served them in any order, so
        each order is judged on a copy of this model, and the first that breaks nothing
        ``serious`` (a MUST rule, say) is kept, with what else it broke. Only when every order
        breaks a serious rule is that a finding: the breaks of the order given (the order
        sent), whose state is kept."""
        tried: list[tuple[list[Broken], TaskModel]] = []
        for order in itertools.permutations(judges):
            model = copy.deepcopy(self)
            broken = [found for judge in order for found in judge(model)]
            if not any(serious(found) for found in broken):
                self.tasks = model.tasks
                return broken
            tried.append((broken, model))
        broken, model = tried[0]
        self.tasks = model.tasks
        return broken

    def _broke(self, concept: str, detail: str) -> list[Broken]:
        rule = JUDGED[concept].get(self.generation)
        return [] if rule is None else [Broken(rule, detail)]

    # -- what the server answered -------------------------------------------------------------

    def created(
        self, task_id: str, status: str, created_at: dt.datetime, updated: dt.datetime
    ) -> None:
        self.tasks[task_id] = _Task(created_at, updated, status)
        if status in TERMINAL:
            self.tasks[task_id].ended = status

    def snapshot(
        self,
        task_id: str,
        status: str,
        created_at: dt.datetime,
        updated: dt.datetime,
        input_requests: Mapping[str, Any] | None = None,
    ) -> list[Broken]:
        """A ``tasks/get`` answer (or any full snapshot) of ``task_id``."""
        task = self.tasks.get(task_id)
        if task is None:  # a task this model did not create: judged from here on
            self.created(task_id, status, created_at, updated)
            return []
        out: list[Broken] = []
        task.found = True
        if task.ended is not None and status != task.ended:
            out += self._broke(
                "terminal-stays", f"task {task_id} was {task.ended}, then said {status}"
            )
        if task.cancelled and status != "cancelled":
            out += self._broke(
                "cancelled-stays", f"task {task_id} was answered cancelled, then said {status}"
            )
        if task.result_answered and status not in TERMINAL:
            out += self._broke(
                "result-at-end",
                f"tasks/result of task {task_id} answered, then the task said {status}",
            )
        if created_at != task.created_at:
            out += self._broke(
                "stamps", f"task {task_id}'s createdAt moved from {task.created_at} to {created_at}"
            )
        if updated < task.last_updated_at:
            out += self._broke(
                "stamps",
                f"task {task_id}'s lastUpdatedAt went back from {task.last_updated_at} "
                f"to {updated}",
            )
        out += self._keys(task_id, task, input_requests)
        task.status = status
        task.last_updated_at = max(task.last_updated_at, updated)
        if status in TERMINAL and task.ended is None:
            task.ended = status
        return out

    def seen_elsewhere(
        self,
        task_id: str,
        status: str,
        created_at: dt.datetime,
        input_requests: Mapping[str, Any] | None = None,
    ) -> list[Broken]:
        """A snapshot of ``task_id`` that came by another road than the session's requests (a
        listen's push): its order against the requests' answers is unknown, so only what
        holds in any order is judged: one terminal status, one ``createdAt``, one request per
        input key. (The listen's own stream is judged in its order by a model of its own.)"""
        task = self.tasks.get(task_id)
        if task is None:
            return []
        out: list[Broken] = []
        if status in TERMINAL and task.ended is not None and status != task.ended:
            out += self._broke(
                "terminal-stays", f"task {task_id} was {task.ended}, and a push said {status}"
            )
        if created_at != task.created_at:
            out += self._broke(
                "stamps", f"task {task_id}'s createdAt {task.created_at}, a push said {created_at}"
            )
        out += self._keys(task_id, task, input_requests)
        return out

    def _keys(
        self, task_id: str, task: _Task, input_requests: Mapping[str, Any] | None
    ) -> list[Broken]:
        out: list[Broken] = []
        for key, request in (input_requests or {}).items():
            text = json.dumps(request, sort_keys=True, default=str)
            first = task.requests.setdefault(key, text)
            if first != text:
                out += self._broke(
                    "key-one-request", f"task {task_id}'s input key {key!r} named another request"
                )
        return out

    def get_refused(self, task_id: str, code: int | None) -> list[Broken]:
        """``tasks/get`` of ``task_id`` answered the error ``code``."""
        task = self.tasks.get(task_id)
        if task is not None:
            task.gone = True
        if task is not None and not task.found and task.ended is None:
            return self._broke(
                "found-when-created", f"tasks/get of task {task_id}, just created, answered {code}"
            )
        return []

    def cancel_answered(
        self, task_id: str, known: bool, status: str | None, code: int | None
    ) -> list[Broken]:
        """``tasks/cancel`` of ``task_id`` answered the task in ``status`` (None: an empty
        ack) or the error ``code``; ``known``: a task this session created."""
        task = self.tasks.get(task_id) if known else None
        ended = task.ended if task is not None else None
        if task is not None and ended is None and task.result_answered:
            ended = "ended (its tasks/result answered)"
        out: list[Broken] = []
        if (task is None or ended is not None) and code != INVALID_PARAMS:
            what = f"task {task_id}, already {ended}," if ended else f"unknown task {task_id!r}"
            answer = f"error {code}" if code is not None else f"status {status}"
            out += self._broke("cancel-ended", f"tasks/cancel of {what} answered {answer}")
        elif task is not None and ended is None and code is None and status is not None:
            if status != "cancelled":
                out += self._broke(
                    "cancel-answer", f"tasks/cancel of task {task_id} answered status {status}"
                )
            else:
                task.cancelled = True
                task.ended = "cancelled"
        return out

    def result_answered(self, task_id: str) -> None:
        """``tasks/result`` of ``task_id`` answered (a result or the task's error)."""
        task = self.tasks.get(task_id)
        if task is not None:
            task.result_answered = True

    def listed_foreign(self, task_ids: Iterable[str], foreign: Iterable[str]) -> list[Broken]:
        """A ``tasks/list`` of this session named tasks of ``foreign`` (created by another
        session on the same server, no credentials on either): a server that cannot tell
        requestors apart must not list tasks at all (V-28)."""
        shown = sorted(set(task_ids) & set(foreign))
        if not shown:
            return []
        return self._broke(
            "list-own-session", f"tasks/list listed task(s) {shown} of another session"
        )

    def unlisted(self, task_ids: Iterable[str]) -> list[str]:
        """The session's tasks a complete ``tasks/list`` of ``task_ids`` left out that may
        still be retrievable: the explorer asks ``tasks/get`` of each (:meth:`left_out`)."""
        listed = set(task_ids)
        return sorted(t for t, task in self.tasks.items() if not task.gone and t not in listed)

    def unagreed(self, what: str) -> list[Broken]:
        """A listen pushed or acknowledged ``what`` beyond what it agreed to (E C40)."""
        return self._broke("pushed-agreed", what)

    def left_out(self, task_id: str) -> list[Broken]:
        """``tasks/get`` retrieved ``task_id`` right after a complete ``tasks/list`` left it
        out (one refused is expired or deleted: fine)."""
        return self._broke(
            "list-has-get", f"tasks/list left out task {task_id}, which tasks/get retrieves"
        )
