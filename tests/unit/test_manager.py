"""Unit tests of ClusterManager's life-cycle rules with the fake agent (no Docker)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_cluster.core import naming
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, ClusterError


def make_manager(tmp_path: Path, agent: FakeAgent) -> ClusterManager:
    return ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
    )


async def test_terminating_a_preparing_session_sweeps_until_the_network_is_free(
    tmp_path: Path,
) -> None:
    """A launch in another process may still be creating containers: the network
    stays busy for a moment, and terminate must keep sweeping rather than fail."""
    agent = FakeAgent("local")
    manager = make_manager(tmp_path, agent)
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    assert session.status is SessionStatus.PREPARING
    labels = naming.network_labels(session, manager.store.manager_id)
    await agent.create_network(naming.network_name(session), labels, overlay=False)
    agent.fail_on["remove_network"] = AgentError("network has active endpoints")

    async def launch_finishes_creating() -> None:
        await asyncio.sleep(0.7)
        del agent.fail_on["remove_network"]

    freed = asyncio.ensure_future(launch_finishes_creating())
    ended = await manager.terminate(session.id)
    await freed
    assert ended.status is SessionStatus.TERMINATED
    assert [c.status for c in ended.containers] == [ContainerStatus.TERMINATED] * 2
    assert sum(1 for method, _ in agent.calls if method == "remove_network") >= 2
    await manager.close()


async def test_terminating_a_running_session_reports_what_it_could_not_remove(
    tmp_path: Path,
) -> None:
    agent = FakeAgent("local")
    manager = make_manager(tmp_path, agent)
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, size=1))
    manager.store.set_status(session.id, SessionStatus.RUNNING)
    labels = naming.network_labels(session, manager.store.manager_id)
    await agent.create_network(naming.network_name(session), labels, overlay=False)
    agent.fail_on["remove_network"] = AgentError("engine went away")
    with pytest.raises(ClusterError) as info:
        await manager.terminate(session.id)
    assert "could not remove everything" in str(info.value)
    assert "engine went away" in str(info.value)
    assert manager.store.get(session.id).status is SessionStatus.TERMINATING  # type: ignore[union-attr]
    await manager.close()
