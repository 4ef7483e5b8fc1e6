"""A Swarm made as the README says: agent1 inits it, agent2 and agent3 join with the
printed token, so they are workers (the ``agents`` fixture, :mod:`.swarm`).

- ``agents`` shows each agent's role and one Swarm for all three, no warning.
- A multi-node session placed on the two workers only (agent1 has no room) gets its
  overlay network through agent1, runs, reaches every container over SSH, and
  leaves nothing when it ends.
- With the manager unreachable, the workers' rows and a waiting session's reason
  say why they can't be spanned.
- Promoted to a manager-only Swarm for one test, the same session spans agents as
  before (the fixture's Swarm is a worker Swarm again afterwards).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from jupyter_cluster.core.state import SessionStatus
from jupyter_cluster.engine.manager import ClusterManager

from .agents import AgentCluster
from .support import SMALL, engine, leftovers
from .swarm import demote, promote, swarm_nodes

pytestmark = pytest.mark.docker


async def ended_cleanly(mgr: ClusterManager, agents: AgentCluster) -> None:
    """End what ``mgr`` still runs, close it, and check nothing of it is left."""
    for session in await mgr.list():
        await mgr.terminate(session.id)
    manager_id = mgr.store.manager_id
    await mgr.close()
    assert leftovers(agents, manager_id) == {}


@pytest.fixture
async def on_workers(tmp_path: Path, agents: AgentCluster) -> AsyncIterator[ClusterManager]:
    """An engine whose manager agent (agent1) has no room: sessions land on workers."""
    configs = [
        agents["agent1"].config(cpu=0.1, mem="4g"),
        agents["agent2"].config(cpu=1, mem="4g"),
        agents["agent3"].config(cpu=1, mem="4g"),
    ]
    mgr = engine(tmp_path, agents, agent_configs=configs)
    await mgr.start()
    yield mgr
    await ended_cleanly(mgr, agents)


async def spans_and_reaches(mgr: ClusterManager, agents: tuple[str, ...]) -> None:
    """A size-3 multi-node session runs on ``agents`` and main1 reaches its subs by SSH."""
    spec = mgr.make_spec(size=3, mode="multi-node", **SMALL)
    session = await asyncio.wait_for(mgr.launch(spec), 240)
    assert session.status is SessionStatus.RUNNING
    assert {c.agent for c in session.containers} == set(agents), session.containers
    for dst in ("sub1", "sub2"):
        said = bytearray()

        def heard(_: int, data: bytes, said: bytearray = said) -> None:
            said.extend(data)

        code = await mgr.exec(session.id, "main1", ["ssh", dst, "hostname"], on_output=heard)
        assert (code, said.decode().strip()) == (0, dst)
    await mgr.terminate(session.id)


def test_the_readme_swarm_has_one_manager_and_two_workers(agents: AgentCluster) -> None:
    roles = (
        agents["agent1"]
        .inside("docker", "node", "ls", "--format", "{{.Hostname}} {{.ManagerStatus}}")
        .stdout.split("\n")
    )
    assert sorted(line.strip() for line in roles if line.strip()) == [
        "agent1 Leader",
        "agent2",
        "agent3",
    ]


async def test_a_session_on_workers_only_gets_its_overlay_through_the_manager(
    on_workers: ClusterManager, agents: AgentCluster
) -> None:
    rows = {r["id"]: r for r in await on_workers.agents_info()}
    assert {i: r["swarm_role"] for i, r in rows.items()} == {
        "agent1": "manager",
        "agent2": "worker",
        "agent3": "worker",
    }
    assert len({r["swarm"] for r in rows.values()}) == 1 and rows["agent2"]["swarm"]
    assert all(r["warning"] == "" for r in rows.values()), rows
    await spans_and_reaches(on_workers, ("agent2", "agent3"))


async def test_workers_whose_manager_is_unreachable_say_so_and_wait(
    tmp_path: Path, agents: AgentCluster
) -> None:
    gone = agents["agent1"].config(cpu=1, mem="4g", url=f"tcp://{agents['agent1'].ip}:1")
    workers = [agents[a].config(cpu=1, mem="4g") for a in ("agent2", "agent3")]
    configs = [gone, *workers]
    mgr = engine(tmp_path, agents, agent_configs=configs)
    await mgr.start()
    try:
        rows = {r["id"]: r for r in await mgr.agents_info()}
        assert rows["agent1"]["reachable"] is False
        for worker in ("agent2", "agent3"):
            assert "not reachable agents here" in rows[worker]["warning"], rows[worker]
        spec = mgr.make_spec(size=3, mode="multi-node", **SMALL)
        session = await mgr.submit(spec)
        driving = asyncio.ensure_future(mgr.drive(session.id))
        reason = ""
        for _ in range(100):
            reason = (await mgr.get(session.id)).status_reason
            if reason:
                break
            await asyncio.sleep(0.1)
        assert "not reachable agents here" in reason, reason
        driving.cancel()
        await asyncio.gather(driving, return_exceptions=True)
    finally:
        await ended_cleanly(mgr, agents)


@pytest.fixture
def managers_only(agents: AgentCluster) -> Iterator[None]:
    """agent2 and agent3 promoted to managers for one test; workers again after it."""
    first, others = agents["agent1"], (agents["agent2"], agents["agent3"])
    promote(first, *others)
    try:
        yield
    finally:
        demote(first, *others)
        assert set(swarm_nodes(first).values()) == {"Ready"}


async def test_a_manager_only_swarm_still_spans_agents(
    managers_only: None, on_workers: ClusterManager
) -> None:
    rows = {r["id"]: r["swarm_role"] for r in await on_workers.agents_info()}
    assert set(rows.values()) == {"manager"}
    await spans_and_reaches(on_workers, ("agent2", "agent3"))
