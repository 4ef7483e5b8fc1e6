"""The provisioner's own probe of a new kernel is invisible to clients, and a restart
before the kernel first answered leaves nothing of it running.

A local ipykernel's model says ``starting`` right after ``POST /api/kernels`` and
until a client asks the kernel something; a cluster kernel's says the same (its
``kernel_ready`` probe is the heartbeat, which publishes no status on IOPub). A
restart at once cancels the probe (the new kernel gets its own); the restarted
kernel runs code, and shutting it down ends the probe with the session.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.docker import running_hosts

from .support import jp_async, kernel_execute, ok_http, wait_status

pytestmark = pytest.mark.docker


async def created(fetch: Any, name: str) -> dict[str, Any]:
    reply = await fetch("api", "kernels", method="POST", body=json.dumps({"name": name}))
    assert reply.code == 201
    model: dict[str, Any] = json.loads(reply.body)
    return model


@jp_async
async def test_a_new_kernel_says_starting_as_a_local_one_and_restarts_at_once(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    states = {}
    for name in ("python3", "jupyter-cluster-session"):
        model = await created(jp_fetch, name)
        again = json.loads((await jp_fetch("api", "kernels", model["id"])).body)
        states[name] = (model["execution_state"], again["execution_state"])
        if name == "jupyter-cluster-session":
            cluster_id = model["id"]
        else:
            local_id = model["id"]
    assert states["jupyter-cluster-session"] == states["python3"] == ("starting", "starting")

    provisioner = cluster.serverapp.kernel_manager.get_kernel(cluster_id).provisioner
    probe = provisioner._ready_task
    assert probe is not None  # the kernel_ready probe runs in the background
    await jp_fetch("api", "kernels", cluster_id, "restart", method="POST", body="")
    # Not orphaned: cancelled by the restart, unless the kernel answered before it
    # (over SSH the start returns once sshd answers, so the probe may be done already).
    assert probe.done()
    assert provisioner._ready_task is not probe
    ws = await jp_ws_fetch("api", "kernels", cluster_id, "channels")
    try:
        assert (await kernel_execute(ws, "print('after restart')")).strip() == "after restart"
    finally:
        ws.close()

    [session] = await ok_http(jp_fetch, "sessions")
    for kernel_id in (local_id, cluster_id):
        await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    await wait_status(jp_fetch, session["id"], "TERMINATED")
    assert running_hosts(session["id"]) == {}
    assert provisioner._ready_task is None
