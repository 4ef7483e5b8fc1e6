"""The local engine's bookkeeping for its front ends: who drives a detached launch,
batch jobs watched to the end, sessions marked ending, and phase timings measured
outside the engine.

A base of :class:`~jupyter_cluster.engine.manager.ClusterManager` (its ``store`` and
``jobs``): the CLI (``launch --no-wait``, ``wait``), the batch driver and the
provisioner (``kernel_ready``, background endings) call these Engine methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..core.models import Session
from ..core.state import ENDED, SETTLING
from .batch import JobRunner
from .store.drivers import driver_alive, this_process
from .store.sessions import Store


class Bookkeeping:
    """Drivers, jobs, endings and timings kept in the engine's store."""

    store: Store
    jobs: JobRunner

    async def hand_off(self, session: Session, spawn: Callable[[str], int]) -> None:
        """A detached driver takes over a launch still settling, or a batch job whose
        driver is gone (``wait`` asks, so a killed driver's job is watched again)."""
        if session.status in SETTLING or (
            session.spec.command
            and session.status not in ENDED
            and not driver_alive(self.store.driver(session.id))
        ):
            self.store.set_driver(session.id, this_process(spawn(session.id)))

    async def run_job(self, session_id: str) -> Session:
        """Watch a batch session's job until the session ends (see JobRunner.run)."""
        return await self.jobs.run(session_id)

    def mark_ending(self, session_id: str) -> bool:
        """Mark it TERMINATING now; the removal may go on in the background."""
        self.store.mark_terminating(session_id, this_process())
        return True

    def phase_missing(self, session_id: str, phase: str) -> Session | None:
        """The session, if it has not recorded ``phase`` yet."""
        session = self.store.get(session_id)
        return session if session is not None and phase not in session.timings else None

    def record_phases(self, session_id: str, timings: Mapping[str, float]) -> None:
        """Keep phase timings measured by a front end."""
        self.store.add_timings(session_id, timings)
