"""The manager's agents as a group: lookup, capacity rows, scheduler slots.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`; turns what each agent
reports into the rows ``jupyter cluster agents`` and ``GET agents`` show and into
the :class:`~jupyter_cluster.core.scheduler.AgentSlot` list the store places on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...core.models import Resources
from ...core.scheduler import AgentSlot
from ...errors import NotFound
from .base import Agent, AgentConfig


class AgentPool:
    """Every configured agent, by id."""

    def __init__(self, configs: Sequence[AgentConfig], factory: Callable[[AgentConfig], Agent]):
        self.agents: dict[str, Agent] = {c.id: factory(c) for c in configs}

    def get(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``; NotFound when there is none."""
        try:
            return self.agents[agent_id]
        except KeyError:
            raise NotFound(f"no agent named {agent_id!r}; see `jupyter cluster agents`") from None

    async def rows(self, usage: Mapping[str, Resources]) -> list[dict[str, Any]]:
        """Capacity, allocated and free resources per agent, given what sessions hold."""
        infos = await asyncio.gather(*(a.info() for a in self.agents.values()))
        rows = []
        for info in infos:
            cap = info.capacity
            used = usage.get(info.id) or Resources(0, 0, 0, 0)
            rows.append(
                {
                    "id": info.id,
                    "resource_group": info.resource_group,
                    "reachable": info.reachable,
                    "message": info.message,
                    "capacity": cap.to_dict(),
                    "allocated": used.to_dict(),
                    "free": {
                        "cpu": round(cap.cpu - used.cpu, 6),
                        "mem": cap.mem - used.mem,
                        "gpu": cap.gpu - used.gpu,
                    },
                    "gpu_ids": list(info.gpu_ids),
                }
            )
        return rows

    async def slots(self, image: str) -> list[AgentSlot]:
        """Every agent as the scheduler sees it (capacity only; the store adds usage)."""

        async def slot(agent: Agent) -> AgentSlot:
            info = await agent.info()
            # An unreachable agent's images are unknown: count it as having the image
            # so the scheduler says "waiting for <agent>" rather than "build it".
            has_image = not info.reachable or await agent.has_image(image)
            return AgentSlot(
                id=info.id,
                resource_group=info.resource_group,
                capacity=info.capacity,
                gpu_ids=info.gpu_ids,
                has_image=has_image,
                schedulable=info.reachable,
            )

        return list(await asyncio.gather(*(slot(a) for a in self.agents.values())))

    async def close(self) -> None:
        """Close every agent's connection."""
        await asyncio.gather(*(a.close() for a in self.agents.values()))
