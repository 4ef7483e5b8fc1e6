"""Fast networking per resource group: the session network's MTU, RDMA devices, host network.

Pure: :func:`group_networks` checks ``FastNetworking.resource_groups`` (a dict
keyed by resource group) and turns it into one :class:`GroupNetwork` per group;
that trait (:mod:`jupyter_cluster.engine.fast_network`) validates with it, and the
launcher hands the session's group's settings to
:func:`~jupyter_cluster.engine.launch.bring_up.bring_up`. :func:`network_options`
is what the agent puts on the session network; :func:`rdma_devices` says which
device nodes an agent reported (``Agent.device_nodes``) go to the containers.
A ``host_network`` group runs one container per agent on the agent's own network
(see :mod:`jupyter_cluster.core.host_network`).

Multi-node training (NCCL, MPI) over a plain overlay is several times slower than
over InfiniBand; Backend.AI offers the same two knobs per resource group.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidRequest
from .units import parse_size

#: Where RDMA (InfiniBand, RoCE) device nodes live on a Linux host.
RDMA_DEVICES = "/dev/infiniband"
#: Smallest and largest MTU accepted (IPv4's minimum datagram; IPoIB's connected mode).
MIN_MTU, MAX_MTU = 576, 65520
#: Docker's network option (bridge and overlay drivers) that sets the interfaces' MTU.
MTU_OPTION = "com.docker.network.driver.mtu"
#: The capability RDMA needs to pin (register) memory beyond the memlock limit.
RDMA_CAPABILITY = "IPC_LOCK"
TRAIT = "FastNetworking.resource_groups"
_KEYS = ("mtu", "rdma", "rdma_devices", "memlock", "host_network")
#: The memlock limit of RDMA containers that means none.
UNLIMITED = -1


@dataclass(frozen=True)
class GroupNetwork:
    """The network settings of one resource group (the defaults: Docker's own)."""

    #: Docker's MTU option (0: its default): a bridge's interfaces get it; for an
    #: overlay it is the agents' links' MTU, and its interfaces get 50 bytes less.
    mtu: int = 0
    rdma: bool = False  # pass the agent's RDMA devices through where it has them
    rdma_devices: str = RDMA_DEVICES  # where the agents keep them
    #: The memlock limit (bytes) of containers given RDMA devices; -1: none. An
    #: engine without CAP_SYS_RESOURCE (rootless, nested) cannot go past its own.
    memlock: int = UNLIMITED
    #: Containers on their agent's own network (Docker's host network), one per
    #: agent: no bridge or overlay between the training processes and the NICs.
    host_network: bool = False

    @property
    def special(self) -> bool:
        """Whether anything differs from a plain session network."""
        return bool(self.mtu or self.rdma or self.host_network)


def _one(group: str, raw: Any) -> GroupNetwork:
    where = f"{TRAIT}[{group!r}]"
    if not isinstance(raw, Mapping):
        raise InvalidRequest(
            f"{where}: give a dict with any of the keys {', '.join(_KEYS)}", "resource_group"
        )
    unknown = sorted(str(k) for k in set(raw) - set(_KEYS))
    if unknown:
        raise InvalidRequest(
            f"{where}: unknown key(s) {', '.join(unknown)}; known keys are {', '.join(_KEYS)}",
            "resource_group",
        )
    mtu = raw.get("mtu", 0)
    whole = isinstance(mtu, int) and not isinstance(mtu, bool)
    if not whole or not (mtu == 0 or MIN_MTU <= mtu <= MAX_MTU):
        raise InvalidRequest(
            f"{where}.mtu: {mtu!r}; give a whole number of bytes from {MIN_MTU} to {MAX_MTU} "
            "(the path between the agents must carry it), or 0 for Docker's default",
            "resource_group",
        )
    rdma = raw.get("rdma", False)
    if not isinstance(rdma, bool):
        raise InvalidRequest(f"{where}.rdma: {rdma!r}; give True or False", "resource_group")
    devices = raw.get("rdma_devices", RDMA_DEVICES)
    if not isinstance(devices, str) or not posixpath.isabs(devices) or devices.rstrip("/") == "":
        raise InvalidRequest(
            f"{where}.rdma_devices: {devices!r}; give the absolute path of the directory "
            f"holding the agents' RDMA device nodes (default {RDMA_DEVICES})",
            "resource_group",
        )
    host_network = raw.get("host_network", False)
    if not isinstance(host_network, bool):
        raise InvalidRequest(
            f"{where}.host_network: {host_network!r}; give True or False", "resource_group"
        )
    if host_network and mtu:
        raise InvalidRequest(
            f"{where}.mtu: a host-network group uses its agents' own interfaces; "
            "set their MTU on the hosts and drop mtu here",
            "resource_group",
        )
    memlock = raw.get("memlock", "unlimited")
    if memlock == "unlimited":
        limit = UNLIMITED
    else:
        limit = parse_size(memlock, f"{where}.memlock")
        if limit <= 0:
            raise InvalidRequest(
                f"{where}.memlock: {memlock!r}; give 'unlimited' or a size such as 64g",
                "resource_group",
            )
    return GroupNetwork(
        mtu=mtu,
        rdma=rdma,
        rdma_devices=posixpath.normpath(devices),
        memlock=limit,
        host_network=host_network,
    )


def group_networks(raw: Mapping[Any, Any]) -> dict[str, GroupNetwork]:
    """Checked settings per resource group; raises :class:`InvalidRequest` naming the
    group and the key that is wrong."""
    if not isinstance(raw, Mapping):
        raise InvalidRequest(f"{TRAIT}: give a dict keyed by resource group", "resource_group")
    found = {}
    for group, entry in raw.items():
        if not isinstance(group, str) or not group:
            raise InvalidRequest(
                f"{TRAIT}: {group!r} is not a resource group name", "resource_group"
            )
        found[group] = _one(group, entry)
    return found


def network_options(mtu: int, *, overlay: bool, encrypted: bool) -> dict[str, str]:
    """Docker's driver options of a session network (the agent's create_network
    calls this): the MTU when set (0: Docker's default; the bridge and overlay
    drivers both take it) and, for an overlay, IPsec encryption if asked."""
    options = {}
    if mtu:
        options[MTU_OPTION] = str(mtu)
    if overlay and encrypted:
        options["encrypted"] = "true"
    return options


def rdma_devices(settings: GroupNetwork, found: Sequence[str]) -> tuple[str, ...]:
    """The device nodes (agent paths) passed through to a container of the group:
    those the agent reported under ``settings.rdma_devices`` when the group asks for
    RDMA, else none. Sorted, so every container of an agent gets the same list."""
    if not settings.rdma:
        return ()
    root = settings.rdma_devices.rstrip("/") + "/"
    return tuple(sorted({p for p in found if p.startswith(root)}))
