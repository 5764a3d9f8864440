"""The converters' dispatch (``_codec/_dispatch.py``): cattrs' interface without cattrs.

Issue 34: importing cattrs (and the typing_extensions it loads) was about a tenth of
``mcp-tasks status``'s start-up, and the codecs registered every hook they use themselves.
What they relied on from cattrs beyond their own hooks is pinned here against cattrs itself
(installed with the test dependencies): the order hooks are found in, and how a value no hook
serves is unstructured.
"""

from __future__ import annotations

import enum
from typing import Any

import cattrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_tasks_client._codec._converter import WireConverter
from mcp_tasks_client._codec._dispatch import Dispatch

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.frozensets(st.integers(), max_size=3)
    ),
    max_leaves=20,
)


def shape(value: Any) -> Any:
    """``value`` with the type of every container spelled out (``==`` takes (1,) for [1]...)."""
    if isinstance(value, dict):
        return ("dict", {k: shape(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [shape(v) for v in value])
    return (type(value).__name__, value)


@given(VALUES)
def test_a_value_no_hook_serves_is_unstructured_as_cattrs_does(value: Any) -> None:
    assert shape(Dispatch().unstructure(value)) == shape(cattrs.Converter().unstructure(value))


@given(VALUES)
def test_the_wire_converter_writes_plain_json_values_as_cattrs_did(value: Any) -> None:
    """The same through the codec's converter, its own hooks registered (a model's ``extra``
    and ``_meta`` hold such values, and are written through it)."""
    ours = WireConverter().encode(value)
    assert shape(ours) == shape(cattrs.Converter().unstructure(value))


class Colour(enum.Enum):
    RED = "red"


class Base:
    pass


class Derived(Base):
    pass


def test_hooks_are_found_as_cattrs_finds_them() -> None:
    """A class's hook serves its subclasses (the nearest base first) before any predicate; of
    the predicates, the one registered last is asked first; a registration replaces what was
    found before it (nothing stale is kept)."""
    for converter in (Dispatch(), cattrs.Converter()):
        converter.register_structure_hook(Base, lambda v, t: ("base", v))
        converter.register_structure_hook_func(lambda t: t is Derived, lambda v, t: ("pred", v))
        assert converter.structure(1, Derived) == ("base", 1), converter
        converter.register_structure_hook(Derived, lambda v, t: ("derived", v))
        assert converter.structure(1, Derived) == ("derived", 1), converter
        converter.register_structure_hook_func(lambda t: t is Colour, lambda v, t: "first")
        converter.register_structure_hook_func(lambda t: t is Colour, lambda v, t: "last")
        assert converter.structure("red", Colour) == "last", converter
        converter.register_structure_hook_factory(
            lambda t: t is Colour, lambda t: lambda v, _: f"made for {t.__name__}"
        )
        assert converter.structure("red", Colour) == "made for Colour", converter
        converter.register_unstructure_hook_func(lambda t: t is Colour, lambda v: v.value)
        assert converter.unstructure(Colour.RED) == "red", converter


def test_a_type_no_hook_serves_is_a_type_error_naming_it() -> None:
    """A modelling mistake, never a silent pass-through of the server's value."""
    with pytest.raises(TypeError, match=r"no structure hook for .*Base"):
        Dispatch().structure({}, Base)


def test_the_codecs_import_no_cattrs() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from mcp_tasks_client import Generation\n"
        "from mcp_tasks_client._drivers import driver_for\n"
        "for generation in Generation:\n"
        "    driver_for(generation).converter.encode(driver_for(generation).client_info)\n"
        "print('cattrs' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.strip() == "False", ran.stderr
