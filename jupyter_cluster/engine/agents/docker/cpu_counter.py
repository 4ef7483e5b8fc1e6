"""A container's cumulative CPU time, read from its own cgroup with a short exec.

Used by :meth:`~jupyter_cluster.engine.agents.docker.container_io.DockerContainerIO.cpu_seconds`
(usage accounting reads every container of a session just before removing it).
Docker 20.10 answers a one-shot stats read at once only while it collects stats for
no other container; otherwise after its collector's next 1 s tick, so reading the
containers of a size-4 session that way held its removal up by a second. ``cat`` of
the cgroup's counter (the value Docker's ``cpu_usage.total_usage`` reports) takes
one exec, 0.05-0.15 s; the agent asks both ways at once and takes the first answer
(:func:`first_of`), so a lone read stays as quick as Docker's fast path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from ....errors import AgentError
from ..base import Executor

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


async def read(agent: Executor, container_id: str) -> float:
    """CPU seconds from the container's cgroup (one exec of :data:`SCRIPT` as root);
    AgentError or ValueError if that cannot be read."""
    said = bytearray()

    def heard(stream: int, data: bytes) -> None:
        if stream == 1 and len(said) < 256:
            said.extend(data)

    code = await agent.exec(container_id, COMMAND, user="0", workdir="/", on_output=heard)
    if code != 0:
        raise ValueError(f"reading the CPU counter exited with {code}")
    return parse(bytes(said))


async def first_of(*reads: Awaitable[float]) -> float:
    """The first of ``reads`` to succeed (the others cancelled); if all fail, the
    last one's error (an AgentError, or ValueError turned into one)."""
    tasks = [asyncio.ensure_future(r) for r in reads]
    error: BaseException | None = None
    try:
        for done in asyncio.as_completed(tasks):
            try:
                return await done
            except (AgentError, ValueError) as exc:
                error = exc
        if isinstance(error, AgentError):
            raise error
        raise AgentError(f"cannot read the CPU time: {error}")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
