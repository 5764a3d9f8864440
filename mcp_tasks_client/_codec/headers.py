"""HTTP headers that mirror a 2026-07-28 request's body (E C57-C60): routing headers, header
value encoding, and ``x-mcp-header`` argument annotations mirrored as ``Mcp-Param-*``.

Codec floor: pure functions over JSON values, no I/O. May import ``_exceptions`` and the
converter's helpers; nothing above the wire floor.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from .._exceptions import DecodeError, UsageError
from ..models import JSONObject
from ._converter import _kind_of

__all__ = [
    "ParamPath",
    "decode_header_value",
    "encode_header_value",
    "header_annotations",
    "param_headers",
    "routing_headers",
]

_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""The param each method's ``Mcp-Name`` header mirrors (E C57, C58)."""


_SENTINEL_PREFIX = "=?base64?"
_SENTINEL_SUFFIX = "?="
_SAFE = re.compile(r"[\x20-\x7e]*")


def encode_header_value(value: str) -> str:
    """``value`` as an HTTP header value: as it is when it is plain visible ASCII without
    leading or trailing whitespace, else ``=?base64?<base64 of its UTF-8>?=`` (E C59; so is a
    value that itself looks like the sentinel)."""
    plain = (
        _SAFE.fullmatch(value) is not None
        and value == value.strip(" \t")
        and not value.lower().startswith(_SENTINEL_PREFIX)
    )
    if plain:
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_SENTINEL_PREFIX}{encoded}{_SENTINEL_SUFFIX}"


def decode_header_value(value: str) -> str:
    """The inverse of :func:`encode_header_value` (for servers, tests and the probe)."""
    if value.lower().startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX):
        body = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(body, validate=True).decode("utf-8")
        except ValueError as exc:
            raise DecodeError("header", f"bad base64 sentinel value: {exc}", value) from None
    return value


def routing_headers(method: str, params: JSONObject | None, version: str) -> dict[str, str]:
    """``MCP-Protocol-Version``, ``Mcp-Method`` and (where the method has one) ``Mcp-Name``,
    each equal to what the body says (E C57, C58)."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    key = _NAME_PARAM.get(method)
    name = (params or {}).get(key) if key is not None else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name)
    elif key is not None and name is not None:
        raise UsageError(f"{method}: params.{key} must be a string, got {_kind_of(name)}")
    return headers


# -- x-mcp-header: arguments mirrored as Mcp-Param-* headers (E C60) --------------------------

X_MCP_HEADER = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field-name token
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema 2020-12 keywords whose values are schemas (only ``properties`` keeps a path an
# argument can be read at); ``$ref`` is never followed: schemas are read as received, never
# dereferenced, and instance data (``default``, ``enum``, ``const``, ``examples``) is not entered.
_ONE_SCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})

ParamPath = tuple[str, ...]


def _schema_positions(schema: Any) -> list[tuple[ParamPath | None, Mapping[str, Any]]]:
    """Every subschema of ``schema`` with the ``properties`` path that reaches it (None once
    another keyword was crossed). Iterative: a deep schema cannot exhaust the stack."""
    found: list[tuple[ParamPath | None, Mapping[str, Any]]] = []
    stack: list[tuple[ParamPath | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        found.append((path, node))
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif keyword in _ONE_SCHEMA:
                stack.append((None, value))
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())
    return found


def header_annotations(schema: Any) -> dict[ParamPath, str]:
    """The ``x-mcp-header`` annotations of a tool's input schema, by argument path.

    Raises ValueError naming the first invalid one (E C60: the tool is then not called through
    its annotations): not on a property reached by ``properties`` alone, not a string, not an
    RFC 9110 token (empty included), on a property whose type is not string / integer /
    boolean, or the same header name twice (case-insensitively).
    """
    annotations: dict[ParamPath, str] = {}
    seen: dict[str, str] = {}
    for path, node in _schema_positions(schema):
        if X_MCP_HEADER not in node:
            continue
        if not path:
            raise ValueError(f"{X_MCP_HEADER} outside a plain chain of properties")
        where = ".".join(path)
        token = node[X_MCP_HEADER]
        if not isinstance(token, str) or _TOKEN.fullmatch(token) is None:
            raise ValueError(f"property {where!r}: {X_MCP_HEADER} is not an HTTP token")
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _HEADER_TYPES:
            raise ValueError(
                f"property {where!r}: {X_MCP_HEADER} needs type string, integer or boolean"
            )
        folded = token.lower()
        if folded in seen:
            raise ValueError(f"{X_MCP_HEADER} {token!r} on {where!r} repeats {seen[folded]!r}")
        seen[folded] = where
        annotations[path] = token
    return annotations


def _header_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        # Only string, integer and boolean properties carry x-mcp-header: a float here is an
        # integer-typed argument written as 3.0 (a JSON Schema integer), sent as "3".
        return str(int(value))
    if isinstance(value, (str, int, float)):
        try:
            return str(value)
        except ValueError:  # an int beyond the interpreter's digit limit
            return None
    return None


def param_headers(annotations: Mapping[ParamPath, str], arguments: Any) -> dict[str, str]:
    """``Mcp-Param-{Name}`` for each annotated argument present in ``arguments`` (absent or
    null: no header), its value encoded like every header value (E C59)."""
    headers: dict[str, str] = {}
    for path, token in annotations.items():
        node: Any = arguments
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        text = _header_text(node) if node is not None else None
        if text is not None:
            headers[f"Mcp-Param-{token}"] = encode_header_value(text)
    return headers
