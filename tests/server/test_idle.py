"""Idle clean-up on a real server (#14 item 5): a session whose kernel stays idle is
terminated after ``ClusterApp.idle_timeout``, saying why; a busy kernel or an open
terminal keeps it; the model shows the deadline meanwhile."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from .support import jp_async, kernel_execute, ok_http, wait_kernel, wait_status

pytestmark = pytest.mark.docker
TIMEOUT = 6.0


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"idle_timeout": TIMEOUT, "idle_check_interval": 0.5}}


@jp_async
async def test_an_idle_session_is_terminated_and_use_keeps_it(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    body = {"size": 2, "start_kernel": True}
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    session = await wait_kernel(jp_fetch, sid)
    deadline = session["idle_deadline"]
    assert deadline is not None and time.time() < deadline <= time.time() + TIMEOUT + 1

    # a cell running longer than the timeout keeps it: the kernel is busy
    ws = await jp_ws_fetch("api", "kernels", session["kernel_id"], "channels")
    try:
        out = await kernel_execute(ws, f"import time; time.sleep({TIMEOUT + 3}); print('done')")
        assert out == "done\n"
    finally:
        ws.close()
    assert (await ok_http(jp_fetch, "sessions", sid))["status"] == "RUNNING"

    # an open terminal into it keeps it too
    term = await ok_http(
        jp_fetch, "sessions", sid, "containers", "sub1", "terminals", method="POST", body=""
    )
    assert (await ok_http(jp_fetch, "sessions", sid))["idle_deadline"] is None
    await asyncio.sleep(TIMEOUT + 2)
    assert (await ok_http(jp_fetch, "sessions", sid))["status"] == "RUNNING"
    await jp_fetch("api", "terminals", term["name"], method="DELETE")

    # left alone, it is terminated, with the reason, and its kernel with it
    ended = await wait_status(jp_fetch, sid, "TERMINATED", timeout=TIMEOUT + 30)
    assert ended["status_reason"].startswith(f"terminated after {TIMEOUT:g} s idle"), ended
    # … and the audit log says the server ended it, and why
    for _ in range(100):  # written by a thread once terminate has returned
        records = await ok_http(jp_fetch, "audit", params={"action": "terminate"})
        if records:
            break
        await asyncio.sleep(0.1)
    [record] = records
    assert (record["actor"], record["front_end"], record["session_id"]) == ("server", "server", sid)
    assert record["details"]["reason"] == ended["status_reason"]
    listed = json.loads((await jp_fetch("api", "kernels")).body)
    assert session["kernel_id"] not in {k["id"] for k in listed}


@jp_async
async def test_a_kernelspecs_idle_kernel_ends_its_session_and_a_busy_one_keeps_it(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    """A kernel started from a cluster kernelspec (the Lab's launcher tiles) launched its
    session itself: its activity counts as a kernel started through REST does."""
    kernel = {"name": "jupyter-cluster-session"}
    kid = json.loads(
        (await jp_fetch("api", "kernels", method="POST", body=json.dumps(kernel))).body
    )["id"]
    [session] = await ok_http(jp_fetch, "sessions")
    deadline = session["idle_deadline"]
    assert deadline is not None and time.time() < deadline <= time.time() + TIMEOUT + 1

    ws = await jp_ws_fetch("api", "kernels", kid, "channels")
    try:
        out = await kernel_execute(ws, f"import time; time.sleep({TIMEOUT + 3}); print('done')")
        assert out == "done\n"
    finally:
        ws.close()
    assert (await ok_http(jp_fetch, "sessions", session["id"]))["status"] == "RUNNING"

    ended = await wait_status(jp_fetch, session["id"], "TERMINATED", timeout=TIMEOUT + 30)
    assert ended["status_reason"].startswith(f"terminated after {TIMEOUT:g} s idle"), ended
    listed = json.loads((await jp_fetch("api", "kernels")).body)
    assert kid not in {k["id"] for k in listed}
