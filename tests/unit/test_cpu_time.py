"""Measured CPU time (issue 26 item 5) with fake agents: read before a session's
containers are removed and while the utilization watch samples them, kept with the
containers in the store after the session ended, summed per session and per user by
usage accounting; a read that fails or hangs never fails or stalls a termination."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Container, Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.usage import report
from jupyter_cluster.engine import cpu_time
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError


class HangingAgent(FakeAgent):
    """A fake agent whose CPU reads never answer once ``hangs`` is set (an engine
    that stopped answering)."""

    hangs = False

    async def cpu_seconds(self, container_id: str) -> float:
        if self.hangs:
            await asyncio.sleep(3600)
        return await super().cpu_seconds(container_id)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[ClusterManager]:
    agent = HangingAgent("a1", ready_on_start=True)
    found = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "a1"}],
        agent_factory=lambda config: agent,
        utilization_idle_timeout=600,
    )
    found.test_agent = agent  # type: ignore[attr-defined]
    yield found
    for session in await found.list():
        await found.terminate(session.id)
    await found.close()


def fake(manager: ClusterManager) -> HangingAgent:
    return manager.test_agent  # type: ignore[attr-defined, no-any-return]


async def launch(manager: ClusterManager, owner: str, size: int = 1) -> Session:
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=size, cpu=0.25, mem="64m")
    return await manager.launch(spec, owner=owner)


def burn(manager: ClusterManager, session: Session, host: str, seconds: float) -> None:
    """Make Docker's counter of ``host`` say ``seconds`` of CPU were used."""
    cid = session.locate(host).container_id or ""
    fake(manager).containers[cid].cpu_seconds = seconds


async def test_cpu_time_is_read_before_removal_and_kept_per_session_and_user(
    manager: ClusterManager,
) -> None:
    pair = await launch(manager, "ann", size=2)
    other = await launch(manager, "ann")
    idle = await launch(manager, "bob")
    burn(manager, pair, "main1", 2.5)
    burn(manager, pair, "sub1", 0.75)
    burn(manager, other, "main1", 1.0)
    for s in (pair, other, idle):
        assert (await manager.terminate(s.id)).status is SessionStatus.TERMINATED

    kept = manager.store.require(pair.id)
    assert {c.host: c.cpu_seconds for c in kept.containers} == {"main1": 2.5, "sub1": 0.75}
    assert kept.cpu_seconds_used == 3.25
    data = report(await manager.list(include_ended=True), now=kept.ended_at or 0)
    by_id = {row["id"]: row for row in data["sessions"]}  # type: ignore[attr-defined]
    assert by_id[pair.id]["cpu_seconds_used"] == 3.25
    assert by_id[idle.id]["cpu_seconds_used"] == 0.0
    users = {u["user"]: u for u in data["users"]}  # type: ignore[attr-defined]
    assert users["ann"]["cpu_seconds_used"] == 4.25 and users["ann"]["sessions"] == 2
    assert users["bob"]["cpu_seconds_used"] == 0.0
    assert kept.to_dict()["containers"][0]["cpu_seconds"] == 2.5  # REST shows it too


async def test_a_failing_or_hanging_read_never_fails_or_stalls_the_termination(
    manager: ClusterManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = await launch(manager, "ann")
    burn(manager, failing, "main1", 9.0)
    fake(manager).fail_on["cpu_seconds"] = AgentError("agent a1: no answer", "a1")
    ended = await manager.terminate(failing.id)
    assert ended.status is SessionStatus.TERMINATED
    assert manager.store.require(failing.id).cpu_seconds_used is None
    del fake(manager).fail_on["cpu_seconds"]

    hanging = await launch(manager, "ann")
    fake(manager).hangs = True
    monkeypatch.setattr(cpu_time, "READ_TIMEOUT", 0.2)
    ended = await asyncio.wait_for(manager.terminate(hanging.id), 30)
    assert ended.status is SessionStatus.TERMINATED
    assert not fake(manager).containers  # removed all the same
    assert manager.store.require(hanging.id).cpu_seconds_used is None


async def test_the_watchs_samples_keep_a_running_total_that_never_goes_down(
    manager: ClusterManager,
) -> None:
    session = await launch(manager, "ann")
    cid = session.locate("main1").container_id or ""
    fake(manager).containers[cid].cpu_percent = 40.0  # the fake's counter: 0.4 s
    before = manager.store.require(session.id).updated_at
    await manager.utilization.check()
    sampled = manager.store.require(session.id)
    assert sampled.cpu_seconds_used == pytest.approx(0.4)
    assert sampled.updated_at == before  # a reading is not a use (idle clean-up)
    report_row = report([sampled], now=sampled.updated_at + 60)["sessions"][0]  # type: ignore[index]
    assert report_row["cpu_seconds_used"] == pytest.approx(0.4)  # while it runs
    # The counter read at the end is lower (say, a read of a restarted counter):
    # the larger value is kept.
    await manager.terminate(session.id)
    assert manager.store.require(session.id).cpu_seconds_used == pytest.approx(0.4)


async def test_record_keeps_the_larger_value_and_skips_small_growth(
    manager: ClusterManager,
) -> None:
    store = manager.store
    session = await launch(manager, "ann", size=2)
    assert cpu_time.record(store, session.id, {"main1": 5.0})
    assert not cpu_time.record(store, session.id, {"main1": 4.0})
    assert not cpu_time.record(store, session.id, {"main1": 5.5}, min_growth=1.0)
    assert cpu_time.record(store, session.id, {"main1": 6.5, "sub1": 0.1}, min_growth=1.0)
    assert store.require(session.id).cpu_seconds_used == pytest.approx(6.6)
    assert not cpu_time.record(store, "no-such-session", {"main1": 1.0})  # never raises


def test_rows_written_before_cpu_time_was_kept_still_read() -> None:
    old = {"host": "main1", "role": "main", "idx": 1, "local_rank": 0, "kernel_id": "k"}
    container = Container.from_dict(old)
    assert container.cpu_seconds is None
    assert Container.from_dict(container.to_dict()) == container
    assert Container.from_dict({**old, "cpu_seconds": 1.5}).cpu_seconds == 1.5
