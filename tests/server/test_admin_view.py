"""Who may use the Lab's admin view (issue 26 item 7): ``GET me`` says, the admin routes check.

Users here stand in for JupyterHub's: each token is one user carrying the Hub's user
model (``admin``, ``groups``), as JupyterHub's identity provider gives it. Alice is a
plain user: ``GET me`` says she is no admin, the audit log, Bob's usage and Bob's
policy entry answer her 403, and she sees only her own sessions. Carol
(``ClusterApp.admin_users``), Dana (in ``ClusterApp.admin_groups``) and Hub admin Erin
are admins. An admin ends Alice's sessions (one running, one waiting) with a reason
and Alice reads that reason on each. On a single-user server every client is the
owner, who administers its own sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from tornado import web

from .support import call, jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker

HUB_USERS: dict[str, dict[str, Any]] = {
    "alice": {"admin": False, "groups": ["students"]},
    "bob": {"admin": False, "groups": []},
    "carol": {"admin": False, "groups": []},
    "dana": {"admin": False, "groups": ["ops"]},
    "erin": {"admin": True, "groups": []},
}


@dataclass
class HubUser(User):
    """A user with the Hub's model, as JupyterHub's identity provider makes them."""

    hub_user: dict[str, Any] = field(default_factory=dict)


class HubTokens(IdentityProvider):
    """The token ``NAME-token`` is the Hub user NAME."""

    def get_user(self, handler: web.RequestHandler) -> User | None:
        token = handler.request.headers.get("Authorization", "").removeprefix("token ")
        name = token.strip().removesuffix("-token")
        if name not in HUB_USERS:
            return None
        handler._token_authenticated = True  # type: ignore[attr-defined]  # no XSRF check
        return HubUser(name, hub_user={"name": name, **HUB_USERS[name]})


def as_user(name: str) -> dict[str, str]:
    return {"Authorization": f"token {name}-token"}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": HubTokens},
        "ClusterApp": {"admin_users": ["carol"], "admin_groups": ["ops"]},
    }


@jp_async
async def test_only_admins_are_told_they_are_and_get_the_admin_routes(
    jp_fetch: Any, cluster: Any
) -> None:
    me = await ok_http(jp_fetch, "me", headers=as_user("alice"))
    assert me == {"name": "alice", "admin": False, "groups": ["students"]}
    for name in ("carol", "dana", "erin"):
        assert (await ok_http(jp_fetch, "me", headers=as_user(name)))["admin"] is True, name
    admin_routes = (("audit", None), ("usage", {"user": "bob"}), ("limits/users/bob", None))
    for path, params in admin_routes:
        code, data, _ = await call(jp_fetch, path, params=params, headers=as_user("alice"))
        assert code == 403, (path, code, data)
        await ok_http(jp_fetch, path, params=params, headers=as_user("carol"))
    code, _, _ = await call(jp_fetch, "me")  # no token: no answer at all
    assert code == 403


@jp_async
async def test_an_admin_ends_a_users_sessions_with_a_reason_the_owner_reads(
    jp_fetch: Any, cluster: Any
) -> None:
    """A running session and one waiting for room (ended while its launch waits)."""
    alice, dana = as_user("alice"), as_user("dana")
    session = await ok_http(jp_fetch, "sessions", method="POST", body={}, headers=alice)
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING", headers=alice)
    [agent] = await ok_http(jp_fetch, "agents", headers=dana)
    cpu = min(agent["capacity"]["cpu"], agent["free"]["cpu"] + 0.25)
    body = {"size": 1, "cpu": round(cpu, 3), "mem": "64m"}
    waiting = await ok_http(jp_fetch, "sessions", method="POST", body=body, headers=alice)
    await wait_status(jp_fetch, waiting["id"], "PENDING", headers=alice)
    assert await ok_http(jp_fetch, "sessions", headers=as_user("bob")) == []
    listed = await ok_http(jp_fetch, "sessions", headers=dana)
    assert [(s["id"], s["owner"]) for s in listed] == [(sid, "alice"), (waiting["id"], "alice")]
    code, _, _ = await call(
        jp_fetch, "sessions", sid, method="DELETE", params={"reason": "x"}, headers=as_user("bob")
    )
    assert code == 404  # a plain user cannot end (or even find) it
    for ref, reason, status in (
        (waiting["id"], "too big for the queue today", "CANCELLED"),
        (sid, "maintenance of the GPU hosts at 14:00", "TERMINATED"),
    ):
        params = {"reason": reason}
        await ok_http(jp_fetch, "sessions", ref, method="DELETE", params=params, headers=dana)
        ended = await wait_status(jp_fetch, ref, status, headers=alice)
        assert ended["status_reason"] == reason, ended


class TestSingleUser:
    """The stock identity provider: the server's owner administers its own server."""

    @pytest.fixture
    def cluster_config(self) -> dict[str, Any]:
        return {}

    @jp_async
    async def test_the_owner_is_an_admin(self, jp_fetch: Any, cluster: Any) -> None:
        me = await ok_http(jp_fetch, "me")
        assert me["admin"] is True
        assert me["name"] and me["groups"] == []
        await ok_http(jp_fetch, "audit")
