"""ClusterManager: the local engine every front end calls when there is no shared service.

The CLI, the REST handlers, the kernel provisioner, the notebook API and widgets
launch, list, inspect, read logs of, run commands in and terminate cluster sessions
through the :class:`~jupyter_cluster.core.engine.Engine` protocol, which this class
implements on the Docker agents it owns (the shared service's client,
:class:`~jupyter_cluster.client.remote_engine.RemoteEngine`, is the other
implementation). It is configured with traitlets from the usual Jupyter config files
(``jupyter_cluster_config.py``, ``jupyter_server_config.py``; the traits are in
:mod:`.settings`).

This module builds the parts and owns them; each part has one job and is given its
dependencies explicitly: the :class:`~.store.sessions.Store`, the
:class:`~.agents.pool.AgentPool`, the :class:`~.warm_pool.WarmPool`, the
:class:`~.launching.SessionLauncher` (submit, drive), the
:class:`~.ending.SessionTerminator` (terminate), the
:class:`~.reading.SessionReader` (get, list, logs, exec, stats, access) and
:class:`~.owned.OwnerFolders` (data folders). Groups of Engine methods live in its
bases: reading sessions (:mod:`.reading_actions`), the agents' views
(:mod:`.agent_views`), folders and profiles (:mod:`.owner_data`), files in folders
(:mod:`.folder_file_ops`), bookkeeping for front ends (:mod:`.bookkeeping`) and
audit records (:mod:`.audit_actions`). The agents' configuration is completed by
:mod:`.agent_setup`. What a
local engine does differently from the shared service's client is handed out as
small parts: its launch policy (:class:`~.admission.LocalGate`), its route to main1
(:class:`~jupyter_cluster.reach.agent.AgentRoute`) and its background upkeep
(:mod:`.upkeep`, :mod:`.oom_watch`).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from ..core.images import check_allowed
from ..core.launch_check import LaunchCheck
from ..core.launch_spec import check_fields
from ..core.models import LaunchSpec, Session
from ..core.quota import Quota
from ..core.time_limits import check_site_limit
from ..core.units import parse_size
from ..core.warm import parse_targets
from .admission import LocalGate
from .agent_setup import configured_agents
from .agent_views import AgentViews
from .agents.pool import AgentPool
from .agents.registry import make_agent
from .api import PolicySource, Upkeep
from .audit_actions import AuditActions
from .batch import BatchUpkeep, JobRunner
from .bookkeeping import Bookkeeping
from .ending import SessionTerminator
from .fast_network import FastNetworking
from .folder_file_ops import FolderFileOps
from .gpu_detection import GpuDetection
from .guard_refresh import GuardRefresh
from .hardening import ContainerHardening
from .launch.overlay_views import OverlayViews
from .launching import SessionCallback, SessionLauncher
from .lifetime import LifetimeWatch
from .log_archive import LogArchive
from .oom_watch import OomWatch
from .owned import OwnerFolders
from .owner_data import OwnerData
from .reading import SessionReader
from .reading_actions import ReadingActions
from .reconcile import Reconciler
from .settings import EngineSettings
from .store.exec_log import ExecLog
from .store.profiles import ProfileStore
from .store.sessions import Store
from .upkeep import WarmRefill
from .utilization_idle import UtilizationWatch
from .warm_demand import WarmDemand
from .warm_pool import WarmPool

if TYPE_CHECKING:
    from ..reach.agent import AgentRoute


class ClusterManager(
    ReadingActions,
    AgentViews,
    Bookkeeping,
    AuditActions,
    OwnerData,
    FolderFileOps,
    EngineSettings,
):
    """Launch and manage cluster sessions on the configured Docker agents.

    Configured as ``c.ClusterManager.*`` (the traits are in :mod:`.settings`).
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.store = Store(self.db_path)
        #: Commands running in sessions (exec), in the store's file: see :mod:`.store.exec_log`.
        self.exec_log = ExecLog(self.db_path)
        #: Users' own launch profiles, in the store's file: see :mod:`.store.profiles`.
        self.profile_store = ProfileStore(self.db_path)
        beside_store = os.path.dirname(os.path.abspath(self.db_path))
        self.log_archive = LogArchive(
            os.path.join(beside_store, "logs"),
            max_lines=self.log_keep_lines,
            max_bytes=parse_size(self.log_keep_size, "ClusterManager.log_keep_size"),
            keep_days=self.log_keep_days,
        )
        self.gpu_detection = GpuDetection(parent=self)
        configs = configured_agents(self, self.gpu_detection.probe, self.log)
        # The store's engine processes take turns there (.agents.docker.network_leave, .ending).
        locks = os.path.join(beside_store, "locks")
        factory = self.agent_factory or partial(make_agent, lock_dir=locks)
        self.pool = AgentPool(configs, factory, pulls_images=self.pull_images)
        self.hardening = ContainerHardening(parent=self)
        self.hardening.check_reserved_uid()  # refuse to run with a uid a host user has
        self.pool.guards.refresh = self.hardening.guard_refresh
        self.networking = FastNetworking(parent=self)
        targets = parse_targets(self.warm_pool, self.default_image, self.max_size)
        self.warm = WarmPool(
            self.store,
            self.pool,
            targets,
            self.hardening.limits,
            self.warm_pool_interval,
            demand=lambda: WarmDemand.of(self),
            encrypted=lambda: self.overlay_encryption,
        )
        self.folders = OwnerFolders(self, self.store, lambda: self.hardening.work_uid)
        #: Watches the Swarm nodes' views of overlays this engine removed.
        self.overlay_views = OverlayViews()
        self.terminator = SessionTerminator(
            self.store,
            self.pool,
            self.log_archive,
            keep_logs=lambda: self.keep_logs,
            overlay_views=self.overlay_views,
            lock_dir=locks,
        )
        self.launcher = SessionLauncher(
            self,
            self.store,
            self.pool,
            self.warm,
            self.log_archive,
            self.terminator,
            folders=self.folders.space,
            limits=self.hardening.limits,
            networks=self.networking.for_group,
        )
        #: Time limits and batch jobs (see :mod:`.lifetime`, :mod:`.batch`).
        self.lifetimes = LifetimeWatch(
            self.store, self.terminate, lambda: self.max_session_lifetime, self.log
        )
        self.jobs = JobRunner(
            self.store,
            self.pool,
            self.terminate,
            self.lifetimes,
            interval=lambda: self.job_poll_interval,
            logger=self.log,
        )
        self.reader = SessionReader(self.store, self.pool, self.log_archive, self.exec_log)
        #: The utilization idle clean-up (an upkeep job); a server adds its kernels'
        #: and terminals' activity to its ``sources`` (see :mod:`.utilization_idle`).
        self.utilization = UtilizationWatch(
            self, self.store, self.pool, self.exec_log, self.terminate, self.log
        )
        self._reconciled = False

    # -- life --------------------------------------------------------------------

    async def start(self) -> None:
        """Reconcile the store with Docker once; front ends call this first."""
        if not self._reconciled:
            self._reconciled = True
            pruned = self.store.prune_history(
                self.history_max_age_days * 86400, self.history_max_count
            )
            if pruned:
                self.log.info("forgot %d ended session(s) past the history limits", pruned)
            known = {s.id for s in self.store.list(include_ended=True)}
            self.log_archive.prune(known)
            await self.refresh()

    async def refresh(self) -> None:
        """One reconciliation pass: notice dead containers, clean up orphans.

        Long-running front ends (the server) call this periodically so a session
        whose container died shows RUNNING_DEGRADED without a restart.
        """
        reconciler = Reconciler(
            self.store,
            self.pool.agents,
            orphan_policy=self.orphan_policy,
            finish_termination=self.terminate,
            log=self.log,
        )
        await reconciler.run()
        await self.lifetimes.sweep()

    async def close(self) -> None:
        """Stop the scheduling loop; close the agents' connections and the store."""
        await self.launcher.queue.stop()
        await self.overlay_views.stop()  # before the agents' connections go
        await self.pool.close()
        self.exec_log.close()
        self.profile_store.close()
        self.store.close()

    # -- launching (SessionLauncher) -----------------------------------------------

    def make_spec(self, **fields: object) -> LaunchSpec:
        """Validate raw launch input (CLI flags, JSON) with this manager's limits."""
        check_fields(fields)
        fields.setdefault("image", self.default_image)
        fields["env_allowed"] = self.allowed_env_names
        spec = LaunchSpec.create(max_size=self.max_size, **fields)  # type: ignore[arg-type]
        check_allowed(spec.image, self.allowed_registries, (self.default_image,))
        check_site_limit(spec.max_lifetime, self.max_session_lifetime)
        return spec

    def quota(self, sessions: int = 0) -> Quota:
        """The per-owner limits; ``sessions`` tightens the session count."""
        return self.launcher.quota(sessions)

    async def check(
        self, spec: LaunchSpec, *, owner: str = "", quota: Quota | None = None
    ) -> LaunchCheck:
        """A dry run of :meth:`submit`: raise as it would for a launch refused (one
        that could never run here, or over ``owner``'s ``quota``), else say whether it
        would start now and where, or why it would wait; nothing is made or stored
        (see SessionLauncher.preview). ``launch --dry-run``, ``POST
        sessions?dry_run=1`` and ``kernelspec install``'s warning call it."""
        return await self.launcher.preview(spec, owner, quota)

    async def submit(
        self,
        spec: LaunchSpec,
        *,
        owner: str = "",
        quota: Quota | None = None,
        kernel: bool = False,
    ) -> Session:
        """Record a launch PENDING and try to place it (see SessionLauncher.submit)."""
        return await self.launcher.submit(spec, owner=owner, quota=quota, kernel=kernel)

    async def drive(self, session_id: str, *, on_change: SessionCallback | None = None) -> Session:
        """Wait for room, then bring the session up (see SessionLauncher.drive)."""
        return await self.launcher.drive(session_id, on_change=on_change)

    async def launch(
        self, spec: LaunchSpec, *, owner: str = "", on_change: SessionCallback | None = None
    ) -> Session:
        """Submit and drive a session until it runs; raises LaunchFailed on error."""
        return await self.launcher.launch(spec, owner=owner, on_change=on_change)

    # -- ending (SessionTerminator) ------------------------------------------------

    async def terminate(self, ref: str, reason: str = "") -> Session:
        """Cancel a PENDING session, or remove its containers and network; the
        scheduling loop then looks for room for waiting sessions."""
        ended = await self.terminator.terminate(ref, reason)
        self.launcher.queue.wake()
        return ended

    async def remove_subs(self, session_id: str) -> None:
        """Mark it TERMINATING and remove every container but main1 while main1's kernel
        exits (see SessionTerminator.remove_subs); terminate does the rest."""
        await self.terminator.early.remove_subs(session_id)

    # -- what a local engine does its own way (see engine.api.Engine) ----------------

    def launch_gate(self, settings: PolicySource) -> LocalGate:
        """This process's launch policy applies (``settings``: ``c.ClusterApp``)."""
        return LocalGate(self, settings)

    def main_route(self) -> AgentRoute:
        """main1 is reached through its agent."""
        from ..reach.agent import AgentRoute  # kernels' clients: not for the CLI's listings

        return AgentRoute(self.agent, self.store.load_keys, self.access, self.hardening.work_uid)

    def upkeep(self, on_change: Callable[[], None]) -> builtins.list[Upkeep]:
        """The warm pool's refill (when configured), the OOM watch, batch jobs and
        limits, the utilization idle clean-up, the scheduling loop and the guard of
        session bridges put again on the hosts of active sessions."""
        oom = OomWatch(self.store, self.pool.agents, on_change=on_change, logger=self.log)
        jobs = BatchUpkeep(self.jobs, on_change=on_change)
        queue = self.launcher.queue  # the scheduling loop runs while the server does
        self.utilization.on_change = on_change
        guard = GuardRefresh(self.store, self.pool, self.hardening.limits, self.log)
        kept: builtins.list[Upkeep] = [oom, jobs, queue, self.utilization, guard]
        return [WarmRefill(self.warm), *kept] if self.warm.enabled else kept
