"""The utilization idle clean-up in a real server (#26 item 4): the server runs the
engine's job and tells it of its kernels and terminals, so a kernel busy in a cell
that uses no CPU (``time.sleep``) keeps its session, and so does a terminal open
into a session without a kernel; left alone, the kernel's session is warned (its
status reason), then terminated with an ``idle:`` reason, its kernel shut down and
the end in the audit log."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from .support import call, jp_async, kernel_execute, ok_http, wait_kernel, wait_status

pytestmark = pytest.mark.docker
TIMEOUT, GRACE = 5.0, 3.0


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {
        "ClusterManager": {
            "utilization_idle_timeout": TIMEOUT,
            "utilization_idle_grace": GRACE,
            "utilization_check_interval": 0.5,
        }
    }


async def reasons_until_ended(fetch: Any, sid: str, timeout: float) -> tuple[Any, list[str]]:
    """GET the session until it has ended; it, and every status reason seen."""
    seen: list[str] = []
    for _ in range(int(timeout / 0.25)):
        session = await ok_http(fetch, "sessions", sid)
        if session["status_reason"] not in seen:
            seen.append(session["status_reason"])
        if session["status"] in ("TERMINATED", "ERROR"):
            return session, seen
        await asyncio.sleep(0.25)
    raise AssertionError(f"session {sid} still {session['status']}; reasons seen: {seen}")


@jp_async
async def test_a_busy_kernel_keeps_a_quiet_session_then_idle_ends_it(
    jp_fetch: Any, jp_ws_fetch: Any, cluster: Any
) -> None:
    body = {"start_kernel": True}
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    assert cluster.engine.utilization in cluster.service.upkeep  # started with the server
    by_terminal = (await ok_http(jp_fetch, "sessions", method="POST", body={}))["id"]
    await wait_status(jp_fetch, by_terminal, "RUNNING")
    term = await ok_http(
        jp_fetch, "sessions", by_terminal, "containers", "main1", "terminals", method="POST"
    )
    session = await wait_kernel(jp_fetch, sid)

    # a cell sleeping longer than timeout and grace: no CPU, but the kernel is busy
    ws = await jp_ws_fetch("api", "kernels", session["kernel_id"], "channels")
    try:
        code = f"import time; time.sleep({TIMEOUT + GRACE + 3}); print('done')"
        assert await kernel_execute(ws, code) == "done\n"
    finally:
        ws.close()
    now = await ok_http(jp_fetch, "sessions", sid)
    assert now["status"] == "RUNNING" and not now["status_reason"].startswith("idle:"), now

    ended, seen = await reasons_until_ended(jp_fetch, sid, timeout=TIMEOUT + GRACE + 60)
    assert ended["status"] == "TERMINATED", ended
    assert ended["status_reason"].startswith("idle: CPU below 5% for "), ended
    assert any(r.startswith("idle: CPU below 5% for 5s; terminates in 3s") for r in seen), seen
    for _ in range(100):  # the kernel is shut down once the server sees the end
        listed = json.loads((await jp_fetch("api", "kernels")).body)
        if session["kernel_id"] not in {k["id"] for k in listed}:
            break
        await asyncio.sleep(0.1)
    assert session["kernel_id"] not in {k["id"] for k in listed}
    records = await ok_http(jp_fetch, "audit", params={"action": "terminate"})
    assert [(r["session_id"], r["details"]["reason"]) for r in records] == [
        (sid, ended["status_reason"])
    ]
    kept = await ok_http(jp_fetch, "sessions", by_terminal)  # its terminal is open
    assert kept["status"] == "RUNNING" and not kept["status_reason"].startswith("idle:"), kept
    await jp_fetch("api", "terminals", term["name"], method="DELETE")
    await call(jp_fetch, "sessions", by_terminal, method="DELETE")
    await wait_status(jp_fetch, by_terminal, "TERMINATED")
