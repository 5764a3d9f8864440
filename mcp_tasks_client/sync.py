"""Blocking calls for synchronous code: a plain script, a notebook cell, a Django or Flask view.

For who does not write async code, in the httpx way (``httpx.Client`` beside
``httpx.AsyncClient``): :class:`SyncClient` and :class:`SyncPoller` are the :class:`Client` and
the :class:`Poller` with blocking methods, over the same builders (``ToolCall(...).as_task()``),
policies, outcomes and errors, with the same explicitness: nothing is polled unless you wait
or watch, the generation is the one you pass, handlers answer only what you registered.
:func:`threaded` makes a plain function an input handler; :func:`resume` is the blocking
``resume``.

Job: run the async API on one event loop of ours, in a thread of its own, and hand each call's
answer (or error) back to the calling thread. May import the package's front (``_client``,
``engine``, ``inputs``, ``resume`` and what they export) and ``anyio.from_thread``; nothing
imports it but the user.

Theory of operation. Entering a :class:`SyncClient` starts one thread running one event loop
(trio by default, asyncio with ``backend="asyncio"``) behind an anyio blocking portal, and opens
the async Client inside it. Every blocking method sends one coroutine to that loop and waits for
its answer; any number of threads may call at once (each call is a task of the loop), and the
calling thread's own event loop, if it runs one (a Jupyter cell), is never touched: ours is
elsewhere. A :class:`SyncPoller` runs on its client's loop. Leaving the ``with`` (or
``close()``) closes the Client as ``async with`` does, stops the loop and joins its thread:
nothing is left running. Iterators (``watch``, ``as_completed``, ``list_tools``) run their
async iterator in one task of the loop and hand over one item at a time (the loop waits until
you take it: a slow reader gets the latest snapshot, as ``Poller.watch`` promises).

Ctrl-C. A KeyboardInterrupt that reaches the calling thread while it waits (SIGINT, in the main
thread; a waiting thread wakes every ``_WAKE`` seconds to look for one) cancels the call's task
in the loop, waits for it to unwind (a second Ctrl-C stops waiting) and is raised again: the
wait ends as a cancelled ``await`` ends, so a task on the server keeps running (unless the
poller's ``PollPolicy.cancel_on_abandon`` says otherwise), as it does for the ``mcp-tasks``
command.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import functools
import inspect
import random
import sys
import threading
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Hashable,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Literal, ParamSpec, TypeVar, overload

import anyio
import anyio.from_thread
import anyio.to_thread
import attrs

from ._cache import ResultCache
from ._client import CallInputs, Client, Timeouts
from ._exceptions import ClientClosed, MCPTasksError, UsageError
from ._generation import Generation
from ._io.base import Transport
from ._limits import Limits
from ._sansio.progress import StatusMessage
from ._sansio.scheduler import PollPolicy
from .builders import TaskToolCall, ToolCall
from .engine import Poller, ProgressCallback, TaskRef, WatchItem
from .inputs import InputRouter
from .journal import Journal
from .models import (
    CallToolResult,
    ClientCapabilities,
    CreateTaskResult,
    DiscoverResult,
    Implementation,
    InitializeResult,
    ServerCapabilities,
    Task,
    Tool,
)
from .outcomes import Outcome
from .resume import ClientOpener, Resumed, RouterFactory
from .resume import resume as _resume

__all__ = ["Backend", "SyncClient", "SyncPoller", "resume", "threaded"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

Backend = Literal["trio", "asyncio"]
"""The event loop a SyncClient runs in its thread: trio (the library's reference) or asyncio."""


def threaded(handler: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A plain function as an input handler (``InputRouter.on_elicitation``, ``binding``,
    ``default_elicitation``...): each call runs ``handler`` in a worker thread of the client's
    event loop (``anyio.to_thread``), never in the loop's own thread and never in yours.

    So the handler may block (``input()``, a database query, a call on the SyncClient itself);
    questions of several tasks may be answered at once, each in a thread of its own (at most
    anyio's 40 worker threads), so a handler that shares state with your thread must lock it.
    Cancelled (the wait ended, Ctrl-C): the wait does not wait for the handler; it finishes
    in its thread and its answer is dropped.
    """
    if inspect.iscoroutinefunction(handler):
        raise UsageError(f"threaded() takes a plain function; {handler!r} is already async")

    async def in_worker_thread(*args: P.args, **kwargs: P.kwargs) -> R:
        return await anyio.to_thread.run_sync(
            functools.partial(handler, *args, **kwargs), abandon_on_cancel=True
        )

    return functools.wraps(handler)(in_worker_thread)


@attrs.define
class _Stop:
    """Cancels one call's work in the loop, whether or not it has started yet."""

    requested: bool = False
    scope: anyio.CancelScope | None = None
    finished: threading.Event = attrs.field(factory=threading.Event)
    """Set when the work has ended (or, cancelled before it began, will never begin)."""

    def started(self, scope: anyio.CancelScope) -> bool:
        """In the loop, as the work begins: whether to go on (False: it was cancelled)."""
        self.scope = scope
        return not self.requested

    def cancel(self) -> bool:
        """In the loop: cancel the work; whether it had begun (then wait for ``finished``)."""
        self.requested = True
        if self.scope is None:
            return False  # it will see ``requested`` and never begin
        self.scope.cancel()
        return True


_WAKE = 0.1
"""Seconds a blocked caller sleeps at most before it looks for a signal: CPython keeps a SIGINT
that lands just as a thread starts to wait on a lock until the wait ends, which for a task's
outcome may be hours. Waking costs no request; nothing is polled."""


def _settled(future: concurrent.futures.Future[T]) -> T:
    """The future's answer (or error), waited for in steps of ``_WAKE`` so that a Ctrl-C is
    raised here within that time, wherever it landed."""
    while not future.done():
        concurrent.futures.wait([future], timeout=_WAKE)
    return future.result()


def _outside_trio(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, which talks to the portal, called from a thread that is not running trio.

    Trio refuses a blocking call into any trio loop from a thread that runs trio itself (its
    guard against a deadlock on its own loop); a caller blocking in a trio program (a test,
    a trio host calling a library that uses the SyncClient) is not waiting on ours, so such a
    call hops through a short-lived thread of its own. Everywhere else it is called here."""
    trio = sys.modules.get("trio")
    if trio is None:
        return fn(*args)
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return fn(*args)  # this thread runs no trio
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def hop() -> None:
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # handed to the caller's thread
            done.set_exception(exc)

    threading.Thread(target=hop, name="sync-call-hop", daemon=True).start()
    return _settled(done)


class _Entered:
    """An async context manager entered in the loop, left once (by its owner, or at close)."""

    def __init__(self, manager: AbstractContextManager[Any]) -> None:
        self._manager: AbstractContextManager[Any] | None = manager

    def leave(self, exc: BaseException | None = None) -> None:
        manager, self._manager = self._manager, None
        if manager is not None:
            _outside_trio(manager.__exit__, type(exc) if exc is not None else None, exc, None)


class _Loop:
    """One event loop in a thread of its own, and the blocking calls into it."""

    def __init__(self, backend: Backend) -> None:
        if backend not in ("trio", "asyncio"):
            raise UsageError(f'backend= is "trio" or "asyncio", got {backend!r}')
        self._started = anyio.from_thread.start_blocking_portal(
            backend, name=f"mcp-tasks-{backend}-loop"
        )
        portal = self._started.__enter__()
        self._portal: anyio.from_thread.BlockingPortal | None = portal
        self._thread = _outside_trio(portal.call, threading.get_ident)
        """The loop's thread, which must never block on the loop."""
        self._entered: list[_Entered] = []

    @overload
    def run(self, fn: Callable[[], Awaitable[T]]) -> T: ...

    @overload
    def run(self, fn: Callable[[], T]) -> T: ...

    def run(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` in the loop (awaited when it returns an awaitable); its answer."""
        portal = self._open()
        stop = _Stop()

        async def guarded() -> Any:
            try:
                with anyio.CancelScope() as scope:
                    if not stop.started(scope):
                        return None
                    answer = fn()
                    return await answer if inspect.isawaitable(answer) else answer
                return None  # cancelled by Ctrl-C below: the KeyboardInterrupt is what is raised
            finally:
                stop.finished.set()

        future: concurrent.futures.Future[Any] | None = None
        try:
            future = _outside_trio(portal.start_task_soon, guarded)
            return _settled(future)
        except concurrent.futures.CancelledError:
            raise ClientClosed("the SyncClient was closed while this call waited") from None
        except RuntimeError as exc:
            if future is None:  # the loop stopped meanwhile
                raise UsageError("closed: its event loop has stopped (open a new one)") from exc
            raise
        except BaseException:
            # KeyboardInterrupt (or another async exception) wherever it landed here, unless
            # the work had answered already: cancel it and wait for it to unwind.
            if future is None or not future.done():
                self._cancel(portal, stop)
            raise

    @staticmethod
    def _cancel(portal: anyio.from_thread.BlockingPortal, stop: _Stop) -> None:
        """Cancel the call's work and wait for it to unwind; a second Ctrl-C stops waiting."""
        try:
            begun = _outside_trio(portal.call, stop.cancel)
        except RuntimeError:
            return  # the loop has stopped: nothing runs any more
        while begun and not stop.finished.wait(_WAKE):
            pass  # a second Ctrl-C (looked for at each wake) stops waiting

    def enter(self, manager: contextlib.AbstractAsyncContextManager[T]) -> tuple[T, _Entered]:
        """Enter ``manager`` in one task of the loop; its owner leaves it, or :meth:`close`
        does (the last entered first)."""
        wrapped = self._open().wrap_async_context_manager(manager)
        value = _outside_trio(wrapped.__enter__)
        entered = _Entered(wrapped)
        self._entered.append(entered)
        return value, entered

    def iterate(self, items: Callable[[], AsyncIterator[T]]) -> Generator[T, None, None]:
        """The items of ``items()``, iterated in one task of the loop, one at a time."""
        send, receive = anyio.create_memory_object_stream[T](0)
        stop = _Stop()

        async def pump() -> None:
            try:
                async with send:
                    with anyio.CancelScope() as scope:
                        if not stop.started(scope):
                            return
                        iterator = items()
                        try:
                            async for item in iterator:
                                await send.send(item)
                        except anyio.BrokenResourceError:
                            return  # the reader went away
                        finally:
                            close = getattr(iterator, "aclose", None)
                            if close is not None:
                                with anyio.CancelScope(shield=True):
                                    await close()
            finally:
                stop.finished.set()

        portal = self._open()
        pumping: concurrent.futures.Future[None] | None = None
        try:
            pumping = _outside_trio(portal.start_task_soon, pump)
            while True:
                try:
                    item = self.run(receive.receive)
                except anyio.EndOfStream:
                    break
                yield item
            try:
                _settled(pumping)  # what ended the iteration, if it was an error
            except concurrent.futures.CancelledError:
                raise ClientClosed("the SyncClient was closed during this iteration") from None
        finally:
            if pumping is None or not pumping.done():  # broken out of, or interrupted
                self._cancel(portal, stop)
            with contextlib.suppress(RuntimeError):
                _outside_trio(portal.call, receive.close)

    def _open(self) -> anyio.from_thread.BlockingPortal:
        self._not_in_loop()
        if self._portal is None:
            raise UsageError("closed: its event loop has stopped (open a new one)")
        return self._portal

    def _not_in_loop(self) -> None:
        if threading.get_ident() == self._thread:
            raise UsageError(
                "no blocking call from inside the client's event loop (an on_created, "
                "on_progress or reader callback): it would wait for itself (a threaded() "
                "handler may call)"
            )

    def close(self) -> None:
        """Leave what was entered (the last first), cancel whatever still runs in the loop
        (a call another thread is still waiting on ends with ClientClosed), stop the loop and
        join its thread."""
        self._not_in_loop()
        portal, self._portal = self._portal, None
        if portal is None:
            return
        try:
            while self._entered:
                self._entered.pop().leave()
        finally:
            with contextlib.suppress(RuntimeError):  # it had stopped
                _outside_trio(portal.call, portal.stop, True)
            _outside_trio(self._started.__exit__, None, None, None)  # joins the thread


class SyncClient:
    """The :class:`~mcp_tasks_client.Client`, blocking: ``with SyncClient(...) as client:``.

    Takes what ``Client`` takes (see it for each argument), plus ``backend``: the event loop
    it runs in a thread of its own, ``"trio"`` (the default) or ``"asyncio"``. Nothing starts
    until you enter it: entering starts the thread and opens the client there (the handshake,
    bounded by ``Timeouts.initialize``); leaving stops a SyncPoller still running on it (its
    waits end with UsageError, as ``async with Poller`` ends them), closes the client (its
    pending requests end with ClientClosed), stops the loop and joins the thread.

    Every method blocks the calling thread until the answer arrives (each states its deadline,
    as ``Client``'s do); any number of threads may call at once. Ctrl-C while one waits raises
    KeyboardInterrupt promptly; its work in the loop is cancelled as a cancelled ``await`` is
    (a wait sends nothing unless the poller's ``cancel_on_abandon`` asks; see the module's
    docstring).

    Callbacks the async API calls in its reader (``on_created``, ``on_progress``,
    ``on_warning``) run in the loop's thread: they must not block, and must not call the
    SyncClient (UsageError). Input handlers made with :func:`threaded` run in worker threads,
    where they may block and may call it.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        generation: Generation,
        client_info: Implementation,
        capabilities: ClientCapabilities = ClientCapabilities(),  # noqa: B008 - frozen value
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen value
        limits: Limits = Limits(),  # noqa: B008 - frozen value
        on_warning: Callable[[MCPTasksError], None] | None = None,
        resume: InitializeResult | None = None,
        listen_stream: bool = False,
        cache: ResultCache | None = None,
        auth_context: Hashable | None = None,
        backend: Backend = "trio",
    ) -> None:
        if backend not in ("trio", "asyncio"):
            raise UsageError(f'backend= is "trio" or "asyncio", got {backend!r}')
        self.backend: Backend = backend
        self._make = functools.partial(
            Client,
            transport,
            generation=generation,
            client_info=client_info,
            capabilities=capabilities,
            timeouts=timeouts,
            limits=limits,
            on_warning=on_warning,
            resume=resume,
            listen_stream=listen_stream,
            cache=cache,
            auth_context=auth_context,
        )
        self._loop: _Loop | None = None
        self._client: Client | None = None

    # -- lifetime ------------------------------------------------------------------------------

    def open(self) -> SyncClient:
        """Start the loop's thread and open the client in it (``with`` calls this). Failed or
        interrupted: the thread is stopped again and the error raised. Once only."""
        if self._loop is not None:
            raise UsageError("a SyncClient can be opened only once")
        loop = self._loop = _Loop(self.backend)
        try:
            client = loop.run(self._make)  # built in the loop: its parts belong there
            self._client, _ = loop.enter(client)
        except BaseException:
            loop.close()
            raise
        return self

    def close(self) -> None:
        """Stop a SyncPoller still running on it, close the client (as leaving ``async with
        Client`` does: pending requests end with ClientClosed; an HTTP session's DELETE is
        bounded by ``Timeouts.request``), stop the loop and join its thread. Idempotent."""
        if self._loop is not None:
            self._loop.close()

    def __enter__(self) -> SyncClient:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def aio(self) -> Client:
        """The async Client this one drives. Read its properties (``warnings``,
        ``server_capabilities``...); run its coroutine methods with :meth:`call`."""
        if self._client is None or self._loop is None:
            raise UsageError("the SyncClient is not open: use `with SyncClient(...) as client:`")
        return self._client

    @property
    def _running(self) -> _Loop:
        if self._client is None or self._loop is None:
            raise UsageError("the SyncClient is not open: use `with SyncClient(...) as client:`")
        return self._loop

    @overload
    def call(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T: ...

    @overload
    def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T: ...

    def call(self, fn: Callable[P, Any], *args: P.args, **kwargs: P.kwargs) -> Any:
        """``fn(*args, **kwargs)`` run in the client's loop, awaited when it is a coroutine
        function; its answer. For what has no blocking method here (``call(client.aio.
        list_prompts_page)``), and for changing what the loop reads while it runs (register
        a handler on an attached router: ``call(router.on_elicitation, task_id, handler)``).
        Deadline: ``fn``'s own. Ctrl-C: its task is cancelled, then KeyboardInterrupt."""
        return self._running.run(functools.partial(fn, *args, **kwargs))

    # -- configuration -----------------------------------------------------------------------

    @property
    def generation(self) -> Generation:
        return self.aio.generation

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """As ``Client.server_capabilities``."""
        return self.aio.server_capabilities

    def attach(self, router: InputRouter) -> None:
        """``router.attach(client)`` in the loop: the router serves this client's server
        requests of the kinds it enables (its handlers: make plain ones with
        :func:`threaded`). Pass it to :class:`SyncPoller` (``inputs=``) too."""
        self.call(router.attach, self.aio)

    # -- requests ----------------------------------------------------------------------------

    def discover(self, *, timeout: float | None = None) -> DiscoverResult:
        """``server/discover`` (2026-07-28), as ``Client.discover``.
        Deadline: timeout (default Timeouts.request)."""
        return self.call(self.aio.discover, timeout=timeout)

    def start(
        self,
        call: TaskToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
        on_created: Callable[[str], None] | None = None,
        journal: Journal | None = None,
    ) -> CreateTaskResult | CallToolResult:
        """Start a tool call as a task, as ``Client.start`` (the created task, or a 2026-07-28
        server's inline answer). ``on_created(task_id)`` runs in the loop's thread, before any
        later message is read: bind the task's handlers there
        (``router.binding(elicitation=threaded(ask))``). Deadline: ``timeout`` per round
        (default Timeouts.request); a task created after a timeout or Ctrl-C is reported to
        ``on_orphaned_task``, never lost."""
        return self.call(
            self.aio.start,
            call,
            tool=tool,
            timeout=timeout,
            inputs=inputs,
            on_created=on_created,
            journal=journal,
        )

    def call_tool(
        self,
        call: ToolCall,
        *,
        tool: Tool | None = None,
        timeout: float | None = None,
        inputs: CallInputs | None = None,
    ) -> CallToolResult:
        """A plain ``tools/call``, as ``Client.call_tool``. Deadline: ``timeout`` per round."""
        return self.call(self.aio.call_tool, call, tool=tool, timeout=timeout, inputs=inputs)

    def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """One ``tasks/get``: the task's snapshot now (no polling). Deadline: timeout."""
        return self.call(self.aio.get_task, task_id, timeout=timeout)

    def task_result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """The result of a finished task, as ``Client.task_result``. Deadline: timeout."""
        return self.call(self.aio.task_result, task_id, timeout=timeout)

    def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task | None:
        """``tasks/cancel``, as ``Client.cancel_task`` (2025-11-25: the task; 2026-07-28:
        None). Deadline: timeout (default Timeouts.request)."""
        return self.call(self.aio.cancel_task, task_id, timeout=timeout)

    def list_tools(self, *, timeout: float | None = None) -> Iterator[Tool]:
        """Every tool, a page fetched as the iteration reaches it (``timeout`` per page)."""
        aio = self.aio
        return self._running.iterate(lambda: aio.list_tools(timeout=timeout))

    def list_tasks(self, *, timeout: float | None = None) -> Iterator[Task]:
        """Every task the server lists (2025-11-25 ``tasks/list``), a page at a time."""
        aio = self.aio
        return self._running.iterate(lambda: aio.list_tasks(timeout=timeout))


class SyncPoller:
    """The :class:`~mcp_tasks_client.Poller`, blocking, on a SyncClient's loop:
    ``with SyncPoller(client, PollPolicy(), inputs=router) as poller:``.

    Takes what ``Poller`` takes. It polls only the tasks you wait on or watch, while you do;
    leaving the ``with`` cancels what it started and ends every wait still running (other
    threads') with UsageError. ``on_progress`` callbacks run in the loop's thread: they must
    not block.
    """

    def __init__(
        self,
        client: SyncClient,
        policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
        *,
        inputs: InputRouter | None = None,
        rng: random.Random | None = None,
        wall_clock: Callable[[], dt.datetime] | None = None,
        journal: Journal | None = None,
    ) -> None:
        self._client = client
        self._make = functools.partial(
            Poller,
            client.aio,
            policy,
            inputs=inputs,
            rng=rng,
            wall_clock=wall_clock,
            journal=journal,
        )
        self._poller: Poller | None = None
        self._entered: _Entered | None = None

    def __enter__(self) -> SyncPoller:
        """Start the poller's tasks in the client's loop (nothing is sent). Once only."""
        if self._entered is not None:
            raise UsageError("a SyncPoller can be entered only once")
        loop = self._client._running
        poller = loop.run(self._make)
        self._poller, self._entered = loop.enter(poller)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the poller (as leaving ``async with Poller`` does). Deadline: none."""
        self._poller = None
        if self._entered is not None:
            self._entered.leave(exc)

    @property
    def aio(self) -> Poller:
        """The async Poller this one drives (read its counters and ``warnings``)."""
        if self._poller is None:
            raise UsageError("the SyncPoller is not running: use `with SyncPoller(...) as p:`")
        return self._poller

    def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        return self._client._running.run(functools.partial(fn, *args, **kwargs))

    def wait(
        self,
        task: TaskRef | CallToolResult,
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Outcome:
        """The task's outcome, as ``Poller.wait``: raises the error that ended it, or
        DeadlineExceeded at ``deadline`` (None: none; then with ``cancel_on_abandon`` one
        tasks/cancel). Ctrl-C: KeyboardInterrupt; the task keeps running on the server
        (unless ``cancel_on_abandon``)."""
        return self._run(self.aio.wait, task, deadline=deadline, on_progress=on_progress)

    def wait_any(
        self,
        tasks: Sequence[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> tuple[str, Outcome | MCPTasksError]:
        """The first task to end, as ``(task_id, outcome or error)``; the others keep running.
        Deadline and Ctrl-C as :meth:`wait`."""
        return self._run(self.aio.wait_any, tasks, deadline=deadline, on_progress=on_progress)

    def wait_all(
        self,
        tasks: Sequence[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Outcome | MCPTasksError]:
        """Every task's outcome (or the error that ended it), by task id. Deadline and Ctrl-C
        as :meth:`wait`."""
        return self._run(self.aio.wait_all, tasks, deadline=deadline, on_progress=on_progress)

    def as_completed(
        self,
        tasks: Iterable[TaskRef],
        *,
        deadline: float | dt.timedelta | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Iterator[tuple[str, Outcome | MCPTasksError]]:
        """``(task_id, outcome or error)`` for each task as it ends, as
        ``Poller.as_completed``. Breaking out of the loop cancels nothing on the server."""
        poller, tasks = self.aio, list(tasks)
        return self._client._running.iterate(
            lambda: poller.as_completed(tasks, deadline=deadline, on_progress=on_progress)
        )

    def watch(
        self, task: TaskRef, *, deadline: float | dt.timedelta | None = None
    ) -> Iterator[WatchItem]:
        """Each new snapshot of the task (the terminal one last), each InputEvent and each
        TaskProgress, as ``Poller.watch``; then :meth:`wait` returns the outcome at once.
        Leave it early with ``break``: polling for it stops (nothing is cancelled)."""
        poller = self.aio
        return self._client._running.iterate(lambda: poller.watch(task, deadline=deadline))

    def snapshot(self, task_id: str) -> Task | None:
        """The latest accepted snapshot of a tracked task (no request)."""
        return self._run(_as_async(self.aio.snapshot), task_id)

    def status_message(self, task_id: str) -> StatusMessage | None:
        """As ``Poller.status_message`` (no request)."""
        return self._run(_as_async(self.aio.status_message), task_id)


def _as_async(fn: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """``fn``, called in the loop's thread (it reads the loop's state)."""

    async def in_loop(*args: P.args, **kwargs: P.kwargs) -> T:
        return fn(*args, **kwargs)

    return in_loop


def resume(
    journal: Journal,
    open_client: ClientOpener,
    *,
    policy: PollPolicy = PollPolicy(),  # noqa: B008 - frozen value
    inputs: InputRouter | RouterFactory | None = None,
    deadline: float | dt.timedelta | None = None,
    owner: str | None = None,
    lease: float = 60.0,
    on_resumed: Callable[[Resumed], None] | None = None,
    workers: int | None = None,
    idle: float = 1.0,
    backend: Backend = "trio",
) -> list[Resumed]:
    """``resume`` (each open task of ``journal``, followed to its end), blocking: it runs on
    an event loop of its own, in a thread started for it and joined before this returns.

    ``open_client`` (``client_for``), ``inputs`` (a router factory) and ``on_resumed`` are
    called in that loop's thread: they must not block (input handlers made with
    :func:`threaded` may). Deadline: ``deadline``, as ``resume``. Ctrl-C: the resume is
    cancelled (the tasks stay open in the journal, their leases given back), then
    KeyboardInterrupt.
    """
    loop = _Loop(backend)
    try:
        return loop.run(
            functools.partial(
                _resume,
                journal,
                open_client,
                policy=policy,
                inputs=inputs,
                deadline=deadline,
                owner=owner,
                lease=lease,
                on_resumed=on_resumed,
                workers=workers,
                idle=idle,
            )
        )
    finally:
        loop.close()
