"""Settling the warm pool's records with Docker after crashes and ended launches.

:meth:`.warm_pool.WarmPool.sweep` calls :func:`sweep_pool` (under its lock) at each
refill and when the pool is drained.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from ..core import naming
from ..core.state import LIVE
from ..errors import AgentError
from .agents.base import Agent
from .agents.pool import AgentPool
from .store.sessions import Store
from .warm_table import WarmTable


class WarmPool(Protocol):
    """What the sweep uses of :class:`~.warm_pool.WarmPool` (typed here, so the two
    modules do not import each other)."""

    store: Store
    agents: AgentPool
    table: WarmTable

    def labels(self, **extra: str) -> dict[str, str]: ...

    async def remove_sets(self, set_ids: list[str]) -> None: ...


async def sweep_pool(pool: WarmPool) -> None:
    """Forget taken containers once their session has them (or remove them if it
    ended first); remove warm containers and networks nobody recorded (left by a
    crash); forget records of containers gone."""
    for container_id, agent_id, session_id in pool.table.taken():
        session = pool.store.get(session_id)
        owned = session is not None and any(
            c.container_id == container_id for c in session.containers
        )
        if session is not None and session.status in LIVE and not owned:
            continue  # still being launched
        if not owned:
            with contextlib.suppress(Exception):
                await pool.agents.get(agent_id).remove_container(container_id)
        pool.table.forget(container_id)
    known, networks = pool.table.known()
    live = pool.store.list()
    recorded = {c.container_id for s in live for c in s.containers if c.container_id}
    networks |= {naming.network_name(s) for s in live if s.status in LIVE}
    for agent in pool.agents.agents.values():
        await _sweep_agent(pool, agent, known | recorded, networks)


async def _sweep_agent(
    pool: WarmPool, agent: Agent, containers: set[str], networks: set[str]
) -> None:
    try:
        found = await agent.list_containers(pool.labels(), detail=False)
        nets = await agent.list_networks(pool.labels(**{naming.LABEL_WARM: "network"}))
    except AgentError:
        return
    ids = set()
    for state in found:
        ids.add(state.id)
        if naming.LABEL_WARM in state.labels and state.id not in containers:
            with contextlib.suppress(AgentError):
                await agent.remove_container(state.id)
    for net in nets:
        if net.name not in networks:
            with contextlib.suppress(AgentError):  # still in use: next time
                await agent.remove_network(net.id)
    for warm in pool.table.ready():
        if agent.id not in warm.agents:
            continue
        if not pool.table.containers_of(warm.set_id, agent.id) <= ids:  # one of it is gone
            await pool.remove_sets([warm.set_id])
