"""SshRoute: main1 reached over SSH as its owner, the shared service's client's route.

Handed out by :meth:`~jupyter_cluster.client.remote_engine.RemoteEngine.main_route` (team
mode: a user's server has no Docker access). The service gives the session's
owner main1's SSH endpoint and the session's keys; the kernel's ports are
tunnelled over that connection and the kernel process is run and signalled over
SSH too (:class:`~jupyter_cluster.client.shell.SshRunner`). Terminals go through
main1 as well. A kernel starts only once the session is RUNNING (sshd ready);
its environment comes from the session's ``~/.ssh/environment``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jupyter_client.connect import KernelConnectionInfo

from ..client.shell import ContainerShell, SshRunner
from ..core.access import Access
from ..core.models import Session
from ..engine.route_api import KernelEndpoint
from . import terminal
from .ports import tunnel_kernel
from .tunnel import TunnelSlot

#: Seconds to reach main1's sshd from a user's server in team mode.
CONNECT_TIMEOUT = 30.0


class SshRoute:
    """The route over SSH to main1 (see the module docstring)."""

    starts_early = False
    kernel_ip = ""  # main1's loopback: the tunnel's end

    def __init__(self, access: Callable[[str], Awaitable[Access]]) -> None:
        """``access``: main1's SSH endpoint and the session's keys, from the service."""
        self.access = access
        self.transport = "ssh"
        self._tunnel = TunnelSlot()
        self._shell: ContainerShell | None = None

    def kernel_env(self, session: Session) -> dict[str, str]:
        """Nothing: over SSH, ``~/.ssh/environment`` sets the session's environment."""
        return {}

    async def open(
        self,
        km: Any,
        session: Session,
        previous: Mapping[str, Any],
        *,
        stage: str,
        starting: Callable[[KernelEndpoint], Awaitable[None]] | None = None,
    ) -> KernelEndpoint:
        """Tunnel the kernel's ports to main1 and open a shell that runs the kernel
        process (the same at every stage; ``starting`` is not called: the kernel
        runs through that shell, so it starts after)."""
        access = await self.access(session.id)
        if self._shell is not None:
            await self._shell.close()
            self._shell = None
        await self._tunnel.replace(
            lambda: tunnel_kernel(
                km, access.address, access.port, access.keys, previous, CONNECT_TIMEOUT
            )
        )
        self._shell = ContainerShell(access)
        info: KernelConnectionInfo = km.get_connection_info()
        return KernelEndpoint(SshRunner(self._shell), "", info)

    async def terminal_argv(
        self, session: Session, host: str, term: str, key_dir: str
    ) -> list[str]:
        """SSH through main1 into any container (main1 included)."""
        session.locate(host)
        return terminal.ssh_argv(await self.access(session.id), session, host, key_dir)

    async def close_kernel_sockets(self) -> None:
        """Close the tunnel, if open, keeping its sockets' private directory for the
        restart's tunnel (see :class:`~.tunnel.TunnelSlot`); the shell that runs the
        kernel process stays."""
        await self._tunnel.close_sockets()

    async def close(self) -> None:
        """Close the tunnel (its directory too) and the shell, if open."""
        await self._tunnel.close()
        if self._shell is not None:
            await self._shell.close()
            self._shell = None
