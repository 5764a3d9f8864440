"""How servers word a refused call, read into typed errors (both generations).

The SDK peers refuse a call whose task support does not fit inside an ``isError`` result or a
JSON-RPC error, in words rather than codes: mcp 1.30 "This tool requires task-augmented
invocation" / "does not support task-augmented invocation"; TS 1.32 "MCP error -32601: Tool X
requires task augmentation". mcp 1.30 also fails a task that would ask for input the client
did not declare: "Client does not support elicitation capability". These readings are the only
place such words are matched.

May import: ``models``, ``_exceptions``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import models

if TYPE_CHECKING:  # the tool and content models: imported where a program uses them
    from ..models import CallToolResult

__all__ = [
    "error_text",
    "lacks_client_capability",
    "mentions_task",
    "refuses_tasks",
    "requires_task",
]

# Patterns, compiled by ``re`` (and kept in its cache) when a refusal is first read: a run
# that meets none compiles none (issue 34).
_REQUIRES_TASK = r"(?i)requires? task[- ]augment"
_DOES_NOT_SUPPORT_TASK = (
    r"(?i)(does not|doesn't|not) (support|allow)\w* task[- ]augment|taskSupport.{0,20}forbidden"
)


_LACKS_CAPABILITY = (
    r"(?i)(?:client )?(?:does not|doesn't|not) support (?:task-augmented )?(elicitation|sampling)"
)


def lacks_client_capability(said: str | None) -> str | None:
    """The client capability (``"elicitation"``, ``"sampling"``) the server's words say the
    client lacks, or None: mcp 1.30 fails a task with "Client does not support elicitation
    capability" when it would ask and the client declared no elicitation."""
    found = re.search(_LACKS_CAPABILITY, said) if said is not None else None
    return found.group(1).lower() if found is not None else None


def mentions_task(message: str) -> bool:
    """A -32601 naming a task: the tool exists but must be called as a task."""
    return "task" in message.lower()


def error_text(result: CallToolResult) -> str | None:
    """The text of an isError result, for recognising a server's refusal."""
    if not result.is_error:
        return None
    return " ".join(block.text for block in result.content if isinstance(block, models.TextContent))


def requires_task(said: str | None) -> bool:
    """The server's words say the tool must be called as a task."""
    return said is not None and re.search(_REQUIRES_TASK, said) is not None


def refuses_tasks(said: str | None) -> bool:
    """The server's words say the tool cannot be called as a task."""
    return said is not None and re.search(_DOES_NOT_SUPPORT_TASK, said) is not None
