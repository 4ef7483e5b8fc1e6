"""Background jobs a server keeps going for its local engine, and their common shape.

:meth:`~jupyter_cluster.engine.manager.ClusterManager.upkeep` hands these (and the
OOM watch, :mod:`.oom_watch`) to the server extension, which starts them once its
engine is reconciled and stops them when it stops. A shared service's client has
none: the service keeps its own. :class:`BackgroundJob` is an upkeep job that is one
task (the warm pool's refill here, :class:`~.guard_refresh.GuardRefresh`).
"""

from __future__ import annotations

import asyncio

from .warm_pool import WarmPool


class BackgroundJob:
    """An upkeep job run as one background task: :meth:`run` until stopped."""

    _task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        """The job's work; runs until cancelled (subclasses)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start :meth:`run` in the background (once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self.run())

    async def stop(self) -> None:
        """Cancel it and wait until it has ended."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


class WarmRefill(BackgroundJob):
    """Keep the warm pool filled while the server runs; remove it when it stops (the
    pool removes its containers as it is cancelled)."""

    def __init__(self, warm: WarmPool) -> None:
        self.warm = warm

    async def run(self) -> None:
        """Refill (see WarmPool.keep)."""
        await self.warm.keep()
