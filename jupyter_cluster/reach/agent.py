"""AgentRoute: main1 reached through its agent, the local engine's route.

Handed out by :meth:`~jupyter_cluster.engine.manager.ClusterManager.main_route`.
The kernel process runs through ``docker exec`` on main1's agent (so its end is
seen at once), the kernel manager connects to main1's published kernel ports or,
for an agent whose ``kernel_transport`` is ``ssh``, through an SSH tunnel with the
session's keys (:mod:`.ports`). Terminals into main1 are ``docker exec``; into a
sub, SSH through main1 (:mod:`.terminal`). A kernel may start as soon as main1's
container runs: its start-up overlaps the other containers'.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from jupyter_client.connect import KernelConnectionInfo

from ..core import naming
from ..core.access import Access
from ..core.models import Session
from ..engine.agents.base import Agent, ContainerState
from ..engine.route_api import KernelEndpoint
from ..errors import ClusterError
from . import terminal
from .ports import connect_kernel, kernel_listen_address, wait_running
from .tunnel import TunnelSlot

T = TypeVar("T")


async def both(first: Awaitable[Any], second: Awaitable[T]) -> tuple[Any, T]:
    """Await ``first`` and ``second`` concurrently; if either fails, the other is
    cancelled (and awaited) before the error goes on."""
    tasks = [asyncio.ensure_future(first), asyncio.ensure_future(second)]
    try:
        done = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return done[0], done[1]


class AgentRoute:
    """The route through main1's agent (see the module docstring)."""

    starts_early = True

    def __init__(
        self,
        agent: Callable[[str], Agent],
        keys: Callable[[str], Mapping[str, str] | None],
        access: Callable[[str], Awaitable[Access]],
        work_uid: int = naming.WORK_UID,
    ) -> None:
        """``agent``: an agent by id; ``keys``: a session's key material;
        ``access``: main1's SSH endpoint (terminals into subs); ``work_uid``: the
        uid kernels run as (``ContainerHardening.work_uid``)."""
        self.work_uid = work_uid
        self.agent = agent
        self.keys = keys
        self.access = access
        self.transport = "direct"
        self.kernel_ip = ""
        self._tunnel = TunnelSlot()

    def kernel_env(self, session: Session) -> dict[str, str]:
        """The session's environment, given explicitly: a container taken from the
        warm pool was created before its session existed."""
        return naming.container_env(session, session.containers[0])

    async def open(
        self,
        km: Any,
        session: Session,
        previous: Mapping[str, Any],
        *,
        stage: str,
        starting: Callable[[KernelEndpoint], Awaitable[None]] | None = None,
    ) -> KernelEndpoint:
        """Point ``km`` at main1's kernel (see MainRoute.open). At ``launched``,
        ``starting`` (if given) is called as soon as main1 runs, while ``km`` is
        connected: the kernel's start-up overlaps sshd's and the SSH tunnel's."""
        main = session.containers[0]
        agent = self.agent(main.agent or "")
        container_id = main.container_id or ""
        user = f"{self.work_uid}:{self.work_uid}"
        connection = None
        if stage == "launched":
            state = await wait_running(agent, container_id)
            connecting = self._connect(km, agent, state, session.id, previous)
            if starting is None:
                connection = await connecting
            else:
                self.transport = agent.config.kernel_transport  # what the kernel needs
                self.kernel_ip = kernel_listen_address(agent, state)
                early = KernelEndpoint(agent, container_id, None, user)
                connection = (await both(starting(early), connecting))[1]
        elif stage == "attach":
            state = await self._running(agent, container_id, session)
            connection = await self._connect(km, agent, state, session.id, previous)
        elif agent.config.kernel_transport == "ssh":  # reattach: only a tunnel is redone
            found = await agent.inspect_container(container_id)
            if found is None or not found.running:
                raise ClusterError(f"main1 of cluster session {session.name} is not running")
            connection = await self._connect(km, agent, found, session.id, previous)
        return KernelEndpoint(agent, container_id, connection, user)

    @staticmethod
    async def _running(agent: Agent, container_id: str, session: Session) -> ContainerState:
        state = await agent.inspect_container(container_id)
        if state is None or not state.running:
            why = "is gone" if state is None else f"exited with code {state.exit_code}"
            raise ClusterError(
                f"main1 of cluster session {session.name} {why}, so its kernel cannot be "
                "restarted; shut the kernel down (that ends the session) and start a new one"
            )
        return state

    async def _connect(
        self,
        km: Any,
        agent: Agent,
        state: ContainerState,
        session_id: str,
        previous: Mapping[str, Any],
    ) -> KernelConnectionInfo:
        """Point the kernel manager at main1 on its agent, the agent's way."""
        self.transport = agent.config.kernel_transport
        self.kernel_ip = kernel_listen_address(agent, state)
        keys = self.keys(session_id) or {}
        await self._tunnel.replace(lambda: connect_kernel(km, agent, state, keys, previous))
        info: KernelConnectionInfo = km.get_connection_info()
        return info

    async def terminal_argv(
        self, session: Session, host: str, term: str, key_dir: str
    ) -> list[str]:
        """``docker exec`` into main1; SSH through main1 into a sub."""
        container = session.locate(host)
        if container.role == "main":
            return terminal.docker_argv(
                self.agent(container.agent or "").config, session, host, term, key_dir
            )
        return terminal.ssh_argv(await self.access(session.id), session, host, key_dir)

    async def close_kernel_sockets(self) -> None:
        """Close the tunnel, if one is open, keeping its sockets' private directory
        for the restart's tunnel (see :class:`~.tunnel.TunnelSlot`); :meth:`close`
        removes it."""
        await self._tunnel.close_sockets()

    async def close(self) -> None:
        """Close the tunnel, if one is open."""
        await self._tunnel.close()
