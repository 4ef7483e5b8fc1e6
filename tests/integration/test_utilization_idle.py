"""The utilization idle clean-up on the real Docker engine (#26 item 4).

Three sessions launched by the CLI (no server, no kernel): one left quiet, one
running a CPU-busy loop started with ``exec`` in the background (the exec itself
has ended), and a batch session whose command (``sleep``) runs. The engine's
upkeep job, as a server or the shared service runs it, with small timeouts: the
quiet one is warned (its status reason, which ``show`` prints), then terminated
with an ``idle:`` reason recorded in the audit log, its containers gone from
Docker; the busy one and the batch one are never warned and keep running.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.store.audit_log import AuditLog
from tests.support.constants import SMALL_FLAGS
from tests.support.docker import session_objects

from .support import Workspace

pytestmark = pytest.mark.docker

BUSY_LOOP = "nohup sh -c 'while :; do :; done' >/dev/null 2>&1 &"


async def test_a_quiet_session_is_warned_then_ended_a_busy_and_a_batch_one_are_kept(
    ws: Workspace,
) -> None:
    quiet = ws.launch(*SMALL_FLAGS, "--name", "quiet")
    busy = ws.launch(*SMALL_FLAGS, "--name", "busy")
    batch = ws.launch(*SMALL_FLAGS, "--name", "job", "--command", "sleep 600")
    ws.sh(busy["id"], "main1", BUSY_LOOP)  # returns at once; the loop runs on

    manager = ws.manager(
        utilization_idle_timeout=6,
        utilization_idle_grace=4,
        utilization_check_interval=1,
        idle_cpu_threshold=5,
    )
    await manager.start()
    watch = manager.utilization
    assert watch in manager.upkeep(lambda: None)
    watch.start()
    seen: dict[str, set[str]] = {s["id"]: set() for s in (quiet, busy, batch)}
    started = time.monotonic()
    try:
        for _ in range(480):  # the job runs on this loop: wait without blocking it
            for sid in seen:
                seen[sid].add(manager.store.require(sid).status_reason)
            ended = manager.store.require(quiet["id"])
            if ended.status is SessionStatus.TERMINATED:
                break
            await asyncio.sleep(0.25)
    finally:
        await watch.stop()
        await manager.close()
    print(f"the quiet session ended {time.monotonic() - started:.1f} s after the watch started")
    assert ended.status is SessionStatus.TERMINATED, ended
    assert ended.status_reason.startswith("idle: CPU below 5% for "), ended.status_reason
    assert ended.status_reason.endswith(", terminated")
    warnings = [r for r in seen[quiet["id"]] if r.startswith("idle: CPU below 5% for 6s;")]
    assert warnings and "terminates in 4s (at " in warnings[0], seen[quiet["id"]]
    for kept in (busy, batch):
        assert not any(r.startswith("idle:") for r in seen[kept["id"]]), seen[kept["id"]]
        assert ws.show(kept["id"])["status"] == "RUNNING"
    assert session_objects(quiet["id"]) == ([], [])  # Docker has nothing of it left
    shown = ws.show(quiet["id"])
    assert (shown["status"], shown["status_reason"]) == ("TERMINATED", ended.status_reason)
    store = ws.store()
    try:
        records = AuditLog(store.tx).read(action="terminate")
    finally:
        store.close()
    assert [(r.session_id, r.details["reason"]) for r in records] == [
        (quiet["id"], ended.status_reason)
    ]
    for kept in (busy, batch):
        ws.ok_cli("rm", kept["id"])
