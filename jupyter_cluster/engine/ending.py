"""SessionTerminator: how the engine ends a session: cancel it, or remove its containers.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`, which hands it the
store, the agent pool and the log archive; before removing containers it keeps their
logs and their measured CPU time (:mod:`.cpu_time`). Front ends (CLI ``rm``, REST
``DELETE``, the provisioner, idle clean-up) reach :meth:`SessionTerminator.terminate` through
the manager; the reconciler calls it to finish an interrupted termination (or one
that waited for an agent that did not answer), and the
launcher (:mod:`.launching`) calls :meth:`~SessionTerminator.abandon` when the
process driving a launch is cancelled and :meth:`~SessionTerminator.mark_containers`
when a launch fails. While it removes a session, the terminating process is the
session's recorded driver: reconciliation elsewhere leaves the removal to it, and a
launch of the session in another process stops (see :mod:`.preparing`). A second
removal of the same session, in this process or another, waits for the first (a
lock file per session, :mod:`~jupyter_cluster.file_lock`); a removal of a session
still being launched waits until the launch has stopped and removed what it made
(the launch's lock, :func:`launch_lock_key`), so it returns with nothing left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from .. import file_lock
from ..core.agent_loss import removal_waits_reason
from ..core.models import Session
from ..core.state import (
    ALLOCATING,
    FINAL,
    KERNEL_EXITING,
    LAUNCH_INTERRUPTED,
    USABLE,
    ContainerStatus,
    SessionStatus,
)
from ..errors import ClusterError
from .agents.pool import AgentPool
from .cpu_time import read_before_removal, record
from .early_removal import EarlyRemovals
from .launch.overlay import placed_agents
from .launch.overlay_views import OverlayViews
from .launch.teardown import overlay_lookup, tear_down, tear_down_again
from .log_archive import LogArchive
from .store.drivers import ENDING_GRACE, still_ending, this_process
from .store.sessions import Store

log = logging.getLogger(__name__)
#: Extra clean-up sweeps (0.5 s apart) when terminating a session still PREPARING.
TEAR_DOWN_RETRIES = 20
#: Seconds between looks at another process's removal of the same session.
OTHER_REMOVAL_POLL = 0.25


class SessionTerminator:
    """Terminate sessions, keeping their logs and why they ended in the history."""

    def __init__(
        self,
        store: Store,
        pool: AgentPool,
        log_archive: LogArchive,
        *,
        keep_logs: Callable[[], bool] = lambda: True,
        overlay_views: OverlayViews | None = None,
        lock_dir: str = "",
    ) -> None:
        """``keep_logs`` says, at each termination, whether to keep the containers'
        logs (``ClusterManager.keep_logs``); ``overlay_views`` watches the Swarm
        nodes' views of a removed overlay (the engine's; without, they are waited for);
        ``lock_dir``: where the store's processes take turns removing a session (the
        engine's ``locks`` beside the store; "": no turns)."""
        self.store = store
        self.overlay_views = overlay_views
        self.pool = pool
        self.log_archive = log_archive
        self.keep_logs = keep_logs
        self.early = EarlyRemovals(store, pool, log_archive, keep_logs)
        self.lock_dir = lock_dir

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Cancel a PENDING session, or remove every container and the network;
        ``reason`` (default: by the user) is kept in its history. What agents that do
        not answer hold is left for reconciliation: see :meth:`_wait_for`."""
        session = await self._after_other_removal(self.store.resolve(ref))
        if session.status is SessionStatus.PENDING or session.status in FINAL:
            return await self._terminate(session, reason)  # nothing to remove
        # One removal of a session at a time, among this store's processes and in this
        # one: a second waits here, then finds the session ended (see .file_lock).
        async with file_lock.held(self.lock_dir, session_lock_key(session.id), ENDING_GRACE):
            return await self._terminate(self.store.require(session.id), reason)

    async def _terminate(self, session: Session, reason: str) -> Session:
        """:meth:`terminate` of ``session`` as read once its removal is this one's."""
        if session.status is SessionStatus.PENDING:
            return self.store.set_status(
                session.id, SessionStatus.CANCELLED, reason or "cancelled by the user"
            )
        if session.status in FINAL:
            return session
        was_preparing = session.status is SessionStatus.PREPARING
        # Its measured CPU time, read (as its logs are kept) before the removal; not
        # again when finishing a removal that waited for agents (the first one read).
        reads_cpu = session.status in USABLE or (
            session.status is SessionStatus.TERMINATING
            and not session.status_reason.startswith("waiting for ")
        )
        # Finishing another process's termination (reconciliation) keeps its reason;
        # waiting for an agent, or for a kernel to exit, is no reason to have ended.
        if not reason and session.status is SessionStatus.TERMINATING:
            said = session.status_reason
            reason = "" if said.startswith("waiting for ") or said == KERNEL_EXITING else said
        # Other processes' reconciliation leaves the removal to this one while it runs
        # (see .store.drivers.still_ending), and a launch of it in another process
        # stops: recorded with the status, so that no process sees it TERMINATING
        # with no remover (and removes it at the same time).
        if session.status is not SessionStatus.ERROR:
            session = self.store.set_status(
                session.id, SessionStatus.TERMINATING, reason, driver=this_process()
            )
        else:
            self.store.set_driver(session.id, this_process())
        try:
            return await self._remove(session, reason, was_preparing, reads_cpu)
        finally:
            with contextlib.suppress(ClusterError):  # e.g. deleted from the history
                self.store.set_driver(session.id, None)

    async def _after_other_removal(self, session: Session) -> Session:
        """``session`` once no other live process is removing it: a second ``rm`` (or
        a DELETE from the Lab while ``rm`` runs in a terminal) would remove the same
        containers at the same moment, and one of the two fail on the other's
        ("volume is in use"). It waits as long as that process is
        :func:`~.store.drivers.still_ending` the session, and takes over after."""
        while session.status is SessionStatus.TERMINATING and self._removed_elsewhere(session.id):
            await asyncio.sleep(OTHER_REMOVAL_POLL)
            session = self.store.require(session.id)
        return session

    def _removed_elsewhere(self, session_id: str) -> bool:
        """Whether another process recorded itself as the remover of ``session_id``
        (see :meth:`terminate`) and is still ending it."""
        state = self.store.launch_state(session_id)
        if state is None or state.driver == this_process():
            return False
        return still_ending(state.updated_at, state.driver)

    async def _remove(
        self, session: Session, reason: str, was_preparing: bool, reads_cpu: bool
    ) -> Session:
        """:meth:`terminate`'s removal of a session marked TERMINATING (or ERROR)."""
        # Hosts being removed early (while main1's kernel exited) are theirs to end.
        early = self.early.running(session.id)
        skip = early.hosts if early is not None else frozenset()
        spread = len(placed_agents(session, self.pool.agents)) > 1
        finding = overlay_lookup(session, self.pool.agents) if spread else None
        try:
            left = _left(session, skip)
            reading = (
                asyncio.ensure_future(read_before_removal(left, self.pool.agents))
                if reads_cpu
                else None
            )
            if self.keep_logs():  # the logs outlive the containers (read them with `logs`)
                await self.log_archive.keep(left, self.pool.logs)
            if reading is not None:
                record(self.store, session.id, await reading)
        except BaseException:
            if finding is not None:
                finding.cancel()
            raise
        lost: set[str] = set()
        problems = await tear_down(
            session,
            self.pool.agents,
            self.store.manager_id,
            lost=lost,
            skip=skip,
            before_network=early.left if early is not None else None,
            finding=finding,
            views=self.overlay_views,
            report=False,  # raised below
        )
        # While PREPARING, the launching process (maybe another one) may still be
        # creating containers, which keeps the network busy: it stops once it sees
        # TERMINATING and removes what it made, holding its lock meanwhile (see
        # .preparing); then sweep again while something stays.
        if was_preparing:
            async with file_lock.held(self.lock_dir, launch_lock_key(session.id), ENDING_GRACE):
                pass
        problems = await tear_down_again(
            session,
            self.pool.agents,
            self.store.manager_id,
            problems,
            TEAR_DOWN_RETRIES if was_preparing else 0,
            lost=lost,
            views=self.overlay_views,
        )
        if problems:
            raise ClusterError(
                f"could not remove everything of session {session.name}: " + "; ".join(problems)
            )
        if lost:
            return self._wait_for(session, lost)
        self.store.delete_keys(session.id)
        self.mark_containers(session, ContainerStatus.TERMINATED)
        if session.status is SessionStatus.ERROR:  # keep why it failed in the history
            reason = f"removed after an error: {session.status_reason}"
            return self.store.set_status(session.id, SessionStatus.TERMINATED, reason)
        return self.store.set_status(session.id, SessionStatus.TERMINATED, reason or "terminated")

    def _wait_for(self, session: Session, lost: set[str]) -> Session:
        """Everything reachable of ``session`` is gone, but agents ``lost`` did not
        answer: it stays TERMINATING (its removed containers TERMINATED, no longer
        counted on their agents) saying so, and reconciliation finishes the
        termination once they answer again (their containers still carry its labels).
        A session in ERROR keeps its reason; reconciliation removes what is left."""
        for container in session.containers:
            if container.agent not in lost:
                self.store.update_container(
                    session.id, container.host, status=ContainerStatus.TERMINATED
                )
        reason = removal_waits_reason(session, lost)
        log.warning("session %s: %s", session.id, reason)
        if session.status is SessionStatus.ERROR:  # keeps why it failed
            return self.store.require(session.id)
        return self.store.set_status(session.id, session.status, reason)

    def mark_containers(self, session: Session, status: ContainerStatus) -> None:
        """Record ``status`` for every container of ``session``."""
        for container in session.containers:
            self.store.update_container(session.id, container.host, status=status)

    async def abandon(self, session_id: str) -> None:
        """Cancel or tear down a session whose launch was cancelled (Ctrl-C); the
        history says why it ended (the launch's own clean-up kept the logs)."""
        session = self.store.require(session_id)
        if session.status is SessionStatus.PENDING:
            self.store.set_status(session_id, SessionStatus.CANCELLED, "cancelled while waiting")
        elif session.status in ALLOCATING:
            await self.terminate(session_id, LAUNCH_INTERRUPTED)


def session_lock_key(session_id: str) -> str:
    """The lock a removal of ``session_id`` holds; a second removal waits for it."""
    return f"session-{session_id}"


def launch_lock_key(session_id: str) -> str:
    """The lock a launch of ``session_id`` holds while it brings the session up and,
    stopped, removes what it made; a removal of the session waits for it."""
    return f"launch-{session_id}"


def _left(session: Session, skip: frozenset[str]) -> Session:
    """``session`` without its containers removed already (their logs and CPU time
    were kept then) or being removed early (``skip``, see :mod:`.early_removal`)."""
    return session.with_(
        containers=tuple(
            c
            for c in session.containers
            if c.status is not ContainerStatus.TERMINATED and c.host not in skip
        )
    )
