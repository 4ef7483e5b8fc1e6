"""Losing an agent mid-session, with fake agents (issue #22: 5; the real one is
``tests/multihost/test_agent_loss.py``).

- The RUNNING_DEGRADED reason names the containers on the lost agent.
- Terminating then removes everything reachable at once, frees the capacity those
  containers held, and stays TERMINATING saying which agent it waits for; passes
  while that agent is down ask it nothing; the first pass after it answers removes
  what it holds and ends the session TERMINATED (one in ERROR keeps its reason).
- ``tear_down`` without a ``lost`` set reports an unreachable agent as a problem.
- A network left behind with no container, on one of several agents, is removed.
- Workers whose manager does not answer say which agents do not answer.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from jupyter_cluster.core import naming
from jupyter_cluster.core.agent_loss import hosts_on, lost_reason, removal_waits_reason
from jupyter_cluster.core.models import Container, LaunchSpec, Session
from jupyter_cluster.core.state import ContainerStatus, SessionStatus
from jupyter_cluster.core.swarms import SwarmNode, join_swarms
from jupyter_cluster.engine.agents.fake import DEFAULT_IMAGE, FakeAgent
from jupyter_cluster.engine.launch.teardown import tear_down
from jupyter_cluster.engine.manager import ClusterManager
from tests.unit.test_reconcile import two_agents


def spanning(hosts: dict[str, str]) -> Session:
    """A session whose containers (host -> agent) are placed."""
    containers = tuple(
        Container(host=h, role=h[:-1], idx=1, local_rank=i, kernel_id=str(i), agent=a)
        for i, (h, a) in enumerate(hosts.items())
    )
    return Session(id=str(uuid.uuid4()), spec=LaunchSpec(image="x"), containers=containers)


def test_the_reasons_name_the_containers_of_each_lost_agent() -> None:
    session = spanning({"main1": "a1", "sub1": "a2", "sub2": "a2", "sub3": "a3"})
    assert hosts_on(session, {"a3", "a2"}) == {"a2": ["sub1", "sub2"], "a3": ["sub3"]}
    down = {"a2": "agent a2 is unavailable: gone", "a3": "agent a3 is unavailable: off"}
    assert lost_reason(session, down) == (
        "sub1, sub2 lost: agent a2 is unavailable: gone; sub3 lost: agent a3 is unavailable: off"
    )
    assert removal_waits_reason(session, {"a2"}) == (
        "waiting for a2 to answer again to remove sub1, sub2 on a2 and the session's "
        "network; everything else is removed"
    )


def test_workers_left_without_a_manager_name_the_agents_that_do_not_answer() -> None:
    nodes = [
        SwarmNode("m", False),  # down: it reports nothing of its Swarm
        SwarmNode("w1", True, node="N2", managers=("N1",)),
        SwarmNode("other", False),
    ]
    note = join_swarms(nodes)["w1"].note
    assert "not reachable agents here (agents not answering now: m, other):" in note, note
    up = join_swarms([SwarmNode("w1", True, node="N2", managers=("N1",))])["w1"].note
    assert "not answering" not in up and "not reachable agents here:" in up


def manager_and_worker(tmp_path: Path) -> tuple[ClusterManager, dict[str, FakeAgent]]:
    """Two fake agents of one Swarm, a2 a worker (the agents of test_reconcile)."""
    manager, agents = two_agents(tmp_path)
    agents["a2"].swarm_worker = True
    return manager, agents


async def test_a_session_terminated_while_its_worker_is_lost_ends_when_it_answers(
    tmp_path: Path,
) -> None:
    manager, agents = manager_and_worker(tmp_path)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mem="64m", mode="multi-node")
    session = await manager.launch(spec)
    assert {c.host: c.agent for c in session.containers} == {"main1": "a1", "sub1": "a2"}
    agents["a2"].reachable = False
    await manager.refresh()
    degraded = await manager.get(session.id)
    assert degraded.status is SessionStatus.RUNNING_DEGRADED
    assert degraded.status_reason == "sub1 lost: agent a2: cannot reach the fake engine"

    ending = await manager.terminate(session.id)
    assert ending.status is SessionStatus.TERMINATING
    assert ending.status_reason.startswith("waiting for a2 to answer again to remove sub1 on a2")
    assert {c.host: c.status for c in ending.containers} == {
        "main1": ContainerStatus.TERMINATED,
        "sub1": ContainerStatus.RUNNING,
    }
    assert not agents["a1"].containers and not agents["a1"].networks
    assert [b.spec.hostname for b in agents["a2"].containers.values()] == ["sub1"]
    rows = {row["id"]: row for row in await manager.agents_info()}
    assert rows["a1"]["allocated"]["cpu"] == 0  # main1 is gone: a1 takes sessions again

    agents["a2"].calls.clear()
    await manager.refresh()  # a2 still down: the termination waits, a2 is only scanned
    assert (await manager.get(session.id)).status is SessionStatus.TERMINATING
    assert {method for method, _ in agents["a2"].calls} == {"list_containers"}

    agents["a2"].reachable = True
    await manager.refresh()
    ended = await manager.get(session.id)
    assert (ended.status, ended.status_reason) == (SessionStatus.TERMINATED, "terminated")
    assert not agents["a2"].containers and not agents["a1"].networks
    await manager.close()


async def test_tear_down_without_a_lost_set_reports_an_unreachable_agent(
    tmp_path: Path,
) -> None:
    manager, agents = manager_and_worker(tmp_path)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mem="64m", mode="multi-node")
    session = await manager.launch(spec)
    agents["a2"].reachable = False
    problems = await tear_down(session, manager.pool.agents, manager.store.manager_id)
    assert len(problems) == 1 and "its containers were not removed" in problems[0], problems
    assert not agents["a1"].containers
    assert not any(m == "remove_container" for m, _ in agents["a2"].calls)
    await manager.close()


async def test_a_network_left_alone_on_one_of_several_agents_is_removed(tmp_path: Path) -> None:
    manager, agents = manager_and_worker(tmp_path)
    ghost = Session(id=str(uuid.uuid4()), spec=LaunchSpec(image=DEFAULT_IMAGE))
    labels = naming.network_labels(ghost, manager.store.manager_id)
    await agents["a1"].create_network(naming.network_name(ghost), labels, overlay=True)
    await manager.refresh()
    assert not agents["a1"].networks
    await manager.close()


async def test_a_failed_session_keeps_its_reason_and_is_cleaned_when_its_agent_answers(
    tmp_path: Path,
) -> None:
    manager, agents = manager_and_worker(tmp_path)
    spec = manager.make_spec(image=DEFAULT_IMAGE, size=2, cpu=1, mem="64m", mode="multi-node")
    session = await manager.launch(spec)
    manager.store.set_status(session.id, SessionStatus.ERROR, "main1 never got ready")
    agents["a2"].reachable = False
    for _ in range(2):
        failed = await manager.terminate(session.id)
        assert (failed.status, failed.status_reason) == (
            SessionStatus.ERROR,
            "main1 never got ready",
        )
    assert not agents["a1"].containers and len(agents["a2"].containers) == 1
    agents["a2"].reachable = True
    await manager.refresh()
    assert not agents["a2"].containers and not agents["a1"].networks
    ended = await manager.terminate(session.id)
    assert ended.status_reason == "removed after an error: main1 never got ready"
    await manager.close()
