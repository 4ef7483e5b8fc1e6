"""The adaptive warm pool in a real server: configured with no shape, it keeps a set
of the shape a REST launch just used, the next launch of that shape takes it, and
stopping the server's upkeep leaves no warm container or network behind."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_cluster.core.naming import LABEL_MANAGER, LABEL_WARM

from .support import jp_async, ok_http, wait_status
from .test_warm_pool import pool_size

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterManager": {"warm_pool_adaptive": True, "warm_pool_interval": 0.5}}


@jp_async
async def test_the_server_keeps_warm_the_shape_launched_lately(jp_fetch: Any, cluster: Any) -> None:
    await cluster.service.ensure_started()
    assert cluster.engine.warm.enabled and cluster.engine.warm.table.ready() == []
    body = {"size": 1}
    first = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    cold = await wait_status(jp_fetch, first, "RUNNING")
    (ready,) = await pool_size(cluster, 1)  # the shape just launched, kept warm
    warm = cluster.engine.warm.table.containers_of(ready.set_id)
    assert not warm & {c["container_id"] for c in cold["containers"]}
    second = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    taken = await wait_status(jp_fetch, second, "RUNNING")
    assert {c["container_id"] for c in taken["containers"]} == warm
    for sid in (first, second):
        await ok_http(jp_fetch, "sessions", sid, method="DELETE")
    await cluster.service.stop_upkeep()
    assert cluster.engine.warm.table.known() == (set(), set())
    mine = {LABEL_MANAGER: cluster.engine.store.manager_id}
    for agent in cluster.engine.pool.agents.values():
        left = await agent.list_containers(mine)
        assert not [s.name for s in left if LABEL_WARM in s.labels]
        assert not await agent.list_networks({**mine, LABEL_WARM: "network"})
