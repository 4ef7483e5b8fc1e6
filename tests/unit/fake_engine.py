"""An engine on a fake agent, as many unit test modules make one (:func:`fake_manager`).

Apart from :mod:`.support`, which child processes import: this one imports the
whole engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager


def fake_manager(tmp_path: Path, agent: FakeAgent, **traits: Any) -> ClusterManager:
    """A :class:`ClusterManager` whose store and data folders are under ``tmp_path``
    and whose every configured agent is ``agent``; ``traits`` are its settings."""
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        **traits,
    )
