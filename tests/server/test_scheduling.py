"""A session waits (PENDING, with its reason) while its agent is full; quotas and names.

One small agent (0.5 CPU): a second session of 0.5 CPU must wait for the first.
DELETE cancels a pending session; nothing of it ever reaches Docker. The server's
scheduling loop (queue ordered by fair share here) starts a waiting session as
soon as the running one ends, and its reason says its place in the queue.
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
        "ClusterManager": {
            "agents": [{"id": "small", "cpu": 0.5, "mem": "2g"}],
            "queue_order": "fair-share",
        },
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


@jp_async
async def test_the_servers_loop_starts_a_waiting_session_when_room_appears(
    jp_fetch: Any, cluster: Any
) -> None:
    first = await ok_http(jp_fetch, "sessions", method="POST", body={"cpu": 0.5, "name": "one"})
    second = await ok_http(jp_fetch, "sessions", method="POST", body={"cpu": 0.5, "name": "two"})
    await wait_status(jp_fetch, first["id"], "RUNNING")
    waiting = await ok_http(jp_fetch, "sessions", second["id"])
    assert waiting["status"] == "PENDING", waiting
    reason = waiting["status_reason"]
    assert reason.startswith("1st in the queue of resource group default (fair share)"), reason
    assert "small has 0 CPU" in reason, reason
    await ok_http(jp_fetch, "sessions", first["id"], method="DELETE")
    started = await wait_status(jp_fetch, second["id"], "RUNNING", timeout=90)
    assert started["status_reason"] == "" and "queue" in started["timings"]
    assert set(running_hosts(second["id"])) == {"main1"}
    await ok_http(jp_fetch, "sessions", second["id"], method="DELETE")
