"""One container's resource use at a moment, from Docker's stats: CPU, memory, network, disk.

:func:`usage_from_docker` reads one sample of Docker's ``GET
/containers/{id}/stats?stream=false`` the way ``docker stats`` does (CPU % over the
interval Docker measured, memory used without the page cache, network and block
IO totals), so the figures agree with it. Used by the manager's ``stats`` (REST
``GET sessions/{id}/stats``, ``jupyter cluster top``, ``%cluster top``, the sidebar's
graphs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    """One container's use: CPU % of one CPU (200 = two CPUs busy), bytes, counts."""

    cpu_percent: float
    mem_used: int
    mem_limit: int
    net_rx: int
    net_tx: int
    block_read: int
    block_write: int
    pids: int
    at: str  # when Docker read it (ISO 8601, UTC)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
