"""The engine's agents as configured: each ``ClusterManager.agents`` entry completed
with the engine-wide settings, warned about when it is reachable by anyone.

Called once, by :class:`~.manager.ClusterManager`'s constructor, which makes the
:class:`~.agents.pool.AgentPool` of them; :mod:`.agents.registry` validates the
entries themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..core.gpus import GpuProbe
from .agents.agent_config import AgentConfig
from .agents.registry import agent_configs
from .settings import ManagerSettings


def configured_agents(
    settings: ManagerSettings,
    gpu_probe: Callable[[str, str], GpuProbe],
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> list[AgentConfig]:
    """Every agent's configuration with the engine's Docker timeouts, its kernel
    transport (when set) and its GPU probe (``gpu_probe(agent's mode, image)``, see
    :class:`~.gpu_detection.GpuDetection`); a plain TCP Docker API is logged as the
    risk it is, at every start."""
    timeouts = {
        "timeout": settings.docker_timeout,
        "connect_timeout": settings.docker_connect_timeout,
    }
    configs = agent_configs(settings.agents, settings.data_root, timeouts)
    if settings.kernel_transport:
        configs = [replace(c, kernel_transport=settings.kernel_transport) for c in configs]
    configs = [
        replace(c, gpu_probe=gpu_probe(c.gpu_probe.mode, settings.default_image)) for c in configs
    ]
    for config in configs:
        if config.insecure and config.url.startswith("tcp://"):
            log.warning(
                "agent %s: %s is a plain TCP Docker API (insecure: True): anyone who "
                "reaches it is root on that host and sees session keys in clear text",
                config.id,
                config.url,
            )
    return configs
