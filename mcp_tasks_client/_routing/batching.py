"""Answers of one task gathering for one ``tasks/update`` (2026-07-28).

Job: batching, and only that. Answers of one task that are ready in the same moment go out in
one ``tasks/update`` (E C28-C33); a batch the server refuses (-32602) is sent again key by key,
so one refused key costs no other; a busy answer (429/503) is sent again only as the caller's
``busy`` policy says. Each answer's fate (sent, or what refused it) is kept for its key.

May import: ``_client`` (types only), ``_exceptions``, ``models``.

Theory of operation. The router opens a batch for a task when its first ready answer comes,
lets one scheduling pass go by (answers ready in the same pass join), closes the batch to new
answers and sends it; the callers of the joined answers wait for ``sent`` and read their
key's :meth:`UpdateBatch.outcome`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
import attrs

from .._exceptions import InvalidParams, ServerBusy
from ..models import JSONObject

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["BusyRetry", "TaskUpdates", "UpdateBatch"]

BusyRetry = Callable[[ServerBusy, int], "float | None"]
"""``busy(error, in_row)``: the seconds to wait before a busy ``tasks/update`` is sent again
(``in_row``: busy answers in a row, from 1), or None to raise the ServerBusy."""


@attrs.define
class UpdateBatch:
    """The answers of one task gathering for one ``tasks/update``; each answer's fate."""

    answers: dict[str, JSONObject]
    sent: anyio.Event = attrs.field(factory=anyio.Event)
    errors: dict[str, BaseException] = attrs.field(factory=dict)
    done: bool = False

    async def send(
        self, client: Client, task_id: str, timeout: float | None, busy: BusyRetry | None
    ) -> None:
        in_row = 0
        try:
            while True:
                try:
                    await self._send_once(client, task_id, timeout)
                    break
                except ServerBusy as exc:  # sent again only when the caller's policy says so
                    in_row += 1
                    wait = None if busy is None else busy(exc, in_row)
                    if wait is None:
                        raise
                    await anyio.sleep(wait)
        except BaseException as exc:
            self.errors = dict.fromkeys(self.answers, exc)
            raise
        self.done = True

    async def _send_once(self, client: Client, task_id: str, timeout: float | None) -> None:
        try:
            await client.update_task(task_id, self.answers, timeout=timeout)
        except InvalidParams as exc:
            if len(self.answers) == 1:
                self.errors = dict.fromkeys(self.answers, exc)
            else:  # one refused key must not cost the others their answers
                for key, answer in self.answers.items():
                    try:
                        await client.update_task(task_id, {key: answer}, timeout=timeout)
                    except InvalidParams as one:
                        self.errors[key] = one

    def outcome(self, key: str) -> bool:
        """True when ``key``'s answer went out; raises what refused it."""
        error = self.errors.get(key)
        if error is not None and not isinstance(error, anyio.get_cancelled_exc_class()):
            raise error
        return self.done and error is None


class TaskUpdates:
    """The batches gathering, one per task: what a router sends its 2026-07-28 answers
    through."""

    def __init__(self) -> None:
        self._open: dict[str, UpdateBatch] = {}

    async def send(
        self,
        client: Client,
        task_id: str,
        key: str,
        response: JSONObject,
        timeout: float | None,
        busy: BusyRetry | None,
    ) -> bool:
        """Send ``response`` for ``key`` of ``task_id`` with the answers of that task ready
        in the same moment; True when it went out (raises what refused it). Deadline: see
        :meth:`UpdateBatch.send`. Cancelled: nothing more is sent for this caller's batch."""
        box = self._open.get(task_id)
        if box is not None:  # another answer of this task is gathering: go with it
            box.answers[key] = response
            await box.sent.wait()
            return box.outcome(key)
        box = self._open[task_id] = UpdateBatch({key: response})
        try:
            try:
                # Answers ready in the same moment join: their handlers finish before this
                # task runs again (one scheduling pass), none is waited for beyond it.
                await anyio.lowlevel.checkpoint()
            finally:
                del self._open[task_id]  # a later answer gathers its own batch
            await box.send(client, task_id, timeout, busy)
        finally:
            box.sent.set()
        return box.outcome(key)
