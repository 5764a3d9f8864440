"""stdio: the server is a child process speaking newline-delimited JSON (X:20-50, L:228-238).

The child runs in its own process group (a new session). Shutdown follows C-14: close the
child's stdin, wait, SIGTERM, wait, SIGKILL; the signals go to the whole group, so helpers the
server started do not outlive it, and every wait is bounded by :class:`StdioShutdown`, which
the caller can print and change. The child's stderr is free-form logging (X:3.3): it is kept
(the last ``stderr_limit`` bytes) and shown in the :class:`~mcp_tasks_client.ProcessExited`
error when the child dies, never read as a signal.

A hostile child cannot make this transport hang or hoard memory:

* Its exit is noticed from the process itself, not only from stdout's end: a grandchild that
  inherited stdout keeps the pipe open after the child is gone.
* One stdout line is at most ``Limits.max_message_bytes`` (:meth:`StdioTransport.apply_limits`);
  a longer one is a :class:`~mcp_tasks_client.LimitExceeded`.
* After a connection-wide fault (a line that is not JSON-RPC, an over-long line, the child's
  exit, a broken stdin) stdout is no longer read, and what was read waits in a small bounded
  buffer: nothing more is held for a connection that is already ruined.
* stdin is a pipe this transport made and writes itself (non-blocking), so it always knows how
  many bytes of a line went out. A send cancelled before its first byte (the caller's deadline
  passed while the loop was busy elsewhere) sent nothing and leaves the connection usable. A
  write cut part-way (the child stopped reading, the caller's deadline passed) left half a line
  in the pipe, so the framing is lost: the transport is broken from then on, and every later
  send fails at once instead of blocking.
* A child that closes its stdout but keeps running is reported as having closed its stdout
  (a TransportClosed), not as an exit with no code.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from types import TracebackType

import anyio
import anyio.abc
import anyio.lowlevel
import attrs
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .. import observability as _obs
from .._codec.messages import serialize_message
from .._exceptions import (
    LimitExceeded,
    MCPTasksError,
    ProcessExited,
    TransportClosed,
    TransportError,
    UsageError,
)
from .._limits import Limits
from ..models import JSONRPCMessage
from ._framing import decode_line
from .base import Incoming, Transport, TransportFault

log = _obs.get_logger("transport.stdio")

__all__ = ["StdioShutdown", "StdioTransport"]

_INCOMING_BUFFER = 16
"""Messages read from stdout but not yet received: the reader waits when this many are queued,
so a child that floods stdout fills its own pipe, not this process's memory."""

_EXIT_GRACE = 0.5
"""Seconds the stdout reader gets, once the child has exited, to hand over what the child wrote
before it died; past that, stdout is abandoned (a grandchild may hold it open forever)."""

_GROUP_POLL = 0.05
"""Seconds between checks that the child's process group has emptied during shutdown."""


@attrs.frozen
class StdioShutdown:
    """How long each step of closing the child may take (C-14), in seconds."""

    after_stdin_close: float = 2.0
    after_terminate: float = 2.0
    after_kill: float = 2.0


