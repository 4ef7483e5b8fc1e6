"""``jupyter cluster agents`` on the fast path (:mod:`.quick`): each agent's ``docker
info`` read with the standard library, made into the rows the engine prints.

The rows are the engine's own (:meth:`~jupyter_cluster.engine.agents.pool.AgentPool.rows`
over agents whose :meth:`info` reads :mod:`~jupyter_cluster.engine.agents.docker.light`);
what the fast path cannot know without the engine falls back to it (raises
:class:`~.quick.Fallback`): an agent that does not answer, and GPUs that would need
the detection probe (an agent that lists no GPUs and whose engine has the NVIDIA
runtime, or ``detect_gpus: always``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.gpus import GpuReport, pinned, wants_probe
from ..core.resources import Resources
from ..engine.agents.base import AgentConfig, AgentInfo
from ..engine.agents.docker.info import agent_info
from ..engine.agents.docker.light import LightDocker, LightDockerError
from ..engine.agents.pool import AgentPool
from ..engine.gpu_detection import GpuDetection
from .quick_fallback import Fallback


class _InfoOnly:
    """An agent that can only say its info, from ``docker info`` over ``docker``."""

    def __init__(self, config: AgentConfig, docker: LightDocker) -> None:
        self.config = config
        self.docker = docker

    async def info(self) -> AgentInfo:
        try:
            data = self.docker.info()
        except LightDockerError as exc:
            raise Fallback(f"agent {self.config.id}: {exc}") from None
        gpus = pinned(self.config.gpus)
        if gpus is None:
            if wants_probe(self.config.gpu_probe.mode, data.get("Runtimes")):
                raise Fallback(f"agent {self.config.id}: its GPUs need the detection probe")
            gpus = GpuReport()
        return agent_info(self.config, data, gpus)


def agent_rows(
    agents: Sequence[tuple[AgentConfig, LightDocker]],
    usage: Mapping[str, Resources],
    settings: Any,
) -> list[dict[str, Any]]:
    """The rows of ``jupyter cluster agents`` (called by :func:`.quick.answer`).

    ``settings`` are the manager's (its config gives the GPU detection's section)."""
    probe = GpuDetection(config=settings.config).probe
    configs = [
        replace(c, gpu_probe=probe(c.gpu_probe.mode, settings.default_image)) for c, _ in agents
    ]
    readers = {c.id: d for c, d in agents}
    pool = AgentPool(configs, lambda c: _InfoOnly(c, readers[c.id]))  # type: ignore[arg-type,return-value]
    return asyncio.run(pool.rows(usage))
