"""One agent as the schedulers see it: its capacity, what it holds, what it can take.

Built by :meth:`~jupyter_cluster.engine.agents.pool.AgentPool.slots` (capacity) and
the store (usage); read by :mod:`.scheduler`, :mod:`.queue` and
:mod:`.waiting_reasons`. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .resources import Resources


@dataclass(frozen=True)
class AgentSlot:
    """One agent as the scheduler sees it: total capacity and what is in use."""

    id: str
    resource_group: str
    capacity: Resources
    used: Resources = field(default_factory=lambda: Resources(0, 0, 0, 0))
    gpu_ids: tuple[str, ...] = ()
    used_gpu_ids: frozenset[str] = frozenset()
    has_image: bool = True  # can run the image: has it, or may pull it
    image_local: bool = True  # has it now (no pull needed): preferred
    schedulable: bool = True
    swarm: str = ""  # the Docker Swarm the agent is a node of ("" = none)
    swarm_note: str = ""  # why a Swarm node still can't be spanned (see core.swarms)
    #: A host-network group's agent: it holds one container at a time, of any session
    #: (they would share its ports), and its sessions need no Swarm.
    one_container: bool = False
    containers: int = 0  # containers of active sessions on it now
    #: The shapes of the warm sets ready on it (``core.warm.place_key``): the
    #: scheduler prefers an agent that has one of a session's shape.
    warm: frozenset[str] = frozenset()
    #: The ready warm sets that span agents with main1 on this one, as (shape's
    #: ``place_key``, the agent of each host): see :mod:`.warm_spread`.
    warm_layouts: frozenset[tuple[str, tuple[str, ...]]] = frozenset()

    def free(self) -> Resources:
        return Resources(
            cpu=round(self.capacity.cpu - self.used.cpu, 6),
            mem=self.capacity.mem - self.used.mem,
            shm=0,
            gpu=len(self.free_gpu_ids()),
        )

    def free_gpu_ids(self) -> list[str]:
        return [g for g in self.gpu_ids if g not in self.used_gpu_ids]

    def fits(self, per_container: Resources, free: Resources | None = None) -> int:
        """How many containers of ``per_container`` fit in ``free`` (default: now)."""
        free = free or self.free()
        count = fits_in(per_container, free.cpu, free.mem, free.gpu)
        if self.one_container:
            return min(count, 1) if self.containers == 0 else 0
        return count


def fits_in(per: Resources, cpu: float, mem: int, gpu: int) -> int:
    """How many containers of ``per`` fit in ``cpu`` CPUs, ``mem`` bytes, ``gpu`` GPUs."""
    count = 1 << 30
    if per.cpu > 0:
        count = min(count, int((cpu + 1e-9) // per.cpu))
    if per.mem > 0:
        count = min(count, mem // per.mem)
    if per.gpu > 0:
        count = min(count, gpu // per.gpu)
    return max(0, count)
