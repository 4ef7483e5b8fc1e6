"""Reconciliation with fake agents: agent loss and return, and a scan that is stale.

- A RUNNING session whose agent stops answering becomes RUNNING_DEGRADED with a
  reason naming the agent; when the agent answers again and every container
  runs, the session is RUNNING again.
- A session that reached RUNNING while reconciliation was scanning Docker is not
  torn down as "its containers are gone" (the scan predates it).
- With ``orphan_policy="adopt"``, a session terminated while Docker was being
  scanned keeps its history: its containers in the stale scan are not orphans.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_cluster.core.naming import DEFAULT_IMAGE
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.engine.agents.fake import FakeAgent
from jupyter_cluster.engine.manager import ClusterManager


def two_agents(tmp_path: Path) -> tuple[ClusterManager, dict[str, FakeAgent]]:
    agents = {name: FakeAgent(name, cpu=1, ready_on_start=True) for name in ("a1", "a2")}
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agents=[{"id": "a1"}, {"id": "a2"}],
        agent_factory=lambda config: agents[config.id],
    )
    return manager, agents


async def test_a_lost_agent_degrades_its_sessions_and_its_return_restores_them(
    tmp_path: Path,
) -> None:
    manager, agents = two_agents(tmp_path)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mem="64m", mode="multi-node")
    session = await manager.launch(spec)
    assert session.status is SessionStatus.RUNNING
    assert {c.agent for c in session.containers} == {"a1", "a2"}
    agents["a2"].reachable = False
    await manager.refresh()
    degraded = await manager.get(session.id)
    assert degraded.status is SessionStatus.RUNNING_DEGRADED
    assert "agent a2" in degraded.status_reason and "cannot reach" in degraded.status_reason
    # the lost agent's containers are not called dead: their state is unknown
    assert all(c.status is ContainerStatus.RUNNING for c in degraded.containers)
    rows = {row["id"]: row for row in await manager.agents_info()}
    assert rows["a2"]["reachable"] is False and rows["a1"]["reachable"] is True
    agents["a2"].reachable = True
    await manager.refresh()
    restored = await manager.get(session.id)
    assert restored.status is SessionStatus.RUNNING and restored.status_reason == ""
    await manager.terminate(session.id)


async def test_an_unavailable_agent_gets_no_new_containers(tmp_path: Path) -> None:
    manager, agents = two_agents(tmp_path)
    agents["a1"].reachable = False
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    assert [c.agent for c in session.containers] == ["a2"]
    waiting = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, cpu=1, mem="64m"))
    assert waiting.status is SessionStatus.PENDING
    assert "unavailable: a1" in waiting.status_reason
    await manager.terminate(waiting.id)
    await manager.terminate(session.id)


def one_agent(tmp_path: Path, **traits: Any) -> tuple[ClusterManager, FakeAgent]:
    agent = FakeAgent("local", ready_on_start=True)
    manager = ClusterManager(
        db_path=str(tmp_path / "cluster.db"),
        data_root=str(tmp_path / "folders"),
        agent_factory=lambda config: agent,
        **traits,
    )
    return manager, agent


async def test_a_session_that_started_during_the_scan_is_left_alone(tmp_path: Path) -> None:
    manager, agent = one_agent(tmp_path)
    session = await manager.submit(manager.make_spec(image=DEFAULT_IMAGE, size=2))
    real_list = agent.list_containers
    launched: list[Any] = []
    scanned: list[bool] = []

    async def stale_scan(labels: Any, **how: Any) -> Any:
        snapshot = await real_list(labels, **how)  # taken before the launch made anything
        if not scanned:  # the launch lists containers too (the guard's sweep): only once
            scanned.append(True)
            launched.append(await manager.drive(session.id))
        return snapshot

    agent.list_containers = stale_scan  # type: ignore[method-assign]
    await manager.refresh()
    assert launched[0].status is SessionStatus.RUNNING
    after = await manager.get(session.id)
    assert after.status is SessionStatus.RUNNING, after.status_reason
    assert len([c for c in agent.containers.values() if c.status == "running"]) == 2
    agent.list_containers = real_list  # type: ignore[method-assign]
    await manager.refresh()
    assert (await manager.get(session.id)).status is SessionStatus.RUNNING
    await asyncio.wait_for(manager.terminate(session.id), 5)


async def test_a_session_terminated_during_the_scan_is_not_adopted(tmp_path: Path) -> None:
    manager, agent = one_agent(tmp_path, orphan_policy="adopt")
    session = await manager.launch(manager.make_spec(image=DEFAULT_IMAGE, size=2), owner="ada")
    real_list = agent.list_containers
    terminated: list[bool] = []

    async def stale_scan(labels: Any, **how: Any) -> Any:
        snapshot = await real_list(labels, **how)  # still shows the running containers
        if not terminated:  # terminate lists containers too: only once
            terminated.append(True)
            await manager.terminate(session.id)
        return snapshot

    agent.list_containers = stale_scan  # type: ignore[method-assign]
    await manager.refresh()
    agent.list_containers = real_list  # type: ignore[method-assign]
    ended = await manager.get(session.id)
    assert ended.status is SessionStatus.TERMINATED
    assert ended.owner == "ada" and ended.created_at == session.created_at  # history kept
    assert [s.id for s in await manager.list()] == []
    assert not [c for c in agent.containers.values() if c.status == "running"]


async def test_a_dead_container_says_how_and_when_it_ended(tmp_path: Path) -> None:
    """#14 item 2: the out-of-memory killer, a signal or an exit code, with the time,
    in the container's and the session's reason."""
    from jupyter_cluster.core.state import exit_reason

    manager, agents = two_agents(tmp_path)
    session = await manager.launch(
        manager.make_spec(image=DEFAULT_IMAGE, size=3, cpu=0.25, mode="multi-node")
    )
    by_host = {c.host: c for c in session.containers}
    agent_of = {h: agents[c.agent or ""] for h, c in by_host.items()}
    agent_of["sub1"].exit(by_host["sub1"].container_id or "", 137, oom=True)
    agent_of["sub2"].exit(by_host["sub2"].container_id or "", 3)
    await manager.refresh()
    after = await manager.get(session.id)
    reasons = {c.host: c.status_reason for c in after.containers}
    assert reasons["main1"] == ""
    assert reasons["sub1"].startswith("was killed by the out-of-memory killer (exit code 137) at ")
    assert "launch with more --mem" in reasons["sub1"]
    assert reasons["sub2"].startswith("exited with code 3 at 20")
    assert after.status is SessionStatus.RUNNING_DEGRADED
    assert after.status_reason == f"sub1 {reasons['sub1']}; sub2 {reasons['sub2']}"
    assert exit_reason(143) == "was killed by signal 15 (exit code 143)"
    assert exit_reason(0, finished_at="2026-12-01T00:00:00Z") == (
        "exited with code 0 at 2026-12-01T00:00:00Z"
    )
    await manager.terminate(session.id)
