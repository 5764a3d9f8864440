"""For SDK authors and tools: the sans-I/O pieces a program meets only at the edges.

The protocol logic of this library is pure code (no sockets, no sleeping), driven by events
and a clock. A program that calls tools as tasks needs none of it by name; these are the
parts that surface, for code that reads what the engine reported, keeps a receiver's tasks,
or builds protocol traffic by hand:

- :class:`Violation`: a server broke a rule softly (the task status machine, V-24 progress);
  ``Poller.warnings`` holds them, a progress handler may receive them;
- :class:`ProgressStats`: what ``Client.progress_stats`` counts; :data:`ProgressToken` is
  the type of a ``progressToken`` (a string or an integer, C-46);
- :class:`ReceiverStore`: where a ``TaskReceiver`` keeps the tasks a server asked this
  client to run; :class:`ReceiverBook` is the in-memory default. A store of your own raises
  :class:`UnknownTask`, :class:`NotCancellable` and :class:`ReceiverFull` as the book does;
- :func:`encode_header_value` / :func:`decode_header_value`: the 2026-07-28 codec for a
  value carried in an HTTP header (printable ASCII as is, anything else base64 in a
  sentinel).

Only re-exports: the code lives in the library's private sans-I/O package.
"""

from __future__ import annotations

from ._codec.headers import decode_header_value, encode_header_value
from ._sansio.progress import ProgressStats, ProgressToken
from ._sansio.receiver_book import (
    NotCancellable,
    ReceiverBook,
    ReceiverFull,
    ReceiverStore,
    UnknownTask,
)
from ._sansio.task_machine import Violation

__all__ = [
    "NotCancellable",
    "ProgressStats",
    "ProgressToken",
    "ReceiverBook",
    "ReceiverFull",
    "ReceiverStore",
    "UnknownTask",
    "Violation",
    "decode_header_value",
    "encode_header_value",
]
