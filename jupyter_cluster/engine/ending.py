"""How the manager ends a session: cancel it, or remove its containers and network.

:class:`SessionEnding` is one of the bases of
:class:`~jupyter_cluster.engine.manager.ClusterManager` (above
:class:`~.reading.SessionReading`). Front ends (CLI ``rm``, REST ``DELETE``, the
provisioner, idle clean-up) call :meth:`terminate`; the reconciler calls it to finish
an interrupted termination, and launching (:mod:`.launching`) calls :meth:`_abandon`
when the process driving a launch is cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..core.models import Session
from ..core.state import ALLOCATING, FINAL, ContainerStatus, SessionStatus
from ..errors import ClusterError
from .agents.pool import AgentPool
from .launch.teardown import tear_down
from .reading import SessionReading

#: Extra clean-up sweeps (0.5 s apart) when terminating a session still PREPARING.
TEAR_DOWN_RETRIES = 20


class SessionEnding(SessionReading):
    """Terminate sessions, keeping their logs and why they ended in the history."""

    #: Made by ClusterManager.__init__.
    pool: AgentPool

    def _read_log(self, agent_id: str, container_id: str, tail: int) -> AsyncIterator[str]:
        return self.agent(agent_id).logs(container_id, tail=tail)

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Cancel a PENDING session, or remove every container and the network;
        ``reason`` (default: by the user) is kept in its history."""
        session = self.store.resolve(ref)
        if session.status is SessionStatus.PENDING:
            return self.store.set_status(
                session.id, SessionStatus.CANCELLED, reason or "cancelled by the user"
            )
        if session.status in FINAL:
            return session
        was_preparing = session.status is SessionStatus.PREPARING
        if session.status is not SessionStatus.ERROR:
            session = self.store.set_status(session.id, SessionStatus.TERMINATING, "")
        if self.keep_logs:  # the logs outlive the containers (read them with `logs`)
            await self.log_archive.keep(session, self._read_log)
        problems = await tear_down(session, self.pool.agents, self.store.manager_id)
        # While PREPARING, the launching process (maybe another one) may still be
        # creating containers, which keeps the network busy: sweep again until it
        # has seen TERMINATING and stopped.
        for _ in range(TEAR_DOWN_RETRIES if was_preparing else 0):
            if not problems:
                break
            await asyncio.sleep(0.5)
            problems = await tear_down(session, self.pool.agents, self.store.manager_id)
        if problems:
            raise ClusterError(
                f"could not remove everything of session {session.name}: " + "; ".join(problems)
            )
        self.store.delete_keys(session.id)
        self._mark_containers(session, ContainerStatus.TERMINATED)
        if session.status is SessionStatus.ERROR:  # keep why it failed in the history
            reason = f"removed after an error: {session.status_reason}"
            return self.store.set_status(session.id, SessionStatus.TERMINATED, reason)
        return self.store.set_status(session.id, SessionStatus.TERMINATED, reason or "terminated")

    def _mark_containers(self, session: Session, status: ContainerStatus) -> None:
        for container in session.containers:
            self.store.update_container(session.id, container.host, status=status)

    async def _abandon(self, session_id: str) -> None:
        """Cancel or tear down a session whose launch was cancelled (Ctrl-C)."""
        session = self._get(session_id)
        if session.status is SessionStatus.PENDING:
            self.store.set_status(session_id, SessionStatus.CANCELLED, "cancelled while waiting")
        elif session.status in ALLOCATING:
            await self.terminate(session_id)
