"""The PENDING queue with the fake agent: first in, first out, backfill, timeout, abandoned.

A session that cannot start now waits in its resource group's queue; a later,
smaller session must not overtake it (unless ``pending_backfill``), and a waiting
session is cancelled after ``pending_timeout`` or when the process that waited
for it is gone.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.engine.store.drivers import Driver
from tests.unit.fake_engine import fake_manager


def manager_for(tmp_path: Path, agent: FakeAgent, **traits: Any) -> ClusterManager:
    """A manager on ``agent`` with a fast queue."""
    return fake_manager(tmp_path, agent, pending_poll_interval=0.05, **traits)


async def submit(manager: ClusterManager, cpu: float) -> str:
    """Submit one single-container session of ``cpu`` CPUs; its id."""
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=cpu, mem="64m"))
    return session.id


def status(manager: ClusterManager, session_id: str) -> SessionStatus:
    got = manager.store.get(session_id)
    assert got is not None
    return got.status


async def test_a_later_small_session_does_not_overtake_an_earlier_big_one(
    tmp_path: Path,
) -> None:
    manager = manager_for(tmp_path, FakeAgent("local", cpu=4, ready_on_start=True))
    running = await submit(manager, 3)
    big = await submit(manager, 2)  # does not fit while `running` holds 3 CPUs
    small = await submit(manager, 1)  # would fit, but big came first
    assert status(manager, running) is SessionStatus.PREPARING
    assert status(manager, big) is SessionStatus.PENDING
    assert status(manager, small) is SessionStatus.PENDING
    reason = manager.store.get(small)
    assert reason is not None and "waiting behind 1 earlier session" in reason.status_reason
    small_wait = asyncio.ensure_future(manager.drive(small))
    await asyncio.sleep(0.3)
    assert status(manager, small) is SessionStatus.PENDING
    await manager.terminate(running)  # room for both now, big first
    big_wait = asyncio.ensure_future(manager.drive(big))
    done = await asyncio.wait_for(asyncio.gather(big_wait, small_wait), 10)
    assert [s.status for s in done] == [SessionStatus.RUNNING, SessionStatus.RUNNING]
    first, second = manager.store.get(big), manager.store.get(small)
    assert first is not None and second is not None
    assert first.status_reason == second.status_reason == ""


async def test_backfill_lets_a_fitting_session_start_first(tmp_path: Path) -> None:
    manager = manager_for(
        tmp_path, FakeAgent("local", cpu=4, ready_on_start=True), pending_backfill=True
    )
    await submit(manager, 3)
    big = await submit(manager, 2)
    small = await submit(manager, 1)
    assert status(manager, big) is SessionStatus.PENDING
    assert status(manager, small) is SessionStatus.PREPARING


async def test_queues_are_per_resource_group(tmp_path: Path) -> None:
    agents = {"a": FakeAgent("a", cpu=2), "b": FakeAgent("b", cpu=2, resource_group="gpu")}
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "a"}, {"id": "b", "resource_group": "gpu"}],
        agent_factory=lambda config: agents[config.id],
    )
    await submit(manager, 2)
    waiting = await submit(manager, 1)  # default group is full
    other = await manager.submit(
        manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m", resource_group="gpu")
    )
    assert status(manager, waiting) is SessionStatus.PENDING
    assert other.status is SessionStatus.PREPARING


async def test_the_pending_timeout_cancels_with_a_reason(tmp_path: Path) -> None:
    manager = manager_for(
        tmp_path, FakeAgent("local", cpu=1, ready_on_start=True), pending_timeout=0.3
    )
    await submit(manager, 1)
    waiting = await submit(manager, 1)
    ended = await asyncio.wait_for(manager.drive(waiting), 5)
    assert ended.status is SessionStatus.CANCELLED
    assert "pending_timeout" in ended.status_reason and "0.3 s" in ended.status_reason


async def test_a_queue_head_whose_process_died_is_cancelled(tmp_path: Path) -> None:
    manager = manager_for(tmp_path, FakeAgent("local", cpu=2, ready_on_start=True))
    running = await submit(manager, 2)
    head = await submit(manager, 1)
    behind = await submit(manager, 1)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )  # a process that has exited: its pid is free
    manager.store.set_driver(head, Driver(int(gone.stdout), socket.gethostname(), ""))
    await manager.terminate(running)
    placed = await asyncio.wait_for(manager.drive(behind), 5)
    assert placed.status is SessionStatus.RUNNING
    ended = manager.store.get(head)
    assert ended is not None and ended.status is SessionStatus.CANCELLED
    assert "exited" in ended.status_reason
