"""A container's cumulative CPU time, read from its own cgroup with a short exec.

Used by :meth:`~jupyter_cluster.engine.agents.docker.agent.DockerAgent.cpu_seconds`
(usage accounting reads every container of a session just before removing it).
Docker 20.10 answers a one-shot stats read at once only while it collects stats for
no other container; otherwise after its collector's next 1 s tick, so reading the
containers of a size-4 session that way held its removal up by a second. ``cat`` of
the cgroup's counter (the value Docker's ``cpu_usage.total_usage`` reports) takes
one exec, about 0.05 s.
"""

from __future__ import annotations

#: Prints "ns N" (cgroup v1: cpuacct.usage) or "us N" (cgroup v2: cpu.stat's usage_usec).
SCRIPT = (
    "f=/sys/fs/cgroup/cpuacct/cpuacct.usage; "
    'if [ -r "$f" ]; then echo "ns $(cat "$f")"; '
    "else echo \"us $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat)\"; fi"
)
COMMAND = ("/bin/sh", "-c", SCRIPT)


def parse(said: bytes) -> float:
    """CPU seconds from :data:`SCRIPT`'s output; ValueError if it is not one."""
    unit, _, value = said.decode(errors="replace").strip().partition(" ")
    scale = {"ns": 1e9, "us": 1e6}.get(unit)
    if scale is None or not value.strip().isdigit():
        raise ValueError(f"not a CPU counter: {said[:80]!r}")
    return int(value.strip()) / scale
