"""Server text made safe for a terminal, and JSON lines that carry no raw control character.

A server's strings (tool names, task ids, status messages, results, error messages, what a
question asks) may hold terminal escape sequences: an OSC 52 clipboard write, a new window
title, a status query whose answer the terminal types into the prompt, the 8-bit CSI
(U+009B). Whatever the command line writes to a terminal, on stdout or stderr, goes through
:func:`for_terminal` first; every JSON line goes through :func:`json_line`.

- On a terminal each C0 control except tab and newline (U+0000-0008, U+000B-001F, so carriage
  return too), DEL (U+007F) and each C1 control (U+0080-009F) is shown as its escape,
  ``\\x1b``, ``\\x9b``, ``\\x0d``: visible, never acted on. (A backslash the server sent is left
  as it is, so ``\\x1b`` on the screen may also be those four characters: ``--json`` or
  ``--output`` has the exact text.)
- JSON output stays lossless: ``json.dumps`` already escapes C0 (``\\u001b``); DEL and C1 are
  escaped the same way (``\\u009b``), which a JSON reader turns back into the same string.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["for_terminal", "json_line", "safe_data"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1_AND_DEL = re.compile("[\x7f-\x9f]")


def _shown(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def for_terminal(text: str) -> str:
    """``text`` with every control a terminal would act on shown as its escape (tab and
    newline kept). Linear in the length of ``text``."""
    if _UNSAFE.search(text) is None:  # the usual case: no copy
        return text
    return _UNSAFE.sub(_shown, text)


def safe_data(value: Any) -> Any:
    """A JSON value with :func:`for_terminal` applied to every string in it, keys included
    (for showing server JSON on a terminal; never for ``--json`` output, which is lossless)."""
    if isinstance(value, str):
        return for_terminal(value)
    if isinstance(value, dict):
        return {for_terminal(str(k)): safe_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(v) for v in value]
    return value


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_line(value: Any) -> str:
    """``value`` as one line of JSON, non-ASCII text kept readable, and no raw control
    character in it: C0 escaped by ``json.dumps``, DEL and C1 escaped here (they can only
    stand inside strings, so the escape is exact)."""
    return _C1_AND_DEL.sub(_escaped, json.dumps(value, ensure_ascii=False))
