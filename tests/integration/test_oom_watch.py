"""An out-of-memory kill inside a container that runs on, against real Docker (#14 item 2).

Containers run with an init process, so the kernel's OOM killer ends the process that
outgrew the limit (here a command exec'd in sub1) and the container keeps running:
Docker's state never says OOMKilled. The OOM watch follows Docker's events and records
the kill on sub1 (count, time, reason), which ``jupyter cluster show`` prints; main1
is untouched and the session stays RUNNING.
"""

from __future__ import annotations

import time

import pytest

from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.oom_watch import OomWatch
from tests.support.docker import inspect
from tests.support.waiting import eventually

from .support import Workspace

pytestmark = pytest.mark.docker
GROW = "a = bytearray(1024 * 2**20)"  # 1 GiB, in a container limited to 256m


async def test_an_oom_kill_in_sub1_is_recorded_and_shown(ws: Workspace) -> None:
    manager = ws.manager()
    watch = OomWatch(manager.store, manager.pool.agents)
    session = await manager.launch(manager.make_spec(size=2, cpu=0.25, mem="256m"))
    try:
        watch.start()
        began = time.time()
        code = await manager.exec(session.id, "sub1", ["python3", "-c", GROW])
        assert code == 137  # SIGKILL, from the OOM killer

        async def recorded() -> object:
            sub1 = (await manager.get(session.id)).locate("sub1")
            return sub1 if sub1.oom_kills else None

        sub1 = await eventually(recorded, 30, "the OOM kill recorded on sub1")
        assert sub1.oom_kills == 1
        assert sub1.oom_killed_at is not None and began - 2 <= sub1.oom_killed_at <= time.time()
        assert sub1.status is ContainerStatus.RUNNING
        assert sub1.status_reason.startswith("a process was killed by the out-of-memory killer")
        assert "memory limit (256m)" in sub1.status_reason
        after = await manager.get(session.id)
        main1 = after.locate("main1")
        assert (main1.oom_kills, main1.status_reason) == (0, "")
        assert after.status is SessionStatus.RUNNING
        # Docker itself: sub1 still runs, and its state does not call it OOM-killed.
        state = inspect(sub1.container_id or "")[0]["State"]
        assert state["Running"] is True and state["OOMKilled"] is False

        shown = ws.ok_cli("show", session.id).stdout
        assert f"sub1: {sub1.status_reason}" in shown, shown
        assert "main1:" not in shown
    finally:
        await watch.stop()
        await manager.terminate(session.id)
        await manager.close()
