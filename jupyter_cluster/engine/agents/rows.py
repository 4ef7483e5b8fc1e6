"""The rows ``jupyter cluster agents`` and ``GET agents`` show, from what each agent
reported: capacity, allocated and free resources, and its Swarm.

Pure (no asyncio, no Docker): :meth:`~.pool.AgentPool.rows` uses it over the agents'
info, and so does the CLI's fast path (``cli/quick_agents.py``), which reads that
info with the standard library and must start at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core.resources import Resources
from ...core.swarms import SwarmNode, join_swarms
from .agent_config import AgentInfo


def swarm_node(info: AgentInfo) -> SwarmNode:
    """What :func:`~jupyter_cluster.core.swarms.join_swarms` needs of an agent's info."""
    return SwarmNode(
        agent=info.id,
        reachable=info.reachable,
        node=info.swarm_node,
        manager=info.swarm_manager,
        managers=info.swarm_managers,
        cluster=info.swarm,
    )


def swarm_role(info: AgentInfo) -> str:
    """``manager``, ``worker`` or "" (not a Swarm node), as ``agents`` shows it."""
    if not info.swarm_node:
        return ""
    return "manager" if info.swarm_manager else "worker"


def swarm_warning(row: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], note: str = "") -> str:
    """Why multi-node sessions can't span ``row``'s agent and others of its group
    (``note``: what core.swarms says of that agent, if anything)."""
    if not row["reachable"]:
        return ""
    if note:
        return note
    peers = [
        r
        for r in rows
        if r is not row and r["reachable"] and r["resource_group"] == row["resource_group"]
    ]
    apart = [r["id"] for r in peers if not row["swarm"] or r["swarm"] != row["swarm"]]
    if not apart:
        return ""
    if not row["swarm"]:
        return (
            f"not a Docker Swarm node: multi-node sessions can't span it and "
            f"{', '.join(apart)} (docker swarm init on one agent, docker swarm join on the others)"
        )
    return (
        f"not in the same Docker Swarm as {', '.join(apart)}: multi-node sessions can't span "
        "them (docker swarm join them to one Swarm)"
    )


def agent_rows(infos: Sequence[AgentInfo], usage: Mapping[str, Resources]) -> list[dict[str, Any]]:
    """One row per agent of ``infos``: capacity, allocated (``usage``: what sessions
    hold per agent) and free resources, its GPUs and its Swarm, with a warning when
    multi-node sessions can't span it and others of its group."""
    swarms = join_swarms([swarm_node(i) for i in infos])
    rows = []
    for info in infos:
        cap = info.capacity
        used = usage.get(info.id) or Resources(0, 0, 0, 0)
        rows.append(
            {
                "id": info.id,
                "resource_group": info.resource_group,
                "reachable": info.reachable,
                "message": info.message,
                "capacity": cap.to_dict(),
                "allocated": used.to_dict(),
                "free": {
                    "cpu": round(cap.cpu - used.cpu, 6),
                    "mem": cap.mem - used.mem,
                    "gpu": cap.gpu - used.gpu,
                },
                "gpu_ids": list(info.gpu_ids),
                "gpus": [g.to_dict() for g in info.gpus],  # empty when pinned
                "gpu_note": info.gpu_note,
                "swarm": swarms[info.id].swarm,
                "swarm_role": swarm_role(info),
                "warning": "",
            }
        )
    for row in rows:
        row["warning"] = swarm_warning(row, rows, swarms[str(row["id"])].note)
    return rows
