"""The generation seam, as behaviour: one sans-I/O dialect object per protocol generation.

The :class:`~mcp_tasks_client.Client` moves bytes; its dialect decides what they are. Like an
h11 connection, a dialect never touches a socket or a clock: it builds what a request carries
(params with their ``_meta``, HTTP headers that must equal the body) and reads what an answer
means (a start is a task, a plain result, or a request for input; a snapshot; a cancel ack).

What differs between the generations and where it is decided:

Legacy (2025-11-25) against Stateless (2026-07-28 with the tasks extension):

- handshake: ``initialize`` + ``notifications/initialized`` / none; ``server/discover`` only
  when the caller asks (E C9);
- request envelope: params as given / ``_meta`` with protocolVersion, clientCapabilities and
  clientInfo on every request (E C1-C3);
- HTTP headers: session id and protocol version / ``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name``, each equal to the body (E C57-C59);
- task opt-in: ``params.task`` (T:128) / the extension in that request's ``_meta``;
- a start's answer: always ``{task}`` / by ``resultType``: task, complete, input_required (C20);
- the result: ``tasks/result``, blocking / inline in ``tasks/get`` (E C27);
- input mid-flight: server->client requests / ``inputRequests`` + ``tasks/update``;
- status push: ``notifications/tasks/status`` / ``notifications/tasks`` on a listen stream;
- cancel's answer: the Task / an empty, eventually consistent ack (E C36);
- ``tasks/list``: yes / no such method (E S17).
"""

from __future__ import annotations

import abc
import base64
import re
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from .._errors import DecodeError, UsageError
from .._generation import Generation
from .._wire import v2025_11_25, v2026_07_28
from .._wire._converter import WireConverter, _kind_of
from ..models import (
    TASKS_EXTENSION,
    CallToolResult,
    ClientCapabilities,
    CreateTaskResult,
    Implementation,
    InputRequiredResult,
    JSONObject,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    Task,
)

__all__ = [
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "Dialect",
    "Legacy",
    "StartAnswer",
    "Stateless",
    "decode_header_value",
    "dialect_for",
    "encode_header_value",
    "header_annotations",
    "param_headers",
]

T = TypeVar("T")

# A Task snapshot: the fast path for the common valid shape, else the strict hook (its errors).
_decode_task_2025 = v2025_11_25.decode_task
_decode_task_2026 = v2026_07_28.decode_task

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

StartAnswer = CreateTaskResult | CallToolResult | InputRequiredResult
"""What a task call's answer is: a task, the call's own result (the server ran it inline,
2026-07-28 only), or a request for input first (MRTR, 2026-07-28 only)."""


class Dialect(abc.ABC):
    """What one protocol generation means; the Client drives it (sans-I/O)."""

    generation: ClassVar[Generation]
    converter: ClassVar[WireConverter]
    stateless: ClassVar[bool]
    """No ``initialize``, no session: every request carries who the client is (E C1, C7)."""
    status_notification: ClassVar[str]
    """The method of the notification that pushes a task's status."""
    inline_results: ClassVar[bool]
    """A terminal snapshot carries the outcome; there is no ``tasks/result`` (E C27, S16)."""
    lists_tasks: ClassVar[bool]

    def __init__(self, capabilities: JSONObject, client_info: JSONObject) -> None:
        self.capabilities = capabilities
        self.client_info = client_info

    @property
    def protocol_version(self) -> str:
        return self.generation.protocol_version

    def supports(self, version: str) -> bool:
        return version == self.generation.protocol_version

    # -- what a request carries ------------------------------------------------------------

    def params(
        self, method: str, params: JSONObject | None, *, tasks: bool = False
    ) -> JSONObject | None:
        """``params`` as the request carries them; ``tasks`` declares the tasks extension on
        this request (2026-07-28: a task call; ``tasks/*`` always declare it)."""
        return params

    def headers(self, message: JSONRPCMessage) -> dict[str, str]:
        """The HTTP headers ``message`` carries besides the transport's own."""
        return {}

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        """A tool call's params, made a task call (before :meth:`params`)."""
        return params

    # -- what an answer means --------------------------------------------------------------

    @abc.abstractmethod
    def read_start(self, raw: JSONObject) -> StartAnswer:
        """The answer to a task call."""

    def read_task(self, raw: JSONObject) -> Task:
        """A ``tasks/get`` answer or a status notification's params."""
        return self.converter.decode(raw, Task)

    def read_answer(self, raw: JSONObject, cls: type[T]) -> T | InputRequiredResult:
        """The answer to a request that cannot make a task (a plain ``tools/call``,
        ``prompts/get``, ``resources/read`` ...): ``cls``, or (2026-07-28) a request for input
        first. 2025-11-25 has only ``cls``."""
        return self.converter.decode(raw, cls)

    def read_ack(self, raw: JSONObject) -> None:
        """An answer that carries nothing (2026-07-28 ``tasks/update``, ``tasks/cancel``, a
        listen's close: ``{"resultType": "complete"}``); another resultType is invalid."""
        kind = raw.get("resultType", "complete")
        if kind != "complete":
            raise DecodeError("$.resultType", f"an acknowledgement has resultType {kind!r}", kind)

    @abc.abstractmethod
    def read_cancel(self, raw: JSONObject) -> Task | None:
        """A ``tasks/cancel`` answer: the Task (2025-11-25) or None (an empty ack)."""

    @abc.abstractmethod
    def created_task_id(self, raw: JSONObject | None) -> str | None:
        """The id of the task an answer names, read as leniently as possible: a task the
        server created must never be lost to a malformed answer."""


