"""Reaching the kernel in main1: pointing the kernel manager at it, and a handle on it.

Used by :class:`~.provisioner.ClusterProvisioner` when a kernel starts in a session
being launched (:meth:`KernelLink.launched`), starts or restarts in a running one
(:meth:`KernelLink.attach`) and when a restarted server re-attaches to it
(:meth:`KernelLink.reattach`). The link holds what a connection leaves open: the SSH
tunnel of an agent whose ``kernel_transport`` is ``ssh`` (see :mod:`.ports`) and, in
team mode, the SSH shell that runs and signals the kernel process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from jupyter_client.connect import KernelConnectionInfo

from ..client.shell import ContainerShell, SshRunner
from ..core.models import Session
from ..engine.agents.base import Agent, ContainerState
from ..engine.manager import ClusterManager
from ..errors import ClusterError
from .ports import connect_kernel, tunnel_kernel, wait_running
from .process import KernelProcess
from .tunnel import KernelTunnel

#: Seconds to reach main1's sshd from a user's server in team mode.
REMOTE_CONNECT_TIMEOUT = 30.0


class Reached(NamedTuple):
    """A handle on the kernel process, and the kernel manager's connection info if
    the link (re)connected it (None: it is unchanged)."""

    process: KernelProcess
    connection: KernelConnectionInfo | None


class KernelLink:
    """The route from a kernel manager (``km``) to its kernel in main1."""

    def __init__(self, km: Any, kernel_id: str) -> None:
        self.km = km
        self.kernel_id = kernel_id
        #: How the kernel listens in main1: ``direct`` or ``ssh`` (see :mod:`.ports`).
        self.transport = "direct"
        self._tunnel: KernelTunnel | None = None
        self._shell: ContainerShell | None = None

    async def launched(self, engine: ClusterManager, session: Session) -> Reached:
        """A session being launched: main1 once its container runs (team mode: over
        SSH, once the session is RUNNING); the kernel is not started yet."""
        if engine.remote:
            return await self._remote(engine, session.id, {})
        main = session.containers[0]
        agent = engine.agent(main.agent or "")
        state = await wait_running(agent, main.container_id or "")
        connection = await self._local(engine, agent, state, session.id, {})
        return Reached(KernelProcess(agent, main.container_id or "", self.kernel_id), connection)

    async def attach(
        self, engine: ClusterManager, session: Session, previous: Mapping[str, Any]
    ) -> Reached:
        """A running session (a restart, or a kernel started in an existing session);
        ``previous``: the connection info whose ports a restart keeps."""
        if engine.remote:
            return await self._remote(engine, session.id, previous)
        main = session.containers[0]
        agent = engine.agent(main.agent or "")
        state = await agent.inspect_container(main.container_id or "")
        if state is None or not state.running:
            why = "is gone" if state is None else f"exited with code {state.exit_code}"
            raise ClusterError(
                f"main1 of cluster session {session.name} {why}, so its kernel cannot be "
                "restarted; shut the kernel down (that ends the session) and start a new one"
            )
        connection = await self._local(engine, agent, state, session.id, previous)
        return Reached(KernelProcess(agent, main.container_id or "", self.kernel_id), connection)

    async def reattach(
        self, engine: ClusterManager, session_id: str, previous: Mapping[str, Any]
    ) -> Reached:
        """The kernel of a running session, which a restarted server finds again with
        its saved connection info ``previous`` (reconnected only through a tunnel)."""
        if engine.remote:
            return await self._remote(engine, session_id, previous)
        session = await engine.get(session_id)
        main = session.containers[0]
        agent = engine.agent(main.agent or "")
        connection = None
        if agent.config.kernel_transport == "ssh":
            state = await agent.inspect_container(main.container_id or "")
            if state is None or not state.running:
                raise ClusterError(f"main1 of cluster session {session.name} is not running")
            connection = await self._local(engine, agent, state, session.id, previous)
        return Reached(KernelProcess(agent, main.container_id or "", self.kernel_id), connection)

    async def _local(
        self,
        engine: ClusterManager,
        agent: Agent,
        state: ContainerState,
        session_id: str,
        previous: Mapping[str, Any],
    ) -> KernelConnectionInfo:
        """Point the kernel manager at main1 on its agent, the agent's way."""
        assert self.km is not None, "ClusterProvisioner runs under a KernelManager"
        await self.close()
        self.transport = agent.config.kernel_transport
        keys = engine.store.load_keys(session_id) or {}
        self._tunnel = await connect_kernel(self.km, agent, state, keys, previous)
        return self.km.get_connection_info()

    async def _remote(
        self, engine: ClusterManager, session_id: str, previous: Mapping[str, Any]
    ) -> Reached:
        """Team mode: tunnel the kernel's ports over SSH to main1 with the session's
        keys from the service; the kernel process is run and signalled over SSH too."""
        assert self.km is not None, "ClusterProvisioner runs under a KernelManager"
        access = await engine.access(session_id)
        await self.close()
        self.transport = "ssh"
        self._tunnel = await tunnel_kernel(
            self.km, access.address, access.port, access.keys, previous, REMOTE_CONNECT_TIMEOUT
        )
        connection = self.km.get_connection_info()
        self._shell = ContainerShell(access)
        return Reached(KernelProcess(SshRunner(self._shell), "", self.kernel_id), connection)

    async def close(self) -> None:
        """Close the tunnel and the shell, if open."""
        if self._tunnel is not None:
            await self._tunnel.close()
            self._tunnel = None
        if self._shell is not None:
            await self._shell.close()
            self._shell = None
