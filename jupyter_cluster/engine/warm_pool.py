"""The warm pool: sets of containers prepared ahead, so a matching launch skips making
its network and containers.

Configured with ``c.ClusterManager.warm_pool`` and ``warm_pool_adaptive`` (off when
neither; :mod:`.warm_demand`). The long-running front end (the server, or the shared
service) runs :meth:`WarmPool.keep`, which refills the pool in the background and
removes it when it stops; any process of the same store takes a set through
:meth:`WarmPool.take` while launching (called by
:class:`~.manager.ClusterManager`). The decisions are the pure core's
(:mod:`jupyter_cluster.core.warm`, ``warm_room`` and ``warm_spread``); the records are
:class:`~.warm_table.WarmTable`'s; sets are made by :mod:`.warm_make`.

A warm container runs a silent shell that waits on a root-only FIFO; nothing of a
session is in it. When a launch takes its set, the launcher copies the session's files
in (fresh keys and host keys, hostfile, environment) and tells it to run the usual
start-up script (:func:`~.launch.bring_up.bring_up`). Sets are never returned to the pool: a
session's containers and network are removed with it, like cold ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from ..asyncwait import wait_set
from ..core import naming
from ..core.models import Session
from ..core.resources import Resources
from ..core.state import SessionStatus
from ..core.swarms import join_swarms
from ..core.warm import (
    WarmTarget,
    gpus_of,
    layout_of,
    shape_of,
)
from ..core.warm_room import refill_plan, to_evict
from ..core.warm_spread import spread_plan
from .agents.base import BindMount, Limits
from .agents.pool import AgentPool
from .agents.rows import swarm_node
from .store.sessions import Store
from .warm_demand import WarmDemand, demand_targets
from .warm_fit import MountResolver, gpus_for, gpus_held, no_mounts, set_fit, stale_sets
from .warm_make import make_set
from .warm_prestart import (
    PRESTART_NOT_READY,
    PRESTART_READY,
)
from .warm_sweep import sweep_pool
from .warm_table import WarmTable

__all__ = ["PRESTART_NOT_READY", "PRESTART_READY", "WarmPool"]

log = logging.getLogger(__name__)


class WarmPool:
    """Warm sets per agent and shape (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        agents: AgentPool,
        targets: list[WarmTarget],
        limits: Callable[[], Limits],
        interval: float = 5.0,
        resolve: MountResolver = no_mounts,
        demand: Callable[[], WarmDemand] = WarmDemand,
        encrypted: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.agents = agents
        self.targets = targets
        self.limits = limits
        self.interval = interval
        self.resolve = resolve
        self.demand = demand
        self.encrypted = encrypted  # whether spread sets' overlays are encrypted
        self.table = WarmTable(store)
        self.wake = asyncio.Event()
        self._lock = asyncio.Lock()

    @property
    def enabled(self) -> bool:
        """Whether there is a pool: configured targets, or the adaptive pool on."""
        return bool(self.targets) or self.demand().on

    def wanted(self) -> list[WarmTarget]:
        """The configured targets and, when on, the adaptive pool's (see
        :mod:`.warm_demand`) for the sessions launched within its window, ended ones
        too (a shape launched, ended and launched again is the usual day)."""
        demand = self.demand()
        if not demand.on:
            return list(self.targets)
        recent = self.store.recent_launches(time.time() - demand.window)
        return [*self.targets, *demand_targets(demand, recent, self.targets)]

    def labels(self, **extra: str) -> dict[str, str]:
        """The labels of this store's warm containers and networks (with ``extra``)."""
        return {naming.LABEL_MANAGER: self.store.manager_id, **extra}

    # -- taking ------------------------------------------------------------------------

    def take(
        self, session: Session, mounts: Mapping[str, Sequence[BindMount]] | None = None
    ) -> dict[str, str]:
        """A warm set for a placed session whose containers get ``mounts`` (per
        agent): its container ids by host (the session's from now on; its network is
        recorded as the session's), or {} (launch cold). Only a set made with the same
        resolved mounts on each of its agents and the GPU ids the session was given
        matches."""
        shape = shape_of(session)
        # Any process of the store takes what the server's pool made, whatever its
        # own configuration says (a provisioner's may not name the pool).
        if shape is None or not (self.enabled or self.table.ready()):
            return {}
        layout = layout_of(session)
        fit = set_fit(layout, mounts or {})
        network, taken = self.table.take(session.id, layout, shape.key, fit, gpus_of(session))
        if taken:
            self.store.set_network(session.id, network)
            self.wake.set()
        return taken

    async def make_room(self, session: Session) -> None:
        """Remove warm sets that, with the sessions now placed, would take their agents
        past capacity (sets of other shapes than ``session``'s go first)."""
        ready = self.table.ready()
        if not ready:
            return
        shape = shape_of(session)
        usage, gpus = self.store.usage(), gpus_held(self.store.list())
        keep = shape.key if shape else ""
        for agent_id in {c.agent for c in session.containers if c.agent}:
            mine = [w for w in ready if agent_id in w.agents]
            if not mine:
                continue
            info = await self.agents.get(agent_id).info()
            held = usage.get(agent_id, Resources(0, 0, 0, 0))
            used_gpus = frozenset(gpus.get(agent_id, ()))
            evict = to_evict(info.capacity, held, mine, keep, used_gpus, agent_id)
            await self.remove_sets([w.set_id for w in evict])
            ready = [w for w in ready if w not in evict]  # a spread set goes only once

    # -- keeping -------------------------------------------------------------------------

    async def keep(self) -> None:
        """Refill until cancelled (the server's background task); then remove the pool."""
        try:
            await self.drain()  # a pool left by an earlier run may be of another config
            while True:
                try:
                    await self.sweep()
                    await self.fill()
                except Exception:  # an unreachable agent: try again next round
                    log.exception("jupyter-cluster: refilling the warm pool failed")
                self.wake.clear()
                await wait_set(self.wake, self.interval)
        finally:
            await asyncio.shield(self.drain())

    async def fill(self) -> int:
        """One refill pass: remove sets no target wants any more (an adaptive shape
        not launched lately) and folder sets gone stale, then make the sets
        :func:`refill_plan` says; how many were made."""
        async with self._lock:
            sessions = self.store.list()
            targets = self.wanted()
            keys = {t.shape.key for t in targets}
            ready = self.table.ready()
            unwanted = [w.set_id for w in ready if w.shape_key not in keys]
            await self.remove_sets(unwanted + stale_sets(ready, targets, self.resolve))
            infos = await asyncio.gather(*(a.info() for a in self.agents.agents.values()))
            agents = {i.id: (i.resource_group, i.capacity) for i in infos if i.reachable}
            waiting = frozenset(
                s.spec.resource_group for s in sessions if s.status is SessionStatus.PENDING
            )
            ready, used = self.table.ready(), self.store.usage()
            swarms = join_swarms([swarm_node(i) for i in infos])
            plan = [
                ((agent_id,) * shape.size, shape)
                for agent_id, shape in refill_plan(targets, agents, used, ready, waiting)
            ]
            spanning = {a: swarms[a].swarm for a in agents}
            plan += spread_plan(targets, agents, spanning, used, ready, waiting)
            held = gpus_held(sessions)
            for w in ready:
                for agent_id in w.agents:
                    held.setdefault(agent_id, set()).update(w.gpus_on(agent_id))
            gpus = {i.id: i.gpu_ids for i in infos}
            made = []
            for layout, shape in plan:
                ids = gpus_for(layout, shape, gpus, held)
                if ids is not None:
                    made.append(make_set(self, layout, shape, ids))
            results = await asyncio.gather(*made, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.warning("jupyter-cluster: a warm set could not be made: %s", result)
        return sum(1 for r in results if not isinstance(r, BaseException))

    async def sweep(self) -> None:
        """Settle the records with Docker: forget taken containers once their session
        has them (or remove them if it ended first); remove warm containers and
        networks nobody recorded (left by a crash); forget records of containers gone."""
        async with self._lock:
            await sweep_pool(self)

    async def drain(self) -> None:
        """Remove every warm set nobody has taken (and what a crash left)."""
        async with self._lock:
            await self.remove_sets([w.set_id for w in self.table.ready()])
        await self.sweep()

    async def remove_sets(self, set_ids: list[str]) -> None:
        """Withdraw the ready ones of ``set_ids`` and remove their containers and networks."""
        for net_agent, network, containers in self.table.withdraw(set_ids):
            await self.remove_parts(net_agent, network, containers)

    async def remove_parts(
        self, net_agent: str, network: str, containers: list[tuple[str, str]]
    ) -> None:
        """Remove a set's containers ((agent, id) each), then its network through
        ``net_agent``; what an unreachable agent keeps, the next sweep finds."""

        async def remove(agent_id: str, container_id: str) -> None:
            await self.agents.get(agent_id).remove_container(container_id)

        await asyncio.gather(*(remove(a, c) for a, c in containers), return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.agents.get(net_agent).remove_network(network)
