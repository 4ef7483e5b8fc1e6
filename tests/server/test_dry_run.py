"""``POST sessions?dry_run=1`` on a real server: the same checks and refusals as the
launch, then whether it would start now and where, or why it would wait, in the
words the launch then meets; no session, container or network is made.

One small agent (1 CPU): a second session of 1 CPU waits for the first.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.docker import manager_objects

from .support import call, jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker

DRY = {"dry_run": "1"}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ClusterManager": {"agents": [{"id": "small", "cpu": 1, "mem": "2g"}], "max_size": 2},
        "ClusterApp": {"max_sessions_per_user": 2},
    }


@jp_async
async def test_a_dry_run_answers_as_the_launch_would_and_makes_nothing(
    jp_fetch: Any, cluster: Any
) -> None:
    manager_id = cluster.engine.store.manager_id
    body = {"cpu": 0.5, "mem": "256m", "size": 2}
    found = await ok_http(jp_fetch, "sessions", method="POST", body=body, params=DRY)
    assert found == {
        "starts_now": True,
        "placement": {"main1": "small", "sub1": "small"},
        "reason": "",
    }
    assert await ok_http(jp_fetch, "sessions", params={"all": "1"}) == []
    assert manager_objects(manager_id) == ([], [])

    first = await ok_http(jp_fetch, "sessions", method="POST", body=body)
    await wait_status(jp_fetch, first["id"], "RUNNING")
    one = {"cpu": 0.5, "mem": "256m"}
    found = await ok_http(jp_fetch, "sessions", method="POST", body=one, params=DRY)
    assert found["starts_now"] is False and found["placement"] == {}, found
    second = await ok_http(jp_fetch, "sessions", method="POST", body={**one, "name": "two"})
    assert second["status"] == "PENDING"
    assert found["reason"] == second["status_reason"], (found, second)

    for refused, code, field in (
        ({"size": 3}, 400, "size"),  # beyond the site's max_size
        ({"mounts": ["nowhere"]}, 400, "mounts"),
        ({"cpu": "lots"}, 400, "cpu"),
        ({}, 409, None),  # a third session: over max_sessions_per_user
    ):
        status, data, _ = await call(jp_fetch, "sessions", method="POST", body=refused, params=DRY)
        assert status == code and data.get("field") == field, (refused, status, data)
    status, data, _ = await call(
        jp_fetch, "sessions", method="POST", body=one, params={"dry_run": "maybe"}
    )
    assert status == 400 and data["field"] == "dry_run", data
    assert len(await ok_http(jp_fetch, "sessions")) == 2
    for session in (second, first):
        await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
    assert manager_objects(manager_id) == ([], [])
