"""One container's resource use at a moment, from Docker's stats (CPU, memory, network,
disk) and, for a container given GPUs, from ``nvidia-smi`` run in it.

:func:`usage_from_docker` reads one sample of Docker's ``GET
/containers/{id}/stats?stream=false`` the way ``docker stats`` does (CPU % over the
interval Docker measured, memory used without the page cache, network and block
IO totals), so the figures agree with it. Docker's stats have no GPU figures:
:func:`gpu_reading` reads the output of :data:`NVIDIA_SMI` (utilization and
memory of each GPU the container sees), or says in a note why there are none.
Used by the manager's ``stats`` (REST ``GET sessions/{id}/stats``, ``jupyter
cluster top``, ``%cluster top``, the sidebar's graphs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

#: What the manager runs in a container given GPUs (CSV: index, %, MiB used, MiB total).
NVIDIA_SMI = (
    "nvidia-smi",
    "--query-gpu=index,utilization.gpu,memory.used,memory.total",
    "--format=csv,noheader,nounits",
)
_MIB = 1 << 20


@dataclass(frozen=True)
class GpuUsage:
    """One GPU seen in a container: utilization % (None when the GPU does not report
    it, e.g. "[N/A]"), memory used and total in bytes."""

    index: str  # nvidia-smi's index inside the container
    util_percent: float | None
    mem_used: int
    mem_total: int


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"
    return value if value == value and value >= 0 else None  # not NaN nor negative


def parse_nvidia_smi(text: str) -> tuple[tuple[GpuUsage, ...], list[str]]:
    """The GPUs in :data:`NVIDIA_SMI`'s output, and the lines it could not read
    (blank lines are skipped; a GPU whose memory is not a number is not listed)."""
    gpus: list[GpuUsage] = []
    bad: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        used, total = (_number(f) for f in fields[2:4]) if len(fields) == 4 else (None, None)
        if used is None or total is None or not fields[0]:
            bad.append(line.strip()[:200])
            continue
        gpus.append(GpuUsage(fields[0], _number(fields[1]), int(used * _MIB), int(total * _MIB)))
    return tuple(gpus), bad


def gpu_reading(exit_code: int, stdout: str, stderr: str = "") -> tuple[tuple[GpuUsage, ...], str]:
    """The GPUs of one run of :data:`NVIDIA_SMI` in a container (its exit code and
    output), and a note when some or all could not be read (else "")."""
    if exit_code != 0:
        said = (stderr.strip() or stdout.strip()).splitlines()[:1]
        if exit_code in (126, 127) or "not found" in " ".join(said).lower():
            return (), "no GPU figures: nvidia-smi is not available in the container"
        why = f": {said[0][:200]}" if said else ""
        return (), f"no GPU figures: nvidia-smi failed (exit code {exit_code}){why}"
    gpus, bad = parse_nvidia_smi(stdout)
    if bad:
        return gpus, f"nvidia-smi printed {len(bad)} line(s) not understood: {bad[0]!r}"
    return gpus, "" if gpus else "no GPU figures: nvidia-smi listed no GPU"


@dataclass(frozen=True)
class Usage:
    """One container's use: CPU % of one CPU (200 = two CPUs busy), bytes, counts;
    for a container given GPUs, each GPU's figures and why some are missing."""

    cpu_percent: float
    mem_used: int
    mem_limit: int
    net_rx: int
    net_tx: int
    block_read: int
    block_write: int
    pids: int
    at: str  # when Docker read it (ISO 8601, UTC)
    gpus: tuple[GpuUsage, ...] = ()
    gpu_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (REST, ``top --json``): ``gpus`` and ``gpu_note`` only for a
        container given GPUs."""
        data = asdict(self)
        if not self.gpus and not self.gpu_note:
            del data["gpus"], data["gpu_note"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        """Rebuild a Usage from :meth:`to_dict` output (a shared service's reply)."""
        gpus = tuple(GpuUsage(**g) for g in data.get("gpus") or ())
        return cls(**{**data, "gpus": gpus, "gpu_note": data.get("gpu_note") or ""})

    def with_gpus(self, gpus: tuple[GpuUsage, ...], note: str) -> Usage:
        """This sample with the GPU figures read beside it."""
        return replace(self, gpus=gpus, gpu_note=note)


def _cpu_percent(raw: Mapping[str, Any]) -> float:
    cpu, pre = raw.get("cpu_stats") or {}, raw.get("precpu_stats") or {}
    used = (cpu.get("cpu_usage") or {}).get("total_usage", 0) - (pre.get("cpu_usage") or {}).get(
        "total_usage", 0
    )
    system = cpu.get("system_cpu_usage", 0) - pre.get("system_cpu_usage", 0)
    cpus = cpu.get("online_cpus") or len((cpu.get("cpu_usage") or {}).get("percpu_usage") or [1])
    if used <= 0 or system <= 0:
        return 0.0
    return round(used / system * cpus * 100.0, 2)


def _mem_used(memory: Mapping[str, Any]) -> int:
    usage = int(memory.get("usage") or 0)
    stats = memory.get("stats") or {}
    if "total_inactive_file" in stats:  # cgroup v1, as docker stats subtracts it
        return max(usage - int(stats["total_inactive_file"]), 0)
    if "inactive_file" in stats:  # cgroup v2
        return max(usage - int(stats["inactive_file"]), 0)
    return max(usage - int(stats.get("cache") or 0), 0)


def _block(raw: Mapping[str, Any]) -> tuple[int, int]:
    read = write = 0
    for entry in (raw.get("blkio_stats") or {}).get("io_service_bytes_recursive") or []:
        op = str(entry.get("op", "")).lower()
        if op == "read":
            read += int(entry.get("value") or 0)
        elif op == "write":
            write += int(entry.get("value") or 0)
    return read, write


def usage_from_docker(raw: Mapping[str, Any]) -> Usage:
    """One :class:`Usage` from one sample of Docker's stats."""
    memory = raw.get("memory_stats") or {}
    nets = (raw.get("networks") or {}).values()
    read, write = _block(raw)
    return Usage(
        cpu_percent=_cpu_percent(raw),
        mem_used=_mem_used(memory),
        mem_limit=int(memory.get("limit") or 0),
        net_rx=sum(int(n.get("rx_bytes") or 0) for n in nets),
        net_tx=sum(int(n.get("tx_bytes") or 0) for n in nets),
        block_read=read,
        block_write=write,
        pids=int((raw.get("pids_stats") or {}).get("current") or 0),
        at=str(raw.get("read") or "")[:19] + "Z" if raw.get("read") else "",
    )
