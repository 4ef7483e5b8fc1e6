"""The ClusterManager API against real Docker (issue #2: 9, 11).

All or nothing when creating one container fails, and start-up reconciliation:
orphans removed or adopted, a running session whose container died degraded.
The only fake is the injected creation failure (a monkeypatched
``DockerAgent.create_container`` that really creates every other container).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.base import ContainerSpec
from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError, LaunchFailed
from tests.support.constants import HOSTS, MIB, READY
from tests.support.docker import container_exists, docker, session_objects

from .support import Workspace

pytestmark = pytest.mark.docker
S = SessionStatus


@pytest.fixture
async def manager(ws: Workspace) -> AsyncIterator[ClusterManager]:
    """A started manager on the workspace's store, closed after the test."""
    m = ws.manager()
    await m.start()
    yield m
    await m.close()


async def launch(manager: ClusterManager, size: int) -> Session:
    spec = manager.make_spec(size=size, cpu=0.25, mem="256m", name=None)
    session = await manager.launch(spec)
    assert session.status is S.RUNNING
    containers, networks = session_objects(session.id)
    assert len(containers) == size and len(networks) == 1
    return session


async def restarted(ws: Workspace, **traits: object) -> ClusterManager:
    """A fresh manager on the same data dir, after its start-up reconciliation."""
    m = ws.manager(**traits)
    await m.start()
    return m


async def test_failure_creating_the_last_container_leaves_nothing(
    ws: Workspace, manager: ClusterManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_create = DockerAgent.create_container
    created: list[str] = []

    async def create_or_fail(self: DockerAgent, spec: ContainerSpec) -> str:
        if spec.hostname != "sub3":
            container_id = await real_create(self, spec)
            created.append(container_id)
            return container_id
        for _ in range(600):  # let the others be created for real first
            if len(created) == 3:
                break
            await asyncio.sleep(0.05)
        raise AgentError(f"agent {self.id}: creating container {spec.name} failed: injected")

    monkeypatch.setattr(DockerAgent, "create_container", create_or_fail)
    spec = manager.make_spec(size=4, cpu=0.25, mem="256m")
    with pytest.raises(LaunchFailed, match="sub3"):
        await manager.launch(spec)

    assert len(created) == 3
    assert not any(container_exists(cid) for cid in created)
    sessions = await manager.list(include_ended=True)
    assert len(sessions) == 1
    session = sessions[0]
    assert session.status is S.ERROR
    assert "sub3" in session.status_reason and "injected" in session.status_reason
    assert session_objects(session.id) == ([], [])
    assert ws.docker_objects() == ([], [])
    assert manager.store.load_keys(session.id) is None
    assert all(c.status is not ContainerStatus.RUNNING for c in session.containers)
    # Nothing is held on the agent any more.
    assert (await manager.agents_info())[0]["allocated"]["cpu"] == 0


async def test_reconcile_removes_orphans_by_default(ws: Workspace, manager: ClusterManager) -> None:
    session = await launch(manager, 2)
    manager.store.delete_session(session.id)
    fresh = await restarted(ws)
    try:
        assert session_objects(session.id) == ([], [])
        assert await fresh.list(include_ended=True) == []
    finally:
        await fresh.close()


async def test_reconcile_adopts_orphans(ws: Workspace, manager: ClusterManager) -> None:
    session = await launch(manager, 3)
    manager.store.delete_session(session.id)
    fresh = await restarted(ws, orphan_policy="adopt")
    try:
        adopted = await fresh.get(session.id)
        assert adopted.status is S.RUNNING
        assert adopted.hosts == HOSTS
        assert [c.container_id for c in adopted.containers] == [
            c.container_id for c in session.containers
        ]
        assert [c.kernel_id for c in adopted.containers] == [
            c.kernel_id for c in session.containers
        ]
        assert [c.role for c in adopted.containers] == ["main", "sub", "sub"]
        assert adopted.spec.size == 3
        assert adopted.spec.resources.cpu == 0.25
        assert adopted.spec.resources.mem == 256 * MIB
        output: list[bytes] = []
        cmd = ["ssh", "sub2", "hostname"]
        code = await fresh.exec(session.id, "main1", cmd, on_output=lambda s, d: output.append(d))
        assert (code, b"".join(output)) == (0, b"sub2\n")
        assert (await fresh.terminate(session.id)).status is S.TERMINATED
        assert session_objects(session.id) == ([], [])
    finally:
        await fresh.close()


async def test_reconcile_degrades_a_session_whose_container_died(
    ws: Workspace, manager: ClusterManager
) -> None:
    session = await launch(manager, 2)
    sub1 = session.container("sub1")
    assert sub1 is not None and sub1.container_id
    docker("kill", sub1.container_id)
    fresh = await restarted(ws)
    try:
        degraded = await fresh.get(session.id)
        assert degraded.status is S.RUNNING_DEGRADED
        assert "sub1" in degraded.status_reason
        statuses = {c.host: c.status for c in degraded.containers}
        assert statuses == {"main1": ContainerStatus.RUNNING, "sub1": ContainerStatus.EXITED}
        # main1 still works; the session can still be removed completely.
        assert await fresh.exec(session.id, "main1", ["true"]) == 0
        assert (await fresh.terminate(session.id)).status is S.TERMINATED
        assert session_objects(session.id) == ([], [])
    finally:
        await fresh.close()


async def test_log_readers_release_their_docker_connections(manager: ClusterManager) -> None:
    """Regression: following a log and stopping early (as the launcher does at
    "ready") used to keep a connection of aiodocker's pool per container for as
    long as the container ran, until a busy manager hung. Followed logs now use
    the stream pool: it must be given back too."""
    agent = manager.agent("local")
    assert isinstance(agent, DockerAgent)

    def held() -> int:
        """Connections in use in every pool (ordinary calls, streams, users' reads)."""
        conn = agent.connection
        clients = (conn.client, conn.stream_client, conn.user_stream_client)
        return sum(len(c.session.connector._acquired) for c in clients)  # type: ignore[union-attr]

    session = await launch(manager, 3)
    await asyncio.sleep(0.2)
    assert held() == 0
    async for line in manager.logs(session.id, "sub1", follow=True):
        if line.startswith(READY):
            break
    await asyncio.sleep(0.2)
    assert held() == 0
    await manager.terminate(session.id)
