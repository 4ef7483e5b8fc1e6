"""Users' own launch profiles over REST on a server with several users: each user
saves, lists and deletes only their own (another's is not even found), and
``GET launch-options`` lists a user's own beside the site's, checked against their
limits."""

from __future__ import annotations

from typing import Any

import pytest

from .support import call, jp_async, ok_http
from .test_owners import ALICE, BOB, TokenUsers

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterApp": {"launch_profiles": {"small": {"fields": {"size": 1}}}, "max_cpu": 2.0},
    }


@jp_async
async def test_users_keep_their_own_profiles(jp_fetch: Any, cluster: Any) -> None:
    body = {"description": "two of them", "fields": {"size": 2, "cpu": 0.25}}
    saved = await ok_http(jp_fetch, "profiles", "pair", method="PUT", body=body, headers=ALICE)
    assert saved == {"name": "pair", "groups": [], **body}
    too_big = {"fields": {"cpu": 8}}
    await ok_http(jp_fetch, "profiles", "fat", method="PUT", body=too_big, headers=ALICE)

    assert [p["name"] for p in await ok_http(jp_fetch, "profiles", headers=ALICE)] == [
        "fat",
        "pair",
    ]
    assert await ok_http(jp_fetch, "profiles", headers=BOB) == []
    code, data, _ = await call(jp_fetch, "profiles", "pair", method="DELETE", headers=BOB)
    assert code == 404, data
    code, data, _ = await call(
        jp_fetch, "sessions", method="POST", body={"profile": "pair"}, headers=BOB
    )
    assert code == 400 and data["field"] == "profile" and "known profiles: small" in data["message"]

    options = await ok_http(jp_fetch, "launch-options", headers=ALICE)
    listed = {p["name"]: p for p in options["profiles"]}
    assert {n: p["scope"] for n, p in listed.items()} == {
        "small": "site",
        "fat": "user",
        "pair": "user",
    }
    assert listed["pair"]["disabled"] is False
    assert listed["fat"]["reason"] == "cpu: at most 2 CPUs per container, got 8"
    bobs = await ok_http(jp_fetch, "launch-options", headers=BOB)
    assert [p["name"] for p in bobs["profiles"]] == ["small"]

    code, data, _ = await call(
        jp_fetch, "profiles", "x", method="PUT", body={"fields": {"sizes": 2}}, headers=ALICE
    )
    assert code == 400 and "'sizes' is not a launch field" in data["message"], data
    code, data, _ = await call(
        jp_fetch, "profiles", "x", method="PUT", body={"groups": ["a"]}, headers=ALICE
    )
    assert code == 400 and data["field"] == "groups", data
    code, data, _ = await call(  # over no limit at all, unlike "fat": never launchable
        jp_fetch, "profiles", "x", method="PUT", body={"fields": {"cpu": -1}}, headers=ALICE
    )
    assert code == 400 and data["field"] == "cpu" and data["message"].startswith("profile x: ")

    await ok_http(jp_fetch, "profiles", "pair", method="DELETE", headers=ALICE)
    await ok_http(jp_fetch, "profiles", "fat", method="DELETE", headers=ALICE)
    assert await ok_http(jp_fetch, "profiles", headers=ALICE) == []
