"""Docker API bodies in and out: the create-container request, and container state.

Pure translation between :mod:`.base`'s dataclasses and the JSON the Docker Engine
API speaks; used by :class:`~jupyter_cluster.engine.agents.docker.DockerAgent`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ....core import naming
from ....core.fast_network import RDMA_CAPABILITY, network_options
from ....core.host_network import HOST_NETWORK
from ....core.resources import Resources
from ..base import BindMount, ContainerSpec, ContainerState, NetworkState

#: Docker's bridge driver option that names the bridge's Linux interface.
BRIDGE_NAME_OPTION = "com.docker.network.bridge.name"


def mount_config(mount: BindMount) -> dict[str, Any]:
    """One of a container's mounts as Docker's API takes it."""
    config: dict[str, Any] = {
        "Type": "volume" if mount.volume else "bind",
        "Source": mount.source,
        "Target": mount.target,
        "ReadOnly": mount.readonly,
    }
    if not mount.volume and not mount.recursive:
        config["BindOptions"] = {"NonRecursive": True}
    return config


def container_config(spec: ContainerSpec, address: str) -> dict[str, Any]:
    """The body of ``POST /containers/create`` for ``spec``; ports published on
    ``address`` (the agent's)."""
    res = spec.resources
    host_config: dict[str, Any] = {
        "NanoCpus": round(res.cpu * 1e9),
        "Memory": res.mem,
        "MemorySwap": res.mem,  # equal to Memory: no swap
        "ShmSize": res.shm,
        "Init": True,
        "NetworkMode": spec.network,
        "Mounts": [mount_config(m) for m in spec.mounts],
        "PortBindings": {
            f"{port}/tcp": [{"HostIp": address, "HostPort": ""}] for port in spec.publish
        },
    }
    if spec.extra_hosts:
        host_config["ExtraHosts"] = list(spec.extra_hosts)
    host_config.update(confinement(spec))
    if spec.devices:
        host_config.update(rdma_host_config(spec.devices, host_config["CapAdd"], spec.memlock))
    env = dict(spec.env)
    if spec.gpu_ids:  # exactly these devices; the same list for an nvidia default runtime
        host_config["DeviceRequests"] = [
            {"Driver": "nvidia", "DeviceIDs": list(spec.gpu_ids), "Capabilities": [["gpu"]]}
        ]
        env["NVIDIA_VISIBLE_DEVICES"] = ",".join(spec.gpu_ids)
    else:  # hosts whose default runtime is nvidia would otherwise expose every GPU
        env["NVIDIA_VISIBLE_DEVICES"] = "void"
    return {
        "Image": spec.image,
        "Hostname": spec.hostname,
        "User": spec.user,
        "WorkingDir": spec.workdir,
        "Env": [f"{k}={v}" for k, v in env.items()],
        "Labels": dict(spec.labels),
        "Entrypoint": list(spec.command),
        "Cmd": [],
        "ExposedPorts": {f"{port}/tcp": {} for port in spec.publish},
        "HostConfig": host_config,
        # Docker keeps network-scoped aliases to user-defined networks.
        "NetworkingConfig": {
            "EndpointsConfig": {}
            if spec.network == HOST_NETWORK
            else {spec.network: {"Aliases": list(spec.aliases)}}
        },
    }


def rdma_host_config(
    devices: Sequence[str], kept: Sequence[str], memlock: int = -1
) -> dict[str, Any]:
    """HostConfig keys of a container given RDMA device nodes: the nodes (same path
    inside), ``IPC_LOCK`` added to the kept capabilities and the memlock limit
    ``memlock`` (-1: none; RDMA pins the memory it registers). Only containers with
    devices get these."""
    caps = list(kept)
    if RDMA_CAPABILITY not in caps:
        caps.append(RDMA_CAPABILITY)
    return {
        "Devices": [
            {"PathOnHost": d, "PathInContainer": d, "CgroupPermissions": "rwm"} for d in devices
        ],
        "CapAdd": caps,
        "Ulimits": [{"Name": "memlock", "Soft": memlock, "Hard": memlock}],
    }


def network_config(
    name: str,
    labels: Mapping[str, str],
    *,
    overlay: bool,
    encrypted: bool,
    mtu: int,
    bridge_name: str = "",
) -> dict[str, Any]:
    """The body of ``POST /networks/create``: a bridge, or an attachable overlay, with
    the MTU (0: Docker's default), overlay encryption and a bridge's Linux name as
    asked."""
    config: dict[str, Any] = {
        "Name": name,
        "Driver": "overlay" if overlay else "bridge",
        "Attachable": True,
        "CheckDuplicate": True,
        "Labels": dict(labels),
    }
    options = network_options(mtu, overlay=overlay, encrypted=encrypted)
    if bridge_name and not overlay:
        options[BRIDGE_NAME_OPTION] = bridge_name
    if options:
        config["Options"] = options
    return config


def confinement(spec: ContainerSpec) -> dict[str, Any]:
    """HostConfig keys of ``spec.limits``: PIDs, capabilities, privileges, log rotation."""
    limits = spec.limits
    config: dict[str, Any] = {
        "CapDrop": ["ALL"],
        "CapAdd": list(limits.capabilities),
        "Privileged": False,
        "LogConfig": {
            "Type": "json-file",
            "Config": {"max-size": limits.log_max_size, "max-file": str(limits.log_max_files)},
        },
    }
    if limits.pids_limit:
        config["PidsLimit"] = limits.pids_limit
    if limits.no_new_privileges:
        config["SecurityOpt"] = ["no-new-privileges"]
    if limits.writable_layer_size:
        config["StorageOpt"] = {"size": limits.writable_layer_size}
    return config


def listed_state(data: Mapping[str, Any]) -> ContainerState:
    """A :class:`ContainerState` from one entry of ``GET /containers/json``: id, name,
    labels, whether it runs and its status only (no inspection)."""
    names = data.get("Names") or [""]
    return ContainerState(
        id=data["Id"],
        name=str(names[0]).lstrip("/"),
        labels=data.get("Labels") or {},
        running=data.get("State") == "running",
        status=str(data.get("State") or "unknown"),
    )


def container_state(data: Mapping[str, Any]) -> ContainerState:
    """A :class:`ContainerState` from ``GET /containers/{id}/json``."""
    state = data.get("State") or {}
    ports: dict[int, tuple[str, int]] = {}
    for key, bindings in ((data.get("NetworkSettings") or {}).get("Ports") or {}).items():
        if bindings:
            ports[int(key.split("/")[0])] = (bindings[0]["HostIp"], int(bindings[0]["HostPort"]))
    host_config = data.get("HostConfig") or {}
    host_network = host_config.get("NetworkMode") == HOST_NETWORK
    if host_network:  # nothing is published: its ports are the agent's own
        ports = {p: ("", p) for p in (naming.SSH_PORT, *naming.KERNEL_PORTS)}
    return ContainerState(
        host_network=host_network,
        image=(data.get("Config") or {}).get("Image", ""),
        resources=Resources(
            cpu=(host_config.get("NanoCpus") or 0) / 1e9,
            mem=host_config.get("Memory") or 0,
            shm=host_config.get("ShmSize") or 0,
            gpu=sum(len(r.get("DeviceIDs") or []) for r in host_config.get("DeviceRequests") or []),
        ),
        mounts=tuple(
            BindMount(m.get("Source", ""), m.get("Destination", ""), not m.get("RW", True))
            for m in data.get("Mounts") or []
        ),
        id=data["Id"],
        name=data.get("Name", "").lstrip("/"),
        labels=(data.get("Config") or {}).get("Labels") or {},
        running=bool(state.get("Running")),
        status=state.get("Status", "unknown"),
        exit_code=state.get("ExitCode"),
        oom_killed=bool(state.get("OOMKilled")),
        finished_at=_when(state.get("FinishedAt")),
        ports=ports,
    )


def _when(stamp: Any) -> str:
    """Docker's FinishedAt, to the second; empty for its zero time (never finished)."""
    text = str(stamp or "")
    return "" if not text or text.startswith("0001-") else text[:19] + "Z"


def network_state(data: Mapping[str, Any]) -> NetworkState:
    """A :class:`NetworkState` from one entry of ``GET /networks``."""
    return NetworkState(
        id=data["Id"], name=data["Name"], labels=data.get("Labels") or {}, driver=data["Driver"]
    )


def label_filter(labels: Mapping[str, str]) -> dict[str, list[str]]:
    """The ``filters`` query that matches every one of ``labels``."""
    return {"label": [f"{k}={v}" for k, v in labels.items()]}
