"""A firewall reset under a running session is undone by the server alone (#27 note).

A real Jupyter server with the extension (as ``make lab`` runs it), its upkeep
started as the server starts it, ``c.ContainerHardening.guard_refresh`` at 2 s. A
session launched over REST runs a listener in main1; ``nobody`` on this host is
refused by it. Then the guard's chain is emptied, as a firewall reload would:
``nobody`` gets through (so the probe can fail), and then, with no launch, is
refused again once the server's upkeep has put the guard back.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from jupyter_cluster.engine.guard_refresh import GuardRefresh
from tests.support.bridge_probe import (
    PORT,
    SERVER,
    bridge_address,
    connect,
    reset_firewall,
    wait_listening,
)
from tests.support.waiting import eventually

from .support import jp_async, ok_http, wait_status

# serial: emptying the chain opens every session bridge of the host for a moment
pytestmark = [pytest.mark.docker, pytest.mark.serial]


@pytest.fixture
def cluster_config() -> dict[str, Any]:
    return {"ContainerHardening": {"guard_refresh": 2.0}}


@jp_async
async def test_a_reset_firewall_is_guarded_again_while_the_session_runs(
    jp_fetch: Any, cluster: Any
) -> None:
    sid = (await ok_http(jp_fetch, "sessions", method="POST", body={"size": 1}))["id"]
    await wait_status(jp_fetch, sid, "RUNNING")
    assert any(isinstance(job, GuardRefresh) for job in cluster.service.upkeep)  # started
    assert await cluster.engine.exec(sid, "main1", ["sh", "-c", SERVER]) == 0
    address, _ = bridge_address(sid, "main1")
    wait_listening(address)
    assert connect(address, PORT, as_nobody=True) == "refused 111"
    reset_firewall()
    assert connect(address, PORT, as_nobody=True) == "reached"  # the probe can fail

    async def refused() -> bool:
        return connect(address, PORT, as_nobody=True) == "refused 111"

    began = time.monotonic()
    await eventually(refused, 20, "the guard put back by the server's upkeep")
    assert time.monotonic() - began < 2.0 * 1.25 + 5  # refresh and a quarter, and a run
