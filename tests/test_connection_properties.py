"""Properties of :class:`RPCConnection`, the sans-I/O JSON-RPC correlation (B, C-02, C-03, C-47).

A hypothesis state machine drives one connection with every kind of incoming and outgoing
message, next to a plain model of what must be pending and what must still be answered; a
few example tests pin the single rules.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_tasks_client._sansio.connection import (
    DuplicateRequest,
    ErrorReceived,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResultReceived,
    RPCConnection,
    UncorrelatedError,
)
from mcp_tasks_client.errors import (
    InvalidParams,
    MethodNotFound,
    RPCError,
    UnexpectedResponse,
    UsageError,
)
from mcp_tasks_client.models import (
    ErrorObject,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from mcp_tasks_client.testing import error_objects, json_objects

METHODS = st.sampled_from(["tools/call", "tasks/get", "tasks/result", "tasks/cancel", "ping"])
SERVER_METHODS = st.sampled_from(["elicitation/create", "sampling/createMessage", "roots/list"])
SERVER_IDS: st.SearchStrategy[RequestId] = st.integers(min_value=0, max_value=6) | st.sampled_from(
    ["s-1", "s-2", "0", "1"]
)
"""Incoming request ids from a small pool, so that reuse happens often; ``"1"`` and ``1``
are different ids (C-02 allows strings and integers)."""


def answer(
    request_id: RequestId, *, error: bool, result: Any = None
) -> JSONRPCResponse | JSONRPCError:
    if error:
        return JSONRPCError(request_id, ErrorObject(-32603, "internal error"))
    return JSONRPCResponse(request_id, result if result is not None else {})


class ConnectionMachine(RuleBasedStateMachine):
    """One connection, and a model of it: our pending and abandoned requests, the server's
    unanswered requests, and how often each of our requests was resolved."""

    def __init__(self) -> None:
        super().__init__()
        self.connection = RPCConnection()
        self.sent: list[RequestId] = []
        self.pending: dict[RequestId, str] = {}
        self.abandoned: dict[RequestId, str] = {}
        self.resolved: Counter[RequestId] = Counter()
        self.unanswered: set[RequestId] = set()
        self.answered: set[RequestId] = set()

    # -- what we send ------------------------------------------------------------------------

    @rule(method=METHODS, params=st.none() | json_objects(max_size=1))
    def send_request(self, method: str, params: dict[str, Any] | None) -> None:
        request = self.connection.request(method, params)
        assert isinstance(request.id, int)
        assert request.id not in self.sent  # C-02: never reused on one connection
        assert request.method == method
        assert request.params == params
        self.sent.append(request.id)
        self.pending[request.id] = method

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def abandon_pending(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.pending)), label="pending id")
        self.connection.abandon(request_id)
        self.abandoned[request_id] = self.pending.pop(request_id)

    @rule(data=st.data())
    def abandon_what_is_not_pending(self, data: st.DataObject) -> None:
        """Abandoning an answered, abandoned or never-sent id changes nothing."""
        not_pending = [i for i in self.sent if i not in self.pending]
        choices = st.sampled_from(not_pending) if not_pending else st.nothing()
        request_id = data.draw(choices | st.integers(min_value=len(self.sent) + 1), label="id")
        self.connection.abandon(request_id)

    @rule(method=st.text(max_size=10), params=st.none() | json_objects(max_size=1))
    def send_notification(self, method: str, params: dict[str, Any] | None) -> None:
        assert self.connection.notify(method, params) == JSONRPCNotification(method, params)

    # -- answers to what we sent -----------------------------------------------------------

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), error=st.booleans(), result=json_objects(max_size=1))
    def receive_answer_for_pending(
        self, data: st.DataObject, error: bool, result: dict[str, Any]
    ) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.pending)), label="pending id")
        event = self.connection.receive(answer(request_id, error=error, result=result))
        method = self.pending.pop(request_id)
        if error:
            assert isinstance(event, ErrorReceived)
            assert isinstance(event.error, RPCError)
            assert (event.error.code, event.error.method) == (-32603, method)
        else:
            assert event == ResultReceived(request_id, method, result)
        assert (event.request_id, event.method) == (request_id, method)
        self.resolved[request_id] += 1

    @precondition(lambda self: self.abandoned)
    @rule(data=st.data(), error=st.booleans())
    def receive_late_answer(self, data: st.DataObject, error: bool) -> None:
        """C-47: the answer to an abandoned request is reported as late, once."""
        request_id = data.draw(st.sampled_from(sorted(self.abandoned)), label="abandoned id")
        message = answer(request_id, error=error)
        event = self.connection.receive(message)
        assert event == LateResponse(request_id, self.abandoned.pop(request_id), message)
        self.resolved[request_id] += 1

    @precondition(lambda self: self.resolved)
    @rule(data=st.data(), error=st.booleans())
    def receive_second_answer(self, data: st.DataObject, error: bool) -> None:
        """A second answer to an answered (or late-answered) request matches nothing."""
        request_id = data.draw(st.sampled_from(sorted(self.resolved)), label="answered id")
        with pytest.raises(UnexpectedResponse) as info:
            self.connection.receive(answer(request_id, error=error))
        assert info.value.message_id == request_id

    @rule(data=st.data(), error=st.booleans())
    def receive_answer_for_unused_id(self, data: st.DataObject, error: bool) -> None:
        """An id we never sent, including the string twin ``"3"`` of a pending ``3``."""
        twins = [str(i) for i in self.pending]
        unused = st.integers().filter(lambda i: i not in self.sent) | st.text(max_size=4)
        if twins:
            unused |= st.sampled_from(twins)
        request_id = data.draw(unused, label="unused id")
        with pytest.raises(UnexpectedResponse):
            self.connection.receive(answer(request_id, error=error))

    @rule(error=error_objects())
    def receive_uncorrelated_error(self, error: ErrorObject) -> None:
        event = self.connection.receive(JSONRPCError(None, error))
        assert isinstance(event, UncorrelatedError)
        assert (event.error.code, event.error.message) == (error.code, error.message)

    # -- what the server asks ----------------------------------------------------------------

    @rule(request_id=SERVER_IDS, method=SERVER_METHODS, params=st.none() | json_objects(1))
    def receive_server_request(
        self, request_id: RequestId, method: str, params: dict[str, Any] | None
    ) -> None:
        request = JSONRPCRequest(request_id, method, params)
        if request_id in self.unanswered:  # a re-delivery: reported, never answered twice
            assert self.connection.receive(request) == DuplicateRequest(request)
            return
        assert self.connection.receive(request) == RequestReceived(request)
        self.unanswered.add(request_id)

    @precondition(lambda self: self.unanswered)
    @rule(data=st.data())
    def server_reuses_unanswered_id(self, data: st.DataObject) -> None:
        """An id still unanswered arriving again is a duplicate delivery, not a new request."""
        request_id = data.draw(st.sampled_from(sorted(self.unanswered, key=repr)), label="id")
        request = JSONRPCRequest(request_id, "ping")
        assert self.connection.receive(request) == DuplicateRequest(request)

    @precondition(lambda self: self.unanswered)
    @rule(data=st.data(), error=st.booleans(), result=json_objects(max_size=1))
    def respond(self, data: st.DataObject, error: bool, result: dict[str, Any]) -> None:
        """C-03: the answer carries the request's id; it is given exactly once."""
        request_id = data.draw(st.sampled_from(sorted(self.unanswered, key=repr)), label="id")
        if error:
            sent: JSONRPCResponse | JSONRPCError = self.connection.respond_error(
                request_id, -32601, "Method not found"
            )
            assert sent == JSONRPCError(request_id, ErrorObject(-32601, "Method not found"))
        else:
            sent = self.connection.respond(request_id, result)
            assert sent == JSONRPCResponse(request_id, result)
        self.unanswered.remove(request_id)
        self.answered.add(request_id)

    @rule(data=st.data(), error=st.booleans())
    def respond_to_nothing(self, data: st.DataObject, error: bool) -> None:
        """Answering twice, or an id the server never used, is the caller's mistake."""
        answered = sorted(self.answered - self.unanswered, key=repr)
        never_used = st.integers(min_value=100) | st.text(min_size=4, max_size=6)
        choices = never_used | (st.sampled_from(answered) if answered else st.nothing())
        request_id = data.draw(choices, label="id")
        respond: Any = self.connection.respond_error if error else self.connection.respond
        arguments: tuple[Any, ...] = (-32603, "x") if error else ({},)
        with pytest.raises(UsageError):
            respond(request_id, *arguments)

    @rule(method=st.text(max_size=10), params=st.none() | json_objects(max_size=1))
    def receive_notification(self, method: str, params: dict[str, Any] | None) -> None:
        notification = JSONRPCNotification(method, params)
        assert self.connection.receive(notification) == NotificationReceived(notification)

    @rule()
    def fail_pending(self) -> None:
        """The transport broke: every pending request is handed back, and forgotten."""
        failed = self.connection.fail_pending()
        assert dict(failed) == self.pending
        assert [i for i, _ in failed] == sorted(self.pending)
        for request_id in self.pending:
            self.resolved[request_id] += 1
        self.pending.clear()

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def ids_are_never_reused(self) -> None:
        assert len(set(self.sent)) == len(self.sent)
        assert self.sent == sorted(self.sent)

    @invariant()
    def each_request_is_resolved_at_most_once(self) -> None:
        assert all(count == 1 for count in self.resolved.values())
        assert not (set(self.resolved) & set(self.pending))
        assert not (set(self.pending) & set(self.abandoned))

    @invariant()
    def pending_matches_the_model(self) -> None:
        assert self.connection.pending == self.pending

    @invariant()
    def unanswered_matches_the_model(self) -> None:
        assert self.connection.unanswered == frozenset(self.unanswered)


ConnectionMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestConnectionMachine = ConnectionMachine.TestCase


# --- examples ------------------------------------------------------------------------------


def test_c02_ids_are_integers_from_one_upwards() -> None:
    connection = RPCConnection()
    ids = [connection.request("ping").id for _ in range(3)]
    assert ids == [1, 2, 3]
    assert connection.pending == {1: "ping", 2: "ping", 3: "ping"}


def test_c47_late_response_is_reported_once_then_unexpected() -> None:
    connection = RPCConnection()
    request = connection.request("tasks/result", {"taskId": "t"})
    connection.abandon(request.id)
    assert connection.pending == {}
    late = JSONRPCResponse(request.id, {"content": []})
    assert connection.receive(late) == LateResponse(request.id, "tasks/result", late)
    with pytest.raises(UnexpectedResponse):
        connection.receive(late)


def test_c03_error_answer_keeps_code_message_data_and_method() -> None:
    connection = RPCConnection()
    request = connection.request("tasks/get", {"taskId": "t"})
    event = connection.receive(
        JSONRPCError(request.id, ErrorObject(-32602, "unknown task", {"taskId": "t"}))
    )
    assert isinstance(event, ErrorReceived)
    assert isinstance(event.error, InvalidParams)
    assert (event.error.code, event.error.message, event.error.data) == (
        -32602,
        "unknown task",
        {"taskId": "t"},
    )
    assert event.error.method == "tasks/get"
    request = connection.request("tools/call")
    event = connection.receive(JSONRPCError(request.id, ErrorObject(-32601, "no such")))
    assert isinstance(event, ErrorReceived)
    assert isinstance(event.error, MethodNotFound)


