"""The engine's parts built by hand around one fake agent, without a ClusterManager;
and a whole ClusterManager over several fake agents.

Used by the unit tests of :class:`SessionLauncher` and :class:`SessionTerminator`
(``test_launcher.py``, ``test_terminator.py``) to show each part works with a store
and the fake agent alone, given its dependencies explicitly, and by the tests of
sessions across agents (:func:`manager_over`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jupyter_cluster.engine.agents.base import AgentConfig, Limits
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.agents.pool import AgentPool
from jupyter_cluster.engine.ending import SessionTerminator
from jupyter_cluster.engine.folder_space import FolderSpace
from jupyter_cluster.engine.launching import SessionLauncher
from jupyter_cluster.engine.log_archive import LogArchive
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.settings import ManagerSettings
from jupyter_cluster.engine.store.sessions import Store
from jupyter_cluster.engine.warm_pool import WarmPool


@dataclass
class Parts:
    """A store, one fake agent and the launcher and terminator built on them."""

    agent: FakeAgent
    store: Store
    pool: AgentPool
    archive: LogArchive
    terminator: SessionTerminator
    launcher: SessionLauncher

    def close(self) -> None:
        self.store.close()


def build(tmp_path: Path, agent: FakeAgent, **traits: object) -> Parts:
    """The parts as the manager wires them, with ``traits`` as its settings."""
    settings = ManagerSettings(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        **traits,  # type: ignore[arg-type]
    )
    store = Store(settings.db_path)
    pool = AgentPool([AgentConfig(id=agent.id)], lambda config: agent)
    archive = LogArchive(str(tmp_path / "logs"), max_lines=100, max_bytes=1 << 20, keep_days=1)
    terminator = SessionTerminator(store, pool, archive, keep_logs=lambda: settings.keep_logs)
    warm = WarmPool(store, pool, [], Limits, 5.0)
    launcher = SessionLauncher(
        settings,
        store,
        pool,
        warm,
        archive,
        terminator,
        folders=lambda owner: FolderSpace(settings.data_root, owner, per_owner=False, shared=[]),
        limits=Limits,
    )
    return Parts(agent, store, pool, archive, terminator, launcher)


def manager_over(
    tmp_path: Path, agents: Mapping[str, FakeAgent], **traits: object
) -> ClusterManager:
    """A whole ClusterManager whose configured agents are the fakes ``agents`` (by
    id), with ``traits`` as its settings."""
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": name} for name in agents],
        agent_factory=lambda config: agents[config.id],
        **traits,
    )
