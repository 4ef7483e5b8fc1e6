"""Measured CPU time of sessions: read from Docker, kept with each container in the store.

Docker counts the CPU time every container's processes used (``cpu_stats.cpu_usage.
total_usage``, nanoseconds, cumulative over the container's life). The engine keeps
the last value it read as :attr:`~jupyter_cluster.core.models.Container.cpu_seconds`,
so a session's measured CPU time (:attr:`~jupyter_cluster.core.models.Session.
cpu_seconds_used`, reported by usage accounting, :mod:`jupyter_cluster.core.usage`)
outlives its containers. It is read

- just before the containers are removed: :class:`~.ending.SessionTerminator` calls
  :func:`read_before_removal` while it keeps the containers' logs (one one-shot
  read per running container, all at once, bounded by :data:`READ_TIMEOUT`, never
  failing the termination), then :func:`record`;
- while sessions run, whenever the utilization watch samples them
  (:mod:`.utilization_reading`): it hands its Docker samples to :func:`record`
  through :func:`counter_seconds`, so a session whose end could not be read (its agent
  stopped answering) still keeps what was last seen.

A container's counter only grows, so the larger of the kept and the read value is
kept. Writing a reading does not touch the session's ``updated_at``: a reading is
not a use (idle clean-up takes ``updated_at`` for the last one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from ..asyncwait import within
from ..core.models import Session
from ..core.state import ContainerStatus
from .agents.base import Agent
from .store.sessions import Store

log = logging.getLogger(__name__)
#: How long the reads before a removal may take at most (s): Docker answers a
#: one-shot read within about a second; an agent that does not is not waited for.
READ_TIMEOUT = 3.0
#: Growth (s) below which a running session's reading is not written again.
MIN_GROWTH = 1.0


def counter_seconds(raw: Mapping[str, Any]) -> float:
    """The CPU seconds used so far in one Docker stats sample (0 when it has none)."""
    usage = (raw.get("cpu_stats") or {}).get("cpu_usage") or {}
    return int(usage.get("total_usage") or 0) / 1e9


async def read_before_removal(
    session: Session, agents: Mapping[str, Agent], timeout: float | None = None
) -> dict[str, float]:
    """CPU seconds of each running container of ``session``, by host; a container
    whose read fails or takes longer than ``timeout`` (default :data:`READ_TIMEOUT`)
    is left out. Never raises."""
    limit = READ_TIMEOUT if timeout is None else timeout
    running = [
        c
        for c in session.containers
        if c.status is ContainerStatus.RUNNING and c.container_id and c.agent in agents
    ]

    async def one(host: str, agent: Agent, cid: str) -> tuple[str, float] | None:
        try:
            return host, await within(agent.cpu_seconds(cid), limit)
        except Exception as exc:  # a reading must never stop a removal
            log.debug("no CPU time of %s/%s: %s", session.id[:8], host, exc)
            return None

    found = await asyncio.gather(
        *(
            one(c.host, agents[c.agent], c.container_id)
            for c in running
            if c.agent and c.container_id
        )
    )
    return dict(f for f in found if f is not None)


def record(
    store: Store, session_id: str, readings: Mapping[str, float], min_growth: float = 0.0
) -> bool:
    """Keep ``readings`` (host -> CPU seconds) with the session's containers, each the
    larger of the kept and the read value, in one transaction; nothing is written
    unless some container grew by more than ``min_growth`` seconds (or had none).
    Whether it wrote; never raises (a reading is not worth failing anything)."""
    if not readings:
        return False
    try:
        with store.tx() as db:
            old = store._get(db, session_id)
            changed = False
            containers = []
            for c in old.containers:
                seen = readings.get(c.host)
                kept = c.cpu_seconds
                if seen is not None and (kept is None or seen > kept + min_growth):
                    c = c.with_(cpu_seconds=round(seen, 3))
                    changed = True
                containers.append(c)
            if changed:
                store._write(db, old.with_(containers=tuple(containers)))
        return changed
    except Exception as exc:
        log.warning("could not keep the CPU time of session %s: %s", session_id, exc)
        return False
