"""SessionLauncher: how the engine launches a session: submit it, drive it to RUNNING.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`, which hands it its
parts (store, agent pool, warm pool, log archive, the terminator) and its settings.
The CLI (``launch``), the REST handlers, the provisioner, the notebook API and the
detached launch driver reach :meth:`SessionLauncher.submit`, :meth:`~SessionLauncher.
drive` and :meth:`~SessionLauncher.launch` through the manager. The queue is placed
by this process's scheduling loop (:attr:`SessionLauncher.queue`,
:mod:`.launch.queue_loop`; drivers wait in :mod:`.launch.pending`); creating the
containers is :func:`.launch.bring_up.bring_up`.
A launch that fails or is cancelled leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core import naming
from ..core.egress import AGENT
from ..core.fast_network import GroupNetwork
from ..core.images import auth_for, check_allowed
from ..core.models import Container, LaunchSpec, Session
from ..core.quota import Quota
from ..core.scheduler import AgentSlot, Pending, place
from ..core.state import ContainerStatus, SessionStatus
from ..core.timings import LaunchClock
from ..core.units import parse_size
from ..core.warm import WarmShape, place_key
from ..errors import InvalidRequest, LaunchFailed
from .agents.base import BindMount, Limits
from .agents.pool import AgentPool
from .ending import SessionTerminator
from .folder_space import FolderSpace
from .folders import notebook_mount
from .launch.bring_up import LaunchContext, bring_up
from .launch.keys import generate_session_keys
from .launch.pending import QueueLoop, QueuePolicy, wait_for_room
from .launch.teardown import tear_down
from .log_archive import LogArchive
from .settings import ManagerSettings
from .store.drivers import this_process
from .store.sessions import Store
from .warm_pool import WarmPool

#: Called with the session each time it changes while a launch is driven.
SessionCallback = Callable[[Session], None]


class SessionLauncher:
    """Admit, queue and bring up sessions (see the module docstring)."""

    def __init__(
        self,
        settings: ManagerSettings,
        store: Store,
        pool: AgentPool,
        warm: WarmPool,
        log_archive: LogArchive,
        terminator: SessionTerminator,
        *,
        folders: Callable[[str], FolderSpace],
        limits: Callable[[], Limits],
        networks: Callable[[str], GroupNetwork] = lambda group: GroupNetwork(),
    ) -> None:
        """``settings``: the manager's traits, read at each launch (limits, timeouts,
        the queue's policy); ``folders``: an owner's data folders; ``limits``: the
        containers' confinement now (``ContainerHardening.limits``); ``networks``: a
        resource group's network settings (``FastNetworking.for_group``)."""
        self.settings = settings
        self.store = store
        self.pool = pool
        self.warm = warm
        self.log_archive = log_archive
        self.terminator = terminator
        self.folders_for = folders
        self.limits = limits
        self.networks = networks
        warm.resolve = lambda shape, agent: self.mounts_on(agent, shape.owner, shape)
        #: This process's scheduling loop (one per engine process).
        self.queue = QueueLoop(store, self._slots, self._queue_policy)

    def mounts_on(
        self, agent_id: str, owner: str, spec: LaunchSpec | WarmShape
    ) -> tuple[BindMount, ...]:
        """The bind mounts of ``spec``'s data folders (as ``owner`` sees them) and
        notebook folder on an agent: a launch's, and a warm set's made for its shape."""
        root = self.pool.get(agent_id).config.data_root or self.settings.data_root
        folders = self.folders_for(owner).bind_mounts(spec.mounts, root)
        return folders + notebook_mount(spec.workdir)

    def quota(self, sessions: int = 0) -> Quota:
        """The per-owner limits (``max_*_per_owner``); ``sessions`` tightens the
        session count (e.g. ``ClusterApp.max_sessions_per_user`` for REST)."""
        counts = [n for n in (self.settings.max_sessions_per_owner, sessions) if n > 0]
        return Quota(
            sessions=min(counts, default=0),
            cpu=max(self.settings.max_cpu_per_owner, 0.0),
            mem=parse_size(self.settings.max_mem_per_owner, "ClusterManager.max_mem_per_owner")
            if self.settings.max_mem_per_owner
            else 0,
            gpu=max(self.settings.max_gpu_per_owner, 0),
        )

    async def submit(
        self,
        spec: LaunchSpec,
        *,
        owner: str = "",
        quota: Quota | None = None,
        kernel: bool = False,
    ) -> Session:
        """Check a spec against agents and folders, record it PENDING and place it if
        it fits and its turn has come (alone when it is first in its group's queue
        order, else by a pass over the whole queue).

        Raises :class:`InvalidRequest`/:class:`NotFound` (nothing stored) for
        input that can never work: unknown folder, group or image, a size that
        no agent could ever hold; Conflict when it would take ``owner`` over
        ``quota`` (default: :meth:`quota`). With ``kernel`` the session records the
        id of the kernel a server will start in main1 (the session's own id).
        """
        slots = await self.check(spec, owner)
        session_id = str(uuid.uuid4())
        now = time.time()
        session = Session(
            id=session_id,
            spec=spec,
            status=SessionStatus.PENDING,
            containers=naming.plan_containers(session_id, spec.size),
            created_at=now,
            updated_at=now,
            owner=owner,
        )
        self.store.insert_session(session, self.quota() if quota is None else quota)
        if kernel:
            self.store.set_kernel_id(session_id, session_id)
        self.store.set_driver(session_id, this_process())
        policy = self._queue_policy()
        first = self.store.place_if_first(
            session_id, slots, order=policy.order, backfill=policy.backfill
        )
        if first is None:  # not first in its group's order: the whole queue decides
            await self.queue.run_pass({spec.image: slots})
        elif isinstance(first, Pending):
            self.queue.wake()  # the others' places in the queue moved
        return self.store.require(session_id)

    async def check(self, spec: LaunchSpec, owner: str = "") -> list[AgentSlot]:
        """Refuse what can never run, storing nothing: a size above the site's, an
        image not allowed, a folder ``owner`` lacks, a group this site cannot confine,
        a request no agent could ever hold (:class:`InvalidRequest`, :class:`NotFound`).
        :meth:`submit` starts with it; ``kernelspec install`` warns with it. The agents
        as the scheduler sees them, which it was checked against."""
        if spec.size > self.settings.max_size:
            raise InvalidRequest(
                f"size: the cluster size must be 1 to {self.settings.max_size}", "size"
            )
        check_allowed(spec.image, self.settings.allowed_registries, (self.settings.default_image,))
        folders = self.folders_for(owner)
        for mount in spec.mounts:
            folders.path(mount.name)
        if self.networks(spec.resource_group).host_network and self.limits().egress_deny:
            raise InvalidRequest(
                f"resource_group: group {spec.resource_group!r} runs containers on their "
                "agents' own networks, where this site's egress restrictions "
                "(ContainerHardening.restrict_egress) cannot apply; choose another group",
                "resource_group",
            )
        slots = await self._slots(spec.image)
        place(spec, slots)  # raises for requests that can never fit; result unused here
        return slots

    async def _slots(self, image: str) -> list[AgentSlot]:
        """The agents as the scheduler sees them, those of host-network groups marked
        as holding one container at a time."""
        slots = await self.pool.slots(image)
        # Once per group, not per agent: this runs at every pass for every waiting image.
        hosted = {g for g in {s.resource_group for s in slots} if self.networks(g).host_network}
        warm: dict[str, set[str]] = {}
        spread: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
        for ready in self.warm.table.ready():  # the scheduler prefers agents with a set
            if ready.spread:
                spread.setdefault(ready.agent, set()).add(
                    (place_key(ready.shape_key), ready.layout)
                )
            else:
                warm.setdefault(ready.agent, set()).add(place_key(ready.shape_key))
        if not (hosted or warm or spread):  # nothing to add (a copy per agent costs)
            return slots
        return [
            replace(
                s,
                one_container=s.one_container or s.resource_group in hosted,
                warm=frozenset(warm.get(s.id, ())),
                warm_layouts=frozenset(spread.get(s.id, ())),
            )
            for s in slots
        ]

    def _queue_policy(self) -> QueuePolicy:
        return QueuePolicy(
            poll_interval=self.settings.pending_poll_interval,
            timeout=self.settings.pending_timeout,
            backfill=self.settings.pending_backfill,
            order=getattr(self.settings, "queue_order", "fifo"),
        )

    async def launch(
        self, spec: LaunchSpec, *, owner: str = "", on_change: SessionCallback | None = None
    ) -> Session:
        """Submit and drive a session until it runs; raises LaunchFailed on error."""
        session = await self.submit(spec, owner=owner)
        return await self.drive(session.id, on_change=on_change)

    async def drive(self, session_id: str, *, on_change: SessionCallback | None = None) -> Session:
        """Wait for room while PENDING, then bring the containers up.

        Returns the RUNNING session, or the CANCELLED one if someone cancelled
        it; raises :class:`LaunchFailed` (session ERROR) when bringing it up
        fails. If the caller is cancelled (Ctrl-C), the session is cancelled or
        torn down; nothing is left behind.
        """
        self.store.set_driver(session_id, this_process())
        notify = on_change or (lambda s: None)
        try:
            session = await wait_for_room(
                self.store, session_id, self.queue, self._queue_policy(), notify
            )
            if session.status is not SessionStatus.PREPARING:
                return session
            notify(session)
            return await self._prepare(session, notify)
        except asyncio.CancelledError:
            await self.terminator.abandon(session_id)
            raise

    async def _prepare(self, session: Session, notify: SessionCallback) -> Session:
        """Bring a placed session up; any failure leaves it ERROR with nothing behind."""

        async def progress(host: str, status: ContainerStatus, container_id: str | None) -> None:
            changes: dict[str, object] = {"status": status, "status_reason": ""}
            if container_id:
                changes["container_id"] = container_id
            notify(self.store.update_container(session.id, host, **changes))

        async def pulling(agent_id: str, done: str) -> None:
            for container in session.containers:
                if container.agent == agent_id:
                    notify(
                        self.store.update_container(
                            session.id,
                            container.host,
                            status=ContainerStatus.PULLING,
                            status_reason=f"agent {agent_id} {done}",
                        )
                    )

        clock = LaunchClock(session.id, session.hosts)
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
            )
            await bring_up(session, ctx, progress)
            self.store.add_timings(session.id, clock.timings)
        except LaunchFailed as exc:
            self._keep_timings(session.id, clock)
            await self._fail_launch(session, str(exc), notify, clean_up=False)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc
        except Exception as exc:  # a bug or a lost store must not leave it PREPARING
            self._keep_timings(session.id, clock)
            await self._fail_launch(session, f"{type(exc).__name__}: {exc}", notify)
            raise LaunchFailed(f"session {session.name} failed to launch: {exc}") from exc
        current = self.store.require(session.id)
        if current.status is not SessionStatus.PREPARING:  # terminated meanwhile
            await tear_down(current, self.pool.agents, self.store.manager_id)
            return current
        session = self.store.set_status(session.id, SessionStatus.RUNNING, "")
        self.store.set_driver(session.id, None)
        notify(session)
        return session

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
