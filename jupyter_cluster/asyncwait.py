"""Waiting at most some seconds without losing a cancel: for an event, or for a call.

On Python 3.10 and 3.11, ``asyncio.wait_for`` returns the awaited result normally
when the task is cancelled in the same moment the awaited call completes: the
cancellation is swallowed. A loop that waits like that (the scheduling loop's
drivers, the event poller, the warm pool) then goes on waiting after it was told to
stop; a launch whose Docker call (``start``) answers just as the launch is cancelled
goes on to wait for its bootstrap; and whoever awaits them (a ``DELETE`` of a
waiting session, a server's shutdown) hangs.

:func:`wait_set` waits for an event with :func:`asyncio.wait`, and :func:`within`
bounds any awaitable with :func:`asyncio.timeout` (Python 3.11+; :func:`asyncio.wait`
on 3.10); neither swallows the caller's cancellation. Every bounded wait of the
package uses one of them, never ``asyncio.wait_for``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["wait_set", "within"]

T = TypeVar("T")


async def wait_set(event: asyncio.Event, timeout: float) -> bool:
    """Wait until ``event`` is set or ``timeout`` seconds pass; True if it was set.

    A cancellation of the caller always propagates (see the module's docstring).
    """
    if event.is_set():
        return True
    waiter = asyncio.ensure_future(event.wait())
    try:
        done, _ = await asyncio.wait((waiter,), timeout=timeout)
    finally:
        waiter.cancel()
    return bool(done)


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
