"""What the manager gives a session's owner: SSH access, resource use, data folders.

:class:`OwnerViews` sits between the settings and
:class:`~jupyter_cluster.engine.manager.ClusterManager` (which inherits it): the REST
handlers, the CLI and the shared service call these methods on the manager. Access
is how an owner's own server reaches main1 in team mode; folders are scoped to an
owner when ``folders_per_owner`` is on (see :mod:`.folder_space`).
"""

from __future__ import annotations

import asyncio
import builtins

from ..core import naming
from ..core.access import Access, public_material
from ..core.models import Container
from ..core.state import ACTIVE, USABLE, ContainerStatus
from ..core.stats import Usage, usage_from_docker
from ..errors import AgentError, Conflict
from .agents.base import Agent
from .folder_space import FolderSpace
from .folders import FolderInfo
from .gpu_stats import read_gpus
from .settings import ManagerSettings
from .store.sessions import Store


class OwnerViews(ManagerSettings):
    """Per-owner views of the manager's sessions and folders (see the module docstring)."""

    store: Store

    def agent(self, agent_id: str) -> Agent:
        """The agent called ``agent_id`` (implemented by ClusterManager, which owns the
        agent pool)."""
        raise NotImplementedError

    async def access(self, ref: str) -> Access:
        """How the session's owner reaches it over SSH: main1's published SSH port on
        its agent's address, and the session's keys (terminals, the shared service's
        ``GET sessions/{id}/access``). Conflict unless main1 runs."""
        session = self.store.resolve(ref)
        main = session.containers[0]
        keys = self.store.load_keys(session.id)
        state = None
        if main.container_id and session.status in USABLE:
            state = await self.agent(main.agent or "").inspect_container(main.container_id)
        if state is None or not state.running or not keys:
            raise Conflict(
                f"main1 of session {session.name} is not running; its containers are "
                "reached through it"
            )
        if naming.SSH_PORT not in state.ports:
            raise Conflict(f"main1 of session {session.name} publishes no SSH port")
        address = self.agent(main.agent or "").config.connect_address
        return Access(address, state.ports[naming.SSH_PORT][1], public_material(keys))

    async def stats(self, ref: str) -> dict[str, Usage | None]:
        """Each container's use now (CPU, memory, network, block IO; GPUs for a container
        given some, see :mod:`.gpu_stats`), read from its agent concurrently (about a
        second: Docker measures CPU over one); None for a container that is not
        running or whose agent does not answer."""
        session = self.store.resolve(ref)
        if session.status not in USABLE:
            raise Conflict(f"session {session.name} is {session.status.value}, not running")

        async def one(container: Container) -> Usage | None:
            if container.status is not ContainerStatus.RUNNING or not container.container_id:
                return None
            agent, cid = self.agent(container.agent or ""), container.container_id
            try:
                if not container.gpu_ids:
                    return usage_from_docker(await agent.stats(cid))
                raw, (gpus, note) = await asyncio.gather(agent.stats(cid), read_gpus(agent, cid))
            except AgentError:
                return None
            return usage_from_docker(raw).with_gpus(gpus, note)

        found = await asyncio.gather(*(one(c) for c in session.containers))
        return dict(zip(session.hosts, found, strict=True))

    def active_sessions_mounting(self, folder: str, owner: str = "") -> builtins.list[str]:
        """Names of active sessions that mount data folder ``folder`` (of ``owner``,
        when each owner has their own folders)."""
        return [
            s.name
            for s in self.store.list()
            if s.status in ACTIVE
            and any(m.name == folder for m in s.spec.mounts)
            and (not self.folders_per_owner or s.owner == owner)
        ]

    # -- data folders ----------------------------------------------------------------

    def folders_for(self, owner: str) -> FolderSpace:
        """The data folders ``owner`` sees (see :mod:`.folder_space`)."""
        return FolderSpace(
            self.data_root, owner, per_owner=self.folders_per_owner, shared=self.shared_folders
        )

    async def list_folders(self, owner: str = "") -> builtins.list[FolderInfo]:
        """``owner``'s folders and the shared ones (CLI ``folder ls``, ``GET folders``)."""
        return self.folders_for(owner).list()

    async def create_folder(self, name: str, owner: str = "") -> FolderInfo:
        """Make one of ``owner``'s folders."""
        return self.folders_for(owner).create(name)

    async def remove_folder(self, name: str, owner: str = "") -> None:
        """Delete one of ``owner``'s folders; refused while an active session mounts it."""
        self.folders_for(owner).remove(name, self.active_sessions_mounting(name, owner))
