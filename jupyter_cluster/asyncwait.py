"""Waiting at most some seconds without losing a cancel: for an event, or for a call.

On Python 3.10 and 3.11, ``asyncio.wait_for`` returns the awaited result normally
when the task is cancelled in the same moment the awaited call completes: the
cancellation is swallowed. A loop that waits like that (the scheduling loop's
drivers, the event poller, the warm pool) then goes on waiting after it was told to
stop; a launch whose Docker call (``start``) answers just as the launch is cancelled
goes on to wait for its bootstrap; and whoever awaits them (a ``DELETE`` of a
waiting session, a server's shutdown) hangs.

:func:`within` bounds any awaitable with :func:`asyncio.timeout` (Python 3.11+;
:func:`asyncio.wait` on 3.10) and never swallows the caller's cancellation;
:func:`wait_set` waits for an event through it. Every bounded wait of the
package uses one of them, never ``asyncio.wait_for``.

The same mistake hides in ``with suppress(CancelledError): await task`` after
``task.cancel()``: it swallows the task's cancellation, as meant, and the caller's
too. :func:`ended` and :func:`stopped` wait for a task's end and raise only the
caller's cancellation; :func:`unless` runs work until a stop condition comes first.

A clean-up that runs because its caller was cancelled can be cancelled again (a
launch's ``unless`` stops it while it already cleans up after a failure; a caller
cancels twice): cut short, it leaves behind what it was removing. :func:`through`
runs such work to its end whatever cancels the caller meanwhile.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import Any, TypeVar

__all__ = ["ended", "stopped", "through", "unless", "wait_set", "within"]

T = TypeVar("T")


async def wait_set(event: asyncio.Event, timeout: float) -> bool:
    """Wait until ``event`` is set or ``timeout`` seconds pass; True if it was set.

    A cancellation of the caller always propagates (see :func:`within`). Called by
    the scheduling loop's drivers, the event poller and the warm pool between rounds.
    """
    if event.is_set():
        return True
    try:
        await within(event.wait(), timeout)
    except asyncio.TimeoutError:
        return False
    return True


async def within(awaitable: Awaitable[T], timeout: float | None) -> T:
    """``await awaitable``, bounded by ``timeout`` seconds (None: unbounded), as
    ``asyncio.wait_for`` does: on timeout it is cancelled and :class:`TimeoutError`
    raised. Unlike ``wait_for`` before Python 3.12, a cancellation of the caller is
    never swallowed, even when it comes as ``awaitable`` completes (see the module's
    docstring). Called for every Docker request and every bounded wait.
    """
    if timeout is None:
        return await awaitable
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout):
            return await awaitable
    return await _within_by_wait(awaitable, timeout)  # pragma: no cover (3.10)


async def _within_by_wait(awaitable: Awaitable[T], timeout: float) -> T:
    """:func:`within` on Python 3.10 (no ``asyncio.timeout``): the awaitable runs as
    a task, awaited with :func:`asyncio.wait`, which never swallows a cancel."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise asyncio.TimeoutError
    return task.result()


async def ended(task: asyncio.Future[Any]) -> None:
    """Wait until ``task`` has ended. Its own cancellation is not raised; an error it
    ended with is. If the caller is cancelled meanwhile, ``task`` is cancelled too and
    waited for (so what it holds can be closed after), and the caller's cancellation
    propagates. Called by the log stream handler, whose pump a client's leaving cancels.
    """
    try:
        await _outcome(task)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait((task,))
        raise


async def stopped(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it has ended; an error it ended with is raised.
    If the caller is cancelled meanwhile, that propagates at once and ``task`` is left
    to finish its own clean-up (cancelling it again would cut that short). Called by
    the event hub's ``stop`` and the SSH tunnel's ``close``."""
    task.cancel()
    await _outcome(task)


async def unless(work: Awaitable[T], stop: Awaitable[object]) -> tuple[bool, T | None]:
    """Await ``work`` unless ``stop`` completes first; then ``work`` is cancelled and
    its end awaited (its clean-up runs). Returns (True, its result) or (False, None);
    an error of ``work`` is raised, and so is one of ``stop``'s (``work`` stopped
    first). A cancellation of the caller cancels both, waits for ``work``'s end and
    propagates: nothing is left running unowned (``asyncio.wait`` alone leaves its
    tasks running when its caller is cancelled). Called by a launch that stops when
    another process ends its session, and by the kernel provisioner's launch, which
    stops with its Jupyter server."""
    task = asyncio.ensure_future(work)
    halt = asyncio.ensure_future(stop)
    try:
        await asyncio.wait((task, halt), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        await through(asyncio.wait((task,)))
        raise
    finally:
        halt.cancel()
    if task.done():
        return True, task.result()
    task.cancel()
    await through(_outcome(task))
    if not halt.cancelled() and (error := halt.exception()) is not None:
        raise error
    return False, None


async def through(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile, once or
    more; its result is returned, or the caller's cancellation raised once it ended.
    For clean-ups that must not be cut short (see the module's docstring): a launch's
    removal of what it made, a creation's undoing when its caller left. ``work``
    must end by itself (every Docker request is bounded, see :func:`within`)."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:  # the caller's cancellation goes on (an error of ``work`` chained)
        error = None if task.cancelled() else task.exception()
        raise asyncio.CancelledError from error
    return task.result()


async def _outcome(task: asyncio.Future[Any]) -> None:
    """Wait for ``task``'s end (never cancelling it) and raise its error, if any."""
    await asyncio.wait((task,))
    if not task.cancelled() and (error := task.exception()) is not None:
        raise error
