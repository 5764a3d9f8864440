"""stdio: the server is a child process speaking newline-delimited JSON (X:20-50, L:228-238).

Shutdown follows C-14: close the child's stdin, wait, SIGTERM, wait, SIGKILL; every wait is
bounded by :class:`StdioShutdown`, which the caller can print and change. The child's stderr
is free-form logging (X:3.3): it is kept (the last ``stderr_limit`` bytes) and shown in the
:class:`~mcp_tasks_client.ProcessExited` error when the child dies, never read as a signal.
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Mapping, Sequence
from types import TracebackType

import anyio
import anyio.abc
import attrs
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._errors import DecodeError, ProcessExited, TransportClosed, UsageError
from .._wire.jsonrpc import serialize_message
from ..models import JSONRPCMessage
from ._framing import decode_line
from .base import Incoming, Transport, TransportFault

__all__ = ["StdioShutdown", "StdioTransport"]


@attrs.frozen
class StdioShutdown:
    """How long each step of closing the child may take (C-14), in seconds."""

    after_stdin_close: float = 2.0
    after_terminate: float = 2.0
    after_kill: float = 2.0


class StdioTransport(Transport):
    """Spawns ``command`` and talks to it over its stdin and stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        shutdown: StdioShutdown = StdioShutdown(),
        max_message_bytes: int = 64 * 1024 * 1024,
        stderr_limit: int = 64 * 1024,
    ) -> None:
        if not command:
            raise UsageError("StdioTransport needs a command to run")
        self.command = tuple(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.shutdown = shutdown
        self.max_message_bytes = max_message_bytes
        self.stderr_limit = stderr_limit
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        self._process: anyio.abc.Process | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._send_lock = anyio.Lock()
        self._incoming_send: MemoryObjectSendStream[Incoming]
        self._incoming_receive: MemoryObjectReceiveStream[Incoming]
        self._incoming_send, self._incoming_receive = anyio.create_memory_object_stream[Incoming](
            math.inf
        )

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    def stderr_text(self) -> str:
        """What the child wrote to stderr (the last ``stderr_limit`` bytes)."""
        return self._stderr.decode("utf-8", "replace")

    async def __aenter__(self) -> StdioTransport:
        env = None if self.env is None else {**os.environ, **self.env}
        self._process = await anyio.open_process(
            list(self.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=self.cwd,
        )
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._read_stdout)
        self._task_group.start_soon(self._read_stderr)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        with anyio.CancelScope(shield=True):
            await self._stop_process()
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)  # never wrap the caller's error
        self._incoming_send.close()
        self._incoming_receive.close()

    async def _stop_process(self) -> None:
        process = self._process
        assert process is not None
        if process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass
        for step, wait in (
            (None, self.shutdown.after_stdin_close),
            (process.terminate, self.shutdown.after_terminate),
            (process.kill, self.shutdown.after_kill),
        ):
            if process.returncode is not None:
                return
            if step is not None:
                try:
                    step()
                except ProcessLookupError:
                    pass
            with anyio.move_on_after(wait):
                await process.wait()

    async def send(self, message: JSONRPCMessage) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise TransportClosed("the stdio transport is not open")
        data = serialize_message(message) + b"\n"
        async with self._send_lock:
            try:
                await process.stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                raise await self._exited() from None

    async def receive(self) -> Incoming:
        try:
            return await self._incoming_receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the server process is gone") from None

    async def _exited(self) -> ProcessExited:
        process = self._process
        assert process is not None
        with anyio.move_on_after(self.shutdown.after_terminate):
            await process.wait()
        with anyio.move_on_after(1.0):  # let the last words on stderr arrive
            await self._stderr_done.wait()
        return ProcessExited(process.returncode, self.stderr_text())

    async def _read_stdout(self) -> None:
        process = self._process
        assert process is not None
        assert process.stdout is not None
        stream = BufferedByteReceiveStream(process.stdout)
        try:
            while True:
                try:
                    line = await stream.receive_until(b"\n", self.max_message_bytes)
                except anyio.DelimiterNotFound:
                    fault = DecodeError("$", f"message longer than {self.max_message_bytes} bytes")
                    await self._incoming_send.send(TransportFault(None, fault))
                    return
                if line.strip():
                    await self._incoming_send.send(decode_line(line))
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
            pass
        # stdout closed: the child is exiting. Tell the client why, then end the stream.
        await self._incoming_send.send(TransportFault(None, await self._exited()))
        self._incoming_send.close()

    async def _read_stderr(self) -> None:
        process = self._process
        assert process is not None
        assert process.stderr is not None
        try:
            async for chunk in process.stderr:
                self._stderr.extend(chunk)
                if len(self._stderr) > self.stderr_limit:
                    del self._stderr[: len(self._stderr) - self.stderr_limit]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self._stderr_done.set()
