"""Preparation: bringing a placed session up, from PREPARING to RUNNING (or ERROR).

Made and called by :class:`~jupyter_cluster.engine.launching.SessionLauncher` once
the queue placed a session: it makes the session's keys, takes a warm set when one
fits (else makes room in the warm pool), and hands the containers' creation to
:func:`.launch.bring_up.bring_up`, reporting each container's progress to the store
and to whoever drives the launch. A failed launch keeps its timings and its
containers' logs, and leaves nothing on the agents. A launch whose session another
process ends meanwhile (``rm`` in a terminal) stops within ``LEFT_POLL`` seconds,
removes what it made and returns the session as that process leaves it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

from .. import file_lock
from ..asyncwait import unless
from ..core.egress import AGENT
from ..core.fast_network import GroupNetwork
from ..core.images import auth_for
from ..core.models import Container, LaunchSpec, Session
from ..core.state import ContainerStatus, SessionStatus
from ..core.timings import LaunchClock
from ..errors import LaunchFailed
from .agents.base import BindMount, Limits
from .agents.pool import AgentPool
from .ending import SessionTerminator, launch_lock_key
from .launch.bring_up import LaunchContext, ProgressCallback, bring_up
from .launch.keys import generate_session_keys
from .launch.teardown import tear_down
from .log_archive import LogArchive
from .settings import ManagerSettings
from .store.sessions import Store
from .warm_pool import WarmPool

PREPARING = SessionStatus.PREPARING
#: Seconds between a launch's looks at whether another process ended its session.
LEFT_POLL = 0.25
#: Seconds a launch so stopped waits for that process's removal to finish.
ENDING_WAIT = 30.0
#: Called with the session each time it changes while a launch is driven.
SessionCallback = Callable[[Session], None]
#: The bind mounts of a launch's folders on an agent: (agent id, owner, spec).
MountsOn = Callable[[str, str, LaunchSpec], tuple[BindMount, ...]]


class Preparation:
    """Bring placed sessions up (see the module docstring)."""

    def __init__(
        self,
        settings: ManagerSettings,
        store: Store,
        pool: AgentPool,
        warm: WarmPool,
        log_archive: LogArchive,
        terminator: SessionTerminator,
        mounts_on: MountsOn,
        networks: Callable[[str], GroupNetwork],
        limits: Callable[[], Limits],
    ) -> None:
        """The launcher's parts and settings; ``mounts_on``: its folders' bind mounts
        on an agent; ``networks``: a group's network settings; ``limits``: the
        containers' confinement now."""
        self.settings = settings
        self.store = store
        self.pool = pool
        self.warm = warm
        self.log_archive = log_archive
        self.terminator = terminator
        self.mounts_on = mounts_on
        self.networks = networks
        self.limits = limits

    async def run(self, session: Session, notify: SessionCallback) -> Session:
        """Bring a placed (PREPARING) session up and mark it RUNNING; any failure
        leaves it ERROR with nothing behind (raises :class:`LaunchFailed`). A session
        another process ended meanwhile is returned as that process leaves it."""

        # Progress goes into the store only while the session is PREPARING: once
        # another process ended it (rm), the launch stops (Conflict) and writes nothing.
        def update(host: str, **changes: object) -> None:
            notify(self.store.update_container(session.id, host, only_while=PREPARING, **changes))

        async def progress(host: str, status: ContainerStatus, container_id: str | None) -> None:
            changes: dict[str, object] = {"status": status, "status_reason": ""}
            if container_id:
                changes["container_id"] = container_id
            update(host, **changes)

        async def pulling(agent_id: str, done: str) -> None:
            for container in session.containers:
                if container.agent == agent_id:
                    reason = f"agent {agent_id} {done}"
                    update(container.host, status=ContainerStatus.PULLING, status_reason=reason)

        clock = LaunchClock(session.id, session.hosts)
        # A removal of the session (maybe in another process) waits until this launch
        # has stopped and removed what it made (see SessionTerminator).
        lock_dir = self.terminator.lock_dir
        async with file_lock.held(lock_dir, launch_lock_key(session.id), 0):
            brought = await self._bring_up(session, clock, notify, progress, pulling)
            current = self.store.require(session.id)
            if brought and current.status is not PREPARING:  # ended as it was brought up
                # Stopped earlier, bring_up's clean-up removed what it made; brought,
                # nothing did yet (the removal elsewhere looked while it was making).
                await tear_down(current, self.pool.agents, self.store.manager_id, report=False)
        if not brought or current.status is not PREPARING:
            return await self._stopped(session.id, notify)
        session = self.store.set_status(session.id, SessionStatus.RUNNING, "", driver=None)
        notify(session)
        return session

    async def _bring_up(
        self,
        session: Session,
        clock: LaunchClock,
        notify: SessionCallback,
        progress: ProgressCallback,
        pulling: Callable[[str, str], Awaitable[None]],
    ) -> bool:
        """:meth:`run`'s bring-up: whether it was brought up (False: stopped as its
        session was ended elsewhere, what it made removed). A failure leaves it ERROR
        and raises :class:`LaunchFailed`."""
        try:
            keys = generate_session_keys(session.id, session.hosts)
            self.store.save_keys(session.id, keys)
            mounts = {
                agent_id: self.mounts_on(agent_id, session.owner, session.spec)
                for agent_id in {c.agent for c in session.containers if c.agent}
            }
            network = self.networks(session.spec.resource_group)
            # Warm sets have plain networks and containers: not for fast-network groups,
            # nor where egress is walled off the agents (a restricted bridge's name).
            # Taken before make_room: taken ones are not evicted.
            walled = AGENT in self.limits().egress_deny
            warm = {} if network.special or walled else self.warm.take(session, mounts)
            if warm:
                session = self.store.require(session.id)  # with the set's network
            await self.warm.make_room(session)
            ctx = LaunchContext(
                agents=self.pool.agents,
                manager_id=self.store.manager_id,
                keys=keys,
                mounts=mounts,
                timeout=self.settings.prepare_timeout,
                encrypted_overlay=self.settings.overlay_encryption,
                limits=self.limits(),
                clock=clock,
                keep_logs=self._keep_launch_logs if self.settings.keep_logs else None,
                warm=warm,
                network=network,
                host_guards=self.pool.guards,
                image_auth=auth_for(session.spec.image, self.settings.registry_credentials),
                pull_timeout=self.settings.image_pull_timeout,
                pull_report=pulling,
                ended_elsewhere=lambda: self._ended_elsewhere(session.id),
            )
            brought, _ = await unless(bring_up(session, ctx, progress), self._left(session.id))
            self.store.add_timings(session.id, clock.timings)
            return brought
        except LaunchFailed as exc:
            self._keep_timings(session.id, clock)
            if self._ended_elsewhere(session.id):  # not a failure: see _stopped
                return False
            await self._fail_launch(session, str(exc), notify, clean_up=False)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc
        except Exception as exc:  # a bug or a lost store must not leave it PREPARING
            self._keep_timings(session.id, clock)
            await self._fail_launch(session, f"{type(exc).__name__}: {exc}", notify)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc

    def _ended_elsewhere(self, session_id: str) -> bool:
        """Whether the session is no longer PREPARING although this launch did not
        end it: another process ended it (``rm``, or a reconciliation that took it
        for abandoned), which also removes its containers and keeps their logs."""
        state = self.store.launch_state(session_id)
        return state is None or state.status is not SessionStatus.PREPARING

    async def _left(self, session_id: str) -> None:
        """Return once the session is ended elsewhere (polled every
        ``LEFT_POLL`` seconds): the launch then stops at once rather than go on
        making and starting containers for a session that is gone."""
        while not self._ended_elsewhere(session_id):
            await asyncio.sleep(LEFT_POLL)

    async def _stopped(self, session_id: str, notify: SessionCallback) -> Session:
        """The session as the process that ended it leaves it, for a launch it stopped:
        what that process reports, not a failure of this launch (it is not ERROR, and
        its history says who ended it). Its removal is given ``ENDING_WAIT`` seconds
        to finish, so the launch reports the end (TERMINATED), not the way there."""
        deadline = asyncio.get_running_loop().time() + ENDING_WAIT
        current = self.store.require(session_id)
        while current.status is SessionStatus.TERMINATING:
            if asyncio.get_running_loop().time() >= deadline:
                break
            await asyncio.sleep(LEFT_POLL)
            current = self.store.require(session_id)
        notify(current)
        return current

    def _keep_timings(self, session_id: str, clock: LaunchClock) -> None:
        """Keep the phases a failed launch got through (best effort)."""
        with contextlib.suppress(Exception):
            self.store.add_timings(session_id, clock.timings)

    async def _fail_launch(
        self, session: Session, reason: str, notify: SessionCallback, *, clean_up: bool = True
    ) -> None:
        """End a failed launch: nothing left on the agents, no keys, ERROR with why.

        ``bring_up`` already removed what it made when it raised LaunchFailed.
        """
        if clean_up:
            with contextlib.suppress(Exception):
                await tear_down(
                    self.store.require(session.id), self.pool.agents, self.store.manager_id
                )
        self.store.delete_keys(session.id)
        current = self.store.require(session.id)
        if current.status is SessionStatus.PREPARING:
            current = self.store.set_status(session.id, SessionStatus.ERROR, reason[:2000])
            self.terminator.mark_containers(current, ContainerStatus.TERMINATED)
        notify(self.store.require(session.id))

    async def _keep_launch_logs(self, session: Session, containers: Sequence[Container]) -> None:
        """bring_up's hook when a launch fails: keep its containers' logs (bounded like
        at termination) before they are removed, so ``logs`` shows all of them."""
        await self.log_archive.keep(session.with_(containers=tuple(containers)), self.pool.logs)
