"""SessionLauncher: how the engine launches a session: submit it, drive it to RUNNING.

Owned by :class:`~jupyter_cluster.engine.manager.ClusterManager`, which hands it its
parts (store, agent pool, warm pool, log archive, the terminator) and its settings.
The CLI (``launch``), the REST handlers, the provisioner, the notebook API and the
detached launch driver reach :meth:`SessionLauncher.submit`, :meth:`~SessionLauncher.
drive` and :meth:`~SessionLauncher.launch` through the manager. The queue is placed
by this process's scheduling loop (:attr:`SessionLauncher.queue`,
:mod:`.launch.queue_loop`; drivers wait in :mod:`.launch.pending`); bringing a
placed session up is :class:`.preparing.Preparation`'s.
A launch that fails or is cancelled leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import replace

from ..asyncwait import through
from ..core import naming
from ..core.fast_network import GroupNetwork
from ..core.images import check_allowed
from ..core.launch_check import LaunchCheck
from ..core.models import LaunchSpec, Session
from ..core.quota import Quota
from ..core.scheduler import AgentSlot, Pending, place
from ..core.state import SessionStatus
from ..core.units import parse_size
from ..core.warm import WarmShape, place_key
from ..errors import InvalidRequest
from .agents.base import BindMount, Limits
from .agents.pool import AgentPool
from .ending import SessionTerminator
from .folder_space import FolderSpace
from .folders import notebook_mount
from .launch.pending import QueueLoop, QueuePolicy, wait_for_room
from .log_archive import LogArchive
from .preparing import Preparation, SessionCallback
from .settings import ManagerSettings
from .store.drivers import this_process
from .store.sessions import Store
from .warm_pool import WarmPool


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
        #: Bringing placed sessions up (PREPARING to RUNNING, or ERROR).
        self.preparation = Preparation(
            settings, store, pool, warm, log_archive, terminator, self.mounts_on, networks, limits
        )

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
        if kernel:  # a server will start a kernel in main1 with the session's own id
            session = session.with_(kernel_id=session_id)
        quota = self.quota() if quota is None else quota
        self.store.insert_session(session, quota, driver=this_process())
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

    async def preview(
        self, spec: LaunchSpec, owner: str = "", quota: Quota | None = None
    ) -> LaunchCheck:
        """What :meth:`submit` would meet now, making and storing nothing (a dry run):
        :meth:`check`'s refusals, the quota's (Conflict, ``quota`` as at submit), then
        whether it would start at once, where, or why it would wait."""
        slots = await self.check(spec, owner)
        policy = self._queue_policy()
        quota = self.quota() if quota is None else quota
        return self.store.preview(
            spec, owner, slots, quota=quota, order=policy.order, backfill=policy.backfill
        )

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
            return await self.preparation.run(session, notify)
        except asyncio.CancelledError:
            await through(self.terminator.abandon(session_id))  # even if cancelled again
            raise
