"""ClusterManager: the one engine every front end calls.

The CLI, the REST handlers, the kernel provisioner, the notebook API and widgets
all launch, list, inspect, read logs of, run commands in and terminate cluster
sessions through this class. It owns the agents (IO edge), the store (SQLite) and
the data folders, and is configured with traitlets from the usual Jupyter config
files (``jupyter_cluster_config.py``, ``jupyter_server_config.py``).

This module builds the manager's parts and answers about agents and start-up; the
rest of its methods come from its bases, one job each: :mod:`.launching` (submit,
drive), :mod:`.ending` (terminate), :mod:`.reading` (get, list, logs, exec),
:mod:`.owned` (access, stats, data folders) and :mod:`.settings` (the traits).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Sequence

from ..core.models import LaunchSpec
from ..core.scheduler import Placement
from ..core.units import parse_size
from ..core.warm import parse_targets
from .agents.base import Agent
from .agents.pool import AgentPool
from .agents.registry import agent_configs, make_agent
from .folders import DataFolders
from .hardening import ContainerHardening
from .launching import SessionLaunching
from .log_archive import LogArchive
from .reconcile import Reconciler
from .store.exec_log import ExecLog
from .store.sessions import Store
from .warm_pool import WarmPool


class ClusterManager(SessionLaunching):
    """Launch and manage cluster sessions on the configured Docker agents.

    Configured as ``c.ClusterManager.*`` (the traits are in :mod:`.settings`).
    """

    #: Not the shared service's client (:class:`~jupyter_cluster.client.remote.RemoteEngine`).
    remote = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.store = Store(self.db_path)
        #: Commands running in sessions (exec), in the store's file: see :mod:`.exec_log`.
        self.exec_log = ExecLog(self.db_path)
        self.folders = DataFolders(self.data_root)
        self.log_archive = LogArchive(
            os.path.join(os.path.dirname(os.path.abspath(self.db_path)), "logs"),
            max_lines=self.log_keep_lines,
            max_bytes=parse_size(self.log_keep_size, "ClusterManager.log_keep_size"),
            keep_days=self.log_keep_days,
        )
        timeouts = {"timeout": self.docker_timeout, "connect_timeout": self.docker_connect_timeout}
        configs = agent_configs(self.agents, self.data_root, timeouts)
        for config in configs:
            if config.insecure and config.url.startswith("tcp://"):
                self.log.warning(
                    "agent %s: %s is a plain TCP Docker API (insecure: True): anyone who "
                    "reaches it is root on that host and sees session keys in clear text",
                    config.id,
                    config.url,
                )
        self.pool = AgentPool(configs, self.agent_factory or make_agent)
        self.hardening = ContainerHardening(parent=self)
        targets = parse_targets(self.warm_pool, self.default_image, self.max_size)
        self.warm = WarmPool(
            self.store, self.pool, targets, self.hardening.limits, self.warm_pool_interval
        )
        self._reconciled = False

    # -- agents ------------------------------------------------------------------

    @property
    def agent_map(self) -> dict[str, Agent]:
        """The agents by id."""
        return dict(self.pool.agents)

    def agent(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``; NotFound when there is none."""
        return self.pool.get(agent_id)

    async def agents_info(self) -> builtins.list[dict[str, object]]:
        """Capacity, allocated and free resources per agent (``jupyter cluster agents``)."""
        return await self.pool.rows(self.store.usage())

    async def resource_groups_info(self, groups: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Capacity, used and free resources summed per group (``GET resource-groups``)."""
        return await self.pool.group_rows(self.store.usage(), groups)

    async def images_info(self, images: Sequence[str]) -> builtins.list[dict[str, object]]:
        """Which agents have each image, the first being the default (``GET images``)."""
        return await self.pool.image_rows(images)

    # -- start-up ----------------------------------------------------------------

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
            self.agent_map,
            orphan_policy=self.orphan_policy,
            finish_termination=self.terminate,
            log=self.log,
        )
        await reconciler.run()

    # -- launch input ------------------------------------------------------------

    def make_spec(self, **fields: object) -> LaunchSpec:
        """Validate raw launch input (CLI flags, JSON) with this manager's limits."""
        fields.setdefault("image", self.default_image)
        return LaunchSpec.create(max_size=self.max_size, **fields)  # type: ignore[arg-type]

    # -- shutting down -----------------------------------------------------------

    async def close(self) -> None:
        """Close the agents' connections and the store."""
        await self.pool.close()
        self.exec_log.close()
        self.store.close()


__all__ = ["ClusterManager", "Placement"]
