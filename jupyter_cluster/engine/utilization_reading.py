"""Reading how busy a session's containers are: Docker's CPU counter and the GPUs'.

:class:`UsageReader` is what :class:`~.utilization_idle.UtilizationWatch` samples
sessions with, once per pass. It keeps each container's last CPU counter, so a
reading is the average since the previous one (bursts between samples count), and
hands the CPU time so far to usage accounting (:mod:`.cpu_time`). A container given
GPUs is also asked through ``nvidia-smi`` (:mod:`.gpu_stats`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable

from ..core.models import Container, Session
from ..core.state import ContainerStatus
from ..core.stats import usage_from_docker
from ..core.utilization_idle import Reading, cpu_between
from ..errors import AgentError, ClusterError
from .agents.pool import AgentPool
from .cpu_time import MIN_GROWTH, counter_seconds, record
from .gpu_stats import sample
from .store.sessions import Store


class UsageReader:
    """Samples sessions' containers for the utilization clean-up (see the module)."""

    def __init__(self, store: Store, pool: AgentPool, logger: logging.Logger) -> None:
        self.store, self.pool, self.log = store, pool, logger
        self._counters: dict[str, tuple[float, float]] = {}  # container id -> CPU s, when

    def keep_only(self, container_ids: Iterable[str | None]) -> None:
        """Forget the counters of containers not in ``container_ids`` (ended ones);
        called at the start of every pass."""
        keep = set(container_ids)
        self._counters = {k: v for k, v in self._counters.items() if k in keep}

    async def read(self, session: Session) -> Reading:
        """The session's busiest container's CPU % and busiest GPU's % now."""
        found = await asyncio.gather(*(self._container(c) for c in session.containers))
        counted = {  # the CPU time so far, kept for usage accounting (see .cpu_time)
            c.host: self._counters[c.container_id][0]
            for c in session.containers
            if c.container_id in self._counters
        }
        record(self.store, session.id, counted, MIN_GROWTH)
        cpus = [cpu for cpu, _ in found if cpu is not None]
        gpus = [gpu for _, gpu in found if gpu is not None]
        return Reading(max(cpus) if cpus else None, max(gpus) if gpus else None)

    async def _container(self, container: Container) -> tuple[float | None, float | None]:
        cid = container.container_id
        if container.status is not ContainerStatus.RUNNING or not cid or not container.agent:
            return None, None
        try:
            agent = self.pool.get(container.agent)
            raw, gpus, _ = await sample(agent, cid, bool(container.gpu_ids))
        except (AgentError, ClusterError) as exc:
            self.log.debug("idle clean-up: no stats of %s: %s", cid[:12], exc)
            return None, None
        counter = (counter_seconds(raw), time.time())
        cpu = cpu_between(self._counters.get(cid), counter, usage_from_docker(raw).cpu_percent)
        self._counters[cid] = counter
        utils = [g.util_percent for g in gpus if g.util_percent is not None]
        return cpu, (max(utils) if utils else None)
