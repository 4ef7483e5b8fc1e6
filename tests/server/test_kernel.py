"""``start_kernel``: the server's kernel manager runs the session's kernel in main1.

The kernel is an ordinary kernel of the server (``/api/kernels/{id}``, its
channels websocket), started through a ClusterProvisioner attached to the
session. Ending the session, through REST or elsewhere (the CLI), shuts it down.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from tests.support.constants import CLI
from tests.support.docker import running_hosts
from tests.support.waiting import eventually

from .support import jp_async, kernel_execute, ok_http, wait_kernel, wait_status

pytestmark = pytest.mark.docker
CODE = "import os, socket; print(socket.gethostname(), os.environ['BACKENDAI_CLUSTER_SIZE'])"


async def kernel_known(fetch: Any, kernel_id: str) -> bool:
    try:
        await fetch("api", "kernels", kernel_id)
        return True
    except HTTPClientError as exc:
        assert exc.code == 404
        return False


@jp_async
async def test_start_kernel_runs_in_main1_and_delete_shuts_it_down(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    code_body = {"size": 2, "start_kernel": True}
    session = await ok_http(jp_fetch, "sessions", method="POST", body=code_body)
    sid, kid = session["id"], session["kernel_id"]
    assert kid and session["kernel_state"] == "waiting"
    await wait_kernel(jp_fetch, sid)
    model = json.loads((await jp_fetch("api", "kernels", kid)).body)
    assert model["id"] == kid and model["name"] == "jupyter-cluster-session"

    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        assert (await kernel_execute(ws, CODE)).split() == ["main1", "2"]
    finally:
        ws.close()

    # A restart replaces the kernel process in the same session.
    await jp_fetch("api", "kernels", kid, "restart", method="POST", body="")
    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        assert (await kernel_execute(ws, CODE)).split() == ["main1", "2"]
    finally:
        ws.close()
    assert (await ok_http(jp_fetch, "sessions", sid))["status"] == "RUNNING"

    await ok_http(jp_fetch, "sessions", sid, method="DELETE")
    assert not await kernel_known(jp_fetch, kid)
    ended = await ok_http(jp_fetch, "sessions", sid)
    assert ended["status"] == "TERMINATED" and ended["kernel_state"] == "gone"
    assert running_hosts(sid) == {}


@jp_async
async def test_a_session_ended_elsewhere_takes_its_kernel_along(
    jp_fetch: Any, cluster: Any
) -> None:
    session = await ok_http(jp_fetch, "sessions", method="POST", body={"start_kernel": True})
    sid, kid = session["id"], session["kernel_id"]
    await wait_kernel(jp_fetch, sid)
    proc = await asyncio.create_subprocess_exec(*CLI, "rm", sid, env=dict(os.environ))
    assert await asyncio.wait_for(proc.wait(), 120) == 0
    await wait_status(jp_fetch, sid, "TERMINATED")

    async def gone() -> bool:
        return not await kernel_known(jp_fetch, kid)

    await eventually(gone, 30, "the kernel to be shut down")
    assert (await ok_http(jp_fetch, "sessions", sid))["kernel_state"] == "gone"


@jp_async
async def test_deleting_a_kernel_returns_once_it_ended_and_its_session_follows(
    jp_fetch: Any, cluster: Any
) -> None:
    """In a server, shutdown_kernel does not wait for Docker to remove the containers:
    the session is TERMINATING when it returns and TERMINATED soon after, nothing left."""
    kernel = {"name": "jupyter-cluster-session"}
    started = json.loads(
        (await jp_fetch("api", "kernels", method="POST", body=json.dumps(kernel))).body
    )
    km = cluster.serverapp.kernel_manager.get_kernel(started["id"])
    assert km.provisioner.end_session_in_background is True
    [session] = await ok_http(jp_fetch, "sessions")
    await jp_fetch("api", "kernels", started["id"], method="DELETE")
    assert not await kernel_known(jp_fetch, started["id"])
    now = await ok_http(jp_fetch, "sessions", session["id"])
    assert now["status"] in ("TERMINATING", "TERMINATED"), now
    await wait_status(jp_fetch, session["id"], "TERMINATED")
    assert running_hosts(session["id"]) == {}


@jp_async
async def test_a_kernelspecs_session_names_its_kernel_and_ends_it_when_terminated(
    jp_fetch: Any, cluster: Any
) -> None:
    """A kernel started from a cluster kernelspec (as the Lab's launcher does) launched
    its session itself, under an id jupyter_server chose: the session's model names
    that kernel, which the Lab's notebook toolbar and sidebar find it by, and
    terminating the session here shuts the kernel down first and keeps the reason."""
    kernel = {"name": "jupyter-cluster-session"}
    started = json.loads(
        (await jp_fetch("api", "kernels", method="POST", body=json.dumps(kernel))).body
    )
    kid = started["id"]
    [session] = await ok_http(jp_fetch, "sessions")
    assert session["id"] != kid
    assert session["kernel_id"] == kid and session["kernel_state"] == "running", session
    assert (await ok_http(jp_fetch, "sessions", session["id"]))["kernel_id"] == kid
    # A restart keeps the kernel's id and its session: the session still names it.
    await jp_fetch("api", "kernels", kid, "restart", method="POST", body="")
    restarted = await ok_http(jp_fetch, "sessions", session["id"])
    assert restarted["kernel_id"] == kid and restarted["kernel_state"] == "running", restarted

    reason = "the test is over"
    await ok_http(jp_fetch, "sessions", session["id"], method="DELETE", params={"reason": reason})
    assert not await kernel_known(jp_fetch, kid)
    ended = await ok_http(jp_fetch, "sessions", session["id"])
    assert ended["status"] == "TERMINATED", ended
    assert reason in ended["status_reason"], ended
    assert running_hosts(session["id"]) == {}
