"""The Agent protocol: everything the manager asks of a Docker host.

The manager talks to agents only through this interface, so the pure core and the
manager's unit tests can use :mod:`.fake`, while :mod:`.docker` (a package) is the real edge
(aiodocker, one client per agent). Every method raises
:class:`~jupyter_cluster.errors.AgentError` (never a library exception).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...core.naming import DEFAULT_IMAGE, WORK_UID
from ...core.resources import Resources
from ...core.state import exit_reason
from .agent_config import AgentConfig as AgentConfig  # re-exported: its old home
from .agent_config import AgentInfo as AgentInfo
from .agent_config import TLSFiles as TLSFiles

#: Docker's default bridge network: where main1 is created while its session's
#: network is still being made (see ``Agent.move_to_network``).
DEFAULT_BRIDGE = "bridge"

#: Called with (stream, data) as an exec'd command writes: stream 1 is stdout, 2 stderr.
OutputCallback = Callable[[int, bytes], Awaitable[None] | None]


#: What the start-up script, sshd and ``work`` need (see :mod:`jupyter_cluster.engine.hardening`).
KEPT_CAPABILITIES = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "SETUID",
    "SETGID",
    "SYS_CHROOT",
    "KILL",
    "AUDIT_WRITE",
)


@dataclass(frozen=True)
class Limits:
    """The confinement of one container, as the agent applies it."""

    pids_limit: int = 4096
    capabilities: tuple[str, ...] = KEPT_CAPABILITIES
    no_new_privileges: bool = True
    log_max_size: str = "20m"
    log_max_files: int = 3
    writable_layer_size: str = ""  # "" = no cap (needs overlay2 on xfs with pquota)
    egress_deny: tuple[str, ...] = ()  # address ranges (or "agent") containers cannot reach
    egress_image: str = DEFAULT_IMAGE  # has iproute2; applies egress_deny
    work_uid: int = WORK_UID  # uid and gid of user work (ContainerHardening.work_uid)
    guard_bridges: bool = True  # the agent hosts' guard of session bridges (core.host_guard)


@dataclass(frozen=True)
class BindMount:
    """A host directory (or, with ``volume``, a named Docker volume of the agent)
    mounted into a container."""

    source: str
    target: str
    readonly: bool = False
    volume: bool = False
    #: False: the folder alone, without what is mounted below it (Docker's recursive
    #: read-only bind leaves those writable on engines before 25).
    recursive: bool = True


@dataclass(frozen=True)
class ContainerSpec:
    """What to create: one container of a session, fully resolved."""

    name: str
    image: str
    hostname: str
    network: str
    aliases: tuple[str, ...]
    env: Mapping[str, str]
    labels: Mapping[str, str]
    resources: Resources
    command: Sequence[str]
    gpu_ids: tuple[str, ...] = ()
    mounts: tuple[BindMount, ...] = ()
    publish: tuple[int, ...] = ()  # container TCP ports published on the agent's address
    #: Device nodes of the agent passed through at the same path (RDMA); with any,
    #: the container also gets IPC_LOCK and ``memlock`` (bytes; -1: no limit).
    devices: tuple[str, ...] = ()
    memlock: int = -1
    #: ``/etc/hosts`` entries ("name:address"): a host-network container's peers.
    extra_hosts: tuple[str, ...] = ()
    workdir: str = "/home/work"
    user: str = "root"  # the start-up script drops to ``work`` itself
    limits: Limits = field(default_factory=Limits)  # PIDs, capabilities, logs…


@dataclass(frozen=True)
class ContainerState:
    """What Docker says about a container right now."""

    id: str
    name: str
    labels: Mapping[str, str]
    running: bool
    status: str  # Docker's word: created, running, exited, dead…
    exit_code: int | None = None
    #: Whether the out-of-memory killer ended it, and when it ended (ISO 8601, UTC).
    oom_killed: bool = False
    finished_at: str = ""
    ports: Mapping[int, tuple[str, int]] = field(default_factory=dict)
    image: str = ""
    resources: Resources | None = None
    mounts: tuple[BindMount, ...] = ()
    #: On its agent's own network (Docker's host network): its ports are the agent's.
    host_network: bool = False


def not_running_reason(state: ContainerState | None) -> str | None:
    """Why a container is not running, as its status reason says it (the exit code,
    the out-of-memory killer, when; "is gone" when its agent no longer has it), or
    None while it runs. Reconciliation and the batch watcher word it alike."""
    if state is None:
        return "is gone"
    if state.running:
        return None
    return exit_reason(state.exit_code, state.oom_killed, state.finished_at)


@dataclass(frozen=True)
class OomEvent:
    """Docker's word that the out-of-memory killer ended a process in a container
    (perhaps not its init: the container may still run)."""

    container_id: str
    time: float  # seconds since the epoch, as the agent's clock says


@dataclass(frozen=True)
class NetworkState:
    """A network Docker knows, with its labels."""

    id: str
    name: str
    labels: Mapping[str, str]
    driver: str


class Executor(Protocol):
    """What runs commands in a container: an agent (Docker exec), or in team mode an
    :class:`~jupyter_cluster.client.shell.SshRunner` (SSH as work). The kernel's
    process handle (``provisioning/process.py``) and the cgroup CPU read
    (``docker/cpu_counter.py``) need no more of either."""

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = ...,
        workdir: str = ...,
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int: ...


class Agent(Protocol):
    """A Docker host the manager can place containers on."""

    config: AgentConfig

    @property
    def id(self) -> str: ...

    async def info(self) -> AgentInfo:
        """Capacity (configured, else reported by the engine) and reachability."""
        ...

    async def has_image(self, image: str) -> bool: ...

    async def pull_image(
        self,
        image: str,
        auth: Mapping[str, str] | None = None,
        on_message: Callable[[Mapping[str, Any]], Awaitable[None] | None] | None = None,
    ) -> None:
        """Pull ``image`` from its registry with ``auth`` (username, password,
        serveraddress), passing Docker's progress messages to ``on_message``; an
        AgentError carries the registry's answer."""
        ...

    def save_image(self, image: str) -> AsyncIterator[bytes]:
        """``image`` as the tar stream ``docker save`` writes."""
        ...

    async def load_image(self, image: str, pieces: AsyncIterator[bytes]) -> None:
        """Load a ``docker save`` stream (of ``image``, named in errors)."""
        ...

    async def create_network(
        self,
        name: str,
        labels: Mapping[str, str],
        *,
        overlay: bool,
        encrypted: bool = False,
        mtu: int = 0,
        bridge_name: str = "",
    ) -> str:
        """A bridge network, or an attachable overlay (encrypted if asked), its
        interfaces' MTU ``mtu`` (0: Docker's default), a bridge's Linux interface
        named ``bridge_name`` if given (else Docker's ``br-…``); its id."""
        ...

    async def device_nodes(
        self, directory: str, image: str, labels: Mapping[str, str]
    ) -> tuple[str, ...]:
        """The character devices directly under ``directory`` on the agent (paths
        there; none without such a directory), looked at with ``image`` in a helper
        carrying ``labels``. A launch in a group with RDMA asks for its devices."""
        ...

    async def remove_network(self, name_or_id: str) -> None:
        """Remove a network; a missing one is not an error."""
        ...

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        """Create a named volume (a session's start-up files, see
        :mod:`~jupyter_cluster.engine.launch.shared_files`)."""
        ...

    async def remove_volume(self, name: str) -> None:
        """Remove a named volume; a missing one is not an error."""
        ...

    async def create_container(self, spec: ContainerSpec) -> str:
        """Create (not start) a container; returns its id."""
        ...

    async def put_files(self, container_id: str, files: Sequence[FileEntry]) -> None:
        """Copy files (with owner and mode) into a created container."""
        ...

    async def move_to_network(
        self, container_id: str, network: str, aliases: Sequence[str]
    ) -> None:
        """Move a created, not yet started container from Docker's default bridge
        (:data:`DEFAULT_BRIDGE`, where it was created) to ``network``, known there by
        ``aliases``: a launch creates main1 while its network is being made."""
        ...

    async def start_container(self, container_id: str) -> None: ...

    async def inspect_container(self, container_id: str) -> ContainerState | None:
        """The container's state, or None when it no longer exists."""
        ...

    async def remove_container(self, container_id: str) -> None:
        """Kill and remove a container; a missing one is not an error."""
        ...

    def logs(
        self,
        container_id: str,
        *,
        tail: int | None = None,
        follow: bool = False,
        for_user: bool = False,
    ) -> AsyncIterator[str]:
        """The container's stdout/stderr as text lines (with their newline).

        ``for_user``: a user's read (REST, CLI, notebook), served from connections
        kept apart from the engine's own (so users' streams never starve a launch).
        """
        ...

    async def exec(
        self,
        container_id: str,
        cmd: Sequence[str],
        *,
        user: str = "work",
        workdir: str = "/home/work",
        env: Mapping[str, str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> int:
        """Run ``cmd`` in the container, stream its output, return its exit code."""
        ...

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        """One sample of Docker's stats of the container (``GET …/stats?stream=false``:
        CPU over about a second, memory, network, block IO); read by core.stats."""
        ...

    async def cpu_seconds(self, container_id: str) -> float:
        """CPU seconds the running container's processes have used so far (Docker's
        cumulative counter, one read with no second sample); read just before a
        session's containers are removed (:mod:`jupyter_cluster.engine.cpu_time`)."""
        ...

    def oom_events(
        self, labels: Mapping[str, str], *, since: float | None = None
    ) -> AsyncIterator[OomEvent]:
        """Follow the out-of-memory kills in containers carrying all of ``labels``
        (also those since ``since``, seconds since the epoch, that the engine still
        remembers); ends when the engine closes the stream. The OOM watch uses it."""
        ...

    async def run_beside(
        self,
        container_id: str,
        image: str,
        script: str,
        capabilities: Sequence[str],
        labels: Mapping[str, str],
    ) -> tuple[int, str]:
        """Run ``script`` (sh, as root) in a throwaway container of ``image`` that shares
        the network namespace of ``container_id`` and holds only ``capabilities``;
        its exit code and output. The egress rules use it."""
        ...

    async def run_on_host(
        self, image: str, script: str, capabilities: Sequence[str], labels: Mapping[str, str]
    ) -> tuple[int, str]:
        """Run ``script`` (sh, as root) in a throwaway container of ``image`` in the
        agent host's network namespace, holding only ``capabilities``; its exit code
        and output. The egress rules' host chain uses it."""
        ...

    async def list_containers(
        self, labels: Mapping[str, str], *, detail: bool = True
    ) -> list[ContainerState]:
        """Containers (running or not) carrying all of ``labels``. ``detail=False``:
        only their id, name, labels, ``running`` and ``status`` are known (one listing,
        no inspection each; enough for clean-up sweeps)."""
        ...

    async def list_networks(self, labels: Mapping[str, str]) -> list[NetworkState]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class FileEntry:
    """A file to put into a container before it starts."""

    path: str  # absolute path in the container
    content: bytes
    mode: int = 0o644
    uid: int = 0
    gid: int = 0
    directory: bool = False  # a directory entry (content ignored)
    fifo: bool = False  # a named pipe (content ignored)
    link: str = ""  # a symbolic link to this path (content ignored)
