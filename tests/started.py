"""Narrowing a start's answer in tests that talk to 2025-11-25 servers, where it is always a
task (T:463); a 2026-07-28 server may answer inline instead (``CallToolResult``)."""

from __future__ import annotations

from mcp_tasks_client.models import CallToolResult, CreateTaskResult


def task_created(started: CreateTaskResult | CallToolResult) -> CreateTaskResult:
    """``started`` as the CreateTaskResult it must be here; AssertionError otherwise."""
    assert isinstance(started, CreateTaskResult), f"expected a task, got {started!r}"
    return started
