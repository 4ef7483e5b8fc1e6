"""Watching Swarm nodes' views of an overlay network after its removal.

A Swarm overlay is removed once the Swarm manager it is removed through accepted
the removal (with every container gone). Each node's view of it (the manager's own
too) then goes by itself a few tenths of a second later, as after ``docker network
rm`` on the manager; waiting for them was a third of a multi-agent terminate.
:func:`~.teardown.tear_down` hands those views to an :class:`OverlayViews`, which
watches them in the background and logs a view that stays.

One is owned by each :class:`~jupyter_cluster.engine.manager.ClusterManager`
(``overlay_views``): its termination passes it to ``tear_down``, and
``ClusterManager.close`` stops it (a script's ``shutdown_kernel`` would otherwise
wait for it). The benchmarks' leftover checks wait for it with :meth:`OverlayViews.settled`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ...errors import AgentError
from ..agents.base import Agent

log = logging.getLogger(__name__)
#: Seconds between two looks at the nodes that still list a removed overlay.
LOOK_SECONDS = 0.05


class OverlayViews:
    """The background watches of one engine's removed overlays."""

    def __init__(self) -> None:
        """No watch yet; :meth:`watch` starts them."""
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """How many watches are still running (for tests)."""
        return len(self._tasks)

    def watch(self, name: str, labels: dict[str, str], views: list[Agent], looks: int) -> None:
        """Watch until none of ``views`` (Swarm nodes) lists the removed overlay
        ``name`` (found among networks labelled ``labels``); log the nodes that still
        do after ``looks`` looks. Called by ``tear_down`` once the manager removed it."""
        task = asyncio.ensure_future(_views_gone(name, labels, views, looks))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self, timeout: float = 5.0) -> None:
        """Wait (``timeout`` seconds at most, then stop watching) until every watched
        view is gone. For checks that nothing is left (the benchmarks')."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
        await self.stop()

    async def stop(self) -> None:
        """Stop watching (the views go by themselves; a later reconciliation removes
        any that stays). Called by ``ClusterManager.close`` before it closes the
        agents' connections."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _views_gone(name: str, labels: dict[str, str], views: list[Agent], looks: int) -> None:
    """Wait until none of ``views`` lists ``name`` any more; log those that still do
    after ``looks`` looks."""
    for _ in range(looks):
        await asyncio.sleep(LOOK_SECONDS)
        still = []
        for agent in views:
            with contextlib.suppress(AgentError):
                if any(n.name == name for n in await agent.list_networks(labels)):
                    still.append(agent)
        if not still:
            return
        views = still
    log.warning(
        "the overlay network %s, removed through its Swarm manager, is still listed on %s",
        name,
        ", ".join(a.id for a in views),
    )
