"""Requests a server sends the client: elicitation, sampling, roots (E, S, client/roots)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TypeAlias

import attrs

from ._base import JSONObject, extra_field, meta_field
from .content import ContentBlock
from .tasks import InputRequest, TaskMetadata

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "ElicitAction",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "InputRequiredResult",
    "ListRootsResult",
    "Root",
    "SamplingMessage",
]


@attrs.frozen
class ElicitRequestFormParams:
    """``elicitation/create`` in form mode (a missing ``mode`` means form, C-49)."""

    message: str
    requested_schema: JSONObject
    task: TaskMetadata | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ElicitRequestURLParams:
    """``elicitation/create`` in URL mode: the library never opens the URL (C-51)."""

    message: str
    url: str
    elicitation_id: str
    task: TaskMetadata | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


ElicitRequestParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams


class ElicitAction(enum.Enum):
    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


@attrs.frozen
class ElicitResult:
    """The client's answer to ``elicitation/create``."""

    action: ElicitAction
    content: JSONObject | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class SamplingMessage:
    """One message of a sampling conversation; ``content`` is one block or several."""

    role: str
    content: ContentBlock | tuple[ContentBlock, ...]
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class CreateMessageRequestParams:
    """``sampling/createMessage`` params."""

    messages: tuple[SamplingMessage, ...]
    max_tokens: int
    system_prompt: str | None = None
    include_context: str | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] | None = None
    model_preferences: JSONObject | None = None
    metadata: JSONObject | None = None
    task: TaskMetadata | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class CreateMessageResult:
    """The client's answer to ``sampling/createMessage``."""

    role: str
    content: ContentBlock | tuple[ContentBlock, ...]
    model: str
    stop_reason: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class Root:
    """A root the client exposes."""

    uri: str
    name: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class ListRootsResult:
    """The client's answer to ``roots/list``."""

    roots: tuple[Root, ...]
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()


@attrs.frozen
class InputRequiredResult:
    """A 2026-07-28 MRTR answer (``resultType: "input_required"``, E C45-C48): the request
    needs these inputs first. Retry it with the answers (``ToolCall.answering``): a new
    request that repeats the params, adds ``inputResponses`` and echoes ``request_state``
    byte for byte (or leaves it out when none came)."""

    input_requests: Mapping[str, InputRequest] | None = None
    request_state: str | None = None
    meta: JSONObject | None = meta_field()
    extra: JSONObject = extra_field()
