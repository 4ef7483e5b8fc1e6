"""An agent's info from its engine's ``docker info``: capacity, Swarm role, health.

Called by :meth:`~.agent.DockerAgent.info` (the health probe) with what the engine
answered, or with why it did not; pure, so the parsing of Swarm membership
(managers report the cluster id, workers only their node and their managers) is
read in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....core.gpus import GpuReport
from ....core.resources import Resources
from ..agent_config import AgentConfig, AgentInfo


def unreachable_info(config: AgentConfig, message: str) -> AgentInfo:
    """The info of an agent whose engine did not answer (``message`` says why)."""
    return AgentInfo(
        id=config.id,
        resource_group=config.resource_group,
        capacity=Resources(0, 0, 0, 0),
        gpu_ids=config.gpus,
        reachable=False,
        message=message,
    )


def agent_info(config: AgentConfig, data: Mapping[str, Any], gpus: GpuReport) -> AgentInfo:
    """The info of a reachable agent: configured capacity, else what the engine
    reports; its GPUs; its Swarm node, role and managers when it is an active node."""
    cpu = config.cpu if config.cpu is not None else float(data.get("NCPU", 0))
    mem = config.mem if config.mem is not None else int(data.get("MemTotal", 0))
    swarm = data.get("Swarm") or {}
    active = swarm.get("LocalNodeState") == "active"
    managers = tuple(
        str(m.get("NodeID")) for m in swarm.get("RemoteManagers") or () if m.get("NodeID")
    )
    return AgentInfo(
        id=config.id,
        resource_group=config.resource_group,
        capacity=Resources(cpu=cpu, mem=mem, shm=0, gpu=len(gpus.ids)),
        gpu_ids=gpus.ids,
        gpus=gpus.devices,
        gpu_note=gpus.note,
        reachable=True,
        swarm=str((swarm.get("Cluster") or {}).get("ID") or "") if active else "",
        swarm_node=str(swarm.get("NodeID") or "") if active else "",
        swarm_manager=active and bool(swarm.get("ControlAvailable")),
        swarm_managers=managers if active else (),
    )
