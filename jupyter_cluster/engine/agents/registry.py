"""Turning the ``ClusterManager.agents`` configuration into agent objects.

Called once by the manager at construction. Validates each agent dict with a
message naming the bad key, and supplies the default: one agent, the local
Docker engine, in resource group ``default``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core.units import parse_cpu, parse_size
from ...errors import InvalidRequest
from .base import Agent, AgentConfig

_KEYS = {"id", "url", "resource_group", "address", "cpu", "mem", "gpus", "data_root"}


def agent_configs(raw: Sequence[Mapping[str, Any]], data_root: str) -> list[AgentConfig]:
    """Validated agent configurations; the local engine when ``raw`` is empty."""
    if not raw:
        return [AgentConfig(id="local", data_root=data_root)]
    configs: list[AgentConfig] = []
    for i, entry in enumerate(raw):
        unknown = set(entry) - _KEYS
        if unknown:
            raise InvalidRequest(
                f"ClusterManager.agents[{i}]: unknown key(s) {', '.join(sorted(unknown))}; "
                f"known keys are {', '.join(sorted(_KEYS))}",
                "agents",
            )
        agent_id = str(entry.get("id") or f"agent{i + 1}")
        config = AgentConfig(
            id=agent_id,
            url=str(entry.get("url") or ""),
            resource_group=str(entry.get("resource_group") or "default"),
            address=str(entry.get("address") or "127.0.0.1"),
            cpu=parse_cpu(entry["cpu"], f"agents.{agent_id}.cpu") if "cpu" in entry else None,
            mem=parse_size(entry["mem"], f"agents.{agent_id}.mem") if "mem" in entry else None,
            gpus=tuple(str(g) for g in entry.get("gpus") or ()),
            data_root=str(entry.get("data_root") or data_root),
        )
        if any(c.id == config.id for c in configs):
            raise InvalidRequest(f"ClusterManager.agents: agent id {agent_id!r} is used twice")
        configs.append(config)
    return configs


def make_agent(config: AgentConfig) -> Agent:
    """The real Docker agent for ``config`` (imported lazily: aiodocker is an edge)."""
    from .docker import DockerAgent

    return DockerAgent(config)