class _CountingReceiveStream(anyio.abc.ByteReceiveStream):
    """Counts the bytes taken from the child's stdout, so a test can see reading has stopped."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream) -> None:
        self.inner = inner
        self.count = 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self.inner.receive(max_bytes)
        self.count += len(data)
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


class StdioTransport(Transport):
    """Spawns ``command`` and talks to it over its stdin and stdout.

    The child runs in its own process group; closing the transport closes its stdin, then
    signals the whole group (SIGTERM, then SIGKILL), each step bounded by ``shutdown``. A child
    that exits ends the connection with ProcessExited (its return code and stderr tail).

    Args:
        command: The program and its arguments (``["python", "server.py"]``); not a shell line.
        env: Variables set for the child on top of this process's environment.
        cwd: The child's working directory; ``None``: this process's.
        shutdown: How long each step of closing the child may take (:class:`StdioShutdown`).
        stderr_limit: Bytes of the child's stderr kept (the tail), for ProcessExited and logs.
    """

    @property
    def identity(self) -> str:
        return "stdio:" + shlex.join(self.command)

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        shutdown: StdioShutdown = StdioShutdown(),
        stderr_limit: int = 64 * 1024,
    ) -> None:
        if not command:
            raise UsageError("StdioTransport needs a command to run")
        self.command = tuple(command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.shutdown = shutdown
        self.stderr_limit = stderr_limit
        self._limits = Limits()
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        self._process: anyio.abc.Process | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._send_lock = anyio.Lock()
        self._incoming_send: MemoryObjectSendStream[Incoming]
        self._incoming_receive: MemoryObjectReceiveStream[Incoming]
        self._incoming_send, self._incoming_receive = anyio.create_memory_object_stream[Incoming](
            _INCOMING_BUFFER
        )
        self._stdout: _CountingReceiveStream | None = None
        # The one connection-wide fault; the stdout reader delivers it, once, after the
        # messages it had already read.
        self._fault: MCPTasksError | None = None
        self._stop_reading = False
        self._stdout_scope: anyio.CancelScope | None = None
        self._stdout_done = anyio.Event()
        self._stdin_broken: TransportError | None = None
        self._stdin_fd: int | None = None  # the write end of the child's stdin (non-blocking)
        self._group_empty = False

    def apply_limits(self, limits: Limits) -> None:
        """The caller's limits: ``limits.max_message_bytes`` bounds one stdout line."""
        self._limits = limits

    @property
    def max_message_bytes(self) -> int:
        """The longest stdout line accepted (``Limits.max_message_bytes``)."""
        return self._limits.max_message_bytes

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    @property
    def bytes_read(self) -> int:
        """Bytes taken from the child's stdout so far; it stops growing after a fatal fault."""
        return self._stdout.count if self._stdout is not None else 0

    @property
    def buffered_messages(self) -> int:
        """Messages and faults read but not yet received (at most a small fixed number)."""
        return self._incoming_send.statistics().current_buffer_used

    def stderr_text(self) -> str:
        """What the child wrote to stderr (the last ``stderr_limit`` bytes)."""
        return self._stderr.decode("utf-8", "replace")

    async def __aenter__(self) -> StdioTransport:
        """Deadline: none (starting a process does not wait on it). Cancelled: a started child is
        stopped again."""
        env = None if self.env is None else {**os.environ, **self.env}
        # stdin is our own pipe, written without a stream in between, so a send knows whether
        # any byte of a line left before it was cancelled (see send).
        stdin_read, stdin_write = os.pipe()
        try:
            self._process = await anyio.open_process(
                list(self.command),
                stdin=stdin_read,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                start_new_session=True,  # its own process group: shutdown signals reach helpers
            )
        except BaseException:
            os.close(stdin_write)
            raise
        finally:
            os.close(stdin_read)  # the child holds its own copy
        os.set_blocking(stdin_write, False)
        self._stdin_fd = stdin_write
        log.debug("started %s (pid %s)", self.command[0], self._process.pid)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._read_stdout)
        self._task_group.start_soon(self._read_stderr)
        self._task_group.start_soon(self._watch_process)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Deadline: the StdioShutdown steps (close stdin, wait, terminate, kill), each bounded.
        Cancelled: the shutdown still runs to its end, shielded."""
        assert self._task_group is not None
        process = self._process
        assert process is not None
        with anyio.CancelScope(shield=True):
            await self._stop_process()
        try:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(None, None, None)  # never wrap the caller's error
        finally:
            self._incoming_send.close()
            self._incoming_receive.close()
            # Release the pipes: one left unread (stdout after a fatal fault) would keep the
            # process's resources alive past the event loop. Only once the child is reaped,
            # so this cannot wait: a child that survived SIGKILL is left as it is.
            if process.returncode is not None:
                with anyio.CancelScope(shield=True):
                    await process.aclose()

    # -- shutdown (C-14) ---------------------------------------------------------------------

    async def _stop_process(self) -> None:
        process = self._process
        assert process is not None
        # Closing stdin is bounded too: a pipe the child stopped reading may never drain.
        self._close_stdin()
        with anyio.move_on_after(self.shutdown.after_stdin_close):
            await process.wait()
        # The child may be gone while what it started lives on in its group: signal the group
        # until it is empty, not only until the child has exited.
        for sig, wait in (
            (signal.SIGTERM, self.shutdown.after_terminate),
            (signal.SIGKILL, self.shutdown.after_kill),
        ):
            if not self._group_alive(process):
                return
            _signal_group(process.pid, sig)
            with anyio.move_on_after(wait):
                await process.wait()
                # No event tells when processes that are not our children exit: poll.
                while self._group_alive(process):  # noqa: ASYNC110
                    await anyio.sleep(_GROUP_POLL)

    def _close_stdin(self) -> None:
        """Close the child's stdin (it sees its end); a send waiting on the pipe is woken."""
        fd, self._stdin_fd = self._stdin_fd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)

    def _group_alive(self, process: anyio.abc.Process) -> bool:
        """Whether the child, or anything left in its process group, still exists.

        Once the group is seen empty it stays so (nothing is left to fork into it), and its
        number is never signalled again: the system may give it to an unrelated process.
        """
        if self._group_empty:
            return False
        if process.returncode is None:
            return True
        try:
            os.killpg(process.pid, 0)
        except (ProcessLookupError, PermissionError):
            self._group_empty = True
            return False
        return True

    # -- sending -----------------------------------------------------------------------------

    async def send(self, message: JSONRPCMessage, *, held: bool = False) -> None:
        """Deadline: the caller's scope (a child that stops reading its stdin is found out by it).
        Cancelled before the first byte is written: nothing was sent, and the connection stays
        usable. Cancelled part-way: the line framing is lost, and the connection ends with a
        TransportError (X:3.3)."""
        if self._process is None:
            raise TransportClosed("the stdio transport is not open")
        if self._stdin_broken is not None:
            raise self._stdin_broken
        data = serialize_message(message) + b"\n"
        async with self._send_lock:
            if self._stdin_broken is not None:
                raise self._stdin_broken
            await anyio.lowlevel.checkpoint_if_cancelled()
            if await self._write(data):
                await anyio.lowlevel.cancel_shielded_checkpoint()
                return
        raise await self._ended("stdin")

    async def _write(self, data: bytes) -> bool:
        """Write all of ``data`` to the child's stdin; False if the child closed it.

        The fd is non-blocking, so each ``os.write`` takes what the pipe has room for at once;
        only waiting for room is a cancellation point, and then the bytes already written are
        known: none, and the caller's cancellation leaves the framing intact; some, and the
        framing is lost (the transport breaks).
        """
        view = memoryview(data)
        sent = 0
        while sent < len(data):
            fd = self._stdin_fd
            if fd is None:
                raise TransportClosed("the stdio transport is closed")
            try:
                sent += os.write(fd, view[sent:])
            except BlockingIOError:
                try:
                    await anyio.wait_writable(fd)
                except anyio.ClosedResourceError:
                    raise TransportClosed("the stdio transport is closed") from None
                except BaseException:
                    if sent:  # part of the line is in the pipe: the framing is lost (X:3.3)
                        self._break_stdin()
                    raise
            except OSError:  # EPIPE: the child closed its stdin (it is exiting, most likely)
                if sent:
                    self._break_stdin()
                return False
        return True

    def _break_stdin(self) -> None:
        if self._stdin_broken is None:
            self._stdin_broken = TransportError(
                "the server stopped reading its stdin: a write was cut short, so the line "
                "framing is lost and the connection cannot be used"
            )
            self._fail(self._stdin_broken)

    # -- receiving ---------------------------------------------------------------------------

    async def receive(self) -> Incoming:
        """Deadline: none (see :meth:`Transport.receive`). Cancelled: stops waiting; nothing is
        lost."""
        try:
            return await self._incoming_receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the server process is gone") from None

    def _record(self, error: MCPTasksError) -> None:
        """Keep the connection-wide fault (the first one wins); the reader delivers it."""
        if self._fault is None:
            self._fault = error
        self._stop_reading = True

    def _fail(self, error: MCPTasksError) -> None:
        """Record the fault from outside the reader, and interrupt its read of stdout."""
        self._record(error)
        self._stop_reader()

    def _stop_reader(self) -> None:
        self._stop_reading = True
        if self._stdout_scope is not None:
            self._stdout_scope.cancel()

    async def _ended(self, stream: str) -> TransportError:
        """Why the child's ``stream`` (stdin or stdout) ended: its exit (ProcessExited), or,
        when it is still running after ``shutdown.after_terminate``, that it closed the pipe."""
        process = self._process
        assert process is not None
        with anyio.move_on_after(self.shutdown.after_terminate):
            await process.wait()
        with anyio.move_on_after(1.0):  # let the last words on stderr arrive
            await self._stderr_done.wait()
        if process.returncode is None:
            return TransportClosed(
                f"the server closed its {stream} but is still running (pid {process.pid}); "
                f"stderr: {self.stderr_text()[-500:]!r}"
            )
        return ProcessExited(process.returncode, self.stderr_text())

    async def _watch_process(self) -> None:
        """Notice the child's exit even while a grandchild holds its stdout open."""
        process = self._process
        assert process is not None
        await process.wait()
        log.debug("pid %s exited with %s", process.pid, process.returncode)
        self._group_alive(process)  # notes now if the child left nothing behind
        with anyio.move_on_after(_EXIT_GRACE):  # what the child wrote before dying still counts
            await self._stdout_done.wait()
        self._stop_reader()

    async def _read_stdout(self) -> None:
        """Deliver stdout's messages, then exactly one connection-wide fault, then the end."""
        process = self._process
        assert process is not None
        assert process.stdout is not None
        self._stdout = _CountingReceiveStream(process.stdout)
        try:
            await self._read_lines(BufferedByteReceiveStream(self._stdout))
            self._stdout_done.set()
            if self._fault is None:  # stdout ended, or the child exited: say why
                self._record(await self._ended("stdout"))
            assert self._fault is not None
            await self._incoming_send.send(TransportFault(None, self._fault))
        finally:
            self._stdout_done.set()
            self._incoming_send.close()

    async def _read_lines(self, stream: BufferedByteReceiveStream) -> None:
        """Read stdout until it ends, a fatal fault is recorded, or the reader is stopped."""
        limit = self.max_message_bytes
        while not self._stop_reading:
            line: bytes | None = None
            with anyio.CancelScope() as scope:
                self._stdout_scope = scope
                try:
                    line = await stream.receive_until(b"\n", limit)
                except anyio.DelimiterNotFound:
                    self._record(LimitExceeded("max_message_bytes", limit, "a stdio line"))
                except (
                    anyio.IncompleteRead,
                    anyio.EndOfStream,
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                ):
                    pass
                finally:
                    self._stdout_scope = None
            if line is None:
                return
            if len(line) > limit:  # the chunk that crossed the limit also held the newline
                self._record(LimitExceeded("max_message_bytes", limit, "a stdio line"))
                return
            if not line.strip():
                continue
            item = decode_line(line)
            if isinstance(item, TransportFault):  # not JSON-RPC: the stream is ruined (X:3.3)
                self._record(item.error)
                return
            await self._incoming_send.send(item)

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


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal every process in the child's group; one already gone is not an error."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
