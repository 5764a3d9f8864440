"""JSON-RPC 2.0 envelopes (B:27-108). Params and results stay raw JSON; the codec types them."""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from ._base import JSONObject

__all__ = [
    "ErrorObject",
    "JSONRPCError",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "RequestId",
]

RequestId: TypeAlias = str | int
"""A request id: a string or an integer, never null (C-02)."""


@attrs.frozen
class JSONRPCRequest:
    id: RequestId
    method: str
    params: JSONObject | None = None


@attrs.frozen
class JSONRPCNotification:
    method: str
    params: JSONObject | None = None


@attrs.frozen
class JSONRPCResponse:
    id: RequestId
    result: JSONObject


@attrs.frozen
class ErrorObject:
    code: int
    message: str
    data: Any = None


@attrs.frozen
class JSONRPCError:
    """An error response; ``id`` is ``None`` when the server could not read the request id."""

    id: RequestId | None
    error: ErrorObject


JSONRPCMessage: TypeAlias = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse | JSONRPCError
