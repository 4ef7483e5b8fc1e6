"""A resource policy holds kernels started through ``POST /api/kernels`` too: the
server owner's entry allows one session at a time, so while a REST session runs the
provisioner's launch is refused by the store, the reply says why (409 with the
policy's words, not jupyter_server's bare 500) and nothing is created; once an admin
(every client of a single-user server) raises the entry at run time, the same kernel
starts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_cluster.config import local_owner
from tests.support.docker import running_hosts

from .support import call, jp_async, ok_http, wait_status

pytestmark = pytest.mark.docker


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"resource_policies": {"users": {local_owner(): {"sessions": 1}}}}}


@jp_async
async def test_kernels_are_held_to_the_owners_policy(jp_fetch: Any, cluster: Any) -> None:
    owner = local_owner()
    session = await ok_http(jp_fetch, "sessions", method="POST", body={})
    kernel = {"name": "jupyter-cluster-session"}
    code, data, _ = await call(jp_fetch, "kernels", method="POST", body=kernel, base=("api",))
    # refused, with the policy's reason (not jupyter_server's bare 500)
    assert code == 409, data
    assert "has 1 active cluster session(s) and the limit is 1" in data["message"], data
    listed = await ok_http(jp_fetch, "sessions", params={"all": "1"})
    assert [s["id"] for s in listed] == [session["id"]]  # nothing else was created
    assert json.loads((await jp_fetch("api", "kernels")).body) == []

    entry = await ok_http(jp_fetch, "limits", "users", owner, method="PUT", body={"sessions": 2})
    assert entry["effective"]["sessions"] == 2
    started = json.loads(
        (await jp_fetch("api", "kernels", method="POST", body=json.dumps(kernel))).body
    )
    [mine] = [s for s in await ok_http(jp_fetch, "sessions") if s["id"] != session["id"]]
    assert mine["owner"] == owner and mine["status"] == "RUNNING"
    await jp_fetch("api", "kernels", started["id"], method="DELETE")
    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
    for sid in (mine["id"], session["id"]):
        await wait_status(jp_fetch, sid, "TERMINATED")  # removed in the background
        assert running_hosts(sid) == {}
