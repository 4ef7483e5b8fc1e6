"""Reaching the kernel in main1: pointing the kernel manager at it, and a handle on it.

Used by :class:`~.provisioner.ClusterProvisioner` when a kernel starts in a session
being launched (:meth:`KernelLink.launched`), starts or restarts in a running one
(:meth:`KernelLink.attach`) and when a restarted server re-attaches to it
(:meth:`KernelLink.reattach`). How main1 is reached is the engine's
:class:`~jupyter_cluster.engine.route_api.MainRoute` (through its agent, or over SSH in
team mode); the link holds the route and what it leaves open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from jupyter_client.connect import KernelConnectionInfo

from ..core.models import Session
from ..engine.route_api import KernelEndpoint, MainRoute
from .process import KernelProcess


class Reached(NamedTuple):
    """A handle on the kernel process, and the kernel manager's connection info if
    the link (re)connected it (None: it is unchanged)."""

    process: KernelProcess
    connection: KernelConnectionInfo | None


class KernelLink:
    """The route from a kernel manager (``km``) to its kernel in main1."""

    def __init__(self, km: Any, kernel_id: str, route: MainRoute) -> None:
        self.km = km
        self.kernel_id = kernel_id
        self.route = route

    @property
    def transport(self) -> str:
        """How the kernel listens in main1: ``direct`` or ``ssh`` (see reach.ports)."""
        return self.route.transport

    @property
    def kernel_ip(self) -> str:
        """Where the kernel listens in main1 if not the transport's default."""
        return self.route.kernel_ip

    async def launched(
        self, session: Session, start: Callable[[KernelProcess], Awaitable[None]]
    ) -> Reached:
        """A session being launched: main1 once its container runs (over SSH: once
        the session is RUNNING), the kernel started by ``start`` on its handle. The
        route may have it started while it connects the kernel manager (through
        main1's agent: the kernel's start-up then overlaps sshd's and the tunnel's);
        otherwise it is started once connected."""
        started: KernelProcess | None = None

        async def starting(endpoint: KernelEndpoint) -> None:
            nonlocal started
            started = self._reached(endpoint).process
            await start(started)

        assert self.km is not None, "ClusterProvisioner runs under a KernelManager"
        endpoint = await self.route.open(self.km, session, {}, stage="launched", starting=starting)
        reached = self._reached(endpoint)
        if started is None:
            await start(reached.process)
            return reached
        return reached._replace(process=started)

    async def attach(self, session: Session, previous: Mapping[str, Any]) -> Reached:
        """A running session (a restart, or a kernel started in an existing session);
        ``previous``: the connection info whose ports a restart keeps."""
        return self._reached(await self._open(session, previous, "attach"))

    async def reattach(self, session: Session, previous: Mapping[str, Any]) -> Reached:
        """The kernel of a running session, which a restarted server finds again with
        its saved connection info ``previous`` (reconnected only through a tunnel)."""
        return self._reached(await self._open(session, previous, "reattach"))

    async def _open(
        self, session: Session, previous: Mapping[str, Any], stage: str
    ) -> KernelEndpoint:
        assert self.km is not None, "ClusterProvisioner runs under a KernelManager"
        return await self.route.open(self.km, session, previous, stage=stage)

    def _reached(self, endpoint: KernelEndpoint) -> Reached:
        process = KernelProcess(
            endpoint.runner, endpoint.container_id, self.kernel_id, endpoint.user
        )
        return Reached(process, endpoint.connection)

    async def kernel_died(self) -> None:
        """The kernel ended by itself: stop forwarding its sockets, so that its
        clients' reconnections do not keep asking sshd in main1 for sockets that are
        gone (a restart's :meth:`attach` forwards them again)."""
        await self.route.close_kernel_sockets()

    async def close(self) -> None:
        """Close what the route left open (tunnels, shells)."""
        await self.route.close()
