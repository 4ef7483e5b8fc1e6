"""An agent's GPUs: what ``nvidia-smi`` lists, when to ask, and what a container is told.

Pure. The Docker agent's GPU probe (:mod:`jupyter_cluster.engine.agents.docker.gpus`)
runs :data:`NVIDIA_SMI_LIST` in a throwaway container on the agent and reads its
output with :func:`probe_outcome`; :func:`wants_probe` says whether an agent is
probed at all (by default only when its Docker engine has an ``nvidia`` runtime,
so machines without NVIDIA pay nothing); a configured ``gpus`` list always wins
over what a probe finds (:func:`pinned`). :mod:`.naming` tells each container how
many GPUs it holds with :func:`gpu_env` (Backend.AI's variable names) and writes
``slots=N`` into the hostfile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: What the probe runs: one CSV line per GPU (index, UUID, model name, memory).
NVIDIA_SMI_LIST = (
    "nvidia-smi",
    "--query-gpu=index,uuid,name,memory.total",
    "--format=csv,noheader",
)
#: ``detect_gpus`` values: probe when the engine has an ``nvidia`` runtime, always, never.
DETECT_MODES = ("auto", "always", "never")
#: The Docker runtime whose presence (``docker info`` ``Runtimes``) means "probe" in auto mode.
NVIDIA_RUNTIME = "nvidia"
_UNITS = {"": 1 << 20, "mib": 1 << 20, "gib": 1 << 30, "kib": 1 << 10, "b": 1}


@dataclass(frozen=True)
class GpuDevice:
    """One GPU of an agent as ``nvidia-smi`` lists it; ``index`` is its device id."""

    index: str
    uuid: str
    name: str
    memory: int  # bytes; 0 when nvidia-smi did not say

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``agents`` rows)."""
        return {"id": self.index, "uuid": self.uuid, "name": self.name, "memory": self.memory}


@dataclass(frozen=True)
class GpuProbe:
    """How an agent's GPUs are found: ``mode`` (one of :data:`DETECT_MODES`; "" is
    "auto"), the image nvidia-smi runs in ("" is the default image), the runtime
    it runs with, seconds it may take, and seconds before a failed probe is retried."""

    mode: str = "auto"
    image: str = ""
    runtime: str = NVIDIA_RUNTIME
    timeout: float = 20.0
    retry: float = 300.0


@dataclass(frozen=True)
class GpuReport:
    """An agent's GPUs as offered to sessions: their ids, what is known of each
    (nothing when pinned by configuration), and a note when detection failed."""

    ids: tuple[str, ...] = ()
    devices: tuple[GpuDevice, ...] = ()
    note: str = ""


def wants_probe(mode: str, runtimes: Mapping[str, Any] | None) -> bool:
    """Whether to run the probe on an engine whose ``docker info`` lists ``runtimes``."""
    if mode == "never":
        return False
    return mode == "always" or NVIDIA_RUNTIME in (runtimes or {})


def pinned(configured: Sequence[str]) -> GpuReport | None:
    """The report of an agent whose configuration lists its GPUs (that list wins:
    no probe runs), else None."""
    return GpuReport(ids=tuple(configured)) if configured else None


def parse_memory(text: str) -> int | None:
    """Bytes of nvidia-smi's ``memory.total`` ("81920 MiB", or "81920" with
    ``nounits``); None when it is not a size ("[N/A]")."""
    number, _, unit = text.strip().partition(" ")
    factor = _UNITS.get(unit.strip().lower())
    try:
        value = float(number)
    except ValueError:
        return None
    if factor is None or value != value or value < 0:
        return None
    return int(value * factor)


def parse_gpu_list(text: str) -> tuple[tuple[GpuDevice, ...], list[str]]:
    """The GPUs in :data:`NVIDIA_SMI_LIST`'s output, and the lines it could not read
    (blank lines skipped). A line needs a whole-number index not seen before and a
    UUID; the model name may hold commas; memory that is not a size reads as 0."""
    devices: list[GpuDevice] = []
    bad: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        index = fields[0]
        seen = any(d.index == index for d in devices)
        if len(fields) < 4 or not index.isdigit() or seen or not fields[1]:
            bad.append(line.strip()[:200])
            continue
        memory = parse_memory(fields[-1]) or 0
        devices.append(GpuDevice(index, fields[1], ", ".join(fields[2:-1]), memory))
    return tuple(devices), bad


def probe_outcome(exit_code: int, stdout: str, stderr: str = "") -> GpuReport:
    """The report of one probe run (its exit code and output): the GPUs it listed,
    with a note when it failed or printed lines that are not GPUs."""
    if exit_code != 0:
        said = (stderr.strip() or stdout.strip()).splitlines()[:1]
        why = f": {said[0][:200]}" if said else ""
        return GpuReport(note=f"GPU detection failed (nvidia-smi exit code {exit_code}){why}")
    devices, bad = parse_gpu_list(stdout)
    note = ""
    if bad:
        note = f"nvidia-smi printed {len(bad)} line(s) that are not GPUs: {bad[0]!r}"
    elif not devices:
        note = "nvidia-smi listed no GPU"
    return GpuReport(ids=tuple(d.index for d in devices), devices=devices, note=note)


def gpu_env(count: int) -> dict[str, str]:
    """How many GPUs a container holds, in Backend.AI's variables: ``GPU_COUNT`` and
    ``N_GPUS`` (set to 0 too), and ``GPU_TYPE`` (``cuda``) when there are any."""
    env = {"GPU_COUNT": str(count), "N_GPUS": str(count)}
    if count:
        env["GPU_TYPE"] = "cuda"
    return env
