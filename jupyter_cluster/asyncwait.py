"""Waiting for an :class:`asyncio.Event` at most some seconds, without losing a cancel.

On Python 3.10 and 3.11, ``asyncio.wait_for(event.wait(), timeout)`` returns
normally when the task is cancelled in the same moment the event is set: the
cancellation is swallowed. A loop that waits like that (the scheduling loop's
drivers, the event poller, the warm pool) then goes on waiting after it was
told to stop, and whoever awaits it (a ``DELETE`` of a waiting session, a
server's shutdown) hangs. :func:`wait_set` waits with :func:`asyncio.wait`,
which never swallows the caller's cancellation. Every such loop of the engine
and the server uses it.
"""

from __future__ import annotations

import asyncio

__all__ = ["wait_set"]


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
