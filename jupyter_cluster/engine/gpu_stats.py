"""GPU figures of a container given GPUs: ``nvidia-smi`` run in it, bounded, failing soft.

Docker's stats have no GPU figures, so for a container whose session asked for
GPUs (``Container.gpu_ids``) a sample (:func:`sample`: ``top``, the utilization
clean-up) also runs
:data:`~jupyter_cluster.core.stats.NVIDIA_SMI` in it through its agent (beside
Docker's stats sample, which takes about a second anyway). Whatever goes wrong
(no nvidia-smi in the image, an agent error, no answer within the timeout) gives
no GPU figures and a note saying why, never an error: the other figures stay.
Parsing is pure (:func:`~jupyter_cluster.core.stats.gpu_reading`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ..asyncwait import within
from ..core.stats import NVIDIA_SMI, GpuUsage, gpu_reading
from ..errors import AgentError
from .agents.base import Agent

#: Seconds nvidia-smi may take in a container before the sample goes without GPUs.
GPU_QUERY_TIMEOUT = 3.0
#: Bytes of nvidia-smi's output kept (a line per GPU is about 30).
MAX_OUTPUT = 64 * 1024


async def read_gpus(
    agent: Agent, container_id: str, timeout: float = GPU_QUERY_TIMEOUT
) -> tuple[tuple[GpuUsage, ...], str]:
    """The GPUs ``nvidia-smi`` reports in the container, and a note when there are
    none or not all could be read (see :func:`~jupyter_cluster.core.stats.gpu_reading`)."""
    out = {1: bytearray(), 2: bytearray()}

    def collect(stream: int, data: bytes) -> None:
        kept = out.setdefault(stream, bytearray())
        kept.extend(data[: max(MAX_OUTPUT - len(kept), 0)])

    try:
        code = await within(agent.exec(container_id, NVIDIA_SMI, on_output=collect), timeout)
    except asyncio.TimeoutError:
        return (), f"no GPU figures: nvidia-smi did not answer within {timeout:g} s"
    except AgentError as exc:
        return (), f"no GPU figures: nvidia-smi could not run: {str(exc)[:200]}"
    text = {k: bytes(v).decode("utf-8", errors="replace") for k, v in out.items()}
    return gpu_reading(code, text[1], text[2])


async def sample(
    agent: Agent, container_id: str, with_gpus: bool
) -> tuple[Mapping[str, Any], tuple[GpuUsage, ...], str]:
    """One Docker stats sample of the container (about a second) and, ``with_gpus``,
    its GPUs read meanwhile (:func:`read_gpus`); raises the agent's error of the
    stats. Used by ``top`` (:class:`~.reading.SessionReader`) and the utilization
    clean-up (:mod:`.utilization_reading`)."""
    if not with_gpus:
        return await agent.stats(container_id), (), ""
    raw, (gpus, note) = await asyncio.gather(
        agent.stats(container_id), read_gpus(agent, container_id)
    )
    return raw, gpus, note
