"""The one error-to-event table of input routing: an RPCError that ends an input request is
reported as UNHANDLED (-32601: no handler), REJECTED (-32602: a bad request) or
HANDLER_FAILED (any other code), by ``inputs.ERROR_EVENTS`` alone."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mcp_tasks_client.errors import RPCError
from mcp_tasks_client.inputs import ERROR_EVENTS, InputEventKind, event_for

PACKAGE = Path(__file__).resolve().parent.parent / "mcp_tasks_client"


def test_the_table_names_the_two_codes_a_router_refuses_with() -> None:
    assert event_for(RPCError(-32601, "no handler")) is InputEventKind.UNHANDLED
    assert event_for(RPCError(-32602, "bad params")) is InputEventKind.REJECTED
    assert set(ERROR_EVENTS) == {-32601, -32602}


@given(st.integers(min_value=-(2**31), max_value=2**31).filter(lambda c: c not in ERROR_EVENTS))
def test_every_other_code_is_a_failed_handler(code: int) -> None:
    assert event_for(RPCError(code, "x")) is InputEventKind.HANDLER_FAILED


def test_no_module_keeps_a_copy_of_the_table() -> None:
    """A dict literal keyed by -32601 exists once in the input routing (the table itself)."""
    copies = []
    for path in [PACKAGE / "inputs.py", *sorted((PACKAGE / "_routing").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Dict):
                continue
            keys = [ast.unparse(key) for key in node.keys if key is not None]
            if "-32601" in keys:
                copies.append(f"{path.name}:{node.lineno}")
    assert len(copies) == 1, copies
