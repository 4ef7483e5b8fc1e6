"""A container's CPU counter read from this machine's cgroup files, without Docker.

Used by :meth:`~.container_io.DockerContainerIO.cpu_seconds` when the agent is this
machine's engine (``AgentConfig.is_this_machine``). Reading the counters of a
session's containers just before removing them asked Docker twice per container
(a one-shot stats read and an exec racing it, see :mod:`.cpu_counter`), and at size
16 those requests queued behind the removals themselves. Where the engine sees the
host's cgroup tree, the same counter (Docker's ``cpu_usage.total_usage``) is one
small file read; anywhere else (a cgroup parent of the site's own, rootless Docker,
an engine in a container of its own namespace) no candidate exists and the caller
asks Docker as before.
"""

from __future__ import annotations

import re

_ID = re.compile(r"[0-9a-f]{64}")
_ROOT = "/sys/fs/cgroup"
#: Where Docker puts a container's cgroup, for the cgroupfs and systemd drivers,
#: cgroup v1 (cpuacct.usage, nanoseconds) and v2 (cpu.stat's usage_usec).
_V1 = ("cpuacct/docker/{id}", "cpu,cpuacct/docker/{id}", "cpuacct/system.slice/docker-{id}.scope")
_V2 = ("docker/{id}", "system.slice/docker-{id}.scope")


def cpu_seconds(container_id: str, root: str = _ROOT) -> float | None:
    """The container's CPU seconds from its cgroup under ``root``, or None when its
    cgroup is not found there (or ``container_id`` is not a full Docker id)."""
    if not _ID.fullmatch(container_id):
        return None
    for place in _V1:
        try:
            with open(f"{root}/{place.format(id=container_id)}/cpuacct.usage", "rb") as f:
                return int(f.read().strip()) / 1e9
        except (OSError, ValueError):
            continue
    for place in _V2:
        try:
            with open(f"{root}/{place.format(id=container_id)}/cpu.stat", "rb") as f:
                for line in f:
                    key, _, value = line.partition(b" ")
                    if key == b"usage_usec":
                        return int(value) / 1e6
        except (OSError, ValueError):
            continue
    return None
