"""Users' log streams never starve a launch (security review X8), against real Docker.

Every followed log holds a Docker connection for as long as it is open. Users' reads
(REST, CLI, notebooks: :meth:`ClusterManager.logs`) now come from a pool of their own,
so while they fill theirs, a launch still follows its containers' start-up from the
engine's. Before, both shared one pool: the launch waited for a free connection and
failed after the connect timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.docker.agent import DockerAgent
from jupyter_cluster.engine.manager import ClusterManager
from tests.support.waiting import eventually

from .support import Workspace

pytestmark = pytest.mark.docker


@pytest.fixture
async def manager(ws: Workspace) -> AsyncIterator[ClusterManager]:
    """A started manager on the workspace's store, closed after the test."""
    m = ws.manager()
    await m.start()
    yield m
    await m.close()


async def test_a_launch_runs_while_users_hold_a_whole_pool_of_log_streams(
    manager: ClusterManager,
) -> None:
    agent = manager.agent("local")
    assert isinstance(agent, DockerAgent)
    connector = agent.connection.user_stream_client.session.connector
    assert connector is not None
    watched = await manager.launch(manager.make_spec(cpu=0.25, mem="256m", name=None))

    async def follow() -> None:
        async for _ in manager.logs(watched.id, "main1", follow=True):
            pass

    followers = [asyncio.ensure_future(follow()) for _ in range(connector.limit)]
    try:

        async def pool_full() -> bool:
            return len(connector._acquired) == connector.limit  # type: ignore[attr-defined]

        await eventually(
            pool_full,
            30,
            "users' log streams to fill their pool",
        )
        spec = manager.make_spec(size=2, cpu=0.25, mem="256m", name=None)
        launched = await asyncio.wait_for(manager.launch(spec), 120)
        assert launched.status is SessionStatus.RUNNING, launched.reason
        assert all(not f.done() for f in followers)  # every stream was still open
        await manager.terminate(launched.id)
    finally:
        for task in followers:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*followers, return_exceptions=True)
        await manager.terminate(watched.id)
