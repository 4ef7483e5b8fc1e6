"""Swarm workers and managers as one Swarm: the pure grouping, and launches with the
fake agent where main1 lands on a worker (its overlay is made through a manager) or
where no manager is an agent (the session waits, saying why)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from jupyter_cluster.core.models import Session
from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.core.swarms import Membership, SwarmNode, join_swarms
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.launch import teardown
from jupyter_cluster.engine.manager import ClusterManager
from jupyter_cluster.errors import AgentError

from .engine_parts import manager_over


def test_workers_join_the_swarm_of_the_manager_they_report() -> None:
    nodes = [
        SwarmNode("m", True, node="N1", manager=True, managers=("N1",), cluster="C"),
        SwarmNode("w1", True, node="N2", managers=("N1",)),
        SwarmNode("w2", True, node="N3", managers=("N1",)),
        SwarmNode("alone", True),
        SwarmNode("down", False, node="N4", managers=("N1",)),
    ]
    got = join_swarms(nodes)
    assert got["m"] == got["w1"] == got["w2"] == Membership(swarm="C")
    assert got["alone"] == got["down"] == Membership()


def test_two_swarms_stay_apart_and_managers_without_cluster_id_still_key_them() -> None:
    nodes = [
        SwarmNode("m1", True, node="A", manager=True, managers=("A",), cluster="CA"),
        SwarmNode("w1", True, node="B", managers=("A",)),
        SwarmNode("m2", True, node="C", manager=True, managers=("C", "D")),
        SwarmNode("m3", True, node="D", manager=True, managers=("C", "D")),
        SwarmNode("w2", True, node="E", managers=("D",)),
    ]
    got = join_swarms(nodes)
    assert got["m1"].swarm == got["w1"].swarm == "CA"
    assert got["m2"].swarm == got["m3"].swarm == got["w2"].swarm == "nodes:C"


def test_workers_whose_manager_is_no_reachable_agent_cannot_be_spanned() -> None:
    nodes = [
        SwarmNode("m", False, node="N1", manager=True, managers=("N1",), cluster="C"),
        SwarmNode("w1", True, node="N2", managers=("N1",)),
        SwarmNode("w2", True, node="N3", managers=("N1",)),
    ]
    got = join_swarms(nodes)
    assert got["w1"].swarm == got["w2"].swarm == ""
    assert "not reachable agents here" in got["w1"].note and "N1" in got["w1"].note


def manager_and_workers() -> dict[str, FakeAgent]:
    """A Swarm manager agent with room for nothing of a session, and two workers."""
    agents = {
        "m": FakeAgent("m", cpu=0.5, ready_on_start=True),
        "w1": FakeAgent("w1", cpu=2, ready_on_start=True),
        "w2": FakeAgent("w2", cpu=2, ready_on_start=True),
    }
    agents["w1"].swarm_worker = agents["w2"].swarm_worker = True
    return agents


def agents_manager(tmp_path: Path, agents: dict[str, FakeAgent]) -> ClusterManager:
    return manager_over(tmp_path, agents, pending_poll_interval=0.05)


async def spanning_session(
    tmp_path: Path,
) -> tuple[ClusterManager, dict[str, FakeAgent], Session]:
    """A size-4 multi-node session launched over :func:`manager_and_workers`."""
    agents = manager_and_workers()
    manager = agents_manager(tmp_path, agents)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=4, cpu=1, mem="64m", mode="multi-node")
    return manager, agents, await manager.launch(spec)


async def test_a_session_spanning_workers_gets_its_overlay_through_a_manager(
    tmp_path: Path,
) -> None:
    # The roomiest agents are workers, so main1 lands on one; the manager has room
    # for nothing of the session, yet makes (and removes) its overlay.
    manager, agents, session = await spanning_session(tmp_path)
    assert session.status is SessionStatus.RUNNING
    assert {c.agent for c in session.containers} == {"w1", "w2"}
    assert [n.driver for n in agents["m"].networks.values()] == ["overlay"]
    assert not agents["w1"].networks and not agents["w2"].networks
    rows = {row["id"]: row for row in await manager.agents_info()}
    assert {r["swarm_role"] for r in rows.values()} == {"manager", "worker"}
    assert len({r["swarm"] for r in rows.values()}) == 1 and rows["w1"]["warning"] == ""
    await manager.terminate(session.id)
    assert not agents["m"].networks
    await manager.close()


async def test_workers_without_a_reachable_manager_agent_wait_saying_so(tmp_path: Path) -> None:
    agents = manager_and_workers()
    agents["m"].reachable = False
    manager = agents_manager(tmp_path, agents)
    rows = {row["id"]: row for row in await manager.agents_info()}
    assert "not reachable agents here" in rows["w1"]["warning"], rows
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=4, cpu=1, mem="64m", mode="multi-node")
    session = await manager.submit(spec)
    driving = asyncio.ensure_future(manager.drive(session.id))
    for _ in range(200):
        waiting = await manager.get(session.id)
        if waiting.status_reason:
            break
        await asyncio.sleep(0.02)
    assert waiting.status is SessionStatus.PENDING
    assert "not reachable agents here" in waiting.status_reason, waiting.status_reason
    agents["m"].reachable = True
    running = await asyncio.wait_for(driving, 10)
    assert running.status is SessionStatus.RUNNING
    await manager.terminate(session.id)
    await manager.close()


def worker_view(manager_agent: FakeAgent, worker: FakeAgent) -> None:
    """Give ``worker`` a Swarm worker's view of the manager's overlay: listed, and
    removable only through the manager (Docker's answer on a worker)."""
    (overlay,) = manager_agent.networks.values()
    worker.networks[overlay.id] = overlay
    removing = worker.remove_network

    async def refuse(name_or_id: str) -> None:
        if any(name_or_id in (n.id, n.name) for n in worker.networks.values()):
            raise AgentError(f"agent {worker.id}: This node is not a swarm manager.", worker.id)
        await removing(name_or_id)

    worker.remove_network = refuse  # type: ignore[method-assign]


async def test_terminate_does_not_wait_for_workers_views_of_the_removed_overlay(
    tmp_path: Path,
) -> None:
    manager, agents, session = await spanning_session(tmp_path)
    worker_view(agents["m"], agents["w1"])
    # Swarm drops the worker's view a moment after the manager removed the overlay.
    asyncio.get_running_loop().call_later(0.3, agents["w1"].networks.clear)
    began = time.monotonic()
    ended = await manager.terminate(session.id)
    assert time.monotonic() - began < 0.25
    assert ended.status is SessionStatus.TERMINATED
    assert not agents["m"].networks and agents["w1"].networks  # the view is still there
    assert not any(a.containers for a in agents.values())
    await manager.overlay_views.settled()
    assert not agents["w1"].networks
    await manager.close()


async def test_a_workers_view_that_stays_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(teardown, "NETWORK_RETRIES", 3)
    manager, agents, session = await spanning_session(tmp_path)
    name = session.network
    worker_view(agents["m"], agents["w2"])
    with caplog.at_level(logging.WARNING, "jupyter_cluster.engine.launch.overlay_views"):
        await manager.terminate(session.id)
        await manager.overlay_views.settled()
    await manager.close()
    assert f"overlay network {name}" in caplog.text and "still listed on w2" in caplog.text


async def test_closing_the_engine_stops_watching_at_once(tmp_path: Path) -> None:
    manager, agents, session = await spanning_session(tmp_path)
    worker_view(agents["m"], agents["w1"])  # a view that stays
    await manager.terminate(session.id)
    began = time.monotonic()
    await manager.close()  # a script's shutdown_kernel ends with this
    assert time.monotonic() - began < 0.5
    assert not manager.overlay_views.pending


async def test_a_sweep_without_a_watcher_waits_for_the_views_itself(tmp_path: Path) -> None:
    """The reconciler's and a failed launch's clean-ups hand no watcher to
    ``tear_down``: it returns only once no node lists the overlay."""
    manager, agents, session = await spanning_session(tmp_path)
    worker_view(agents["m"], agents["w1"])
    asyncio.get_running_loop().call_later(0.2, agents["w1"].networks.clear)
    problems = await teardown.tear_down(session, manager.pool.agents, manager.store.manager_id)
    assert problems == []
    assert not agents["w1"].networks and not agents["m"].networks
    assert not manager.overlay_views.pending
    await manager.close()
