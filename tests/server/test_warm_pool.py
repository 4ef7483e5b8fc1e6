"""The warm pool in a real server (issue #13, item 5): the server fills it in the
background, a launch through REST with a kernel takes its containers, the kernel and
a terminal see the session's environment, and stopping the pool removes it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_cluster.core.naming import LABEL_MANAGER, LABEL_WARM

from .support import jp_async, kernel_execute, ok_http, terminal_line, wait_kernel

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    pool = [{"cpu": 0.25, "mem": "256m", "size": 2}]  # the tests' default launch options
    return {"ClusterManager": {"warm_pool": pool, "warm_pool_interval": 0.5}}


async def pool_size(cluster: Any, want: int, timeout: float = 60) -> list[Any]:
    """Wait until the pool holds ``want`` ready sets; them."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        ready = cluster.engine.warm.table.ready()
        if len(ready) == want:
            return ready
        assert asyncio.get_running_loop().time() < deadline, f"pool has {len(ready)}"
        await asyncio.sleep(0.2)


@jp_async
async def test_the_server_keeps_a_pool_that_launches_take(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    await cluster.service.ensure_started()
    (ready,) = await pool_size(cluster, 1)
    warm = cluster.engine.warm.table.containers_of(ready.set_id)
    body = {"size": 2, "start_kernel": True}
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    session = await wait_kernel(jp_fetch, sid)
    assert {c["container_id"] for c in session["containers"]} == warm
    await pool_size(cluster, 1)  # refilled in the background

    ws = await jp_ws_fetch("api", "kernels", session["kernel_id"], "channels")
    try:
        code = "import os, socket; print(socket.gethostname(), os.environ['BACKENDAI_SESSION_ID'])"
        assert (await kernel_execute(ws, code)).split() == ["main1", sid]
    finally:
        ws.close()
    term = await ok_http(
        jp_fetch, "sessions", sid, "containers", "main1", "terminals", method="POST", body=""
    )
    tws = await jp_ws_fetch("terminals", "websocket", term["name"])
    try:
        await terminal_line(tws, "echo size=$BACKENDAI_CLUSTER_SIZE", "size=2")
    finally:
        tws.close()
    await jp_fetch("api", "terminals", term["name"], method="DELETE")

    await ok_http(jp_fetch, "sessions", sid, method="DELETE")
    await cluster.service.stop_upkeep()
    assert cluster.engine.warm.table.known() == (set(), set())
    mine = {LABEL_MANAGER: cluster.engine.store.manager_id}
    for agent in cluster.engine.pool.agents.values():
        left = await agent.list_containers(mine)
        assert not [s.name for s in left if LABEL_WARM in s.labels]
        assert not await agent.list_networks({**mine, LABEL_WARM: "network"})
