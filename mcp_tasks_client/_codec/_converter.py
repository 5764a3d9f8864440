"""The converter machinery shared by every protocol generation.

Theory of operation: a :class:`WireConverter` is a converter in the manner of cattrs (hooks
registered by type, found by ``_dispatch.Dispatch``, cattrs' interface without cattrs) whose
hooks are strict (``"5"`` is never an int, ``5`` never a string) and which reports the JSON
path of the first problem as a :class:`~mcp_tasks_client.DecodeError`. Attrs classes are
mapped generically:

- a field's JSON key is its ``wire`` metadata, or the camelCase of its name;
- a field without a default is a required key (missing -> DecodeError);
- a field marked ``nullable`` is written even when ``None`` (``"ttl": null``); any other
  ``None`` field is left out; ``UNSET`` is always left out;
- the field marked ``extra`` receives every key the class does not know, and gives them back
  when encoding (forward compatibility: nothing the server sent is dropped);
- a field with ``local`` metadata is no part of the wire form: never read, never written
  (what a generation's codec sets from what it decoded: ``Tool.task_support_listed``);
- a field with ``range`` metadata (``(low, high)``, set by ``models._base.ranged``) refuses a
  decoded number outside ``low <= x <= high``, naming the field's path (``$.task.ttl``).

Every server value is validated here, never later (issue 7): a number the library will compute
with, or a timestamp, either fits what that computation needs or is a DecodeError with its JSON
path. So no number reaches the models that a float cannot hold (|x| <= ``sys.float_info.max``;
``loads`` already refuses NaN and the infinities), no duration that overflows a ``timedelta``,
and no timestamp whose fields, offset or UTC instant are out of range.

Hooks for a models module's classes may be *deferred* (:meth:`WireConverter.defer`): its
installers run the first time the converter is asked for a hook of one of its classes, so a
generation's codec does not import (and build) the prompt and resource models until a program
reads one (issue 34, start-up).

Unions are resolved by the JSON kind of the value (object, array, string, number, bool, null);
several attrs classes of one kind need a registered *family* with a discriminator (content
blocks by ``type``, elicitation params by ``mode``). Generation codecs
(``v2025_11_25``) add the shapes that do not fit the generic rule.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeGuard, TypeVar

import attrs

from .._exceptions import DecodeError, UnknownValue
from ..models._base import RANGE, UNSET, Unset
from ._dispatch import Dispatch

T = TypeVar("T")

LOCAL = "local"
"""The field metadata key of a field that is no part of the wire form."""

Hook = Callable[[Any, Any], Any]

_NONE_TYPE = type(None)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def wire_name(field: attrs.Attribute[Any]) -> str:
    return str(field.metadata.get("wire", camel(field.name)))


def is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _kinds_of_type(tp: Any) -> frozenset[str]:
    """The JSON kinds a type can be decoded from."""
    if tp is Any:
        return frozenset({"null", "bool", "number", "string", "array", "object"})
    if tp is _NONE_TYPE:
        return frozenset({"null"})
    if tp is bool:
        return frozenset({"bool"})
    if tp in (int, float):
        return frozenset({"number"})
    if tp is str or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return frozenset({"string"})
    if tp is dt.datetime:
        return frozenset({"string"})
    origin = typing.get_origin(tp)
    if origin is tuple:
        return frozenset({"array"})
    if tp is Mapping or origin in (Mapping, dict) or attrs.has(tp):
        return frozenset({"object"})
    if is_union(tp):
        out: frozenset[str] = frozenset()
        for arg in typing.get_args(tp):
            out |= _kinds_of_type(arg)
        return out
    return frozenset()


# ``re.ASCII``: RFC 3339 digits are 0-9 only (``\d`` would also take "٢٠٢٥", which ``int`` reads);
# the pattern is used with ``fullmatch``, since ``$`` would accept a trailing newline.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})?",
    re.ASCII,
)


def parse_timestamp(text: str) -> dt.datetime:
    """RFC 3339 (A-17): ``Z`` or an offset; any number of fraction digits (cut to microseconds).

    A timestamp without an offset is read as UTC (lenient; the probe flags it).

    Every field out of range raises ValueError (the codec makes it a DecodeError): year 0,
    month 13, day 32 (or 30 February), hour 24, minute or second beyond 59 (60 is a leap second,
    read as 59), offset hours beyond 23 or minutes beyond 59, and an instant that has no UTC
    value (``0001-01-01T00:00:00+01:00`` is in year 0 in UTC; ``astimezone`` would raise
    OverflowError). Years up to 9999 parse: ``9999-12-31T23:59:59Z`` is a valid value, and
    arithmetic that carries it past year 9999 (adding a ttl) is its caller's concern.
    """
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError("not an RFC 3339 timestamp")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, offset = m.group(7), m.group(8)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    if offset is None or offset in ("Z", "z"):
        tz = dt.timezone.utc
    else:
        sign = 1 if offset[0] == "+" else -1
        offset_hours, offset_minutes = int(offset[1:3]), int(offset[4:6])
        # ``timezone`` itself only refuses a total of 24 h or more: "+00:99" would be 1:39.
        if offset_hours > 23 or offset_minutes > 59:
            raise ValueError("out of range: the UTC offset")
        tz = dt.timezone(sign * dt.timedelta(hours=offset_hours, minutes=offset_minutes))
    if second == 60:  # a leap second: keep the instant readable
        second = 59
    value = dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    try:
        value.astimezone(dt.timezone.utc)
    except OverflowError:
        raise ValueError("out of range: the instant is outside years 1-9999 in UTC") from None
    return value


def format_timestamp(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    offset = value.utcoffset()
    if offset is not None and offset % dt.timedelta(minutes=1):
        # RFC 3339 offsets are whole minutes; ``isoformat`` would write ``+00:19:32``.
        value = value.astimezone(dt.timezone.utc)
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class Family:
    """Several attrs classes decoded from JSON objects, told apart by ``pick``. (A plain
    class: a converter's own bookkeeping, never compared; an attrs class compiles its
    generated methods at import, on every client's start: issue 34.)"""

    __slots__ = ("members", "pick")

    def __init__(self, members: frozenset[type], pick: Callable[[Mapping[str, Any]], type]) -> None:
        self.members = members
        self.pick = pick


class WireConverter(Dispatch):
    """A strict converter with JSON paths in its errors."""

    def __init__(self) -> None:
        super().__init__()
        self._families: list[Family] = []
        self._deferred: dict[str, list[Callable[[], None]]] = {}
        # The models' enums are plain Enums (no ``str`` mixin), so they never hit the str hook.
        self.register_structure_hook(str, _strict(str, "a string"))
        self.register_structure_hook(bool, _strict(bool, "a boolean"))
        self.register_structure_hook(int, _structure_int)
        self.register_structure_hook(float, _structure_float)
        self.register_structure_hook(dt.datetime, _structure_datetime)
        self.register_unstructure_hook(dt.datetime, format_timestamp)
        self.register_structure_hook_func(lambda t: t is Any, lambda v, _: v)
        self.register_structure_hook_func(lambda t: t is _NONE_TYPE, _structure_null)
        self.register_structure_hook_factory(_is_mapping, self._mapping_hook)
        self.register_structure_hook_func(
            lambda t: isinstance(t, type) and issubclass(t, enum.Enum), _structure_enum
        )
        self.register_unstructure_hook_func(
            lambda t: isinstance(t, type) and issubclass(t, enum.Enum), lambda v: v.value
        )
        self.register_structure_hook_factory(_is_var_tuple, self._tuple_hook)
        self.register_structure_hook_factory(is_union, self._union_hook)
        self.register_structure_hook_factory(attrs.has, self._attrs_structure_hook)
        self.register_unstructure_hook_factory(attrs.has, self._attrs_unstructure_hook)
        self.register_unstructure_hook(Unset, lambda v: None)
        # Last, so first asked: a class whose module has deferred hooks installs them now.
        self.register_structure_hook_factory(self._is_deferred, self._settled_structure)
        self.register_unstructure_hook_factory(self._is_deferred, self._settled_unstructure)

    # -- public ------------------------------------------------------------------------------

    def defer(self, module: str, install: Callable[[], None]) -> None:
        """Run ``install`` (which registers hooks for classes of the models module named
        ``module``) only when this converter first needs a hook for a class of that module:
        the module is then imported already, by whoever holds the class."""
        self._deferred.setdefault(module, []).append(install)

    def _is_deferred(self, tp: Any) -> bool:
        return isinstance(tp, type) and tp.__module__ in self._deferred

    def _settle(self, cls: type) -> None:
        for install in self._deferred.pop(cls.__module__, ()):
            install()

    def _settled_structure(self, cls: type) -> Hook:
        self._settle(cls)
        return self.get_structure_hook(cls)

    def _settled_unstructure(self, cls: type) -> Callable[[Any], Any]:
        self._settle(cls)
        return self.get_unstructure_hook(cls)

    def add_family(self, family: Family) -> None:
        self._families.append(family)

    def decode(self, value: Any, cls: type[T]) -> T:
        """``value`` (parsed JSON) as ``cls``; any problem is a DecodeError naming the path."""
        decoded: T = self.structure(value, cls)
        return decoded

    def encode(self, obj: Any) -> Any:
        """``obj`` as JSON-ready Python values."""
        return self.unstructure(obj)

    # -- hooks -------------------------------------------------------------------------------

    def _tuple_hook(self, tp: Any) -> Hook:
        (item_type,) = typing.get_args(tp)[:1]

        def structure(value: Any, _: Any) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise DecodeError("$", f"expected an array, got {_kind_of(value)}", value)
            out = []
            for index, item in enumerate(value):
                try:
                    out.append(self.structure(item, item_type))
                except DecodeError as exc:
                    raise exc.under(f"$[{index}]") from None
            return tuple(out)

        return structure

    def _mapping_hook(self, tp: Any) -> Hook:
        """A JSON object; with a value type (``Mapping[str, InputRequest]``) each value is
        decoded as that type, its path naming the key."""
        args = typing.get_args(tp)
        value_type = args[1] if len(args) == 2 else Any
        if value_type is Any:
            return _structure_mapping

        def structure(value: Any, _: Any) -> Mapping[str, Any]:
            body = _structure_mapping(value, tp)
            out: dict[str, Any] = {}
            for key, item in body.items():
                try:
                    out[key] = self.structure(item, value_type)
                except DecodeError as exc:
                    raise exc.under(f"$.{key}") from None
            return out

        return structure

    def _union_hook(self, tp: Any) -> Hook:
        members = [a for a in typing.get_args(tp) if a is not Unset]
        for member in members:  # their deferred hooks (a family among them) installed now
            if self._is_deferred(member):
                self._settle(member)
        by_kind: dict[str, list[Any]] = {}
        for member in members:
            for kind in _kinds_of_type(member):
                by_kind.setdefault(kind, []).append(member)
        expected = " or ".join(sorted(by_kind))

        def structure(value: Any, _: Any) -> Any:
            kind = _kind_of(value)
            candidates = by_kind.get(kind)
            if not candidates:
                raise DecodeError("$", f"expected {expected}, got {kind}", value)
            if len(candidates) == 1:
                return self.structure(value, candidates[0])
            if kind == "number" and float in candidates:
                return _structure_float(value, float)
            family = self._family_for(candidates)
            if family is None:  # pragma: no cover - a modelling mistake, caught by the tests
                raise TypeError(f"ambiguous union {tp!r} for JSON {kind}")
            return self.structure(value, family.pick(value))

        return structure

    def _family_for(self, candidates: list[Any]) -> Family | None:
        wanted = set(candidates)
        for family in self._families:
            if wanted <= family.members:
                return family
        return None

    def _attrs_structure_hook(self, cls: Any) -> Hook:
        attrs.resolve_types(cls)
        plan = []
        extra_name: str | None = None
        for field in attrs.fields(cls):
            if field.metadata.get("extra"):
                extra_name = field.name
                continue
            if field.metadata.get(LOCAL):
                continue
            required = field.default is attrs.NOTHING
            bounds: tuple[int, int] | None = field.metadata.get(RANGE)
            plan.append((field.name, wire_name(field), field.type, required, bounds))
        known = frozenset(key for _, key, _, _, _ in plan)
        converter = self

        def structure(value: Any, _: Any) -> Any:
            if not isinstance(value, dict):
                raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
            kwargs: dict[str, Any] = {}
            for name, key, field_type, required, bounds in plan:
                if key not in value:
                    if required:
                        raise DecodeError(f"$.{key}", "required field is missing")
                    continue
                try:
                    item = converter.structure(value[key], field_type)
                    if bounds is not None:
                        _check_range(item, bounds)
                except DecodeError as exc:
                    raise exc.under(f"$.{key}") from None
                kwargs[name] = item
            if extra_name is not None:
                kwargs[extra_name] = {k: v for k, v in value.items() if k not in known}
            try:
                return cls(**kwargs)
            except (ValueError, TypeError) as exc:  # an attrs validator refused a value
                raise DecodeError("$", str(exc), value) from None

        return structure

    def _attrs_unstructure_hook(self, cls: Any) -> Callable[[Any], Any]:
        attrs.resolve_types(cls)
        plan = []
        extra_name: str | None = None
        for field in attrs.fields(cls):
            if field.metadata.get("extra"):
                extra_name = field.name
                continue
            if field.metadata.get(LOCAL):
                continue
            plan.append((field.name, wire_name(field), bool(field.metadata.get("nullable"))))
        converter = self

        def unstructure(obj: Any) -> dict[str, Any]:
            out: dict[str, Any] = dict(getattr(obj, extra_name)) if extra_name else {}
            for name, key, nullable in plan:
                value = getattr(obj, name)
                if value is UNSET or (value is None and not nullable):
                    continue
                out[key] = converter.unstructure(value)
            return out

        return unstructure


def _is_mapping(tp: Any) -> bool:
    return tp is Mapping or typing.get_origin(tp) in (Mapping, dict) or tp is dict


def _is_var_tuple(tp: Any) -> bool:
    args = typing.get_args(tp)
    return typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _strict(cls: type, what: str) -> Hook:
    def structure(value: Any, _: Any) -> Any:
        if type(value) is not cls:
            raise DecodeError("$", f"expected {what}, got {_kind_of(value)}", value)
        return value

    return structure


def _structure_null(value: Any, _: Any) -> None:
    if value is not None:
        raise DecodeError("$", f"expected null, got {_kind_of(value)}", value)


def _is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number: ``True`` is an int to Python, never a number to JSON."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_float_range(value: int | float) -> None:
    """Refuse an integer no float can hold (JSON's ``1e400`` is refused by ``loads``, but
    ``10**400`` spelled out in digits is a valid Python int).

    Every number the models hold must survive ``float(x)``, ``x / 1000.0`` and comparisons with
    floats: I-JSON (RFC 7493, 2.2) holds interoperable numbers to IEEE doubles anyway.
    """
    if abs(value) > sys.float_info.max:
        # The problem does not quote the value: ``str`` of a huge int can itself raise
        # ValueError (Python limits int-to-str conversion to 4300 digits).
        raise DecodeError("$", "out of range: larger than any float (about 1.8e308)", value)


def _check_range(value: Any, bounds: tuple[int, int]) -> None:
    """The ``range`` metadata of a field: ``None`` and ``UNSET`` pass, numbers must fit."""
    if not _is_number(value):
        return
    low, high = bounds
    if not low <= value <= high:
        raise DecodeError("$", f"out of range: expected {low} <= value <= {high}", value)


def _structure_int(value: Any, _: Any) -> int:
    if not _is_number(value):
        raise DecodeError("$", f"expected an integer, got {_kind_of(value)}", value)
    _check_float_range(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise DecodeError("$", "expected an integer, got a fraction", value)
        return int(value)
    return value


def _structure_float(value: Any, _: Any) -> float:
    if not _is_number(value):
        raise DecodeError("$", f"expected a number, got {_kind_of(value)}", value)
    _check_float_range(value)
    return value  # an int stays an int: 60000 round-trips as 60000, not 60000.0


def _structure_mapping(value: Any, _: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected an object, got {_kind_of(value)}", value)
    return value


def _structure_enum(value: Any, cls: Any) -> Any:
    if not isinstance(value, str):
        raise DecodeError("$", f"expected a string, got {_kind_of(value)}", value)
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in cls)
        raise UnknownValue(
            "$", f"unknown value {value!r} (expected one of {allowed})", value
        ) from None


def _structure_datetime(value: Any, _: Any) -> dt.datetime:
    if not isinstance(value, str):
        raise DecodeError("$", f"expected a timestamp string, got {_kind_of(value)}", value)
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise DecodeError("$", f"{exc}: {value!r}", value) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # ``1e999`` is Infinity spelled as a number
        raise ValueError(f"{text} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float)

# Where a lone surrogate may come from: a ``\uD800``-``\uDFFF`` escape (the JSON text), or a
# surrogate code point already in a ``str`` handed in (bytes decoded as UTF-8 hold none).
_MAY_HOLD_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(data: bytes | str) -> Any:
    """Strict JSON: UTF-8 only (``json.loads`` would guess UTF-16 or UTF-32 from bytes, X:3.3
    says UTF-8); ``NaN`` and ``Infinity`` are refused; errors are DecodeErrors.

    A string (or key) holding a lone surrogate (``"\\ud800"``: valid JSON, but no UTF-8 can
    carry it, so the value could never be written back, not even as an answer's id) refuses
    the whole message with a DecodeError naming its path (``$.id``)."""
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        if text.startswith("\ufeff"):  # what json.loads says of it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        # A message as servers send it, with nothing around it: read without decode()'s two
        # whitespace matches; anything else (whitespace around it, not JSON) gets json's own
        # reading, and error, from decode().
        try:
            value, end = _DECODER.raw_decode(text)
        except json.JSONDecodeError:
            end = -1
        if end != len(text):
            value = _DECODER.decode(text)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # too deep: RecursionError
        raise DecodeError("$", f"not valid JSON: {exc}", _preview(data)) from None
    # Rare: a valid pair escaped, or a lone surrogate. Bytes decoded as UTF-8 hold no
    # surrogate code point, so only an escape can make one: none without a backslash-u (a
    # substring test, far cheaper than the search on every message).
    escaped = b"\\u" in data if isinstance(data, (bytes, bytearray)) else True
    if escaped and _MAY_HOLD_SURROGATE.search(text):
        _refuse_lone_surrogates(value)
    return value


def _refuse_lone_surrogates(value: Any) -> None:
    """A DecodeError at the first string or key holding a lone surrogate. Depth first, one
    iterator per open container: no recursion (the value may be nested as deep as the parser
    went) and no path built ahead for every item of a long array."""
    stack: list[Iterator[tuple[str, Any]]] = [iter([("$", value)])]
    while stack:
        for path, item in stack[-1]:
            if isinstance(item, str):
                if _has_surrogate(item):
                    raise DecodeError(path, "a lone surrogate: not Unicode text", _preview(item))
            elif isinstance(item, (dict, list)):
                stack.append(_children(path, item))
                break
        else:
            stack.pop()


def _children(path: str, item: dict[str, Any] | list[Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(item, list):
        for index, child in enumerate(item):
            yield f"{path}[{index}]", child
        return
    for key, child in item.items():
        if _has_surrogate(key):
            raise DecodeError(
                path, f"the key {_preview(key)!r} holds a lone surrogate", _preview(key)
            )
        yield f"{path}.{key}", child


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON with no embedded newline (stdio frames by line, X:3.3)."""
    return _ENCODER.encode(value).encode()


# One encoder and one decoder for every message (json.dumps and json.loads with options build
# a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _preview(data: bytes | str) -> str:
    """The start of ``data`` for an error, as text that can be printed or logged: bad UTF-8
    replaced, a surrogate spelled ``\\udXXX``."""
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    shown = text[:200].encode("utf-8", "backslashreplace").decode("utf-8")
    return shown if len(text) <= 200 else shown + "..."
