"""The manager's agents as a group: lookup, capacity rows per agent and per resource
group, images per agent, scheduler slots.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`; turns what each agent
reports into the rows ``jupyter cluster agents`` and ``GET agents`` show and into
the :class:`~jupyter_cluster.core.scheduler.AgentSlot` list the store places on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from ...core.resources import Resources
from ...core.scheduler import AgentSlot
from ...core.swarms import Membership, join_swarms
from ...errors import AgentError, NotFound
from .base import Agent, AgentConfig, AgentInfo
from .host_guard import HostGuards
from .rows import agent_rows, swarm_node


class AgentPool:
    """Every configured agent, by id."""

    def __init__(
        self,
        configs: Sequence[AgentConfig],
        factory: Callable[[AgentConfig], Agent],
        *,
        pulls_images: bool = True,
    ):
        self.agents: dict[str, Agent] = {c.id: factory(c) for c in configs}
        #: Whether an agent without a launch's image may take it (and pull it first).
        self.pulls_images = pulls_images
        #: Which agent hosts this process has put the guard of session bridges on.
        self.guards = HostGuards()

    def get(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``; NotFound when there is none."""
        try:
            return self.agents[agent_id]
        except KeyError:
            raise NotFound(f"no agent named {agent_id!r}; see `jupyter cluster agents`") from None

    def logs(self, agent_id: str, container_id: str, tail: int) -> AsyncIterator[str]:
        """The last ``tail`` lines of a container's log on its agent (what the log
        archive keeps when a session ends or a launch fails)."""
        return self.get(agent_id).logs(container_id, tail=tail)

    async def infos(self) -> tuple[list[AgentInfo], dict[str, Membership]]:
        """Every agent's info, and its Swarm as multi-node sessions may use it."""
        infos = list(await asyncio.gather(*(a.info() for a in self.agents.values())))
        return infos, join_swarms([swarm_node(i) for i in infos])

    async def rows(self, usage: Mapping[str, Resources]) -> list[dict[str, Any]]:
        """Capacity, allocated and free resources per agent, given what sessions hold."""
        return agent_rows((await self.infos())[0], usage)

    async def group_rows(
        self, usage: Mapping[str, Resources], groups: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per resource group in ``groups``: its agents and their capacity, allocated
        (``used``) and free resources summed."""
        totals: dict[str, dict[str, Any]] = {}
        for name in sorted(groups):
            sums = {key: {"cpu": 0.0, "mem": 0, "gpu": 0} for key in ("capacity", "used", "free")}
            totals[name] = {"name": name, "agents": [], **sums}
        for row in await self.rows(usage):
            group = totals.get(str(row["resource_group"]))
            if group is None:
                continue
            group["agents"].append(row["id"])
            for key, source in (("capacity", "capacity"), ("used", "allocated"), ("free", "free")):
                for unit in ("cpu", "mem", "gpu"):
                    group[key][unit] += row[source][unit]
        for group in totals.values():
            for key in ("capacity", "used", "free"):
                group[key]["cpu"] = round(group[key]["cpu"], 6)
        return list(totals.values())

    async def image_rows(self, images: Sequence[str]) -> list[dict[str, Any]]:
        """Each of ``images`` (the first is the default) with, per agent, whether it is
        there (None: unknown, the agent is unreachable)."""

        async def present(agent: Agent, image: str) -> bool | None:
            try:
                return bool(await agent.has_image(image))
            except AgentError:
                return None

        agents = list(self.agents.values())
        rows = []
        for i, image in enumerate(images):
            found = await asyncio.gather(*(present(a, image) for a in agents))
            rows.append(
                {
                    "name": image,
                    "default": i == 0,
                    "agents": {a.id: f for a, f in zip(agents, found, strict=True)},
                }
            )
        return rows

    async def slots(self, image: str) -> list[AgentSlot]:
        """Every agent as the scheduler sees it (capacity only; the store adds usage)."""

        async def slot(agent: Agent) -> tuple[AgentInfo, bool]:
            # One task per agent for both questions (a pass asks every agent).
            info = await agent.info()
            # An unreachable agent's images are unknown: count it as having the image
            # so the scheduler says "waiting for <agent>" rather than "build it".
            return info, not info.reachable or await agent.has_image(image)

        answers = await asyncio.gather(*(slot(a) for a in self.agents.values()))
        swarms = join_swarms([swarm_node(info) for info, _ in answers])
        return [
            AgentSlot(
                id=info.id,
                resource_group=info.resource_group,
                capacity=info.capacity,
                gpu_ids=info.gpu_ids,
                has_image=local or self.pulls_images,
                image_local=local,
                schedulable=info.reachable,
                swarm=swarms[info.id].swarm,
                swarm_note=swarms[info.id].note,
            )
            for info, local in answers
        ]

    async def close(self) -> None:
        """Close every agent's connection."""
        await asyncio.gather(*(a.close() for a in self.agents.values()))
