"""Per-phase timings of a real launch (issue #13, item 3) against real Docker.

A cluster kernel of size 2 is started with a real AsyncKernelManager, as a notebook
server would: once its kernel answered, the session's JSON (``jupyter cluster show
--json``) holds every phase, queue to kernel_ready, in order and non-negative,
and the text of ``show`` lists them.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from jupyter_client.manager import AsyncKernelManager

from jupyter_cluster.core.timings import PHASES
from tests.support.kernels import start_client

from .support import Workspace

pytestmark = pytest.mark.docker


async def test_a_real_launch_records_every_phase(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = ws.install_kernelspec(monkeypatch, "itest-timed", "--size", "2", "--cpu", "0.25")
    km = AsyncKernelManager(kernel_name=name)
    kc = await start_client(km)
    try:
        session_id = km.provisioner.session_id  # type: ignore[union-attr]
        deadline = time.monotonic() + 30
        timings = ws.show(session_id).get("timings", {})
        while "kernel_ready" not in timings and time.monotonic() < deadline:
            await asyncio.sleep(0.3)  # recorded in the background once it answered
            timings = ws.show(session_id).get("timings", {})
        assert list(timings) == list(PHASES), timings
        assert all(v >= 0 for v in timings.values()), timings
        assert timings["create"] + timings["files"] + timings["start"] > 0
        shown = ws.ok_cli("show", session_id).stdout
        assert "timings   queue " in shown and "kernel_ready" in shown
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
