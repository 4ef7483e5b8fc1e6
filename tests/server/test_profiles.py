"""Launch profiles over REST on a real server: ``GET launch-options`` lists the site's
profiles (one the limits cannot launch disabled with the reason, a Hub group's one
hidden), and ``POST sessions`` with ``profile`` and an override runs the merged shape
on the real Docker engine."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.docker import running_hosts

from .support import call, jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker

PROFILES = {
    "pair": {
        "description": "two small containers",
        "fields": {"size": 2, "cpu": 0.25, "mem": "256m", "env": {"PROFILE_NAME": "pair"}},
    },
    "huge": {"description": "more than allowed", "fields": {"size": 2, "cpu": 64}},
    "staff": {"groups": ["staff"], "fields": {"size": 1}},
}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"launch_profiles": PROFILES, "max_cpu": 2.0}}


@jp_async
async def test_profiles_are_listed_and_a_launch_by_profile_runs_merged(
    jp_fetch: Any, cluster: Any
) -> None:
    options = await ok_http(jp_fetch, "launch-options")
    listed = {p["name"]: p for p in options["profiles"]}
    assert set(listed) == {"pair", "huge"}  # staff's profile is for that Hub group
    assert listed["pair"]["disabled"] is False and listed["pair"]["fields"]["size"] == 2
    assert listed["huge"]["disabled"] is True
    assert listed["huge"]["reason"] == "cpu: at most 2 CPUs per container, got 64"

    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"profile": "staff"})
    assert code == 400 and data["field"] == "profile", data
    assert "known profiles: pair, huge" in data["message"]
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"profile": "huge"})
    assert code == 400 and data["field"] == "cpu", data

    body = {"profile": "pair", "mem": "320m", "name": "by-profile"}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=body)
    running = await wait_status(jp_fetch, session["id"], "RUNNING", timeout=120)
    assert (running["name"], running["size"]) == ("by-profile", 2)
    assert running["resources"]["cpu"] == 0.25
    assert running["resources"]["mem"] == 320 * 1024 * 1024  # the override won
    assert running["env"] == ["PROFILE_NAME"]
    assert running_hosts(session["id"]) == {"main1": True, "sub1": True}
    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
    await wait_status(jp_fetch, session["id"], "TERMINATED")
    assert running_hosts(session["id"]) == {}
