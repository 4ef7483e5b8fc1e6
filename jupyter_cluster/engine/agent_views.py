"""The local engine's views of its agents: one by id, capacity and use per agent and
per resource group, which agents have an image, and whether this machine's folders
can be mounted.

A base of :class:`~jupyter_cluster.engine.manager.ClusterManager` (its ``pool``,
``store`` and ``hardening``): ``jupyter cluster agents``, ``GET agents``,
``resource-groups`` and ``images``, and the provisioner's notebook-folder check
call these.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from .agents.base import Agent
from .agents.pool import AgentPool
from .hardening import ContainerHardening
from .store.sessions import Store


class AgentViews:
    """The agents as front ends see them."""

    pool: AgentPool
    store: Store
    hardening: ContainerHardening

    def agent(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``; NotFound when there is none."""
        return self.pool.get(agent_id)

    async def agents_info(self) -> builtins.list[dict[str, object]]:
        """Capacity, allocated and free resources per agent (``jupyter cluster agents``)."""
        return await self.pool.rows(self.store.usage())

    async def resource_groups_info(self, groups: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Capacity, used and free resources summed per group (``GET resource-groups``)."""
        return await self.pool.group_rows(self.store.usage(), groups)

    async def images_info(self, images: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Which agents have each image, the first being the default (``GET images``)."""
        return await self.pool.image_rows(images)

    def host_folder_mount(self) -> tuple[str, int]:
        """Whether a folder of this machine can be mounted into sessions ("" when every
        agent is this machine's engine, else why not) and work's uid; the provisioner
        asks before mounting a notebook's folder (see core.workdir)."""
        remote = [a.config.id for a in self.pool.agents.values() if not a.config.is_this_machine]
        why = f"agent {remote[0]} is not this machine's Docker engine" if remote else ""
        return why, self.hardening.work_uid
