"""What the manager and its agents say about containers: how one is made (its
spec, limits, mounts and start-up files) and what Docker says of one (its state,
an out-of-memory event, a network).

Plain values, used across the :class:`~.base.Agent` protocol by the manager, the
launch, reconciliation, :mod:`.fake` and :mod:`.docker`; :mod:`.base` re-exports
them from where they were first defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...core.naming import DEFAULT_IMAGE, WORK_UID
from ...core.resources import Resources
from ...core.state import exit_reason

#: Docker's default bridge network: where main1 is created while its session's
#: network is still being made (see ``Agent.move_to_network``).
DEFAULT_BRIDGE = "bridge"

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
