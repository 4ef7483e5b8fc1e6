"""Idle clean-up counts execs of any process (#14 item 5): a command run in a session's
containers from a separate CLI process (``exec --all``) keeps the session past the
deadline its idle kernel alone would have given it, and the deadline then counts
from the exec's end."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from tests.support.constants import CLI
from tests.support.waiting import eventually

from .support import jp_async, ok_http, wait_kernel, wait_status

pytestmark = pytest.mark.docker
TIMEOUT = 12.0


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ClusterApp": {"idle_timeout": TIMEOUT, "idle_check_interval": 0.5}}


@jp_async
async def test_an_exec_from_another_process_keeps_the_session(jp_fetch: Any, cluster: Any) -> None:
    body = {"size": 2, "start_kernel": True}
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body=body))["id"]
    first = (await wait_kernel(jp_fetch, sid))["idle_deadline"]
    assert first is not None and first <= time.time() + TIMEOUT + 1

    # a CLI process runs a command in every container for longer than that deadline
    command = (*CLI, "exec", sid, "--all", "--", "sleep", f"{TIMEOUT + 4:g}")
    proc = await asyncio.create_subprocess_exec(
        *command,
        env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:

        async def in_use() -> bool:
            return (await ok_http(jp_fetch, "sessions", sid))["idle_deadline"] is None

        await eventually(in_use, TIMEOUT, "the exec to count as use")
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    ended = time.time()
    assert ended > first + 2  # past the deadline the idle kernel alone gave it

    session = await ok_http(jp_fetch, "sessions", sid)
    assert session["status"] == "RUNNING", session
    deadline = session["idle_deadline"]  # now counted from the exec's end
    assert deadline is not None and ended - 3 + TIMEOUT <= deadline <= ended + TIMEOUT, session
    await asyncio.sleep(max(deadline - time.time() - 3, 0))
    assert (await ok_http(jp_fetch, "sessions", sid))["status"] == "RUNNING"

    gone = await wait_status(jp_fetch, sid, "TERMINATED", timeout=30)
    assert gone["status_reason"].startswith(f"terminated after {TIMEOUT:g} s idle"), gone
    assert gone["ended_at"] >= deadline - 1
