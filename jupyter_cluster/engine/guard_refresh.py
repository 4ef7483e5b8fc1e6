"""The guard of session bridges put again, while sessions run, on their agent hosts.

Each engine process puts the guard (see :mod:`.agents.host_guard`) before its first
session on an agent host is RUNNING, and launches put it again once it is older than
``ContainerHardening.guard_refresh``. A host whose firewall is reset while it keeps
answering (a firewall reload, ``iptables -F``) loses the guard until then; without a
launch, the sessions already running there would stay open to the host's other users
for as long as they run. :class:`GuardRefresh`, one of the server's upkeep jobs
(:meth:`~.manager.ClusterManager.upkeep`, also in the shared service), closes that:
every quarter of ``guard_refresh`` it puts the guard again on every agent host with
an active session whose guard is older than ``guard_refresh``. So a reset host is
guarded again within ``guard_refresh`` and a quarter, launches or not.

A CLI process has no upkeep: its sessions are refreshed by the next server or
launch that looks after them. Failing to put the guard is logged (once per change
of the error) and tried again at the next round; it does not end sessions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..errors import ClusterError
from .agents.base import Limits
from .agents.pool import AgentPool
from .store.sessions import Store
from .upkeep import BackgroundJob

log = logging.getLogger(__name__)


class GuardRefresh(BackgroundJob):
    """Keeps the guard on the agent hosts of ``store``'s active sessions (see the
    module docstring); ``limits()`` is the configured :class:`Limits` (whether the
    guard is on and its helper's image), ``pool.guards.refresh`` its period."""

    def __init__(
        self,
        store: Store,
        pool: AgentPool,
        limits: Callable[[], Limits],
        logger: logging.Logger | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.limits = limits
        self.log = logger or log
        self._last_error = ""

    def hosts(self) -> list[str]:
        """The agents (ids) that hold a container of an active session."""
        held = {c.agent for s in self.store.list() for c in s.containers if c.agent}
        return sorted(a for a in held if a in self.pool.agents)

    async def refresh_once(self) -> None:
        """Put the guard on every such host whose guard is due (none when the guard is
        off); a failure is logged, not raised."""
        limits = self.limits()
        if not limits.guard_bridges:
            return
        agents = [self.pool.agents[a] for a in self.hosts()]
        try:
            await self.pool.guards.ensure(agents, limits.egress_image)
        except ClusterError as exc:
            if str(exc) != self._last_error:
                self.log.warning("jupyter-cluster: the guard of session bridges: %s", exc)
            self._last_error = str(exc)
        else:
            self._last_error = ""

    async def run(self) -> None:
        """A round every quarter of ``pool.guards.refresh`` (at least 0.5 s)."""
        while True:
            await asyncio.sleep(max(self.pool.guards.refresh / 4, 0.5))
            await self.refresh_once()
