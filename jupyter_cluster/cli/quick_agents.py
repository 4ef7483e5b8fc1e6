"""``jupyter cluster agents`` on the fast path (:mod:`.quick`): each agent's ``docker
info`` read with the standard library, made into the rows the engine prints.

The rows are the engine's own (:func:`~jupyter_cluster.engine.agents.rows.agent_rows`),
over each agent's info read with :mod:`~jupyter_cluster.engine.agents.docker.light`,
without asyncio (importing it is a tenth of the command's time). What the fast
path cannot know without the engine falls back to it (raises
:class:`~.quick.Fallback`): an agent that does not answer, and GPUs that would need
the detection probe (an agent that lists no GPUs and whose engine has the NVIDIA
runtime, or ``detect_gpus: always``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.gpus import GpuReport, pinned, wants_probe
from ..core.resources import Resources
from ..engine.agents.agent_config import AgentConfig, AgentInfo
from ..engine.agents.docker.info import agent_info
from ..engine.agents.docker.light import LightDocker, LightDockerError
from ..engine.agents.rows import agent_rows as rows_of
from ..engine.gpu_detection import GpuDetection
from .quick_fallback import Fallback


def _info(config: AgentConfig, docker: LightDocker) -> AgentInfo:
    """An agent's info from ``docker info`` over ``docker`` (Fallback when it does not
    answer, or when its GPUs need the detection probe)."""
    try:
        data = docker.info()
    except LightDockerError as exc:
        raise Fallback(f"agent {config.id}: {exc}") from None
    gpus = pinned(config.gpus)
    if gpus is None:
        if wants_probe(config.gpu_probe.mode, data.get("Runtimes")):
            raise Fallback(f"agent {config.id}: its GPUs need the detection probe")
        gpus = GpuReport()
    return agent_info(config, data, gpus)


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
    infos = [_info(config, docker) for config, (_, docker) in zip(configs, agents, strict=True)]
    return rows_of(infos, usage)