class Legacy(Dialect):
    """2025-11-25 with its experimental tasks: stateful, ``initialize``, ``params.task``."""

    generation = Generation.V2025_11_25
    converter = v2025_11_25.converter
    stateless = False
    status_notification = "notifications/tasks/status"
    inline_results = False
    lists_tasks = True

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        task: dict[str, Any] = {} if ttl_ms is None else {"ttl": ttl_ms}
        return {**params, "task": task}

    def read_start(self, raw: JSONObject) -> StartAnswer:
        if "task" in raw:  # the nested form is how a task is told from a plain answer
            return self.converter.decode(raw, CreateTaskResult)
        return self.converter.decode(raw, CallToolResult)

    def read_task(self, raw: JSONObject) -> Task:
        return _decode_task_2025(raw)

    def read_cancel(self, raw: JSONObject) -> Task | None:
        return _decode_task_2025(raw)

    def created_task_id(self, raw: JSONObject | None) -> str | None:
        task = raw.get("task") if raw is not None else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        return task_id if isinstance(task_id, str) else None


_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""The param each method's ``Mcp-Name`` header mirrors (E C57, C58)."""


class Stateless(Dialect):
    """2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension (E)."""

    generation = Generation.V2026_07_28
    converter = v2026_07_28.converter
    stateless = True
    status_notification = "notifications/tasks"
    inline_results = True
    lists_tasks = False

    def __init__(self, capabilities: JSONObject, client_info: JSONObject) -> None:
        super().__init__(capabilities, client_info)
        self.tool_headers: dict[str, dict[ParamPath, str]] = {}
        """The valid ``x-mcp-header`` annotations of the tools the caller listed, by tool."""

    def params(
        self, method: str, params: JSONObject | None, *, tasks: bool = False
    ) -> JSONObject | None:
        capabilities = dict(self.capabilities)
        if tasks or method.startswith("tasks/"):  # E C3: on exactly the requests that need it
            extensions = dict(capabilities.get("extensions") or {})
            extensions[TASKS_EXTENSION] = {}
            capabilities["extensions"] = extensions
        out = dict(params or {})
        given = out.get("_meta")
        if given is not None and not isinstance(given, dict):
            raise UsageError(f"params._meta must be a JSON object, got {type(given).__name__}")
        meta = dict(given or {})
        meta[META_PROTOCOL_VERSION] = self.protocol_version
        meta[META_CLIENT_CAPABILITIES] = capabilities
        meta[META_CLIENT_INFO] = dict(self.client_info)
        out["_meta"] = meta
        return out

    def headers(self, message: JSONRPCMessage) -> dict[str, str]:
        if not isinstance(message, (JSONRPCRequest, JSONRPCNotification)):
            return {}
        headers = routing_headers(message.method, message.params, self.protocol_version)
        params = message.params or {}
        if message.method == "tools/call" and isinstance(params.get("name"), str):
            annotations = self.tool_headers.get(params["name"])
            if annotations:
                headers.update(param_headers(annotations, params.get("arguments")))
        return headers

    def task_call_params(self, params: dict[str, Any], ttl_ms: int | None) -> dict[str, Any]:
        if ttl_ms is not None:
            raise UsageError(
                "2026-07-28 has no requested ttl: the server picks ttlMs (E 4); "
                "build the call with as_task() and no ttl"
            )
        return params

    def read_start(self, raw: JSONObject) -> StartAnswer:
        kind = raw.get("resultType", "complete")  # E C16: absent means complete
        if kind == "task":
            return self.converter.decode(raw, CreateTaskResult)
        if kind == "complete":
            return self.converter.decode(raw, CallToolResult)
        if kind == "input_required":
            return self._input_required(raw)
        raise DecodeError("$.resultType", f"unknown resultType {kind!r} (E C17)", kind)

    def read_answer(self, raw: JSONObject, cls: type[T]) -> T | InputRequiredResult:
        kind = raw.get("resultType", "complete")  # E C16
        if kind == "complete":
            return self.converter.decode(raw, cls)
        if kind == "input_required":
            return self._input_required(raw)
        # E C17, C19: "task" on a request that declared no tasks is invalid, so is the unknown
        raise DecodeError("$.resultType", f"resultType {kind!r} is not an answer here", kind)

    def _input_required(self, raw: JSONObject) -> InputRequiredResult:
        answer = self.converter.decode(raw, InputRequiredResult)
        if answer.input_requests is None and answer.request_state is None:
            raise DecodeError("$", "input_required needs inputRequests or requestState (E 3.11)")
        return answer

    def read_task(self, raw: JSONObject) -> Task:
        kind = raw.get("resultType", "complete")
        if kind not in ("complete", "task"):  # A-1 tolerates "task" on tasks/get
            raise DecodeError("$.resultType", f"a task snapshot has resultType {kind!r}", kind)
        return _decode_task_2026(raw)

    def read_cancel(self, raw: JSONObject) -> Task | None:
        self.read_ack(raw)
        return None

    def created_task_id(self, raw: JSONObject | None) -> str | None:
        if raw is None or raw.get("resultType") != "task":
            return None
        task_id = raw.get("taskId")
        return task_id if isinstance(task_id, str) else None


# -- headers (E C57-C60) -------------------------------------------------------------------

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


def dialect_for(
    generation: Generation, capabilities: ClientCapabilities, client_info: Implementation
) -> Dialect:
    """The dialect of ``generation`` for a client declaring ``capabilities`` as ``client_info``."""
    cls: type[Dialect] = Legacy if generation is Generation.V2025_11_25 else Stateless
    return cls(cls.converter.encode(capabilities), cls.converter.encode(client_info))
