"""The public surface, pinned: a small top level, one home for every model and every error,
and no sans-I/O internals at the front door.

What a program writes is at the top level (at most 80 names); wire values are in
``mcp_tasks_client.models``, exceptions in ``mcp_tasks_client.errors``, the transport interface
in ``mcp_tasks_client.transports``, the sans-I/O pieces seen at the edges in
``mcp_tasks_client.protocol``, the codec in ``mcp_tasks_client.wire``. A name that moved off the
top level says where it went (an AttributeError), and is not kept as an alias.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import traceback
from types import ModuleType

import attrs
import pytest

import mcp_tasks_client
from mcp_tasks_client import errors, models, protocol, sync, transports, wire
from mcp_tasks_client._io._http_engine import HTTPError as EngineFailure

PUBLIC_MODULES: tuple[ModuleType, ...] = (
    mcp_tasks_client,
    models,
    errors,
    transports,
    protocol,
    wire,
    sync,
)
TOOLS = (
    "mcp_tasks_client.cli",
    "mcp_tasks_client.conformance",
    "mcp_tasks_client.sdk",
    "mcp_tasks_client.testing",
)
"""Subpackages with their own public API (and optional dependencies); not the library core."""

SANS_IO_AT_THE_TOP = {"BusyPolicy", "PollPolicy", "UnhandledInputPolicy", "ViolationPolicy"} | {
    "FollowLatency",
    "StatusMessage",
    "TaskProgress",
}
"""Defined beside the sans-I/O code, but what a program writes: the policies it constructs and
the progress values ``Poller.watch()`` yields."""


def library_modules() -> list[ModuleType]:
    """Every module of the library proper, imported (the tool subpackages left out)."""
    found = [mcp_tasks_client]
    for info in pkgutil.walk_packages(mcp_tasks_client.__path__, "mcp_tasks_client."):
        if info.name.startswith(TOOLS):
            continue
        found.append(importlib.import_module(info.name))
    return found


def test_the_top_level_has_at_most_80_names_and_each_resolves() -> None:
    names = mcp_tasks_client.__all__
    assert len(names) <= 80, len(names)
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(mcp_tasks_client, name) is not None


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_every_public_name_resolves_and_is_listed_once(module: ModuleType) -> None:
    assert module.__doc__, f"{module.__name__} says who it is for"
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        getattr(module, name)
    # `from module import *` gives exactly __all__ (no stray helper leaks into a user's scope).
    scope: dict[str, object] = {}
    exec(f"from {module.__name__} import *", scope)
    assert set(scope) - {"__builtins__"} == set(module.__all__)


def test_every_model_class_is_importable_from_models() -> None:
    defined: dict[str, type] = {}
    for info in pkgutil.walk_packages(models.__path__, "mcp_tasks_client.models."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and value.__module__ == info.name
                and not name.startswith("_")
                and (attrs.has(value) or issubclass(value, enum.Enum))
            ):
                defined[name] = value
    assert len(defined) >= 50  # the walk found the models (a broken walk would pass vacuously)
    for name, cls in defined.items():
        assert getattr(models, name, None) is cls, f"from mcp_tasks_client.models import {name}"
        assert name in models.__all__


def test_every_wire_model_the_codecs_encode_is_in_models() -> None:
    testing = pytest.importorskip("mcp_tasks_client.testing")
    for cls in testing.WIRE_MODELS:
        assert getattr(models, cls.__name__, None) is cls, cls


def error_classes() -> set[type[BaseException]]:
    """Every MCPTasksError subclass the library defines (the tool subpackages' own left out)."""
    library_modules()
    found: set[type[BaseException]] = set()
    todo: list[type[BaseException]] = [errors.MCPTasksError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return {
        cls
        for cls in found
        if cls.__module__.startswith("mcp_tasks_client")
        and not cls.__module__.startswith(TOOLS)
        and not cls.__name__.startswith("_")
    }


def test_every_exception_class_is_importable_from_errors_and_says_so() -> None:
    classes = error_classes()
    assert len(classes) >= 40
    for cls in classes:
        assert getattr(errors, cls.__name__, None) is cls, cls
        assert cls.__module__ == "mcp_tasks_client.errors", cls
    assert {getattr(errors, name) for name in errors.__all__} == classes


def test_an_error_names_its_public_home_in_a_traceback_and_a_repr() -> None:
    error = errors.TaskNotFound(-32602, "no such task")
    shown = "".join(traceback.format_exception_only(type(error), error))
    assert shown.startswith("mcp_tasks_client.errors.TaskNotFound:"), shown
    assert repr(type(error)) == "<class 'mcp_tasks_client.errors.TaskNotFound'>"
    assert "_exceptions" not in shown


def test_every_other_exception_of_the_library_is_in_protocol() -> None:
    """The receiver store's signals are plain exceptions a store of the caller's raises. An
    HTTP engine's own failures (``_io._http_engine.HTTPError``, named as httpx names its
    tree) are not a caller's to catch: the transport maps each to this library's errors
    (tests/test_hostile_http.py: each reaches the caller as one of this library's)."""
    for module in library_modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
                and not issubclass(value, errors.MCPTasksError)
                and not issubclass(value, AssertionError)  # a bug's signal: nothing to catch
                and not issubclass(value, EngineFailure)
            ):
                assert getattr(protocol, name, None) is value, f"{module.__name__}.{name}"


def test_no_top_level_name_is_a_model_an_error_or_a_sans_io_internal() -> None:
    top = set(mcp_tasks_client.__all__)
    assert not top & set(models.__all__)
    assert top & set(errors.__all__) == {"MCPTasksError"}  # the root, for `except`
    assert not top & set(transports.__all__)
    assert not top & set(protocol.__all__)
    assert not top & set(wire.__all__)
    for name in top - SANS_IO_AT_THE_TOP - {"__version__"}:
        home = getattr(getattr(mcp_tasks_client, name), "__module__", None) or ""
        assert not home.startswith(("mcp_tasks_client._sansio", "mcp_tasks_client._codec")), name
    for name in SANS_IO_AT_THE_TOP:
        assert name in top, name
    assert "Dialect" not in dir(mcp_tasks_client)


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("Task", "mcp_tasks_client.models"),
        ("Implementation", "mcp_tasks_client.models"),
        ("TaskNotFound", "mcp_tasks_client.errors"),
        ("JournalError", "mcp_tasks_client.errors"),
        ("TransportWrapper", "mcp_tasks_client.transports"),
        ("memory_transport_pair", "mcp_tasks_client.transports"),
        ("ReceiverBook", "mcp_tasks_client.protocol"),
        ("Violation", "mcp_tasks_client.protocol"),
        ("encode", "mcp_tasks_client.wire"),
    ],
)
def test_a_moved_name_says_where_it_went(name: str, home: str) -> None:
    with pytest.raises(AttributeError, match=f"{name} moved: from {home} import {name}"):
        getattr(mcp_tasks_client, name)
    assert not hasattr(mcp_tasks_client, name)  # no alias kept: hasattr is plainly False


def test_dialect_is_gone_and_an_unknown_name_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Dialect is gone: a driver per generation"):
        getattr(mcp_tasks_client, "Dialect")  # noqa: B009 - the name is the point
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchThing'"):
        getattr(mcp_tasks_client, "NoSuchThing")  # noqa: B009


def test_the_result_cache_names_have_their_homes() -> None:
    """Issue 28 (SEP-2549): what a program writes at the top (the cache it passes, the hints
    it reads); the scope enum is a wire value; the lenient reading an error class."""
    assert {"ResultCache", "CacheHints"} <= set(mcp_tasks_client.__all__)
    assert "CacheScope" in models.__all__
    assert {"ListResourceTemplatesResult", "ResourceTemplate"} <= set(models.__all__)
    assert "LenientCacheHint" in errors.__all__
    assert issubclass(errors.LenientCacheHint, errors.ProtocolError)
