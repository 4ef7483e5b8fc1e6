"""A session waits (PENDING, with its reason) while its agent is full; quotas and names.

One small agent (0.5 CPU): a second session of 0.5 CPU must wait for the first.
DELETE cancels a pending session; nothing of it ever reaches Docker.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.docker import manager_objects, running_hosts

from .support import call, jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ClusterManager": {"agents": [{"id": "small", "cpu": 0.5, "mem": "2g"}]},
        "ClusterApp": {"max_sessions_per_user": 2},
    }


@jp_async
async def test_pending_quota_names_and_cancel(jp_fetch: Any, cluster: Any) -> None:
    first = await ok_http(jp_fetch, "sessions", method="POST", body={"cpu": 0.5, "name": "big"})
    await wait_status(jp_fetch, first["id"], "RUNNING")
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"name": "big"})
    assert code == 409 and "big" in data["message"]

    second = await ok_http(jp_fetch, "sessions", method="POST", body={"cpu": 0.5, "name": "waits"})
    pending = await wait_status(jp_fetch, second["id"], "PENDING")
    assert pending["status_reason"]  # says why it waits
    code, data, _ = await call(
        jp_fetch, "sessions", second["id"], "containers", "main1", "terminals", method="POST"
    )
    # the session exists and has a main1, but no container to open a terminal in yet
    assert code == 409 and "PENDING" in data["message"], data
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"name": "third"})
    assert code == 409 and "limit" in data["message"], data

    await ok_http(jp_fetch, "sessions", second["id"], method="DELETE")
    assert (await ok_http(jp_fetch, "sessions", second["id"]))["status"] == "CANCELLED"
    assert running_hosts(second["id"]) == {}
    await ok_http(jp_fetch, "sessions", first["id"], method="DELETE")
    assert manager_objects(cluster.engine.store.manager_id) == ([], [])
