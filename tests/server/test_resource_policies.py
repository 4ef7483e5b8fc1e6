"""Resource policies (issue 26 item 1) on a server with several users and Hub groups.

Alice has her own entry (one session at a time, idle sessions end after 30m: the
engine's idle clean-up is given the policies' timeouts); Bob is in the Hub group ``small``
(half a CPU per container). Each sees their own limits (``GET limits``, the launch
form's maxima) and REST launches are held to them. Bob cannot change limits (403);
Carol, an admin, raises Bob's at run time, which applies to his next launch, is
recorded in the audit log, and is dropped again.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from tornado import web

from .support import call, jp_async, ok_http

pytestmark = pytest.mark.docker


class HubUser(User):
    """A user with the groups JupyterHub would give (what ``user_groups`` reads)."""

    hub_user: dict[str, Any]


class HubUsers(IdentityProvider):
    """Each of a few fixed tokens is one user, Bob in the Hub group ``small``."""

    users = {"alice-token": "alice", "bob-token": "bob", "carol-token": "carol"}
    groups = {"bob": ["small"]}

    def get_user(self, handler: web.RequestHandler) -> User | None:
        token = handler.request.headers.get("Authorization", "").removeprefix("token ")
        name = self.users.get(token.strip())
        if not name:
            return None
        handler._token_authenticated = True  # type: ignore[attr-defined]  # no XSRF check
        user = HubUser(name)
        user.hub_user = {"name": name, "groups": self.groups.get(name, [])}
        return user


ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}
CAROL = {"Authorization": "token carol-token"}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": HubUsers},
        "ClusterApp": {
            "admin_users": ["carol"],
            "resource_policies": {
                "default": {"sessions": 4},
                "users": {"alice": {"sessions": 1, "idle_timeout": "30m"}},
                "groups": {"small": {"max_cpu": 0.5}},
            },
        },
    }


async def audit_until(jp_fetch: Any, count: int) -> list[dict[str, Any]]:
    """The policy records of the audit log once there are ``count`` (written by a thread)."""
    records: list[dict[str, Any]] = []
    for _ in range(100):
        records = await ok_http(jp_fetch, "audit", headers=CAROL)
        records = [r for r in records if r["action"].startswith("policy")]
        if len(records) >= count:
            return records
        await asyncio.sleep(0.1)
    raise AssertionError(f"the audit log has {records}, not {count} policy records")


@jp_async
async def test_each_user_sees_and_is_held_to_their_policy(jp_fetch: Any, cluster: Any) -> None:
    mine = await ok_http(jp_fetch, "limits", headers=ALICE)
    assert mine["source"] == "user alice" and mine["limits"]["sessions"] == 1
    assert mine["held"]["sessions"] == 0 and mine["limits"]["idle_timeout"] == "30m"
    idle_for = cluster.engine.utilization_idle_timeout_for  # the engine's idle clean-up
    assert idle_for("alice") == 1800 and idle_for("carol") is None
    bobs = await ok_http(jp_fetch, "limits", headers=BOB)
    assert bobs["source"] == "groups small" and bobs["limits"]["max_cpu"] == 0.5
    assert bobs["limits"]["sessions"] == 4 and bobs["groups"] == ["small"]
    form = await ok_http(jp_fetch, "launch-options", headers=BOB)
    assert form["limits"]["max_cpu"] == 0.5

    first = await ok_http(jp_fetch, "sessions", method="POST", body={}, headers=ALICE)
    assert (await ok_http(jp_fetch, "limits", headers=ALICE))["held"]["sessions"] == 1
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={}, headers=ALICE)
    assert code == 409 and "limit is 1" in data["message"], data
    await ok_http(jp_fetch, "sessions", first["id"], method="DELETE", headers=ALICE)

    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={"cpu": 1}, headers=BOB)
    assert code == 400 and data["field"] == "cpu" and "at most 0.5" in data["message"], data
    assert [s for s in await ok_http(jp_fetch, "sessions", headers=BOB)] == []


@jp_async
async def test_only_admins_change_limits_and_each_change_is_audited(
    jp_fetch: Any, cluster: Any
) -> None:
    raise_bob = {"max_cpu": 1}
    for method, body in (("GET", None), ("PUT", raise_bob), ("DELETE", None)):
        code, data, _ = await call(
            jp_fetch, "limits", "users", "bob", method=method, body=body, headers=BOB
        )
        assert code == 403, (method, code, data)
    code, data, _ = await call(
        jp_fetch, "limits", "users", "bob", method="PUT", body={"max_cpu": "lots"}, headers=CAROL
    )
    assert code == 400 and data["field"] == "max_cpu", data

    entry = await ok_http(
        jp_fetch, "limits", "users", "bob", method="PUT", body=raise_bob, headers=CAROL
    )
    assert entry["changed"] == raise_bob and entry["effective"]["max_cpu"] == 1
    bobs = await ok_http(jp_fetch, "limits", headers=BOB)
    assert bobs["source"] == "user bob" and bobs["limits"]["max_cpu"] == 1
    session = await ok_http(jp_fetch, "sessions", method="POST", body={"cpu": 1}, headers=BOB)
    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE", headers=BOB)
    code, data, _ = await call(jp_fetch, "limits", "people", "bob", headers=CAROL)
    assert code == 404 and "limits/users/NAME" in data["message"], data
    group = await ok_http(jp_fetch, "limits", "groups", "small", headers=CAROL)
    assert group["configured"] == {"max_cpu": 0.5} and group["changed"] is None

    await ok_http(jp_fetch, "limits", "users", "bob", method="DELETE", headers=CAROL)
    code, _, _ = await call(jp_fetch, "limits", "users", "bob", method="DELETE", headers=CAROL)
    assert code == 404  # nothing left to drop
    assert (await ok_http(jp_fetch, "limits", headers=BOB))["limits"]["max_cpu"] == 0.5

    records = await audit_until(jp_fetch, 2)
    seen = [(r["action"], r["actor"], r["target_owner"], r["details"]) for r in records]
    assert seen == [
        ("policy_set", "carol", "bob", {"kind": "users", "name": "bob", "limits": raise_bob}),
        ("policy_remove", "carol", "bob", {"kind": "users", "name": "bob"}),
    ]
    code, _, _ = await call(jp_fetch, "audit", headers=BOB)
    assert code == 403