def test_c02_string_id_does_not_answer_an_integer_request() -> None:
    connection = RPCConnection()
    request = connection.request("ping")
    with pytest.raises(UnexpectedResponse):
        connection.receive(JSONRPCResponse(str(request.id), {}))
    assert connection.pending == {request.id: "ping"}


def test_c03_incoming_request_is_answered_exactly_once() -> None:
    connection = RPCConnection()
    request = JSONRPCRequest("s-1", "roots/list")
    assert connection.receive(request) == RequestReceived(request)
    again = JSONRPCRequest("s-1", "ping")
    assert connection.receive(again) == DuplicateRequest(again)
    assert connection.respond("s-1", {"roots": []}) == JSONRPCResponse("s-1", {"roots": []})
    assert connection.unanswered == frozenset()
    with pytest.raises(UsageError):
        connection.respond("s-1", {})
    with pytest.raises(UsageError):
        connection.respond_error("s-2", -32601, "Method not found")


def test_error_with_null_id_is_uncorrelated_and_resolves_nothing() -> None:
    connection = RPCConnection()
    request = connection.request("ping")
    event = connection.receive(JSONRPCError(None, ErrorObject(-32700, "Parse error")))
    assert isinstance(event, UncorrelatedError)
    assert event.error.code == -32700
    assert connection.pending == {request.id: "ping"}


def test_fail_pending_forgets_requests_whose_answers_become_unexpected() -> None:
    connection = RPCConnection()
    first = connection.request("tools/call")
    connection.request("tasks/get")
    assert connection.fail_pending() == [(1, "tools/call"), (2, "tasks/get")]
    assert connection.pending == {}
    with pytest.raises(UnexpectedResponse):
        connection.receive(JSONRPCResponse(first.id, {}))


def test_notifications_need_no_answer() -> None:
    connection = RPCConnection()
    notification = JSONRPCNotification("notifications/tasks/status", {"taskId": "t"})
    assert connection.receive(notification) == NotificationReceived(notification)
    assert connection.unanswered == frozenset()


def test_abandoned_ids_are_bounded_and_a_late_answer_is_still_late() -> None:
    """Issue 7 (weaker spot): the abandoned-id set grew forever. It keeps ABANDONED_KEPT ids;
    an answer to an older abandoned id is still a late answer (our ids only grow), while an
    id this client never used is still UnexpectedResponse."""
    from mcp_tasks_client._sansio.connection import ABANDONED_KEPT

    conn = RPCConnection()
    for _ in range(ABANDONED_KEPT + 500):
        conn.abandon(conn.request("tools/call").id)
    assert conn.abandoned_count == ABANDONED_KEPT
    assert isinstance(conn.receive(JSONRPCResponse(1, {})), LateResponse)
    newest = ABANDONED_KEPT + 500
    late = conn.receive(JSONRPCResponse(newest, {}))
    assert isinstance(late, LateResponse)
    assert late.method == "tools/call"
    with pytest.raises(UnexpectedResponse):
        conn.receive(JSONRPCResponse(newest + 10, {}))
