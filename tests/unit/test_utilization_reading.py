"""The utilization clean-up's sampler (``engine.utilization_reading``) with a fake
agent whose Docker stats give a chosen CPU counter: a burst between two samples
counts although Docker's last second was quiet, the CPU time read is kept with the
session's containers (a growth under ``MIN_GROWTH`` is not written again), and an
ended container's counter is forgotten."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.engine import utilization_reading
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.utilization_reading import UsageReader
from tests.unit.fake_engine import fake_manager


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[ClusterManager]:
    agent = FakeAgent("a1", ready_on_start=True)
    found = fake_manager(tmp_path, agent, agents=[{"id": "a1"}])
    found.test_agent = agent  # type: ignore[attr-defined]
    yield found
    for session in await found.list():
        await found.terminate(session.id)
    await found.close()


class Counters:
    """Docker-shaped stats whose cumulative CPU counter a test sets per container,
    with Docker's own figure (the last second) at 0, and a clock it moves."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, agent: FakeAgent) -> None:
        self.seconds: dict[str, float] = {}
        self.now = 1000.0
        monkeypatch.setattr(agent, "stats", self.stats)
        monkeypatch.setattr(utilization_reading.time, "time", lambda: self.now)

    async def stats(self, container_id: str) -> Mapping[str, Any]:
        ns = round(self.seconds.get(container_id, 0.0) * 1e9)
        usage = {"cpu_usage": {"total_usage": ns}, "online_cpus": 1}
        return {
            "cpu_stats": {**usage, "system_cpu_usage": 2 * 10**9},
            "precpu_stats": {**usage, "system_cpu_usage": 10**9},  # quiet last second
            "memory_stats": {"usage": 1, "limit": 2},
        }


@dataclass
class Sampling:
    """A running size-2 session, its containers' ids, their counters and a reader."""

    session: Session
    main: str
    sub: str
    counters: Counters
    reader: UsageReader

    def unpacked(self) -> tuple[Session, str, str, Counters, UsageReader]:
        return self.session, self.main, self.sub, self.counters, self.reader


@pytest.fixture
async def sampling(manager: ClusterManager, monkeypatch: pytest.MonkeyPatch) -> Sampling:
    spec = manager.make_spec(image=DEFAULT_IMAGE, cpu=0.25, mem="64m", size=2)
    session = await manager.launch(spec)
    main, sub = (session.locate(h).container_id or "" for h in ("main1", "sub1"))
    counters = Counters(monkeypatch, manager.test_agent)  # type: ignore[attr-defined]
    reader = UsageReader(manager.store, manager.pool, logging.getLogger("test"))
    return Sampling(session, main, sub, counters, reader)


async def test_a_burst_between_samples_counts_and_its_cpu_time_is_kept(
    manager: ClusterManager, sampling: Sampling
) -> None:
    session, main, sub, counters, reader = sampling.unpacked()
    counters.seconds = {main: 10.0, sub: 4.0}
    assert (await reader.read(session)).cpu_percent == 0.0  # a first reading: Docker's figure
    counters.now += 30
    counters.seconds = {main: 19.0, sub: 4.5}  # 9 s in 30 s: 30 % of one CPU
    assert (await reader.read(session)).cpu_percent == pytest.approx(30.0)
    kept = manager.store.require(session.id)
    # sub1 grew by less than MIN_GROWTH since it was last written: not written again
    assert {c.host: c.cpu_seconds for c in kept.containers} == {"main1": 19.0, "sub1": 4.0}


async def test_an_ended_containers_counter_is_forgotten(sampling: Sampling) -> None:
    session, main, sub, counters, reader = sampling.unpacked()
    counters.seconds = {main: 10.0, sub: 10.0}
    await reader.read(session)
    reader.keep_only([sub, None])  # main1's container is gone
    counters.now += 10
    counters.seconds = {main: 15.0, sub: 10.0}  # main1's growth has no earlier reading
    assert (await reader.read(session)).cpu_percent == 0.0
    reader.keep_only([])
    counters.now += 10
    counters.seconds = {main: 15.0, sub: 18.0}  # neither has one now
    assert (await reader.read(session)).cpu_percent == 0.0
