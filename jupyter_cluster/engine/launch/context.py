"""What a launch needs besides the session: agents, keys, mounts, limits, timings, pulls.

Made by :class:`~jupyter_cluster.engine.launching.SessionLauncher` for each placed
session and read by :func:`~.bring_up.bring_up` and its steps (:mod:`.session_network`,
:mod:`.pulling`, :mod:`.readiness`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ...core.fast_network import GroupNetwork
from ...core.models import Container, Session
from ...core.timings import LaunchClock
from ..agents.base import Agent, BindMount, Limits
from ..agents.host_guard import HostGuards
from .pulling import PullReport

#: Called with the session and its created containers (ids set) before a failed
#: launch removes them.
KeepLogs = Callable[[Session, Sequence[Container]], Awaitable[None]]


@dataclass
class LaunchContext:
    """What the launcher needs besides the session."""

    agents: Mapping[str, Agent]
    manager_id: str
    keys: dict[str, str]
    mounts: dict[str, tuple[BindMount, ...]]  # per agent id: resolved data folders
    timeout: float
    encrypted_overlay: bool = False
    limits: Limits = field(default_factory=Limits)
    #: Records the launch's phases (see core.timings); None: not timed.
    clock: LaunchClock | None = None
    #: A warm set taken for this launch: its containers by host (see :mod:`.warm_pool`;
    #: the session's network is then the set's, recorded in the session).
    warm: Mapping[str, str] = field(default_factory=dict)
    #: Keeps the logs of a failed launch's containers before they are removed
    #: (the manager's log archive); None: they go with the containers.
    keep_logs: KeepLogs | None = None
    #: Pulls of the image on placed agents that lack it: the registry's credentials
    #: (None: anonymous), how long one may take, and where progress goes.
    image_auth: Mapping[str, str] | None = None
    pull_timeout: float = 600.0
    pull_report: PullReport | None = None
    #: The session's resource group's network settings (MTU, RDMA).
    network: GroupNetwork = field(default_factory=GroupNetwork)
    #: Which agent hosts have the guard of session bridges (the pool's).
    host_guards: HostGuards = field(default_factory=HostGuards)
    #: Whether another process has ended the session meanwhile (``rm``): that process
    #: keeps the containers' logs and reports its removal, so a launch stopped by it
    #: removes what it made without either (asked by :func:`.bring_up.bring_up`).
    ended_elsewhere: Callable[[], bool] = field(default=lambda: False)

    @property
    def guarded(self) -> bool:
        """Whether the session's bridge is named for the agent hosts' guard and the
        guard is put on its hosts (``guard_bridges``; a host-network session has no
        bridge)."""
        return self.limits.guard_bridges and not self.network.host_network

    def start_guard(self, placed: Iterable[str]) -> asyncio.Future[None]:
        """Begin putting the guard on the hosts of the ``placed`` agents when the
        session is :attr:`guarded` (see :class:`HostGuards`); bring_up awaits it."""
        image = self.limits.egress_image if self.guarded else None
        return self.host_guards.start([self.agents[a] for a in placed], image)

    def mark(self, host: str, phase: str) -> None:
        """``host`` has ended ``phase`` (for :attr:`clock`)."""
        if self.clock is not None:
            self.clock.mark(host, phase)
