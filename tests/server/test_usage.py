"""``GET cluster/api/usage`` on a server with several users (issue 26 item 5).

Alice runs a session for a few seconds, burns CPU in it and ends it. She sees her
allocated hours (allocation * running time, ended sessions included) and the CPU
time it measurably used; Bob sees none of hers and
gets 403 asking for them; Carol (an admin) sees everyone's and any one user's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .support import call, jp_async, ok_http, wait_status
from .test_owners import ALICE, BOB, CAROL, TokenUsers

pytestmark = pytest.mark.docker
#: Burns 1.5 s of CPU (process time, whatever the container's CPU limit), then ends.
BURN = "import time\nwhile time.process_time() < 1.5:\n    pass\n"


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterApp": {"admin_users": ["carol"]},
    }


@jp_async
async def test_users_see_their_own_usage_and_admins_everyones(jp_fetch: Any, cluster: Any) -> None:
    session = await ok_http(
        jp_fetch,
        "sessions",
        method="POST",
        body={"size": 2, "cpu": 0.5, "mem": "256m"},
        headers=ALICE,
    )
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING", headers=ALICE)
    assert await cluster.engine.exec(sid, "sub1", ["python3", "-c", BURN]) == 0
    await asyncio.sleep(3)
    live = await ok_http(jp_fetch, "usage", headers=ALICE)
    [row] = [r for r in live["sessions"] if r["id"] == sid]
    assert row["status"] == "RUNNING" and row["running_hours"] > 0  # charged until now
    await ok_http(jp_fetch, "sessions", sid, method="DELETE", headers=ALICE)
    await wait_status(jp_fetch, sid, "TERMINATED", headers=ALICE)

    mine = await ok_http(jp_fetch, "usage", headers=ALICE)
    [row] = mine["sessions"]
    assert row["id"] == sid and row["owner"] == "alice" and row["ended_at"]
    seconds = row["running_hours"] * 3600
    timings = (await ok_http(jp_fetch, "sessions", sid, headers=ALICE))["timings"]
    assert "bootstrap" in timings
    assert 3 <= seconds < 120, row
    assert row["cpu_hours"] == pytest.approx(row["running_hours"] * 2 * 0.5, abs=2e-4)
    [alice] = mine["users"]
    assert alice["user"] == "alice" and alice["sessions"] == 1
    assert alice["cpu_hours"] == row["cpu_hours"] and alice["gpu_hours"] == 0
    # measured CPU time, read before the containers were removed, outlives them
    assert 1.0 <= row["cpu_seconds_used"] < 60, row
    assert alice["cpu_seconds_used"] == row["cpu_seconds_used"]
    shown = await ok_http(jp_fetch, "sessions", sid, headers=ALICE)
    used = {c["host"]: c["cpu_seconds"] for c in shown["containers"]}
    assert used["sub1"] >= 1.0 and used["main1"] < used["sub1"], used

    # a period that ended before the session began charges nothing
    early = await ok_http(jp_fetch, "usage", params={"until": "2000-01-01"}, headers=ALICE)
    assert early["users"] == [] and early["sessions"] == []

    assert (await ok_http(jp_fetch, "usage", headers=BOB))["sessions"] == []
    code, data, _ = await call(jp_fetch, "usage", params={"user": "alice"}, headers=BOB)
    assert code == 403, data
    assert (await ok_http(jp_fetch, "usage", params={"user": "bob"}, headers=BOB))["users"] == []

    everyone = await ok_http(jp_fetch, "usage", headers=CAROL)
    assert [u["user"] for u in everyone["users"]] == ["alice"]
    hers = await ok_http(jp_fetch, "usage", params={"user": "alice"}, headers=CAROL)
    assert hers["users"] == mine["users"]
    assert (await ok_http(jp_fetch, "usage", params={"user": "bob"}, headers=CAROL))["users"] == []

    code, data, _ = await call(jp_fetch, "usage", params={"since": "last tuesday"}, headers=ALICE)
    assert code == 400 and data["field"] == "since", data
    backwards = {"since": "2026-02-01", "until": "2026-01-01"}
    code, data, _ = await call(jp_fetch, "usage", params=backwards, headers=ALICE)
    assert code == 400 and data["field"] == "until", data
