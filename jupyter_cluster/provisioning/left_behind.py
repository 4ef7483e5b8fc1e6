"""Closing what a provisioner left on another event loop.

Called by :meth:`~.provisioner.ClusterProvisioner._here` when a kernel manager
drives the provisioner from a loop other than the one its engine, link and kernel
handle were made on (jupyter_server's synchronous kernel manager at server stop):
those cannot be used or closed from here, so they are closed on their own loop,
whenever it runs again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..engine.api import Engine
from .kernel_link import KernelLink
from .process import KernelProcess

#: Closings under way (kept referenced until done).
CLOSING: set[asyncio.Task[None]] = set()


def close_on_loop(
    loop: asyncio.AbstractEventLoop,
    engine: Engine[Any] | None,
    link: KernelLink | None,
    process: KernelProcess | None,
    ready: asyncio.Future[None] | None,
) -> None:
    """Have ``loop`` cancel ``ready`` and close ``process``, ``link`` and ``engine``."""
    if not loop.is_closed():
        loop.call_soon_threadsafe(_close, engine, link, process, ready)


def _close(
    engine: Engine[Any] | None,
    link: KernelLink | None,
    process: KernelProcess | None,
    ready: asyncio.Future[None] | None,
) -> None:
    """Runs on the loop they belong to; the closing task is kept in :data:`CLOSING`."""
    if ready is not None:
        ready.cancel()

    async def close() -> None:
        if process is not None:
            await process.close()
        if link is not None:
            await link.close()
        if engine is not None:
            await engine.close()

    task = asyncio.ensure_future(close())
    CLOSING.add(task)
    task.add_done_callback(CLOSING.discard)
