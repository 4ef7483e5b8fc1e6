"""Removing a session's other containers while main1's kernel is still exiting.

A script's ``shutdown_kernel`` (jupyter_client's ``AsyncKernelManager`` without a
server) waits for the kernel's own exit, then for the session's removal. The
provisioner therefore asks for the subs' removal as soon as the kernel was asked
to end (``Engine.remove_subs`` → :meth:`EarlyRemovals.remove_subs`): their logs
and CPU time are kept and their containers removed during the kernel's exit.
:meth:`~.ending.SessionTerminator.terminate` then leaves out the hosts still being
removed here (:meth:`EarlyRemovals.running`), removes main1 meanwhile, and awaits
this removal (:meth:`EarlyRemoval.left`) before the network.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.models import Container, Session
from ..core.state import ContainerStatus
from .agents.pool import AgentPool
from .cpu_time import read_before_removal, record
from .log_archive import LogArchive
from .store.drivers import this_process
from .store.sessions import Store

log = logging.getLogger(__name__)


@dataclass
class EarlyRemoval:
    """One session's early removal: its hosts, those it could not remove, its end."""

    hosts: frozenset[str]
    failed: set[str] = field(default_factory=set)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def left(self) -> frozenset[str]:
        """Wait until it is over; the hosts it could not remove (the termination's
        sweep removes them)."""
        await self.done.wait()
        return frozenset(self.failed)


class EarlyRemovals:
    """The early removals of this engine's sessions (one per session at a time)."""

    def __init__(
        self, store: Store, pool: AgentPool, log_archive: LogArchive, keep_logs: Callable[[], bool]
    ) -> None:
        """The terminator's store, agents, log archive and ``keep_logs`` setting."""
        self.store = store
        self.pool = pool
        self.log_archive = log_archive
        self.keep_logs = keep_logs
        self._running: dict[str, EarlyRemoval] = {}

    async def remove_subs(self, session_id: str) -> None:
        """Mark a running session TERMINATING and remove its containers but main1,
        keeping their logs and CPU time first. A container that cannot be removed is
        left to the termination (see :meth:`EarlyRemoval.left`); never raises for it."""
        if session_id in self._running or not self.store.mark_terminating(
            session_id, this_process()
        ):
            return  # not running (any more): whoever ends it removes everything
        session = self.store.require(session_id)
        subs = session.with_(
            containers=tuple(
                c
                for c in session.containers
                if c.host != "main1"
                and c.container_id
                and c.status is not ContainerStatus.TERMINATED
                and c.agent in self.pool.agents
            )
        )
        if not subs.containers:
            return
        removal = EarlyRemoval(frozenset(c.host for c in subs.containers))
        self._running[session_id] = removal
        keep_logs = self.keep_logs()
        seconds: dict[str, float] = {}  # CPU time by host, kept once all are removed

        async def end(container: Container) -> None:
            ended = await _keep_and_remove(
                subs, container, self.pool, self.log_archive, keep_logs, seconds
            )
            if ended:
                self.store.update_container(
                    session_id, container.host, status=ContainerStatus.TERMINATED
                )
            else:  # the termination's sweep tries again
                removal.failed.add(container.host)

        try:
            await asyncio.gather(*(end(c) for c in subs.containers))
        except BaseException:
            removal.failed |= removal.hosts
            raise
        finally:
            record(self.store, session_id, seconds)
            del self._running[session_id]
            removal.done.set()

    def running(self, session_id: str) -> EarlyRemoval | None:
        """The early removal of ``session_id`` under way, if any: the termination
        leaves its hosts out and awaits it before removing the network."""
        return self._running.get(session_id)


async def _keep_and_remove(
    session: Session,
    container: Container,
    pool: AgentPool,
    log_archive: LogArchive,
    keep_log: bool,
    seconds: dict[str, float],
) -> bool:
    """Keep one sub's log tail (``keep_log``) and CPU time (into ``seconds`` by
    host), then remove it: each sub goes as soon as its own are kept, so the
    removals of the first overlap the reads of the last. Whether it was removed (a
    failure is logged; the termination's sweep tries again, as for a running
    container whose CPU time could not be read). Called by :meth:`EarlyRemovals.remove_subs`."""
    one = session.with_(containers=(container,))
    reading = asyncio.ensure_future(read_before_removal(one, pool.agents))
    if keep_log:
        await log_archive.keep(one, pool.logs)
    read = await reading
    seconds.update(read)
    if container.status is ContainerStatus.RUNNING and container.host not in read:
        return False  # its agent may not answer: the sweep asks it once, not again
    try:
        agent = pool.agents[container.agent or ""]
        await agent.remove_container(container.container_id or "")
    except Exception as exc:
        log.warning("removing %s of session %s: %s", container.host, session.id, exc)
        return False
    return True
