"""Out-of-memory kills inside containers that keep running: followed and recorded.

Our containers run with an init process, so when a container outgrows its memory
limit the kernel's OOM killer usually ends the process that grew (an MPI rank, the
kernel) and the container runs on: Docker's state never says ``OOMKilled`` and
reconciliation sees nothing wrong. Docker does emit an ``oom`` event, and
:class:`OomWatch` follows those of every agent (one task each, on the containers
labelled with this store's manager id) and records each kill on its container: a
count, the time of the last one and a status reason (:func:`..core.state.oom_reason`)
that ``show``, REST, the events stream and the Lab sidebar display. The container
and its session stay RUNNING; when the container later exits, reconciliation's exit
reason replaces the note.

Only a Jupyter server (or the shared service) runs the watch: its
:class:`~jupyter_cluster.server.service.ClusterService` starts and stops it. A user
of the CLI alone learns of an OOM kill only when it ends a container.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core import naming
from ..core.state import ContainerStatus, oom_reason
from ..errors import ClusterError
from .agents.base import Agent, OomEvent
from .store.sessions import Store

log = logging.getLogger(__name__)


class OomWatch:
    """Follows the OOM events of ``agents`` and records them in ``store``.

    ``on_change`` is called after each recorded kill (the server pokes its events
    hub). A stream that fails or ends (the agent is down, its engine restarted) is
    followed again after ``retry`` seconds, doubling up to ``max_retry``; one
    warning is logged per outage.
    """

    def __init__(
        self,
        store: Store,
        agents: Mapping[str, Agent],
        *,
        on_change: Callable[[], None] | None = None,
        logger: logging.Logger | None = None,
        retry: float = 1.0,
        max_retry: float = 30.0,
    ) -> None:
        self.store = store
        self.agents = dict(agents)
        self.on_change = on_change
        self.log = logger or log
        self.retry = retry
        self.max_retry = max_retry
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Follow every agent (idempotent)."""
        if not self._tasks:
            self._tasks = [asyncio.ensure_future(self._follow(a)) for a in self.agents.values()]

    async def stop(self) -> None:
        """Stop following (server stop)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _follow(self, agent: Agent) -> None:
        """Follow one agent's OOM events for ever, again after each failure or end.

        Each stream asks for the events since the last moment known to be covered
        (at first: when the watch started), so kills during a short outage, or before
        the first stream is open, are not lost (as far as the engine remembers them);
        those already recorded are skipped.
        """
        labels = {naming.LABEL_MANAGER: self.store.manager_id}
        since = time.time()
        last_seen, delay, down = 0.0, self.retry, False
        while True:
            opened, healthy, error = time.time(), False, None
            try:
                async for event in agent.oom_events(labels, since=since):
                    healthy = True
                    if event.time > last_seen:
                        last_seen = event.time
                        await self.record(agent.id, event)
            except Exception as exc:  # never let one agent's stream end the watch
                error = exc
            healthy = healthy or time.time() - opened >= self.max_retry
            if healthy:
                delay, down = self.retry, False
                since = max(since, opened, last_seen)
            if error is not None and not down:
                down = True
                self.log.warning(
                    "not following out-of-memory kills on agent %s for now (trying again): %s",
                    agent.id,
                    error,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_retry)

    async def record(self, agent_id: str, event: OomEvent) -> bool:
        """Record one kill on its container; False when it is none of ours (or the
        store could not be written, which is logged)."""
        try:
            done = await asyncio.to_thread(self._record, event)
        except ClusterError as exc:
            self.log.warning("could not record an OOM kill on agent %s: %s", agent_id, exc)
            return False
        if done is None:
            return False
        name, host, count = done
        self.log.info(
            "out-of-memory killer ended a process in %s of session %s on agent %s (%d so far)",
            host,
            name,
            agent_id,
            count,
        )
        if self.on_change is not None:
            self.on_change()
        return True

    def _record(self, event: OomEvent) -> tuple[str, str, int] | None:
        found = self.store.find_container(event.container_id)
        session = self.store.get(found[0]) if found else None
        if found is None or session is None:
            return None
        container = session.locate(found[1])
        count = container.oom_kills + 1
        changes: dict[str, Any] = {"oom_kills": count, "oom_killed_at": event.time}
        # An exited container keeps its exit reason (reconciliation may be first).
        if container.status is ContainerStatus.RUNNING:
            mem = session.spec.resources.mem
            changes["status_reason"] = oom_reason(count, event.time, mem)
        self.store.update_container(session.id, container.host, **changes)
        return session.name, container.host, count
