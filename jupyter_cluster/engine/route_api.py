"""How a front end reaches main1 of a session: the MainRoute protocol and the
KernelEndpoint it answers with.

Part of the Engine protocol (:mod:`.api`: ``Engine.main_route``). Two routes
implement it: :class:`~jupyter_cluster.reach.agent.AgentRoute` (through main1's
agent) and :class:`~jupyter_cluster.reach.ssh.SshRoute` (over SSH, in team mode);
the provisioner's :class:`~jupyter_cluster.provisioning.kernel_link.KernelLink`
holds one per kernel.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..core.models import Session

if TYPE_CHECKING:
    from jupyter_client.connect import KernelConnectionInfo


class KernelEndpoint(NamedTuple):
    """Where a kernel in main1 is: what runs commands there, and the kernel manager's
    connection info if the route (re)connected it (None: unchanged)."""

    runner: Any  # an agents.base.Executor: an agent, or SSH as work
    container_id: str  # "" over SSH
    connection: KernelConnectionInfo | None
    #: Whom the kernel runs as through ``runner`` (numeric: a kernel may start before
    #: the start-up script has given ``work`` its uid); SSH logs in as work anyway.
    user: str = "work"


class MainRoute(Protocol):
    """How this process reaches main1 of a session (one route per kernel link)."""

    #: How the kernel listens in main1: "direct" (published ports) or "ssh".
    transport: str
    #: The address the kernel listens on if not its transport's default ("").
    kernel_ip: str
    #: Whether a kernel may start as soon as main1's container runs (before the
    #: session is RUNNING and sshd answers).
    starts_early: bool

    def kernel_env(self, session: Session) -> dict[str, str]:
        """Environment to give the kernel explicitly (empty over SSH, where the
        session's ``~/.ssh/environment`` sets it)."""
        ...

    async def open(
        self,
        km: Any,
        session: Session,
        previous: Mapping[str, Any],
        *,
        stage: str,
        starting: Callable[[KernelEndpoint], Awaitable[None]] | None = None,
    ) -> KernelEndpoint:
        """Point the kernel manager ``km`` at main1; ``stage`` is ``launched`` (main1
        just created), ``attach`` (a running session) or ``reattach`` (a restarted
        server finds its kernel again). A route may call ``starting`` (at
        ``launched``) with an endpoint without connection info as soon as the kernel
        can start, while it connects the kernel manager; it returns once both are done."""
        ...

    async def terminal_argv(
        self, session: Session, host: str, term: str, key_dir: str
    ) -> builtins.list[str]:
        """The command line of a terminal into ``host`` (key material, if any, is
        written into ``key_dir``)."""
        ...

    async def close_kernel_sockets(self) -> None:
        """Stop forwarding the kernel's sockets (its kernel ended by itself; its
        clients' reconnections then end here, not in main1), keeping what runs
        commands in main1; the next :meth:`open` forwards them again."""
        ...

    async def close(self) -> None:
        """Close what :meth:`open` left open (tunnels, shells)."""
        ...
