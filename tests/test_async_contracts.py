"""Every public ``async`` method says what happens when its caller is cancelled and what
deadline it holds (issue 20, item 7; trio's habit: cancellation and timeouts are part of every
function's documented contract).

"Public" is what a program reaches through a public module of the package: the front door, its
documented submodules, and the optional PostgreSQL journal. The check reads each docstring for
the two words a reader looks for, ``Cancel`` and ``Deadline`` (or ``timeout``): it cannot judge
the prose, but a method that says nothing of either fails here.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

PUBLIC_MODULES = [
    "mcp_tasks_client",
    "mcp_tasks_client.errors",
    "mcp_tasks_client.models",
    "mcp_tasks_client.transports",
    "mcp_tasks_client.protocol",
    "mcp_tasks_client.wire",
    "mcp_tasks_client.testing",
    "mcp_tasks_client.conformance",
    "mcp_tasks_client.journal_postgres",
]
_DUNDERS = ("__aenter__", "__aexit__")


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)


def _public_async() -> Iterator[tuple[str, Callable[..., Any]]]:
    seen: set[tuple[str, str]] = set()
    for name in PUBLIC_MODULES:
        if name.endswith("postgres") and importlib.util.find_spec("psycopg") is None:
            continue  # the optional extra is not installed (its own tests say so under CI)
        module = importlib.import_module(name)
        for exported in getattr(module, "__all__", ()):
            value = getattr(module, exported)
            found: list[Any] = []
            if inspect.isclass(value):
                for attr, member in inspect.getmembers(value):
                    if attr.startswith("_") and attr not in _DUNDERS:
                        continue
                    function = getattr(member, "__func__", member)
                    if _is_async(function):
                        found.append(function)
            elif _is_async(value):
                found.append(value)
            for function in found:
                key = (function.__module__, function.__qualname__)
                if key not in seen:
                    seen.add(key)
                    yield f"{key[0]}.{key[1]}", function


ALL = sorted(_public_async(), key=lambda item: item[0])


def test_there_are_public_async_methods_to_check() -> None:
    names = [name for name, _ in ALL]
    assert any(name.endswith("Calls.start") for name in names)  # Client.start, inherited
    assert any(name.endswith("Poller.wait") for name in names)
    assert len(names) > 50


@pytest.mark.parametrize("function", [f for _, f in ALL], ids=[n for n, _ in ALL])
def test_every_public_async_method_says_its_cancellation_and_deadline(
    function: Callable[..., Any],
) -> None:
    doc = (inspect.getdoc(function) or "").lower()
    assert "cancel" in doc, "says nothing of what a cancelled caller gets"
    assert "deadline" in doc or "timeout" in doc, "says nothing of its deadline"
