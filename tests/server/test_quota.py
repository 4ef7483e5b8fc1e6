"""The per-user session limit counts every path into the engine (security review A4):
a kernel started through ``POST /api/kernels`` with a cluster kernelspec is a
session of the same owner as one launched over REST, so with
``max_sessions_per_user = 1`` the kernel is refused while the REST session runs,
nothing is created, and it starts once that session has ended."""

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
    return {"ClusterApp": {"max_sessions_per_user": 1}}


@jp_async
async def test_kernels_count_against_the_session_limit(jp_fetch: Any, cluster: Any) -> None:
    session = await ok_http(jp_fetch, "sessions", method="POST", body={})
    assert session["owner"] == local_owner()
    code, data, _ = await call(jp_fetch, "sessions", method="POST", body={})
    assert code == 409 and "limit is 1" in data["message"], data

    kernel = {"name": "jupyter-cluster-session"}
    code, data, _ = await call(jp_fetch, "kernels", method="POST", body=kernel, base=("api",))
    assert code == 409, data  # the provisioner was refused, and the reply says why
    assert "the limit is 1" in data["message"], data
    listed = await ok_http(jp_fetch, "sessions", params={"all": "1"})
    assert [s["id"] for s in listed] == [session["id"]]  # nothing else was created
    assert json.loads((await jp_fetch("api", "kernels")).body) == []

    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE")
    started = json.loads(
        (await jp_fetch("api", "kernels", method="POST", body=json.dumps(kernel))).body
    )
    [mine] = await ok_http(jp_fetch, "sessions")
    assert mine["owner"] == local_owner() and mine["status"] == "RUNNING"
    await jp_fetch("api", "kernels", started["id"], method="DELETE")
    await wait_status(jp_fetch, mine["id"], "TERMINATED")  # removed in the background
    assert running_hosts(mine["id"]) == {}
