"""How to reach one agent and what it offers: :class:`AgentConfig` (and its TLS
files), read from ``ClusterManager.agents`` by :mod:`.registry`, and
:class:`AgentInfo`, what the agent reports.

Kept apart from the Agent protocol in :mod:`.base` (which re-exports them) so that
the CLI's fast path (:mod:`jupyter_cluster.cli.quick` and ``quick_agents``), which
only reads the configuration and ``docker info``, does not build the protocol's
classes at every command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...core.gpus import GpuDevice, GpuProbe
from ...core.resources import Resources


@dataclass(frozen=True)
class TLSFiles:
    """Docker client TLS files of an agent: the CA that signed the engine's
    certificate, and the client certificate and key it accepts."""

    ca: str
    cert: str
    key: str


@dataclass(frozen=True)
class AgentConfig:
    """How to reach one agent and what it offers; read from ``ClusterManager.agents``."""

    id: str = "local"
    url: str = ""  # "" = the local engine (DOCKER_HOST, else the default socket)
    resource_group: str = "default"
    address: str = "127.0.0.1"  # where main1's ports are published
    cpu: float | None = None  # None = what the engine reports
    mem: int | None = None
    gpus: tuple[str, ...] = ()  # pinned device ids: no detection when given
    gpu_probe: GpuProbe = field(default_factory=GpuProbe)  # how GPUs are found when not pinned
    data_root: str | None = None  # data folders as this agent's engine sees them
    tls: TLSFiles | None = None  # required for tcp:// unless insecure
    insecure: bool = False  # plain tcp:// accepted (warned at every start)
    timeout: float = 30.0  # seconds a Docker call may wait for an answer
    connect_timeout: float = 5.0  # seconds to connect to the engine
    #: How kernel clients reach main1's kernel: "direct" (its published ports) or
    #: "ssh" (forwarded through main1's SSH port: encrypted and authenticated).
    kernel_transport: str = "direct"

    def docker_cli_flags(self) -> list[str]:
        """Flags that point the ``docker`` command at this agent (terminals use it)."""
        if not self.url:
            return []
        flags = ["-H", self.url]
        if self.tls is not None:
            flags += ["--tlsverify", "--tlscacert", self.tls.ca, "--tlscert", self.tls.cert]
            flags += ["--tlskey", self.tls.key]
        return flags

    @property
    def is_this_machine(self) -> bool:
        """Whether this agent is this machine's Docker engine (its Unix socket, or
        ``DOCKER_HOST`` naming one when ``url`` is empty), so that a path here names
        the same folder for the engine (the notebook's folder is mounted only then)."""
        url = self.url or os.environ.get("DOCKER_HOST", "")
        return not url or url.startswith("unix://")

    @property
    def connect_address(self) -> str:
        """Where this machine reaches main1's published ports: ``address``, or
        loopback when ports are published on every interface (``0.0.0.0`` or "")."""
        return "127.0.0.1" if self.address in ("", "0.0.0.0") else self.address


@dataclass(frozen=True)
class AgentInfo:
    """Capacity and health of an agent."""

    id: str
    resource_group: str
    capacity: Resources
    gpu_ids: tuple[str, ...]
    reachable: bool
    message: str = ""
    gpus: tuple[GpuDevice, ...] = ()  # what detection found of each GPU (none when pinned)
    gpu_note: str = ""  # why GPU detection found none or not all
    swarm: str = ""  # the Swarm cluster id the engine is an active node of, if any
    swarm_node: str = ""  # its Swarm node id (managers and workers)
    swarm_manager: bool = False  # whether that node is a manager (can make overlays)
    swarm_managers: tuple[str, ...] = ()  # the node ids of its Swarm's managers
