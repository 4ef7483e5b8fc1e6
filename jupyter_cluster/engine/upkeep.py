"""Background jobs a server keeps going for its local engine: the warm pool's refill.

:meth:`~jupyter_cluster.engine.manager.ClusterManager.upkeep` hands these (and the
OOM watch, :mod:`.oom_watch`) to the server extension, which starts them once its
engine is reconciled and stops them when it stops. A shared service's client has
none: the service keeps its own.
"""

from __future__ import annotations

import asyncio

from .warm_pool import WarmPool


class WarmRefill:
    """Keep the warm pool filled while the server runs; remove it when it stops."""

    def __init__(self, warm: WarmPool) -> None:
        self.warm = warm
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start refilling in the background (see WarmPool.keep)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self.warm.keep())

    async def stop(self) -> None:
        """Stop refilling; the pool removes its containers as it is cancelled."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
