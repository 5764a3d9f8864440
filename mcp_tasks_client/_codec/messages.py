"""JSON-RPC 2.0 envelopes, the same in every protocol generation (B:27-108, C-01..C-04)."""

from __future__ import annotations

import json
import json.encoder
from typing import Any

from .._exceptions import DecodeError
from ..models import (
    ErrorObject,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from ._converter import _DECODER, _kind_of, dumps, loads

__all__ = [
    "decode_message",
    "encode_message",
    "parse_answer",
    "parse_message",
    "serialize_message",
]


def parse_message(data: bytes | str) -> JSONRPCMessage:
    """Bytes off the wire as one JSON-RPC message, or a DecodeError."""
    return decode_message(loads(data))


def parse_answer(data: bytes | str, request_id: RequestId) -> JSONRPCMessage:
    """Bytes that came back on the request ``request_id``'s own stream (an HTTP POST's JSON
    body), as one JSON-RPC message: what ``parse_message`` reads, except that an error with a
    null id there is that request's answer (its id given). The common answer, exactly
    ``{"jsonrpc": "2.0", "id": request_id, "result": {...}}`` with an integer id, is read in
    one step, without classifying it; anything else (another id, another key, an error, a
    request) goes the general way, with the same DecodeErrors.

    The JSON of such a body is read by ``loads``'s own decoder's scanner when nothing in it
    needs ``loads``'s care (bytes with no backslash-u escape, so no lone surrogate; UTF-8; one
    value from the first byte to the last): the same value, two Python calls fewer a
    ``tasks/get`` (issue 39). Anything else, or anything the scanner refuses, is read by
    ``loads``, with its DecodeErrors."""
    value: Any = _NOT_READ
    if type(data) is bytes and b"\\u" not in data:
        try:
            text = data.decode("utf-8")
            value, end = _SCAN(text, 0)
            if end != len(text):
                value = _NOT_READ  # whitespace or more after the value: loads decides
        except Exception:  # not UTF-8, not JSON, a NaN, too deep: loads says which
            value = _NOT_READ
    if value is _NOT_READ:
        value = loads(data)
    if type(value) is dict and len(value) == 3:
        result = value.get("result")
        got = value.get("id")
        if (
            type(result) is dict
            and type(got) is int
            and got == request_id
            and value.get("jsonrpc") == "2.0"
        ):
            return JSONRPCResponse(got, result)
    message = decode_message(value)
    if type(message) is JSONRPCError and message.id is None:
        return JSONRPCError(request_id, message.error)
    return message


_NOT_READ: Any = object()
_SCAN: Any = _DECODER.scan_once  # type: ignore[attr-defined]  # loads's decoder, its checks


def serialize_message(message: JSONRPCMessage) -> bytes:
    """The message's bytes, as ``dumps(encode_message(message))`` writes them (compact, UTF-8,
    no NaN). Through the C encoder made once (:data:`_ENCODE`) where there is one:
    ``JSONEncoder.encode`` makes one per call, with a closure and a dict of the containers
    open (1.9 against 3.5 µs a ``tasks/get``: issue 39). Without that dict a circular value
    ends in RecursionError: then ``dumps`` writes it again and raises what it always did."""
    value = encode_message(message)
    if _ENCODE is not None:
        try:
            return "".join(_ENCODE(value, 0)).encode()
        except RecursionError:
            pass  # a circular value (or one nested too deep): dumps's own error
    return dumps(value)


# dumps's settings (``separators=(",", ":")``, ``ensure_ascii=False``, ``allow_nan=False``,
# json's own ``default``), no circular check; None where json has no C accelerator. It keeps
# no state between calls (no markers dict).
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_ENCODE: Any = (
    None
    if _C_MAKE_ENCODER is None
    else _C_MAKE_ENCODER(
        None,
        json.JSONEncoder().default,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        False,
        False,
        False,
    )
)


def _request_id(value: Any, *, allow_null: bool = False) -> Any:
    if value is None and allow_null:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DecodeError("$.id", f"expected a string or integer id, got {_kind_of(value)}", value)
    return value


def decode_message(value: Any) -> JSONRPCMessage:
    """Classify one parsed JSON-RPC message; anything else is a DecodeError naming the key."""
    if not isinstance(value, dict):
        raise DecodeError("$", f"expected a JSON-RPC message object, got {_kind_of(value)}", value)
    if value.get("jsonrpc") != "2.0":
        raise DecodeError("$.jsonrpc", "must be '2.0'", value.get("jsonrpc"))
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str):
            raise DecodeError("$.method", f"expected a string, got {_kind_of(method)}", method)
        params = value.get("params")
        if params is not None and not isinstance(params, dict):
            raise DecodeError("$.params", f"expected an object, got {_kind_of(params)}", params)
        if "id" in value:
            return JSONRPCRequest(_request_id(value["id"]), method, params)
        return JSONRPCNotification(method, params)
    if "result" in value:
        result = value["result"]
        if not isinstance(result, dict):
            raise DecodeError("$.result", f"expected an object, got {_kind_of(result)}", result)
        return JSONRPCResponse(_request_id(value.get("id")), result)
    if "error" in value:
        error = value["error"]
        if not isinstance(error, dict):
            raise DecodeError("$.error", f"expected an object, got {_kind_of(error)}", error)
        code, message = error.get("code"), error.get("message")
        if isinstance(code, bool) or not isinstance(code, int):
            raise DecodeError("$.error.code", "expected an integer (C-03)", code)
        if not isinstance(message, str):
            raise DecodeError("$.error.message", "expected a string", message)
        return JSONRPCError(
            _request_id(value.get("id"), allow_null=True),
            ErrorObject(code, message, error.get("data")),
        )
    raise DecodeError("$", "neither a request, a notification, a response nor an error", value)


def encode_message(message: JSONRPCMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0"}
    if isinstance(message, JSONRPCRequest):
        out["id"] = message.id
        out["method"] = message.method
        if message.params is not None:
            out["params"] = message.params
    elif isinstance(message, JSONRPCNotification):
        out["method"] = message.method
        if message.params is not None:
            out["params"] = message.params
    elif isinstance(message, JSONRPCResponse):
        out["id"] = message.id
        out["result"] = message.result
    else:
        out["id"] = message.id
        error: dict[str, Any] = {"code": message.error.code, "message": message.error.message}
        if message.error.data is not None:
            error["data"] = message.error.data
        out["error"] = error
    return out
