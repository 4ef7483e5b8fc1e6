"""Sessions belong to their owner on a server with several users (security review A1).

An identity provider that names one user per token stands in for JupyterHub's
many users of one server. Alice launches; from Bob's side, her session is not
listed, not found by id, its logs and terminals are refused, DELETE changes
nothing, and the events stream never carries it, while Alice sees all of that
for herself and Carol (in ``ClusterApp.admin_users``) sees and ends it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from tornado import web

from .support import EventStream, call, jp_async, ok_http, stream_url, wait_status

pytestmark = pytest.mark.docker


class TokenUsers(IdentityProvider):
    """Each of a few fixed tokens is one user."""

    users = {"alice-token": "alice", "bob-token": "bob", "carol-token": "carol"}

    def get_user(self, handler: web.RequestHandler) -> User | None:
        token = handler.request.headers.get("Authorization", "").removeprefix("token ")
        name = self.users.get(token.strip())
        if not name:
            return None
        handler._token_authenticated = True  # type: ignore[attr-defined]  # no XSRF check
        return User(name)


ALICE = {"Authorization": "token alice-token"}
BOB = {"Authorization": "token bob-token"}
CAROL = {"Authorization": "token carol-token"}


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ServerApp": {"identity_provider_class": TokenUsers},
        "ClusterApp": {"admin_users": ["carol"]},
    }


@jp_async
async def test_users_see_and_act_on_only_their_own_sessions(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, cluster: Any
) -> None:
    events = stream_url(jp_http_port, jp_base_url, "cluster", "api", "events")
    async with EventStream(events, BOB) as bobs, EventStream(events, ALICE) as alices:
        session = await ok_http(jp_fetch, "sessions", method="POST", body={}, headers=ALICE)
        sid = session["id"]
        assert session["owner"] == "alice"
        await alices.session(sid, "RUNNING", timeout=60)

        assert await ok_http(jp_fetch, "sessions", headers=BOB) == []
        assert await ok_http(jp_fetch, "sessions", params={"all": "1"}, headers=BOB) == []
        for path, method in (
            (("sessions", sid), "GET"),
            (("sessions", sid[:8]), "GET"),
            (("sessions", sid, "containers", "main1", "logs"), "GET"),
            (("sessions", sid, "containers", "main1", "terminals"), "POST"),
            (("sessions", sid), "DELETE"),
        ):
            code, data, _ = await call(jp_fetch, *path, method=method, headers=BOB)
            assert code == 404, (path, method, code, data)
        assert (await ok_http(jp_fetch, "sessions", sid, headers=ALICE))["status"] == "RUNNING"
        await asyncio.sleep(1)  # time for any stray event to reach Bob
        seen_by_bob = [data for name, data in bobs.events if name != "snapshot"]
        assert all(event.get("session_id") != sid for event in seen_by_bob), seen_by_bob

        [listed] = await ok_http(jp_fetch, "sessions", headers=CAROL)  # the admin sees it
        assert listed["id"] == sid
        await ok_http(jp_fetch, "sessions", sid, method="DELETE", headers=CAROL)
        await wait_status(jp_fetch, sid, "TERMINATED", headers=ALICE)
        await alices.session(sid, "TERMINATED")
    assert all(event.get("session_id") != sid for _, event in bobs.events)


@jp_async
async def test_only_the_owner_gets_the_keys_and_they_reach_every_container(
    jp_fetch: Any, cluster: Any
) -> None:
    """``GET sessions/{id}/access`` (team mode's way into the containers): Alice gets
    main1's SSH endpoint and her keys (no host's private key) and runs commands in
    main1 and sub1 with them; Bob gets 404 and the admin 403."""
    from jupyter_cluster.client.shell import ContainerShell
    from jupyter_cluster.core.access import Access

    body = {"size": 2}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=body, headers=ALICE)
    sid = session["id"]
    await wait_status(jp_fetch, sid, "RUNNING", headers=ALICE)
    assert (await call(jp_fetch, "sessions", sid, "access", headers=BOB))[0] == 404
    code, data, _ = await call(jp_fetch, "sessions", sid, "access", headers=CAROL)
    assert code == 403, data
    reply = await ok_http(jp_fetch, "sessions", sid, "access", headers=ALICE)
    assert set(reply["keys"]) == {"user", "user.pub", "host:main1.pub", "host:sub1.pub"}
    shell = ContainerShell(Access.from_dict(reply))
    out: list[bytes] = []
    try:
        for host in ("main1", "sub1"):
            code = await shell.run(
                host, ["sh", "-c", "hostname; id -un"], on_output=lambda _, d: out.append(d)
            )
            assert code == 0
        assert b"".join(out).decode().split() == ["main1", "work", "sub1", "work"]
        # the cluster environment reaches commands run over SSH, as `ssh sub1` has it
        env: list[bytes] = []
        await shell.run(
            "sub1",
            ["sh", "-c", "echo $BACKENDAI_CLUSTER_HOST"],
            on_output=lambda _, d: env.append(d),
        )
        assert b"".join(env).strip() == b"sub1"
        # a variable given to a command (the kernel's key, in team mode) is in its
        # environment and on no command line, which every host user can read in /proc
        secret = "s3cret 'quoted' $value"
        seen: list[bytes] = []
        script = 'echo "$JC_SECRET"; cat /proc/[0-9]*/cmdline | tr "\\0" " "'
        code = await shell.run(
            "main1",
            ["sh", "-c", script],
            env={"JC_SECRET": secret},
            on_output=lambda _, d: seen.append(d),
        )
        said = b"".join(seen).decode()
        assert code == 0 and said.splitlines()[0] == secret, said
        assert said.count("s3cret") == 1, said
    finally:
        await shell.close()
    await ok_http(jp_fetch, "sessions", sid, method="DELETE", headers=ALICE)
    code, data, _ = await call(jp_fetch, "sessions", sid, "access", headers=ALICE)
    assert code in (404, 409), data  # an ended session has no way in
